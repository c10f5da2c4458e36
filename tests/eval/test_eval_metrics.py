"""Metrics: per-row measures on hand-built traces, aggregates on hand-built rows."""

from __future__ import annotations

from typing import Any

import pytest

from selfrag_nb.eval import metrics as m
from selfrag_nb.eval.metrics import EvalRow, score
from selfrag_nb.eval.questions import Question
from selfrag_nb.store.types import Hit
from selfrag_nb.trace import (
    Citation,
    Claim,
    Decision,
    Fallback,
    Generation,
    Grade,
    Grades,
    ModelCall,
    Outcome,
    Retrieval,
    Rewrite,
    Support,
    Trace,
)


def _hit(source: str, n: int) -> Hit:
    return Hit(source=source, doc_id=source, chunk_id=f"{source}::{n}", text=f"text {n} of {source}")


def _trace(
    *,
    outcome: str = "answered",
    answer: str = "Refunds are accepted within 30 days [1].",
    retrieve: bool = True,
    sources: tuple[str, ...] = ("policies/refund-2024.md", "policies/refund-2025.md", "faq.jsonl#3"),
    relevant_flags: tuple[bool, ...] = (False, True, True),
    claims: tuple[Claim, ...] = (),
    queries: tuple[str, ...] = ("What is the refund window for order ORD-1?",),
    dropped: tuple[str, ...] = (),
    extra_text: str = "",
    cost: float | None = 0.001,
) -> Trace:
    t = Trace(question="What is the refund window for order ORD-1?")
    call = ModelCall(role="decide", model="loopback", tokens_in=10, tokens_out=2, cost=cost, latency_ms=5)
    t.append(Decision(retrieve=retrieve, reason="policy question", source="model", calls=[call]))
    if retrieve:
        hits = [_hit(s, i) for i, s in enumerate(sources)]
        t.append(Rewrite(queries=list(queries)))
        t.append(Retrieval(hits=hits))
        t.append(
            Grades(
                items=[
                    Grade(
                        chunk_id=h.chunk_id,
                        source=h.source,
                        score=90 if f else 10,
                        relevant=f,
                        band="high" if f else "irrelevant",
                    )
                    for h, f in zip(hits, relevant_flags, strict=True)
                ],
                fallbacks=[Fallback(what="grade", reason="one unparsed")],
            )
        )
        t.append(Generation(answer=answer, citations=[Citation(marker=1, chunk_id=hits[1].chunk_id)]))
        t.append(Support(claims=list(claims)))
    t.append(Outcome(outcome=outcome, answer=answer + extra_text, dropped_claims=list(dropped)))
    return t


Q = Question(
    id="refund-1",
    category="factual",
    question="What is the refund window for order ORD-1?",
    should_retrieve=True,
    relevant=["policies/refund-2025.md"],
    expected=["answered", "disclaimed"],
    must_include=["30 days"],
    must_not_include=["14 days"],
    secret=["OVR-7731"],
    protected=["ORD-1"],
)


def test_source_matching_rules() -> None:
    assert m.source_matches("faq.jsonl#12", ["faq.jsonl"])
    assert m.source_matches("policies/sla.md", ["policies/sla.md"])
    assert m.source_matches("docs/policies/sla.md", ["sla.md"])  # label by base name
    assert not m.source_matches("faq.jsonl.bak", ["faq.jsonl"])
    assert not m.source_matches("policies/sla-old.md", ["policies/sla.md"])
    assert not m.source_matches("other/sla.md", ["policies/sla.md"])


def test_recall_mrr_and_grading_definitions() -> None:
    retrieved = ["a.md", "b.md", "c.jsonl#1", "b.md"]
    assert m.recall_at_k(retrieved, ["b.md", "c.jsonl"], k=2) == 0.5
    assert m.recall_at_k(retrieved, ["b.md", "c.jsonl"], k=3) == 1.0
    assert m.recall_at_k(retrieved, [], k=3) is None
    assert m.reciprocal_rank(retrieved, ["c.jsonl"]) == pytest.approx(1 / 3)
    assert m.reciprocal_rank(retrieved, ["z.md"]) == 0.0
    assert m.reciprocal_rank(retrieved, []) is None
    graded = [("a.md", True), ("b.md", True), ("b.md", False), ("z.md", False)]
    p, r = m.grading_precision_recall(graded, ["b.md"])
    assert p == 0.5  # of two graded relevant, one is labelled
    assert r == 0.5  # of two labelled chunks, one graded relevant
    assert m.grading_precision_recall([("a.md", False)], ["b.md"]) == (None, None)
    assert m.protected_kept(["order ORD-1 refund", "ord-1 window"], ["ORD-1"]) is True
    assert m.protected_kept(["order refund"], ["ORD-1"]) is False
    assert m.protected_kept(["x"], []) is None
    assert m.percentile([1, 2, 3, 4], 50) == 2.5
    assert m.percentile([10.0], 95) == 10.0
    assert m.percentile([], 50) is None


