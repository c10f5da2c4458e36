""" "What is X?" is answered by the lead of the section titled X: a README
puts the one-line description right under its title ("CFFI" / "Foreign
Function Interface for Python calling C code.", "# jiter" / "This is a
standalone version of the JSON parser ..."), whether or not it repeats the
name with "is a". Another sentence that merely names X does not beat it."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.schemas import Evidence, GenerateInputs


def ev(i: int, text: str, source: str, heading: str = "") -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, heading=heading, text=text)


def test_the_line_under_a_title_line_defines_the_title() -> None:
    out = generate(
        GenerateInputs(
            question="What is Quillpack?",
            evidence=[
                ev(
                    1,
                    "After git clone, we will get a directory called quillpack or quillpack-x.y.",
                    "quillpack.md",
                ),
                ev(
                    2,
                    "Quillpack\n=========\n\nForeign Function Interface for Python calling C code.\n\n"
                    "Please see the documentation.",
                    "quillpack.md",
                ),
            ],
        )
    )
    assert out.answer.startswith("Foreign Function Interface for Python calling C code [2].")


def test_the_first_sentence_of_the_section_titled_x_defines_x() -> None:
    out = generate(
        GenerateInputs(
            question="What is tarnjson?",
            evidence=[
                ev(
                    1,
                    "The main function provided by tarnjson is from_json(), which accepts a bytes object "
                    "containing JSON and returns a Python value.",
                    "tarnjson.md",
                    heading="tarnjson > Examples",
                ),
                ev(
                    2,
                    "This is a standalone version of the JSON parser used in pydantic-core. "
                    "The recommendation is to only use this package directly if you do not use pydantic.",
                    "tarnjson.md",
                    heading="tarnjson",
                ),
            ],
        )
    )
    assert out.answer.startswith("This is a standalone version of the JSON parser used in pydantic-core [2].")


def test_a_section_titled_otherwise_gets_no_lead_bonus() -> None:
    out = generate(
        GenerateInputs(
            question="What is tarnjson?",
            evidence=[
                ev(
                    1, "tarnjson is a fast JSON parser for Python.", "tarnjson.md", heading="tarnjson > Intro"
                ),
                ev(2, "This is a breaking change in the API.", "tarnjson.md", heading="tarnjson > Changes"),
            ],
        )
    )
    assert out.answer.startswith("tarnjson is a fast JSON parser")
