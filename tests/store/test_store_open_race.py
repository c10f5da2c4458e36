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
