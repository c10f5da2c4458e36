"""Examples in a question: a property of English, found on a fresh tune set.

"Which module do I import to use the extensions such as len, sorted or
filter?" asks about the extensions; "such as len, sorted or filter" shows
which ones are meant. A passage about the extensions that names none of the
examples answers the question as well as one that names them, so the
examples are no gap in grade, and the usefulness check does not ask the
answer for them. A yes/no question about the examples ("Does it read
formats such as YAML?") asks about them, and keeps them.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.question import without_examples
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import GradeInputs, UsefulnessInputs

QUESTION = "Which module do I have to import parse from to use the Quillpath extensions such as len, sorted or filter?"
ANSWER_TEXT = "To use the extensions below you must import from quillpath.ext."


def test_a_list_of_examples_is_dropped_from_a_question_asking_for_something() -> None:
    assert (
        without_examples(QUESTION)
        == "Which module do I have to import parse from to use the Quillpath extensions?"
    )
    # set off by commas, both commas go
    assert without_examples("Which extensions, such as len or sorted, need the ext parser?") == (
        "Which extensions need the ext parser?"
    )
    assert (
        without_examples("What backends (e.g. Redis, Memcached) can it use?") == "What backends can it use?"
    )
    assert without_examples("How do I build it without SSE2, for example when cross-compiling?") == (
        "How do I build it without SSE2?"
    )


def test_examples_that_do_not_end_the_clause_or_a_yes_no_question_are_kept() -> None:
    for question in (
        "Does it read formats such as YAML?",
        "Can I use backends such as Redis or Memcached?",
        # the list runs into the rest of the question: not only examples
        "Which setting suits consoles such as CloudWatch or Kubernetes that do not handle carriage returns?",
        "Which module provides extensions such as len, sorted or filter to transform data?",
    ):
        assert without_examples(question) == question


def test_a_chunk_naming_none_of_the_examples_is_not_graded_down_for_them() -> None:
    def score(question: str) -> int:
        return grade(
            GradeInputs(question=question, text=ANSWER_TEXT, title="Quillpath", source="quillpath.rst")
        ).relevanceScore

    plain = "Which module do I have to import parse from to use the Quillpath extensions?"
    assert score(QUESTION) == score(plain)
    assert score(QUESTION) >= 50
    # a chunk that names the examples still gains from them
    listing = "The extensions: len, sorted and filter work on lists of matches."
    with_names = grade(
        GradeInputs(question=QUESTION, text=listing, title="Quillpath", source="quillpath.rst")
    )
    without = grade(GradeInputs(question=plain, text=listing, title="Quillpath", source="quillpath.rst"))
    assert with_names.relevanceScore >= without.relevanceScore


def test_the_answer_is_judged_on_the_question_without_its_examples() -> None:
    out = usefulness(UsefulnessInputs(question=QUESTION, answer=f"{ANSWER_TEXT[:-1]} [1]."))
    assert out.verdict == "yes", out
    assert not {"len", "sorted", "filter"} & set(out.missing.replace(",", " ").split())
