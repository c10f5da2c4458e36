"""Evaluation metrics, each defined in one place.

    Question + Trace --score()--> EvalRow (one per variant x question; small, no trace)
        per-row measures: source_matches, recall_at_k, reciprocal_rank,
                          grading_precision_recall, refusal classes,
                          substring checks, secret_leaks, protected_kept
        failed checks     -> failure_reason ("wrong outcome: refused not in [answered]")
    [EvalRow] --summarize()--> {metric: value}   (METRICS, in display order)

An evidence-quality evaluation measures unsupported answers, citation errors,
wrong refusals and correct refusals separately, because answer coverage
alone misleads: a pipeline that answers everything has full coverage and the
most unsupported answers. Those four are counted, never folded into one score.

A row refused because model calls failed (``Outcome.reason_kind ==
"model_error"``: the provider answered HTTP 500, timed out, ...) is counted
apart, in ``model_errors``: it is neither a correct nor a wrong refusal (the
pipeline never judged the evidence), its outcome is never counted correct,
and it fails the "model_error" check with the trace's reason.

Conventions: a measure is ``None`` when its label is missing (no relevant
sources labelled, no expected outcome...), and aggregates skip ``None``; an
aggregate over no labelled rows is ``None`` too (shown as "n/a"), never 0.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb.eval.leaks import trace_leaks

if TYPE_CHECKING:
    from selfrag_nb.eval.questions import Question
    from selfrag_nb.trace import ModelCall, Trace

__all__ = [
    "ANSWER_OUTCOMES",
    "METRICS",
    "EvalRow",
    "answer_relevance",
    "citation_errors",
    "correct_refusals",
    "cost",
    "decision_accuracy",
    "error_row",
    "failures",
    "grading_precision",
    "grading_precision_recall",
    "grading_recall",
    "latency_p50",
    "latency_p95",
    "model_calls",
    "model_errors",
    "mrr",
    "must_include_hit_rate",
    "must_not_include_violations",
    "outcome_accuracy",
    "percentile",
    "protected_kept",
    "protected_preservation",
    "recall_at_k",
    "reciprocal_rank",
    "retrieval_recall",
    "score",
    "secret_leaks",
    "source_matches",
    "summarize",
    "tokens_in",
    "tokens_out",
    "unsupported_answers",
    "wrong_accepted",
    "wrong_refusals",
]

#: Outcomes that deliver an answer to the user.
ANSWER_OUTCOMES: frozenset[str] = frozenset({"answered", "disclaimed", "regenerated", "direct"})
#: Outcomes whose answer went through claim verification.
_VERIFIED_OUTCOMES = frozenset({"answered", "disclaimed", "regenerated"})


class EvalRow(BaseModel):
    """The measured result of one question under one variant. Small on purpose:
    it stays in memory for the whole run while traces go to disk."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: str
    id: str
    category: str
    question: str
    answer: str | None = None
    outcome: str | None = None
    #: Why the pipeline ended as it did, as a type (``Outcome.reason_kind``:
    #: "no_evidence", "not_answered", "unsupported", "no_access", ...; "" for a
    #: plain answer): which check turned a question down.
    reason_kind: str = ""
    expected: list[str] = Field(default_factory=list)
    outcome_ok: bool | None = None
    #: The pipeline's retrieval decision (None when the decide stage did not run).
    retrieve: bool | None = None
    decision_source: str | None = None
    should_retrieve: bool | None = None
    decision_ok: bool | None = None
    #: Sources of the retrieved hits, in rank order.
    retrieved: list[str] = Field(default_factory=list)
    relevant: list[str] = Field(default_factory=list)
    recall_at_k: float | None = None
    reciprocal_rank: float | None = None
    #: Sources of the chunks graded relevant, in retrieval order.
    graded_relevant: list[str] = Field(default_factory=list)
    grading_precision: float | None = None
    grading_recall: float | None = None
    claims: int = 0
    unsupported_claims: int = 0
    citation_errors: int = 0
    correct_refusal: bool = False
    wrong_refusal: bool = False
    #: Refused because model calls failed (reason_kind "model_error"): not a
    #: refusal on the evidence, so neither correct nor wrong.
    model_error: bool = False
    unsupported_answer: bool = False
    #: The usefulness check of the delivered answer: verdict and 0-100 score
    #: (None when no answer was judged: refusals, direct replies, check off).
    usefulness: str | None = None
    usefulness_score: int | None = None
    #: A verified answer was delivered although it does not answer: judged
    #: "no", or a labelled must_include string is missing from it.
    wrong_accepted: bool = False
    must_include_hits: list[str] = Field(default_factory=list)
    must_include_total: int = 0
    must_not_include_violations: list[str] = Field(default_factory=list)
    #: How many labelled secrets appear in the trace (never the secrets themselves).
    secret_leaks: int = 0
    protected_ok: bool | None = None
    latency_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    #: US dollars; None when any call's price is unknown.
    cost: float | None = None
    model_calls: int = 0
    fallbacks: int = 0
    unparsed_calls: int = 0
    #: Candidate evidence: chunk ids of the retrieved hits, in rank order.
    evidence: list[str] = Field(default_factory=list)
    #: The evidence the answer could use: the reranker's order when it ran,
    #: else the chunk ids graded relevant (what variants are compared on).
    kept: list[str] = Field(default_factory=list)
    #: Per model role (decide, grade, generate ...): tokens, dollars (None when
    #: any call's price is unknown) and milliseconds summed over its calls.
    role_tokens_in: dict[str, int] = Field(default_factory=dict)
    role_tokens_out: dict[str, int] = Field(default_factory=dict)
    role_cost: dict[str, float | None] = Field(default_factory=dict)
    role_latency_ms: dict[str, float] = Field(default_factory=dict)
    config_version: str = ""
    #: ``evaluate(attribution=True)`` (eval/attribution_eval.py): supported claims, how many
    #: rest on a single chunk / on a superseded document, the ablation calls (None: not measured).
    attributed_claims: int | None = None
    single_chunk_claims: int = 0
    superseded_claims: int = 0
    attribution_calls: int = 0
    #: Exception text when the question raised instead of finishing.
    error: str | None = None
    failed_checks: list[str] = Field(default_factory=list)
    failure_reason: str | None = None

    @property
    def failed(self) -> bool:
        return bool(self.failed_checks)


