"""Protected spans: extraction from the original question and rewrite checks."""

from __future__ import annotations

import pytest

from selfrag_nb.spans import check_rewrite, count_negations, extract_spans


def kinds(question: str) -> dict[str, str]:
    return {s.text: s.kind for s in extract_spans(question)}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where is order ORD-2024-0042 shipped?", {"ORD-2024-0042": "order"}),
        ("Is it fixed in v2.3.1?", {"v2.3.1": "version"}),
        ("What changed on 2024-03-15?", {"2024-03-15": "date"}),
        ("Does Pro cost $30 or 20% more?", {"$30": "amount", "20%": "amount"}),
        ('Is "dark mode" on the X200?', {"dark mode": "quoted", "X200": "identifier"}),
        ("Can I get a refund within 14 days?", {"14": "number"}),
        ("订单号 12345678 为什么没有退款？", {"12345678": "order", "没有": "negation"}),
        ("Does SSO work with SAML?", {"SSO": "identifier", "SAML": "identifier"}),
        ("2024年3月15日之后的价格", {"2024年3月15日": "date"}),
    ],
)
def test_extracts_each_kind(question: str, expected: dict[str, str]) -> None:
    found = kinds(question)
    for text, kind in expected.items():
        assert found.get(text) == kind, (question, found)


def test_a_year_after_the_word_order_is_a_date_not_an_order_number() -> None:
    # "order 2000年1月1日" asks for the order of a day: the year belongs to the
    # date (found by the fuzz property of tests/reliability/test_rel_fuzz.py), so
    # changing the month is caught.
    assert kinds("what order 2000年1月1日?") == {"2000年1月1日": "date"}
    assert not check_rewrite("what order 2000年1月1日?", "what order 2000年6月1日?").ok
    assert kinds("order 20001234 status") == {"20001234": "order"}


def test_negations_in_both_languages() -> None:
    assert kinds("Which formats are not supported?")["not"] == "negation"
    assert kinds("I can't log in")["n't"] == "negation"
    assert "不" in kinds("哪些格式不支持？")
    # "不过" (but) and "非常" (very) are not negations.
    assert count_negations("不过这个非常好") == 0
    assert count_negations("无法登录，也没有邮件") == 2


def test_rewrite_keeping_everything_is_accepted() -> None:
    check = check_rewrite(
        "Which formats are not supported in v2.3.1?", "Which file formats does v2.3.1 not support?"
    )
    assert check.ok, check


def test_rewrite_losing_an_id_is_rejected_with_the_missing_span() -> None:
    check = check_rewrite("Where is order ORD-2024-0042?", "Where is my latest order?")
    assert not check.ok
    assert check.missing == ["ORD-2024-0042"]
    assert "ORD-2024-0042" in check.reason


def test_ids_and_numbers_are_exact_words_case_insensitive() -> None:
    assert not check_rewrite("status of ORD-2024-0042", "status of ord-2024-0042").ok
    assert not check_rewrite("refund within 14 days", "refund within 140 days").ok
    assert check_rewrite('is "Dark Mode" available', "dark mode availability").ok


@pytest.mark.parametrize(
    ("original", "rewrite"),
    [
        ("Which formats are not supported?", "Which formats are supported?"),
        ("哪些格式不支持？", "支持哪些格式？"),
        ("Can I cancel without a fee?", "Can I cancel with a fee?"),
    ],
)
def test_negation_flip_is_rejected(original: str, rewrite: str) -> None:
    check = check_rewrite(original, rewrite)
    assert not check.ok
    assert "negation" in check.reason


def test_added_negation_is_rejected() -> None:
    check = check_rewrite("Which formats are supported?", "Which formats are not supported?")
    assert not check.ok
    assert "negation added" in check.reason


def test_equivalent_english_negation_forms_are_kept() -> None:
    assert check_rewrite("Why can't I log in?", "Why cannot I sign in?").ok


def test_full_width_digits_match_after_nfkc() -> None:
    assert check_rewrite("订单 ２０２４ 的状态", "2024 订单状态").ok


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Updating PATCH /v3/invoices/{id} fails with E4220. Why?",
            {"/v3/invoices/{id}": "identifier", "E4220": "identifier"},
        ),
        ("What is the maximum per_page value?", {"per_page": "identifier"}),
        ("Does Quillstack Sync 3.0.1 still support macOS 11?", {"macOS 11": "name", "3.0.1": "version"}),
        ("Is there a Linux version of Quillstack Sync?", {"Linux": "name", "Quillstack Sync": "name"}),
        ("Which version runs on Windows 7?", {"Windows 7": "name"}),
    ],
)
def test_paths_parameters_and_names(question: str, expected: dict[str, str]) -> None:
    found = kinds(question)
    for text, kind in expected.items():
        assert found.get(text) == kind, (question, found)


def test_names_compare_case_insensitively() -> None:
    assert check_rewrite("Is webhooks on the Free plan?", "free plan webhooks availability").ok


from hypothesis import given, settings  # noqa: E402 - property tests kept next to the examples they generalise
from hypothesis import strategies as st  # noqa: E402 - same

_WORDS = st.sampled_from(
    [
        "refund",
        "order",
        "ORD-2024-0042",
        "v2.3.1",
        "not",
        "2024-03-15",
        "$30",
        "Free",
        "plan",
        "the",
        "is",
        "SSO",
        "不",
        "退款",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=8))
def test_property_the_original_always_passes_and_dropping_an_exact_span_fails(words: list[str]) -> None:
    question = " ".join(words)
    spans = extract_spans(question)
    assert check_rewrite(question, question, spans).ok
    for span in spans:
        if span.kind in {"order", "version", "date", "amount"}:
            without = " ".join(w for w in words if span.text not in w)
            assert not check_rewrite(question, without, spans).ok


@pytest.mark.parametrize(
    ("original", "dropped"),
    [
        ("Is the refund for ORD-2019-1900 worth $1900?", "$1900"),  # found by the fuzz suite
        ("Does SKU_12 ship 12 units?", " 12 units"),
        ("Is v2/3 the same as 3 seats?", " 3 seats"),
        ("what what $2000 March 1, 2000?", "$2000"),  # "$2000" was read as the year 2000
        ("Was $1,900.50 refunded for v2.3?", "$1,900.50"),  # and this as the version "900.50"
    ],
)
def test_a_number_inside_a_kept_identifier_does_not_count_as_kept(original: str, dropped: str) -> None:
    spans = extract_spans(original)
    assert check_rewrite(original, original, spans).ok
    assert not check_rewrite(original, original.replace(dropped, ""), spans).ok
