"""Answer forms the usefulness check refused on a tune set it had never seen.

Each is a property of English, not of one document:

* a number in words counts ("tens of thousands of open connections");
* a hyphenated compound names its parts ("~800 lines-of-code" counts lines);
* "a package for the creation ... of networks" says what it is for, as
  "a package to create networks" does;
* a name set off by a comma renames the role noun before it ("the author of
  the original library, Ada Lovelace"), and the question's verb may come in
  another form ("chose" asked, "chosen" said);
* "What's the pip command to get X?" asks what to type, as "How do I get
  X?" does;
* "Under what module name ...?" is answered by a name by its form
  ("quill_inspect");
* a one- or two-word answer made only of the question's words ("Testing."
  for "... to run its tests?") names nothing, even for a "which" question;
* a section that is only a command ("Installation" over "pip install x")
  answers "How do I install ...?" with its heading as the lead-in.
"""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.question import HOW_TO_Q_RE
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs


def verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        (
            "How many open connections at once can quillweb scale to?",
            "By using non-blocking network I/O, quillweb can scale to tens of thousands of open connections [1].",
            "not no",
        ),
        ("How many open connections at once can quillweb scale to?", "quillweb is fast [1].", "no"),
        (
            "How many lines of code is the quillparse library?",
            "The whole library is ~800 lines-of-code [1].",
            "not no",
        ),
        (
            "How many lines of code is the quillparse library?",
            "The whole library is small and has 3 modules [1].",
            "no",
        ),
        (
            "What is quillnet used for?",
            "quillnet is a Python package for the creation, manipulation, and study of complex networks [1].",
            "not no",
        ),
        ("What is quillnet used for?", "quillnet is a Python package for Python 3 [1].", "no"),
        (
            "Who chose the name quillboto?",
            "The name was chosen by the author of the original quillboto library, Ada Lovelace, as a "
            "reference to the company [1].",
            "not no",
        ),
        (
            "Who chose the name quillboto?",
            "quillboto was named after a river dolphin, Inia geoffrensis [1].",
            "no",
        ),
        # a comma after a verb phrase is no appositive: the name is not its agent
        (
            "Who chose the name quillboto?",
            "The name was chosen early in the project's long and busy history, Python 2 era [1].",
            "no",
        ),
        ("What's the pip command to get the Quill SDK?", "pip install quill-sdk [1]", "not no"),
        (
            "Under what module name do I import the Quill Inspect library?",
            "The library can be imported from the quill_inspect module [1].",
            "not no",
        ),
        (
            "Under what module name do I import the Quill Inspect library?",
            "The library can be imported easily [1].",
            "no",
        ),
        # a word or two the question already holds names nothing ("Testing:" heading quoted)
        ("Which packages does quillnum need in order to run its tests?", "Testing [1].", "no"),
        ("Which tool formats quill code?", "Black [1].", "not no"),
    ],
)
def test_answer_forms(question: str, answer: str, expected: str) -> None:
    got = verdict(question, answer)
    assert got != "no" if expected == "not no" else got == expected, got


@pytest.mark.parametrize(
    ("question", "how_to"),
    [
        ("What's the pip command to get the Quill SDK?", True),
        ("Which command starts the quill server?", True),
        ("What are the commands to build quill?", True),
        ("What is the command line interface of quill?", False),
        ("What does the command do?", False),
    ],
)
def test_a_command_question_asks_what_to_type(question: str, how_to: bool) -> None:
    assert bool(HOW_TO_Q_RE.search(question)) is how_to


# "Installation" over a command and nothing else (an RST "::" block, a README
# install section): the command is the answer, its heading the lead-in.
INSTALL = "Installation\n------------\n\n::\n\n    pip install quill-sdk\n\nReferences\n----------\n\n* The Quill project.\n"


def test_a_section_that_is_a_command_answers_how_to_install() -> None:
    from selfrag_nb.cleantext import clean_text
    from selfrag_nb.llm.offline.generate import generate
    from selfrag_nb.llm.offline.verify import verify
    from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs

    section = clean_text(INSTALL.split("References", maxsplit=1)[0])
    assert section == "Installation\n\n```\npip install quill-sdk\n```"
    ev = Evidence(
        index=1,
        chunk_id="a",
        source="quill-sdk.rst",
        title="Quill SDK",
        heading="Quill SDK > Installation",
        text=section.split("\n\n", 1)[1],
    )
    for question in ("How do I install the Quill SDK?", "What's the pip command to get the Quill SDK?"):
        out = generate(GenerateInputs(question=question, evidence=[ev]))
        assert out.answer == "Installation: `pip install quill-sdk` [1].", question
        support = verify(VerifyInputs(question=question, answer=out.answer, evidence=[ev]))
        assert support.isFullySupported, support
    # Not a how-to: the command alone does not say what the SDK is.
    out = generate(GenerateInputs(question="What is the Quill SDK?", evidence=[ev]))
    assert "pip install" not in out.answer


