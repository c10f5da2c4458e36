"""The usefulness check and what finish does with it (scripted judge, real
LanceDB knowledge base): "no" is regenerated once with what is missing
named, then clarify or refuse, never ACCEPT; "partly" is never a plain
"answered"; plain RAG (every check off) answers without checking."""

from __future__ import annotations

from typing import Any

from helpers_pipeline import REFUND_ANSWER, script_refund

from selfrag_nb.llm.schemas import GenerateInputs
from selfrag_nb.trace import Trace, Usefulness

Q = "What is the refund window?"
NO = {"verdict": "no", "score": 10, "missing": "the number of days", "reason": "scripted: a fragment"}
PARTLY = {"verdict": "partly", "score": 60, "missing": "the payment method", "reason": "scripted: in part"}
YES = {"verdict": "yes", "score": 92, "missing": "", "reason": "scripted: answers it"}


def _strict_inputs(scripted: Any) -> list[GenerateInputs]:
    return [
        r.inputs
        for r in scripted.requests
        if r.role == "generate" and isinstance(r.inputs, GenerateInputs) and r.inputs.mode == "strict"
    ]


def test_an_answer_judged_useful_is_accepted_and_the_record_is_on_the_trace(
    make_rag: Any, scripted: Any
) -> None:
    script_refund(scripted)
    scripted.enqueue("usefulness", YES)
    trace = make_rag().ask(Q)
    assert trace.outcome == "answered"
    assert isinstance(trace.usefulness, Usefulness)
    assert (trace.usefulness.verdict, trace.usefulness.score) == ("yes", 92)
    assert trace.usefulness.calls[0].role == "usefulness"
    stages = [r.stage for r in trace.records]
    assert stages[-3:] == ["verify", "usefulness", "finish"]
    assert Trace.from_json(trace.to_json()) == trace


def test_a_non_answer_is_regenerated_once_told_what_is_missing(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.enqueue("usefulness", NO, YES)
    trace = make_rag().ask(Q)
    strict = _strict_inputs(scripted)
    assert len(strict) == 1
    assert strict[0].missing == "the number of days"
    assert trace.outcome == "regenerated"
    assert [u.verdict for u in trace.records if isinstance(u, Usefulness)] == ["no", "yes"]
    assert [r.stage for r in trace.records][-4:] == ["generate", "verify", "usefulness", "finish"]


def test_still_no_answer_is_refused_as_not_answered_never_accepted(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("usefulness", NO)
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish is not None
    assert trace.finish.reason_kind == "not_answered"
    assert "the number of days" in trace.finish.reason
    assert REFUND_ANSWER not in (trace.answer or "")
    assert len(_strict_inputs(scripted)) == 1  # once, never a loop


def test_still_no_answer_with_options_asks_which_one(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default(
        "assess", {"action": "ANSWER", "reason": "covered", "options": ["Pro plan", "Free plan"]}
    )
    scripted.default("usefulness", NO)
    trace = make_rag().ask(Q)
    assert trace.outcome == "clarify"
    assert "Pro plan" in (trace.answer or "")
    assert trace.finish is not None
    assert trace.finish.reason_kind == "not_answered"


def test_partly_useful_is_disclaimed_naming_what_is_missing(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("usefulness", PARTLY)
    trace = make_rag().ask(Q)
    assert trace.outcome == "disclaimed"
    assert trace.finish is not None
    assert "the payment method" in trace.finish.reason
    assert not _strict_inputs(scripted)


def test_an_unparsed_judge_is_conservative_and_visible(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("usefulness", "I think it is fine")
    trace = make_rag().ask(Q)
    assert trace.outcome in {"refused", "clarify"}
    first = next(r for r in trace.records if isinstance(r, Usefulness))
    assert first.verdict == "no"
    assert first.calls[0].parse_status == "unparsed"
    assert first.fallbacks


def test_the_check_switched_off_leaves_no_record(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = make_rag().with_settings(usefulness=False).ask(Q)
    assert trace.usefulness is None
    assert trace.outcome == "answered"
    assert not any(r.role == "usefulness" for r in scripted.requests)


def test_plain_rag_settings_generate_from_the_top_chunks_without_checks(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    rag = make_rag().with_settings(
        retrieval="always",
        rewrite=False,
        grade=False,
        rerank=False,
        assess=False,
        verify=False,
        usefulness=False,
        max_regenerations=0,
    )
    trace = rag.ask(Q)
    assert [r.stage for r in trace.records] == ["decide", "retrieve", "generate", "finish"]
    assert {r.role for r in scripted.requests} == {"generate"}
    assert trace.outcome == "answered"
    assert trace.finish is not None
    assert "not checked" in trace.finish.reason
    gen = trace.generation
    assert gen is not None
    assert gen.evidence  # the top retrieved chunks, ungraded
    assert len(gen.evidence) <= rag.settings.rerank_keep


def test_repr_and_str_are_the_one_line_summary(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = make_rag().ask(Q)
    assert repr(trace) == trace.to_text()
    assert "\n" not in repr(trace)
    assert len(repr(trace)) < 300
    assert repr(trace).startswith('Trace: "What is the refund window?" → answered')
    for rec in trace.records:
        assert str(rec) == rec.to_text()
        assert len(str(rec)) < 300
    assert str(trace.usefulness).startswith("Usefulness: yes (90/100)")
    assert trace.model_dump()["records"]  # the full data stays one call away


def test_an_answer_verify_sends_back_is_not_judged_until_finish_keeps_one(
    make_rag: Any, scripted: Any
) -> None:
    from helpers_pipeline import REFUND_CLAIM, REFUND_QUOTE, verdict

    script_refund(scripted)
    scripted.enqueue("verify", verdict([(REFUND_CLAIM, "unsupported", 1, REFUND_QUOTE)], "REGENERATE", 20))
    trace = make_rag().ask(Q)
    judged = [r for r in trace.records if isinstance(r, Usefulness)]
    assert [u.attempt for u in judged] == [2]  # only the regenerated answer, the one kept
    assert trace.outcome == "regenerated"


def test_after_dropping_claims_the_judge_reads_what_the_user_will_read(make_rag: Any, scripted: Any) -> None:
    """The rule: the usefulness check judges the answer that is delivered. When
    unsupported claims are dropped, what is left may no longer answer the
    question, though the whole attempt did."""
    from helpers_pipeline import script_mixed

    script_mixed(scripted)
    judged: list[str] = []

    def judge(request: Any) -> dict[str, Any]:
        judged.append(request.inputs.answer)
        return YES if "shipping" in request.inputs.answer else NO

    scripted.default("usefulness", judge)
    trace = make_rag().with_settings(max_regenerations=1).ask(Q)
    assert judged, "the answer left after dropping claims was never judged"
    assert "shipping" not in judged[-1]
    assert trace.outcome == "refused"
    assert trace.finish is not None
    assert trace.finish.reason_kind == "not_answered"
