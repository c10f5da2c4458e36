"""Every exception selfrag_nb raises, in one tree.

    SelfRAGError                      except sr.SelfRAGError: anything raised on purpose
    ├── ConfigurationError            the setup cannot work (settings, providers, extras)
    │   └── MissingDependencyError    + ImportError: names the pip extra to install
    ├── InputError                    + ValueError: an argument, file or question the caller gave
    │   ├── InputTypeError            + TypeError: an argument of the wrong type
    │   ├── NotFoundError             + KeyError: no such source, question id, variant, template
    │   ├── PathNotFoundError         + FileNotFoundError: a path that does not exist
    │   ├── AccessWideningError       an ingest would let someone read a stored document
    │   │                             they could not before (.changes names each one)
    │   ├── QuestionSetError          a question set that cannot be read (names file and line)
    │   ├── LabelsError               a human-labels file that cannot be read (names file and line)
    │   └── TemplateError             a prompt template the Prompt Lab cannot use
    ├── KnowledgeBaseError            + RuntimeError: the knowledge base cannot be used
    │   └── EmbedderError             an embedder cannot be built or returned unusable vectors
    └── ModelError                    + RuntimeError: a model call cannot be made at all
        ├── ProviderError             a rerank or embedding call the provider failed
        ├── ParseError                + ValueError: model output that does not fit its schema
        └── RerankProtocolError       + ValueError: a reranker response that breaks the contract

    AccessCheckWarning                + RuntimeWarning (not an error): a search dropped rows
                                      the SQL prefilter returned but the access rule refuses

The second base (ValueError, KeyError, ...) is the built-in a caller would
have caught before this tree existed, so ``except ValueError`` keeps working.

Errors carry data as well as a message, as httpx's do (each None when not known):
``PathNotFoundError.path``, ``NotFoundError.key``, ``ModelError.model`` and
``ModelError.status_code`` (its subclasses too; the HTTP status is also read
from the provider exception the error was raised from). The constructors take
them as keyword arguments, so ``ModelError("text")`` keeps working.

Messages never carry internal SQL (the access clause above all) or secrets:
a bad ``where`` is named as the caller wrote it, URLs are shown with
passwords and secret query parameters as ``***`` (llm/redact.py).

What is NOT raised: faults a question survives are data on the trace. A
provider that times out is ``Completion.error`` on the ModelCall; an
unparseable answer is a call with status "unparsed" and a conservative
default; a reranker breaking its protocol is a ``Fallback`` on the Rerank
record. ParseError and RerankProtocolError are raised inside the model layer
and the rerank stage and turned into those records there; they reach a
caller only from the functions that validate directly (``parse``'s helpers,
``validate_ranking``).

Each class is defined here only, and exported from ``selfrag_nb`` itself
(``sr.KnowledgeBaseError``); the modules that raise them import them from
here and do not re-export them.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "AccessCheckWarning",
    "AccessWideningError",
    "ConfigurationError",
    "EmbedderError",
    "InputError",
    "InputTypeError",
    "KnowledgeBaseError",
    "LabelsError",
    "MissingDependencyError",
    "ModelError",
    "NotFoundError",
    "ParseError",
    "PathNotFoundError",
    "ProviderError",
    "QuestionSetError",
    "RerankProtocolError",
    "SelfRAGError",
    "TemplateError",
    "input_error",
]


class SelfRAGError(Exception):
    """The root of every error selfrag_nb raises on purpose."""


# ---------------------------------------------------------------- configuration


class ConfigurationError(SelfRAGError):
    """The setup cannot work: settings, a provider, a key, an optional extra."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional dependency is missing; the message names the pip extra."""


# ---------------------------------------------------------------- input


class InputError(SelfRAGError, ValueError):
    """An argument, file or question the caller gave cannot be used; the
    message names the argument and what was wrong with it."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (a bool where a number belongs, ...)."""


