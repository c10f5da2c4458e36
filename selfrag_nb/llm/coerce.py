"""Coerce one JSON value to the type a schema field wants. Raises ParseError.

    JSON value (from json_extract) ──> the coercer the field asks for:
      pick(obj, aliases)   first key whose canonical form (case, spaces, _ and -
                           ignored) is an alias -> (found, value)
      as_text              str / list ("; "-joined) / dict (JSON) -> str, <= MAX_TEXT chars
      as_number            85, 85.0, "85分", "85%", "85/100" -> float, finite only
      as_score             as_number, rounded; |n| > 1e9 rejected
      as_bool              true/false, 0/1, yes/no, 是/否, 相关/不相关 ...
      as_str_list          str -> [str]; list of str or {"text"|"query"|...: str}
      as_enum              spellings and substrings -> one table value; a
                           negation ("CANNOT ANSWER") or two matches -> ParseError
    bad value ──> ParseError("<field>: expected ..., got ...")   (model-readable)

Values are coerced, never invented: a score of 150 stays 150 for the schema
to reject. ``selfrag_nb.llm.parsing`` builds each role's output from these
and turns ParseError into the error of ``parse``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from selfrag_nb.errors import ParseError

__all__ = [
    "MAX_TEXT",
    "as_bool",
    "as_enum",
    "as_number",
    "as_score",
    "as_str_list",
    "as_text",
    "canon_key",
    "pick",
]

#: Longest text kept from one field; longer model output is cut, not rejected.
MAX_TEXT = 4000


def canon_key(key: object) -> str:
    return re.sub(r"[\s_\-]", "", str(key)).lower()


def pick(obj: dict[str, Any], aliases: tuple[str, ...]) -> tuple[bool, Any]:
    """(found, value) of the first key of ``obj`` whose canonical form is an alias."""
    canon = {canon_key(k): k for k in obj}
    for a in aliases:
        k = canon.get(canon_key(a))
        if k is not None:
            return True, obj[k]
    return False, None


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()[:MAX_TEXT]
    if isinstance(value, list):
        # Each item is rendered once: rendering it in the filter too doubled the
        # work per nesting level (2**depth calls on [[[...]]]).
        return "; ".join(t for t in map(as_text, value) if t)[:MAX_TEXT]
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)[:MAX_TEXT]
    return str(value)[:MAX_TEXT]


def as_number(value: Any, field: str) -> float:
    if isinstance(value, bool):
        raise ParseError(f"{field}: expected a number, got a boolean")
    if isinstance(value, int):
        return float(value) if abs(value) < 10**300 else math.inf
    if isinstance(value, float):
        num = value
    elif isinstance(value, str):
        m = re.fullmatch(
            r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:分|%|％|points?|pts?)?\s*(?:/\s*100)?\s*",
            value,
        )
        if m is None:
            raise ParseError(f"{field}: expected a number, got {value[:40]!r}")
        num = float(m.group(1))
    else:
        raise ParseError(f"{field}: expected a number, got {type(value).__name__}")
    if not math.isfinite(num):
        raise ParseError(f"{field}: must be a finite number")
    return num


def as_score(value: Any, field: str) -> int:
    num = as_number(value, field)
    if abs(num) > 10**9:
        raise ParseError(f"{field}: must be between 0 and 100 (got {num:g})")
    return round(num)


_TRUE = {"true", "yes", "y", "1", "是", "对", "相关", "是的", "relevant", "supported", "真"}
_FALSE = {"false", "no", "n", "0", "否", "不", "不相关", "无关", "irrelevant", "unsupported", "假", "不是"}


def as_bool(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        low = value.strip().strip("。.!！").lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    raise ParseError(f"{field}: expected true or false, got {str(value)[:40]!r}")


def as_str_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        out = []
        for item in value[:200]:
            if isinstance(item, dict):
                found, v = pick(item, ("text", "query", "claim", "value", "option", "rewrite", "content"))
                if not found or v is None:
                    raise ParseError(f"{field}: items must be strings")
            else:
                v = item
            if v is None:
                continue
            s = as_text(v)
            if s:
                out.append(s)
        return out
    raise ParseError(f"{field}: expected a list of strings, got {type(value).__name__}")


_NEGATION_RE = re.compile(r"NOT|CANNOT|CANT|DONT|NEVER|[不无没非勿未]")


def as_enum(value: Any, table: dict[str, str], field: str, allowed: str) -> str:
    if not isinstance(value, str):
        raise ParseError(f"{field}: expected one of {allowed}, got {str(value)[:40]!r}")
    key = re.sub(r"[\s_\-\"'`。.!！]", "", value).upper()
    if key in table:
        return table[key]
    if _NEGATION_RE.search(key):
        # "CANNOT ANSWER", "NOT ACCEPT": a substring match would invert the meaning.
        raise ParseError(f"{field}: expected exactly one of {allowed}, got {value[:60]!r}")
    hits = {v for k, v in table.items() if k and k in key}
    if len(hits) == 1:
        return hits.pop()
    if len(hits) > 1:
        raise ParseError(f"{field}: choose exactly one of {allowed}, got {value[:60]!r}")
    raise ParseError(f"{field}: expected one of {allowed}, got {value[:60]!r}")
