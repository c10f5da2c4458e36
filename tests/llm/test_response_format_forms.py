"""The response_format form is chosen per server: OpenAI takes
{"type": "json_schema", ...}; llama.cpp's server takes
{"type": "json_object", "schema": {...}} and refuses json_schema. Checked on
the request body a real HTTP server receives through LiteLLM."""

from __future__ import annotations

from typing import Any

import pytest

from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.litellm_model import LiteLLMModel
from selfrag_nb.llm.schemas import OUTPUTS, GenerateInputs, GradeInputs, Message
from selfrag_nb.llm.strict_schema import strict_schema
from selfrag_nb.testing import LoopbackServer

KEY = "sk-loopback-forms"


def _grade() -> ModelRequest:
    return ModelRequest(
        role="grade",
        messages=[Message(role="user", content="Is this relevant?")],
        output_schema=OUTPUTS["grade"],
        inputs=GradeInputs(question="q", text="t"),
    )


def _sent(server: LoopbackServer, fmt: object, request: ModelRequest | None = None) -> Any:
    model = LiteLLMModel("openai/loopback", api_base=server.url, api_key=KEY, response_format=fmt)  # type: ignore[arg-type]  # the choices are the point
    out = model.complete(request or _grade())
    assert out.error is None, out.error
    body = server.chat_requests()[-1].body
    assert body is not None
    return body.get("response_format")


def test_llama_cpp_form_sends_the_schema_inside_json_object(loopback: LoopbackServer) -> None:
    fmt = _sent(loopback, "json_object_schema")
    assert fmt == {"type": "json_object", "schema": strict_schema(OUTPUTS["grade"])}


def test_openai_form_by_name_and_by_true(loopback: LoopbackServer) -> None:
    for choice in ("json_schema", True):
        fmt = _sent(loopback, choice)
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["name"] == "RelevanceOut"
        assert fmt["json_schema"]["schema"] == strict_schema(OUTPUTS["grade"])


def test_json_mode_and_none(loopback: LoopbackServer) -> None:
    assert _sent(loopback, "json_object") == {"type": "json_object"}
    assert _sent(loopback, False) is None


def test_generate_is_never_forced_into_json(loopback: LoopbackServer) -> None:
    gen = ModelRequest(
        role="generate",
        messages=[Message(role="user", content="Answer.")],
        output_schema=OUTPUTS["generate"],
        inputs=GenerateInputs(question="q"),
    )
    assert _sent(loopback, "json_object_schema", gen) is None


@pytest.mark.parametrize("bad", ["json", "JSON_SCHEMA", 1, {"type": "json_object"}])
def test_an_unknown_form_is_refused_naming_the_choices(bad: object) -> None:
    with pytest.raises(ValueError, match="json_object_schema"):
        LiteLLMModel("openai/x", api_base="http://127.0.0.1:9/v1", response_format=bad)  # type: ignore[arg-type]  # wrong on purpose
