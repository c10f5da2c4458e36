"""A version number says which version, emphasis asks nothing, and a package
ships what it contains: properties of English and of how software is
described, found on a fresh tune set.

* "Which Brindle version does Quill support?" is answered by a row such as
  "Brindle 12.0.3.1: Linux ✅; ..." that never writes the word "version": the
  number says it, for the sentence chosen and for the usefulness judge;
* a focus or time adverb ("exactly", "currently", "actually", "now") marks
  emphasis or the present state a document always describes: no word a
  passage must hold;
* what a package "ships" is what it contains, includes or bundles;
* "Which packages use X?" asks for names whatever its verb, and a name may
  be written as code ("quill-exporter-proto-grpc"), which English compounds
  ("well-known", "up-to-date") are not.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import listed_names
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.lexical import terms
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GradeInputs, UsefulnessInputs

_TABLE = (
    "Quill is a Python library to drive Brindle, Marlow and Tessel viewers with one API.\n\n"
    "| | Linux | macOS | Windows |\n| :--- | :---: | :---: | :---: |\n"
    "| Brindle 12.0.3.1 | ✅ | ✅ | ✅ |\n| Marlow 4.2 | ✅ | ✅ | ✅ |"
)


def test_a_version_number_says_which_version() -> None:
    question = "Which Brindle version does Quill support?"
    ev = Evidence(index=1, chunk_id="c1", source="quill.md", title="Quill", text=_TABLE)
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "12.0.3.1" in answer, answer
    said = (
        "Quill is a Python library to drive Brindle, Marlow and Tessel viewers with one API [1]. "
        "Brindle 12.0.3.1: Linux ✅; macOS ✅; Windows ✅ [1]."
    )
    judged = usefulness(UsefulnessInputs(question=question, answer=said))
    assert judged.verdict == "yes", judged
    for asked in (
        "Which Brindle version does Quill for Python support?",
        "Which Brindle release does Quill support?",
    ):
        row = "Quill runs everywhere [1]. Brindle 12.0.3.1: Linux ✅; macOS ✅; Windows ✅ [1]."
        judged = usefulness(UsefulnessInputs(question=asked, answer=row))
        assert judged.verdict == "yes", (asked, judged)


def test_emphasis_and_time_adverbs_ask_for_no_word() -> None:
    for adverb in ("exactly", "currently", "actually", "really", "precisely", "presently", "now"):
        assert adverb not in terms(f"Which Brindle version does Quill {adverb} support?")
    question = "Which Brindle version does Quill currently support?"
    out = grade(GradeInputs(question=question, text=_TABLE, title="Quill", source="quill.md"))
    assert out.isRelevant, out


def test_a_package_ships_what_it_contains() -> None:
    text = (
        "This is a Python package containing qzc-compiled binaries for the open calendar database. "
        "It is intended to be a fallback for systems that do not have system calendar data installed.\n\n"
        "This repository generates a pip-installable package, published on the index as quillzone."
    )
    title = "quillzone: Python package providing open calendar data"
    ev = Evidence(index=1, chunk_id="c1", source="quillzone.rst", title=title, text=text)
    for question in (
        "What does the Quillzone package ship?",
        "What exactly does the Quillzone package ship?",
    ):
        answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
        assert answer.startswith("This is a Python package containing qzc-compiled binaries"), (
            question,
            answer,
        )


def test_which_things_is_answered_by_names_written_as_code() -> None:
    text = (
        "This library is provided as a convenience to encode to Protobuf.\n\n"
        "Currently used by: quill-exporter-otlp-proto-grpc, quill-exporter-otlp-proto-http."
    )
    ev = Evidence(
        index=1,
        chunk_id="c1",
        source="quill-exporter-otlp-proto-common.rst",
        title="Quill Exporter OTLP Proto Common",
        text=text,
    )
    question = "Which packages use quill-exporter-otlp-proto-common?"
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "quill-exporter-otlp-proto-grpc, quill-exporter-otlp-proto-http" in answer, answer
    # English compounds are no names: a sentence of them is not a list of packages
    assert listed_names("It is a well-known, up-to-date and ever-green tool.", question) == set()
    assert listed_names("Used by quill_http and quill-grpc2.", question) == {"quill_http", "quill-grpc2"}
