"""A how-to question is answered by what to do.

"How do I give one test its own timeout?" asks for an action: an imperative
("Use a decorator ..."), an instruction in the second person ("you can set
..."), a means ("by passing ..."), or something to type (a command, a call,
a decorator, an option). An answer that only describes how the thing works
("the plugin starts a timer thread which terminates the process") tells the
reader nothing to do: the usefulness judge says "no" and names what is
missing, so the answer is regenerated or refused, never accepted."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs

Q = "How do I give one test its own timeout with quillcheck?"


def judge(answer: str, question: str = Q) -> tuple[str, str]:
    out = usefulness(UsefulnessInputs(question=question, answer=answer))
    return out.verdict, out.missing


@pytest.mark.parametrize(
    "answer",
    [
        "Use the @quillcheck.timeout(60) decorator on the test [1].",
        "You can set a timeout for an individual test with a decorator [1].",
        "Give the test its own timeout by passing timeout=60 to the quillcheck marker [1].",
        "quillcheck --timeout=300 [1]",
        "pip install quillcheck [1]",
        "Decorate the test with quillcheck.timeout and a number of seconds [1].",
    ],
)
def test_an_instruction_answers(answer: str) -> None:
    assert judge(answer)[0] != "no"


@pytest.mark.parametrize(
    "answer",
    [
        "For each test item the quillcheck plugin starts a timer thread which will terminate the whole process "
        "after the specified timeout [1].",
        "Timeouts in quillcheck are measured in seconds and apply to every test item [1].",
    ],
)
def test_a_description_of_how_it_works_does_not(answer: str) -> None:
    verdict, missing = judge(answer)
    assert verdict == "no"
    assert "command" in missing


def test_other_questions_are_not_held_to_it() -> None:
    assert (
        judge("Timeouts are measured in seconds [1].", "How are timeouts measured in quillcheck?")[0] != "no"
    )
