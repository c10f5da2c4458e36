"""kb.ingest(engine="ray") on a real local Ray cluster: the same chunks, the same
report, the same one commit as the in-process ingest, and a dead worker
leaves the knowledge base as it was."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ray_support import ROOT, DyingEmbedder, ray_cluster

from selfrag_nb.errors import KnowledgeBaseError, MissingDependencyError
from selfrag_nb.store.kb import KnowledgeBase

# slow: a local Ray cluster per module (10-20 s per test) (./run test fast leaves it out)
pytestmark = pytest.mark.slow

SAMPLE = ROOT / "sample_data" / "docs"
#: What identifies a stored chunk and who may read it.
COLUMNS = [
    "chunk_id",
    "doc_id",
    "source",
    "title",
    "heading",
    "text",
    "context",
    "ordinal",
    "content_hash",
    "acl_roles",
    "acl_users",
    "tenant",
    "metadata",
    "origin",
]


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    pytest.importorskip("ray")
    yield from ray_cluster()


def _rows(kb: KnowledgeBase) -> list[dict[str, Any]]:
    table = kb._tbl().to_arrow().select([*COLUMNS, "vector"])
    rows = table.to_pylist()
    for r in rows:
        r["vector"] = [round(x, 6) for x in r["vector"]]
    return sorted(rows, key=lambda r: r["chunk_id"])


def test_ray_ingest_stores_exactly_the_in_process_chunks(ray: Any, tmp_path: Path) -> None:
    local = KnowledgeBase.open(tmp_path / "local", embedder="hashing")
    distributed = KnowledgeBase.open(tmp_path / "ray", embedder="hashing")
    acl = {"roles": ["staff"], "tenant": "acme"}
    want = local.ingest(SAMPLE, acl=acl, metadata={"batch": 1})
    got = distributed.ingest(SAMPLE, acl=acl, metadata={"batch": 1}, engine="ray", workers=2)
    assert got.added == want.added
    assert got.added
    assert got.skipped == want.skipped
    assert (got.chunks_added, got.chunks_removed) == (want.chunks_added, want.chunks_removed)
    assert _rows(distributed) == _rows(local)
    # One write: the table's first version holds every chunk (later versions are index work).
    first = distributed.versions()[0]
    assert first["chunks"] == len(distributed) == want.chunks_added
    # The full-text index is in place, as after an in-process ingest.
    assert distributed.describe()["indexes"] == local.describe()["indexes"]
    assert "FTS(search_text)" in distributed.describe()["indexes"]


def test_ray_reingest_is_idempotent_and_replaces_changed_sources(ray: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE, docs)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    first = kb.ingest(docs, engine="ray")
    again = kb.ingest(docs, engine="ray")
    assert again.added == again.updated == again.removed == []
    assert sorted(again.unchanged) == sorted(first.added)
    assert again.version == first.version  # nothing written
    target = sorted(docs.rglob("*.md"))[0]
    target.write_text(target.read_text(encoding="utf-8") + "\n\nA new closing paragraph.\n", encoding="utf-8")
    changed = kb.ingest(docs, engine="ray")
    source = target.relative_to(docs).as_posix()
    assert changed.updated == [source]
    reference = KnowledgeBase.open(tmp_path / "reference", embedder="hashing")
    reference.ingest(docs)
    assert _rows(kb) == _rows(reference)


def test_a_worker_killed_mid_ingest_leaves_the_previous_version(ray: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE, docs)
    KnowledgeBase.open(tmp_path / "kb", embedder="hashing").ingest(docs)
    marker = tmp_path / "kill-workers"
    marker.write_text("while this file exists, the poisoned batch kills its worker", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=DyingEmbedder(str(marker), poison="ZZPOISON"))
    before_version, before_rows = kb.version, _rows(kb)
    (docs / "poison.md").write_text("# Poison\n\nZZPOISON " + "filler words " * 40, encoding="utf-8")
    changed = sorted(docs.rglob("*.md"))[1]
    changed.write_text(changed.read_text(encoding="utf-8") + "\n\nOne more line.\n", encoding="utf-8")

    with pytest.raises(KnowledgeBaseError, match="before anything was written"):
        kb.ingest(docs, engine="ray", workers=2)
    assert kb.version == before_version
    assert _rows(kb) == before_rows
    assert all(v["op"] != "ingest" or v["version"] <= before_version for v in kb.versions())

    marker.unlink()  # the cause is fixed: the same call completes
    done = kb.ingest(docs, engine="ray", workers=2)
    assert done.added == ["poison.md"]
    assert done.updated == [changed.relative_to(docs).as_posix()]
    reference = KnowledgeBase.open(tmp_path / "reference", embedder="hashing")
    reference.ingest(docs)
    assert _rows(kb) == _rows(reference)


def test_engine_is_checked_before_any_work(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(ValueError, match="engine must be 'local' or 'ray'"):
        kb.ingest(SAMPLE, engine="spark")  # type: ignore[arg-type]  # deliberately unknown
    with pytest.raises(ValueError, match="workers must be a positive int"):
        kb.ingest(SAMPLE, engine="ray", workers=0)
    assert kb.version == 0


def test_missing_ray_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, as when not installed
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(MissingDependencyError, match=r"pip install 'selfrag-nb\[ray\]'"):
        kb.ingest(SAMPLE, engine="ray")
    assert kb.version == 0


def test_an_embed_actor_runs_one_thread_per_cpu_it_was_given(ray: Any) -> None:
    """MiniLM sizes onnxruntime's pool to the machine unless told: on a worker
    that holds one CPU it must use one thread (two actors on two cores ran
    four spinning threads and ingested at 0.60x in-process). Fails while
    actors keep None."""
    import pyarrow as pa

    from selfrag_nb.store.ray_ingest import _EmbedActor

    schema = pa.schema([("text", pa.string())])

    def embedder_attr(cpus: int, name: str) -> Any:
        actor = ray.remote(num_cpus=cpus)(_EmbedActor).remote(name, schema, "now")
        try:
            return ray.get(actor.__ray_call__.remote(lambda self: getattr(self.embedder, "threads", "none")))
        finally:
            ray.kill(actor)  # the cluster has 2 CPUs: free them for the next actor

    assert embedder_attr(1, "minilm") == 1
    assert embedder_attr(2, "minilm") == 2
    assert embedder_attr(1, "hashing") == "none"  # nothing to size


def test_fit_threads_keeps_what_the_user_set() -> None:
    from selfrag_nb.store.embedders import HashingEmbedder, MiniLMEmbedder
    from selfrag_nb.store.ray_ingest import fit_threads

    assert fit_threads(MiniLMEmbedder(threads=3, backend="numpy"), 1).threads == 3
    assert fit_threads(MiniLMEmbedder(backend="numpy"), 1.0).threads == 1
    assert fit_threads(MiniLMEmbedder(backend="numpy"), 0.5).threads == 1  # a fractional CPU: one thread
    hashing = HashingEmbedder()
    assert fit_threads(hashing, 4) is hashing
    assert not hasattr(hashing, "threads")
