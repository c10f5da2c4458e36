"""Five question and answer forms analysts use, each read as English reads it.

* "Which Python versions and operating systems does X support?" asks for two
  kinds joined by "and"; "X supports Python>=3.6 on Linux, OSX and Windows"
  lists them, its first item ending the clause that introduces the list.
* "What is the minimum Python version required to run X?" is said by
  "Python>=3.10": a dotted number is a version, ">=" (or "or later", "3.9+",
  "at least") a lower bound.
* "In what form does X ship its schemas?" asks for a description: "form",
  like "kind" or "type", is not a thing the answer must name.
* "To report a vulnerability, please use the security contact." instructs:
  "please" before an imperative is politeness.
* "What is the quillref library?" asks what quillref is, as "What is
  quillref?" does; "What is the refund window?" still asks for a value.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import asked_head
from selfrag_nb.llm.offline.lexical import defined_name
from selfrag_nb.llm.offline.relevance import asked_kind, enumerates, grade
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import GradeInputs, UsefulnessInputs

SUPPORT = "Quill Terminals currently supports Python>=3.6 on Linux, OSX and Windows."


def test_two_kinds_joined_by_and_and_a_list_after_a_clause() -> None:
    question = "Which Python versions and operating systems does Quill Terminals support?"
    assert {"operat", "system"} <= asked_kind(question)
    assert enumerates(SUPPORT)
    assert not enumerates("When the process starts, it reads the file and exits.")
    out = grade(
        GradeInputs(question=question, text=SUPPORT, source="quill-terminals.md", title="Quill Terminals")
    )
    assert out.isRelevant, out


def test_a_dotted_number_and_a_lower_bound_say_minimum_version() -> None:
    question = "What is the minimum Python version required to run Quill Server?"
    text = "Quill Server currently supports Python>=3.10 on Linux, OSX and Windows."
    out = grade(GradeInputs(question=question, text=text, source="quill-server.md", title="Quill Server"))
    assert out.isRelevant, out
    assert "minimum" not in out.gaps
    # Without a bound or a version the words are still missing.
    bare = grade(
        GradeInputs(
            question=question,
            text="Quill Server runs on Linux.",
            source="quill-server.md",
            title="Quill Server",
        )
    )
    assert "minimum" in bare.gaps


def test_what_form_asks_for_a_description() -> None:
    question = "In what form does quillspec package the JSON Schema metaschemas for runtime access?"
    assert asked_head(question) == ""
    answer = (
        "The metaschemas are packaged for runtime access from Python as a referencing-based registry [1]."
    )
    assert usefulness(UsefulnessInputs(question=question, answer=answer)).verdict != "no"
    assert asked_head("What kind of tokeniser does quillspec use?") == "tokeniser"


def test_please_before_an_imperative_instructs() -> None:
    question = "How should I report a security vulnerability in quillsetup?"
    answer = "To report a security vulnerability, please use the Tidelift security contact [1]."
    assert usefulness(UsefulnessInputs(question=question, answer=answer)).verdict != "no"


def test_what_is_the_x_library_asks_what_x_is() -> None:
    assert defined_name("What is the quillref library?") == "quillref"
    assert defined_name("What is the refund window?") == ""
