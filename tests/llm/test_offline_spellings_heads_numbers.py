"""Three properties of English text the grade rule honours.

- British and American spellings are one word: "licence" / "license",
  "colour" / "color", "initialise" / "initialize", "centre" / "center".
- A past participle is not the kind of thing asked for: "What is the X
  package meant to be used for?" asks a purpose; "meant" is not a noun the
  passage must repeat.
- A number glued to a word is still the number: "RFC3339" mentions the
  3339 of "RFC 3339"."""

from __future__ import annotations

from selfrag_nb.llm.offline.lexical import stem
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.schemas import GradeInputs


def g(question: str, text: str) -> tuple[int, str]:
    out = grade(GradeInputs(question=question, text=text, title="quillpack", source="quillpack.md"))
    return out.relevanceScore, out.gaps


def test_british_and_american_spellings_meet() -> None:
    for a, b in [
        ("licence", "license"),
        ("colours", "colors"),
        ("initialised", "initialized"),
        ("centre", "center"),
    ]:
        assert stem(a) == stem(b), (a, b)
    score, gaps = g(
        "What licence is quillpack released under?",
        "quillpack is released under the terms of the Modified BSD License.",
    )
    assert score >= 50
    assert "licence" not in gaps


def test_a_participle_is_not_the_thing_asked_for() -> None:
    _, gaps = g(
        "What is the quillpack package meant to be used for?",
        "quillpack provides time zone data, used as a fallback on systems that have none.",
    )
    assert "thing asked for" not in gaps


def test_a_number_glued_to_a_word_is_mentioned() -> None:
    _, gaps = g(
        "Does quillpack validate RFC 3339 timestamps?", "quillpack is a pure Python RFC3339 validator."
    )
    assert "number 3339 not mentioned" not in gaps


def test_a_name_in_code_is_made_of_words() -> None:
    """A code name joins words with "_" or ".": "save_file" saves a file and
    "quillpack.torch" is a module of quillpack, so a how-to question in words
    finds the code that does it."""
    score, gaps = g(
        "How do I save tensors to a file with quillpack?",
        "from quillpack.torch import save_file\n\ntensors = {'a': zeros(2)}\nsave_file(tensors, 'model.qp')",
    )
    assert score >= 50
    assert "save" not in gaps
