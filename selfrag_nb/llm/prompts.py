"""Prompt templates: one text file per role and language, editable at run time.

    prompts/<lang>/<key>.txt           packaged defaults (en, zh)
      key = decide | rewrite | grade | rerank | assess | verify | usefulness
            | generate | generate_strict | generate_direct | repair
    Prompts(lang)                      MutableMapping key -> template text
      prompts["grade"] = "..."         validated now: placeholders, user marker
      prompts.hash("grade")            sha256(text)[:12], recorded on every call
      prompts.render(role, inputs)     -> [system Message, user Message]
      prompts.render_repair(...)       -> messages + previous output + repair turn

Template syntax is deliberately tiny: ``{{name}}`` placeholders and nothing
else (no attribute access, no filters, no code). Substitution is one regex
pass, so text inserted for one placeholder is never scanned again: a ``{`` or
a ``{{x}}`` inside a document stays literal. Unknown or malformed
placeholders are rejected when the template is assigned, not when the
pipeline runs.

A template is two parts split by a line ``=== user ===``: above it the system
message (instructions), below it the user message (the data blocks). The data
is untrusted: each piece is put in a delimited block
(``<document index="1" source="...">...</document>``) and any text inside it
that looks like one of our block tags is escaped (``&lt;/document>``), so a
document cannot close its own block and pose as instructions.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterator, Mapping, MutableMapping
from importlib import resources
from typing import TYPE_CHECKING

from selfrag_nb.errors import InputError, InputTypeError, NotFoundError
from selfrag_nb.llm.schemas import (
    INPUTS,
    ROLES,
    AssessInputs,
    DecideInputs,
    Evidence,
    GenerateInputs,
    GradeInputs,
    Message,
    RerankInputs,
    RewriteInputs,
    Role,
    UsefulnessInputs,
    VerifyInputs,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "LANGUAGES",
    "OUTPUT_FORMATS",
    "TEMPLATE_KEYS",
    "USER_MARKER",
    "Prompts",
    "escape_block",
    "template_key",
]

LANGUAGES = ("en", "zh")
TEMPLATE_KEYS: tuple[str, ...] = (
    "decide",
    "rewrite",
    "grade",
    "rerank",
    "assess",
    "generate",
    "generate_strict",
    "generate_direct",
    "verify",
    "usefulness",
    "repair",
)
#: The line that separates the system part from the user part of a template.
USER_MARKER = "=== user ==="

# Placeholders each template may use (the values are built by _variables).
_ALLOWED: dict[str, tuple[str, ...]] = {
    "decide": ("question", "history"),
    "rewrite": ("question", "history", "protected", "max_rewrites"),
    "grade": ("question", "document", "title", "heading", "source"),
    "rerank": ("query", "candidates", "count"),
    "assess": ("question", "history", "documents"),
    "generate": ("question", "history", "documents"),
    "generate_strict": ("question", "history", "documents", "avoid", "missing"),
    "generate_direct": ("question", "history"),
    "verify": ("question", "documents", "answer"),
    "usefulness": ("question", "history", "answer"),
    "repair": ("error", "format", "role"),
}

#: What a repair turn asks for, per role (shown to the model with its error).
OUTPUT_FORMATS: dict[str, str] = {
    "decide": "RETRIEVE|reason  or  NO_RETRIEVE|reason  (one line)",
    "rewrite": '{"rewrites": ["..."], "reason": "..."}',
    "grade": '{"relevanceScore": <integer 0-100>, "isRelevant": <true|false>, "keyInfo": "...", "gaps": "..."}',
    "rerank": '{"ranking": [{"index": <candidate index>, "score": <finite number, higher is more relevant>}, ...]}',
    "assess": '{"action": "ANSWER" | "CLARIFY" | "REFUSE", "reason": "...", "options": ["..."], "conflict": "", "applies": ""}',
    "generate": "the answer as plain text, with [n] citations",
    "verify": (
        '{"isFullySupported": <true|false>, "supportedClaims": ["..."], "unsupportedClaims": ["..."], '
        '"claims": [{"claim": "...", "verdict": "supported" | "partial" | "unsupported", '
        '"evidence": [{"doc": <n>, "quote": "..."}], "cited": [<n>]}], '
        '"overallConfidence": <integer 0-100>, "recommendation": "ACCEPT" | "ADD_DISCLAIMER" | "REGENERATE"}'
    ),
    "usefulness": '{"verdict": "yes" | "partly" | "no", "score": <integer 0-100>, "missing": "...", "reason": "..."}',
}

_PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# Any "{{ ... }}" (or an unclosed "{{"): everything that is not a valid
# placeholder is rejected so typos like {{question.text}} fail loudly.
_BRACES_RE = re.compile(r"\{\{(.*?)(\}\}|$)", re.DOTALL)

# Our block tags. Untrusted text must not be able to open or close one.
_TAGS = (
    "document",
    "question",
    "query",
    "history",
    "message",
    "summary",
    "answer",
    "candidate",
    "protected",
    "span",
    "avoid",
    "claim",
)
_TAG_RE = re.compile(r"<(\s*/?\s*(?:" + "|".join(_TAGS) + r")\b)", re.IGNORECASE)

_NONE = {"en": "(none)", "zh": "（无）"}


def escape_block(text: str) -> str:
    """Escape anything in untrusted ``text`` that looks like one of our block
    tags (``<document``, ``</question`` ...), leaving all other text as is."""
    return _TAG_RE.sub(r"&lt;\1", text)


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def template_key(role: Role, inputs: BaseModel) -> str:
    """The template used for ``role`` with these inputs (generation has three)."""
    if role == "generate" and isinstance(inputs, GenerateInputs):
        return {"grounded": "generate", "strict": "generate_strict", "direct": "generate_direct"}[inputs.mode]
    return role


def _check_template(key: str, text: object) -> str:
    if key not in _ALLOWED:
        raise NotFoundError(
            f"unknown prompt template {key!r}; templates are: {', '.join(TEMPLATE_KEYS)}", key=key
        )
    if not isinstance(text, str):
        raise InputTypeError(f"prompt template {key!r} must be a str, got {type(text).__name__}")
    allowed = _ALLOWED[key]
    for m in _BRACES_RE.finditer(text):
        full = m.group(0)
        if not m.group(2):
            raise InputError(f"prompt template {key!r}: unclosed placeholder {full[:40]!r}")
        pm = _PLACEHOLDER_RE.fullmatch(full)
        if pm is None:
            raise InputError(
                f"prompt template {key!r}: malformed placeholder {full!r}; only {{{{name}}}} is "
                f"supported (allowed names: {', '.join(allowed)})"
            )
        if pm.group(1) not in allowed:
            raise InputError(
                f"prompt template {key!r}: unknown placeholder {{{{{pm.group(1)}}}}}; "
                f"allowed: {', '.join('{{' + a + '}}' for a in allowed)}"
            )
    if key != "repair" and _split(text)[1] is None:
        raise InputError(
            f"prompt template {key!r} needs a line {USER_MARKER!r} separating the system "
            "instructions (above) from the user data blocks (below)"
        )
    return text


def _split(text: str) -> tuple[str, str | None]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == USER_MARKER:
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i + 1 :]).strip()
    return text.strip(), None


def _substitute(text: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], text)


def _load_default(lang: str, key: str) -> str:
    path = resources.files("selfrag_nb.llm").joinpath("prompts", lang, f"{key}.txt")
    return path.read_text(encoding="utf-8")


class Prompts(MutableMapping[str, str]):
    """The prompt templates of one pipeline, keyed by template name.

    ``prompts[key] = text`` replaces a template (validated immediately);
    ``del prompts[key]`` or ``reset(key)`` restores the packaged default, so
    the mapping always holds every key."""

    def __init__(self, lang: str = "en", overrides: Mapping[str, str] | None = None) -> None:
        if lang not in LANGUAGES:
            raise InputError(f"unknown prompt language {lang!r}; available: {', '.join(LANGUAGES)}")
        self._lang = lang
        self._defaults = {k: _check_template(k, _load_default(lang, k)) for k in TEMPLATE_KEYS}
        self._templates = dict(self._defaults)
        for k, v in (overrides or {}).items():
            self[k] = v

    @property
    def lang(self) -> str:
        return self._lang

    # -- mapping ----------------------------------------------------------
    def __getitem__(self, key: str) -> str:
        if key not in self._templates:
            raise NotFoundError(
                f"unknown prompt template {key!r}; templates are: {', '.join(TEMPLATE_KEYS)}", key=key
            )
        return self._templates[key]

    def __setitem__(self, key: str, text: str) -> None:
        self._templates[key] = _check_template(key, text)

    def __delitem__(self, key: str) -> None:
        self.reset(key)

    def __iter__(self) -> Iterator[str]:
        return iter(TEMPLATE_KEYS)

    def __len__(self) -> int:
        return len(TEMPLATE_KEYS)

    def __repr__(self) -> str:
        changed = [k for k in TEMPLATE_KEYS if not self.is_default(k)]
        return f"Prompts(lang={self._lang!r}, edited={changed})"

    def clear(self) -> None:
        """Restore every packaged template (the mapping never loses a key)."""
        self._templates = dict(self._defaults)

    def popitem(self) -> tuple[str, str]:
        # The inherited popitem/clear loop "until empty"; this mapping is never empty.
        raise InputTypeError(
            "prompt templates cannot be removed; use reset(key) or clear() to restore defaults"
        )

    def reset(self, key: str) -> None:
        """Restore the packaged template for ``key``."""
        if key not in self._defaults:
            raise NotFoundError(
                f"unknown prompt template {key!r}; templates are: {', '.join(TEMPLATE_KEYS)}", key=key
            )
        self._templates[key] = self._defaults[key]

    def default(self, key: str) -> str:
        """The packaged template text for ``key`` in this language."""
        return self._defaults[key]

    def is_default(self, key: str) -> bool:
        return self._templates[key] == self._defaults[key]

    def copy(self) -> Prompts:
        return Prompts(self._lang, {k: v for k, v in self._templates.items() if not self.is_default(k)})

    @staticmethod
    def placeholders(key: str) -> tuple[str, ...]:
        """The placeholder names template ``key`` may use."""
        if key not in _ALLOWED:
            raise NotFoundError(
                f"unknown prompt template {key!r}; templates are: {', '.join(TEMPLATE_KEYS)}", key=key
            )
        return _ALLOWED[key]

    # -- versions ---------------------------------------------------------
    def hash(self, key: str) -> str:
        """Short version of a template: the first 12 hex digits of its sha256."""
        return hashlib.sha256(self[key].encode("utf-8")).hexdigest()[:12]

    def hashes(self) -> dict[str, str]:
        return {k: self.hash(k) for k in TEMPLATE_KEYS}

    # -- rendering --------------------------------------------------------
    def render(self, role: Role, inputs: BaseModel) -> list[Message]:
        """System message (instructions) and user message (data blocks) for
        one call of ``role`` with the stage's structured ``inputs``."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
        expected = INPUTS[role]
        if not isinstance(inputs, expected):
            raise InputTypeError(f"role {role!r} expects {expected.__name__}, got {type(inputs).__name__}")
        key = template_key(role, inputs)
        system, user = _split(self[key])
        values = self._variables(role, inputs)
        messages = [Message(role="system", content=_substitute(system, values))]
        messages.append(Message(role="user", content=_substitute(user or "", values)))
        return messages

    def render_repair(
        self, role: Role, messages: list[Message], previous: str, error: str, *, max_previous: int = 4000
    ) -> list[Message]:
        """The original messages, the model's previous output as its own
        turn, and a user turn naming the error and the expected format."""
        system, user = _split(self["repair"])
        values = {"error": error, "format": OUTPUT_FORMATS[role], "role": role}
        shown = previous if len(previous) <= max_previous else previous[:max_previous] + " …[truncated]"
        turn = _substitute(system if user is None else f"{system}\n\n{user}".strip(), values)
        return [
            *messages,
            Message(role="assistant", content=shown or _NONE[self._lang]),
            Message(role="user", content=turn),
        ]

    def _variables(self, role: Role, inputs: BaseModel) -> dict[str, str]:
        none = _NONE[self._lang]
        if isinstance(inputs, DecideInputs):
            hist = (
                f"<summary>\n{escape_block(inputs.summary)}\n</summary>"
                if inputs.summary.strip()
                else _history(inputs.history, none)
            )
            return {"question": escape_block(inputs.question), "history": hist}
        if isinstance(inputs, RewriteInputs):
            spans = "\n".join(f"<span>{escape_block(p)}</span>" for p in inputs.protected)
            return {
                "question": escape_block(inputs.question),
                "history": _history(inputs.history, none),
                "protected": spans or none,
                "max_rewrites": str(inputs.max_rewrites),
            }
        if isinstance(inputs, GradeInputs):
            attrs = "".join(
                f' {name}="{_attr(v)}"'
                for name, v in (
                    ("source", inputs.source),
                    ("title", inputs.title),
                    ("heading", inputs.heading),
                )
                if v
            )
            return {
                "question": escape_block(inputs.question),
                "document": f"<document{attrs}>\n{escape_block(inputs.text)}\n</document>",
                "title": escape_block(inputs.title) or none,
                "heading": escape_block(inputs.heading) or none,
                "source": escape_block(inputs.source) or none,
            }
        if isinstance(inputs, RerankInputs):
            cands = "\n".join(
                f'<candidate index="{i}">\n{escape_block(t)}\n</candidate>'
                for i, t in enumerate(inputs.candidates)
            )
            return {
                "query": escape_block(inputs.query),
                "candidates": cands or none,
                "count": str(len(inputs.candidates)),
            }
        if isinstance(inputs, AssessInputs):
            return {
                "question": escape_block(inputs.question),
                "history": _history(inputs.history, none),
                # Only assess reads the grades' gaps: it must not answer what no document covers.
                "documents": _documents(inputs.evidence, none, gaps=True),
            }
        if isinstance(inputs, GenerateInputs):
            avoid = "\n".join(f"<claim>{escape_block(a)}</claim>" for a in inputs.avoid)
            return {
                "question": escape_block(inputs.question),
                "history": _history(inputs.history, none),
                "documents": _documents(inputs.evidence, none),
                "avoid": avoid or none,
                "missing": escape_block(inputs.missing) if inputs.missing.strip() else none,
            }
        if isinstance(inputs, VerifyInputs):
            return {
                "question": escape_block(inputs.question),
                "documents": _documents(inputs.evidence, none),
                "answer": escape_block(inputs.answer),
            }
        if isinstance(inputs, UsefulnessInputs):
            return {
                "question": escape_block(inputs.question),
                "history": _history(inputs.history, none),
                "answer": escape_block(inputs.answer),
            }
        raise InputTypeError(
            f"no prompt variables for {type(inputs).__name__}"
        )  # pragma: no cover - INPUTS checked


def _history(history: list[Message], none: str) -> str:
    if not history:
        return none
    turns = "\n".join(
        f'<message role="{_attr(m.role)}">\n{escape_block(m.content)}\n</message>' for m in history
    )
    return f"<history>\n{turns}\n</history>"


def _documents(evidence: list[Evidence], none: str, *, gaps: bool = False) -> str:
    if not evidence:
        return none
    blocks = []
    for ev in evidence:
        attrs = f' index="{ev.index}" source="{_attr(ev.source)}"'
        if ev.title:
            attrs += f' title="{_attr(ev.title)}"'
        if ev.heading:
            attrs += f' heading="{_attr(ev.heading)}"'
        if ev.relevance is not None:
            attrs += f' relevance="{ev.relevance}"'
        if gaps and ev.gaps.strip():
            attrs += f' gaps="{_attr(ev.gaps)}"'
        blocks.append(f"<document{attrs}>\n{escape_block(ev.text)}\n</document>")
    return "\n\n".join(blocks)
