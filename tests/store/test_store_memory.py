"""Memory of ingesting one big file: bounded, not a multiple of Python objects per chunk.

    child process per ingest: open the knowledge base (hashing embedder),
    note ru_maxrss, ingest the folder, note ru_maxrss -> peak growth
      create   a generated 20 MB .txt, the first write (create_table)
      update   the same file with a changed first line (merge_insert)

Measured on a shared 2-core machine (20 MB file, growth of peak RSS): create
390-415 MB and update 650 MB when every chunk was a Python dict (twice) and
the table was built with pa.Table.from_pylist; 260 MB and 400-420 MB with
chunks streamed into Arrow batches, most of it now LanceDB's write, merge and
full-text index. Each bound sits between the two, with room for noise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import selfrag_nb

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

MB = 20
#: peak RSS growth allowed, in MB, per ingest of the MB-sized file
BOUNDS = {"create": 16 * MB, "update": 26 * MB}

_CHILD = r"""
import json, random, resource, sys
from pathlib import Path

sys.path.insert(0, sys.argv[4])  # the selfrag_nb this test imported, not whatever is installed
from selfrag_nb.store.kb import KnowledgeBase

root, mb, phase = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
path = root / "docs" / "big.txt"
if phase == "create":
    path.parent.mkdir()
    rng = random.Random(0)
    words = "refund policy invoice customer shipping delay warranty order account support".split()
    with path.open("w", encoding="utf-8") as out:
        n = 0
        while n < mb * 1e6:
            s = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + f" {n}.\n"
            s += "\n" if rng.random() < 0.1 else ""
            out.write(s)
            n += len(s)
else:
    path.write_text("A changed first line.\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
kb = KnowledgeBase.open(root / "kb", embedder="hashing")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = kb.ingest(root / "docs")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_mb": (after - before) / 1024, "added": report.added,
                  "updated": report.updated, "chunks": len(kb)}))
"""


def _ingest(root: Path, phase: str) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(MB), phase, str(Path(selfrag_nb.__file__).parents[1])],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return out


def test_ingesting_a_big_file_keeps_peak_memory_bounded(tmp_path: Path) -> None:
    first = _ingest(tmp_path, "create")
    assert first["added"] == ["big.txt"]
    assert isinstance(first["chunks"], int)
    assert first["chunks"] > 20_000  # the whole file was stored, in chunks of up to 800 characters
    second = _ingest(tmp_path, "update")
    assert second["updated"] == ["big.txt"]
    for phase, result in (("create", first), ("update", second)):
        growth = result["growth_mb"]
        assert isinstance(growth, float)
        assert growth < BOUNDS[phase], f"{phase}: peak RSS grew by {growth:.0f} MB for a {MB} MB file"
