"""Places, code names and abbreviations that are not code: properties of
English and of how software is documented, found on a fresh tune set.

* "Where ...?" asks for a place: a locative preposition before what follows
  it ("at FriendFeed"), an address or a path, a noun for a place ("the
  releases page"), or a name the question does not hold ("Dublin"); a plea
  for sponsors names none;
* a class name the question and the chunk share, capitalised words run
  together ("pyyaml - Required for SchemaGenerator support."), is the one
  thing asked about: the chunk does not share "only the question's names"
  (a brand in capitals, "OpenAPI", is still a shared name);
* "The API is designed ..." opens on a common noun, the document's own API,
  not on another thing's name as "The AWS SDK ..." does;
* "e.g." and "i.e." are abbreviations, not dotted names to type: "like e.g.
  JUnit XML output" tells the reader nothing to do.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import gives_place, instructs
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import GradeInputs, UsefulnessInputs


def _verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def test_a_where_question_needs_a_place() -> None:
    question = "Where should I go to ask for help with quill?"
    plea = "Please consider joining them to help make quill's maintenance more sustainable [1]!"
    assert not gives_place(plea)
    assert _verdict(question, plea) == "no"
    assert _verdict(question, "Ask on Stack Overflow with the python-quill tag [1].") != "no"
    assert gives_place("Tornado was originally developed at FriendFeed.")
    assert gives_place("The releases page shows the history of the project.")
    assert gives_place("See https://quill.example/help for support.")
    # a place named without a preposition: a name the question does not hold
    offices = (
        "Quill employs about 180 people in three offices: Dublin (headquarters), Toronto and Shanghai [1]."
    )
    assert _verdict("Where is Quill's headquarters?", offices) != "no"
    assert gives_place("Dublin (headquarters), Toronto and Shanghai.", "Where is Quill's headquarters?")


def test_a_shared_code_name_is_not_only_a_name() -> None:
    text = (
        "Quillette only requires anyio, and the following are optional:\n\n"
        "- httpx2 - Required if you want to use the TestClient.\n"
        "- pyyaml - Required for SchemaGenerator support.\n"
    )
    graded = grade(
        GradeInputs(
            question="Which extra package does Quillette need for its SchemaGenerator?",
            text=text,
            title="quillette",
            source="quillette.md",
            heading="Quillette > Dependencies",
        )
    )
    assert graded.isRelevant, graded
    assert "only the names" not in graded.gaps
    # a chunk that shares only the product's name is still capped
    other = grade(
        GradeInputs(
            question="Which extra package does Quillette need for its SchemaGenerator?",
            text="Quillette is a lightweight ASGI framework.",
            title="quillette",
            source="quillette.md",
        )
    )
    assert not other.isRelevant
    # a brand written in capitals ("OpenAPI") is a name many documents share
    brand = grade(
        GradeInputs(
            question="Who holds the copyright on OpenAPI Quill Validator?",
            text="Python library that validates schema against the OpenAPI Specification.",
            title="quill-schema",
            source="quill-schema.rst",
        )
    )
    assert "only the names" in brand.gaps, brand


def test_the_api_is_the_documents_own() -> None:
    question = (
        "What is QuillCache's under_cached_property, and how does it differ from functools.cached_property?"
    )
    said = (
        "The API is designed to be nearly identical to the built-in functools.cached_property class, except "
        "for the additional under_cached_property class which uses self._cache instead of self.__dict__ [1]."
    )
    assert _verdict(question, said) != "no"
    # "The AWS SDK ..." is about another thing
    assert (
        _verdict(
            "Which Python versions does quill/crypto support?", "The AWS SDK for Python has dropped 3.6 [5]."
        )
        == "no"
    )


def test_e_g_is_not_code_to_type() -> None:
    said = (
        "This means that other pytest features, like e.g. JUnit XML output or fixture teardown, "
        "will not function normally."
    )
    assert not instructs(said)
    assert not instructs("Only the test itself is timed, i.e. not its fixtures.")
    assert instructs("Call gc.disable() before the loop.")
    assert instructs("Join paths with os.path.join.")
    question = "How do I make quill-timeout time only the test function itself, leaving out fixture teardown?"
    assert _verdict(question, said + " [1]") == "no"
