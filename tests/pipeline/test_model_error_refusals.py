"""A refusal caused by model errors says so, for every provider: the role, the
error and how many calls failed; never worded as missing evidence ("no
relevant passage was found", "do not cover"). ``sr.evaluate`` counts such
rows apart from real refusals (``model_errors``), and every view of the
outcome shows it.

Seen through a real OpenAI-compatible server on 127.0.0.1 answering HTTP 500
(to every call, or to the grade calls only), reached through LiteLLM as any
provider is, with the documented constructor (model string + api_base)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.questions import Question
from selfrag_nb.eval.runner import evaluate
from selfrag_nb.testing import LoopbackServer

Q = "What is the refund window for a Pro subscription?"
MISSING_EVIDENCE = ("no relevant passage", "do not cover", "no relevant document")


@pytest.fixture(scope="module")
def kb() -> Any:
    import litellm  # noqa: F401  # imported once here, not inside a question's deadline

    return sr.KnowledgeBase.sample(embedder="hashing")


def _rag(kb: Any, server: LoopbackServer) -> Any:
    return sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback", deadline=60)


def _words(trace: sr.Trace) -> list[str]:
    """Everything the analyst and the user read about why it ended."""
    assert trace.finish is not None
    out = [trace.answer, trace.finish.reason]
    if trace.assessment is not None:
        out.append(trace.assessment.reason)
    return out


def _assert_says_model_error(trace: sr.Trace, role: str) -> None:
    assert trace.outcome == "refused"
    assert trace.finish is not None
    assert trace.finish.reason_kind == "model_error"
    failed = [c for c in trace.model_calls if c.role == role and c.parse_status == "error"]
    calls = [c for c in trace.model_calls if c.role == role]
    assert failed, f"no failed {role} call on the trace"
    reason = trace.finish.reason
    assert f"{role}: {len(failed)} of {len(calls)} model call" in reason, reason
    assert "HTTP 500" in reason, reason
    for text in _words(trace):
        for phrase in MISSING_EVIDENCE:
            assert phrase not in text.casefold(), (phrase, text)


def test_a_server_failing_every_call_is_a_model_error_naming_grade(kb: Any) -> None:
    with LoopbackServer() as server:
        server.fail("500", times=10_000)
        trace = _rag(kb, server).ask(Q)
    _assert_says_model_error(trace, "grade")
    assert trace.grades is not None
    n = len(trace.grades.items)
    assert n >= 2
    assert f"grade: {n} of {n} model calls failed" in trace.finish.reason
    assert "language model failed" in trace.answer


def test_a_server_failing_only_grade_calls_is_a_model_error_naming_grade(kb: Any) -> None:
    with LoopbackServer() as server:
        server.fail("500", times=10_000, role="grade")
        # Rules off: the decide call goes to the server too, and is answered.
        trace = _rag(kb, server).with_settings(decision_rules=False).ask(Q)
    _assert_says_model_error(trace, "grade")
    # The other roles were answered: only grade failed, and the reason says so.
    answered = {c.role for c in trace.model_calls if c.parse_status == "ok"}
    assert answered
    assert "grade" not in answered


def test_a_failed_grade_is_not_answered_without_evidence_either(kb: Any) -> None:
    # no_evidence="answer_with_disclaimer" answers without documents when none
    # is relevant; chunks that were never judged are not "none relevant".
    with LoopbackServer() as server:
        server.fail("500", times=10_000, role="grade")
        rag = _rag(kb, server).with_settings(no_evidence="answer_with_disclaimer")
        trace = rag.ask(Q)
    _assert_says_model_error(trace, "grade")


def test_a_failed_assess_call_is_a_model_error_naming_assess(kb: Any) -> None:
    with LoopbackServer() as server:
        server.fail("500", times=10_000, role="assess")
        trace = _rag(kb, server).ask(Q)
    _assert_says_model_error(trace, "assess")


def test_every_view_shows_the_model_error(kb: Any, tmp_path: Path) -> None:
    from display_fixtures import tree_text

    from selfrag_nb.display.answer_view import MODEL_ERROR_BANNER
    from selfrag_nb.display.html import static_html
    from selfrag_nb.display.text import text_summary
    from selfrag_nb.display.widget import TraceWidget

    with LoopbackServer() as server:
        server.fail("500", times=10_000, role="grade")
        trace = _rag(kb, server).ask(Q)
    assert trace.finish is not None
    line = text_summary(trace.finish)
    assert "model error: " in line
    assert "grade:" in line
    html = static_html(trace.finish)
    assert MODEL_ERROR_BANNER in html
    assert "HTTP 500" in html  # the reason row names the error
    assert MODEL_ERROR_BANNER in static_html(trace)
    # The live widget mounts the same tree: the same banner.
    shown = tree_text(TraceWidget(trace).tree)
    assert MODEL_ERROR_BANNER in shown
    assert "HTTP 500" in shown


def test_evaluate_counts_model_errors_apart_from_refusals(kb: Any, tmp_path: Path) -> None:
    qs = [
        Question(id="answerable", category="factual", question=Q, expected=["answered", "disclaimed"]),
        Question(id="uncovered", category="refusal", question=Q + " (on Mars)", expected=["refused"]),
    ]
    with LoopbackServer() as server:
        server.fail("500", times=10_000, role="grade")
        report = evaluate(_rag(kb, server), qs, progress=False, out=tmp_path / "run", concurrency=1)
    rows = {r.id: r for r in report.rows}
    assert all(r.outcome == "refused" for r in rows.values())
    assert all(r.model_error for r in rows.values())
    records = [r for r in report.summary_records() if r["category"] == "all"]
    (rec,) = records
    assert rec["model_errors"] == 2
    assert rec["wrong_refusals"] == 0  # not a refusal on the evidence
    assert rec["correct_refusals"] == 0  # nor a right one by luck
    assert rec["outcome_accuracy"] == 0.0
    assert all("model_error" in r.failed_checks for r in rows.values())
    assert all("grade:" in (r.failure_reason or "") for r in rows.values())
    assert "model errors 2" in report.to_text()