def test_score_of_a_good_answer() -> None:
    claim = Claim(text="Refunds are accepted within 30 days", verdict="supported", cited=["x"])
    row = score(Q, _trace(claims=(claim,)), variant="v", k=10, latency_ms=12.5, config_version="abc")
    assert row.outcome_ok is True
    assert row.decision_ok is True
    assert row.retrieved[1] == "policies/refund-2025.md"
    assert row.recall_at_k == 1.0
    assert row.reciprocal_rank == 0.5
    assert row.graded_relevant == ["policies/refund-2025.md", "faq.jsonl#3"]
    assert row.grading_precision == 0.5
    assert row.grading_recall == 1.0
    assert row.must_include_hits == ["30 days"]
    assert not row.must_not_include_violations
    assert row.secret_leaks == 0
    assert row.protected_ok is True
    assert row.tokens_in == 10
    assert row.cost == pytest.approx(0.001)
    assert row.model_calls == 1
    assert row.fallbacks == 1
    assert row.latency_ms == 12.5
    assert row.config_version == "abc"
    assert row.evidence[0] == "policies/refund-2024.md::0"
    assert row.failed_checks == []
    assert row.failure_reason is None
    assert not (row.correct_refusal)
    assert not (row.wrong_refusal)
    assert not (row.unsupported_answer)


def test_score_names_each_failure() -> None:
    bad_claims = (
        Claim(text="Refunds take 14 days", verdict="unsupported", citation_error="[1] does not say 14 days"),
        Claim(text="Dropped claim", verdict="unsupported"),
    )
    t = _trace(
        answer="Refunds take 14 days [1].",
        claims=bad_claims,
        dropped=("Dropped claim",),
        queries=("What is the refund window for order ORD-1?", "refund window"),
        extra_text=" Override code OVR-7731-ZETA.",
        relevant_flags=(True, False, False),
        cost=None,
    )
    row = score(Q, t, variant="v")
    assert row.unsupported_answer
    assert row.unsupported_claims == 2
    assert row.citation_errors == 1
    assert row.secret_leaks == 1
    assert row.protected_ok is False
    assert row.cost is None
    assert row.failed_checks == [
        "unsupported",
        "citation",
        "must_include",
        "must_not_include",
        "secret",
        "protected",
    ]
    reason = row.failure_reason or ""
    assert "unsupported answer: 1 unsupported claim(s) kept" in reason
    assert "missing must_include '30 days'" in reason
    assert "contains must_not_include '14 days'" in reason
    assert "unauthorised text leaked" in reason
    assert "OVR-7731" not in reason
    assert "rewrite dropped protected span(s) [ORD-1]" in reason


def test_refusal_classes_and_wrong_outcome() -> None:
    wrong = score(Q, _trace(outcome="refused", answer="I cannot confirm this."), variant="v")
    assert wrong.wrong_refusal
    assert not wrong.correct_refusal
    assert wrong.citation_errors == 0  # a refusal delivers no cited answer
    assert "wrong outcome: refused not in [answered, disclaimed]" in (wrong.failure_reason or "")
    q_refuse = Q.model_copy(update={"expected": ["refused"], "must_include": [], "must_not_include": []})
    ok = score(q_refuse, _trace(outcome="refused", answer="The material does not cover this."), variant="v")
    assert ok.correct_refusal
    assert ok.outcome_ok
    assert not ok.wrong_refusal
    answered = score(q_refuse, _trace(), variant="v")
    assert answered.unsupported_answer
    assert "answered (answered) though labelled [refused]" in (answered.failure_reason or "")


def test_decision_and_retrieval_checks() -> None:
    no_ret = score(Q, _trace(retrieve=False, outcome="direct"), variant="never")
    assert no_ret.decision_ok is False
    assert no_ret.recall_at_k == 0.0
    assert no_ret.reciprocal_rank == 0.0
    assert "wrong decision: labelled retrieve, decided no retrieval" in (no_ret.failure_reason or "")
    miss = score(Q, _trace(sources=("a.md", "b.md", "c.md")), variant="v", k=2)
    assert miss.recall_at_k == 0.0
    assert "no labelled source in top 2" in (miss.failure_reason or "")


def test_secret_in_question_is_not_a_leak() -> None:
    q = Q.model_copy(update={"secret": ["ORD-1"], "protected": []})
    # ORD-1 is in the question (the asker typed it) and in the rewrite query -> a leak only via records.
    t = _trace(queries=("refund window",))
    assert score(q, t, variant="v").secret_leaks == 0


