"""Human labels: what people say about chunks, claims and answers, in a JSON Lines file.

    Labels(path)                       the file (created on the first write); "sample" = the
                                       bundled sample_data/labels.jsonl
      read   each non-blank line -> JSON object (jsonl.read_objects) -> by "kind":
               "chunk"   id, chunk_id, relevant (true / false)      [source]
               "claim"   id, claim, support (supported / partial / unsupported)
                                                                    [sentence, chunk_id]
               "answer"  id, useful (yes / partly / no)             [answer]
               + optional note, by (who), at (ISO time); unknown fields -> .extra, kept
             any bad line -> LabelsError("<file>:<line>: <what is wrong>"), nothing half-read
      key    chunk (id, chunk_id) · claim (id, normalized claim, chunk_id or "") · answer (id)
             the last line for a key wins; earlier lines stay in the file (append-only history)
      write  labels.chunk(qid, chunk_id, relevant=True, note="", by="")
             labels.claim(qid, claim, support="supported", sentence="", chunk_id="")
             labels.answer(qid, useful="yes")
             -> validated, then one line appended (with "at": now, UTC) -> the label
      look   get_chunk(qid, chunk_id) get_claim(qid, claim) get_answer(qid) for_question(qid)
             len(labels), iter(labels): the winning labels, in the order of their lines
             counts() check(questions) to_records() to_pandas()
      view   labels.annotate(trace, qid) -> a LabelSheet (label_sheet.py): the trace's
             graded chunks, verified claims and answer with their labels and marks
             to set them; a click on a mark in the widget writes the label here

``id`` is the question id of the question-set schema (eval/questions.py), so
``labels.to_pandas().merge(qs.to_pandas(), on="id")`` joins the two. Chunk ids
are content-derived (store/prepare.py: a hash of the source path, the chunk
text and its repeat count), so a label keeps pointing at its chunk when an
unchanged document is ingested again, into the same or a new knowledge base.
Claims are matched by text, case, spacing, citation markers and the closing
full stop aside (``claim_key``): the
verifier's claims come from the generated answer, so a claim label is written
for the sentences a run produced.

Why one loose file and not a table: people write labels by hand or from the
lab, several at a time; a JSON line per label diffs and merges in git, and
appending never loses an earlier judgement (the history stays readable).
"""

from __future__ import annotations

import json
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from selfrag_nb.errors import InputError, LabelsError, NotFoundError
from selfrag_nb.jsonl import read_objects
from selfrag_nb.text import strip_markers

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.eval.questions import QuestionSet
    from selfrag_nb.label_sheet import LabelSheet
    from selfrag_nb.trace import Trace

__all__ = [
    "KINDS",
    "SUPPORT",
    "USEFUL",
    "AnswerLabel",
    "ChunkLabel",
    "ClaimLabel",
    "Label",
    "Labels",
    "claim_key",
    "sample_labels_path",
]

KINDS = ("chunk", "claim", "answer")
SUPPORT = ("supported", "partial", "unsupported")
USEFUL = ("yes", "partly", "no")
_COMMON = ("kind", "id", "note", "by", "at")
_FIELDS = {
    "chunk": frozenset({*_COMMON, "chunk_id", "relevant", "source"}),
    "claim": frozenset({*_COMMON, "claim", "support", "sentence", "chunk_id"}),
    "answer": frozenset({*_COMMON, "useful", "answer"}),
}
_REQUIRED = {"chunk": ("chunk_id", "relevant"), "claim": ("claim", "support"), "answer": ("useful",)}


def claim_key(text: str) -> str:
    """A claim as it is matched: without citation markers ("[1]") and closing
    punctuation (verifiers quote claims either way), Unicode-normalized,
    case-folded, spacing collapsed."""
    core = " ".join(unicodedata.normalize("NFKC", strip_markers(text)).casefold().split())
    return core.rstrip(".。!?！？;；").strip()


