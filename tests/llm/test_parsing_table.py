"""Real-world messy model outputs, per role: what parses, to what, and what
is an error (so the runner makes its repair call)."""

from __future__ import annotations

from typing import Any

import pytest

from selfrag_nb.llm.json_extract import extract_json
from selfrag_nb.llm.parsing import parse

# (raw, expected fields) -- each must parse.
DECIDE_OK: list[tuple[str, str, str]] = [
    ("RETRIEVE|asks about the refund policy", "RETRIEVE", "asks about the refund policy"),
    ("NO_RETRIEVE|问候语，不需要文档", "NO_RETRIEVE", "问候语，不需要文档"),
    ("NO_RETRIEVE", "NO_RETRIEVE", ""),
    ("RETRIEVE", "RETRIEVE", ""),
    ("  NO_RETRIEVE | greeting  ", "NO_RETRIEVE", "greeting"),
    ("NO_RETRIEVE｜问候", "NO_RETRIEVE", "问候"),
    ("Decision: NO RETRIEVE - small talk", "NO_RETRIEVE", "small talk"),
    ("```\nRETRIEVE|policy question\n```", "RETRIEVE", "policy question"),
    ('{"decision": "NO_RETRIEVE", "reason": "hi"}', "NO_RETRIEVE", "hi"),
    ('```json\n{"decision": "RETRIEVE", "reason": "facts"}\n```', "RETRIEVE", "facts"),
    ('{"retrieve": false, "reason": "math"}', "NO_RETRIEVE", "math"),
    ("[No Retrieve] a greeting", "NO_RETRIEVE", "a greeting"),
    ("retrieve: company data", "RETRIEVE", "company data"),
    ("需要检索|涉及退款政策", "RETRIEVE", "涉及退款政策"),
    ("不需要检索|问候语", "NO_RETRIEVE", "问候语"),
    ("This concerns the pricing page, so: RETRIEVE", "RETRIEVE", "This concerns the pricing page, so"),
]


@pytest.mark.parametrize(("raw", "decision", "reason"), DECIDE_OK)
def test_parsing_decide(raw: str, decision: str, reason: str) -> None:
    out, err = parse("decide", raw)
    assert err is None, err
    assert out is not None
    assert out.decision == decision
    assert out.reason == reason


def test_parsing_no_retrieve_is_never_read_as_retrieve() -> None:
    for raw in ("NO_RETRIEVE", "no_retrieve|x", "NO-RETRIEVE", "NORETRIEVE|x", '{"decision":"NO_RETRIEVE"}'):
        out, _ = parse("decide", raw)
        assert out is not None, raw
        assert out.decision == "NO_RETRIEVE", raw


GRADE_OK: list[tuple[str, int, bool, str, str]] = [
    ('{"relevanceScore": 85, "isRelevant": true, "keyInfo": "30 days", "gaps": ""}', 85, True, "30 days", ""),
    (
        'Sure! Here is the JSON:\n```json\n{"relevanceScore": "85", "isRelevant": "true"}\n```\nHope it helps.',
        85,
        True,
        "",
        "",
    ),
    ('{"relevanceScore": "85分", "isRelevant": "是"}', 85, True, "", ""),
    ('{"relevanceScore": "72%", "isRelevant": "yes",}', 72, True, "", ""),
    ("{'relevanceScore': 40, 'isRelevant': False, 'keyInfo': 'unrelated'}", 40, False, "unrelated", ""),
    (
        '{"相关性评分": 90, "是否相关": "是", "关键信息": "退款30天", "缺失信息": "无"}',
        90,
        True,
        "退款30天",
        "无",
    ),
    ('{"relevance_score": 55.4, "is_relevant": 1, "key_info": ["a", "b"]}', 55, True, "a; b", ""),
    ('{"Relevance Score": "60/100", "Is Relevant": "Yes"}', 60, True, "", ""),
    ('{relevanceScore: 30, isRelevant: no, gaps: "no refund info"}', 30, False, "", "no refund info"),
    ("{“relevanceScore”： 81，“isRelevant”： true}", 81, True, "", ""),
    # isRelevant missing: derived from the 50 relevance cutoff
    ('{"relevanceScore": 49}', 49, False, "", ""),
    ('{"relevanceScore": 50, "keyInfo": "x"}', 50, True, "x", ""),
    ('```json\n{"relevanceScore": 85, "isRelevant": true, // very relevant\n}\n```', 85, True, "", ""),
]


