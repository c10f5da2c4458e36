"""What a Prompt Lab run produces, and how one question's side is scored.

    question + role + template version --stepper run (up to the role's stage)--> Trace
      score_side(role, version, question, trace)  each role against what the labels say about it
        decide    Decision.retrieve               vs should_retrieve          -> 1.0 / 0.0
        rewrite   every query keeps the protected spans (1/0) and
                  retrieval recall of the relevant sources               -> mean of the labelled parts
        grade     chunks graded relevant          vs relevant sources         -> share of chunks judged
                                                                             right, precision / recall
        rerank    reranked order                  vs relevant sources         -> reciprocal rank (MRR)
        assess    answer / clarify / refuse       vs expected outcomes        -> 1.0 / 0.0
        generate  must_include hit rate, must_not_include kept out, relevant
                  sources in the evidence cited with a valid marker       -> mean of the labelled parts
        verify    first recommendation -> outcome vs expected outcomes        -> 1.0 / 0.0
        + tokens, cost, latency of the role's own calls, unparsed calls, prompt hashes
        + judged: what the judge ruled per item (grade, verify, usefulness), matched with human
          labels at run time (promptlab_labels.py); with labels they replace the proxies above
        + prompt_use: did this version's template reach a model on this question?
            "used"      a call of the role carried this version's hash to a model that reads prompts
            "offline"   the offline model answered: it reads structured inputs, not the prompt text
            "not used"  no call (rule, decision cache, setting, stage skipped), every call failed,
                        or the calls carried another template's hash
      -> LabSide;  baseline + candidate sides of one question -> LabRow
    LabRow* -> LabRun (.totals() .agreement_old/new .reached_old/new .to_pandas() .to_json(),
               cancelled / planned; text and static HTML faces through Displayable:
               display/prompt_lab_html.py)
    agreement, precision, recall = means over the sides whose prompt was "used" only:
      a rule's decision or the offline model's verdict says nothing about the template
    PromptLab.versions(role) -> LabVersions (a list of dicts: ISO times, rounded scores; a table)

The measures are those of the evaluation (selfrag_nb/eval/metrics.py:
protected_kept, recall_at_k, reciprocal_rank, grading_precision_recall,
source_matches), applied to the part of the trace the role's template
shapes. A measure is None when its label is missing; "agreement" is the one
number a version is ranked by, over the rows the prompt reached. Plain
records, usable without the lab
(``LabRun.model_validate_json``); the engine that runs them is
``selfrag_nb.promptlab.PromptLab``.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb._displayable import Displayable, html, text
from selfrag_nb.eval.metrics import (
    grading_precision_recall,
    protected_kept,
    recall_at_k,
    reciprocal_rank,
    source_matches,
)
from selfrag_nb.eval.questions import Question
from selfrag_nb.promptlab_labels import HumanFigures, Judged, LabelItem
from selfrag_nb.trace import ModelCall, Trace, Usefulness

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ACTION_OUTCOMES",
    "LabRow",
    "LabRun",
    "LabSide",
    "LabVersions",
    "PromptUse",
    "is_labelled",
    "iso_time",
    "label_for",
    "mean_of",
    "prompt_use_of",
    "rounded",
    "score_side",
]

#: Whether a side's template reached a model (see LabSide.prompt_use).
PromptUse = Literal["used", "offline", "not used"]


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
    #: chunks whose relevance matches the label; for rewrite / generate the mean
    #: of their labelled parts; for rerank the reciprocal rank. None: not labelled / did not run.
    agreement: float | None = None
    #: grade: sources graded relevant (unique, retrieval order); precision/recall vs labels.
    #: rewrite: ``recall`` is the retrieval recall of the relevant sources.
    relevant: list[str] = Field(default_factory=list)
    graded: int = 0
    precision: float | None = None
    recall: float | None = None
    #: rewrite: the queries searched (original first); whether each kept every protected span.
    queries: list[str] = Field(default_factory=list)
    protected_ok: bool | None = None
    #: rerank: sources in the reranked order; 1-based rank of the first relevant one.
    order: list[str] = Field(default_factory=list)
    rank: int | None = None
    #: generate: must_include strings found, must_not_include strings found,
    #: relevant sources cited (of those the generator was shown).
    includes: list[str] = Field(default_factory=list)
    excluded_hits: list[str] = Field(default_factory=list)
    cited_relevant: list[str] = Field(default_factory=list)
    citation_recall: float | None = None
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
    #: Did this version's template reach a model on this question? "used": a
    #: call of the role carried it to a model that reads prompts; "offline":
    #: only the offline model answered (it reads structured inputs, not the
    #: prompt text); "not used": no call (rule, decision cache, setting, stage
    #: skipped), every call failed, or the calls carried another template.
    #: Only "used" sides count in agreement. Required, so a cache file written
    #: before the field existed does not parse and is a miss, never a guess.
    prompt_use: PromptUse
    #: Why the prompt was not used ("" when it was).
    prompt_note: str = ""
    #: What the judge ruled, item by item (grade: chunks, verify: claims,
    #: usefulness: the answer), matched with human labels at run time
    #: (promptlab_labels.py). Required, like prompt_use: an older cache file is a miss.
    judged: list[Judged]

    @property
    def reached(self) -> bool:
        """True when this version's template reached a model that reads it."""
        return self.prompt_use == "used"


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


