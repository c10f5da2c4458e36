"""The overall deadline: honest outcomes, skipped stages named, bounded wall time."""

from __future__ import annotations

import time
from typing import Any

from helpers_pipeline import script_refund

import selfrag_nb as sr

Q = "How many days do I have to request a refund?"


def test_deadline_refuses_honestly_and_names_skipped_stages(kb: Any) -> None:
    slow = sr.ScriptedModel(latency=0.4)
    script_refund(slow)
    rag = sr.SelfRAG(kb, model=slow, deadline=0.6)
    t0 = time.perf_counter()
    trace = rag.ask(Q)
    wall = time.perf_counter() - t0
    out = trace.finish
    assert out.deadline_exceeded is True
    assert out.outcome == "refused"  # never an unverified "answered"
    assert out.skipped
    assert "finish" in out.skipped or "verify" in out.skipped or "generate" in out.skipped
    assert "time budget" in out.reason
    assert wall < 0.6 + 1.5


def test_deadline_after_verification_keeps_the_verified_answer_with_a_disclaimer(kb: Any) -> None:
    model = sr.ScriptedModel()
    script_refund(model)
    rag = sr.SelfRAG(kb, model=model)
    step = rag.stepper(Q)
    step.verify()
    # The budget is spent before finish: what was verified is kept, disclaimed.
    from selfrag_nb.stages.finish import deadline_outcome

    out = deadline_outcome(step.trace, step._ctx, ["finish"], 1.0)
    assert out.outcome == "disclaimed"
    assert out.answer.startswith("Based on the available information:")
    assert out.deadline_exceeded


def test_fast_question_is_not_affected(kb: Any) -> None:
    model = sr.ScriptedModel()
    script_refund(model)
    trace = sr.SelfRAG(kb, model=model, deadline=30).ask(Q)
    assert trace.finish.deadline_exceeded is False
    assert trace.finish.skipped == []