@pytest.mark.parametrize(("raw", "score", "relevant", "key_info", "gaps"), GRADE_OK)
def test_parsing_grade(raw: str, score: int, relevant: bool, key_info: str, gaps: str) -> None:
    out, err = parse("grade", raw)
    assert err is None, err
    assert out is not None
    assert out.relevanceScore == score
    assert out.isRelevant is relevant
    assert out.keyInfo == key_info
    assert out.gaps == gaps


GRADE_ERRORS: list[tuple[str, str]] = [
    ('{"relevanceScore": 150, "isRelevant": true}', "less than or equal to 100"),  # no clamping
    ('{"relevanceScore": -5, "isRelevant": false}', "greater than or equal to 0"),
    ('{"relevanceScore": "high", "isRelevant": true}', "expected a number"),
    ('{"relevanceScore": NaN, "isRelevant": true}', "finite"),
    ('{"relevanceScore": 1e999, "isRelevant": true}', "finite"),
    ('{"relevanceScore": 80, "isRelevant": "maybe"}', "true or false"),
    ('{"isRelevant": true}', "relevanceScore"),
    ('{"relevanceScore": 85, "isRelevant": tr', "relevanceScore"),  # truncated
    ("The document is highly relevant.", "relevanceScore"),
    ("", "empty output"),
    ("[85, true]", "relevanceScore"),
]


@pytest.mark.parametrize(("raw", "fragment"), GRADE_ERRORS)
def test_parsing_grade_errors(raw: str, fragment: str) -> None:
    out, err = parse("grade", raw)
    assert out is None
    assert err is not None
    assert fragment in err


RERANK_OK: list[tuple[str, list[tuple[int, float]]]] = [
    ('[{"index": 2, "score": 91}, {"index": 0, "score": 40}]', [(2, 91.0), (0, 40.0)]),
    ("[2, 0, 1]", [(2, 3.0), (0, 2.0), (1, 1.0)]),
    ('["1", "0"]', [(1, 2.0), (0, 1.0)]),
    (
        '{"results": [{"index": 1, "relevance_score": 0.93}, {"index": 0, "relevance_score": 0.12}]}',
        [(1, 0.93), (0, 0.12)],
    ),
    ('{"ranking": [{"index": 0, "score": "80"}]}', [(0, 80.0)]),
    ('```json\n[{"idx": 1, "relevanceScore": 70},]\n```', [(1, 70.0)]),
    ('{"0": 0.2, "3": 0.9}', [(0, 0.2), (3, 0.9)]),
    ('Ranking:\n[{"index": 1}, {"index": 0}]', [(1, 2.0), (0, 1.0)]),
    ("[]", []),
]


@pytest.mark.parametrize(("raw", "expected"), RERANK_OK)
def test_parsing_rerank(raw: str, expected: list[tuple[int, float]]) -> None:
    out, err = parse("rerank", raw)
    assert err is None, err
    assert out is not None
    assert [(r.index, r.score) for r in out.ranking] == expected


@pytest.mark.parametrize(
    "raw",
    [
        '[{"index": 1, "score": Infinity}]',
        '[{"index": 1, "score": NaN}]',
        '[{"index": true, "score": 3}]',
        '[{"score": 3}]',
        '[{"index": "first", "score": 3}]',
        "[[1, 2]]",
        "no ranking here",
    ],
)
def test_parsing_rerank_protocol_errors(raw: str) -> None:
    out, err = parse("rerank", raw)
    assert out is None
    assert err


ASSESS_OK: list[tuple[str, dict[str, Any]]] = [
    ('{"action": "ANSWER", "reason": "covered"}', {"action": "ANSWER", "reason": "covered"}),
    (
        '{"action": "clarify", "reason": "which plan", "options": "Basic, Pro"}',
        {"action": "CLARIFY", "options": ["Basic", "Pro"]},
    ),
    (
        '{"action": "Refuse", "reason": "not covered", "conflict": "v1 vs v2", "applies": ""}',
        {"action": "REFUSE", "conflict": "v1 vs v2"},
    ),
    (
        '{"行动": "澄清", "理由": "缺少版本", "选项": ["v1", "v2"]}',
        {"action": "CLARIFY", "reason": "缺少版本", "options": ["v1", "v2"]},
    ),
    ('{"action": "拒答", "reason": "资料未覆盖"}', {"action": "REFUSE"}),
    (
        "REFUSE|the documents do not mention the v3 export",
        {"action": "REFUSE", "reason": "the documents do not mention the v3 export"},
    ),
    ("ANSWER", {"action": "ANSWER"}),
]


