"""Claims are located inside the answer even when the verifier quotes them
without the answer's citation markers: views highlight them and let the
reader select them."""

from __future__ import annotations

import pytest

from selfrag_nb.stages.verify import locate_claim

ANSWER = "Refunds take 5 days from the invoice date [1]. Pro has SSO [2][3]. 退款期限为30天【1】。"


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Refunds take 5 days from the invoice date.", "Refunds take 5 days from the invoice date [1]."),
        ("Refunds take 5 days from the invoice date [1].", "Refunds take 5 days from the invoice date [1]."),
        ("Pro has SSO.", "Pro has SSO [2][3]."),
        ("pro  has sso", "Pro has SSO [2][3]."),
        ("退款期限为30天。", "退款期限为30天【1】。"),
        ("refunds take 5 days", "Refunds take 5 days"),
    ],
)
def test_claim_found_with_its_markers_and_full_stop(claim: str, expected: str) -> None:
    start, end = locate_claim(ANSWER, claim)
    assert ANSWER[start:end] == expected


@pytest.mark.parametrize("claim", ["", "   ", "[1].", "Enterprise has SSO."])
def test_absent_claim_is_not_located(claim: str) -> None:
    assert locate_claim(ANSWER, claim) == (-1, -1)


def test_markers_between_words_are_skipped() -> None:
    answer = "The limit is 600 requests [2] per minute on Pro [2]."
    start, end = locate_claim(answer, "The limit is 600 requests per minute on Pro.")
    assert answer[start:end] == answer
