"""An identifier written with a hyphen or an underscore is the same
identifier: a Python distribution is named "nest-asyncio2" and imported as
"nest_asyncio2", and a chunk that writes only the import name is about the
name the question gives. Grading and reranking do not cap it as a chunk
missing the identifier."""

from __future__ import annotations

from selfrag_nb.llm.offline.relevance import exact_adjustment, rerank
from selfrag_nb.llm.schemas import RerankInputs


def test_hyphen_and_underscore_spell_one_identifier() -> None:
    _, cap, notes = exact_adjustment("Can nest-asyncio2 patch uvloop loops?", "import nest_asyncio2")
    assert cap == 100
    assert notes == []
    _, cap, _ = exact_adjustment("What does err_timeout2 mean?", "ERR-TIMEOUT2 is raised after 30 s.")
    assert cap == 100


def test_another_identifier_is_still_missing() -> None:
    _, cap, notes = exact_adjustment("Can nest-asyncio2 patch uvloop loops?", "import nest_asyncio3")
    assert cap < 50
    assert notes


def test_rerank_keeps_the_chunk_that_answers_in_the_import_spelling_first() -> None:
    out = rerank(
        RerankInputs(
            query="Can nest-asyncio2 patch event loops from uvloop?",
            candidates=[
                "nest-asyncio2 leaks an event loop when asyncio.run creates one.",
                "import nest_asyncio2\nOnly event loops from asyncio can be patched; loops from other "
                "projects, such as uvloop, generally can't be patched.",
            ],
        )
    )
    assert out.ranking[0].index == 1
