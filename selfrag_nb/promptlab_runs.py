"""What a Prompt Lab run produces, and how one question's side is scored.

    question + role + template version --stepper run--> Trace
      score_side(role, version, question, trace)  (score_side)
        decide  Decision.retrieve            vs should_retrieve        -> 1.0 / 0.0
        grade   chunks graded relevant       vs relevant sources       -> share of chunks judged right,
                                                                          precision / recall
        verify  first recommendation -> outcome vs expected outcomes   -> 1.0 / 0.0
        + tokens, cost, latency of the role's own calls, unparsed calls, prompt hashes
      -> LabSide;  baseline + candidate sides of one question -> LabRow
    LabRow* -> LabRun (.totals() .agreement_old/new .to_pandas() .to_json();
               text and static HTML faces through Displayable: display/prompt_lab_html.py)

Plain records, usable without the lab (``LabRun.model_validate_json``); the
engine that runs them is ``selfrag_nb.promptlab.PromptLab``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb._displayable import Displayable
from selfrag_nb.eval.metrics import grading_precision_recall, source_matches
from selfrag_nb.eval.questions import Question
from selfrag_nb.trace import ModelCall, Trace

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LabRow", "LabRun", "LabSide", "is_labelled", "label_for", "mean_of", "score_side"]


# ------------------------------------------------------------------ records


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LabSide(_Frozen):
    """One question run with one template version. Tokens, cost and latency
    are those of the role's own model calls (what the template changes);
    ``wall_ms`` is the whole question run. ``cost`` None = unknown."""

    version: str
    verdict: str
    #: 1.0 agrees with the label, 0.0 disagrees; for grade the share of graded
    #: chunks whose relevance matches the label. None: not labelled / did not run.
    agreement: float | None = None
    #: grade: sources graded relevant (unique, retrieval order); precision/recall vs labels.
    relevant: list[str] = Field(default_factory=list)
    graded: int = 0
    precision: float | None = None
    recall: float | None = None
    #: verify: the first verification's recommendation and the final outcome.
    recommendation: str | None = None
    outcome: str | None = None
    #: decide: rule | cache | model | setting | override.
    decision_source: str | None = None
    reason: str = ""
    calls: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = 0.0
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    #: Calls whose output was not parsed (the conservative default was used).
    unparsed: int = 0
    #: Prompt hashes recorded on the role's calls (the version actually sent).
    prompt_hashes: list[str] = Field(default_factory=list)
    offline: bool = False
    error: str | None = None
    #: True when this side came from the lab's cache (same template, same context).
    cached: bool = False


class LabRow(_Frozen):
    """One question: its label, the baseline (old) and candidate (new) sides."""

    id: str
    category: str
    question: str
    label: str
    old: LabSide
    new: LabSide

    @property
    def changed(self) -> bool:
        """True when the candidate's verdict differs from the baseline's."""
        return self.old.verdict != self.new.verdict


def mean_of(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _sum_cost(values: Iterable[float | None]) -> float | None:
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _sum_tokens(values: Iterable[int | None]) -> int | None:
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None


class LabRun(_Frozen, Displayable):
    """The result of ``PromptLab.run``: one row per question, old vs new."""

    role: str
    baseline: str
    candidate: str
    question_set: str = ""
    rows: list[LabRow]
    offline: bool = False
    #: Non-empty when the template cannot change the verdicts (offline model).
    note: str = ""
    model: str = ""
    wall_ms: float = 0.0
    created: float = Field(default_factory=time.time)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rows]

    @property
    def agreement_old(self) -> float | None:
        """Mean agreement of the baseline over the labelled questions."""
        return mean_of(r.old.agreement for r in self.rows)

    @property
    def agreement_new(self) -> float | None:
        """Mean agreement of the candidate over the labelled questions."""
        return mean_of(r.new.agreement for r in self.rows)

    @property
    def changed(self) -> int:
        """Questions whose verdict changed."""
        return sum(1 for r in self.rows if r.changed)

    @property
    def errors(self) -> int:
        """Questions that raised on either side (shown as error rows)."""
        return sum(1 for r in self.rows if r.old.error or r.new.error)

    def totals(self) -> dict[str, Any]:
        """Agreement, precision/recall (grade), tokens, cost and latency per side."""
        out: dict[str, Any] = {
            "role": self.role,
            "questions": len(self.rows),
            "changed": self.changed,
            "errors": self.errors,
        }
        for name in ("old", "new"):
            sides = [getattr(r, name) for r in self.rows]
            out[name] = {
                "version": self.baseline if name == "old" else self.candidate,
                "agreement": mean_of(s.agreement for s in sides),
                "labelled": sum(1 for s in sides if s.agreement is not None),
                "precision": mean_of(s.precision for s in sides),
                "recall": mean_of(s.recall for s in sides),
                "tokens_in": _sum_tokens(s.tokens_in for s in sides),
                "tokens_out": _sum_tokens(s.tokens_out for s in sides),
                "cost": _sum_cost(s.cost for s in sides),
                "latency_ms": sum(s.latency_ms for s in sides),
            }
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per question (old_* and new_* columns)."""
        out = []
        for r in self.rows:
            rec: dict[str, Any] = {
                "id": r.id,
                "category": r.category,
                "question": r.question,
                "label": r.label,
                "changed": r.changed,
            }
            for name in ("old", "new"):
                side: LabSide = getattr(r, name)
                for k in ("verdict", "agreement", "tokens_in", "tokens_out", "cost", "latency_ms", "error"):
                    rec[f"{name}_{k}"] = getattr(side, k)
            out.append(rec)
        return out

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.to_records())

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


