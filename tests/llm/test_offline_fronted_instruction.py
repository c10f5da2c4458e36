"""An instruction after a fronted clause, and a variable's name, answer a how-to question.

English puts the goal or the condition first and the instruction after it:
"To enable logging without any code changes, set the QUILL_LOG_SCOPE
environment variable." The imperative opens the main clause, not the
sentence. And an environment variable's name in capitals and underscores
("QUILL_LOG_SCOPE") is something to type, as an option or a call is."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs

Q = "How do I turn on logging for quillstack without changing my code?"


def verdict(answer: str, question: str = Q) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize(
    "answer",
    [
        "To enable logging for this library without any changes in your code, set the scope "
        "environment variable to a valid logging scope [1].",
        "If logging is off, turn it on from the settings page of quillstack [1].",
        "When the process starts, pass the logging scope in its environment [1].",
        "In order to log every request from quillstack, configure a handler for the root logger [1].",
    ],
)
def test_an_imperative_after_a_fronted_clause_instructs(answer: str) -> None:
    assert verdict(answer) != "no"


def test_an_environment_variable_name_is_something_to_type() -> None:
    answer = "Logging for quillstack is switched on by QUILL_LOG_SCOPE, read when the process starts [1]."
    assert verdict(answer) != "no"


@pytest.mark.parametrize(
    "answer",
    [
        # A fronted clause followed by a description is still a description.
        "To keep logs small, the library emits structured records at debug level [1].",
        # Capitals alone are a name or an acronym, not a variable.
        "Logging in quillstack follows the HTTP and JSON conventions of the Python logging module [1].",
        "When quillstack logs, set-up code is not needed [1].",
    ],
)
def test_descriptions_still_do_not_instruct(answer: str) -> None:
    assert verdict(answer) == "no"
