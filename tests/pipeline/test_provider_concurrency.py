"""One grading wave by default, and a provider limit shared across questions
(behaviour seen by a real HTTP server, not timings)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer

TOPICS = [
    "refunds",
    "exports",
    "webhooks",
    "sso",
    "storage",
    "api",
    "currency",
    "imports",
    "sla",
    "attachments",
    "mobile",
    "security",
]
Q = "How do invoice refunds, exports, imports and attachments work?"


@pytest.fixture(scope="module")
def invoice_kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("invoice_kb")
    docs = root / "docs"
    docs.mkdir()
    for name in TOPICS:
        # Every document mentions invoices: one search returns ten of them.
        (docs / f"{name}.md").write_text(
            f"# {name.title()} and invoices\n\nHow {name} work for every invoice.\n", encoding="utf-8"
        )
    kb = sr.KnowledgeBase.open(Path(root) / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def test_settings_defaults_grade_in_one_wave() -> None:
    s = sr.Settings()
    assert s.grade_concurrency is None  # every chunk that reaches grading at once
    assert s.provider_concurrency is None  # the model's own limit (test_local_server_slots.py)
    assert sr.Settings(grade_concurrency=4).grade_concurrency == 4
    with pytest.raises(ValueError, match="provider_concurrency"):
        sr.Settings(provider_concurrency=0)


def test_ten_chunks_are_graded_in_one_wave(invoice_kb: Any) -> None:
    # Long enough that the ten requests (about 25 ms of CPU each on a loaded
    # machine) all arrive before the first is answered.
    with LoopbackServer(latency=1.5) as server:
        rag = sr.SelfRAG(invoice_kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback")
        # A server on this machine gets one request at a time unless told
        # otherwise; this one answers all at once, as a hosted provider does.
        step = rag.with_settings(rewrite=False, provider_concurrency=16).stepper(Q)
        hits = step.retrieve().hits
        assert len(hits) == 10  # the default per_query_k reaches grading
        server.clear()
        grades = step.grade()
        grade_requests = len(server.chat_requests())
        peak = server.max_in_flight
    assert len(grades.items) == 10
    assert all(g.parse_status == "ok" for g in grades.items)
    assert grade_requests == 10
    assert peak == 10  # the server had all ten grade requests in flight at once
    assert grades.concurrency == 10


def test_provider_limit_holds_across_concurrent_questions(invoice_kb: Any) -> None:
    with LoopbackServer(latency=0.1) as server:
        rag = sr.SelfRAG(
            invoice_kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback"
        ).with_settings(rewrite=False, provider_concurrency=3)

        async def four() -> list[sr.Trace]:
            return await asyncio.gather(*(rag.aask(f"{Q} ({i})") for i in range(4)))

        traces = asyncio.run(four())
        peak = server.max_in_flight
        n = len(server.chat_requests())
    assert n >= 4 * 10
    assert all(t.grades is not None and len(t.grades.items) == 10 for t in traces)
    assert all(c.error is None for t in traces for c in t.model_calls)
    assert peak == 3  # never more than the limit, and the limit is used


def test_provider_limit_holds_for_sync_asks_in_threads(invoice_kb: Any) -> None:
    # Sync ask from several threads: each runs its own fresh loop; the limit
    # is still one count per endpoint.
    from concurrent.futures import ThreadPoolExecutor

    with LoopbackServer(latency=0.1) as server:
        rag = sr.SelfRAG(
            invoice_kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback"
        ).with_settings(rewrite=False, provider_concurrency=2)
        with ThreadPoolExecutor(3) as pool:
            traces = list(pool.map(lambda i: rag.ask(f"{Q} [{i}]"), range(3)))
        peak = server.max_in_flight
    assert all(t.grades is not None and len(t.grades.items) == 10 for t in traces)
    assert peak == 2
