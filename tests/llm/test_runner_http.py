"""ModelRunner over real HTTP: LiteLLMModel against the loopback
OpenAI-compatible server. The repair turn goes over the wire, usage flows
into the record, and the API key never reaches the record."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from selfrag_nb.errors import ModelError
from selfrag_nb.llm.runner import ModelRunner
from selfrag_nb.llm.schemas import CONSERVATIVE_DEFAULTS, GradeInputs
from selfrag_nb.testing import LoopbackServer

KEY = "sk-loopback-SECRET-0123456789abcdef"
GRADE_IN = GradeInputs(
    question="What is the refund window?", text="Refunds within 30 days.", source="refund.md"
)


def test_runner_http_repair_over_the_wire_and_no_key_in_the_record(loopback: LoopbackServer) -> None:
    answers: Iterator[str] = iter(
        [
            f"I'd say relevant! (debug: key={KEY})",
            json.dumps({"relevanceScore": 91, "isRelevant": True, "keyInfo": "30 days", "gaps": ""}),
        ]
    )
    loopback.reply(lambda body: next(answers))
    r = ModelRunner("openai/loopback-model", api_base=loopback.url, api_key=KEY, timeout=10)
    res = r.call("grade", GRADE_IN)
    assert res.ok
    assert res.call.parse_status == "repaired"
    assert res.output.relevanceScore == 91
    chats = loopback.chat_requests()
    assert len(chats) == 2
    assert all(c.authorized for c in chats)
    body: dict[str, Any] = chats[1].body or {}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # the repair turn, as sent
    assert res.call.tokens_in is not None
    assert res.call.tokens_in > 0
    assert res.call.model == "openai/loopback-model"
    assert KEY not in res.call.model_dump_json()
    assert KEY not in repr(r)


def test_runner_http_rejected_credentials_raise_without_the_key(loopback: LoopbackServer) -> None:
    loopback.fail("401")
    r = ModelRunner("openai/loopback-model", api_base=loopback.url, api_key=KEY, timeout=10)
    with pytest.raises(ModelError) as info:  # a 401 is a configuration error, not a default
        r.call("grade", GRADE_IN)
    assert KEY not in str(info.value)


def test_runner_http_deadline_bounds_a_stalled_provider(loopback: LoopbackServer) -> None:
    loopback.fail("timeout")
    r = ModelRunner("openai/loopback-model", api_base=loopback.url, api_key=KEY, timeout=10)
    t0 = time.perf_counter()
    res = r.call("grade", GRADE_IN, deadline=time.monotonic() + 1.0)
    assert time.perf_counter() - t0 < 3.0
    assert res.call.parse_status == "error"
    assert res.output == CONSERVATIVE_DEFAULTS["grade"]
    assert KEY not in res.call.model_dump_json()
