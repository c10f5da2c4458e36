"""A sentence that ends by announcing an example is whole without it.

"..., or set QUILL_NO_EXT to a non-empty value, e.g.:" over a code block
says what to do before its colon; "e.g.", "for example" and "for instance"
only announce an illustration. The sentence is quotable as the statement
before them (a lead-in announcing a list, "supports the following:", says
nothing without its items and stays unquoted)."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs

Q = "Which environment variable makes quillstack skip compiling its C extensions?"
TEXT = (
    "Installation\n\n"
    "On platforms without wheels, quillstack compiles its C extensions from the source tarball.\n\n"
    "To skip the compilation, set the QUILL_NO_EXTENSIONS environment variable to a non-empty value, e.g.:\n\n"
    "```console\n$ QUILL_NO_EXTENSIONS=1 pip install quillstack\n```\n"
)
EV = Evidence(index=1, chunk_id="a", source="quillstack.md", title="quillstack", text=TEXT)


def test_the_statement_before_the_example_is_quoted_and_supported() -> None:
    answer = generate(GenerateInputs(question=Q, evidence=[EV])).answer
    assert "set the QUILL_NO_EXTENSIONS environment variable to a non-empty value" in answer
    assert "e.g." not in answer
    out = verify(VerifyInputs(question=Q, answer=answer, evidence=[EV]))
    assert out.recommendation == "ACCEPT", out


def test_for_example_and_for_instance_announce_an_example_too() -> None:
    for marker in ("for example:", "for instance:"):
        text = TEXT.replace("e.g.:", marker)
        answer = generate(GenerateInputs(question=Q, evidence=[EV.model_copy(update={"text": text})])).answer
        assert "QUILL_NO_EXTENSIONS environment variable to a non-empty value" in answer
