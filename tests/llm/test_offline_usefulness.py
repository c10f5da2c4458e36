"""The offline usefulness judge: general properties of questions and
answers (form, answer type, subject), checked on answers of the kinds seen
on third-party documents, in both languages."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Message, UsefulnessInputs


def judge(question: str, answer: str, history: list[Message] | None = None) -> tuple[str, int, str]:
    out = usefulness(UsefulnessInputs(question=question, answer=answer, history=history or []))
    assert 0 <= out.score <= 100
    return out.verdict, out.score, out.missing


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the library for?", "PyLib [1]"),  # a bare name
        ("What is the server used for?", "$ server example:app [1]"),  # a shell line
        ("What does the parser do?", "import parser [1]"),  # an import line
        (
            "What does the parser do?",
            "Fast iterable parser; it lets you detect which [1]",
        ),  # cut at a line break
        ("Which licence applies?", "The project is distributed under the terms of the [1]"),
        ("What is the template language?", '{"answer": "```jinja [2]"}'),  # a JSON wrapper
        ("What is the client?", '<p align="center"><i>The client is <a href="x">BSD licensed</a></i></p>'),
        ("What is the package?", "[![PyPI - Downloads][install-badge]][install-link]"),
        ("How many retries are made?", "Retries are made when the connection fails [1]."),  # no number
        ("When was the format introduced?", "The format is documented in the guide [1]."),  # no date
        ("What is the refund window?", "The documents contain no relevant information."),
        ("退款期限是多久？", "请联系客服了解退款的"),  # Chinese, cut off mid-sentence
        ("What is the refund window?", ""),
    ],
)
def test_non_answers_are_judged_no(question: str, answer: str) -> None:
    verdict, score, missing = judge(question, answer)
    assert verdict == "no", (question, answer)
    assert score < 50
    assert missing


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What license is the parser released under?", "The parser is released under the MIT license [1]."),
        ("How many retries are made?", "The client retries a failed request three times [1]."),
        ("When was version 2 released?", "Version 2 was released on 2024-03-01 [1]."),
        ("How do I install the tool?", "pip install tool [1]"),  # a command answers a how-to question
        (
            "What is the refund window for a Pro subscription?",
            "Pro subscriptions can be refunded within 30 days [1].",
        ),
        ("退款期限是多久？", "购买后 30 天内可以申请全额退款[1]。"),
        ("Hello!", "Hello! How can I help you today?"),
        ("What is 2 + 3?", "2 + 3 = 5."),
    ],
)
def test_answers_are_judged_yes(question: str, answer: str) -> None:
    verdict, score, missing = judge(question, answer)
    assert verdict == "yes", (question, answer, missing)
    assert score >= 80
    assert missing == ""


def test_an_answer_that_does_not_name_the_subject_is_at_most_partly() -> None:
    verdict, score, missing = judge(
        "What license is Sorted Containers released under?",
        "This project is licensed under the MIT license [1].",
    )
    assert verdict == "partly"
    assert 50 <= score < 80
    assert "Sorted Containers" in missing


def test_code_beside_prose_is_partly_and_says_so() -> None:
    verdict, _, missing = judge(
        "What does error code E4012 mean?",
        '{"error": {"code": "E4012"}} [1]\nCode E4012 means the API key expired [2].',
    )
    assert verdict == "partly"
    assert "code or markup" in missing


def test_missing_terms_are_named_as_the_question_spells_them() -> None:
    _, _, missing = judge("What is the purpose of the retention policy for invoices?", "Invoices exist [1].")
    assert "retention" in missing
    assert "retent" not in missing.replace("retention", "")


def test_a_follow_up_is_judged_against_the_completed_question() -> None:
    history = [
        Message(role="user", content="What does the Pro plan cost?"),
        Message(role="assistant", content="The Pro plan costs $12 per user per month [1]."),
    ]
    verdict, _, _ = judge(
        "How many projects does it allow?", "The Pro plan allows unlimited projects [1].", history
    )
    assert verdict == "yes"


def test_same_inputs_same_verdict() -> None:
    a = judge("What is the refund window?", "Refunds are accepted within 30 days [1].")
    assert all(
        judge("What is the refund window?", "Refunds are accepted within 30 days [1].") == a for _ in range(5)
    )


@pytest.mark.parametrize(
    ("question", "answer", "verdict"),
    [
        # "what / which <kind>": the answer must give a thing of that kind
        ("What license is the engine released under?", "The engine is fast and extensible [1].", "no"),
        ("Which licence is tidyjson released under?", "tidyjson is MIT licensed code [1].", "yes"),
        (
            "In which version were the modern APIs introduced?",
            "The modern APIs came in 20.1.0 [1].",
            "not no",
        ),
        ("Which project is greenlet a spin-off of?", "greenlet is a spin-off of Stackless [1].", "yes"),
        ("Which payment methods are not accepted?", "Cheques and cash are not accepted [1].", "partly"),
        # versions are named by a number, plural or not
        (
            "Which Python versions does it support?",
            "It supports all versions not beyond end of life [1].",
            "no",
        ),
        ("Which Python versions does it support?", "It supports Python 3.9 and higher [1].", "yes"),
        # a name in the place the question asks about fills it, the kind's word aside
        ("In which language is Lintr written?", "A fast linter, written in Rust [1].", "not no"),
        ("In which language is Lintr written?", "Lintr is fast and written with care [1].", "no"),
        (
            "Which formatter does Lintr aim for drop-in parity with?",
            "Drop-in parity with Flake8, isort, and Black [1].",
            "not no",
        ),
        # "when" wants a point in time, not the number words of "how often"
        (
            "When was Lintr first released?",
            "Lintr re-implements every rule as a first-party feature [1].",
            "no",
        ),
        ("When was Lintr first released?", "Lintr was first released in 2022 [1].", "not no"),
        # "who" wants someone the question does not name already
        ("Who created the Fetcher library?", "Fetcher is a simple, yet elegant, HTTP library [1].", "no"),
        ("Who created the Fetcher library?", "Fetcher was created by Ada Lovelace [1].", "not no"),
        ("Who maintains Fetcher2?", "With little activity, Acme is picking up stewardship [1].", "not no"),
        # "What kind of X ...?" asks for an X, not for the word "kind"
        ("What kind of tokeniser is toktool?", "toktool is a fast BPE tokeniser [1].", "yes"),
        ("What type of licence does toktool use?", "toktool is fast [1].", "no"),
        # "Which <kind> <verb>ed ...?" asks for the kind too; a version after the
        # word the question puts before its own ("Python 3.9") is that thing's
        (
            "Which Acme release dropped support for Python 3.9?",
            "This release drops support for Python 3.9 and adds support for Python 3.15 [1].",
            "no",
        ),
        (
            "Which Acme release dropped support for Python 3.9?",
            "v2.14.0 (2026-10-08): This release drops support for Python 3.9 [1].",
            "yes",
        ),
        # "Which OpenSSL versions ...?": versions after another name are that
        # thing's; a bare version, or one after the name asked, may be the answer
        (
            "Which OpenSSL versions does quillcrypt support?",
            "It supports Python 3.9+ and PyPy3 7.3.11+ [1].",
            "no",
        ),
        (
            "Which OpenSSL versions does quillcrypt support?",
            "It supports OpenSSL 3.0 and later [1].",
            "not no",
        ),
        (
            "Which versions of libfoo does quillcrypt support?",
            "quillcrypt supports 1.1.1 and 3.0 [1].",
            "not no",
        ),
        ("Which Python versions does quillcrypt support?", "It runs on CPython 3.9 to 3.13 [1].", "not no"),
        # "how many <things>": the number sits in a sentence that names them
        (
            "How many root certificates are bundled?",
            "Root certificates are bundled. It needs pip 24 [1].",
            "no",
        ),
        ("How many plugins are available?", "Over 1300 external plugins are available [1].", "yes"),
        # ... and counts them: a number about something else in that sentence does not
        (
            "How many root certificates are included in the bundle?",
            "It is integrated into pip 24.2+ as the default method for verifying certificates [1].",
            "no",
        ),
        (
            "How many root certificates are included in the bundle?",
            "The bundle includes 140 trusted root certificates [1].",
            "not no",
        ),
        ("How many workers are started?", "Workers started by default: 4 [1].", "not no"),
        ("How often does the call take place?", "We have a biweekly community call [1].", "not no"),
    ],
)
def test_the_kind_of_thing_asked_for(question: str, answer: str, verdict: str) -> None:
    got = judge(question, answer)[0]
    assert got != "no" if verdict == "not no" else got == verdict
