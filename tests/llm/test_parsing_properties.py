"""Property-based: no malformed model output makes ``parse`` raise, for
every role. Arbitrary text, arbitrary JSON values, truncated JSON, huge
numbers, NaN/inf, deep nesting, fences and prose around it all."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from selfrag_nb.llm.parsing import parse
from selfrag_nb.llm.schemas import OUTPUTS, ROLES

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = st.sampled_from(
    [
        "relevanceScore",
        "isRelevant",
        "keyInfo",
        "gaps",
        "decision",
        "reason",
        "rewrites",
        "index",
        "score",
        "ranking",
        "results",
        "action",
        "options",
        "answer",
        "claims",
        "claim",
        "verdict",
        "evidence",
        "doc",
        "quote",
        "cited",
        "supportedClaims",
        "unsupportedClaims",
        "overallConfidence",
        "recommendation",
        "isFullySupported",
        "相关性评分",
        "是否相关",
        "推荐",
        "建议",
        "x",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(
        ["85", "85分", "85%", "是", "true", "ACCEPT", "partial", "NO_RETRIEVE", "[2]", "1e999", "NaN"]
    )
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=25,
)


def check(role: str, raw: object) -> None:
    out, err = parse(role, raw)
    assert (out is None) != (err is None)
    if out is not None:
        assert isinstance(out, OUTPUTS[role])
        assert isinstance(out, BaseModel)
        # anything accepted survives a JSON round trip and has finite numbers
        again = type(out).model_validate_json(out.model_dump_json())
        assert again == out
        for item in getattr(out, "ranking", []):
            assert math.isfinite(item.score)
    else:
        assert isinstance(err, str)
        assert err


@FAST
@given(role=st.sampled_from(ROLES), raw=st.text(max_size=300))
def test_parsing_arbitrary_text_never_raises(role: str, raw: str) -> None:
    check(role, raw)


@FAST
@given(
    role=st.sampled_from(ROLES),
    value=JSON_VALUES,
    wrap=st.sampled_from(["plain", "fence", "prose", "single"]),
)
def test_parsing_arbitrary_json_never_raises(role: str, value: object, wrap: str) -> None:
    text = json.dumps(value, ensure_ascii=False)  # NaN/Infinity are emitted as such
    if wrap == "fence":
        text = f"```json\n{text}\n```"
    elif wrap == "prose":
        text = f"Here you go:\n{text}\nThanks!"
    elif wrap == "single":
        text = text.replace('"', "'")
    check(role, text)


@FAST
@given(role=st.sampled_from(ROLES), value=JSON_VALUES, cut=st.integers(min_value=0, max_value=400))
def test_parsing_truncated_json_never_raises(role: str, value: object, cut: int) -> None:
    text = json.dumps(value, ensure_ascii=False)
    check(role, text[: cut % (len(text) + 1)])


@FAST
@given(role=st.sampled_from(ROLES), junk=st.text(alphabet="{}[]\"',:：，\\ \n`0123456789.-eE", max_size=200))
def test_parsing_bracket_soup_never_raises(role: str, junk: str) -> None:
    check(role, junk)


def test_parsing_pathological_inputs_never_raise() -> None:
    deep = "[" * 5000 + "]" * 5000
    deep_obj = '{"a":' * 3000 + "1" + "}" * 3000
    huge_int = '{"relevanceScore": ' + "9" * 5000 + ', "isRelevant": true}'
    big_list = "[" + ",".join(str(i) for i in range(20000)) + "]"
    many_braces = "{" * 100_000
    bare_keys = "{a" * 50_000
    unterminated = '{"keyInfo": "' + "x" * 150_000
    for role in ROLES:
        for raw in (
            deep,
            deep_obj,
            huge_int,
            big_list,
            many_braces,
            bare_keys,
            unterminated,
            "\x00\ufeff",
            "```",
            "```json",
            b"bytes",
            42,
        ):
            check(role, raw)