class _Label(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    #: The question id (the ``id`` of the question set).
    id: str
    note: str = ""
    #: Who labelled it (optional).
    by: str = ""
    #: When (ISO 8601 time, optional; written by the lab as UTC).
    at: str = ""
    #: Fields this loader does not know, kept and written back as they were.
    extra: dict[str, Any] = Field(default_factory=dict)
    #: Line in the file (0: not read from a file).
    line: int = Field(default=0, exclude=True)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, v: Any) -> Any:
        # the question-set loader reads 7 and "7" as the same id
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("id")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise InputError("must not be blank")
        return v

    def to_record(self) -> dict[str, Any]:
        """The JSON object of this label's line (unknown fields inlined)."""
        d = self.model_dump(exclude={"extra", "line"}, exclude_defaults=True)
        # the key fields first, who / when last: the file reads like a table
        tail: dict[str, Any] = {k: d.pop(k) for k in ("note", "by", "at") if k in d}
        return {"kind": self.kind, "id": self.id, **d, **tail, **self.extra}


class ChunkLabel(_Label):
    """Is this chunk relevant to the question? (what a grader decides)"""

    kind: Literal["chunk"] = "chunk"
    chunk_id: str
    relevant: bool
    #: The chunk's source file (for people reading the file; not matched on).
    source: str = ""

    @field_validator("relevant", mode="before")
    @classmethod
    def _strict_bool(cls, v: Any) -> Any:
        if not isinstance(v, bool):  # "no" or 0 would read as a silent guess
            raise InputError(f"relevant must be true or false, got {v!r}")
        return v

    @field_validator("chunk_id")
    @classmethod
    def _chunk_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise InputError("chunk_id must not be blank")
        return v

    @property
    def key(self) -> tuple[str, ...]:
        return ("chunk", self.id, self.chunk_id)

    @property
    def value(self) -> str:
        """The label as the judge's verdicts are spelled: "relevant" / "not relevant"."""
        return "relevant" if self.relevant else "not relevant"


class ClaimLabel(_Label):
    """Is this claim of an answer supported by the evidence? (what a verifier decides)"""

    kind: Literal["claim"] = "claim"
    claim: str
    support: Literal["supported", "partial", "unsupported"]
    #: The answer sentence the claim was read from (optional).
    sentence: str = ""
    #: The chunk the person checked the claim against (optional).
    chunk_id: str = ""

    @field_validator("claim")
    @classmethod
    def _claim_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise InputError("claim must not be blank")
        return v

    @property
    def key(self) -> tuple[str, ...]:
        return ("claim", self.id, claim_key(self.claim), self.chunk_id)

    @property
    def value(self) -> str:
        return self.support


class AnswerLabel(_Label):
    """Does the answer answer the question? (what the usefulness judge decides)"""

    kind: Literal["answer"] = "answer"
    useful: Literal["yes", "partly", "no"]
    #: The answer text the person judged (optional).
    answer: str = ""

    @property
    def key(self) -> tuple[str, ...]:
        return ("answer", self.id)

    @property
    def value(self) -> str:
        return self.useful


Label = ChunkLabel | ClaimLabel | AnswerLabel
_CLASSES: dict[str, type[ChunkLabel] | type[ClaimLabel] | type[AnswerLabel]] = {
    "chunk": ChunkLabel,
    "claim": ClaimLabel,
    "answer": AnswerLabel,
}


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(msg if not loc or loc in msg else f"{loc}: {msg}")
    return "; ".join(parts)


def _parse(obj: dict[str, Any], line: int = 0) -> Label:
    """One JSON object as a label; LabelsError names what is wrong (the caller adds where)."""
    kind = obj.get("kind")
    if kind not in _CLASSES:
        raise LabelsError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    missing = [k for k in ("id", *_REQUIRED[kind]) if k not in obj]
    if missing:
        raise LabelsError(f"{kind} label missing required field(s) {', '.join(missing)}")
    known = {k: v for k, v in obj.items() if k in _FIELDS[kind] and k != "kind"}
    extra = {k: v for k, v in obj.items() if k not in _FIELDS[kind]}
    try:
        return _CLASSES[kind](**known, extra=extra, line=line)
    except ValidationError as exc:
        raise LabelsError(_explain(exc)) from None


