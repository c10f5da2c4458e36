"""The offline verifier's key-term rule, and what the offline generator may copy.

Rule (docs/offline_model.md, verify): a claim whose key content (a name,
number, unit, product, currency or other specific term) appears in none of
its evidence is unsupported. The generator never copies raw Markdown table
syntax or terminal control characters from a document into an answer, and
the verifier never calls table markup supported."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs

REFUND = (
    "You can request a full refund within 30 days of your first payment for any paid plan "
    "(Pro or Enterprise). Approved refunds are paid to the original payment method within "
    "10 business days."
)
SLA_TABLE = (
    "Quillstack commits to a monthly uptime per plan.\n\n"
    "| Plan | Monthly uptime commitment |\n| --- | --- |\n"
    "| Free | no SLA |\n| Pro | 99.9% |\n| Enterprise | 99.95% |\n"
)


def ev(text: str, index: int = 1, title: str = "Refund Policy (2025)") -> Evidence:
    return Evidence(index=index, chunk_id=f"c{index}", source=f"doc{index}.md", title=title, text=text)


def verdict_of(claim: str, *evidence: Evidence, question: str = "What is the refund policy?") -> str:
    out = verify(VerifyInputs(question=question, answer=claim, evidence=list(evidence or [ev(REFUND)])))
    assert len(out.claims) == 1, out.claims
    return out.claims[0].verdict


@pytest.mark.parametrize(
    ("claim", "absent"),
    [
        ("Refunds are paid in Bitcoin [1].", "a payment coin"),
        ("Refunds are paid in bitcoin [1].", "a payment coin, lower case"),
        ("Approved refunds are paid to the original payment method within 10 business days, in euros [1].", "a currency"),
        ("You can request a full refund within 45 days of your first payment [1].", "a number"),
        ("You can request a full refund within 30 weeks of your first payment [1].", "a unit"),
        ("You can request a full refund within 30 days of your first payment for any paid plan (Pro or Ultimate) [1].", "a product"),
        ("Approved refunds are paid by Oliver within 10 business days [1].", "a name"),
        ("Approved refunds are paid to the original payment method via PayPal within 10 business days [1].", "a product name"),
    ],
)  # fmt: skip
def test_a_key_term_in_no_evidence_makes_the_claim_unsupported(claim: str, absent: str) -> None:
    assert verdict_of(claim) == "unsupported", absent


def test_the_rule_looks_at_every_evidence_chunk_not_only_the_best_sentence() -> None:
    # "Enterprise" is in the second chunk only: the claim's key terms are all in its evidence.
    plans = ev("The Enterprise plan adds SSO and audit logs.", 2, "Plans")
    claim = "You can request a full refund within 30 days of your first payment for any paid plan (Pro or Enterprise) [1]."
    assert verdict_of(claim, ev(REFUND), plans) == "supported"


@pytest.mark.parametrize(
    "claim",
    [
        "You can request a full refund within 30 days of your first payment for any paid plan (Pro or Enterprise) [1].",
        "Approved refunds are paid to the original payment method within 10 business days [1].",
    ],
)
def test_claims_whose_key_terms_are_in_the_evidence_stay_supported(claim: str) -> None:
    assert verdict_of(claim) == "supported"


def test_raw_table_markup_is_never_supported() -> None:
    table = ev(SLA_TABLE, title="Service level agreement")
    q = "What is the uptime commitment of the Pro plan?"
    assert verdict_of("| Pro | 99.9% | [1]", table, question=q) == "unsupported"
    assert verdict_of("| Plan | Monthly uptime commitment |", table, question=q) == "unsupported"


def test_a_table_row_rendered_as_a_sentence_is_checked_like_any_sentence() -> None:
    table = ev(SLA_TABLE, title="Service level agreement")
    q = "What is the uptime commitment of the Pro plan?"
    assert verdict_of("Plan Pro: Monthly uptime commitment 99.9% [1].", table, question=q) == "supported"
    assert verdict_of("Plan Pro: Monthly uptime commitment 99.99% [1].", table, question=q) == "unsupported"


def test_generator_renders_table_rows_as_sentences_not_markup() -> None:
    out = generate(
        GenerateInputs(
            question="What is the monthly uptime commitment of the Pro plan?",
            evidence=[ev(SLA_TABLE, title="Service level agreement")],
        )
    )
    assert "|" not in out.answer
    assert "---" not in out.answer
    assert "99.9%" in out.answer
    # ... and the answer it writes is one the verifier supports.
    check = verify(
        VerifyInputs(
            question="What is the monthly uptime commitment of the Pro plan?",
            answer=out.answer,
            evidence=[ev(SLA_TABLE, title="Service level agreement")],
        )
    )
    assert check.recommendation == "ACCEPT", check


def test_generator_strips_terminal_escapes_and_control_characters() -> None:
    nasty = (
        "Webhook deliveries are retried \x1b[31mup to 8 times\x1b[0m over 24 hours.\x07 "
        "\x1b]8;;https://evil.example\x1b\\Click\x1b]8;;\x1b\\ \x9b2J\x08\x00"
    )
    out = generate(
        GenerateInputs(
            question="How many times is a webhook delivery retried?",
            evidence=[ev(nasty, title="Webhooks")],
        )
    )
    assert "up to 8 times" in out.answer
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in out.answer), repr(out.answer)
    assert not any(0x7F <= ord(c) <= 0x9F for c in out.answer), repr(out.answer)
    assert "[31m" not in out.answer
    assert "evil.example" not in out.answer


def test_a_quoted_identifier_is_not_split_into_made_up_names() -> None:
    # "Yx1" inside "req_7Yx1" is part of an identifier, not a name the claim adds.
    body = '{"error": {"code": "E4012", "message": "API key expired", "request_id": "req_7Yx1"}}'
    errors = ev(f"An expired key returns:\n\n{body}\n", title="Errors")
    assert verdict_of(f"{body} [1]", errors, question="What does an expired API key return?") == "supported"
