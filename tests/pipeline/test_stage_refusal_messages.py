"""Refusals say what actually happened: an unresolved conflict is not
"the documents do not cover this"."""

from __future__ import annotations

from typing import Any

from helpers_pipeline import script_refund

from selfrag_nb.stages.generate import refusal_message

Q = "How many days do I have to request a full refund of a purchase?"


def test_conflict_refusal_names_the_disagreement(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default(
        "assess",
        {
            "action": "REFUSE",
            "reason": "The documents disagree and do not say which one applies.",
            "conflict": "one document says 30 days, another says 14 days",
        },
    )
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert "disagree" in trace.answer
    assert "one document says 30 days, another says 14 days" in trace.answer
    assert "do not cover" not in trace.answer


def test_plain_refusal_keeps_its_reason() -> None:
    msg = refusal_message("Is X supported?", "en", "no relevant passage was found")
    assert "do not cover" in msg
    assert "no relevant passage was found" in msg


def test_conflict_refusal_in_chinese() -> None:
    msg = refusal_message("退款期限是多少天？", "zh", conflict="一份文档写 30 天，另一份写 14 天。")
    assert "说法不一" in msg
    assert "一份文档写 30 天，另一份写 14 天" in msg


def test_chinese_refusal_ends_its_reason_before_the_next_sentence() -> None:
    # The reason is a sentence of its own: in Chinese text it ends with "。"
    # before the closing sentence starts, whatever punctuation it came with.
    for reason in (
        "grade: 3 of 3 model calls failed",
        "grade: 3 of 3 model calls failed.",
        "没有找到相关段落。",
    ):
        msg = refusal_message("单点登录支持哪些身份提供商？", "zh", reason)
        stated = msg.split("原因：", 1)[1]
        body, _, rest = stated.partition("。")
        assert body == reason.rstrip(".。"), msg
        assert rest.startswith("如果能补充"), msg


def test_a_chinese_refusal_states_the_stages_fixed_reasons_in_chinese() -> None:
    # A Chinese reader reads a Chinese reason: the fixed reasons the stages
    # write in English for the trace are given in Chinese in the message.
    for reason in (
        "no relevant passage was found in the documents available to you",
        "no relevant passage was found",
    ):
        msg = refusal_message("量子计算机的保修期是多久？", "zh", reason)
        stated = msg.split("原因：", 1)[1].partition("。")[0]
        assert stated in {"在您可以访问的资料中没有找到相关段落", "没有找到相关段落"}, msg
        assert not any("a" <= c.lower() <= "z" for c in stated), msg
    # English keeps the reason as written.
    assert "no relevant passage was found" in refusal_message(
        "Is X supported?", "en", "no relevant passage was found"
    )
