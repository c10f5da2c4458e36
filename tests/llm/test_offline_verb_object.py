"""A "which / what <kind>" question with do-support asks for the object of
its verb ("What exception does X raise?"). An answer that repeats the verb
and puts a name right after it ("raises an AssertionError", "works like
Don Libes' Expect", "uses calendar-based versioning") gives a thing of that
kind without repeating the kind's word; a new common word there does not
(it names nothing)."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs


def verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "What exception does the cleanup decorator raise once the code is due for removal?",
            "The date passing causes the cleanup decorator to raise an AssertionError [1].",
        ),
        ("Which program does Quillpack work like?", "Quillpack works like Don Libes' Expect [1]."),
        (
            "What versioning scheme does the tarnfile library use?",
            "The tarnfile library uses calendar-based versioning (YY.N) [1].",
        ),
    ],
)
def test_a_name_in_the_verbs_object_slot_answers_the_kind(question: str, answer: str) -> None:
    assert verdict(question, answer) != "no"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # The verb is there, but what follows it is a common word, or nothing new.
        ("What exception does the parser raise on bad input?", "The parser can raise errors quickly [1]."),
        ("What versioning scheme does the tarnfile library use?", "The tarnfile library is used widely [1]."),
        ("Which program does Quillpack work like?", "Quillpack works on every platform [1]."),
    ],
)
def test_no_name_in_the_slot_leaves_the_kind_unanswered(question: str, answer: str) -> None:
    assert verdict(question, answer) == "no"