# ---------------------------------------------------------------- per row


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def source_matches(source: str, labelled: Iterable[str]) -> bool:
    """A hit's ``source`` matches a labelled file name when equal to it, or
    when it starts with it + ``"#"`` (one record of a JSON Lines file, e.g.
    ``faq.jsonl#12``). Leading ``./`` and path separators are ignored on both
    sides so ``docs/refund.md`` matches ``refund.md`` labelled by base name."""
    s = source.replace("\\", "/").removeprefix("./")
    base_s = s.rsplit("#", 1)[0]
    for lab in labelled:
        lab_n = lab.replace("\\", "/").removeprefix("./")
        if s == lab_n or s.startswith(lab_n + "#"):
            return True
        # Labels are file names; sources may carry the folder they were ingested from.
        if "/" not in lab_n and base_s.rsplit("/", 1)[-1] == lab_n:
            return True
    return False


def recall_at_k(retrieved: Sequence[str], relevant: Sequence[str], k: int) -> float | None:
    """Fraction of labelled relevant sources with at least one hit in the top
    ``k`` retrieved sources. None when nothing is labelled relevant."""
    if not relevant:
        return None
    top = retrieved[:k]
    found = sum(1 for lab in relevant if any(source_matches(s, [lab]) for s in top))
    return found / len(relevant)


def reciprocal_rank(retrieved: Sequence[str], relevant: Sequence[str]) -> float | None:
    """1 / rank of the first retrieved source matching any labelled source; 0
    when none does; None when nothing is labelled relevant."""
    if not relevant:
        return None
    for i, s in enumerate(retrieved, start=1):
        if source_matches(s, relevant):
            return 1.0 / i
    return 0.0