class LabRun(_Frozen, Displayable, HumanFigures):
    """The result of ``PromptLab.run``: one row per question, old vs new.
    Scored against human labels (``labels`` names the file): ``kappa``,
    ``precision``, ``recall``, ``f1``, ``confusion``, ``by_category()``,
    ``disagreements()`` (promptlab_labels.HumanFigures)."""

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
    #: Questions the run was asked for; fewer rows than this when it was cancelled.
    planned: int = 0
    #: True when ``PromptLab.cancel`` (or the ``cancel`` event) stopped it early.
    cancelled: bool = False
    #: The human-labels file the run was scored against ("": the role's proxy labels).
    labels: str = ""
    #: Per judged item: people's label and each side's verdict (runs scored against labels).
    label_items: list[LabelItem] = Field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rows]

    @property
    def agreement_old(self) -> float | None:
        """Mean agreement of the baseline over the labelled questions its
        prompt reached (None when it reached none)."""
        return mean_of(r.old.agreement for r in self.rows if r.old.reached)

    @property
    def agreement_new(self) -> float | None:
        """Mean agreement of the candidate over the labelled questions its
        prompt reached (None when it reached none)."""
        return mean_of(r.new.agreement for r in self.rows if r.new.reached)

    @property
    def reached_old(self) -> int:
        """Questions on which the baseline's template reached a model."""
        return sum(1 for r in self.rows if r.old.reached)

    @property
    def reached_new(self) -> int:
        """Questions on which the candidate's template reached a model."""
        return sum(1 for r in self.rows if r.new.reached)

    @property
    def changed(self) -> int:
        """Questions whose verdict changed."""
        return sum(1 for r in self.rows if r.changed)

    @property
    def cached(self) -> int:
        """Sides served from the lab's cache (memory or disk): no model call."""
        same = self.candidate == self.baseline  # one side stands for both
        return sum(int(r.old.cached) + (0 if same else int(r.new.cached)) for r in self.rows)

    @property
    def progress(self) -> str:
        """ "n/N": questions finished of those asked for."""
        return f"{len(self.rows)}/{max(self.planned, len(self.rows))}"

    @property
    def errors(self) -> int:
        """Questions that raised on either side (shown as error rows)."""
        return sum(1 for r in self.rows if r.old.error or r.new.error)

    def totals(self) -> dict[str, Any]:
        """Per side: where the prompt reached a model (``reached``, ``offline``,
        ``not_used``), agreement, labelled and precision/recall (grade) over the
        reached rows only; tokens, cost and latency over every row (all paid)."""
        out: dict[str, Any] = {
            "role": self.role,
            "questions": len(self.rows),
            "planned": max(self.planned, len(self.rows)),
            "cancelled": self.cancelled,
            "cached": self.cached,
            "changed": self.changed,
            "errors": self.errors,
        }
        for name in ("old", "new"):
            sides = [getattr(r, name) for r in self.rows]
            reached = [s for s in sides if s.reached]
            out[name] = {
                "version": self.baseline if name == "old" else self.candidate,
                "reached": len(reached),
                "offline": sum(1 for s in sides if s.prompt_use == "offline"),
                "not_used": sum(1 for s in sides if s.prompt_use == "not used"),
                "agreement": mean_of(s.agreement for s in reached),
                "labelled": sum(1 for s in reached if s.agreement is not None),
                "precision": mean_of(s.precision for s in reached),
                "recall": mean_of(s.recall for s in reached),
                "tokens_in": _sum_tokens(s.tokens_in for s in sides),
                "tokens_out": _sum_tokens(s.tokens_out for s in sides),
                "cost": _sum_cost(s.cost for s in sides),
                "latency_ms": sum(s.latency_ms for s in sides),
            }
            out[name].update(self.human_totals(name))  # kappa, P/R/F1 vs people; replaces the proxies
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per question (old_* and new_* columns). ``*_prompt_use``
        says whether that side's template reached a model ("used", "offline",
        "not used"; ``*_prompt_note`` why not): only "used" rows count in the
        run's agreement, e.g. ``df[df.new_prompt_use == "used"]``."""
        out = []
        for r in self.rows:
            rec: dict[str, Any] = {
                "id": r.id,
                "category": r.category,
                "question": r.question,
                "label": r.label,
                "changed": r.changed,
            }
            if self.labels:  # what people labelled in this row, and how each side matched it
                mine = [i for i in self.label_items if i.id == r.id and i.human is not None]
                rec["label_items"] = len(mine)
                for name in ("old", "new"):
                    ruled = [i for i in mine if getattr(i, name) is not None]
                    rec[f"{name}_label_agree"] = sum(1 for i in ruled if getattr(i, name) == i.human)
                    rec[f"{name}_label_ruled"] = len(ruled)
            for name in ("old", "new"):
                side: LabSide = getattr(r, name)
                for k in (
                    "verdict",
                    "agreement",
                    "prompt_use",
                    "prompt_note",
                    "tokens_in",
                    "tokens_out",
                    "cost",
                    "latency_ms",
                    "error",
                ):
                    rec[f"{name}_{k}"] = getattr(side, k)
            out.append(rec)
        return out

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.to_records())

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


