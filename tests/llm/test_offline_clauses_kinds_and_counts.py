"""What a question asks for, read from its grammar: properties of English
found on a fresh tune set.

* "Which website is the documentation on?" asks for an address: a URL, a
  domain or a name the question does not hold, not "the official
  documentation";
* "When I call connect(), how does it connect?" opens on a clause that sets
  the scene: the question asks how, not when;
* "with no required dependencies" counts them (none) for "How many required
  dependencies ...?"; "How many characters long may a line be?" counts
  characters (a modal verb ends the things counted, and "long" measures
  them), so "100% line coverage" does not answer it;
* "Network X" is one name, a run of capitalised words ending on a single
  capital letter, found in "NetworkX";
* "on my machine" says nothing about what is asked: a chunk that says how
  to run the tests answers "How do I run the tests on my machine?".
"""

from __future__ import annotations

from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.subject import mentions, subject_names
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GradeInputs, UsefulnessInputs


def _verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def test_a_website_is_an_address_or_a_name() -> None:
    question = "Which website is the official documentation for quillstack on?"
    assert _verdict(question, "For more information check out the official documentation [1].") == "no"
    assert _verdict(question, "The documentation is at https://quillstack.example.org/ [1].") != "no"
    assert _verdict(question, "The documentation is hosted on Read the Docs [1].") != "no"


def test_a_fronted_when_clause_does_not_make_a_when_question() -> None:
    question = "When I call quill.from_env(), how does the Quill client connect to the server by default?"
    assert _verdict(question, "It connects to the server through the default socket [1].") != "no"
    # a when-question still needs a time
    assert (
        _verdict("When did the Quill client stop supporting Python 3.9?", "It stopped supporting it [1].")
        == "no"
    )


def test_no_things_is_how_many() -> None:
    question = "How many required dependencies does Quillstack pull in?"
    assert (
        _verdict(question, "All of this comes in a small library with no required dependencies [1].") != "no"
    )
    assert _verdict(question, "Quillstack is a small library [1].") == "no"


def test_a_name_ending_on_a_single_capital_is_one_name() -> None:
    question = "How do I install Quill X together with all of its optional dependencies?"
    ev = Evidence(
        index=1,
        chunk_id="c1",
        source="quillx.rst",
        title="QuillX",
        text="Install with all optional dependencies:",
    )
    assert "Quill X" in subject_names(question, [ev])
    assert mentions("Quill X", ev)


def test_on_my_machine_is_no_gap() -> None:
    question = "How do I run the quillstack Python tests on my machine?"
    text = "# inside ./quillstack/bindings/python\npip install .[dev]\npytest -sv tests/"
    out = grade(
        GradeInputs(
            question=question, text=text, title="quillstack", heading="Testing", source="quillstack.md"
        )
    )
    assert out.relevanceScore >= 50, out
    assert "machine" not in out.gaps


def test_how_many_with_a_modal_verb_and_a_measure_counts_the_things() -> None:
    question = "How many characters long may a line of code contributed to quillstack be?"
    assert _verdict(question, "You should target 100% line coverage on any change to quillstack [1].") == "no"
    assert _verdict(question, "Use a 79-character line in quillstack [1].") != "no"
    assert (
        _verdict("How many retries may a quillstack client make?", "A client retries three times [1].")
        != "no"
    )
