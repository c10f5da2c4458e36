"""The JSON schema sent as ``response_format``: a strict-mode-valid rewrite of
a role's pydantic output schema.

    OUTPUTS[role].model_json_schema()
      -> every object: additionalProperties false, every property in required
      -> a property with a default (optional): its schema, or null
         (anyOf [..., {"type": "null"}]); an optional list stays a required
         list (the model sends [] for "none")
      -> $ref kept alone ($defs kept, each rewritten the same way)
      -> "default" and the constraint keywords strict mode refuses or ignores
         (minimum, maxLength, pattern, minItems, ...) dropped
    = strict_schema(model)   cached per class, a fresh copy per call

Strict mode (OpenAI-style ``"strict": true``) makes the provider decode only
output that matches the schema. Dropped constraints are still checked: the
answer goes through ``parsing.parse`` and pydantic validation as before, and
parsing reads a null as the field's default.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic import BaseModel

__all__ = ["strict_schema"]

#: Keywords removed: a default (not allowed in strict mode) and constraints
#: that strict mode does not support on every provider; pydantic checks them.
_DROPPED = frozenset(
    {
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "contains",
        "minContains",
        "maxContains",
    }
)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema, rewritten for strict structured output."""
    return copy.deepcopy(_cached(model))


@functools.lru_cache(maxsize=64)
def _cached(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    out = _node(raw)
    defs = raw.get("$defs")
    if isinstance(defs, dict):
        out["$defs"] = {name: _node(sub) for name, sub in defs.items()}
    return out


def _node(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"$ref": schema["$ref"]}  # strict mode: a $ref stands alone
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED or key in {"$defs", "required", "additionalProperties"}:
            continue
        if key == "properties":
            required = set(schema.get("required", ()))
            out[key] = {name: _property(sub, name in required) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _node(value)
        elif key in {"anyOf", "oneOf", "allOf"}:
            out["anyOf" if key == "oneOf" else key] = [_node(v) for v in value]
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _property(schema: dict[str, Any], required: bool) -> dict[str, Any]:
    node = _node(schema)
    if required or node.get("type") == "array" or _nullable(node):
        return node
    return {"anyOf": [node, {"type": "null"}]}


def _nullable(node: dict[str, Any]) -> bool:
    return node.get("type") == "null" or any(v.get("type") == "null" for v in node.get("anyOf", ()))
