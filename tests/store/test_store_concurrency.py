"""Four processes ingest into one knowledge base at the same time."""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from pathlib import Path

import pytest
from store_docs import DOCS, write_docs

from selfrag_nb.store.kb import KnowledgeBase


def _ingest(kb_path: str, folder: str) -> tuple[int, int]:
    kb = KnowledgeBase.open(kb_path, embedder="hashing")
    rep = kb.ingest(folder)
    return len(rep.added), len(rep.unchanged)


@pytest.mark.slow
def test_four_processes_zero_duplicate_chunks(tmp_path: Path) -> None:
    shared = write_docs(tmp_path / "shared")
    own = []
    for i in range(4):
        own.append(
            write_docs(
                tmp_path / f"own{i}", {f"p{i}/doc{j}.md": f"# P{i} D{j}\n\nText {i} {j}." for j in range(5)}
            )
        )
    kb_path = str(tmp_path / "kb")
    ctx = mp.get_context("spawn")
    with ctx.Pool(4) as pool:
        shared_results = pool.starmap(_ingest, [(kb_path, str(shared))] * 4)
        own_results = pool.starmap(_ingest, [(kb_path, str(f)) for f in own])
    kb = KnowledgeBase.open(kb_path)
    ids = [h.chunk_id for h in kb.chunks()]
    dupes = [cid for cid, n in Counter(ids).items() if n > 1]
    assert dupes == []
    n_shared_sources = len(DOCS) + 1  # faq.jsonl holds two records
    assert sum(a for a, _ in shared_results) == n_shared_sources  # exactly one process added each source
    assert sum(u for _, u in shared_results) == 3 * n_shared_sources
    assert own_results == [(5, 0)] * 4
    assert len(kb.sources()) == n_shared_sources + 20