def iso_time(t: float) -> str:
    """A Unix time as ISO 8601 in UTC, to the second: "2026-12-01T19:08:22Z"."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rounded(v: float | None, digits: int = 3) -> float | None:
    """A score as people read it (0.725, not 0.7250000000000001); None stays None."""
    return None if v is None else round(v, digits)


class LabVersions(list[dict[str, Any]]):
    """``PromptLab.versions(role)``: one dict per version, oldest first (hash,
    created as ISO time, note, scores of its latest run rounded, current,
    baseline, chars). A plain list for code; shown as a table (text, HTML and
    marimo faces in display/prompt_lab_html.py)."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), role: str = "") -> None:
        super().__init__(rows)
        self.role = role

    # Not a Displayable: that mixin is for records with a widget or a static
    # card; this is a list, which marimo would format itself unless told.
    def __repr__(self) -> str:
        return text(self)

    def _repr_html_(self) -> str:
        return html(self)

    def _display_(self) -> Any:
        return Displayable._display_(cast("Displayable", self))


# ------------------------------------------------------------------ scoring

#: Outcomes each assess action can lead to (stages/finish.py): an assessor
#: agrees with the labels when one of them is expected.
ACTION_OUTCOMES: dict[str, frozenset[str]] = {
    "answer": frozenset({"answered", "disclaimed", "regenerated"}),
    "answer_without_evidence": frozenset({"disclaimed", "direct"}),
    "clarify": frozenset({"clarify"}),
    "refuse": frozenset({"refused"}),
}