# ------------------------------------------------------------------ scoring


def label_for(role: str, q: Question) -> str:
    if role == "decide":
        if q.should_retrieve is None:
            return "—"
        return "RETRIEVE" if q.should_retrieve else "NO_RETRIEVE"
    if role == "grade":
        return "relevant: " + ", ".join(q.relevant) if q.relevant else "none relevant"
    return "expected: " + " | ".join(q.expected) if q.expected else "—"


def is_labelled(role: str, q: Question) -> bool:
    if role == "decide":
        return q.should_retrieve is not None
    if role == "grade":
        # Grading only happens when the question is meant to retrieve.
        return q.should_retrieve is not False
    return bool(q.expected)


def _role_calls(trace: Trace, role: str) -> list[ModelCall]:
    return [c for c in trace.model_calls if c.role == role]


def score_side(role: str, version: str, q: Question, trace: Trace, wall_ms: float) -> LabSide:
    calls = _role_calls(trace, role)
    common: dict[str, Any] = {
        "version": version,
        "calls": len(calls),
        "tokens_in": _sum_tokens(c.tokens_in for c in calls),
        "tokens_out": _sum_tokens(c.tokens_out for c in calls),
        "cost": _sum_cost(c.cost for c in calls),
        "latency_ms": sum(c.latency_ms for c in calls),
        "wall_ms": wall_ms,
        "unparsed": sum(1 for c in calls if c.parse_status in ("unparsed", "error")),
        "prompt_hashes": list(dict.fromkeys(c.prompt_hash for c in calls)),
        "offline": bool(calls) and all(c.offline for c in calls),
    }
    dec = trace.decision
    if role == "decide":
        if dec is None:
            return LabSide(verdict="no decision", **common)
        agree = None if q.should_retrieve is None else float(dec.retrieve == q.should_retrieve)
        return LabSide(
            verdict="RETRIEVE" if dec.retrieve else "NO_RETRIEVE",
            agreement=agree,
            decision_source=dec.source,
            reason=dec.reason,
            **common,
        )
    if role == "grade":
        grades = trace.grades
        if grades is None:
            return LabSide(verdict="no retrieval", reason=dec.reason if dec else "", **common)
        src = {h.chunk_id: h.source for h in (trace.retrieval.hits if trace.retrieval else [])}
        graded = [(g.source or src.get(g.chunk_id, ""), g.relevant) for g in grades.items]
        precision, recall = grading_precision_recall(graded, q.relevant)
        matches = [rel == source_matches(s, q.relevant) for s, rel in graded]
        kept = list(dict.fromkeys(s for s, rel in graded if rel))
        verdict = f"{sum(1 for _, rel in graded if rel)}/{len(graded)} relevant"
        if kept:
            verdict += ": " + ", ".join(s.rsplit("/", 1)[-1] for s in kept)
        return LabSide(
            verdict=verdict,
            agreement=sum(matches) / len(matches) if matches else None,
            relevant=kept,
            graded=len(graded),
            precision=precision,
            recall=recall,
            **common,
        )
    # verify: the verifier's own verdict is the first Support; the outcome shows its effect.
    supports = trace.supports
    rec = supports[0].recommendation if supports else None
    outcome = trace.outcome
    agree = None if not q.expected or outcome is None else float(outcome in q.expected)
    verdict = f"{rec or 'not verified'} → {outcome or 'no outcome'}"
    fin = trace.finish
    return LabSide(
        verdict=verdict,
        agreement=agree,
        recommendation=rec,
        outcome=outcome,
        reason=fin.reason if fin else "",
        **common,
    )
