"""Cassette record over real HTTP, then replay with the server gone."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from selfrag_nb.errors import ModelError
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.cassette import Cassette, CassetteModel
from selfrag_nb.llm.litellm_model import LiteLLMModel
from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, GenerateInputs, GenerateOut, Message
from selfrag_nb.testing import LoopbackServer

KEY = "sk-cassette-SECRET-0123456789abcdef"


def decide(question: str) -> ModelRequest:
    return ModelRequest(
        role="decide",
        messages=[Message(role="system", content="Answer JSON."), Message(role="user", content=question)],
        output_schema=DecisionOut,
        inputs=DecideInputs(question=question),
    )


def generate(question: str) -> ModelRequest:
    return ModelRequest(
        role="generate",
        messages=[Message(role="user", content=question)],
        output_schema=GenerateOut,
        inputs=GenerateInputs(question=question),
    )


def test_record_then_replay_with_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with LoopbackServer() as server:
        live = LiteLLMModel("openai/loopback", api_base=server.url, api_key=KEY)
        recorder = CassetteModel(live, Cassette(path, mode="record"))
        recorded = [
            recorder.complete(decide("What is the refund window?")),
            recorder.complete(generate("Cite [1].")),
        ]
        assert len(server.chat_requests()) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["role"] == "decide"
    assert first["model"] == "openai/loopback"
    assert first["schema"] == "DecisionOut"

    # Server is gone, no inner model, no key: replay answers from the file.
    player = CassetteModel(None, Cassette(path))
    assert player.name == "openai/loopback"
    replayed = [player.complete(decide("What is the refund window?")), player.complete(generate("Cite [1]."))]
    for old, new in zip(recorded, replayed, strict=True):
        assert new.raw == old.raw
        assert new.tokens_in == old.tokens_in
        assert new.tokens_out == old.tokens_out
        assert new.cached is False
        assert new.extra["replayed"] is True


def test_replay_miss_names_role_model_message_and_path(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with LoopbackServer() as server:
        live = LiteLLMModel("openai/loopback", api_base=server.url, api_key=KEY)
        CassetteModel(live, Cassette(path, mode="record")).complete(decide("recorded question"))
    player = CassetteModel(None, Cassette(path))
    long_question = "Is this question in the cassette? " + "x" * 200
    with pytest.raises(ModelError) as info:
        player.complete(decide(long_question))
    message = str(info.value)
    assert "'decide'" in message
    assert "openai/loopback" in message
    assert long_question[:80] in message
    assert long_question[:81] not in message
    assert str(path) in message


def test_replay_of_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        Cassette(tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match="needs an inner model"):
        CassetteModel(None, Cassette(tmp_path / "new.jsonl", mode="record"))
    with pytest.raises(ValueError, match="mode"):
        Cassette(tmp_path / "x.jsonl", mode="rewind")  # type: ignore[arg-type]  # deliberately invalid


def test_corrupt_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"key": "k", "completion": {"raw": "x", "model": "m"}}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        Cassette(path)


def test_auto_mode_replays_known_and_records_new(loopback: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "auto.jsonl"
    live = LiteLLMModel("openai/loopback", api_base=loopback.url, api_key=KEY)
    model = CassetteModel(live, Cassette(path, mode="auto"))
    model.complete(decide("one"))
    again = model.complete(decide("one"))
    assert again.extra["replayed"] is True
    model.complete(decide("two"))
    assert len(loopback.chat_requests()) == 2
    assert len(Cassette(path)) == 2


def test_errors_are_recorded_but_auto_retries_them(loopback: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "err.jsonl"
    live = LiteLLMModel("openai/loopback", api_base=loopback.url, api_key=KEY, max_retries=0)
    loopback.fail("500")
    failed = CassetteModel(live, Cassette(path, mode="record")).complete(decide("q"))
    assert failed.error is not None
    # Replay reproduces the failure (same trace, same fallback) ...
    replayed = CassetteModel(None, Cassette(path)).complete(decide("q"))
    assert replayed.error == failed.error
    # ... while auto mode asks the provider again.
    fixed = CassetteModel(live, Cassette(path, mode="auto")).complete(decide("q"))
    assert fixed.error is None
    assert "replayed" not in fixed.extra


def test_keys_never_reach_the_cassette(loopback: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "secret.jsonl"
    # A provider that echoes the key back, and an error that would print it.
    loopback.reply(lambda body: f"my key is {KEY}, ok")
    live = LiteLLMModel("openai/loopback", api_base=loopback.url, api_key=KEY, max_retries=0)
    model = CassetteModel(live, Cassette(path, mode="record"))
    echoed = model.complete(decide("what is my key?"))
    assert KEY not in echoed.raw
    model.complete(decide(f"user pasted a key: {KEY}"))
    loopback.fail("500")
    model.complete(decide("third"))
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") == 3
    assert KEY not in text
    assert "SECRET" not in text
    assert "[REDACTED]" in text


def test_concurrent_records_write_whole_lines(loopback: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "parallel.jsonl"
    live = LiteLLMModel("openai/loopback", api_base=loopback.url, api_key=KEY)
    model = CassetteModel(live, Cassette(path, mode="record"))
    threads = [
        threading.Thread(target=model.complete, args=(decide(f"question {i} " * 50),)) for i in range(12)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12
    assert all(json.loads(line)["role"] == "decide" for line in lines)
    assert len(Cassette(path)) == 12