def grading_precision_recall(
    graded: Sequence[tuple[str, bool]], relevant: Sequence[str]
) -> tuple[float | None, float | None]:
    """Grader quality against labels. ``graded`` is (chunk source, graded
    relevant?) per graded chunk; a chunk "should be relevant" when its source
    is labelled relevant.

    precision = graded relevant and labelled / graded relevant  (None if none graded relevant)
    recall    = graded relevant and labelled / graded and labelled (None if no graded chunk is labelled)
    """
    labelled = [(src, rel) for src, rel in graded if source_matches(src, relevant)]
    kept = [(src, rel) for src, rel in graded if rel]
    tp = sum(1 for _, rel in labelled if rel)
    precision = tp / len(kept) if kept else None
    recall = tp / len(labelled) if labelled else None
    return precision, recall


def protected_kept(queries: Sequence[str], protected: Sequence[str]) -> bool | None:
    """True when every query (the original and each accepted rewrite) contains
    every protected span (case and width folded). None when no span is labelled."""
    if not protected:
        return None
    return all(_norm(p) in _norm(q) for q in queries for p in protected)


def _fmt_list(xs: Sequence[str]) -> str:
    return "[" + ", ".join(xs) + "]"


def score(
    question: Question,
    trace: Trace,
    *,
    variant: str,
    k: int = 10,
    latency_ms: float | None = None,
    config_version: str = "",
) -> EvalRow:
    """Measure one finished trace against its question's labels."""
    outcome = trace.outcome
    answer = trace.answer
    expected = list(question.expected)
    fin = trace.finish
    model_error = fin is not None and fin.reason_kind == "model_error"
    # A failed model call decided nothing: never a correct outcome by luck.
    outcome_ok = (outcome in expected and not model_error) if expected else None

    dec = trace.decision
    retrieve = dec.retrieve if dec is not None else None
    decision_ok = (
        None if question.should_retrieve is None or retrieve is None else retrieve == question.should_retrieve
    )
    if question.should_retrieve is not None and dec is None and outcome is not None:
        decision_ok = question.should_retrieve is False  # finished without deciding = did not retrieve

    ret = trace.retrieval
    hits = ret.hits if ret is not None else []
    retrieved = [h.source for h in hits]
    relevant = list(question.relevant)
    rec = recall_at_k(retrieved, relevant, k)
    rr = reciprocal_rank(retrieved, relevant)

    src_of = {h.chunk_id: h.source for h in hits}
    gr = trace.grades
    graded = [(g.source or src_of.get(g.chunk_id, ""), g.relevant) for g in (gr.items if gr else [])]
    g_prec, g_rec = grading_precision_recall(graded, relevant) if gr is not None else (None, None)

    sup = trace.support
    dropped = set(fin.dropped_claims) if fin is not None else set()
    claims = sup.claims if sup is not None else []
    delivered_verified = outcome in _VERIFIED_OUTCOMES
    kept_unsupported = (
        sum(1 for c in claims if c.verdict == "unsupported" and c.text not in dropped)
        if delivered_verified
        else 0
    )
    if not delivered_verified:
        cite_errors = 0
    elif sup is not None:
        cite_errors = sum(1 for c in claims if c.citation_error)
    else:
        gen = trace.generation
        cite_errors = sum(1 for c in (gen.citations if gen else []) if not c.valid)

    refused = outcome == "refused" and not model_error
    correct_refusal = refused and "refused" in expected
    wrong_refusal = refused and bool(expected) and "refused" not in expected
    answered = outcome in ANSWER_OUTCOMES
    answered_uncovered = answered and bool(expected) and not (set(expected) & ANSWER_OUTCOMES)
    unsupported_answer = answered and (answered_uncovered or kept_unsupported > 0)

    ans_n = _norm(answer or "")
    inc_hits = [s for s in question.must_include if _norm(s) in ans_n]
    useful = trace.usefulness if outcome in _VERIFIED_OUTCOMES else None
    wrong_accepted = outcome in _VERIFIED_OUTCOMES and (
        (useful is not None and useful.verdict == "no") or len(inc_hits) < len(question.must_include)
    )
    exc_hits = [s for s in question.must_not_include if _norm(s) in ans_n]
    leaks = trace_leaks(trace, question.secret)
    rw = trace.rewrite
    prot = protected_kept(rw.queries if rw is not None else [question.question], question.protected)

    totals = trace.totals
    calls = trace.model_calls

    checks: list[tuple[str, str]] = []
    if outcome is None:
        checks.append(("outcome", "no outcome: the pipeline stopped before finishing"))
    elif model_error and fin is not None:
        checks.append(("model_error", f"model error: {fin.reason}"))
    elif outcome_ok is False:
        checks.append(("outcome", f"wrong outcome: {outcome} not in {_fmt_list(expected)}"))
    if decision_ok is False:
        want = "retrieve" if question.should_retrieve else "no retrieval"
        checks.append(("decision", f"wrong decision: labelled {want}, decided {_decided(retrieve)}"))
    if rec == 0.0 and ret is not None:
        checks.append(("retrieval", f"no labelled source in top {k}: wanted {_fmt_list(relevant)}"))
    if unsupported_answer:
        why = (
            f"answered ({outcome}) though labelled {_fmt_list(expected)}"
            if answered_uncovered
            else f"{kept_unsupported} unsupported claim(s) kept"
        )
        checks.append(("unsupported", f"unsupported answer: {why}"))
    if cite_errors:
        checks.append(("citation", f"{cite_errors} citation error(s)"))
    for s in question.must_include:
        if s not in inc_hits:
            checks.append(("must_include", f"missing must_include {s!r}"))
    for s in exc_hits:
        checks.append(("must_not_include", f"contains must_not_include {s!r}"))
    if leaks:
        # The reason never repeats the secret: failure samples travel further than traces.
        checks.append(("secret", f"unauthorised text leaked ({len(leaks)} secret(s) in the trace)"))
    if prot is False:
        missing = [
            p for p in question.protected if not all(_norm(p) in _norm(q) for q in (rw.queries if rw else []))
        ]
        checks.append(("protected", f"rewrite dropped protected span(s) {_fmt_list(missing)}"))

    failed = list(dict.fromkeys(c for c, _ in checks))
    return EvalRow(
        variant=variant,
        id=question.id,
        category=question.category,
        question=question.question,
        answer=answer,
        outcome=outcome,
        reason_kind=fin.reason_kind if fin is not None else "",
        expected=expected,
        outcome_ok=outcome_ok,
        retrieve=retrieve,
        decision_source=dec.source if dec is not None else None,
        should_retrieve=question.should_retrieve,
        decision_ok=decision_ok,
        retrieved=retrieved,
        relevant=relevant,
        recall_at_k=rec,
        reciprocal_rank=rr,
        graded_relevant=[src for src, rel in graded if rel],
        grading_precision=g_prec,
        grading_recall=g_rec,
        claims=len(claims),
        unsupported_claims=sum(1 for c in claims if c.verdict == "unsupported"),
        citation_errors=cite_errors,
        correct_refusal=correct_refusal,
        wrong_refusal=wrong_refusal,
        model_error=model_error,
        unsupported_answer=unsupported_answer,
        usefulness=useful.verdict if useful else None,
        usefulness_score=useful.score if useful else None,
        wrong_accepted=wrong_accepted,
        must_include_hits=inc_hits,
        must_include_total=len(question.must_include),
        must_not_include_violations=exc_hits,
        secret_leaks=len(leaks),
        protected_ok=prot,
        latency_ms=latency_ms if latency_ms is not None else trace.wall_ms,
        tokens_in=totals.tokens_in,
        tokens_out=totals.tokens_out,
        cost=totals.cost,
        model_calls=totals.model_calls,
        fallbacks=sum(len(r.fallbacks) for r in trace.records),
        unparsed_calls=sum(1 for c in calls if c.parse_status in ("unparsed", "error")),
        evidence=[h.chunk_id for h in hits],
        kept=list(trace.rerank.after) if trace.rerank is not None else list(gr.kept if gr else []),
        **role_usage(calls),
        config_version=config_version,
        failed_checks=failed,
        failure_reason="; ".join(reason for _, reason in checks) or None,
    )


