"""Which ``response_format`` a chat request carries: per model and per server.

    LiteLLMModel(response_format=...)       role "generate" -> none (prose with citations)
      False                                 -> none: the prompt alone asks for JSON
      True or "json_schema"                 -> {"type": "json_schema", "json_schema":
                                                {"name", "schema": strict schema, "strict": true}}
                                               (OpenAI and the providers LiteLLM maps it to)
      "json_object_schema"                  -> {"type": "json_object", "schema": {...}}
                                               (llama.cpp's server: it constrains the answer
                                                to the schema and refuses "json_schema")
      "json_object"                         -> {"type": "json_object"}: JSON mode, no schema
      None (default)                        -> from LiteLLM's model info: "json_schema" where
                                               supported, else "json_object" where the provider
                                               takes response_format, else none

Why a choice and not one form: OpenAI-compatible servers disagree on the
shape. A server that refuses the form it is sent fails every JSON call (HTTP
400 or 500), which is a provider error on every grade, not an answer; the
server's own form is the fix, and it is one argument.
"""

from __future__ import annotations

from typing import Any, Literal

from selfrag_nb.errors import InputError
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.strict_schema import strict_schema

__all__ = ["RESPONSE_FORMATS", "ResponseFormat", "check_response_format", "response_format_for"]

#: The forms ``LiteLLMModel(response_format=...)`` accepts by name.
RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object")
ResponseFormat = bool | Literal["json_schema", "json_object_schema", "json_object"] | None


def check_response_format(value: object) -> ResponseFormat:
    """``value`` if it is a known setting, else an InputError naming the choices."""
    if value is None or isinstance(value, bool) or value in RESPONSE_FORMATS:
        return value  # type: ignore[return-value]  # narrowed by the test above
    raise InputError(
        f"response_format must be None (decide from the model), True, False or one of "
        f"{', '.join(repr(f) for f in RESPONSE_FORMATS)}; got {value!r}"
    )


def response_format_for(
    litellm: Any, model: str, api_base: str | None, setting: ResponseFormat, request: ModelRequest
) -> dict[str, Any] | None:
    """The ``response_format`` of one request (None: send none)."""
    # The answer of "generate" is prose with citations: never force JSON.
    if request.role == "generate" or setting is False:
        return None
    if setting == "json_object":
        return {"type": "json_object"}
    schema = strict_schema(request.output_schema)
    if setting == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    named = {
        "type": "json_schema",
        "json_schema": {"name": request.output_schema.__name__, "schema": schema, "strict": True},
    }
    if setting is True or setting == "json_schema":
        return named
    try:
        if litellm.supports_response_schema(model):
            return named
    except Exception:  # noqa: BLE001, S110 - unknown model: ask the next question
        pass
    try:
        name, provider, _key, _base = litellm.get_llm_provider(model, api_base=api_base)
        params = litellm.get_supported_openai_params(name, custom_llm_provider=provider) or []
    except Exception:  # noqa: BLE001 - unknown: send nothing, the prompt asks for JSON
        params = []
    return {"type": "json_object"} if "response_format" in params else None
