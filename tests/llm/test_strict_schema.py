"""The schema sent with "strict": true obeys strict structured output's rules,
and an answer that satisfies it parses into the role's output.

The rules (OpenAI structured outputs, strict mode; written here from the
documentation, not from the transformer): the root is an object, not anyOf;
every object has ``additionalProperties: false`` and lists every property in
``required`` (an optional value is a union with null); ``$ref`` points into
``$defs``; types are string, number, integer, boolean, object, array, null;
no ``default`` and only supported keywords.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.litellm_model import LiteLLMModel
from selfrag_nb.llm.parsing import parse
from selfrag_nb.llm.schemas import OUTPUTS, ROLES, GradeInputs, Message
from selfrag_nb.llm.strict_schema import strict_schema

TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
ALLOWED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "title",
    "description",
}


def violations(schema: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    defs = schema.get("$defs", {})
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("root must be an object, not anyOf")

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            problems.append(f"{where}: not a schema")
            return
        for key in node:
            if key not in ALLOWED:
                problems.append(f"{where}: keyword {key!r} not allowed")
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) != 1:
                problems.append(f"{where}: $ref with siblings")
            if not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs):
                problems.append(f"{where}: $ref {ref!r} not into $defs")
            return
        if "anyOf" in node:
            for i, sub in enumerate(node["anyOf"]):
                walk(sub, f"{where}.anyOf[{i}]")
            return
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if not kinds or any(k not in TYPES for k in kinds):
            problems.append(f"{where}: type {kind!r}")
        if "object" in kinds:
            props = node.get("properties")
            if not isinstance(props, dict):
                problems.append(f"{where}: object without properties")
                props = {}
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            if sorted(node.get("required", [])) != sorted(props):
                problems.append(f"{where}: required must list every property")
            for name, sub in props.items():
                walk(sub, f"{where}.{name}")
        if "array" in kinds:
            walk(node.get("items"), f"{where}[]")

    walk(schema, "$")
    for name, sub in defs.items():
        walk(sub, f"$defs.{name}")
    return problems


def instance(node: dict[str, Any], defs: dict[str, Any], *, full: bool) -> Any:
    """A value the strict schema accepts: nulls and empty lists when not
    ``full``, else every optional filled and one item per list."""
    if "$ref" in node:
        return instance(defs[node["$ref"].split("/")[-1]], defs, full=full)
    if "anyOf" in node:
        options = node["anyOf"]
        nulls = [o for o in options if o.get("type") == "null"]
        if nulls and not full:
            return None
        return instance(next(o for o in options if o.get("type") != "null"), defs, full=full)
    if "enum" in node:
        return node["enum"][-1 if full else 0]
    kind = node.get("type")
    if kind == "object":
        return {k: instance(v, defs, full=full) for k, v in node["properties"].items()}
    if kind == "array":
        return [instance(node["items"], defs, full=full)] if full else []
    return {"string": "text", "integer": 1, "number": 0.5, "boolean": True, "null": None}[kind]


@pytest.mark.parametrize("role", ROLES)
def test_strict_schema_obeys_the_rules(role: str) -> None:
    schema = strict_schema(OUTPUTS[role])
    assert violations(schema) == []
    # The pydantic schema itself is not strict-valid (what this fixes).
    assert violations(OUTPUTS[role].model_json_schema()) != []


def test_the_validator_catches_each_rule() -> None:
    ok = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert violations({**ok, "additionalProperties": False}) == []
    assert violations(ok)  # additionalProperties missing
    assert violations({**ok, "additionalProperties": False, "required": []})
    bad_default = {"type": "string", "default": ""}
    assert violations({**ok, "additionalProperties": False, "properties": {"a": bad_default}})
    assert violations({"anyOf": [{**ok, "additionalProperties": False}]})


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("full", [False, True])
def test_an_answer_that_satisfies_the_strict_schema_parses(role: str, full: bool) -> None:
    schema = strict_schema(OUTPUTS[role])
    value = instance(schema, schema.get("$defs", {}), full=full)
    if role == "grade":
        value["relevanceScore"] = 85  # in range (the dropped bound is still checked)
    if role == "verify" and full:
        value["overallConfidence"] = 90
    out, err = parse(role, json.dumps(value))
    assert err is None, (value, err)
    assert isinstance(out, OUTPUTS[role])


def test_litellm_model_sends_the_strict_schema() -> None:
    model = LiteLLMModel("openai/x", api_base="http://127.0.0.1:9/v1", api_key="sk-x", response_format=True)
    request = ModelRequest(
        role="grade",
        messages=[Message(role="user", content="q")],
        output_schema=OUTPUTS["grade"],
        inputs=GradeInputs(question="q", text="t"),
    )
    fmt = model._response_format(None, request)
    assert fmt is not None
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "RelevanceOut"
    assert fmt["json_schema"]["schema"] == strict_schema(OUTPUTS["grade"])
    assert violations(fmt["json_schema"]["schema"]) == []
