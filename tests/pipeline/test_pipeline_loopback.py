"""The pipeline over real HTTP (LiteLLM -> loopback server), from sync code and
from inside a running event loop (as in Jupyter), twice each (new loops)."""

from __future__ import annotations

import asyncio
from typing import Any

import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer

Q = "How many days do I have to request a refund?"


def test_ask_over_http_sync_and_inside_a_running_loop(kb: Any) -> None:
    with LoopbackServer() as server:
        rag = sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback-secret")
        first = rag.ask(Q)

        async def cell() -> sr.Trace:
            return rag.ask(Q)

        second = asyncio.run(cell())
        third = asyncio.run(cell())
        n_requests = len(server.chat_requests())
    for trace in (first, second, third):
        assert trace.outcome is not None
        assert trace.retrieval is not None
        assert all(c.parse_status in {"ok", "repaired"} for c in trace.model_calls if c.role == "grade")
        assert "sk-loopback-secret" not in trace.to_json()
    assert first.config.models["grade"] == "openai/loopback"
    assert n_requests >= 3 * len(first.grades.items)


def test_chinese_question_gets_chinese_composed_messages(make_rag: Any, scripted: Any) -> None:
    scripted.default("grade", {"relevanceScore": 90, "isRelevant": True})
    scripted.default("rewrite", {"rewrites": []})
    scripted.default("assess", {"action": "CLARIFY", "reason": "", "options": ["Free", "Pro", "Enterprise"]})
    trace = make_rag().ask("这个套餐允许多少个项目？")
    assert trace.outcome == "clarify"
    assert trace.answer == "请问您指的是哪一个：Free、Pro 还是 Enterprise？"
    scripted.default("assess", {"action": "REFUSE", "reason": "资料未包含该信息"})
    refused = make_rag().ask("这个套餐允许多少个项目？")
    assert refused.outcome == "refused"
    assert refused.answer.startswith("现有资料未能确认这个问题的答案")