def _names(sources: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(s.rsplit("/", 1)[-1] for s in sources))


def label_for(role: str, q: Question) -> str:
    """The labels a role is scored against, as one line."""
    if role == "decide":
        if q.should_retrieve is None:
            return "—"
        return "RETRIEVE" if q.should_retrieve else "NO_RETRIEVE"
    if role in ("grade", "rerank"):
        return "relevant: " + ", ".join(q.relevant) if q.relevant else "none relevant"
    if role == "rewrite":
        parts = []
        if q.protected:
            parts.append("keep: " + ", ".join(q.protected))
        if q.relevant:
            parts.append("relevant: " + ", ".join(q.relevant))
        return " · ".join(parts) or "—"
    if role == "generate":
        parts = []
        if q.must_include:
            parts.append("include: " + ", ".join(q.must_include))
        if q.must_not_include:
            parts.append("exclude: " + ", ".join(q.must_not_include))
        if q.relevant and q.should_retrieve is not False:
            parts.append("cite: " + ", ".join(q.relevant))
        return " · ".join(parts) or "—"
    return "expected: " + " | ".join(q.expected) if q.expected else "—"


def is_labelled(role: str, q: Question) -> bool:
    """True when ``q`` carries a label ``role`` can be scored against (the
    default subset of a role is drawn from these)."""
    retrieves = q.should_retrieve is not False  # retrieval stages only run then
    if role == "decide":
        return q.should_retrieve is not None
    if role == "grade":
        return retrieves
    if role == "rewrite":
        return retrieves and bool(q.protected or q.relevant)
    if role == "rerank":
        return retrieves and bool(q.relevant)
    if role == "assess":
        return retrieves and bool(q.expected)
    if role == "generate":
        return bool(q.must_include or q.must_not_include or (retrieves and q.relevant))
    return bool(q.expected)


def _role_calls(trace: Trace, role: str) -> list[ModelCall]:
    return [c for c in trace.model_calls if c.role == role]


def _sources(trace: Trace) -> dict[str, str]:
    return {h.chunk_id: h.source for h in (trace.retrieval.hits if trace.retrieval else [])}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _not_run(trace: Trace, what: str) -> str:
    dec = trace.decision
    if dec is not None and not dec.retrieve:
        return "no retrieval"
    return what


def _score_decide(q: Question, trace: Trace) -> dict[str, Any]:
    dec = trace.decision
    if dec is None:
        return {"verdict": "no decision"}
    return {
        "verdict": "RETRIEVE" if dec.retrieve else "NO_RETRIEVE",
        "agreement": None if q.should_retrieve is None else float(dec.retrieve == q.should_retrieve),
        "decision_source": dec.source,
        "reason": dec.reason,
    }


def _score_rewrite(q: Question, trace: Trace) -> dict[str, Any]:
    rw = trace.rewrite
    if rw is None:
        return {"verdict": _not_run(trace, "not rewritten")}
    retrieved = [h.source for h in (trace.retrieval.hits if trace.retrieval else [])]
    prot = protected_kept(rw.queries, q.protected)
    recall = recall_at_k(retrieved, q.relevant, len(retrieved)) if trace.retrieval else None
    parts = [float(prot)] if prot is not None else []
    if recall is not None:
        parts.append(recall)
    n = len(rw.queries) - 1
    verdict = f"{n} rewrite{'s' if n != 1 else ''}" if rw.attempted else "not attempted"
    if rw.rejected:
        verdict += f" ({len(rw.rejected)} rejected)"
    if prot is False:
        verdict += " · protected span dropped"
    return {
        "verdict": verdict,
        "agreement": mean_of(parts),
        "queries": list(rw.queries),
        "protected_ok": prot,
        "recall": recall,
        "reason": rw.reason,
    }


