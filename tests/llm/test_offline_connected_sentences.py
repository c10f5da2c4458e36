"""Answers a fresh tune set showed cut short or turned down, each a property
of English or of how documents are written, not of one document:

* a sentence opening with "Otherwise", "However" or "Instead" finishes the
  one before it, as one opening with "This" does;
* "These types therefore use ..." is a consequence with the adverb after its
  subject, so "Why ...?" quotes its reason, and the reason's own reason when
  that one points back ("Relaxing this restriction ...");
* "Which part of the standard ...?" is answered by a part's label ("Annex B");
* a version the question names is mentioned by a document that writes the
  figure alone ("renamed ... in 0.5."), without the word "version";
* "An 8-bit type ..." opens with a measure, not with the name of another thing;
* "What kind of timeout is X?" asks for a kind ("cooperative"), not a length of time;
* "What is the default X?" answered by X's description takes the next
  sentence of the entry when it carries the default's label ("[default: 0.3]").
"""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import DURATION_Q_RE
from selfrag_nb.llm.offline.relevance import exact_adjustment
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs


def _answer(question: str, text: str, heading: str = "") -> str:
    ev = Evidence(index=1, chunk_id="c1", source="quill.md", title="quill", heading=heading, text=text)
    return generate(GenerateInputs(question=question, evidence=[ev])).answer


def verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize("opener", ["Otherwise", "However,", "Instead"])
def test_a_connective_finishes_the_sentence_before_it(opener: str) -> None:
    text = (
        "A QuillSet is sortable, but only when sealed. "
        f"{opener} it raises a SealError at once. Sealing is cheap and happens in place."
    )
    answer = _answer("What happens if I sort a QuillSet before it is sealed?", text)
    assert "raises a SealError" in answer, answer


def test_why_quotes_the_reason_of_a_consequence_stated_after_its_subject() -> None:
    text = (
        "The array layer cannot address anything smaller than one whole byte in memory. "
        "Relaxing this restriction would take years of work. "
        "Nibble types therefore use a padded layout, where each value fills a byte of its own."
    )
    answer = _answer("Why do quill's nibble types use a padded layout that fills a byte?", text)
    assert answer.startswith("The array layer cannot address anything smaller than one whole byte"), answer
    assert "Relaxing this restriction" in answer
    # A reason that does not point back is quoted alone.
    text = (
        "The array layer cannot address anything smaller than one whole byte in memory. "
        "Nibble types therefore use a padded layout, where each value fills a byte of its own."
    )
    answer = _answer("Why do quill's nibble types use a padded layout that fills a byte?", text)
    assert answer.startswith("The array layer cannot address"), answer


def test_which_part_is_answered_by_a_parts_label() -> None:
    question = "Which part of the ISO standard does quillparse's grammar follow?"
    assert (
        verdict(question, "quillparse follows the grammar given in Annex B of the ISO standard [1].") != "no"
    )
    assert verdict(question, "quillparse follows the ISO standard closely [1].") == "no"


def test_a_version_written_alone_is_mentioned() -> None:
    question = "What was quillpack called on PyPI before version 0.7?"
    _, cap, notes = exact_adjustment(
        question, "The PyPI name changed from quillpack-python to quillpack in 0.7."
    )
    assert cap == 100
    assert not notes, notes
    # ... but not inside another figure.
    _, cap, notes = exact_adjustment(question, "The PyPI name changed in 10.7 and again in 0.75.")
    assert cap < 100
    assert notes


def test_a_measure_is_not_the_name_of_another_subject() -> None:
    question = "Does the quill_f8x type support infinities?"
    answer = "An 8-bit floating point type with 4 bits exponent [1].\ninfinities: Not supported [1]"
    assert verdict(question, answer) != "no"
    # A name by its form that the question does not hold still is another subject.
    assert verdict(question, "numpy-f8 supports infinities [1].") == "no"


def test_what_kind_of_timeout_asks_for_a_kind_not_a_length() -> None:
    assert not DURATION_Q_RE.search("What kind of timeout is quilltest's session timeout?")
    assert DURATION_Q_RE.search("What is quilltest's session timeout?")
    answer = "Session timeouts are cooperative timeouts, checked after each test [1]."
    assert verdict("What kind of timeout is quilltest's session timeout?", answer) != "no"


def test_a_default_labelled_after_an_entry_comes_with_its_description() -> None:
    text = (
        "- damping : float, optional\n"
        "  Exponential damping weight of the newest sample in the rolling rate shown on the bar "
        "(ignored when paused). Ranges from 0 (steady) to 1 (jumpy) [default: 0.4].\n"
        "- width : int, optional\n  Columns the bar may use."
    )
    answer = _answer("What is the default damping weight quillbar uses for its rolling rate?", text)
    assert "[default: 0.4]" in answer, answer
    # Not for a question that asks no default.
    answer = _answer("What does the damping weight of quillbar do to its rolling rate?", text)
    assert "0.4" not in answer, answer
