"""A question asking for an environment variable is answered by its name.

"Which environment variable makes quillstack skip its C extensions?" and
"How do I disable quillstack through an environment variable?" ask for a
name to set. The name of an environment variable has a form of its own:
capitals joined by underscores ("QUILL_NO_EXT"), "$NAME", "%NAME%", or a
capitalised word beside the word "variable" ("the TZ environment
variable"). The generator prefers the sentence that names one; the
usefulness judge says "no" to an answer that names none."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs

WHICH = "Which environment variable makes quillstack skip compiling its C extensions?"
HOW = "How do I disable quillstack's tracing through an environment variable?"

BUILD = Evidence(
    index=1,
    chunk_id="a",
    source="quillstack.md",
    title="quillstack",
    heading="quillstack > Installation",
    text=(
        "On platforms without wheels, quillstack compiles its C extensions from the source tarball. "
        "Compiling the extensions requires a C compiler and the Python headers. "
        "Setting QUILL_NO_EXTENSIONS to a non-empty value builds the pure-Python version instead."
    ),
)
TRACING = Evidence(
    index=1,
    chunk_id="b",
    source="quillstack.md",
    title="quillstack",
    heading="quillstack > Disabling tracing",
    text=(
        "There are two ways to disable quillstack's tracing: an environment variable or the settings module. "
        "Before the application starts, set the environment variable QUILL_TRACING_ENABLED to false."
    ),
)


def useful(answer: str, question: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def test_the_generator_quotes_the_sentence_that_names_the_variable() -> None:
    out = generate(GenerateInputs(question=WHICH, evidence=[BUILD]))
    assert "QUILL_NO_EXTENSIONS" in out.answer


def test_the_generator_answers_the_how_to_with_the_variable() -> None:
    out = generate(GenerateInputs(question=HOW, evidence=[TRACING]))
    assert "QUILL_TRACING_ENABLED" in out.answer


@pytest.mark.parametrize(
    "answer",
    [
        "Setting QUILL_NO_EXTENSIONS to a non-empty value builds the pure-Python version [1].",
        "Set $QUILL_PURE before installing [1].",
        "Set the QUILLPURE environment variable to 1 [1].",
    ],
)
def test_an_answer_naming_a_variable_answers(answer: str) -> None:
    assert useful(answer, WHICH) != "no"


@pytest.mark.parametrize("question", [WHICH, HOW])
def test_an_answer_naming_no_variable_does_not(question: str) -> None:
    answer = "If the variable is set to false while the code enables it, quillstack's tracing stays off [1]."
    out = usefulness(UsefulnessInputs(question=question, answer=answer))
    assert out.verdict == "no"
    assert "environment variable" in out.missing


def test_a_yes_no_question_about_variables_asks_for_no_name() -> None:
    answer = "Yes, quillstack reads its settings from the environment at start-up [1]."
    assert useful(answer, "Does quillstack read environment variables?") != "no"
