"""Decide: quick rules, the decision cache (TTL, size, normalisation), the model."""

from __future__ import annotations

from typing import Any

import pytest

from selfrag_nb.stages.decide import DecisionCache, quick_rule


@pytest.mark.parametrize(
    "q", ["Hello!", "hi there", "你好", "早上好！", "Good morning", "thanks a lot", "谢谢", "ok, bye"]
)
def test_greetings_and_small_talk_skip_retrieval(q: str) -> None:
    rule = quick_rule(q)
    assert rule is not None, q
    assert rule[0] is False, (q, rule)


@pytest.mark.parametrize(
    "q", ["What is the refund policy?", "退款政策是什么？", "Where is ORD-2024-0042?", "Is it in v2.3.1?"]
)
def test_factual_keywords_and_ids_retrieve(q: str) -> None:
    rule = quick_rule(q)
    assert rule is not None, q
    assert rule[0] is True, (q, rule)


def test_english_keywords_match_whole_words_only() -> None:
    # "api" must not fire inside "capital"; no rule decides this one.
    assert quick_rule("What is the capital of France?") is None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cache_key_normalises_nfkc_case_and_full_width_punctuation() -> None:
    a = DecisionCache.key("What is Ｑｕｉｌｌ？", "")
    b = DecisionCache.key("what is quill?", "")
    c = DecisionCache.key("what   is quill", "")
    assert a == b == c
    assert DecisionCache.key("退款政策是什么？", "") == DecisionCache.key("退款政策是什么", "")


def test_cache_key_depends_on_history_summary() -> None:
    none = DecisionCache.key("and that one?", "")
    one = DecisionCache.key("and that one?", "user: plans")
    other = DecisionCache.key("and that one?", "user: refunds")
    assert len({none, one, other}) == 3


def test_cache_ttl_expires_entries() -> None:
    clock = Clock()
    cache = DecisionCache(size=10, ttl=60, clock=clock)
    cache.put("k", True, "why")
    clock.now += 59
    assert cache.get("k") == (True, "why")
    clock.now += 2  # 61 s after the write
    assert cache.get("k") is None
    assert len(cache) == 0


def test_cache_size_evicts_least_recently_used() -> None:
    cache = DecisionCache(size=2, ttl=3600, clock=Clock())
    cache.put("a", True, "")
    cache.put("b", False, "")
    assert cache.get("a") is not None  # a is now most recent
    cache.put("c", True, "")
    assert cache.get("b") is None
    assert cache.get("a") is not None
    assert cache.get("c") is not None


def test_cache_size_zero_disables() -> None:
    cache = DecisionCache(size=0, ttl=3600)
    cache.put("a", True, "")
    assert cache.get("a") is None


def _decide(request: Any) -> dict[str, Any]:
    return {"decision": "RETRIEVE", "reason": "needs the documents. More text."}


def test_model_decides_then_cache_serves_repeat(make_rag: Any, scripted: Any) -> None:
    scripted.default("decide", _decide)
    rag = make_rag(settings=None)
    rag = rag.with_settings(rewrite=False)  # keep the stepper to decide only
    q = "What is the capital of France?"
    d1 = rag.stepper(q).decide()
    assert d1.source == "model"
    assert d1.retrieve is True
    assert d1.reason == "needs the documents."  # one sentence
    assert len(d1.calls) == 1
    d2 = rag.stepper("what is the capital of france").decide()
    assert d2.source == "cache"
    assert d2.calls == []
    assert len(scripted.requests_for("decide")) == 1
    # A follow-up with a history is not served from the no-history entry.
    d3 = rag.stepper(q, history=[{"role": "user", "content": "tell me about Paris"}]).decide()
    assert d3.source == "model"
    assert d3.summary.startswith("user: tell me about Paris")
    assert len(scripted.requests_for("decide")) == 2


def test_unparsed_decision_retrieves_and_is_not_cached(make_rag: Any, scripted: Any) -> None:
    scripted.default("decide", "I think maybe")
    rag = make_rag()
    d = rag.stepper("What is the capital of France?").decide()
    assert d.retrieve is True
    assert d.source == "model"
    assert any(f.what == "decide default" for f in d.fallbacks)
    assert len(rag.decision_cache) == 0


def test_settings_always_and_never(make_rag: Any) -> None:
    rag = make_rag()
    assert rag.with_settings(retrieval="never").stepper("refund policy?").decide().retrieve is False
    d = rag.with_settings(retrieval="always").stepper("Hello!").decide()
    assert d.retrieve is True
    assert d.source == "setting"


def test_rule_decision_names_its_rule(make_rag: Any) -> None:
    d = make_rag().stepper("你好").decide()
    assert d.source == "rule"
    assert d.rule == "greeting"
    assert d.calls == []


@pytest.mark.parametrize("q", ["Hi there 👋", "👋👋", "???", "..."])
def test_emoji_and_punctuation_only_need_no_documents(q: str) -> None:
    rule = quick_rule(q)
    assert rule is not None, q
    assert rule[0] is False