def _score_grade(q: Question, trace: Trace) -> dict[str, Any]:
    grades = trace.grades
    if grades is None:
        dec = trace.decision
        return {"verdict": "no retrieval", "reason": dec.reason if dec else ""}
    src = _sources(trace)
    graded = [(g.source or src.get(g.chunk_id, ""), g.relevant) for g in grades.items]
    precision, recall = grading_precision_recall(graded, q.relevant)
    matches = [rel == source_matches(s, q.relevant) for s, rel in graded]
    kept = list(dict.fromkeys(s for s, rel in graded if rel))
    verdict = f"{sum(1 for _, rel in graded if rel)}/{len(graded)} relevant"
    if kept:
        verdict += ": " + _names(kept)
    return {
        "verdict": verdict,
        "agreement": sum(matches) / len(matches) if matches else None,
        "judged": [
            Judged(key=g.chunk_id, verdict="relevant" if g.relevant else "not relevant", what=s)
            for g, (s, _) in zip(grades.items, graded, strict=True)
        ],
        "relevant": kept,
        "graded": len(graded),
        "precision": precision,
        "recall": recall,
    }


def _score_rerank(q: Question, trace: Trace) -> dict[str, Any]:
    rr = trace.rerank
    if rr is None:
        return {"verdict": _not_run(trace, "not reranked")}
    src = _sources(trace)
    order = [src.get(c, c) for c in rr.after]
    rr_value = reciprocal_rank(order, q.relevant)
    rank = next((i for i, s in enumerate(order, start=1) if source_matches(s, q.relevant)), None)
    if rank is not None:
        verdict = f"first relevant at #{rank}: {_names([order[rank - 1]])}"
    else:
        verdict = f"no relevant source in the top {len(order)}"
    if rr.fallback:
        verdict += " · previous order kept"
    return {
        "verdict": verdict,
        "agreement": rr_value,
        "order": order,
        "rank": rank,
        "reason": rr.fallback or "",
    }


def _score_assess(q: Question, trace: Trace) -> dict[str, Any]:
    a = trace.assessment
    if a is None:
        return {"verdict": _not_run(trace, "not assessed")}
    agree = None if not q.expected else float(bool(ACTION_OUTCOMES[a.action] & set(q.expected)))
    verdict = a.action + (": " + " | ".join(a.options) if a.options else "")
    return {"verdict": verdict, "agreement": agree, "reason": a.reason}


def _score_generate(q: Question, trace: Trace) -> dict[str, Any]:
    gen = trace.generation
    if gen is None:
        return {"verdict": "no generation"}
    answer = _norm(gen.answer)
    includes = [s for s in q.must_include if _norm(s) in answer]
    excluded = [s for s in q.must_not_include if _norm(s) in answer]
    src = _sources(trace)
    shown = [src.get(c, "") for c in gen.evidence]
    cited = [src.get(c.chunk_id, "") for c in gen.citations if c.valid]
    # Only relevant sources the generator was shown can be cited: a miss in
    # retrieval is not the generation template's fault.
    available = [lab for lab in q.relevant if any(source_matches(s, [lab]) for s in shown)]
    cited_rel = [lab for lab in available if any(source_matches(s, [lab]) for s in cited)]
    cite = len(cited_rel) / len(available) if available else None
    parts: list[float] = []
    if q.must_include:
        parts.append(len(includes) / len(q.must_include))
    if q.must_not_include:
        parts.append(1.0 - len(excluded) / len(q.must_not_include))
    if cite is not None:
        parts.append(cite)
    return {
        "verdict": f"{gen.mode}: {gen.answer}",
        "agreement": mean_of(parts),
        "includes": includes,
        "excluded_hits": excluded,
        "cited_relevant": cited_rel,
        "citation_recall": cite,
    }


