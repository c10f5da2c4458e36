"""Crash recovery of the indexes: an ingest killed (SIGKILL) during its index
build leaves its rows committed without the vector index the policy asks for;
the next ingest builds it, and reindex() does too.

Rule (docs/scaling.md, "Crash recovery"): rows the index policy says should be
indexed and are not get their index from the next ingest (even one with
nothing new to write), kb.reindex() or kb.optimize(); open and search stay
read-only (a search logs a warning naming those calls).

The child process is really killed with SIGKILL. To land the kill inside the
index build every time, the child (test code only) wraps vindex._config, which
build() calls after committing the ACL indexes and right before LanceDB trains
and commits the vector index: it signals through a file and waits there. The
on-disk state is the one a kill anywhere in LanceDB's build leaves, since the
index only counts once its commit lands."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfrag_nb.store import vindex
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.types import IndexPolicy

ROOT = Path(__file__).resolve().parents[2]
POLICY = IndexPolicy(min_rows=1000)

_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from selfrag_nb.store import kb_core, vindex
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.types import IndexPolicy

work = Path({work!r})
module = {{"vector": vindex, "fts": kb_core}}[{stage!r}]
name = {{"vector": "_config", "fts": "_create_fts"}}[{stage!r}]
real = getattr(module, name)

def signalling(*args, **kwargs):
    (work / "building").write_text("index build started")
    time.sleep(300)  # killed here
    return real(*args, **kwargs)

setattr(module, name, signalling)
kb = KnowledgeBase.open(work / "kb", embedder="hashing", index_policy=IndexPolicy(min_rows=1000))
kb.ingest(work / "docs")
(work / "finished").write_text("the ingest returned")
"""


def _docs(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "records.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps({"id": str(i), "text": f"record {i} about topic {i % 37}, words {i * 7 % 101}"})
            )
            f.write("\n")
    return folder


def _killed_during_index_build(work: Path, stage: str) -> None:
    """Run the child ingest and SIGKILL it once its ``stage`` index build has started."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT), work=str(work), stage=stage)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (work / "building").exists():
            assert child.poll() is None, "the child ended before its index build"
            assert time.monotonic() < deadline, "the child never reached its index build"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not (work / "finished").exists()


@pytest.fixture(scope="module")
def killed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one ingest killed during its vector index build: a child
    interpreter per test would cost seconds of CPU each for the same state."""
    work = tmp_path_factory.mktemp("killed")
    _docs(work / "docs", 1200)
    _killed_during_index_build(work, "vector")
    return work


@pytest.fixture
def crashed(killed_once: Path, tmp_path: Path) -> Path:
    """A knowledge base whose first ingest (1,200 rows, policy threshold 1,000)
    was killed during the vector index build: a copy of killed_once's table, so
    each test repairs its own. docs is a link to the folder that ingest read:
    sources are stored with their folder, resolved, so a re-ingest through the
    link is of the same folder, as in the test's story."""
    shutil.copytree(killed_once / "kb", tmp_path / "kb")
    (tmp_path / "docs").symlink_to(killed_once / "docs", target_is_directory=True)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=POLICY)
    # the state the kill left: every row committed, no vector index
    assert len(kb) == 1200
    assert kb.describe()["vector_index"] is None
    kb.close()
    return tmp_path


def test_the_next_ingest_builds_the_full_text_index_a_killed_ingest_left_out(tmp_path: Path) -> None:
    # killed earlier: inside the full-text index build (the vector index comes after it)
    _docs(tmp_path / "docs", 1200)
    _killed_during_index_build(tmp_path, "fts")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=POLICY)
    assert len(kb) == 1200
    assert not any(i.index_type == "FTS" for i in kb._tbl().list_indices())
    kb.ingest(tmp_path / "docs")
    assert any(i.index_type == "FTS" for i in kb._tbl().list_indices())
    assert kb.describe()["vector_index"] is not None
    assert [h.source for h in kb.search("record 17", k=3, mode="fts").hits][:1] == ["records.jsonl#17"]


def test_the_next_ingest_builds_the_index_a_killed_ingest_left_out(crashed: Path) -> None:
    kb = KnowledgeBase.open(crashed / "kb", embedder="hashing", index_policy=POLICY)
    report = kb.ingest(crashed / "docs")  # the same folder: nothing new to write
    assert report.chunks_added == 0
    assert len(report.unchanged) == 1200
    info = kb.describe()["vector_index"]
    assert info is not None, "rows past index_policy.min_rows are still without their vector index"
    assert info["trained_rows"] == 1200
    assert info["unindexed_rows"] == 0
    # and a second ingest has nothing left to do: no new version
    version = kb.version
    kb.ingest(crashed / "docs")
    assert kb.version == version
    assert len(kb.search("record about topic 5", k=5, mode="vector").hits) == 5


def test_reindex_builds_the_missing_index(crashed: Path) -> None:
    kb = KnowledgeBase.open(crashed / "kb", embedder="hashing", index_policy=POLICY)
    done = kb.reindex()
    assert any("IVF_PQ(vector)" in d for d in done), done
    assert kb.describe()["vector_index"] is not None


def test_search_stays_read_only_and_names_the_fix(crashed: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="selfrag_nb.store.kb_core")
    kb = KnowledgeBase.open(crashed / "kb", embedder="hashing", index_policy=POLICY)
    version = kb.version
    assert len(kb.search("record about topic 5", k=5, mode="vector").hits) == 5  # exact search
    assert kb.version == version
    assert vindex.vector_index(kb._tbl()) is None
    warned = [r.getMessage() for r in caplog.records if "no vector index" in r.getMessage()]
    assert warned
    assert "kb.reindex()" in warned[0]
    assert "kb.ingest()" in warned[0]
