"""A purpose question ("What is X meant to be used for?", "What is X for?",
"What is the purpose of X?") asks what a thing is for, not what it is or
holds. An answer states a purpose with an intent word ("intended", "meant",
"designed"), a use ("used to", "can be used for"), a goal ("for <doing>",
"so that", "in order to") or what it lets someone do ("lets you", "allows");
without one it does not answer. Generate prefers, among sentences that match
the question as well, the one that states a purpose."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs

PURPOSE_QUESTIONS = (
    "What is the zonekit package meant to be used for?",
    "What is zonekit for?",
    "What is the purpose of zonekit?",
)


def judge(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize("question", PURPOSE_QUESTIONS)
def test_what_a_thing_holds_is_not_what_it_is_for(question: str) -> None:
    out = usefulness(
        UsefulnessInputs(question=question, answer="zonekit: Python package providing time zone data [1]")
    )
    assert out.verdict == "no"
    assert "purpose" in out.reason


@pytest.mark.parametrize("question", PURPOSE_QUESTIONS)
@pytest.mark.parametrize(
    "answer",
    [
        "zonekit is intended to be a fallback for systems without time zone data [1].",
        "zonekit is used to convert local times between zones [1].",
        "zonekit is a library for converting local times between zones [1].",
        "zonekit lets you convert local times between zones [1].",
        "zonekit escapes the data so that it is safe to store [1].",
    ],
)
def test_an_intent_a_use_or_a_goal_answers_it(question: str, answer: str) -> None:
    assert judge(question, answer) != "no"


def test_other_questions_are_not_held_to_it() -> None:
    assert judge("What is zonekit?", "zonekit: Python package providing time zone data [1]") != "no"


def test_generate_prefers_the_sentence_that_states_the_purpose() -> None:
    text = (
        "The zonekit package ships the compiled time zone database.\n\n"
        "The zonekit package is intended as a fallback for systems without a time zone database."
    )
    ev = Evidence(index=1, chunk_id="c1", source="zonekit.rst", title="zonekit", text=text)
    out = generate(
        GenerateInputs(question="What is the zonekit package meant to be used for?", evidence=[ev])
    )
    assert out.answer.startswith("The zonekit package is intended as a fallback")


@pytest.mark.parametrize(
    "question",
    [
        "What problem does zonekit solve when converting local times?",
        "Which problems does zonekit address?",
    ],
)
def test_what_problem_it_solves_is_a_purpose_question(question: str) -> None:
    """ "What problem does X solve?" asks what X is for: what it lets one do is
    the answer, though it never says "problem"; what it holds still is not."""
    assert judge(question, "zonekit lets you convert local times without a time zone database [1].") != "no"
    assert judge(question, "zonekit: Python package providing time zone data [1]") == "no"
