"""Stage 1, decide: does this question need the documents?

    override (stepper)                        -> source="override"
    settings.retrieval "always" | "never"     -> source="setting"
    quick rules (greeting/small talk/no words -> NO,   -> source="rule", rule=<name>
                 product/policy/ID -> YES)
    decision cache (normalised question       -> source="cache"
                    + history summary + prompt)
    model (DecideInputs + one-line summary)   -> source="model", its one-sentence reason

Rules first so greetings never pay for a model call, then
a Caffeine-style cache (10 000 entries, one hour), then the model. A cached
decision is only reused for the same conversation summary, so a follow-up
("and that one?") is never answered from another conversation's decision.
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable

from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, Message
from selfrag_nb.spans import extract_spans
from selfrag_nb.stages.base import Stage, StageContext
from selfrag_nb.text import normalize_key, split_sentences
from selfrag_nb.trace import Decision, Fallback, Trace

__all__ = ["DecideStage", "DecisionCache", "quick_rule", "summarize_history"]

# Whole-question matches after normalize_key (lower-case, punctuation removed).
_GREETING_RE = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening|day)|greetings"
    r"|(?:hi|hello|hey) there|how are you(?: doing)?(?: today)?|how s it going|what s up|sup"
    r"|你好|您好|嗨|哈喽|哈啰|早上好|下午好|晚上好|早安|晚安|你好呀|你好啊|在吗|在不在|大家好"
    r")(?: (?:there|again|everyone|all|team))?$"
)
_SMALLTALK_RE = re.compile(
    r"^(?:thanks?(?: you)?(?: (?:so|very) much)?(?: a lot)?|thx|ty|cheers|ok(?:ay)?|cool|great|nice|got it"
    r"|perfect|awesome|bye|goodbye|see you|see ya|that s all|that s helpful|you re welcome|no problem"
    r"|who are you|what can you do|what is your name|are you a bot|are you human"
    r"|谢谢(?:你|您)?|多谢|感谢|好的|好|行|明白了|知道了|收到|再见|拜拜|没事了|不客气|你是谁|你能做什么|你叫什么名字"
    r")(?: (?:again|a lot|so much|bye))?$"
)
# Substrings (case-insensitive) that signal facts that live in the documents.
_FACTUAL_KEYWORDS: tuple[str, ...] = (
    "refund", "return policy", "policy", "policies", "price", "pricing", "cost", "fee", "plan",
    "subscription", "invoice", "billing", "order", "shipping", "delivery", "warranty", "support",
    "supported", "version", "release", "feature", "limit", "quota", "sla", "api", "install",
    "configure", "setup", "set up", "how do i", "how to", "how can i", "process", "procedure",
    "approval", "deadline", "contract", "account", "password", "security", "compliance", "data retention",
    "退款", "退货", "政策", "规定", "价格", "费用", "收费", "套餐", "订阅", "发票", "账单", "订单", "发货",
    "配送", "保修", "支持", "版本", "功能", "限制", "额度", "接口", "安装", "配置", "流程", "审批", "合同",
    "账号", "账户", "密码", "安全", "如何", "怎么", "怎样",
)  # fmt: skip


_KEYWORD_RES = {
    kw: re.compile(r"\b" + re.escape(kw) + r"(?:s|es)?\b") for kw in _FACTUAL_KEYWORDS if kw.isascii()
}


def quick_rule(question: str) -> tuple[bool, str] | None:
    """(retrieve, rule name) when a rule decides, else None."""
    # Emoji and other symbols carry no facts: "Hi there 👋" is a greeting.
    key = " ".join(
        "".join(c for c in normalize_key(question) if not unicodedata.category(c).startswith("S")).split()
    )
    if not key or not any(c.isalnum() for c in key):
        return False, "no_words"
    if _GREETING_RE.match(key):
        return False, "greeting"
    if _SMALLTALK_RE.match(key):
        return False, "small_talk"
    lowered = question.casefold()
    for kw in _FACTUAL_KEYWORDS:
        # English keywords as whole words ("api" must not fire inside "capital").
        found = _KEYWORD_RES[kw].search(lowered) if kw.isascii() else kw in lowered
        if found:
            return True, f"factual_keyword:{kw}"
    if any(s.kind in {"identifier", "order", "version", "date", "amount"} for s in extract_spans(question)):
        return True, "identifier"
    return None


def summarize_history(history: list[Message], limit: int = 300) -> str:
    """A short summary of the conversation for the decider: the last turns,
    each cut to a sentence-sized piece, most recent last."""
    if not history:
        return ""
    parts = []
    for m in history[-4:]:
        text = " ".join(m.content.split())
        parts.append(f"{m.role}: {text[:120]}")
    summary = " | ".join(parts)
    return summary[-limit:]


class DecisionCache:
    """LRU with a time-to-live, keyed by the normalised question, the
    conversation summary and the decide prompt's hash. ``clock`` is
    injectable for tests."""

    def __init__(self, size: int, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._data: OrderedDict[str, tuple[bool, str, float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(question: str, summary: str, prompt_hash: str = "") -> str:
        q = normalize_key(question)
        if not summary:
            return f"{q}|no-history|{prompt_hash}"
        digest = hashlib.sha256(normalize_key(summary).encode("utf-8")).hexdigest()[:16]
        return f"{q}|history:{digest}|{prompt_hash}"

    def get(self, key: str) -> tuple[bool, str] | None:
        entry = self._data.get(key)
        if entry is None:
            self.misses += 1
            return None
        retrieve, reason, stored = entry
        if self._clock() - stored > self.ttl:
            del self._data[key]
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return retrieve, reason

    def put(self, key: str, retrieve: bool, reason: str) -> None:
        if self.size <= 0:
            return
        self._data[key] = (retrieve, reason, self._clock())
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class DecideStage(Stage):
    name = "decide"

    async def run(self, trace: Trace, ctx: StageContext) -> Decision:
        t0 = time.perf_counter()
        fallbacks: list[Fallback] = []
        if ctx.truncated:
            fallbacks.append(
                Fallback(
                    what="question truncated",
                    reason=f"{len(ctx.question)} characters cut to {len(ctx.query)} for model calls and search",
                )
            )
        if ctx.history_cut:
            fallbacks.append(Fallback(what="history truncated", reason=ctx.history_cut))
        summary = summarize_history(ctx.history)
        s = ctx.settings

        def done(**kw: object) -> Decision:
            return Decision(
                latency_ms=(time.perf_counter() - t0) * 1000,
                fallbacks=fallbacks,
                summary=summary,
                **kw,
            )

        override = ctx.overrides.get("decide")
        if override is not None:
            retrieve = bool(override["retrieve"])
            reason = str(override.get("reason") or f"overridden in the stepper: retrieve={retrieve}")
            return done(retrieve=retrieve, reason=reason, source="override")
        if s.retrieval != "adaptive":
            return done(
                retrieve=s.retrieval == "always",
                reason=f'settings.retrieval is "{s.retrieval}"',
                source="setting",
            )
        if s.decision_rules:
            rule = quick_rule(ctx.query)
            if rule is not None:
                retrieve, name = rule
                reason = (
                    "greeting, small talk or no words: no documents needed"
                    if not retrieve
                    else "asks about products, policies, processes or identifiers: documents needed"
                )
                return done(retrieve=retrieve, reason=reason, source="rule", rule=name)

        prompt_hash = ""
        try:
            prompt_hash = ctx.runner.prompts.hash("decide")
        except (KeyError, AttributeError):
            prompt_hash = ""
        key = DecisionCache.key(ctx.query, summary, prompt_hash)
        cached = ctx.decision_cache.get(key)
        if cached is not None:
            return done(retrieve=cached[0], reason=cached[1], source="cache", cache_key=key)

        result = await ctx.runner.acall(
            "decide",
            DecideInputs(question=ctx.query, history=ctx.history, summary=summary, language=ctx.language),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        out = result.output
        assert isinstance(out, DecisionOut)
        retrieve = out.decision == "RETRIEVE"
        # The decision's reason is one sentence: keep the first.
        sentences = split_sentences(out.reason.strip())
        reason = sentences[0] if sentences else ""
        if result.ok:
            ctx.decision_cache.put(key, retrieve, reason)
        else:
            fallbacks.append(
                Fallback(
                    what="decide default",
                    reason=f"model output {result.call.parse_status}: retrieving to be safe",
                )
            )
        return Decision(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            retrieve=retrieve,
            reason=reason or ("retrieve" if retrieve else "no retrieval needed"),
            source="model",
            summary=summary,
            cache_key=key,
        )
