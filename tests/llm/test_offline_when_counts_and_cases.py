"""When, how many, who, and what a question rules out: properties of English
and of how software is documented, found on a fresh tune set.

* "When did X drop Python 3.8 and 3.9?" is not answered by "Removed support
  for Python 3.8 and 3.9": the numbers are the question's own. A changelog
  line says when through its release heading, which the answer quotes;
* a verb in "-ed" is lower case: "Which Typeshed version ...?" asks for a
  version of Typeshed, and "Python 3.14" is another thing's version;
* a percentage is a share, not a count: "100% coverage" is not how many tests;
* "not" after a verb's subject negates the verb ("Why might I still not see
  ...?"); only a case in brackets or a noun phrase is ruled out;
* "Besides X, which ...?" rules X out as "Which ... besides X?" does;
* a who-question is answered by names: "Instead, it is the copyright of the
  Quill Development Team" says more than the sentence of the same passage
  before it; another passage's names are someone in another role;
* "QUILL_POSITION=-1" says "environment variable", and "K8s" is Kubernetes
  (a numeronym: first and last letter, the number of letters between).
"""

from __future__ import annotations

from selfrag_nb.llm.offline.abbrev import acronym_words, numeronym_words
from selfrag_nb.llm.offline.answer_kind import asked_head, counts
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import gives_time, without_excluded
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.subject import mentions
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GradeInputs, UsefulnessInputs


def _verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def _ev(text: str, heading: str = "", index: int = 1) -> Evidence:
    return Evidence(
        index=index, chunk_id=f"c{index}", source="quill.rst", title="quill", heading=heading, text=text
    )


def test_the_questions_own_numbers_do_not_say_when() -> None:
    question = "When did quill drop support for Python 3.8 and 3.9?"
    said = "Removed support for Python 3.8 and 3.9 [1]"
    assert not gives_time("Removed support for Python 3.8 and 3.9", question)
    assert gives_time("Removed support for Python 3.8 and 3.9")  # asked nothing: digits may be a time
    assert _verdict(question, said) == "no"
    assert (
        _verdict(question, "quill 0.20.0 (2026-05-02): Removed support for Python 3.8 and 3.9 [1]") == "yes"
    )
    ev = _ev(
        "- Python 3.14 support\n- Removed support for Python 3.8 and 3.9\n",
        heading="Changelog > 0.20.0 (2026-05-02)",
    )
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert answer.startswith("0.20.0 (2026-05-02): Removed support for Python 3.8 and 3.9"), answer


def test_a_capitalised_word_in_ed_is_a_name_not_a_verb() -> None:
    question = "Which Typeshed version does quill 0.20.0 bundle?"
    assert asked_head(question) == "version"
    assert asked_head("Which version is used?") == "version"
    assert asked_head("Which formats are supported?") == "formats"
    assert _verdict(question, "Python 3.14 support [1]") == "no"
    assert _verdict(question, "quill 0.20.0 bundles Typeshed 2026.1 [1].") != "no"


def test_a_percentage_is_not_a_count() -> None:
    question = "How many tests does quill's test suite contain?"
    assert not counts("It has a test suite with 100.0% coverage.", {"test"}, question)
    assert counts("Its test suite holds 1,200 tests.", {"test"}, question)
    assert (
        _verdict(question, "It has a test suite with 100.0% coverage for both statements and branches [1].")
        == "no"
    )
    assert _verdict(question, "The test suite runs 40 per cent faster [1].") == "no"


def test_a_negated_verb_rules_no_case_out() -> None:
    question = "Why might I still not see the new features after upgrading quill?"
    said = (
        "If you've upgraded to the latest version but aren't seeing any new features you were expecting "
        "then your python environment is likely still using an older version [1]."
    )
    assert _verdict(question, said) != "no"
    # a case in brackets is still ruled out
    ruled_out = "Which CMake version does quill need on a regular (not free-threaded) CPython?"
    assert _verdict(ruled_out, "On free-threaded CPython 3.15, it must be CMake 4.4.1 or newer [1].") == "no"


def test_a_fronted_exclusion_is_the_same_clause() -> None:
    asked = "Besides asyncio, which concurrency libraries does quill provide implementations for?"
    assert without_excluded(asked) == "Which concurrency libraries does quill provide implementations for?"
    assert without_excluded("Besides, what is quill?") == "Besides, what is quill?"  # no clause to drop
    assert asked_head(without_excluded(asked)) == "libraries"


def test_a_who_question_quotes_the_sentence_that_names_them() -> None:
    text = (
        "## Our Copyright Policy\n\nQuill uses a shared copyright model. Each contributor maintains copyright "
        "over their contributions to Quill. But, it is important to note that these contributions are typically "
        "only changes to the repositories. Thus, the Quill source code, in its entirety is not the copyright of "
        "any single person or institution. Instead, it is the collective copyright of the entire Quill "
        "Development Team.\n"
    )
    ev = Evidence(index=1, chunk_id="c1", source="quillwidgets.md", title="quillwidgets", text=text)
    question = "Who owns the copyright on the quillwidgets source code?"
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "Quill Development Team" in answer, answer


def test_a_who_question_takes_no_names_from_another_passage() -> None:
    # Another passage's names are someone in another role: "stepped down as
    # lead developer" does not say who started it.
    history = "quillmath.md", "quillmath", "quillmath > History"
    ev1 = Evidence(
        index=1,
        chunk_id="c1",
        source=history[0],
        title=history[1],
        heading=history[2],
        text=(
            "In 2011, Ada Quillon stepped down as lead developer, with Bob Marlowe, who also started as "
            "a Summer of Code student, taking his place."
        ),
    )
    ev2 = Evidence(
        index=2,
        chunk_id="c2",
        source=history[0],
        title=history[1],
        heading=history[2],
        text=(
            "QuillMath was started by Ada Quillon in 2005, he wrote some code during the summer, then he "
            "wrote some more code during summer 2006."
        ),
    )
    answer = generate(GenerateInputs(question="Who started QuillMath?", evidence=[ev1, ev2])).answer
    assert answer.startswith("QuillMath was started by Ada Quillon in 2005"), answer
    assert "stepped down" not in answer, answer


def test_a_variable_and_a_numeronym_say_their_words() -> None:
    question = (
        "Which environment variable setting does quill suggest for cloud logging consoles such as "
        "CloudWatch or Kubernetes that don't handle carriage returns well?"
    )
    text = (
        "Some cloud logging consoles which don't support \\r properly (cloudwatch, K8s) may benefit "
        "from export QUILL_POSITION=-1."
    )
    graded = grade(GradeInputs(question=question, source="quill.rst", title="quill", text=text))
    assert graded.isRelevant, graded
    assert numeronym_words(["Kubernetes", "CloudWatch"], text) == {"Kubernetes"}
    assert numeronym_words(["internationalization"], "Full i18n support.") == {"internationalization"}
    assert not numeronym_words(["peep"], "a p2p network")  # two letters left out: not a numeronym
    assert acronym_words("Does quill run on Kubernetes?", "Runs on K8s.")["kubernet"] == 1
    assert mentions("Kubernetes", _ev(text))
