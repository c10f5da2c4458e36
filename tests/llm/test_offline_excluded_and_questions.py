"""Two ways an answer misses its question, whatever its words share with it.

A question may rule a case out ("on a regular (not free-threaded) CPython",
"other than Linux", "non-Windows"). An answer whose figures are all given
for the excluded case ("On free-threaded CPython ... CMake 4.4.1 or newer")
answers what the asker ruled out: "no".

An answer made only of questions ("Which version of C does it support?", a
FAQ heading quoted back) asks; it does not answer: "no"."""

from __future__ import annotations

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs

Q = "Which CMake version does quillpack need on a regular (not free-threaded) CPython?"


def judge(question: str, answer: str) -> tuple[str, str]:
    out = usefulness(UsefulnessInputs(question=question, answer=answer))
    return out.verdict, out.reason


def test_figures_only_for_the_excluded_case_do_not_answer() -> None:
    answer = "quillpack is available from PyPI [1]. On free-threaded CPython 3.15, it must be CMake 4.4.1 or newer [1]."
    verdict, reason = judge(Q, answer)
    assert verdict == "no"
    assert "free-threaded" in reason
    verdict, _ = judge(
        "Which installer do I use on platforms other than Linux?", "On Linux, use the tarball 2.1 [1]."
    )
    assert verdict == "no"


def test_the_case_asked_about_answers_even_beside_the_excluded_one() -> None:
    answer = "On regular CPython quillpack needs CMake 3.20 [1]. On free-threaded CPython it must be CMake 4.4.1 [1]."
    assert judge(Q, answer)[0] != "no"
    assert judge(Q, "quillpack needs CMake 3.20 or newer [1].")[0] != "no"


def test_an_answer_made_of_questions_does_not_answer() -> None:
    verdict, reason = judge(
        "What is the oldest Python version quillpack supports?",
        "Which version of C does quillpack support [1]?",
    )
    assert verdict == "no"
    assert "question" in reason
    assert (
        judge(
            "What is the oldest Python version quillpack supports?",
            "quillpack supports Python 3.8 and later [1].",
        )[0]
        == "yes"
    )


def test_a_name_after_a_determiner_is_the_sentences_subject() -> None:
    q = "Which Python versions does quill/crypto support?"
    assert judge(q, "The AWS SDK for Python has dropped 3.6 [5].")[0] == "no"
    assert judge("What license does Quillpack use?", "License: MIT [1].")[0] != "no"