def _score_verify(q: Question, trace: Trace) -> dict[str, Any]:
    # The verifier's own verdict is the first Support; the outcome shows its effect.
    supports = trace.supports
    rec = supports[0].recommendation if supports else None
    outcome = trace.outcome
    fin = trace.finish
    return {
        "verdict": f"{rec or 'not verified'} → {outcome or 'no outcome'}",
        "agreement": None if not q.expected or outcome is None else float(outcome in q.expected),
        "judged": [Judged(key=c.text, verdict=c.verdict, what=c.text) for c in supports[0].claims]
        if supports
        else [],
        "recommendation": rec,
        "outcome": outcome,
        "reason": fin.reason if fin else "",
    }


def _score_usefulness(q: Question, trace: Trace) -> dict[str, Any]:
    # The judge's first verdict (on the first answer): later ones judge regenerations.
    u = next((r for r in trace.records if isinstance(r, Usefulness)), None)
    if u is None:
        return {"verdict": _not_run(trace, "not judged")}
    gen = trace.generations[0] if trace.generations else None
    answer = _norm(gen.answer) if gen else ""
    # Until human labels exist for it, the label is must_include: an answer
    # holding every required string answers the question, one missing any does not.
    holds = all(_norm(s) in answer for s in q.must_include) if q.must_include else None
    return {
        "verdict": f"{u.verdict} ({u.score}/100)" + (f" · missing: {u.missing}" if u.missing else ""),
        "agreement": None if holds is None else float((u.verdict != "no") == holds),
        "judged": [Judged(key="", verdict=u.verdict, what=gen.answer if gen else "")],
        "reason": u.reason,
    }


_SCORERS = {
    "decide": _score_decide,
    "rewrite": _score_rewrite,
    "grade": _score_grade,
    "rerank": _score_rerank,
    "assess": _score_assess,
    "generate": _score_generate,
    "verify": _score_verify,
    "usefulness": _score_usefulness,
}


def _no_call(role: str, trace: Trace, scored: dict[str, Any]) -> str:
    """Why the role made no call on this question, in the words of its stage."""
    dec = trace.decision
    if role == "decide" and dec is not None:
        return {
            "rule": f"decided by rule ({dec.rule or 'quick rule'}), no call",
            "cache": "decision served from the decision cache, no call",
            "setting": "decision set by settings.retrieval, no call",
            "override": "decision overridden in the stepper, no call",
        }.get(dec.source, f"decided by {dec.source}, no call")
    if role != "decide" and dec is not None and not dec.retrieve:
        return "no retrieval: the stage did not run"
    why = str(scored.get("reason") or "")
    return f"no {role} call: {why}" if why else f"no {role} call ({scored.get('verdict', '')})"


def prompt_use_of(
    role: str, version: str, calls: list[ModelCall], trace: Trace, scored: dict[str, Any]
) -> tuple[PromptUse, str]:
    """("used" | "offline" | "not used", why not) for one side: see LabSide.prompt_use."""
    sent = [c for c in calls if c.prompt_hash == version]
    answered = [c for c in sent if c.parse_status != "error"]
    if any(not c.offline for c in answered):
        return "used", ""
    if answered:
        return "offline", "offline model: it reads structured inputs, not the prompt text"
    if sent:
        err = next((c.error for c in sent if c.error), "") or "no answer"
        return "not used", f"every {role} call failed ({err})"
    if calls:
        others = ", ".join(dict.fromkeys(c.prompt_hash or "?" for c in calls))
        return "not used", f"the {role} calls carried another template ({others}), not {version}"
    return "not used", _no_call(role, trace, scored)


def score_side(role: str, version: str, q: Question, trace: Trace, wall_ms: float) -> LabSide:
    """Score the trace of one question run with ``version`` of ``role``'s template."""
    calls = _role_calls(trace, role)
    scored = {"judged": [], **_SCORERS[role](q, trace)}
    use, why = prompt_use_of(role, version, calls, trace, scored)
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
        "prompt_use": use,
        "prompt_note": why,
    }
    return LabSide(**scored, **common)