@pytest.mark.parametrize(("raw", "fields"), ASSESS_OK)
def test_parsing_assess(raw: str, fields: dict[str, Any]) -> None:
    out, err = parse("assess", raw)
    assert err is None, err
    assert out is not None
    for k, v in fields.items():
        assert getattr(out, k) == v


@pytest.mark.parametrize(
    "raw",
    [
        '{"action": "cannot answer"}',
        '{"action": "ANSWER | CLARIFY | REFUSE"}',
        '{"action": 3}',
        '{"reason": "x"}',
    ],
)
def test_parsing_assess_errors(raw: str) -> None:
    out, err = parse("assess", raw)
    assert out is None
    assert err


def test_parsing_generate_plain_text_and_json() -> None:
    text = "Refunds are accepted within 30 days [1].\n\n```python\nprint({1: 2})\n```"
    out, err = parse("generate", text)
    assert err is None
    assert out is not None
    assert out.answer == text
    out, _ = parse("generate", '{"answer": "30 days [1]"}')
    assert out is not None
    assert out.answer == "30 days [1]"
    out, _ = parse("generate", '```json\n{"答案": "30天 [1]"}\n```')
    assert out is not None
    assert out.answer == "30天 [1]"
    # A JSON answer without an answer field is taken as the text itself.
    out, _ = parse("generate", '{"config": {"retries": 3}}')
    assert out is not None
    assert out.answer == '{"config": {"retries": 3}}'
    assert parse("generate", "   ") == (None, "empty output")
    assert parse("generate", '{"answer": ""}') == (None, "empty answer")


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        # the JSON wrapper is unwrapped even when the answer holds a fence or a "[2]"
        (
            '{"answer": "Refunds take 30 days [2]. Use ```code``` sparingly."}',
            "Refunds take 30 days [2]. Use ```code``` sparingly.",
        ),
        ('{"answer":"Yes, [1] and [2] agree."}', "Yes, [1] and [2] agree."),
        ('Here is the answer:\n{"answer": "Refunds take 30 days [1]."}', "Refunds take 30 days [1]."),
        ('Based on the available information:\n```json\n{"answer": "30 days [1]"}\n```', "30 days [1]"),
        ("{'answer': 'Refunds take 30 days [1].',}", "Refunds take 30 days [1]."),
    ],
)
def test_parsing_generate_unwraps_a_json_answer(raw: str, answer: str) -> None:
    out, err = parse("generate", raw)
    assert err is None
    assert out is not None
    assert out.answer == answer


@pytest.mark.parametrize(
    "raw",
    [
        '{"answer":"```jinja [2]"}',
        'Based on the available information:\n{"answer":"```jinja [2]"}',
        '{"answer": "```bash\\npip install fetchy\\n```"}',
        '{"answer": "  "}',
        "```python\nimport fetchy\n```",
        "$ uvicorn example:app [1]",
        "import jiter",
        ">>> import jiter\n>>> jiter.from_json(b'1')",
    ],
)
def test_parsing_generate_wrapper_or_code_alone_is_no_answer(raw: str) -> None:
    """A code block, a command or an import line is not an answer, not even
    inside a JSON wrapper: an error (the runner's repair call reads it)."""
    out, err = parse("generate", raw)
    assert out is None
    assert err


def test_parsing_verify_prompt_format_derives_claims() -> None:
    raw = """```json
{
  "isFullySupported": false,
  "supportedClaims": ["Refunds within 30 days"],
  "unsupportedClaims": ["Refunds are paid in cash"],
  "overallConfidence": "70",
  "recommendation": "add disclaimer",
}
```"""
    out, err = parse("verify", raw)
    assert err is None, err
    assert out is not None
    assert [(c.claim, c.verdict) for c in out.claims] == [
        ("Refunds within 30 days", "supported"),
        ("Refunds are paid in cash", "unsupported"),
    ]
    assert out.overallConfidence == 70
    assert out.recommendation == "ADD_DISCLAIMER"


