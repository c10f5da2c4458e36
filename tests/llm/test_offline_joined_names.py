"""A name written together or apart is one name.

"What is quillruntime?" asks about the project its README calls "Quill
Runtime"; "sorted containers" in a question is "sortedcontainers" in a
document. Compared by letters and digits only, two or three words in a row
against one word: the grader counts the chunk as about the question, the
reranker weighs it, and the usefulness judge reads the answer as naming it.
Function words never join ("is this" is not "isthis"; a phrasal verb's
particle does: tests/llm/test_offline_clipped_and_phrasal.py), and a word
the text also writes together is matched as it is."""

from __future__ import annotations

from collections import Counter

from selfrag_nb.llm.offline.lexical import joined_words
from selfrag_nb.llm.offline.relevance import grade, rerank
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import GradeInputs, RerankInputs, UsefulnessInputs

LEAD = "Quill Runtime is a performance-focused scoring engine for Quill models."


def test_joined_words_both_ways() -> None:
    assert joined_words("What is quillruntime?", f"{LEAD} Quill Runtime is fast.") == Counter(
        {"quillruntim": 2}
    )
    assert joined_words(
        "What license is Sorted Containers under?", "sortedcontainers is Apache 2.0"
    ) == Counter({"sort": 1, "container": 1})
    assert joined_words("Why is this quillpad slow?", "Isthis is easy.") == Counter()
    # already written the same way: nothing to add
    assert joined_words("What is quillruntime?", "quillruntime, or Quill Runtime") == Counter()
    # too short to be told from two words that happen to meet
    assert joined_words("What is abc?", "a bc") == Counter()


def test_grade_finds_the_name_written_apart() -> None:
    out = grade(
        GradeInputs(
            question="What is quillruntime?",
            title="Quill Runtime",
            heading="Quill Runtime",
            source="quill-runtime.rst",
            text=LEAD,
        )
    )
    assert out.isRelevant, (out.relevanceScore, out.gaps)


def test_rerank_weighs_the_name_written_apart() -> None:
    out = rerank(
        RerankInputs(
            query="What is quillruntime?", candidates=["Release notes for 1.2 are on the site.", LEAD]
        )
    )
    assert out.ranking[0].index == 1


def test_usefulness_reads_the_answer_as_naming_it() -> None:
    out = usefulness(UsefulnessInputs(question="What is quillruntime?", answer=f"{LEAD[:-1]} [1]."))
    assert out.verdict == "yes", (out.reason, out.missing)
