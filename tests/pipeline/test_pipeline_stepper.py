"""Stepper: one stage per call, auto-running earlier stages, re-run truncation, what-ifs."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_pipeline import grade_by_words, script_refund

from selfrag_nb.trace import Decision, Grades, Outcome, Retrieval

Q = "How many days do I have to request a refund?"


def test_each_method_returns_its_record(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    assert isinstance(step.decide(), Decision)
    rw = step.rewrite()
    assert rw is not None
    assert rw.queries[0] == Q
    assert isinstance(step.retrieve(), Retrieval)
    assert isinstance(step.grade(), Grades)
    assert step.rerank() is not None
    assert step.assess().action == "answer"
    assert step.generate().mode == "grounded"
    assert step.verify().recommendation == "ACCEPT"
    useful = step.usefulness()
    assert useful is not None
    assert useful.verdict == "yes"
    out = step.finish()
    assert isinstance(out, Outcome)
    assert out.outcome == "answered"
    assert [r.stage for r in step.trace.records] == [
        "decide", "rewrite", "retrieve", "grade", "rerank", "assess", "generate", "verify", "usefulness",
        "finish",
    ]  # fmt: skip
    assert step.next() is None


def test_calling_a_later_stage_runs_the_earlier_ones(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    grades = step.grade()
    assert isinstance(grades, Grades)
    assert step.done == ["decide", "rewrite", "retrieve", "grade"]


def test_rerunning_an_earlier_stage_drops_the_records_after_it(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    step.assess()
    assert step.trace.assessment is not None
    scripted.default("grade", grade_by_words("refund", "warehouse"))
    again = step.grade()
    assert [r.stage for r in step.trace.records][-1] == "grade"
    assert step.trace.assessment is None
    assert step.trace.rerank is None
    assert len(again.kept) == 2
    assert step.done == ["decide", "rewrite", "retrieve", "grade"]


def test_override_decide_reruns_from_there(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("generate", {"answer": "Hello there."})
    step = make_rag().stepper("Hello!")
    assert step.decide().retrieve is False
    assert step.retrieve() is None  # does not apply without retrieval
    step.override("decide", retrieve=True)
    d = step.decide()
    assert d.source == "override"
    assert d.retrieve is True
    assert step.retrieve() is not None
    step.override("decide", retrieve=False, reason="what if we skip the documents")
    trace = step.run()
    assert trace.outcome == "direct"
    assert trace.decision.reason == "what if we skip the documents"
    assert trace.retrieval is None


def test_override_assess_and_bad_overrides(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    step.override("assess", action="clarify", options=["Free", "Pro"])
    assert step.run().outcome == "clarify"
    assert step.trace.answer == "Which do you mean: Free or Pro?"
    with pytest.raises(ValueError, match="cannot be overridden"):
        step.override("grade", score=3)
    with pytest.raises(ValueError, match="unknown"):
        step.override("decide", retrieve=True, colour="red")
    with pytest.raises(ValueError, match="True or False"):
        step.override("decide", retrieve="yes")


def test_drop_chunk_regrades_without_it(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    grades = step.grade()
    refund_id = grades.kept[0]
    step.finish()
    step.drop_chunk(refund_id)
    assert step.trace.grades is None  # truncated from grade
    regraded = step.grade()
    assert refund_id not in {g.chunk_id for g in regraded.items}
    assert any(f.what == f"drop {refund_id}" for f in regraded.fallbacks)
    assert step.run().outcome == "refused"  # nothing relevant left
    with pytest.raises(ValueError, match="not among the retrieved"):
        step.drop_chunk("no-such-chunk")


def test_next_runs_one_stage_at_a_time(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    assert step.next().stage == "decide"
    assert step.next().stage == "rewrite"
    assert step.done == ["decide", "rewrite"]
    assert step.run().outcome == "answered"
