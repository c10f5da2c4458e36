"""LiteLLMModel end to end: the real LiteLLM client over real HTTP against the
loopback server (no mock anywhere between the model and the socket)."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from selfrag_nb.errors import ModelError
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.litellm_model import LiteLLMModel, _retry_after
from selfrag_nb.llm.pricing import register_price, unregister_price
from selfrag_nb.llm.schemas import (
    DecideInputs,
    DecisionOut,
    GenerateInputs,
    GenerateOut,
    Message,
    RelevanceOut,
)
from selfrag_nb.testing import LoopbackServer

KEY = "sk-loopback-SECRET-0123456789abcdef"


def decide_request(
    question: str = "What is the refund window?",
    *,
    timeout: float | None = None,
    deadline: float | None = None,
) -> ModelRequest:
    return ModelRequest(
        role="decide",
        messages=[
            Message(role="system", content="Decide RETRIEVE or NO_RETRIEVE. Answer JSON."),
            Message(role="user", content=question),
        ],
        output_schema=DecisionOut,
        inputs=DecideInputs(question=question),
        timeout=timeout,
        deadline=deadline,
    )


def model_for(server: LoopbackServer, name: str = "openai/loopback", **kw: object) -> LiteLLMModel:
    return LiteLLMModel(name, api_base=server.url, api_key=KEY, backoff=0.01, **kw)  # type: ignore[arg-type]  # test knobs


def test_success_counts_tokens_and_unknown_cost_is_none(loopback: LoopbackServer) -> None:
    out = model_for(loopback).complete(decide_request())
    assert out.error is None
    assert json.loads(out.raw)["decision"] == "RETRIEVE"
    # The server counts words: "Decide RETRIEVE or NO_RETRIEVE. Answer JSON." + question
    assert out.tokens_in == 6 + 5
    assert out.tokens_out is not None
    assert out.tokens_out > 0
    assert out.cost is None  # unknown model: unknown cost, not 0
    assert out.retries == 0
    assert out.latency_ms > 0
    assert out.model == "openai/loopback"
    sent = loopback.chat_requests()[-1]
    assert sent.authorized
    assert sent.headers["authorization"] == "REDACTED"
    assert sent.body is not None
    assert sent.body["messages"][1]["content"] == "What is the refund window?"
    # An OpenAI-compatible model supports JSON mode: asked for it.
    assert sent.body["response_format"] == {"type": "json_object"}


def test_registered_price_gives_a_cost(loopback: LoopbackServer) -> None:
    name = "openai/loopback-priced"
    register_price(name, input_per_token=0.001, output_per_token=0.002)
    try:
        out = model_for(loopback, name).complete(decide_request())
    finally:
        unregister_price(name)
    assert out.tokens_in is not None
    assert out.tokens_out is not None
    assert out.cost == pytest.approx(out.tokens_in * 0.001 + out.tokens_out * 0.002)


def test_known_model_is_priced_from_litellm_map(loopback: LoopbackServer) -> None:
    # A name LiteLLM prices, served by the loopback server: cost is a number.
    out = model_for(loopback, "openai/gpt-4o-mini").complete(decide_request())
    assert out.error is None
    assert out.cost is not None
    assert out.cost > 0


def test_forced_json_schema_and_generate_never_forced(loopback: LoopbackServer) -> None:
    model = model_for(loopback, response_format=True)
    model.complete(
        ModelRequest(
            role="grade",
            messages=[Message(role="user", content="Grade this.")],
            output_schema=RelevanceOut,
            inputs=DecideInputs(question="q"),
        )
    )
    fmt = loopback.chat_requests()[-1].body["response_format"]  # type: ignore[index]  # body is a dict here
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "RelevanceOut"
    assert "relevanceScore" in fmt["json_schema"]["schema"]["properties"]
    out = model.complete(
        ModelRequest(
            role="generate",
            messages=[Message(role="user", content="Answer from [1].")],
            output_schema=GenerateOut,
            inputs=GenerateInputs(question="q"),
        )
    )
    assert out.raw == "This is the loopback server's answer [1]."
    assert "response_format" not in loopback.chat_requests()[-1].body  # type: ignore[operator]  # body is a dict
    model_for(loopback, response_format=False).complete(decide_request())
    assert "response_format" not in loopback.chat_requests()[-1].body  # type: ignore[operator]  # body is a dict


def test_500_then_success_is_one_retry(loopback: LoopbackServer) -> None:
    loopback.fail("500")
    out = model_for(loopback, max_retries=1).complete(decide_request())
    assert out.error is None
    assert out.retries == 1
    assert len(loopback.chat_requests()) == 2


def test_retries_exhausted_is_an_error_not_an_exception(loopback: LoopbackServer) -> None:
    loopback.fail("503", times=3)
    out = model_for(loopback, max_retries=2).complete(decide_request())
    assert out.raw == ""
    assert out.error is not None
    assert "failed after 3 attempts" in out.error
    assert "503" in out.error
    assert out.fallback
    assert out.retries == 2


def test_429_retry_after_is_honoured(loopback: LoopbackServer) -> None:
    loopback.fail("429", retry_after=0.6)
    started = time.monotonic()
    out = model_for(loopback, max_retries=1).complete(decide_request())
    elapsed = time.monotonic() - started
    assert out.error is None
    assert out.retries == 1
    assert elapsed >= 0.6


def test_retry_after_longer_than_deadline_gives_up_at_once(loopback: LoopbackServer) -> None:
    loopback.fail("429", retry_after=30)
    started = time.monotonic()
    out = model_for(loopback, max_retries=3).complete(decide_request(deadline=time.monotonic() + 2.0))
    assert time.monotonic() - started < 1.0
    assert out.error is not None
    assert out.error.startswith("deadline exceeded after 1 attempts")


def test_timeout_returns_an_error_quickly() -> None:
    with LoopbackServer(timeout_sleep=30) as server:
        server.fail("timeout", times=5)
        started = time.monotonic()
        out = model_for(server, max_retries=1).complete(decide_request(timeout=0.5))
        elapsed = time.monotonic() - started
        assert out.error is not None
        assert "Timeout" in out.error
        assert out.retries == 1
        assert elapsed < 2.0
        stop_started = time.monotonic()
    assert time.monotonic() - stop_started < 1.0  # stalled handlers wake on stop


def test_deadline_caps_the_per_call_timeout(loopback: LoopbackServer) -> None:
    loopback.fail("timeout", times=5)
    started = time.monotonic()
    out = model_for(loopback, max_retries=5, timeout=10).complete(
        decide_request(deadline=time.monotonic() + 0.7)
    )
    elapsed = time.monotonic() - started
    assert out.error is not None
    assert out.error.startswith("deadline exceeded after 1 attempts")
    assert 0.6 <= elapsed < 1.5


def test_deadline_already_passed_makes_no_request(loopback: LoopbackServer) -> None:
    out = model_for(loopback).complete(decide_request(deadline=time.monotonic() - 1))
    assert out.error is not None
    assert out.error.startswith("deadline exceeded after 0 attempts")
    assert loopback.chat_requests() == []


@pytest.mark.parametrize("mode", ["malformed", "empty", "wrong_shape", "truncated"])
def test_bad_bodies_become_completion_errors(loopback: LoopbackServer, mode: str) -> None:
    loopback.fail(mode, times=2)
    out = model_for(loopback, max_retries=1).complete(decide_request())
    assert isinstance(out, Completion)
    assert out.raw == ""
    assert out.error is not None
    assert out.retries == 1


def test_bad_body_then_good_body_recovers(loopback: LoopbackServer) -> None:
    loopback.fail("malformed")
    out = model_for(loopback, max_retries=1).complete(decide_request())
    assert out.error is None
    assert json.loads(out.raw)["decision"] == "RETRIEVE"


def test_401_raises_model_error_naming_env_var_without_key(loopback: LoopbackServer) -> None:
    loopback.fail("401")
    with pytest.raises(ModelError) as info:
        model_for(loopback).complete(decide_request())
    assert "OPENAI_API_KEY" in str(info.value)
    assert KEY not in str(info.value)
    assert "SECRET" not in repr(info.value)
    assert len(loopback.chat_requests()) == 1  # a configuration error is not retried


def test_403_is_a_configuration_error(loopback: LoopbackServer) -> None:
    loopback.fail("403")
    with pytest.raises(ModelError, match="credentials"):
        model_for(loopback).complete(decide_request())


def test_missing_key_is_found_before_any_request(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = LiteLLMModel("openai/loopback", api_base=loopback.url)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        model.complete(decide_request())
    assert loopback.requests == []


def test_missing_anthropic_key_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        LiteLLMModel("anthropic/claude-3-5-haiku-latest").complete(decide_request())


def test_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="does not know this provider"):
        LiteLLMModel("nosuchprovider/some-model").complete(decide_request())


def test_invalid_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="model must be"):
        LiteLLMModel("")
    with pytest.raises(ValueError, match="timeout"):
        LiteLLMModel("openai/x", timeout=0)
    with pytest.raises(ValueError, match="max_retries"):
        LiteLLMModel("openai/x", max_retries=-1)


def test_key_never_leaks_into_completions_logs_or_repr(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model = model_for(loopback, max_retries=1)
    loopback.fail("500")
    ok = model.complete(decide_request())
    loopback.fail("503", times=2)
    failed = model.complete(decide_request())
    loopback.fail("401")
    with pytest.raises(ModelError) as info:
        model.complete(decide_request())
    dumped = ok.model_dump_json() + failed.model_dump_json() + str(info.value) + repr(model)
    dumped += "".join(r.getMessage() for r in caplog.records)
    dumped += json.dumps([r.headers for r in loopback.requests])
    assert KEY not in dumped
    assert "SECRET" not in dumped
    assert all(r.headers.get("authorization") == "REDACTED" for r in loopback.chat_requests())


def test_async_calls_run_concurrently(loopback: LoopbackServer) -> None:
    loopback.latency = 0.3
    # As a hosted provider (a server on this machine gets one call at a time
    # unless told otherwise: tests/pipeline/test_local_server_slots.py).
    model = model_for(loopback, provider_concurrency=16)

    async def many() -> list[Completion]:
        return await asyncio.gather(*(model.acomplete(decide_request(f"question {i}")) for i in range(6)))

    started = time.monotonic()
    outs = asyncio.run(many())
    elapsed = time.monotonic() - started
    assert all(o.error is None for o in outs)
    assert elapsed < 6 * 0.3  # overlapping, not one after another


def test_retry_after_parsing() -> None:
    import httpx

    class FakeError(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            super().__init__("x")
            self.response = httpx.Response(429, headers=headers)

    assert _retry_after(FakeError({"Retry-After": "2.5"})) == 2.5
    assert _retry_after(FakeError({"retry-after-ms": "1500"})) == 1.5
    future = time.time() + 10
    import email.utils

    date = email.utils.formatdate(future, usegmt=True)
    value = _retry_after(FakeError({"Retry-After": date}))
    assert value is not None
    assert 8 <= value <= 10.5
    assert _retry_after(FakeError({})) is None
    assert _retry_after(FakeError({"Retry-After": "soon"})) is None


def test_calls_from_many_event_loops_keep_litellm_on_one(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    import gc

    caplog.set_level(logging.WARNING)
    model = model_for(loopback)
    for i in range(3):  # a notebook: one asyncio.run per question, plus sync calls
        assert asyncio.run(model.acomplete(decide_request(f"loop {i}"))).error is None
        assert model.complete(decide_request(f"sync {i}")).error is None
    gc.collect()
    noisy = [r.getMessage() for r in caplog.records if r.name in {"asyncio", "LiteLLM"}]
    assert noisy == []