def _ev(index: int, text: str, heading: str = "") -> object:
    from selfrag_nb.llm.schemas import Evidence

    return Evidence(
        index=index,
        chunk_id=f"c{index}",
        source="quill.rst",
        title="quill: HTTP/2 Protocol Stack",
        heading=heading,
        text=text,
    )


def test_who_is_answered_by_the_sentence_naming_someone_in_the_role() -> None:
    # Other sentences share more words with "Who wrote the quill HTTP/2
    # library?"; only one names who wrote it.
    from selfrag_nb.llm.offline.generate import generate
    from selfrag_nb.llm.schemas import GenerateInputs

    ev = [
        _ev(
            1,
            "Instead, quill is a purely in-memory solution, defined in terms of data actions and HTTP/2 frames.",
        ),
        _ev(2, "quill is made available under the MIT License."),
        _ev(
            3, "quill was authored by Ada Lovelace and is maintained by the members of quill-org.", "Authors"
        ),
    ]
    answer = generate(GenerateInputs(question="Who wrote the quill HTTP/2 library?", evidence=ev)).answer  # type: ignore[arg-type]
    assert (
        "quill was authored by Ada Lovelace and is maintained by the members of quill-org [3]." in answer
    ), answer


def test_a_list_completes_a_sentence_that_stops_on_a_function_word() -> None:
    # "... is also available in" over its items: the colon left out, the list
    # is the rest of the sentence; a question before it is not an answer.
    from selfrag_nb.cleantext import clean_text
    from selfrag_nb.llm.offline.answer_kind import asked_head
    from selfrag_nb.llm.offline.generate import generate
    from selfrag_nb.llm.offline.quotable import listed
    from selfrag_nb.llm.schemas import GenerateInputs

    text = clean_text(
        "More comfortable in another programming language? Quill is also available in\n"
        "- [Node.js](https://x.org/node),\n- [.NET](https://x.org/net),\n- [Java](https://x.org/java).\n"
    )
    joined = "Quill is also available in Node.js, .NET, Java."
    assert listed(text) == [joined]
    question = "Which programming languages other than Python is Quill available for?"
    assert asked_head(question) == "languages"
    answer = generate(GenerateInputs(question=question, evidence=[_ev(1, text, "Other languages")])).answer  # type: ignore[list-item]
    assert answer == "Quill is also available in Node.js, .NET, Java [1].", answer
    assert verdict(question, answer) != "no"
    # A line that ends a sentence is no lead-in: its items stay items.
    assert listed(clean_text("Quill runs anywhere.\n- Linux\n- macOS\n")) == []


def test_a_projects_conventional_file_names_the_document_not_the_subject() -> None:
    # "the quill-settings README lists": no passage says "README", and none
    # needs to; the names asked about are the gateway and the stack.
    from selfrag_nb.llm.offline.subject import subject_names

    question = "What is the Quill AI Gateway that the quill-settings README lists as part of the Quill Stack?"
    assert subject_names(question, []) == ["Quill AI Gateway", "Quill Stack"]
    assert subject_names("What does the Quill CHANGELOG say about version 2?", []) == ["Quill"]
    # Written in capitals only: in "the Apache License" the word is part of a name.
    assert "Apache License" in subject_names("Does Quill ship under the Apache License?", [])


def test_an_acronym_says_the_words_it_abbreviates_when_quoting() -> None:
    # "not currently GA" answers "Is it generally available?", as grade reads it.
    from selfrag_nb.llm.offline.generate import generate
    from selfrag_nb.llm.schemas import Evidence, GenerateInputs

    text = (
        "quilltransfer is a Python library for managing Amazon S3 transfers. This project is maintained "
        "and published by Quill Corp. This project is not currently GA. If you are planning to use this "
        "code in production, make sure to lock to a minor version as interfaces may break from minor "
        "version to minor version."
    )
    ev = [Evidence(index=1, chunk_id="a", source="quilltransfer.rst", title="quilltransfer", text=text)]
    question = "Is quilltransfer generally available, and is it safe to rely on in production?"
    assert (
        "This project is not currently GA [1]."
        in generate(GenerateInputs(question=question, evidence=ev)).answer
    )
