"""Where a claim ends, and what "What is the ... version?" asks for.

An answer quotes sentences, each closed by its citation: "... library [1].
responses.get(...) registers a GET response [2]". The citation and the full
stop after it end the claim even when the next one opens with a name in
lower case, which a sentence splitter (waiting for a capital) would run on:
two claims, each checked against the chunk it cites, not one claim that no
chunk holds whole.

"What is the oldest Python version X supports?" asks for a version, as "Which
Python versions ...?" does: an answer that names none does not answer it."""

from __future__ import annotations

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, UsefulnessInputs, VerifyInputs

EVIDENCE = [
    Evidence(
        index=1,
        chunk_id="a",
        source="quillmock.rst",
        title="Quillmock",
        text="A utility library for mocking out the quill HTTP library.",
    ),
    Evidence(
        index=2,
        chunk_id="b",
        source="quillmock.rst",
        title="Quillmock",
        heading="Quillmock > Shortcuts",
        text="quillmock.get(url, body) registers a GET response.",
    ),
]


def test_a_citation_and_its_full_stop_end_a_claim() -> None:
    answer = (
        "A utility library for mocking out the quill HTTP library [1]. "
        "quillmock.get(url, body) registers a GET response [2]."
    )
    out = verify(VerifyInputs(question="What does quillmock do?", answer=answer, evidence=EVIDENCE))
    assert [c.claim for c in out.claims] == [
        "A utility library for mocking out the quill HTTP library.",
        "quillmock.get(url, body) registers a GET response.",
    ]
    assert [c.verdict for c in out.claims] == ["supported", "supported"]
    assert out.recommendation == "ACCEPT"


def test_a_citation_inside_a_sentence_does_not_end_it() -> None:
    answer = "Quillmock mocks the quill HTTP library [1] and registers GET responses [2]."
    out = verify(VerifyInputs(question="What does quillmock do?", answer=answer, evidence=EVIDENCE))
    assert len(out.claims) == 1


def test_what_is_the_version_asks_for_a_version() -> None:
    q = "What is the oldest Python version quillmock supports?"
    vague = "quillmock is tested with modern versions of Python on Linux and macOS [1]."
    out = usefulness(UsefulnessInputs(question=q, answer=vague))
    assert out.verdict == "no"
    assert "version" in out.reason
    named = usefulness(UsefulnessInputs(question=q, answer="quillmock supports Python 3.9 and later [1]."))
    assert named.verdict != "no", named.reason
