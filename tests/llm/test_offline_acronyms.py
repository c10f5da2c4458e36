"""An acronym stands for the words whose initials it spells: a passage that
says "GC" speaks of the "garbage collection" a question asks about. Grading
credits those words when the passage writes the acronym (in capitals) and
the question spells the words out in a row."""

from __future__ import annotations

from selfrag_nb.llm.offline.abbrev import acronym_words
from selfrag_nb.llm.offline.lexical import stem
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.schemas import GradeInputs

Q = "How can I avoid unnecessary garbage collection when unpacking a large message with quillpack?"
TIPS = (
    "Performance tips\n\nCPython's GC starts when the number of allocated objects grows. "
    "This means unpacking may trigger unnecessary GC. You can use gc.disable() when unpacking "
    "a large message with quillpack."
)


def test_the_acronym_stands_for_the_words_it_abbreviates() -> None:
    found = acronym_words(Q, TIPS)
    assert found[stem("garbage")] >= 1
    assert found[stem("collection")] >= 1
    # Initials that spell no run of the question's words stand for nothing.
    assert not acronym_words(Q, "The CPU and the API are fast.")


def test_a_passage_writing_the_acronym_is_graded_relevant() -> None:
    out = grade(GradeInputs(question=Q, text=TIPS, source="quillpack.md"))
    assert out.isRelevant
    assert "garbage" not in out.gaps
