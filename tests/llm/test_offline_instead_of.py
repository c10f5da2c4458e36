"""What the answer is not: "Who ... instead of the default X?".

A question asking for a thing (who / which / what) that ends by naming what
its answer is not ("instead of X", "other than X", "apart from X") does not
ask about X: a sentence about X shares the question's words and answers the
opposite. The offline generator matches sentences, and the usefulness judge
checks coverage, against the question without that clause. How-to and why
questions keep it (the answer names both sides of the contrast), and so does
a clause that goes on with the question's verb ("Which formats other than
JSON does it read?").

A "who" answer may name a project in lower case: "xeus-python"-like names
(joined parts, inner capitals, digits) are names by their form."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import without_excluded
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        (
            "Who typically provides its own ledger manager instead of the default LedgerManager?",
            "Who typically provides its own ledger manager?",
        ),
        (
            "Which databases does Quillpad support, apart from SQLite?",
            "Which databases does Quillpad support?",
        ),
        ("What else can read Quill files other than Quillpad?", "What else can read Quill files?"),
        # a how-to or why question asks about the contrast itself
        (
            "How do I build quillpad against the system library instead of the vendored copy?",
            "How do I build quillpad against the system library instead of the vendored copy?",
        ),
        (
            "Why does Quillpad use threads rather than processes?",
            "Why does Quillpad use threads rather than processes?",
        ),
        # the clause goes on with the question's verb: not only the excluded thing
        (
            "Which formats other than JSON does Quillpad read?",
            "Which formats other than JSON does Quillpad read?",
        ),
        # nothing would be left to ask
        ("What can I use instead of pip?", "What can I use instead of pip?"),
        ("Which exceptions does Quillpad raise?", "Which exceptions does Quillpad raise?"),
    ],
)
def test_without_excluded(question: str, asked: str) -> None:
    assert without_excluded(question) == asked


def _ev(index: int, heading: str, text: str) -> Evidence:
    return Evidence(
        index=index, chunk_id=f"c{index}", source="ledger.md", title="Ledger", heading=heading, text=text
    )


EVIDENCE = [
    _ev(
        1,
        "Ledger",
        "Ledger registers a kernel ledger. It also provides a default LedgerManager that can be used.",
    ),
    _ev(
        2,
        "Ledger > Case 1: Using the default LedgerManager",
        "We provide a default LedgerManager for most kernels.\n\n"
        "This is typically what alpha-kernel and Betabox will do.",
    ),
    _ev(
        3,
        "Ledger > Case 2: Providing your own ledger manager",
        "This is typically what quill-py does (it has its own manager implementation in C++).",
    ),
]
QUESTION = (
    "Who typically provides its own ledger manager implementation instead of the default LedgerManager?"
)


def test_generate_quotes_the_one_the_question_asks_for() -> None:
    out = generate(GenerateInputs(question=QUESTION, evidence=EVIDENCE))
    assert out.answer.startswith("This is typically what quill-py does"), out.answer
    assert "alpha-kernel" not in out.answer


def test_usefulness_does_not_ask_for_what_the_answer_is_not() -> None:
    answer = "This is typically what quill-py does (it has its own manager implementation in C++) [3]."
    out = usefulness(UsefulnessInputs(question=QUESTION, answer=answer))
    assert out.verdict == "yes", (out.reason, out.missing)


@pytest.mark.parametrize("name", ["quill-labs", "quill_labs", "quillpad2"])
def test_a_lower_case_name_by_its_form_fills_the_who_role(name: str) -> None:
    out = usefulness(
        UsefulnessInputs(question="Who maintains Brindle?", answer=f"Brindle is maintained by {name} [1].")
    )
    assert out.verdict != "no", out.reason
    # a lower-case word that is not a name by its form still names no one
    out = usefulness(
        UsefulnessInputs(question="Who maintains Brindle?", answer="Brindle is maintained by volunteers [1].")
    )
    assert out.verdict == "no"
