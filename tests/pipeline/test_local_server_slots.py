"""A model server on this machine answers one request at a time (llama.cpp's
server, Ollama, unless started with more slots). The rule: with nothing
configured, a question against such a server sends it one request at a time,
so every call's timeout runs while the server works on it, not while it
waits in the server's queue, and the question finishes within its deadline.
A number given by the user (Settings or LiteLLMModel) wins.

Seen by a real HTTP server serving ONE request at a time (LoopbackServer
slots=1): it counts the requests it has received and not yet answered."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer

TOPICS = ["refunds", "exports", "webhooks", "sso", "storage", "api", "currency", "imports", "sla", "mobile"]
Q = "How do invoice refunds, exports, imports and webhooks work?"


@pytest.fixture(scope="module")
def invoice_kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("slots_kb")
    docs = root / "docs"
    docs.mkdir()
    for name in TOPICS:
        # Every document mentions invoices: one search returns all ten.
        (docs / f"{name}.md").write_text(
            f"# {name.title()} and invoices\n\nHow {name} work for every invoice.\n", encoding="utf-8"
        )
    kb = sr.KnowledgeBase.open(Path(root) / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def test_default_settings_never_send_a_one_slot_server_two_requests(invoice_kb: Any) -> None:
    with LoopbackServer(slots=1, latency=0.05) as server:
        rag = sr.SelfRAG(invoice_kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback")
        trace = rag.ask(Q)
        peak = server.max_in_flight
        n = len(server.chat_requests())
    assert trace.grades is not None
    assert len(trace.grades.items) == 10
    assert n >= 10
    assert peak == 1, f"the one-slot server had {peak} requests in flight at once"
    assert not trace.finish.deadline_exceeded
    assert all(c.error is None for c in trace.model_calls), [c.error for c in trace.model_calls if c.error]


def test_a_question_against_a_one_slot_server_finishes_within_its_deadline(invoice_kb: Any) -> None:
    # A slow local model (0.3 s per answer) and a per-call timeout of 2 s: ten
    # grade calls sent at once would wait up to 3 s in the server's queue, time
    # out, be retried into the same queue and fail. One at a time, each is
    # answered well within its timeout.
    deadline = 20.0
    with LoopbackServer(slots=1, latency=0.3) as server:
        rag = sr.SelfRAG(
            invoice_kb,
            model="openai/loopback",
            api_base=server.url,
            api_key="sk-loopback",
            timeout=2.0,
            deadline=deadline,
        )
        t0 = time.monotonic()
        trace = rag.ask(Q)
        took = time.monotonic() - t0
        peak = server.max_in_flight
    assert took < deadline
    assert not trace.finish.deadline_exceeded, trace.finish.reason
    assert trace.grades is not None
    assert len(trace.grades.items) == 10
    failed = [(c.role, c.error) for c in trace.model_calls if c.error]
    assert failed == [], failed
    assert peak == 1


def test_a_number_in_settings_wins_over_the_local_default(invoice_kb: Any) -> None:
    with LoopbackServer(slots=4, latency=0.5) as server:
        rag = sr.SelfRAG(
            invoice_kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback"
        ).with_settings(rewrite=False, provider_concurrency=4)
        step = rag.stepper(Q)
        step.retrieve()
        server.clear()
        step.grade()
        peak = server.max_in_flight
    assert peak == 4


def test_a_number_given_to_the_model_wins_over_the_local_default(invoice_kb: Any) -> None:
    with LoopbackServer(slots=3, latency=0.5) as server:
        model = sr.LiteLLMModel(
            "openai/loopback-three", api_base=server.url, api_key="sk-loopback", provider_concurrency=3
        )
        assert model.provider_concurrency == 3
        step = sr.SelfRAG(invoice_kb, model=model).with_settings(rewrite=False).stepper(Q)
        step.retrieve()
        server.clear()
        step.grade()
        peak = server.max_in_flight
    assert peak == 3


def test_the_default_settings_leave_the_limit_to_the_model() -> None:
    assert sr.Settings().provider_concurrency is None
    assert sr.Settings(provider_concurrency=8).provider_concurrency == 8
    with pytest.raises(ValueError, match="provider_concurrency"):
        sr.Settings(provider_concurrency=0)
    with pytest.raises(ValueError, match="provider_concurrency"):
        sr.Settings(provider_concurrency="4")


@pytest.mark.parametrize(
    ("api_base", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.3.4.5:8080", True),
        ("http://localhost:11434", True),
        ("http://LOCALHOST/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://0.0.0.0:8080/v1", True),
        ("localhost:8080", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8080/v1", False),
        ("http://localhost.example.com/v1", False),
        ("http://127.0.0.1.example.com/v1", False),
        (None, False),
        ("", False),
    ],
)
def test_which_endpoints_are_on_this_machine(api_base: str | None, local: bool) -> None:
    from selfrag_nb.llm.litellm_loop import default_concurrency, is_local_endpoint

    assert is_local_endpoint(api_base) is local
    assert default_concurrency("openai/x", api_base) == (1 if local else 16)


def test_ollama_without_api_base_is_local_and_hosted_models_are_not() -> None:
    from selfrag_nb.llm.litellm_loop import default_concurrency

    assert default_concurrency("ollama/llama3", None) == 1
    assert default_concurrency("ollama_chat/llama3", None) == 1
    assert default_concurrency("openai/gpt-4o-mini", None) == 16
    assert default_concurrency("ollama/llama3", "https://ollama.example.com") == 16
    assert sr.LiteLLMModel("openai/x", api_base="http://127.0.0.1:9/v1").provider_concurrency == 1
    assert sr.LiteLLMModel("openai/x").provider_concurrency == 16
