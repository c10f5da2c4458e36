"""Prompt Lab run cache: a scored side is computed once, and survives kernel restarts.

    run_context(rag, role)  everything but the template and the question that shapes a verdict
    side_key(role, template hash, context, question)
      = sha256 of  role + template hash                       (the prompt)
                   model identity of every role               (model string + what changes its output)
                   context: the other templates, language, settings,
                            knowledge base path + content identity (kb.content_id)
                   the question record (text, history, user, labels)   (the inputs)
                   library version                            (the offline model's rules live here)
    RunStore(folder)                      one JSON file per key:  <folder>/<key[:2]>/<key>.json
      get(key) -> LabSide | None          unreadable / stale-schema file = a miss (never an error)
      put(key, side)                      written to a temp file, then renamed (atomic)
    default folder: cache_dir() / "prompt_lab" / "runs"   ($SELFRAG_NB_CACHE, see resources.py)

Why the model's identity and not only its name: the same name with another
``api_base``, response format or sampling options (``extra``: temperature...)
answers differently. Credentials are never part of an identity (an ``extra``
key naming a key, token, secret, password, auth, header or credential is
left out; the identity is only hashed, never written). A model whose
answers are code rather than configuration (a ScriptedModel, any class this
module does not know) gets a process-local identity: it is cached for the
life of the object only, never served to another process.

Why the knowledge base's content identity and not its version: a knowledge
base deleted and rebuilt at the same path reaches the same version numbers
with other rows and other ACLs; a side scored on the old rows (sources,
scores, what each user could see) must never be served for the new ones.
``kb.content_id`` changes with every commit and differs between rebuilds; a
knowledge-base-like object without one is keyed to the object (this process only).

Why files and not the response cache (llm/cache.py): that one stores model
completions under request keys; a lab side is a scored record of a whole
question run, and one file per key needs no lock between labs or processes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from selfrag_nb.flow import ROLES
from selfrag_nb.promptlab_runs import LabSide

if TYPE_CHECKING:
    from selfrag_nb.llm.schemas import Role
    from selfrag_nb.pipeline import SelfRAG

__all__ = ["RunStore", "default_run_dir", "kb_identity", "model_identity", "run_context", "side_key"]

_log = logging.getLogger(__name__)

#: Models whose answers follow from their configuration (so a disk hit is valid later).
_REPRODUCIBLE = frozenset(
    {
        "selfrag_nb.llm.offline.model.OfflineModel",
        "selfrag_nb.llm.litellm_model.LiteLLMModel",
    }
)
#: Wrappers that answer like the model they wrap.
_WRAPPERS = frozenset({"selfrag_nb.llm.cache.CachedModel", "selfrag_nb.llm.cassette.CassetteModel"})
_SECRET_WORDS = ("key", "token", "secret", "password", "auth", "header", "credential")
_TOKENS: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()


def default_run_dir() -> Path:
    """``<cache_dir>/prompt_lab/runs`` (``$SELFRAG_NB_CACHE`` moves it)."""
    from selfrag_nb.resources import cache_dir

    return cache_dir() / "prompt_lab" / "runs"


def _process_token(model: object) -> str:
    """A token unique to this object in this process (``id`` alone is reused
    after an object is collected, which would serve its answers to another)."""
    try:
        return _TOKENS.setdefault(model, f"{os.getpid()}:{uuid.uuid4().hex}")
    except TypeError:  # not weak-referenceable: no token that outlives reuse, so never share
        return f"{os.getpid()}:{uuid.uuid4().hex}"


def _class_name(obj: object) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def model_identity(model: object) -> dict[str, Any]:
    """What identifies a model's answers: class, name, endpoint, response
    format and sampling options; process-local for models it cannot vouch for."""
    cls = _class_name(model)
    ident: dict[str, Any] = {"class": cls, "name": str(getattr(model, "name", ""))}
    if cls in _WRAPPERS:
        inner = getattr(model, "inner", None)
        cassette = getattr(model, "cassette", None)
        if cassette is not None:
            ident["cassette"] = str(getattr(cassette, "path", "") or id(cassette))
        ident["inner"] = model_identity(inner) if inner is not None else None
        return ident
    if cls not in _REPRODUCIBLE:
        ident["process"] = _process_token(model)
        return ident
    for attr in ("api_base", "response_format"):
        value = getattr(model, attr, None)
        if value is not None:
            ident[attr] = str(value)
    extra = getattr(model, "extra", None)
    if isinstance(extra, dict):
        ident["extra"] = {
            str(k): repr(v)
            for k, v in sorted(extra.items())
            if not any(w in str(k).lower() for w in _SECRET_WORDS)
        }
    return ident


def kb_identity(kb: object) -> str:
    """What identifies the rows a run reads: ``kb.content_id`` (version plus
    commit timestamps), or a process-local token for an object without one."""
    if kb is None:
        return ""
    content_id = getattr(kb, "content_id", None)
    if isinstance(content_id, str) and content_id:
        return content_id
    return f"process:{_process_token(kb)}"


def run_context(rag: SelfRAG, role: str) -> dict[str, Any]:
    """Everything besides the role's template and the question that shapes
    a verdict: the other templates, the settings, the models (their
    identities, not only names), the knowledge base and its content identity. A
    cached side is reused only while all of these are unchanged."""
    runner = rag.runner
    return {
        "prompts": {k: v for k, v in rag.prompts.hashes().items() if k != role},
        "lang": rag.prompts.lang,
        "settings": rag.settings.model_dump(mode="json"),
        "models": {r: model_identity(runner.model_for(cast("Role", r))) for r in ROLES},
        "reranker": str(getattr(rag, "reranker_name", "")),
        "kb": str(getattr(rag.kb, "path", "")),
        # the rows' identity, not the version number: a rebuilt knowledge
        # base repeats version numbers with other rows and ACLs
        "kb_content": kb_identity(rag.kb),
    }


def side_key(role: str, template_hash: str, context: dict[str, Any], question: dict[str, Any]) -> str:
    """The cache key of one scored side (sha256 hex)."""
    from selfrag_nb import __version__

    blob = json.dumps(
        {
            "role": role,
            "template": template_hash,
            "context": context,
            "question": question,
            "library": __version__,
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class RunStore:
    """Scored sides on disk, one JSON file per key, under ``folder``."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()

    def __repr__(self) -> str:
        return f"RunStore({str(self.folder)!r})"

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> LabSide | None:
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            _log.warning("prompt lab cache file %s unreadable: %s", path, exc)
            return None
        try:
            return LabSide.model_validate_json(text)
        except ValueError:
            # Written by another version of the record: a miss, overwritten by the next put.
            _log.info("prompt lab cache file %s does not parse; ignoring it", path)
            return None

    def put(self, key: str, side: LabSide) -> bool:
        """Store ``side`` (not cached-marked, not an error); True when written."""
        if side.error is not None:
            return False
        path = self._path(key)
        data = side.model_copy(update={"cached": False}).model_dump_json()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            # A read-only cache folder makes runs slower, never wrong.
            _log.warning("could not write prompt lab cache file %s: %s", path, exc)
            return False
        return True

    def clear(self) -> int:
        """Delete every stored side; returns how many."""
        n = 0
        if self.folder.is_dir():
            for f in self.folder.glob("*/*.json"):
                f.unlink(missing_ok=True)
                n += 1
        return n