def role_usage(calls: Iterable[ModelCall]) -> dict[str, Any]:
    """The per-role fields of EvalRow from a trace's model calls."""
    t_in: dict[str, int] = {}
    t_out: dict[str, int] = {}
    cost: dict[str, float | None] = {}
    ms: dict[str, float] = {}
    for c in calls:
        t_in[c.role] = t_in.get(c.role, 0) + (c.tokens_in or 0)
        t_out[c.role] = t_out.get(c.role, 0) + (c.tokens_out or 0)
        before = cost.get(c.role, 0.0)
        # one unknown price makes the role's cost unknown, as for the row's total
        cost[c.role] = None if before is None or c.cost is None else before + c.cost
        ms[c.role] = ms.get(c.role, 0.0) + c.latency_ms
    return {"role_tokens_in": t_in, "role_tokens_out": t_out, "role_cost": cost, "role_latency_ms": ms}


def _decided(retrieve: bool | None) -> str:
    return "retrieve" if retrieve else "no retrieval"


def error_row(
    question: Question, *, variant: str, error: str, latency_ms: float, config_version: str = ""
) -> EvalRow:
    """The row of a question that raised (or timed out) instead of finishing:
    it fails the "error" check and carries the exception text."""
    expected = list(question.expected)
    return EvalRow(
        variant=variant,
        id=question.id,
        category=question.category,
        question=question.question,
        expected=expected,
        outcome_ok=False if expected else None,
        should_retrieve=question.should_retrieve,
        relevant=list(question.relevant),
        must_include_total=len(question.must_include),
        latency_ms=latency_ms,
        cost=None,
        config_version=config_version,
        error=error,
        failed_checks=["error"],
        failure_reason=f"error: {error}",
    )