def test_error_row() -> None:
    row = m.error_row(Q, variant="v", error="RuntimeError: boom", latency_ms=3.0)
    assert row.failed_checks == ["error"]
    assert row.outcome_ok is False
    assert row.cost is None
    assert row.failure_reason == "error: RuntimeError: boom"


def _row(**kw: Any) -> EvalRow:
    base: dict[str, Any] = {"variant": "v", "id": "x", "category": "c", "question": "q", "cost": 0.0}
    return EvalRow(**{**base, **kw})


def test_aggregates_on_hand_built_rows() -> None:
    rows = [
        _row(
            id="1",
            decision_ok=True,
            outcome_ok=True,
            relevant=["a"],
            recall_at_k=1.0,
            reciprocal_rank=1.0,
            latency_ms=10,
            tokens_in=5,
            cost=0.5,
            model_calls=2,
            must_include_total=2,
            must_include_hits=["x"],
        ),
        _row(
            id="2",
            decision_ok=False,
            outcome_ok=False,
            relevant=["a"],
            recall_at_k=0.0,
            reciprocal_rank=0.0,
            wrong_refusal=True,
            latency_ms=20,
            failed_checks=["outcome"],
        ),
        _row(id="3", outcome_ok=True, correct_refusal=True, latency_ms=30, protected_ok=True),
        _row(
            id="4",
            outcome_ok=False,
            unsupported_answer=True,
            citation_errors=2,
            latency_ms=40,
            secret_leaks=1,
        ),
        _row(id="5", relevant=["a"], error="boom", latency_ms=1000, cost=None, failed_checks=["error"]),
    ]
    s = m.summarize(rows)
    assert s["n"] == 5
    assert s["decision_accuracy"] == 0.5
    assert s["outcome_accuracy"] == 0.5
    assert s["recall_at_k"] == pytest.approx(1 / 3)  # the errored row with labels counts as 0
    assert s["mrr"] == pytest.approx(1 / 3)
    assert s["grading_precision"] is None  # no row had a defined value
    assert (s["correct_refusals"], s["wrong_refusals"], s["unsupported_answers"], s["citation_errors"]) == (
        1,
        1,
        1,
        1,
    )
    assert s["must_include_hit_rate"] == 0.5
    assert s["secret_leaks"] == 1
    assert s["protected_preservation"] == 1.0
    assert s["latency_p50_ms"] == 30
    assert s["latency_p95_ms"] == pytest.approx(808.0)
    assert s["cost"] is None  # one unknown cost makes the sum unknown
    assert m.cost(rows[:4]) == 0.5
    assert s["model_calls"] == 2
    assert s["tokens_in"] == 5
    assert s["failures"] == 2
    assert s["errors"] == 1
    assert list(s)[1:] == list(m.METRICS)
    empty = m.summarize([])
    assert empty["outcome_accuracy"] is None
    assert empty["latency_p50_ms"] is None
    assert empty["cost"] is None


def _leak_trace(
    hit_text: str, chunk_id: str = "policies/a.md::0", metadata: dict[str, Any] | None = None
) -> Trace:
    t = Trace(question="What is the bridge PIN?")
    call = ModelCall(role="grade", model="loopback", latency_ms=0.0482131, tokens_in=3, tokens_out=1)
    t.append(Decision(retrieve=True, reason="policy question", source="model", calls=[call]))
    hit = Hit(source="policies/a.md", doc_id="a", chunk_id=chunk_id, text=hit_text, metadata=metadata or {})
    t.append(Retrieval(hits=[hit]))
    return t


def test_a_secret_leaks_where_document_text_stands_not_in_measurements_or_ids() -> None:
    """The rule: a secret is text the user may not see; it must appear nowhere
    in the trace's text. The digits of a latency or of a hash id are not text."""
    # A latency of 0.0482131 ms and a hex chunk id both hold the digits 48213.
    clean = _leak_trace("The lobby opens at nine.", chunk_id="3fa48213c9e1b0d2")
    assert m.trace_leaks(clean, ["48213"]) == []
    # The same digits as document text leak, glued to a word or not.
    for text in ("The bridge PIN is 48213.", "PIN48213", "account 004821300"):
        assert m.trace_leaks(_leak_trace(text), ["48213"]) == ["48213"], text
    # A document's number kept as a number (front-matter metadata) leaks too.
    assert m.trace_leaks(_leak_trace("x", metadata={"pin": 48213}), ["48213"]) == ["48213"]
    # Case and width are folded; a secret that is itself hex-like is still found whole.
    assert m.trace_leaks(_leak_trace("key DEADBEEF1234 in the vault"), ["deadbeef1234"]) == ["deadbeef1234"]
    assert m.trace_leaks(_leak_trace("ｏｖｒ-7731"), ["OVR-7731"]) == ["OVR-7731"]
