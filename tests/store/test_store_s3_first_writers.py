"""Two first ingests at once into a new knowledge base on object storage
(moto_server on loopback: the real S3 API, not AWS).

Rule (docs/scaling.md, "One writer at a time on object storage"): there is no
lock on a bucket, and two writers that both create the table must not be told
of damage that is not there, nor lose each other's rows: the one whose create
lost merges its rows into the other's table (a retry inside), so both report
success, every source of both is stored once, and the table reads and searches
cleanly. Several rounds per case: which writer loses, and how (LanceDB's
"already exists", or its create retried as an overwrite of the other's
table), changes from run to run."""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto_support import ingest_at_barrier, moto_s3
from store_docs import write_docs

from selfrag_nb.store.kb import KnowledgeBase

pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install 'moto[server]')")

BUCKET = "selfrag-nb-first-writers"
ROUNDS = 3


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """storage_options of a moto S3 server on a free loopback port, bucket created."""
    with moto_s3(BUCKET, "AKIDFIRSTWRITERS0001", "first-writers-secret-0001") as options:
        yield options


@pytest.mark.slow
@pytest.mark.parametrize("overlap", ["same-sources", "disjoint-sources"])
def test_two_first_writers_both_land_once(s3: dict[str, str], tmp_path: Path, overlap: str) -> None:
    a = write_docs(tmp_path / "a", {f"d{j}.md": f"# Doc {j}\n\nText of doc {j}.\n" for j in range(4)})
    if overlap == "same-sources":
        b = a
    else:
        b = write_docs(tmp_path / "b", {f"e{j}.md": f"# Other {j}\n\nOther text {j}.\n" for j in range(4)})
    expected = {f"d{j}.md" for j in range(4)} | ({f"e{j}.md" for j in range(4)} if b != a else set())
    ctx = mp.get_context("spawn")
    for n in range(ROUNDS):
        uri = f"s3://{BUCKET}/{overlap}-{n}"
        with ctx.Manager() as manager:
            barrier = manager.Barrier(2)
            with ctx.Pool(2) as pool:
                results = pool.starmap(
                    ingest_at_barrier, [(uri, s3, str(a), barrier), (uri, s3, str(b), barrier)]
                )
        print(f"round {n} {overlap}: {results}")
        assert all(r.startswith("ok") for r in results), results
        kb = KnowledgeBase.open(uri, embedder="hashing", storage_options=s3)
        assert set(kb.sources()) == expected  # nobody's rows were lost
        counts = Counter(c.chunk_id for c in kb.chunks())
        assert all(v == 1 for v in counts.values()), counts  # nor stored twice
        assert kb.search("text of doc 2", k=3, mode="fts").hits  # the full-text index answers
        assert kb.search("text of doc 2", k=3, mode="hybrid").hits
        assert kb.versions()  # the ingest log reads
