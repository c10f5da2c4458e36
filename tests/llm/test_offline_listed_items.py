"""A question asking for several things ("Which language servers use
Jedi?") is answered by a list: the lead-in ending in ":" read with its items
as one statement, quoted with every item, not one item picked from the list
nor the lead-in alone. Verify reads the same statement from the evidence, so
the quote is supported. A list of whole sentences, and a question asking for
one thing, are quoted sentence by sentence as before."""

from __future__ import annotations

import pytest

from selfrag_nb.cleantext import clean_text
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs


def ev(text: str) -> Evidence:
    return Evidence(index=1, chunk_id="c1", source="tilekit.rst", text=text)


SERVERS = ev(
    "Tilekit is a map tile renderer for Python.\n\n"
    "There are a few tile servers that use Tilekit:\n\n"
    "- tile-server-one\n"
    "- mapnik-bridge (currently unmaintained)\n"
    "- vector-tiles-server (fork from mapnik-bridge)\n"
    "- quadkey\n"
)


@pytest.mark.parametrize(
    "question",
    ["Which tile servers use Tilekit?", "What are the tile servers that use Tilekit?"],
)
def test_a_list_answers_a_question_asking_for_several(question: str) -> None:
    out = generate(GenerateInputs(question=question, evidence=[SERVERS]))
    for item in (
        "tile-server-one",
        "mapnik-bridge (currently unmaintained)",
        "vector-tiles-server",
        "quadkey",
    ):
        assert item in out.answer
    assert "There are a few tile servers that use Tilekit:" in out.answer
    support = verify(VerifyInputs(question=question, answer=out.answer, evidence=[SERVERS]))
    assert support.isFullySupported, support


def test_a_list_of_longer_phrases_is_quoted_whole() -> None:
    # Hard-wrapped items, as the stages pass them: clean text joins the wraps.
    text = ev(
        clean_text(
            "Tilekit is a pure Python library enabling:\n\n"
            "- the enforcement of strong typing for the attributes of tile objects\n"
            "  (typed attributes are called layers);\n"
            "- dynamically calculated default zoom levels;\n"
            "- reading configuration values from files or from command line arguments - a\n"
            "  distinct layer on top of tilekit, so you may use it without the configuration machinery.\n"
        )
    )
    out = generate(
        GenerateInputs(question="Which features does Tilekit provide for tile objects?", evidence=[text])
    )
    assert "dynamically calculated default zoom levels" in out.answer
    assert "without the configuration machinery" in out.answer


def test_items_that_are_sentences_are_quoted_one_by_one() -> None:
    text = ev(
        "Tilekit has these tile servers:\n\n"
        "- The first server renders raster tiles quickly. It caches them on disk.\n"
        "- The second server renders vector tiles. It needs a GPU.\n"
    )
    out = generate(GenerateInputs(question="Which tile servers does Tilekit have?", evidence=[text]))
    assert "Tilekit has these tile servers:" not in out.answer


def test_a_table_of_contents_is_not_a_list_of_instances() -> None:
    text = ev(
        "Full documentation is available at tilekit.example.org:\n\n"
        "- Tutorial -- learn core concepts through real-world examples\n"
        "- Platform details -- default paths for each operating system\n\n"
        "Tilekit handles the differences between macOS, Windows, Linux, Android, and iOS.\n"
    )
    out = generate(GenerateInputs(question="Which operating systems does Tilekit handle?", evidence=[text]))
    assert "Full documentation" not in out.answer
    assert "macOS, Windows, Linux, Android, and iOS" in out.answer


@pytest.mark.parametrize(
    "question",
    ["What does Tilekit render?", "Which process does Tilekit use?", "Which tile server is unmaintained?"],
)
def test_a_question_asking_for_one_thing_does_not_get_the_list(question: str) -> None:
    out = generate(GenerateInputs(question=question, evidence=[SERVERS]))
    assert "There are a few tile servers that use Tilekit:" not in out.answer
