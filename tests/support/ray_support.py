"""A real local Ray cluster for the Ray-engine tests, and an embedder that dies.

ray_cluster()       module-scoped use: ray.init(num_cpus=2) once, shut down after;
                    workers import this worktree's selfrag_nb and tests/support
DyingEmbedder       the hashing embedder, except that while ``marker`` exists a
                    process asked to embed a batch holding ``poison`` exits (os._exit),
                    as an OOM kill or a crash in native code would end a worker
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from selfrag_nb.store.embedders import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]


def ray_cluster() -> Iterator[Any]:
    """Start a 2-CPU local cluster (or use one already connected) for one module."""
    import ray

    started = False
    if not ray.is_initialized():
        paths = [str(ROOT), str(ROOT / "tests" / "support"), os.environ.get("PYTHONPATH", "")]
        for attempt in (1, 2):
            try:
                ray.init(
                    num_cpus=2,
                    include_dashboard=False,
                    log_to_driver=False,
                    runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}},
                )
                break
            except Exception as exc:
                # Ray gives its raylet a fixed 30 s to register ("The current node
                # timed out during startup"); on a loaded 2-core machine that can
                # pass once. A second start is a fair test; a second timeout is not load.
                ray.shutdown()
                if attempt == 2 or "timed out during startup" not in str(exc):
                    raise
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


class DyingEmbedder(HashingEmbedder):
    """Hashing vectors (so results equal the in-process "hashing" ingest); a
    batch holding ``poison`` kills the process embedding it while ``marker``
    exists, on every retry: the other batches embed normally."""

    def __init__(self, marker: str, poison: str) -> None:
        super().__init__()
        self.name = "hashing"  # the knowledge base was built with "hashing": the same vectors
        self.marker = marker
        self.poison = poison

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if os.path.exists(self.marker) and any(self.poison in t for t in texts):
            sys.stdout.flush()
            os._exit(17)
        return super().embed(texts)
