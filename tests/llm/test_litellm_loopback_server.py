"""The LoopbackServer itself, spoken to with a plain HTTP client."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping

import httpx
import pytest

from selfrag_nb.llm.schemas import OUTPUTS
from selfrag_nb.testing import FAILURE_MODES, LoopbackServer, default_responder, infer_role


def chat(server: LoopbackServer, body: Mapping[str, object], **headers: str) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json=body, headers=headers, timeout=5)


def test_chat_answer_has_openai_shape_and_word_count_usage(loopback: LoopbackServer) -> None:
    body = {"model": "loopback", "messages": [{"role": "user", "content": "one two three"}]}
    r = chat(loopback, body, Authorization="Bearer sk-very-secret-value")
    assert r.status_code == 200
    data = r.json()
    content = data["choices"][0]["message"]["content"]
    assert data["usage"]["prompt_tokens"] == 3
    assert data["usage"]["completion_tokens"] == len(content.replace("'", " ").replace(".", " ").split())
    received = loopback.requests[-1]
    assert received.body == body
    assert received.authorized is True
    assert received.headers["authorization"] == "REDACTED"
    assert "sk-very-secret-value" not in repr(loopback.requests)


def test_default_responder_answers_every_role_in_its_schema() -> None:
    for role, schema in OUTPUTS.items():
        body = {
            "messages": [{"role": "user", "content": "q"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": schema.__name__}},
        }
        assert infer_role(body) == role
        raw = default_responder(body)
        if role == "generate":
            assert raw.startswith("This is the loopback server's answer")
        else:
            schema.model_validate_json(raw)  # valid for the role's output schema


def test_role_inferred_from_prompt_keywords() -> None:
    def body(text: str) -> dict[str, object]:
        return {"messages": [{"role": "system", "content": text}]}

    assert infer_role(body('Return {"relevanceScore": 0-100, "isRelevant": ...}')) == "grade"
    assert infer_role(body("Answer RETRIEVE or NO_RETRIEVE")) == "decide"
    assert infer_role(body("list supportedClaims and unsupportedClaims")) == "verify"
    assert infer_role(body("Write the answer.")) == "generate"


def test_reply_sets_a_responder_and_none_restores_default(loopback: LoopbackServer) -> None:
    loopback.reply(lambda body: "custom:" + str(body["messages"][-1]["content"]))
    r = chat(loopback, {"messages": [{"role": "user", "content": "hi"}]})
    assert r.json()["choices"][0]["message"]["content"] == "custom:hi"
    loopback.reply(None)
    r = chat(loopback, {"messages": [{"role": "user", "content": "hi"}]})
    assert r.json()["choices"][0]["message"]["content"].startswith("This is the loopback")


def test_failure_modes_over_raw_http(loopback: LoopbackServer) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    loopback.fail("429", retry_after=2.5)
    r = chat(loopback, body)
    assert r.status_code == 429
    assert r.headers["retry-after"] == "2.5"
    for mode, status in (("500", 500), ("502", 502), ("401", 401), ("403", 403)):
        loopback.fail(mode)
        assert chat(loopback, body).status_code == status
    loopback.fail("empty")
    assert chat(loopback, body).content == b""
    loopback.fail("malformed")
    with pytest.raises(json.JSONDecodeError):
        json.loads(chat(loopback, body).content)
    loopback.fail("wrong_shape")
    assert "choices" not in chat(loopback, body).json()
    loopback.fail("truncated")
    with pytest.raises(httpx.HTTPError):
        chat(loopback, body)
    assert chat(loopback, body).status_code == 200  # queue drained
    with pytest.raises(ValueError, match="unknown failure mode"):
        loopback.fail("explode")
    with pytest.raises(ValueError, match="times"):
        loopback.fail("500", times=0)
    assert "timeout" in FAILURE_MODES


def test_models_route_and_unknown_routes(loopback: LoopbackServer) -> None:
    assert httpx.get(f"{loopback.url}/models").json()["data"][0]["id"] == "loopback"
    assert httpx.get(f"{loopback.url}/nothing").status_code == 404
    assert httpx.post(f"{loopback.url}/nothing", json={"a": 1}).status_code == 404
    assert httpx.post(f"{loopback.url}/chat/completions", content=b"{bad").status_code == 400


def test_stop_wakes_a_stalled_timeout_handler() -> None:
    server = LoopbackServer(timeout_sleep=30).start()
    server.fail("timeout")
    errors: list[BaseException] = []

    def call() -> None:
        try:
            chat(server, {"messages": [{"role": "user", "content": "hi"}]})
        except httpx.HTTPError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.3)  # the handler is now sleeping
    started = time.monotonic()
    server.stop()
    caller.join(timeout=5)
    assert time.monotonic() - started < 2.0
    assert not caller.is_alive()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.url


def test_latency_is_applied() -> None:
    with LoopbackServer(latency=0.2) as server:
        started = time.monotonic()
        chat(server, {"messages": [{"role": "user", "content": "hi"}]})
        assert time.monotonic() - started >= 0.2
    with pytest.raises(ValueError, match="latency"):
        LoopbackServer(latency=-1)
