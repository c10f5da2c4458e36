"""Equal scores are ordered by chunk id (README, Search): one question gets
the same hits every time, whatever order LanceDB found its tied rows in."""

from __future__ import annotations

import itertools
import random

import pytest

from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.types import Hit

_BOILERPLATE = "# Licence\n\nThis package is released under the zebra licence terms.\n"


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """40 documents of one text (every leg scores them alike), ingested in
    shuffled batches so the table has several fragments, plus one document
    that says two of the words twice (scored apart from the copies)."""
    root = tmp_path_factory.mktemp("ties")
    names = [f"copy{i:02d}" for i in range(40)]
    random.Random(7).shuffle(names)
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    for batch in range(4):
        folder = root / f"batch{batch}"
        folder.mkdir()
        for name in names[batch * 10 : (batch + 1) * 10]:
            (folder / f"{name}.md").write_text(_BOILERPLATE)
        kb.ingest(folder)
    best = root / "best"
    best.mkdir()
    (best / "zebra.md").write_text("# Zebra\n\nA zebra licence, the zebra licence.\n")
    kb.ingest(best)
    return kb


def _assert_by_score_then_id(hits: list[Hit]) -> None:
    for a, b in itertools.pairwise(hits):
        assert a.score > b.score or (a.score == b.score and a.chunk_id < b.chunk_id), (a, b)


@pytest.mark.parametrize("mode", ["fts", "vector"])
def test_a_smaller_k_cuts_the_same_ordered_list(tied: KnowledgeBase, mode: str) -> None:
    everything = tied.search("zebra licence terms", k=100, mode=mode)
    assert len(everything) == 41
    _assert_by_score_then_id(everything)
    # many rows tie at every cut below: whichever of them LanceDB returned,
    # the k kept are the first k of the whole ordered list
    for k in (1, 5, 12, 30):
        assert [h.chunk_id for h in tied.search("zebra licence terms", k=k, mode=mode)] == [
            h.chunk_id for h in everything[:k]
        ], (mode, k)


def test_a_tie_larger_than_the_read_ahead_still_gives_k_ordered_hits(tied: KnowledgeBase) -> None:
    from selfrag_nb.store import kb_core

    old = kb_core._TIE_READ
    kb_core._TIE_READ = 3
    try:
        hits = tied.search("zebra licence terms", k=5, mode="fts")
    finally:
        kb_core._TIE_READ = old
    assert len(hits) == 5
    _assert_by_score_then_id(hits)


def test_one_question_gets_the_same_hits_every_time(tied: KnowledgeBase) -> None:
    hits = tied.search("zebra licence", k=7, mode="hybrid")
    _assert_by_score_then_id(hits)
    first = [h.chunk_id for h in hits]
    for _ in range(20):
        assert [h.chunk_id for h in tied.search("zebra licence", k=7, mode="hybrid")] == first
