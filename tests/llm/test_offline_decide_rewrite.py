"""Offline decide and rewrite: small talk and arithmetic vs facts, follow-ups,
reference resolution with protected spans."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.question import decide, rewrite
from selfrag_nb.llm.schemas import DecideInputs, Message, RewriteInputs
from selfrag_nb.text import detect_language


@pytest.mark.parametrize(
    "question",
    [
        "Hello!",
        "hi there",
        "Hi there 👋",
        "Good morning, anyone there?",
        "你好",
        "早上好！",
        "Thanks, that was really helpful!",
        "谢谢你的帮助！",
        "bye",
        "再见",
        "How are you doing today?",
        "who are you?",
        "你是谁",
        "what is 17*3",
        "What's 12 divided by 4?",
        "17乘以3等于多少",
        "(2+3)^2 = ?",
        "ok",
    ],
)
def test_decide_small_talk_and_arithmetic_skip_retrieval(question: str) -> None:
    out = decide(DecideInputs(question=question))
    assert out.decision == "NO_RETRIEVE", out.reason
    assert out.reason
    assert out.reason.count("。") + out.reason.count(".") <= 2  # one sentence


@pytest.mark.parametrize(
    "question",
    [
        "What is the refund window?",
        "Hi, what is the refund window for annual plans?",
        "How do I rotate API keys?",
        "What does error E4031 mean?",
        "Is v2 of the API deprecated?",
        "How much does the Pro plan cost per user?",
        "退款政策是什么？",
        "企业版支持单点登录吗？",
        "Quillstack Sync 3.0.1 release notes",
        "What is the capital of France?",  # unsure -> retrieve
    ],
)
def test_decide_facts_retrieve(question: str) -> None:
    out = decide(DecideInputs(question=question))
    assert out.decision == "RETRIEVE", out.reason
    assert out.reason


def test_decide_reason_is_in_the_question_language() -> None:
    assert detect_language(decide(DecideInputs(question="你好")).reason) == "zh"
    assert detect_language(decide(DecideInputs(question="退款政策是什么？")).reason) == "zh"
    assert detect_language(decide(DecideInputs(question="Hello")).reason) == "en"


@pytest.mark.parametrize("question", ["and for the Pro plan?", "那它支持什么格式", "what about it?"])
def test_decide_follow_ups_retrieve(question: str) -> None:
    history = [
        Message(role="user", content="Does Quillstack Sync support CSV export on the Starter plan?"),
        Message(role="assistant", content="Yes, CSV export is available."),
    ]
    out = decide(DecideInputs(question=question, history=history))
    assert out.decision == "RETRIEVE"
    assert "follow-up" in out.reason or "追问" in out.reason


def test_decide_empty_message() -> None:
    assert decide(DecideInputs(question="   ")).decision == "NO_RETRIEVE"


# ----------------------------------------------------------------- rewrite

SYNC_HISTORY = [
    Message(role="user", content="Does Quillstack Sync run on macOS?"),
    Message(role="assistant", content="Yes. The Enterprise plan adds managed deployment."),
]


def test_rewrite_resolves_it_from_the_user_turn() -> None:
    out = rewrite(RewriteInputs(question="Does it support CSV export?", history=SYNC_HISTORY))
    assert out.rewrites[0] == "Does Quillstack Sync support CSV export?"
    assert len(out.rewrites) <= 2
    assert "Quillstack Sync" in out.reason


def test_rewrite_keeps_negation_and_protected_spans() -> None:
    out = rewrite(
        RewriteInputs(
            question="Which formats does it not support?",
            history=SYNC_HISTORY,
            protected=["not support"],
        )
    )
    assert out.rewrites
    for text in out.rewrites:
        assert "not support" in text
    assert out.rewrites[0] == "Which formats does Quillstack Sync not support?"


def test_rewrite_protected_span_lost_by_substitution_is_restored() -> None:
    # The protected span contains the pronoun; replacing it must not drop the span.
    out = rewrite(
        RewriteInputs(question="Is it ORD-2024-0042?", history=SYNC_HISTORY, protected=["it ORD-2024-0042"])
    )
    for text in out.rewrites:
        assert "it ORD-2024-0042" in text


def test_rewrite_ellipsis_swaps_the_entity_of_the_previous_question() -> None:
    history = [Message(role="user", content="What is the refund window for the Starter plan?")]
    out = rewrite(RewriteInputs(question="and for the Pro plan?", history=history, protected=["Pro plan"]))
    assert out.rewrites[0] == "What is the refund window for the Pro plan?"
    assert all("Pro plan" in r for r in out.rewrites)
    assert all("Starter" not in r for r in out.rewrites)


def test_rewrite_chinese_reference() -> None:
    history = [Message(role="user", content="Quillstack Sync 可以导出数据吗？")]
    out = rewrite(RewriteInputs(question="那它支持什么格式", history=history, language="zh"))
    assert out.rewrites[0] == "Quillstack Sync支持什么格式"


def test_rewrite_chinese_ellipsis() -> None:
    history = [Message(role="user", content="基础版套餐的退款期限是多久？")]
    out = rewrite(RewriteInputs(question="那专业版呢？", history=history))
    assert out.rewrites[0] == "专业版的退款期限是多久？"
    assert "退款期限" in out.rewrites[1]


def test_rewrite_prefers_user_turns_over_assistant_turns() -> None:
    out = rewrite(RewriteInputs(question="How much does it cost?", history=SYNC_HISTORY))
    assert "Quillstack Sync" in out.rewrites[0]
    assert "Enterprise" not in out.rewrites[0]


def test_rewrite_uses_assistant_turn_when_user_named_nothing() -> None:
    history = [
        Message(role="user", content="what do you recommend?"),
        Message(role="assistant", content="The Quillstack API is the best fit."),
    ]
    out = rewrite(RewriteInputs(question="Is it rate limited?", history=history))
    assert out.rewrites[0] == "Is Quillstack API rate limited?"


@pytest.mark.parametrize(
    ("question", "history", "max_rewrites"),
    [
        ("What is the refund window?", [], 2),  # no history
        ("What is the refund window?", SYNC_HISTORY, 2),  # no reference
        ("Does it support CSV export?", SYNC_HISTORY, 0),  # no budget
    ],
)
def test_rewrite_returns_nothing_when_not_useful(
    question: str, history: list[Message], max_rewrites: int
) -> None:
    out = rewrite(RewriteInputs(question=question, history=history, max_rewrites=max_rewrites))
    assert out.rewrites == []
    assert out.reason


def test_rewrite_respects_max_rewrites() -> None:
    out = rewrite(RewriteInputs(question="Does it support CSV export?", history=SYNC_HISTORY, max_rewrites=1))
    assert len(out.rewrites) == 1
