"""Who-questions and ellipsis lead-ins read a lead-in with its list.

"This package is authored and maintained by:" over a list of names answers
"Who maintains quillpath?": a who-question may have several people for an
answer, and the names are the items. "The quillcore package has the
following dependencies..." over a list uses an ellipsis where a colon would
stand; read with its items it answers "Which packages does quillcore depend
on?", and alone it says nothing."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs

MAINTAINERS = Evidence(
    index=1,
    chunk_id="a",
    source="quillpath.rst",
    title="quillpath",
    heading="quillpath > Contributors",
    text=(
        "This package is authored and maintained by:\n\n- Ada Finch\n- Tomas Reed\n- Kurt Mahler\n\n"
        "with the help of patches submitted by many contributors."
    ),
)
DEPENDENCIES = Evidence(
    index=1,
    chunk_id="b",
    source="quillcore.md",
    title="quillcore",
    heading="quillcore > Dependencies",
    text=(
        "The quillcore package has the following dependencies...\n\n* h11\n* certifi\n\n"
        "And the following optional extras...\n\n* anyio - Required by the asyncio backend.\n"
    ),
)


def answer_and_verdict(question: str, ev: Evidence) -> tuple[str, str]:
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    return answer, verify(VerifyInputs(question=question, answer=answer, evidence=[ev])).recommendation


def test_a_who_question_is_answered_by_the_names_a_lead_in_lists() -> None:
    answer, rec = answer_and_verdict("Who maintains quillpath?", MAINTAINERS)
    assert "Ada Finch" in answer
    assert "Kurt Mahler" in answer
    assert rec == "ACCEPT"


def test_an_ellipsis_lead_in_is_read_with_its_items() -> None:
    answer, rec = answer_and_verdict("Which packages does quillcore depend on?", DEPENDENCIES)
    assert "h11" in answer
    assert "certifi" in answer
    assert rec == "ACCEPT"


def test_an_ellipsis_lead_in_alone_is_not_the_answer() -> None:
    answer, _ = answer_and_verdict("Which packages does quillcore depend on?", DEPENDENCIES)
    # The lead-in quoted by itself ends the quote where its list begins.
    assert "dependencies [1]" not in answer
    assert not answer.rstrip().endswith("...")
