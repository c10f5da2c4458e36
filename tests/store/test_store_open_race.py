"""Processes that open the same new knowledge base folder at the same moment
all get it: creating the folder is not an error when another process created
it a moment before (only a file in its place is). Real processes, a real
LanceDB folder; a barrier lines them up on the first open."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest

from selfrag_nb import KnowledgeBase
from selfrag_nb.errors import KnowledgeBaseError

PROCS = 6
ROUNDS = 4


def _open_after(barrier: Any, path: str) -> str:
    barrier.wait()
    try:
        KnowledgeBase.open(path, embedder="hashing")
    except Exception as exc:  # the test reports what each process met
        return f"{type(exc).__name__}: {exc}"
    return "ok"


@pytest.mark.slow
def test_a_new_folder_opened_by_many_processes_at_once(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(PROCS) as pool:
        for rnd in range(ROUNDS):
            barrier = manager.Barrier(PROCS)
            path = str(tmp_path / f"round{rnd}" / "kb")
            results = pool.starmap(_open_after, [(barrier, path)] * PROCS)
            assert results == ["ok"] * PROCS, results
            assert Path(path).is_dir()


def test_a_file_in_place_of_the_folder_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "kb").write_text("not a folder")
    with pytest.raises(KnowledgeBaseError, match="is a file, not a knowledge base folder"):
        KnowledgeBase.open(tmp_path / "kb", embedder="hashing")


def test_a_table_renamed_into_place_after_the_listing_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first ingest builds its table in a staging folder and renames it into
    place. A process that listed the folder's tables a moment before the
    rename, and looks for chunks.lance a moment after, meets a whole table:
    it opens it, it does not call the folder damaged. The interleaving is
    forced: the rename happens right after open()'s first listing."""
    import selfrag_nb.store.kb as kb_mod

    built = tmp_path / "built"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("A finished table.\n")
    KnowledgeBase.open(built, embedder="hashing").ingest(docs)
    target = tmp_path / "kb"
    target.mkdir()
    real_connect = kb_mod._connect

    class RenameAfterFirstListing:
        def __init__(self, db: Any) -> None:
            self._db, self._listed = db, False

        def list_tables(self) -> Any:
            listing = self._db.list_tables()
            if not self._listed:
                self._listed = True
                (built / "chunks.lance").rename(target / "chunks.lance")
            return listing

        def __getattr__(self, name: str) -> Any:
            return getattr(self._db, name)

    monkeypatch.setattr(
        kb_mod, "_connect", lambda uri, options: RenameAfterFirstListing(real_connect(uri, options))
    )
    kb = KnowledgeBase.open(target, embedder="hashing")
    assert [h.text.strip() for h in kb.chunks()] == ["A finished table."]


def test_a_chunks_folder_that_is_no_table_is_still_damaged(tmp_path: Path) -> None:
    (tmp_path / "kb" / "chunks.lance").mkdir(parents=True)
    with pytest.raises(KnowledgeBaseError, match="is damaged"):
        KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
