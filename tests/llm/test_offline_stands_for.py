"""What a name stands for is the words its letters begin.

"What does the name Slick stand for?" is answered by "It's the Quiet
Log Inspection Console Kit": capitalised words in a row whose initials
spell the name, parts joined by a hyphen counting as words ("Next-Gen" for
"ng"). The passage saying so shares no word with the question but the name,
so the grader credits it, the reranker puts it first, the generator quotes
it, and the usefulness judge says "no" to an answer without such words."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.abbrev import expansion_of
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.relevance import grade, rerank
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GradeInputs, RerankInputs, UsefulnessInputs

Q = "What does the name Slick stand for?"
INTRO = (
    "Slick is a Python package for reading server logs in a terminal with as little typing as necessary. "
    'It\'s the "Server Log Inspection Console Kit". It is highly configurable but comes with sensible defaults.'
)
EXAMPLE = (
    "Slick example\n\nimport slick\n\nslick.open('server.log') shows the last hundred lines of the Slick log."
)


@pytest.mark.parametrize(
    ("question", "text", "found"),
    [
        (Q, INTRO, "Server Log Inspection Console Kit"),
        (
            'What does the "ng" in quillpath-ng stand for?',
            "Python QuillPath Next-Generation",
            "Next-Generation",
        ),
        ("What is YAML short for?", "YAML Ain't Markup Language", None),  # an initial of "Ain't" is "A": no
        (
            "What does the acronym QLS mean?",
            "the Quill Language Server (QLS) answers",
            "Quill Language Server",
        ),
        (
            "What does QOSE stand for in the name qoserfc?",
            "an implementation of the JSON-like Quill Object Signing and Encryption (QOSE) standards",
            "Quill Object Signing and Encryption",
        ),
    ],
)
def test_the_words_the_letters_begin(question: str, text: str, found: str | None) -> None:
    pattern = expansion_of(question)
    assert pattern is not None
    m = pattern.search(text)
    assert (m.group(0) if m else None) == found


def test_other_questions_ask_for_no_expansion() -> None:
    assert expansion_of("What does Slick do?") is None
    assert expansion_of("What is Slick?") is None


def test_the_passage_with_the_words_is_graded_and_ranked_first() -> None:
    assert grade(GradeInputs(question=Q, text=INTRO, source="slick.md", title="Slick")).isRelevant
    order = rerank(RerankInputs(query=Q, candidates=[EXAMPLE, INTRO])).ranking
    assert order[0].index == 1


def test_the_generator_quotes_the_words_and_the_judge_wants_them() -> None:
    ev = [Evidence(index=1, chunk_id="a", source="slick.md", title="Slick", text=INTRO)]
    answer = generate(GenerateInputs(question=Q, evidence=ev)).answer
    assert "Server Log Inspection Console Kit" in answer
    assert usefulness(UsefulnessInputs(question=Q, answer=answer)).verdict == "yes"
    out = usefulness(
        UsefulnessInputs(question=Q, answer="Slick is a Python package for reading server logs [1].")
    )
    assert out.verdict == "no"
    assert "stand for" in out.missing
