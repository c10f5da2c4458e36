"""A section whose whole body is a short name is the value of its heading:
"## License" over "MIT" says "License: MIT". Generate quotes it so, and
usefulness reads "<kind>: <name>" as naming the kind asked for. A body that
is not a name ("See the LICENSE file") is no such value."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs


def ev(i: int, text: str, heading: str) -> Evidence:
    return Evidence(
        index=i, chunk_id=f"c{i}", source="quillpack.md", title="Quillpack", heading=heading, text=text
    )


def test_a_heading_over_a_bare_name_is_quoted_as_its_value() -> None:
    out = generate(
        GenerateInputs(
            question="What license does Quillpack use?",
            evidence=[
                ev(1, "MIT", "Quillpack > License"),
                ev(2, "pip install quillpack", "Quillpack > Install"),
            ],
        )
    )
    assert out.answer == "License: MIT [1]."


def test_a_body_that_is_not_a_name_is_not_a_value() -> None:
    out = generate(
        GenerateInputs(
            question="What license does Quillpack use?",
            evidence=[ev(1, "See the file", "Quillpack > License")],
        )
    )
    assert "License:" not in out.answer


def test_usefulness_reads_kind_colon_name_as_naming_the_kind() -> None:
    q = "What license does Quillpack use?"
    assert usefulness(UsefulnessInputs(question=q, answer="License: MIT [1].")).verdict != "no"
    # A bare name without the kind is still a bare name.
    assert usefulness(UsefulnessInputs(question=q, answer="MIT [1].")).verdict == "no"


def test_verify_reads_the_heading_with_its_value() -> None:
    from selfrag_nb.llm.offline.verify import verify
    from selfrag_nb.llm.schemas import VerifyInputs

    out = verify(
        VerifyInputs(
            question="What license does Quillpack use?",
            answer="License: MIT [2].",
            evidence=[
                Evidence(index=1, chunk_id="c1", source="other.md", text="License is MIT."),
                ev(2, "MIT", "Quillpack > License"),
            ],
        )
    )
    assert [q.doc for q in out.claims[0].evidence] == [2]
    assert out.recommendation == "ACCEPT"