def sample_labels_path() -> Path:
    """The bundled sample labels (sample_data/labels.jsonl), for ``sr.questions("sample")``."""
    from selfrag_nb.resources import bundled

    return bundled("sample_data") / "labels.jsonl"


class Labels:
    """Human labels of chunks, claims and answers, read from and appended to a JSON Lines file.

    ``labels = sr.Labels("labels.jsonl")`` (a missing file is created on the
    first write); ``sr.Labels("sample")`` is the bundled set for the sample
    questions. Pass it to ``sr.PromptLab(rag, qs, labels=labels)`` to score
    grade, verify and usefulness against people instead of the proxies."""

    def __init__(self, path: str | Path) -> None:
        if not isinstance(path, (str, Path)):
            raise LabelsError(f"Labels needs a path to a .jsonl file, got {type(path).__name__}")
        self.path = sample_labels_path() if path == "sample" else Path(path).expanduser()
        if self.path.is_dir():
            raise LabelsError(f"{self.path}: is a folder, not a labels file")
        self._lock = threading.Lock()
        self._labels: dict[tuple[str, ...], Label] = {}
        self._claims: dict[tuple[str, str], list[ClaimLabel]] = {}
        self.lines = 0  # label lines read or written (history included)
        if self.path.exists():
            self._read()

    def __repr__(self) -> str:
        c = self.counts()
        return f"Labels({str(self.path)!r}: {c['chunk']} chunks, {c['claim']} claims, {c['answer']} answers)"

    # -- reading ----------------------------------------------------------------
    def _read(self) -> None:
        for lineno, where, obj in read_objects(self.path, LabelsError):
            try:
                self._add(_parse(obj, lineno))
            except LabelsError as exc:
                raise LabelsError(f"{where}: {exc}") from None

    def _add(self, label: Label) -> None:
        # a later line wins, and iteration follows the line each key was last written on
        self._labels.pop(label.key, None)
        self._labels[label.key] = label
        if isinstance(label, ClaimLabel):
            same = self._claims.setdefault((label.id, claim_key(label.claim)), [])
            same[:] = [c for c in same if c.chunk_id != label.chunk_id] + [label]
        self.lines += 1

    # -- writing ----------------------------------------------------------------
    def _write(self, obj: dict[str, Any]) -> Label:
        obj = {k: v for k, v in obj.items() if v not in (None, "")}
        obj.setdefault("at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        try:
            label = _parse(obj)
        except LabelsError as exc:
            raise LabelsError(f"{self.path}: label not written: {exc}") from None
        text = json.dumps(label.to_record(), ensure_ascii=False)
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a+b") as fh:
                    fh.seek(0, 2)
                    if fh.tell():  # a hand-edited file may lack its last newline
                        fh.seek(-1, 2)
                        if fh.read(1) != b"\n":
                            fh.write(b"\n")
                    fh.write(text.encode("utf-8") + b"\n")
            except OSError as exc:
                raise LabelsError(f"{self.path}: label not written: {exc}") from None
            label = label.model_copy(update={"line": self._line_count()})
            self._add(label)
        return label

    def _line_count(self) -> int:
        with self.path.open("rb") as fh:
            return sum(1 for _ in fh)

    def chunk(
        self,
        qid: str,
        chunk_id: str,
        relevant: bool = True,
        note: str = "",
        *,
        by: str = "",
        source: str = "",
    ) -> ChunkLabel:
        """Label ``chunk_id`` relevant (or not) to question ``qid``; appended to the file."""
        obj = {"kind": "chunk", "id": qid, "chunk_id": chunk_id, "relevant": relevant}
        label = self._write({**obj, "source": source, "note": note, "by": by})
        assert isinstance(label, ChunkLabel)
        return label

    def claim(
        self,
        qid: str,
        claim: str,
        support: str = "supported",
        note: str = "",
        *,
        sentence: str = "",
        chunk_id: str = "",
        by: str = "",
    ) -> ClaimLabel:
        """Label a claim of ``qid``'s answer supported / partial / unsupported
        (optionally: as read from ``sentence``, checked against ``chunk_id``)."""
        obj = {"kind": "claim", "id": qid, "claim": claim, "support": support, "sentence": sentence}
        label = self._write({**obj, "chunk_id": chunk_id, "note": note, "by": by})
        assert isinstance(label, ClaimLabel)
        return label

    def answer(
        self, qid: str, useful: str = "yes", note: str = "", *, by: str = "", answer: str = ""
    ) -> AnswerLabel:
        """Label the answer to ``qid`` useful: yes / partly / no."""
        obj = {"kind": "answer", "id": qid, "useful": useful, "answer": answer, "note": note, "by": by}
        label = self._write(obj)
        assert isinstance(label, AnswerLabel)
        return label

    def annotate(self, trace: Trace, qid: str) -> LabelSheet:
        """A label sheet for ``trace``, the answer to question ``qid`` (its id in
        the question set): display it to label each graded chunk, verified claim
        and the answer by clicking a mark; each click appends the label here."""
        from selfrag_nb.label_sheet import LabelSheet

        return LabelSheet(self, trace, qid)

    # -- looking up -------------------------------------------------------------
    def get_chunk(self, qid: str, chunk_id: str) -> ChunkLabel | None:
        found = self._labels.get(("chunk", qid, chunk_id))
        return found if isinstance(found, ChunkLabel) else None

    def get_claim(self, qid: str, claim: str, chunk_id: str | None = None) -> ClaimLabel | None:
        """The label of a claim (matched by ``claim_key``): the one for
        ``chunk_id`` when given; else the one with no chunk, else the latest."""
        if chunk_id is not None:
            found = self._labels.get(("claim", qid, claim_key(claim), chunk_id))
            return found if isinstance(found, ClaimLabel) else None
        same = self._claims.get((qid, claim_key(claim)), [])
        general = [c for c in same if not c.chunk_id]
        pick = general or same
        return pick[-1] if pick else None

    def get_answer(self, qid: str) -> AnswerLabel | None:
        found = self._labels.get(("answer", qid))
        return found if isinstance(found, AnswerLabel) else None

    def for_question(self, qid: str, kind: str | None = None) -> list[Label]:
        """The labels of question ``qid`` (of one ``kind`` when given)."""
        return [lab for lab in self if lab.id == qid and (kind is None or lab.kind == kind)]

    def of_kind(self, kind: str) -> list[Label]:
        if kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return [lab for lab in self if lab.kind == kind]

    def __len__(self) -> int:
        return len(self._labels)

    def __iter__(self) -> Iterator[Label]:
        return iter(list(self._labels.values()))

    def counts(self) -> dict[str, int]:
        """Labels per kind (the winning label of each key)."""
        out = dict.fromkeys(KINDS, 0)
        for lab in self:
            out[lab.kind] += 1
        return out

    @property
    def question_ids(self) -> list[str]:
        return list(dict.fromkeys(lab.id for lab in self))

    def check(self, questions: QuestionSet | Iterable[Any]) -> None:
        """Raise NotFoundError naming the labelled question ids ``questions`` lacks."""
        known = {getattr(q, "id", q) for q in questions}
        unknown = [q for q in self.question_ids if q not in known]
        if unknown:
            where = getattr(questions, "name", "the question set")
            raise NotFoundError(
                f"{self.path}: labels for question id(s) {unknown} not in {where}", key=unknown[0]
            )

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per winning label (its JSON object plus ``line``)."""
        return [{**lab.to_record(), "line": lab.line} for lab in self]

    def to_pandas(self) -> pd.DataFrame:
        """One row per label; ``id`` joins with ``QuestionSet.to_pandas()``."""
        import pandas as pd

        return pd.DataFrame(self.to_records())
