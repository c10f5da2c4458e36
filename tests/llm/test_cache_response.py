"""ResponseCache / CachedModel over real HTTP: a hit makes no request."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.cache import CachedModel, ResponseCache, request_key
from selfrag_nb.llm.litellm_model import LiteLLMModel
from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, Message, RelevanceOut
from selfrag_nb.testing import LoopbackServer

KEY = "sk-cache-SECRET-abcdef0123456789"


def request(question: str = "What is the refund window?", schema: type = DecisionOut) -> ModelRequest:
    return ModelRequest(
        role="decide",
        messages=[Message(role="system", content="Answer JSON."), Message(role="user", content=question)],
        output_schema=schema,
        inputs=DecideInputs(question=question),
    )


def live(server: LoopbackServer) -> LiteLLMModel:
    return LiteLLMModel("openai/loopback", api_base=server.url, api_key=KEY, max_retries=0)


def test_request_key_is_stable_and_sensitive() -> None:
    a = request_key("m", request())
    assert a == request_key("m", request())
    assert len(a) == 64
    assert a != request_key("other", request())
    assert a != request_key("m", request("Another question?"))
    assert a != request_key("m", request(schema=RelevanceOut))
    # Budgets do not change the answer, so they do not change the key.
    slow = request().model_copy(update={"timeout": 99.0, "deadline": 1e9})
    assert request_key("m", slow) == a


def test_second_call_is_a_hit_and_makes_no_http_request(loopback: LoopbackServer) -> None:
    model = CachedModel(live(loopback), ResponseCache())
    first = model.complete(request())
    assert first.cached is False
    assert len(loopback.chat_requests()) == 1
    second = model.complete(request())
    assert len(loopback.chat_requests()) == 1  # no new HTTP request
    assert second.cached is True
    assert second.raw == first.raw
    assert second.cost == 0.0
    assert second.tokens_in == first.tokens_in
    assert second.latency_ms < first.latency_ms
    assert model.cache.hits == 1
    assert model.cache.misses == 1
    assert model.name == "openai/loopback"


def test_async_hits_too(loopback: LoopbackServer) -> None:
    model = CachedModel(live(loopback))

    async def twice() -> tuple[Completion, Completion]:
        return await model.acomplete(request()), await model.acomplete(request())

    first, second = asyncio.run(twice())
    assert (first.cached, second.cached) == (False, True)
    assert len(loopback.chat_requests()) == 1


def test_errors_are_never_cached(loopback: LoopbackServer) -> None:
    model = CachedModel(live(loopback))
    loopback.fail("500")
    failed = model.complete(request())
    assert failed.error is not None
    ok = model.complete(request())
    assert ok.error is None
    assert ok.cached is False
    assert len(loopback.chat_requests()) == 2


def test_disk_cache_survives_a_new_instance(loopback: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    with ResponseCache(path=path) as cache:
        original = CachedModel(live(loopback), cache).complete(request())
    assert path.exists()
    with ResponseCache(path=path) as reopened:
        again = CachedModel(live(loopback), reopened).complete(request())
        assert len(reopened) == 1
    assert again.cached is True
    assert again.raw == original.raw
    assert len(loopback.chat_requests()) == 1
    # The key never reaches the file.
    assert KEY.encode() not in path.read_bytes()


def test_lru_evicts_least_recently_used(tmp_path: Path) -> None:
    cache = ResponseCache(max_entries=2, path=tmp_path / "c.sqlite")
    done = [Completion(raw=str(i), model="m") for i in range(3)]
    cache.put("a", done[0])
    cache.put("b", done[1])
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("c", done[2])
    assert "b" not in cache
    assert "a" in cache
    assert "c" in cache
    assert len(cache) == 2
    cache.close()
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        keys = {row[0] for row in db.execute("SELECT key FROM completions")}
    assert keys == {"a", "c"}


def test_bad_arguments_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_entries"):
        ResponseCache(max_entries=0)
    with pytest.raises(ValueError, match="is a directory"):
        ResponseCache(path=tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, just some bytes" * 100)
    with pytest.raises(ValueError, match="not a usable sqlite3 database"):
        ResponseCache(path=junk)
    with pytest.raises(TypeError, match="Model protocol"):
        CachedModel(object())  # type: ignore[arg-type]  # deliberately not a Model
