"""A label sheet: what a person labels for one answered question, from a view.

    labels.annotate(trace, qid)  ->  LabelSheet(labels, trace, qid)
      chunks   each graded chunk (trace.grades): id, name, the judge's grade, its text
      claims   each verified claim (trace.support): text, the judge's verdict, evidence
      answer   the usefulness verdict (trace.usefulness) and the answer text
    display  -> display/label_view.py (the tree: current labels + marks to set them)
                widget: display/label_widget.py; a click on a mark sends
                {"send": "label", "kind", "item", "value"} -> sheet.apply(msg)
    apply(msg)  checks the message against what the sheet OFFERED (the browser is
                never trusted: an unknown kind, item or value is ignored, the reason
                logged) -> Labels.chunk / claim / answer -> one line in the file

The sheet names a claim by its position on the sheet, never by text the
browser sends: a forged message can only pick one of the marks the sheet
drew. The Labels file stays the one place labels are kept; the sheet reads the
current label from it each time the view is drawn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from selfrag_nb._displayable import Displayable
from selfrag_nb.errors import InputError

if TYPE_CHECKING:
    from selfrag_nb.labels import Label, Labels
    from selfrag_nb.store.types import ChunkRef
    from selfrag_nb.trace import Claim, Grade, Trace

__all__ = ["CHOICES", "LabelSheet", "SheetChunk", "SheetClaim"]

_log = logging.getLogger(__name__)

#: The marks of each kind: (value sent, the word shown). Chunk values map to
#: relevant true/false; claim values are Labels' support words.
CHOICES: dict[str, tuple[tuple[str, str], ...]] = {
    "chunk": (("yes", "relevant"), ("no", "not relevant")),
    "claim": (("supported", "supported"), ("partial", "partly"), ("unsupported", "not supported")),
    "answer": (("yes", "yes"), ("partly", "partly"), ("no", "no")),
}


@dataclass(frozen=True)
class SheetChunk:
    """A graded chunk as the sheet offers it."""

    grade: Grade
    ref: ChunkRef | None
    text: str

    @property
    def chunk_id(self) -> str:
        return self.grade.chunk_id


@dataclass(frozen=True)
class SheetClaim:
    """A verified claim as the sheet offers it (``index``: its position, 0-based)."""

    index: int
    claim: Claim
    sentence: str

    @property
    def evidence(self) -> str:
        """The evidence sentence the verifier quoted ("" when none)."""
        return next((e.span for e in self.claim.evidence if e.span.strip()), "")


class LabelSheet(Displayable):
    """Label one answered question's chunks, claims and answer from its view.

    Made by ``labels.annotate(trace, qid)``; displaying it shows the sheet
    (a widget in JupyterLab and marimo: a click on a mark writes the label;
    the static HTML shows the current labels as text)."""

    def __init__(self, labels: Labels, trace: Trace, qid: str) -> None:
        from selfrag_nb.trace import Retrieval, Trace

        if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
            raise InputError(
                f"annotate needs the question's id in the question set (qid), got {qid!r}: "
                "labels are joined to questions by that id"
            )
        if not isinstance(trace, Trace):
            raise InputError(f"annotate needs a Trace (from rag.ask), got {type(trace).__name__}")
        self.labels = labels
        self.trace = trace
        self.qid = str(qid)
        hits = {hit.chunk_id: hit for rec in trace.records if isinstance(rec, Retrieval) for hit in rec.hits}
        grades = trace.grades
        self.chunks: list[SheetChunk] = []
        for g in grades.items if grades else []:
            hit = hits.get(g.chunk_id)
            ref = grades.refs.get(g.chunk_id) if grades else None
            self.chunks.append(SheetChunk(g, ref, hit.text if hit else ""))
        answer = trace.generation.answer if trace.generation else ""
        support = trace.support
        self.claims: list[SheetClaim] = []
        for i, c in enumerate(support.claims if support else []):
            sentence = answer[c.start : c.end].strip() if 0 <= c.start < c.end <= len(answer) else ""
            self.claims.append(SheetClaim(i, c, sentence))
        self.answer_text = trace.answer or ""
        self.usefulness = trace.usefulness
        self._by_chunk = {c.chunk_id: c for c in self.chunks}

    def __repr__(self) -> str:
        return self.to_text()

    # -- the current labels ------------------------------------------------
    def chunk_value(self, chunk_id: str) -> str | None:
        lab = self.labels.get_chunk(self.qid, chunk_id)
        return None if lab is None else ("yes" if lab.relevant else "no")

    def claim_value(self, index: int) -> str | None:
        lab = self.labels.get_claim(self.qid, self.claims[index].claim.text)
        return None if lab is None else lab.support

    def answer_value(self) -> str | None:
        lab = self.labels.get_answer(self.qid)
        return None if lab is None else lab.useful

    @property
    def offers_answer(self) -> bool:
        return bool(self.answer_text.strip())

    def labelled(self) -> int:
        """How many of the sheet's items carry a human label."""
        n = sum(self.chunk_value(c.chunk_id) is not None for c in self.chunks)
        n += sum(self.claim_value(c.index) is not None for c in self.claims)
        return n + int(self.offers_answer and self.answer_value() is not None)

    def size(self) -> int:
        return len(self.chunks) + len(self.claims) + int(self.offers_answer)

    # -- a mark clicked ------------------------------------------------------
    def apply(self, msg: Any) -> Label | None:
        """Write the label a view's message asks for, if the sheet offered it.

        ``msg``: {"send": "label", "kind": "chunk"|"claim"|"answer", "item": chunk id
        or claim position, "value": one of CHOICES[kind]}. Anything else (a forged
        chunk id, a claim not on the sheet, a value not offered) writes nothing and
        is logged; returns the label written, or None."""
        reason = self._refuse(msg)
        if reason:
            _log.warning("label sheet %s: message ignored: %s", self.qid, reason)
            return None
        kind, item, value = msg["kind"], str(msg.get("item", "")), msg["value"]
        if kind == "chunk":
            chunk = self._by_chunk[item]
            source = chunk.ref.source if chunk.ref else chunk.grade.source
            return self.labels.chunk(self.qid, item, relevant=value == "yes", source=source)
        if kind == "claim":
            c = self.claims[int(item)]
            return self.labels.claim(self.qid, c.claim.text, support=value, sentence=c.sentence)
        return self.labels.answer(self.qid, useful=value, answer=self.answer_text)

    def _refuse(self, msg: Any) -> str:
        """Why ``msg`` is not one of the sheet's marks ("" when it is)."""
        if not isinstance(msg, dict) or msg.get("send") != "label":
            return f"not a label message: {str(msg)[:200]!r}"
        kind, item, value = msg.get("kind"), msg.get("item", ""), msg.get("value")
        if kind not in CHOICES:
            return f"unknown kind {str(kind)[:50]!r}"
        if value not in {v for v, _ in CHOICES[kind]}:
            return f"{kind} value {str(value)[:50]!r} is not offered"
        if not isinstance(item, str):
            return f"item must be text, got {type(item).__name__}"
        if kind == "chunk" and item not in self._by_chunk:
            return f"chunk {item[:80]!r} is not on the sheet"
        if kind == "claim" and not (item.isdigit() and int(item) < len(self.claims)):
            return f"claim {item[:80]!r} is not on the sheet"
        if kind == "answer" and not self.offers_answer:
            return "the sheet offers no answer to label"
        return ""
