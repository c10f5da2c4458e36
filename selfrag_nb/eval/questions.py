"""Labelled question sets: JSON Lines in, frozen ``Question`` records out.

    questions("sample")            -> sample_data/questions.jsonl (in the package, or the clone's)
    questions("path/to/set.jsonl") -> that file
        each non-blank line -> json object (jsonl.read_objects) -> Question (unknown fields -> .extra)
        any bad line        -> QuestionSetError("<file>:<line>: <what is wrong>")
    = QuestionSet  (sequence of Question; .categories .filter() .sample()
                    .to_pandas() .fingerprint)

A question set is the fixed yardstick of the evaluation issue: variants are
compared on the same questions, and calibration says on which set (name,
count, content hash) a threshold was chosen. So the loader is strict about
what it understands and lenient about what it does not (extra labels are
kept, never rejected).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from selfrag_nb.errors import InputError, NotFoundError, QuestionSetError
from selfrag_nb.jsonl import read_objects
from selfrag_nb.store.types import User

if TYPE_CHECKING:  # pandas is heavy
    import pandas as pd

__all__ = ["OUTCOMES", "Question", "QuestionSet", "questions", "sample_path"]

#: Every outcome a Trace can end with (``selfrag_nb.trace.OutcomeName``).
OUTCOMES: tuple[str, ...] = ("answered", "disclaimed", "regenerated", "direct", "clarify", "refused")

_KNOWN = frozenset(
    {
        "id",
        "category",
        "question",
        "history",
        "user",
        "should_retrieve",
        "relevant",
        "expected",
        "must_include",
        "must_not_include",
        "secret",
        "protected",
    }
)


def _as_str_list(v: Any, field: str) -> list[str]:
    # A lone string is the common hand-written shortcut for a one-item list.
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return list(v)
    raise InputError(f"{field} must be a string or a list of strings, got {v!r}")


class Question(BaseModel):
    """One labelled question. ``expected`` lists the outcomes that count as
    correct; an empty ``expected`` means the outcome is not labelled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    category: str
    question: str
    history: list[dict[str, str]] = Field(default_factory=list)
    #: ``{"id": ..., "roles": [...]}``; None asks as the anonymous user.
    user: dict[str, Any] | None = None
    #: None when the retrieval decision is not labelled.
    should_retrieve: bool | None = None
    #: Source file names whose chunks answer the question.
    relevant: list[str] = Field(default_factory=list)
    expected: list[str] = Field(default_factory=list)
    must_include: list[str] = Field(default_factory=list)
    must_not_include: list[str] = Field(default_factory=list)
    #: Text the asking user may not see: it must appear nowhere in the trace.
    secret: list[str] = Field(default_factory=list)
    #: Exact spans (ids, versions, negations) every rewrite must keep.
    protected: list[str] = Field(default_factory=list)
    #: Fields this loader does not know, kept as they were.
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, v: Any) -> Any:
        # Numeric ids are common in hand-written sets; "7" and 7 name the same question.
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return v

    @field_validator("id", "category", "question")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise InputError("must not be blank")
        return v

    @field_validator(
        "relevant", "expected", "must_include", "must_not_include", "secret", "protected", mode="before"
    )
    @classmethod
    def _str_list(cls, v: Any, info: Any) -> list[str]:
        return _as_str_list(v, info.field_name)

    @field_validator("expected")
    @classmethod
    def _known_outcomes(cls, v: list[str]) -> list[str]:
        bad = [o for o in v if o not in OUTCOMES]
        if bad:
            raise InputError(f"unknown outcome(s) {bad}; allowed: {', '.join(OUTCOMES)}")
        return v

    @field_validator("history", mode="before")
    @classmethod
    def _turns(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list):
            raise InputError(f"history must be a list of {{'role', 'content'}} objects, got {v!r}")
        for i, turn in enumerate(v):
            if not isinstance(turn, dict) or set(turn) != {"role", "content"}:
                raise InputError(f"history[{i}] must be an object with exactly 'role' and 'content'")
            if turn["role"] not in ("user", "assistant", "system"):
                raise InputError(f"history[{i}].role must be user, assistant or system")
        return v

    @field_validator("user")
    @classmethod
    def _user_builds(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            User(**v)  # raises a ValueError naming the bad field
        return v

    def make_user(self) -> User:
        """The user this question is asked as (anonymous when none is labelled)."""
        return User(**self.user) if self.user else User()

    def to_record(self) -> dict[str, Any]:
        """The JSON Lines object this question was read from (extra fields inlined)."""
        d = self.model_dump(exclude={"extra"}, exclude_defaults=True)
        d.update({"id": self.id, "category": self.category, "question": self.question})
        return {**d, **self.extra}

    @classmethod
    def from_record(cls, obj: Mapping[str, Any]) -> Question:
        """Build from one JSON object; unknown keys go to ``extra``."""
        known = {k: v for k, v in obj.items() if k in _KNOWN}
        extra = {k: v for k, v in obj.items() if k not in _KNOWN}
        return cls(**known, extra=extra)


class QuestionSet(Sequence[Question]):
    """An ordered, immutable set of questions with unique ids."""

    def __init__(self, items: Iterable[Question], *, name: str = "questions", path: str = "") -> None:
        self._items: tuple[Question, ...] = tuple(items)
        self.name = name
        self.path = path
        seen: set[str] = set()
        for q in self._items:
            if not isinstance(q, Question):
                raise QuestionSetError(f"{name}: expected Question records, got {type(q).__name__}")
            if q.id in seen:
                raise QuestionSetError(f"{name}: duplicate question id {q.id!r}")
            seen.add(q.id)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, name: str = "questions") -> QuestionSet:
        """Build from JSON-like dicts (the same schema as one line of the file)."""
        items = []
        for i, obj in enumerate(records, start=1):
            try:
                items.append(Question.from_record(obj))
            except (ValidationError, TypeError, ValueError) as exc:
                raise QuestionSetError(f"{name}: record {i}: {_explain(exc)}") from None
        return cls(items, name=name)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Question]:
        return iter(self._items)

    @overload
    def __getitem__(self, i: int) -> Question: ...
    @overload
    def __getitem__(self, i: slice) -> QuestionSet: ...
    def __getitem__(self, i: int | slice) -> Question | QuestionSet:
        if isinstance(i, slice):
            return QuestionSet(self._items[i], name=self.name, path=self.path)
        return self._items[i]

    def __repr__(self) -> str:
        cats = ", ".join(f"{c}={n}" for c, n in self.counts().items())
        return f"QuestionSet({self.name!r}, {len(self)} questions: {cats})"

    def get(self, qid: str) -> Question:
        """The question with id ``qid`` (KeyError naming it when absent)."""
        for q in self._items:
            if q.id == qid:
                return q
        raise NotFoundError(f"no question with id {qid!r} in {self.name}", key=qid)

    @property
    def categories(self) -> list[str]:
        """Categories in order of first appearance."""
        return list(dict.fromkeys(q.category for q in self._items))

    def counts(self) -> dict[str, int]:
        """Questions per category."""
        out: dict[str, int] = {}
        for q in self._items:
            out[q.category] = out.get(q.category, 0) + 1
        return out

    @property
    def fingerprint(self) -> str:
        """Content hash (12 hex digits): two sets with the same questions share it."""
        h = hashlib.sha256()
        for q in self._items:
            h.update(json.dumps(q.to_record(), sort_keys=True, ensure_ascii=False).encode())
            h.update(b"\n")
        return h.hexdigest()[:12]

    def describe(self) -> dict[str, Any]:
        """Name, path, count and hash: what a result says it was measured on."""
        return {"name": self.name, "path": self.path, "count": len(self), "hash": self.fingerprint}

    def filter(
        self,
        category: str | Iterable[str] | None = None,
        ids: Iterable[str] | None = None,
    ) -> QuestionSet:
        """The questions in ``category`` (one name or several) and/or with ``ids``."""
        cats = {category} if isinstance(category, str) else set(category) if category is not None else None
        wanted = set(ids) if ids is not None else None
        if cats is not None and (unknown := cats - set(self.categories)):
            missing = sorted(unknown)
            # one missing category is the key, as KeyError's; several are a tuple
            key = missing[0] if len(missing) == 1 else tuple(missing)
            raise NotFoundError(f"unknown categor(y/ies) {missing}; known: {self.categories}", key=key)
        kept = [
            q
            for q in self._items
            if (cats is None or q.category in cats) and (wanted is None or q.id in wanted)
        ]
        return QuestionSet(kept, name=self.name, path=self.path)

    def sample(self, n: int, seed: int = 0, *, per_category: bool = False) -> QuestionSet:
        """``n`` questions drawn without replacement (``n`` per category when
        ``per_category``), kept in file order so runs are comparable."""
        if n < 0:
            raise InputError(f"sample size must be >= 0, got {n}")
        rng = random.Random(seed)
        idx = list(range(len(self._items)))
        if per_category:
            chosen: set[int] = set()
            for cat in self.categories:
                members = [i for i in idx if self._items[i].category == cat]
                chosen.update(rng.sample(members, min(n, len(members))))
        else:
            chosen = set(rng.sample(idx, min(n, len(idx))))
        return QuestionSet(
            [self._items[i] for i in sorted(chosen)],
            name=f"{self.name}[sample {n}, seed {seed}]",
            path=self.path,
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per question; list fields stay lists."""
        import pandas as pd

        return pd.DataFrame([q.model_dump() for q in self._items])

    def save(self, path: str | Path) -> Path:
        """Write as JSON Lines (the format ``questions()`` reads)."""
        p = Path(path)
        with p.open("w", encoding="utf-8") as f:
            for q in self._items:
                f.write(json.dumps(q.to_record(), ensure_ascii=False) + "\n")
        return p


def sample_path() -> Path:
    """Where the bundled sample question set lives: inside the installed
    package, or the source tree's sample_data/ (:func:`selfrag_nb.resources.bundled`)."""
    from selfrag_nb.resources import bundled

    return bundled("sample_data") / "questions.jsonl"


def _explain(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "record"
            parts.append(f"{loc}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)


def questions(name_or_path: str | Path | QuestionSet = "sample") -> QuestionSet:
    """Load a question set: ``"sample"`` (the bundled bilingual set) or a path
    to a ``.jsonl`` file. Raises ``QuestionSetError`` naming the file and line
    of the first bad line; unknown fields are kept in ``Question.extra``."""
    if isinstance(name_or_path, QuestionSet):
        return name_or_path
    if isinstance(name_or_path, str) and name_or_path == "sample":
        path, name = sample_path(), "sample"
    else:
        path = Path(name_or_path)
        name = path.name
    if not path.is_file():
        hint = " (the sample set ships in the source tree's sample_data/)" if name == "sample" else ""
        raise QuestionSetError(f"{path}: question set not found{hint}")
    items: list[Question] = []
    seen: dict[str, int] = {}
    for lineno, where, obj in read_objects(path, QuestionSetError):
        missing = [k for k in ("id", "category", "question") if k not in obj]
        if missing:
            raise QuestionSetError(f"{where}: missing required field(s) {', '.join(missing)}")
        try:
            q = Question.from_record(obj)
        except (ValidationError, TypeError, ValueError) as exc:
            raise QuestionSetError(f"{where}: {_explain(exc)}") from None
        if q.id in seen:
            raise QuestionSetError(f"{where}: duplicate id {q.id!r} (first on line {seen[q.id]})")
        seen[q.id] = lineno
        items.append(q)
    if not items:
        raise QuestionSetError(f"{path}: no questions (the file is empty)")
    return QuestionSet(items, name=name, path=str(path))
