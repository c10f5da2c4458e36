"""Full-text search finds a word however the question spells it: the index
holds each document's own spelling, and the query adds the other ways its
words are written. A British spelling also searches the American one
("licence" finds "license"), and a name written apart also searches the
name joined ("RFC 9999" finds "RFC9999", "Sorted Quills" finds
"sortedquills"). Real LanceDB, full-text leg alone."""

from __future__ import annotations

import pytest

from selfrag_nb.store.kb import KnowledgeBase


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("spellings")
    docs = root / "docs"
    docs.mkdir()
    (docs / "quillkit.md").write_text("# quillkit\n\nFree software: MIT license.\n", encoding="utf-8")
    (docs / "stamps.md").write_text("# stamps\n\nA validator for RFC9999 timestamps.\n", encoding="utf-8")
    (docs / "shelf.md").write_text(
        "# shelf\n\nThe sortedquills library keeps its items in order.\n", encoding="utf-8"
    )
    (docs / "ledger.md").write_text("# ledger\n\nThe ledger closes on day 5.\n", encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def _sources(kb: KnowledgeBase, query: str) -> list[str]:
    return [h.source for h in kb.search(query, k=5, mode="fts")]


def test_a_british_spelling_finds_the_american_one(kb: KnowledgeBase) -> None:
    assert _sources(kb, "licence") == ["quillkit.md"]
    assert _sources(kb, "Which licence?") == ["quillkit.md"]
    assert _sources(kb, "license") == ["quillkit.md"]  # the American spelling as before


def test_a_name_written_apart_finds_it_joined(kb: KnowledgeBase) -> None:
    assert _sources(kb, "RFC 9999") == ["stamps.md"]
    assert _sources(kb, "Sorted Quills") == ["shelf.md"]
    # lower-case words are not names: nothing joins them
    assert _sources(kb, "sorted quills") == []


def test_the_added_words_widen_nothing_else(kb: KnowledgeBase) -> None:
    assert _sources(kb, "Ledger closes") == ["ledger.md"]  # "ledgercloses" joins, and matches nothing
    assert _sources(kb, "colour") == []  # "color" is added, and matches nothing