class NotFoundError(InputError, KeyError):
    """A name that is not there: a source, a question id, a variant, a template.
    ``key`` is the name looked up (a tuple of them when several are missing;
    None when not given)."""

    def __init__(self, *args: object, key: object = None) -> None:
        super().__init__(*args)
        self.key = key

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument ("'no source ...'"):
        # this is a message, shown as written.
        return str(self.args[0]) if self.args else ""


class PathNotFoundError(InputError, FileNotFoundError):
    """A path the caller named does not exist. ``path`` is that path (None
    when not given)."""

    def __init__(self, *args: object, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(*args)
        self.path = path


class AccessWideningError(InputError):
    """An ingest would make stored documents readable by someone who could
    not read them before; nothing was written. ``changes`` holds each such
    document's ``AclChange`` (before -> after). Pass ``allow_widen=True``
    (CLI: ``--allow-widen``) when that is what you mean."""

    def __init__(self, message: str, changes: Any = ()) -> None:
        super().__init__(message)
        self.changes = list(changes)


class QuestionSetError(InputError):
    """A question set that cannot be read; the message names the file and line."""


class LabelsError(InputError):
    """A human-labels file (``sr.Labels``) that cannot be read, or a label
    that cannot be written; the message names the file and line."""


class TemplateError(InputError):
    """A template the Prompt Lab cannot use (unknown placeholder, missing user
    marker, ...). The message names the problem; the widget shows it."""


# ---------------------------------------------------------------- knowledge base


class KnowledgeBaseError(SelfRAGError, RuntimeError):
    """The folder is not a usable knowledge base (foreign, damaged, wrong
    embedder), or a write could not be completed (the stored version is the
    one before the call)."""


class EmbedderError(KnowledgeBaseError):
    """An embedder cannot be built or returned unusable vectors."""


# ---------------------------------------------------------------- models


class ModelError(SelfRAGError, RuntimeError):
    """A model call that cannot be made at all (bad configuration: unknown
    provider, missing key, replay cassette without this call). Faults of a
    reachable provider are reported in ``Completion.error`` instead.

    ``model`` names the model or reranker (None when not known);
    ``status_code`` is the provider's HTTP status: the one given, else the
    ``status_code`` of the exception this one was raised from or during
    (LiteLLM's and httpx's errors carry it), else None."""

    def __init__(self, *args: object, model: str | None = None, status_code: int | None = None) -> None:
        super().__init__(*args)
        self.model = model
        self._status_code = status_code

    @property
    def status_code(self) -> int | None:
        if self._status_code is not None:
            return self._status_code
        seen: set[int] = set()
        exc: BaseException | None = self.__cause__ or self.__context__
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            code = getattr(exc, "status_code", None)
            if isinstance(code, int) and not isinstance(code, bool):
                return code
            exc = exc.__cause__ or exc.__context__
        return None


class ProviderError(ModelError):
    """A rerank or embedding call the provider failed (HTTP error, timeout,
    bad body). Chat calls report these in ``Completion.error`` instead."""


class ParseError(ModelError, ValueError):
    """Model output that does not fit its role's schema (raised inside the
    parser; ``parse`` turns it into an error message for the repair call)."""


class RerankProtocolError(ModelError, ValueError):
    """A reranker response that breaks the contract (index out of range,
    duplicate, non-finite score, ...)."""


class AccessCheckWarning(RuntimeWarning):
    """Not an error: a search dropped rows that the store's SQL prefilter
    returned but the access rule (checked again in Python) refuses. The
    reader saw nothing they may not read; the prefilter is at fault, which
    is also logged at ERROR and counted (``kb.access_drops``)."""


def input_error(exc: Any, *, what: str = "") -> InputError:
    """A pydantic ValidationError as an InputError whose message lists each
    field and what is wrong with it (our validators' own messages as written,
    without pydantic's "Value error, " prefix). Duck-typed on ``errors()`` so
    this module imports nothing."""
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(x) for x in err.get("loc", ()))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(msg if not loc or loc in msg else f"{loc}: {msg}")
    prefix = f"{what}: " if what else ""
    return InputError(prefix + "; ".join(parts or [str(exc)]))