# ---------------------------------------------------------------- aggregates


def _mean(values: Iterable[float | bool | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between
    closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def decision_accuracy(rows: Sequence[EvalRow]) -> float | None:
    """Share of rows with a labelled ``should_retrieve`` whose retrieval
    decision matches the label."""
    return _mean(r.decision_ok for r in rows)


def retrieval_recall(rows: Sequence[EvalRow]) -> float | None:
    """Mean recall@k over rows with labelled relevant sources (a row that did
    not retrieve scores 0 when sources are labelled)."""
    return _mean(r.recall_at_k if r.recall_at_k is not None else (0.0 if r.relevant else None) for r in rows)


def mrr(rows: Sequence[EvalRow]) -> float | None:
    """Mean reciprocal rank of the first labelled source, over rows with labels."""
    return _mean(
        r.reciprocal_rank if r.reciprocal_rank is not None else (0.0 if r.relevant else None) for r in rows
    )


def grading_precision(rows: Sequence[EvalRow]) -> float | None:
    """Mean per-row grading precision (rows where some chunk was graded relevant)."""
    return _mean(r.grading_precision for r in rows)


def grading_recall(rows: Sequence[EvalRow]) -> float | None:
    """Mean per-row grading recall (rows where some graded chunk is labelled relevant)."""
    return _mean(r.grading_recall for r in rows)


def outcome_accuracy(rows: Sequence[EvalRow]) -> float | None:
    """Share of rows with labelled ``expected`` outcomes whose outcome is one
    of them (a row that raised counts as wrong)."""
    return _mean(r.outcome_ok for r in rows)


def correct_refusals(rows: Sequence[EvalRow]) -> int:
    """Rows refused where refusal was an expected outcome."""
    return sum(r.correct_refusal for r in rows)


def wrong_refusals(rows: Sequence[EvalRow]) -> int:
    """Rows refused where the labels expected something else (usually an answer)."""
    return sum(r.wrong_refusal for r in rows)


def model_errors(rows: Sequence[EvalRow]) -> int:
    """Rows refused because model calls failed (provider errors, timeouts):
    counted apart from correct and wrong refusals."""
    return sum(r.model_error for r in rows)


def unsupported_answers(rows: Sequence[EvalRow]) -> int:
    """Rows that delivered an answer without support: either the labels
    expected no answer (refuse / clarify: the material does not cover it) or
    the delivered answer keeps a claim the verifier found unsupported."""
    return sum(r.unsupported_answer for r in rows)


def citation_errors(rows: Sequence[EvalRow]) -> int:
    """Rows whose delivered answer has at least one citation error (a cited
    chunk that does not support its claim, or an unknown marker). A valid
    citation number alone proves only that the chunk was a candidate."""
    return sum(1 for r in rows if r.citation_errors > 0)


def answer_relevance(rows: Sequence[EvalRow]) -> float | None:
    """Mean usefulness score / 100 over the rows whose delivered answer was
    judged (answered, disclaimed, regenerated with the check on); None when none was."""
    scores = [r.usefulness_score for r in rows if r.usefulness_score is not None]
    return sum(scores) / (100 * len(scores)) if scores else None


def wrong_accepted(rows: Sequence[EvalRow]) -> int:
    """Rows that delivered a verified answer which does not answer the question:
    judged "no" by the usefulness check, or missing a labelled must_include string."""
    return sum(r.wrong_accepted for r in rows)


def must_include_hit_rate(rows: Sequence[EvalRow]) -> float | None:
    """Found must_include substrings / labelled must_include substrings, over all rows."""
    total = sum(r.must_include_total for r in rows)
    return sum(len(r.must_include_hits) for r in rows) / total if total else None


def must_not_include_violations(rows: Sequence[EvalRow]) -> int:
    """Rows whose answer contains a must_not_include substring."""
    return sum(1 for r in rows if r.must_not_include_violations)


def secret_leaks(rows: Sequence[EvalRow]) -> int:
    """Rows whose trace contains a labelled secret (access-control failures)."""
    return sum(1 for r in rows if r.secret_leaks)


def protected_preservation(rows: Sequence[EvalRow]) -> float | None:
    """Share of rows with protected spans where every rewrite kept every span."""
    return _mean(r.protected_ok for r in rows)


def latency_p50(rows: Sequence[EvalRow]) -> float | None:
    """Median per-question wall time in milliseconds (rows that raised included)."""
    return percentile([r.latency_ms for r in rows], 50)


def latency_p95(rows: Sequence[EvalRow]) -> float | None:
    """95th percentile per-question wall time in milliseconds."""
    return percentile([r.latency_ms for r in rows], 95)


def tokens_in(rows: Sequence[EvalRow]) -> int:
    """Prompt tokens over all model calls."""
    return sum(r.tokens_in for r in rows)


def tokens_out(rows: Sequence[EvalRow]) -> int:
    """Completion tokens over all model calls."""
    return sum(r.tokens_out for r in rows)


def cost(rows: Sequence[EvalRow]) -> float | None:
    """Total US dollars; None (unknown) when any row's cost is unknown."""
    costs = [r.cost for r in rows]
    if not costs or any(c is None for c in costs):
        return None
    return float(sum(c or 0.0 for c in costs))


def model_calls(rows: Sequence[EvalRow]) -> int:
    """Model calls over all rows (offline calls included)."""
    return sum(r.model_calls for r in rows)


def failures(rows: Sequence[EvalRow]) -> int:
    """Rows failing at least one check (errors included)."""
    return sum(1 for r in rows if r.failed_checks)


def errors(rows: Sequence[EvalRow]) -> int:
    """Rows whose question raised or timed out."""
    return sum(1 for r in rows if r.error is not None)


#: Every aggregate, in the order reports show them.
METRICS: dict[str, Callable[[Sequence[EvalRow]], Any]] = {
    "decision_accuracy": decision_accuracy,
    "recall_at_k": retrieval_recall,
    "mrr": mrr,
    "grading_precision": grading_precision,
    "grading_recall": grading_recall,
    "outcome_accuracy": outcome_accuracy,
    "correct_refusals": correct_refusals,
    "wrong_refusals": wrong_refusals,
    "model_errors": model_errors,
    "unsupported_answers": unsupported_answers,
    "answer_relevance": answer_relevance,
    "wrong_accepted": wrong_accepted,
    "citation_errors": citation_errors,
    "must_include_hit_rate": must_include_hit_rate,
    "must_not_include_violations": must_not_include_violations,
    "secret_leaks": secret_leaks,
    "protected_preservation": protected_preservation,
    "latency_p50_ms": latency_p50,
    "latency_p95_ms": latency_p95,
    "tokens_in": tokens_in,
    "tokens_out": tokens_out,
    "cost": cost,
    "model_calls": model_calls,
    "failures": failures,
    "errors": errors,
}


def summarize(rows: Sequence[EvalRow]) -> dict[str, Any]:
    """``n`` plus every metric of ``METRICS`` over ``rows``."""
    return {"n": len(rows), **{name: fn(rows) for name, fn in METRICS.items()}}