def test_parsing_verify_claims_derive_lists_and_full_support() -> None:
    raw = (
        '{"claims": [{"claim": "30 days", "verdict": "Supported", "evidence": [{"doc": "[1]", "quote": "within 30 days"}],'
        ' "cited": "[1]"}, {"claim": "cash", "verdict": "partially supported", "evidence": ["[2] paid by card"], "cited": [2]}],'
        ' "recommendation": "重新生成"}'
    )
    out, err = parse("verify", raw)
    assert err is None, err
    assert out is not None
    c0, c1 = out.claims
    assert (c0.verdict, c0.evidence[0].doc, c0.evidence[0].quote, c0.cited) == (
        "supported",
        1,
        "within 30 days",
        [1],
    )
    assert (c1.verdict, c1.evidence[0].doc, c1.evidence[0].quote) == ("partial", 2, "paid by card")
    assert out.supportedClaims == ["30 days"]
    assert out.unsupportedClaims == []
    assert out.isFullySupported is False
    assert out.recommendation == "REGENERATE"


def test_parsing_verify_chinese_labels() -> None:
    raw = '{"是否完全支撑": "否", "有支撑的声明": ["退款30天"], "没有支撑的声明": [], "整体置信度": "95分", "推荐": "接受"}'
    out, err = parse("verify", raw)
    assert err is None, err
    assert out is not None
    assert out.isFullySupported is False
    assert out.overallConfidence == 95
    assert out.recommendation == "ACCEPT"
    assert out.claims[0].verdict == "supported"


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"supportedClaims": [], "recommendation": "ACCEPT | ADD_DISCLAIMER | REGENERATE"}', "exactly one"),
        ('{"supportedClaims": [], "recommendation": "NOT ACCEPT"}', "recommendation"),
        ('{"claims": [{"claim": "x"}]}', "verdict"),
        ('{"claims": [{"claim": "x", "verdict": "maybe"}]}', "verdict"),
        ('{"supportedClaims": ["x"], "overallConfidence": 140}', "overallConfidence"),
        ('{"foo": 1}', "missing"),
    ],
)
def test_parsing_verify_errors(raw: str, fragment: str) -> None:
    out, err = parse("verify", raw)
    assert out is None
    assert err is not None
    assert fragment in err


def test_parsing_rewrite() -> None:
    out, err = parse(
        "rewrite", '{"rewrites": ["refund window ORD-1", "return period ORD-1"], "reason": "synonyms"}'
    )
    assert err is None
    assert out is not None
    assert out.rewrites == ["refund window ORD-1", "return period ORD-1"]
    out, _ = parse("rewrite", '["a", {"query": "b"}]')
    assert out is not None
    assert out.rewrites == ["a", "b"]
    out, _ = parse("rewrite", "1. refund window\n2) return period\n- money back")
    assert out is not None
    assert out.rewrites == ["refund window", "return period", "money back"]
    out, _ = parse("rewrite", '{"rewrites": [], "reason": "already specific"}')
    assert out is not None
    assert out.rewrites == []
    assert parse("rewrite", "I would search for refunds.")[0] is None


def test_parsing_unknown_role_and_non_text() -> None:
    assert parse("summarise", "x") == (None, "unknown role 'summarise'")
    assert parse("grade", None) == (None, "model output is not text (NoneType)")


def test_extract_json_prefers_fenced_blocks_and_tolerates_slips() -> None:
    text = 'prefix {"a": 1} then ```json\n{"b": [1, 2,],}\n```'
    values = list(extract_json(text))
    assert values[0] == {"b": [1, 2]}
    assert {"a": 1} in values
    assert list(extract_json("{'x': True, 'y': None}")) == [{"x": True, "y": None}]
    assert list(extract_json("no json at all")) == []


def test_parsing_rerank_keeps_a_text_reason_and_drops_anything_else() -> None:
    raw = '{"ranking": [{"index": 1, "score": 9, "why": " names the 30-day window "}, {"index": 0, "score": 2, "reason": 5}]}'
    out, err = parse("rerank", raw)
    assert err is None
    assert [(i.index, i.reason) for i in out.ranking] == [(1, "names the 30-day window"), (0, "")]
