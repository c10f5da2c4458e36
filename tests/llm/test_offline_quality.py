"""Offline model heuristics added for answer quality, one fixture each (no sample data).

Each test names the heuristic documented in docs/offline_model.md.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import _candidates, generate
from selfrag_nb.llm.offline.lexical import bag, has_negation
from selfrag_nb.llm.offline.question import effective_question
from selfrag_nb.llm.offline.relevance import asked_head, grade
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import (
    AssessInputs,
    Evidence,
    GenerateInputs,
    GradeInputs,
    Message,
    VerifyInputs,
)


def ev(index: int, text: str, title: str = "", heading: str = "", source: str = "", **meta: Any) -> Evidence:
    return Evidence(
        index=index,
        chunk_id=f"k{index}",
        source=source or f"d{index}.md",
        title=title,
        heading=heading,
        text=text,
        metadata=meta,
    )


# ----------------------------------------------------------------- rules


def test_hyphenated_word_counts_its_long_parts_only() -> None:
    b = bag("Gift cards are non-refundable. Fees are pro-rated.")
    assert b["refund"] == 1  # "non-refundable" answers a question about refunds
    assert "pro" not in b  # "pro-rated" is not about a "Pro" anything
    assert has_negation("Gift cards are non-refundable.")


# ----------------------------------------------------------------- verify


def test_verify_opposite_polarity_must_be_about_the_same_thing() -> None:
    evidence = [
        ev(1, "The Basic tier costs $5 and suits hobby users. Exports are not available on the Basic tier.")
    ]
    out = verify(
        VerifyInputs(
            question="Are exports available on the Basic tier?",
            answer="Exports are not available on the Basic tier [1].",
            evidence=evidence,
        )
    )
    # "The Basic tier costs $5" shares only "Basic tier": it does not refute the claim.
    assert out.claims[0].verdict == "supported"
    assert out.recommendation == "ACCEPT"


def test_verify_two_negative_sentences_do_not_contradict_each_other() -> None:
    evidence = [
        ev(1, "Schedules cannot be created in the tablet app; use the browser."),
        ev(2, "The tablet app does not support creating schedules or editing templates."),
    ]
    answer = (
        "Schedules cannot be created in the tablet app; use the browser [1]. "
        "The tablet app does not support creating schedules or editing templates [2]."
    )
    out = verify(
        VerifyInputs(question="Can I create schedules in the tablet app?", answer=answer, evidence=evidence)
    )
    assert [c.verdict for c in out.claims] == ["supported", "supported"]


def test_verify_superseded_evidence_does_not_contradict_current() -> None:
    evidence = [
        ev(1, "Cancelled yearly plans get a pro-rated refund minus a 5% fee.", status="current"),
        ev(2, "Cancelled yearly plans get no pro-rated refund.", status="superseded"),
    ]
    out = verify(
        VerifyInputs(
            question="Do cancelled yearly plans get a refund?",
            answer="Cancelled yearly plans get a pro-rated refund minus a 5% fee [1].",
            evidence=evidence,
        )
    )
    assert out.claims[0].verdict == "supported"


# ----------------------------------------------------------------- assess


def test_assess_same_unit_different_subjects_is_not_a_conflict() -> None:
    evidence = [
        ev(
            1,
            "If a callback fails, the platform retries the callback delivery up to 6 times.",
            "Callbacks",
            source="callbacks.md",
        ),
        ev(
            2,
            "If a card charge fails, we retry it 2 times and email the owner each time.",
            "Billing",
            source="billing.md",
        ),
    ]
    out = assess(
        AssessInputs(
            question="How many times does the platform retry a failed callback delivery?", evidence=evidence
        )
    )
    assert out.action == "ANSWER", out


def test_assess_conflict_found_beyond_the_best_sentence() -> None:
    evidence = [
        ev(
            1,
            "You can attach up to 4 files to one ticket. Each attachment can be up to 20 MB.",
            "Ticket attachments",
            "Attachment size limits",
            source="product/attachments.md",
        ),
        ev(
            2,
            "Ticket attachments are limited to 8 MB per file.",
            "Help desk handbook",
            source="support/handbook.md",
        ),
    ]
    out = assess(
        AssessInputs(question="What is the maximum file size for a ticket attachment?", evidence=evidence)
    )
    assert out.action in ("REFUSE", "CLARIFY"), out
    assert "20 MB" in out.conflict
    assert "8 MB" in out.conflict


def test_assess_supersedes_metadata_decides_a_conflict() -> None:
    evidence = [
        ev(
            1,
            "Returns are accepted within 45 days of delivery.",
            "Returns (new)",
            source="policies/returns-new.md",
            supersedes="policies/returns-old.md",
        ),
        ev(
            2,
            "Returns are accepted within 20 days of delivery.",
            "Returns (old)",
            source="policies/returns-old.md",
        ),
        ev(3, "Your parcel stays in the locker for 3 days after delivery.", "Lockers", source="lockers.md"),
    ]
    out = assess(AssessInputs(question="What is the returns window after delivery?", evidence=evidence))
    assert out.action == "ANSWER", out
    assert out.applies.startswith("[1]")
    assert "supersedes" in out.conflict


def test_assess_plan_headed_sections_ask_which_plan() -> None:
    evidence = [
        ev(1, "5 GB of disk space\n\nEmail support", "Pricing", "Pricing > Starter plan"),
        ev(2, "80 GB of disk space\n\nPhone support", "Pricing", "Pricing > Team plan"),
    ]
    out = assess(AssessInputs(question="How much disk space is included in my plan?", evidence=evidence))
    assert out.action == "CLARIFY"
    assert out.options == ["Starter plan", "Team plan"]


def test_assess_conflicting_numbers_for_other_plans_are_not_rivals() -> None:
    evidence = [
        ev(1, "The Team plan allows 500 calls per minute.", "Limits", source="limits.md"),
        ev(2, "The Starter plan allows 50 calls per minute.", "Pricing", source="pricing.md"),
    ]
    out = assess(
        AssessInputs(question="How many calls per minute does the Team plan allow?", evidence=evidence)
    )
    assert out.action == "ANSWER", out


def test_assess_and_generate_resolve_a_follow_up_from_history() -> None:
    history = [
        Message(role="user", content="What is the current return policy?"),
        Message(role="assistant", content="Returns are accepted within 45 days."),
    ]
    assert effective_question("Does that also apply to gift cards?", history) == (
        "Does current return policy also apply to gift cards?"
    )
    evidence = [
        ev(1, "Gift cards are bought in the shop and activated at checkout.", "Gift cards"),
        ev(2, "Gift cards are non-returnable once activated.", "Return policy", "Return policy > Gift cards"),
    ]
    out = generate(
        GenerateInputs(question="Does that also apply to gift cards?", evidence=evidence, history=history)
    )
    assert "non-returnable" in out.answer


# ----------------------------------------------------------------- grade


def test_grade_caps_a_chunk_that_only_shares_the_question_names() -> None:
    text = "Zentrix employees access customer files only with permission, and every access is logged."
    out = grade(GradeInputs(question="What is Zentrix's parental leave policy for employees?", text=text))
    assert out.relevanceScore < 50
    assert "names" in out.gaps or "asked for" in out.gaps


def test_grade_caps_a_chunk_without_the_thing_asked_for() -> None:
    assert asked_head("What is the manual billing override code for duplicate charges?") == "code"
    text = "All duplicate charges from the billing incident were refunded automatically on 2024-05-14."
    out = grade(
        GradeInputs(question="What is the manual billing override code for duplicate charges?", text=text)
    )
    assert out.relevanceScore < 50
    assert "(code)" in out.gaps
    # A number answers a numeric head ("size"), so the chunk stays relevant.
    ok = grade(
        GradeInputs(
            question="What is the maximum upload size for a ticket attachment?",
            text="Ticket attachments are limited to 8 MB per upload.",
        )
    )
    assert ok.relevanceScore >= 50


# ---------------------------------------------------------------- generate


def test_generate_prefers_the_sentence_with_the_number_asked_for() -> None:
    evidence = [
        ev(
            1,
            "Deleted notes go to the bin. Items stay in the bin for 14 days and can be restored.",
            "Retention",
            "Retention > Deleted notes",
        ),
    ]
    out = generate(GenerateInputs(question="How long are deleted notes kept in the bin?", evidence=evidence))
    assert "14 days" in out.answer


def test_generate_prefers_the_section_the_heading_names() -> None:
    evidence = [
        ev(
            1,
            "If you cancel a yearly membership after the 60-day window, you get a partial credit.",
            "Membership policy",
            "Membership policy > Yearly members",
        ),
        ev(
            2,
            "You can ask for a full credit within 60 days of your first payment.",
            "Membership policy",
            "Membership policy > Credit window",
        ),
    ]
    question = "What is the credit window for a membership?"
    ranked = _candidates(GenerateInputs(question=question, evidence=evidence), question)
    assert ranked[0].text.startswith("You can ask for a full credit within 60 days")
    out = generate(GenerateInputs(question=question, evidence=evidence))
    assert "within 60 days of your first payment [2]" in out.answer


def test_generate_skips_lead_ins_and_table_headers_and_matches_phrases() -> None:
    text = (
        "If availability falls below the target, you get a credit:\n\n"
        "| Availability | Credit |\n| --- | --- |\n"
        "| Below 98.0% but at least 90.0% | 20% of the fee |\n"
        "| Below 90.0% | 40% of the fee |\n"
    )
    out = generate(
        GenerateInputs(
            question="What credit do I get if availability falls below 90%?",
            evidence=[ev(1, text, "SLA", "SLA > Credits")],
        )
    )
    question = "What credit do I get if availability falls below 90%?"
    ranked = _candidates(
        GenerateInputs(question=question, evidence=[ev(1, text, "SLA", "SLA > Credits")]), question
    )
    # A row is quoted as a sentence naming its columns, never as raw table markup.
    assert ranked[0].text == "Availability Below 90.0%: Credit 40% of the fee."
    assert "Availability Below 90.0%: Credit 40% of the fee [1]." in out.answer
    assert "|" not in out.answer
    assert "Availability | Credit" not in out.answer
    assert not out.answer.rstrip().endswith(":")
    # Each row is its own sentence, so verify sees one claim per row, and supports it.
    sup = verify(
        VerifyInputs(question="credit", answer=out.answer, evidence=[ev(1, text, "SLA", "SLA > Credits")])
    )
    assert sup.claims
    assert all(c.claim.count("Availability") == 1 for c in sup.claims)
    assert all(c.verdict == "supported" for c in sup.claims)


def test_generate_which_question_keeps_the_sentence_that_names_things() -> None:
    evidence = [
        ev(1, "Single sign-on lets your team sign in with your identity provider.", "SSO"),
        ev(
            2,
            "We support SAML 2.0 and OpenID Connect. Tested identity providers: Keyrock, Passgate and Idlink.",
            "SSO",
            "SSO > Protocols",
        ),
    ]
    out = generate(
        GenerateInputs(
            question="Which identity providers are supported for single sign-on?", evidence=evidence
        )
    )
    assert "Keyrock" in out.answer


def test_generate_quotes_the_users_language_first() -> None:
    evidence = [
        ev(1, "Version 4 no longer supports Windows 8.", "Notes"),
        ev(2, "从 4 版本开始，不再支持 Windows 8。", "说明"),
    ]
    out = generate(GenerateInputs(question="Does version 4 still support Windows 8?", evidence=evidence))
    assert out.answer.startswith("Version 4 no longer supports Windows 8")


def test_generate_puts_an_unpunctuated_list_item_on_its_own_line() -> None:
    text = "- 2 GB of storage per seat\n- Storage can be extended with packs of 50 GB."
    out = generate(
        GenerateInputs(
            question="How much storage per seat and can storage be extended?", evidence=[ev(1, text)]
        )
    )
    assert out.answer.splitlines() == [
        "2 GB of storage per seat [1]",
        "Storage can be extended with packs of 50 GB [1].",
    ]
