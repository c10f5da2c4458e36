"""Offline grade and rerank: the documented bands, exact IDs/versions/numbers,
CJK, metadata, rerank protocol (all indices, unique, finite)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from selfrag_nb.llm.offline.relevance import grade, rerank
from selfrag_nb.llm.schemas import GradeInputs, RerankInputs

REFUND = (
    "Customers can request a full refund within 14 days of purchase. "
    "Refunds are issued to the original payment method within 5 business days. "
    "Annual plans are refundable pro rata after 14 days."
)
API_KEYS = (
    "API keys can be rotated from Settings > API. Each workspace can hold up to 5 active keys. "
    "Old keys stop working 24 hours after rotation."
)
EXPORT_V2 = "In API v2, the export endpoint returns CSV and JSON. XML is not supported."
ORDERS = "Order ORD-2024-0042 was shipped on 3 March. Order ORD-2024-0043 is pending."
ZH_REFUND = "退款政策：购买后14天内可申请全额退款。退款将在5个工作日内原路返回。"
SSO = "Single sign-on (SAML) is available on the Enterprise plan only."


def _g(question: str, text: str, **kw: object) -> tuple[int, bool, str, str]:
    out = grade(GradeInputs(question=question, text=text, **kw))
    return out.relevanceScore, out.isRelevant, out.keyInfo, out.gaps


def test_grade_high_for_a_chunk_that_answers() -> None:
    score, relevant, key, gaps = _g("What is the refund window?", REFUND, title="Refund policy")
    assert score >= 80
    assert relevant
    assert key == "Customers can request a full refund within 14 days of purchase."
    assert gaps == ""


def test_grade_irrelevant_for_another_topic() -> None:
    score, relevant, key, gaps = _g("What is the refund window?", API_KEYS, title="API keys")
    assert key == ""
    assert score < 50
    assert not relevant
    assert "refund" in gaps


def test_grade_partial_band_when_part_of_the_question_is_missing() -> None:
    score, relevant, _, gaps = _g(
        "What is the refund window for annual plans bought through a reseller?", REFUND
    )
    assert 50 <= score < 80
    assert relevant
    assert "bought" in gaps
    assert "reseller" in gaps


def test_grade_uses_title_and_heading() -> None:
    text = "Open the dashboard and click Rotate next to the key."
    without, *_ = _g("How do I rotate API keys?", text)
    with_title, *_ = _g("How do I rotate API keys?", text, title="API keys", heading="Rotation")
    assert with_title > without
    assert with_title >= 80


def test_grade_a_chunk_that_was_only_markup_is_not_relevant() -> None:
    # A README's badge row under its title cleans to nothing: whatever the
    # title says, there is no sentence to quote or to check a claim against.
    from selfrag_nb.cleantext import clean_text

    badges = (
        "[![CI](https://github.com/acme/quillfmt/actions/workflows/ci.yaml/badge.svg)](https://github.com/acme/quillfmt)\n"
        "[![PyPI version](https://img.shields.io/pypi/v/quillfmt.svg)](https://pypi.org/project/quillfmt)\n"
    )
    text = clean_text(badges)
    assert text.strip() == ""
    score, relevant, key, gaps = _g("What is quillfmt?", text, title="quillfmt", heading="quillfmt")
    assert (score, relevant, key) == (0, False, "")
    assert "markup" in gaps


def test_grade_version_contradiction_caps_below_cutoff() -> None:
    match, *_ = _g("Which formats does the v2 export endpoint support?", EXPORT_V2)
    other, relevant, _, gaps = _g("Which formats does the v3 export endpoint support?", EXPORT_V2)
    assert match >= 80
    assert other <= 30
    assert not relevant
    assert "version 3" in gaps


def test_grade_version_from_metadata_counts() -> None:
    text = "The export endpoint supports CSV and JSON."
    score, *_ = _g("Which formats does the v3 export endpoint support?", text, metadata={"version": "v3"})
    missing, relevant, _, gaps = _g("Which formats does the v3 export endpoint support?", text)
    assert score >= 80
    assert missing < 50
    assert not relevant
    assert "version 3 not mentioned" in gaps


def test_grade_identifier_exact_match() -> None:
    hit, *_ = _g("Has order ORD-2024-0042 shipped?", ORDERS)
    miss, relevant, _, gaps = _g("Has order ORD-2024-0099 shipped?", ORDERS)
    assert hit >= 80
    assert miss < 50
    assert not relevant
    assert "ord-2024-0099" in gaps


def test_grade_negated_question_still_finds_the_negative_statement() -> None:
    score, relevant, key, _ = _g("Which export formats are not supported in API v2?", EXPORT_V2)
    assert relevant
    assert score >= 50
    assert "v2" in key


def test_grade_chinese() -> None:
    score, relevant, key, _ = _g("退款政策是什么？", ZH_REFUND, title="退款政策")
    assert score >= 80
    assert relevant
    assert "14天" in key
    off, relevant_off, *_ = _g("退款政策是什么？", API_KEYS)
    assert off == 0
    assert not relevant_off


def test_grade_key_info_is_extractive_and_short() -> None:
    long_text = ("Filler sentence about nothing in particular. " * 30) + SSO
    _, _, key, _ = _g("Is SSO available on the Enterprise plan?", long_text)
    assert key == SSO
    assert len(key) <= 201


def test_grade_band_edges_are_consistent() -> None:
    for question, text in [
        ("What is the refund window?", REFUND),
        ("What is the refund window?", API_KEYS),
        ("What is the refund window for annual plans bought through a reseller?", REFUND),
    ]:
        score, relevant, _, _ = _g(question, text)
        assert relevant == (score >= 50)
        assert 0 <= score <= 100


# ------------------------------------------------------------------ rerank


def test_rerank_puts_the_answering_chunk_first() -> None:
    candidates = [API_KEYS, SSO, ORDERS, REFUND, ZH_REFUND]
    out = rerank(RerankInputs(query="What is the refund window?", candidates=candidates))
    assert out.ranking[0].index == 3
    assert sorted(item.index for item in out.ranking) == list(range(len(candidates)))
    scores = [item.score for item in out.ranking]
    assert scores == sorted(scores, reverse=True)


def test_rerank_exact_identifier_wins_over_topic_words() -> None:
    candidates = [
        "Orders usually ship within two days; order status is shown on the orders page.",
        ORDERS,
    ]
    out = rerank(RerankInputs(query="status of order ORD-2024-0043", candidates=candidates))
    assert out.ranking[0].index == 1


def test_rerank_version_mismatch_ranks_lower() -> None:
    v3 = "In API v3, the export endpoint returns CSV, JSON and XML."
    out = rerank(RerankInputs(query="v3 export endpoint formats", candidates=[EXPORT_V2, v3]))
    assert out.ranking[0].index == 1


def test_rerank_chinese_query() -> None:
    out = rerank(RerankInputs(query="退款多久到账", candidates=[API_KEYS, ZH_REFUND]))
    assert out.ranking[0].index == 1


def test_rerank_empty_candidates() -> None:
    assert rerank(RerankInputs(query="anything", candidates=[])).ranking == []


@settings(max_examples=60, deadline=None)
@given(
    query=st.text(max_size=60),
    candidates=st.lists(st.text(max_size=200), max_size=12),
)
def test_rerank_protocol_holds_for_any_text(query: str, candidates: list[str]) -> None:
    out = rerank(RerankInputs(query=query, candidates=candidates))
    indices = [item.index for item in out.ranking]
    assert sorted(indices) == list(range(len(candidates)))
    assert all(math.isfinite(item.score) for item in out.ranking)
    again = rerank(RerankInputs(query=query, candidates=candidates))
    assert again == out


def test_rerank_gives_every_item_a_reason_a_reader_can_check() -> None:
    # The reason names what the ranking rests on: the keyword weight that
    # orders the candidates, the question's coverage, and the terms a chunk lacks.
    candidates = [API_KEYS, REFUND]
    out = rerank(RerankInputs(query="What is the refund window?", candidates=candidates))
    by_index = {item.index: item.reason for item in out.ranking}
    assert all(by_index.values())
    assert "keyword weight" in by_index[1]
    assert "covers" in by_index[1]
    assert "lacks" in by_index[0]
    assert "refund" in by_index[0]


def test_grade_which_things_question_is_answered_by_a_list_of_them() -> None:
    # "Which operating systems ...?" is answered by naming them; the list
    # stands for the kind's words, which it does not repeat.
    q = "Which operating systems does dirtool handle?"
    listed = "A package for finding folders. Handles the differences between macOS, Windows, Linux, Android, and iOS."
    score, relevant, _, _ = _g(q, listed, title="dirtool")
    assert relevant, score
    # Without a list the kind's words are still missing.
    bare = "A package for finding folders. Handles the differences between platforms for you."
    assert not _g(q, bare, title="dirtool")[1]
    # A list does not stand in for the words of a question that asks no "which <things>".
    assert _g("How does dirtool handle operating systems?", listed, title="dirtool")[0] < score


def test_rerank_puts_the_passage_that_defines_x_first_for_what_is_x() -> None:
    # Short passages that only name X outweigh a long one in BM25; "What is X?"
    # asks for the one that says "X is a ...".
    texts = [
        "It powers file uploads in Webkit and FastAPI.",
        "from webkit.applications import Webkit\napp = Webkit(routes=routes)",
        "Webkit is a lightweight ASGI framework/toolkit, which is ideal for building async web services "
        "in Python. It is production-ready, and gives you the following: a lightweight, low-complexity "
        "HTTP web framework, WebSocket support, in-process background tasks and startup events.",
    ]
    out = rerank(RerankInputs(query="What is Webkit?", candidates=texts))
    assert out.ranking[0].index == 2
    # A question that asks for a value is not a definition question.
    assert rerank(RerankInputs(query="What is the Webkit version?", candidates=texts)).ranking[0].index != 2


def test_grade_a_code_name_in_the_question_is_what_it_asks_about() -> None:
    """A class name ("CookieJarMiddleware") names one specific thing: a chunk
    naming it is about it, not merely sharing a product name, while the
    product's own name ("Brisket", a document named brisket.md) still is a
    shared name that alone does not make a chunk relevant."""
    question = "Which extra package do I need to install to use Brisket's CookieJarMiddleware?"
    answering = (
        "Brisket only requires anyio, and the following are optional:\n\n"
        "* signingkit - Required for CookieJarMiddleware support.\n"
        "* multipartlib - Required for form parsing.\n\n"
        "You can install all of these with pip install brisket[full]."
    )
    score, relevant, _, gaps = _g(question, answering, title="Brisket", source="docs/brisket.md")
    assert relevant, (score, gaps)
    assert "only the names" not in gaps
    product_only = "Brisket is a lightweight web toolkit, ideal for building services."
    score, relevant, _, gaps = _g(question, product_only, title="Brisket", source="docs/brisket.md")
    assert not relevant
    assert "only the names in the question match" in gaps


def test_grade_a_camel_case_product_name_of_the_document_is_still_a_shared_name() -> None:
    question = "Who started the SolverKit project in the summer?"
    text = "SolverKit is a library for symbolic mathematics, written entirely in Python."
    score, relevant, _, gaps = _g(question, text, title="SolverKit", source="solverkit.md")
    assert not relevant, (score, gaps)
    assert "only the names in the question match" in gaps
