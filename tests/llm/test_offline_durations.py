"""A question naming a length of time asks for one.

"What is the default request timeout in quillclient?" asks for a duration,
as "How long ...?" does: "By default requests time out after 10 minutes"
answers it, and "408 Request Timeout and 429 Rate Limit are retried by
default" does not, whatever words it shares. The generator prefers a number
with a unit of time; the usefulness judge says "no" to an answer with no
number at all. A how-to question ("How do I set a timeout?") asks for a
step, not a length."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs

Q = "What is the default request timeout in quillclient?"
RETRIES = Evidence(
    index=1,
    chunk_id="a",
    source="quillclient.md",
    title="quillclient",
    heading="quillclient > Retries",
    text=(
        "Connection errors, 408 Request Timeout, 409 Conflict, 429 Rate Limit, and >=500 Internal errors "
        "are all retried by default."
    ),
)
TIMEOUTS = Evidence(
    index=2,
    chunk_id="b",
    source="quillclient.md",
    title="quillclient",
    heading="quillclient > Timeouts",
    text="By default requests time out after 10 minutes. A float passed as the option sets another one.",
)


def test_the_sentence_with_a_length_of_time_is_quoted() -> None:
    answer = generate(GenerateInputs(question=Q, evidence=[RETRIES, TIMEOUTS])).answer
    assert "By default requests time out after 10 minutes [2]" in answer


def test_an_answer_without_a_number_does_not_answer() -> None:
    out = usefulness(
        UsefulnessInputs(question=Q, answer="Requests that time out are retried by default [1].")
    )
    assert out.verdict == "no"
    assert (
        usefulness(UsefulnessInputs(question=Q, answer="Requests time out after 10 minutes [1].")).verdict
        != "no"
    )


def test_a_how_to_question_about_a_timeout_wants_a_step() -> None:
    question = "How do I set the request timeout in quillclient?"
    answer = "Pass the timeout option to the client when you create it [1]."
    assert usefulness(UsefulnessInputs(question=question, answer=answer)).verdict != "no"


def test_a_word_of_time_as_a_modifier_asks_for_no_length() -> None:
    question = "Which method is the default timeout method of quill-timeout on systems without alarms?"
    answer = "The thread method is the default on systems without alarms [1]."
    assert usefulness(UsefulnessInputs(question=question, answer=answer)).verdict != "no"
