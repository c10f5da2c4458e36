"""Peak memory of ingesting one big generated .txt (hashing embedder).

    python benchmarks/bench_ingest_memory.py [MB]       (default 50)

Each ingest runs in its own child process, which notes ru_maxrss before and
after ``kb.ingest``: "create" writes the file and makes the table (the first
write), "update" changes its first line and ingests again (merge_insert
replacing the source). Prints file size, chunks, peak RSS growth, seconds.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import random, resource, sys, time
from pathlib import Path

sys.path.insert(0, sys.argv[4])
from selfrag_nb.store.kb import KnowledgeBase

mb, root, phase = float(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
path = root / "docs" / "big.txt"
if phase == "create":
    path.parent.mkdir(parents=True)
    rng = random.Random(0)
    words = ("refund policy invoice customer shipping delay warranty order account support alpha beta "
             "gamma delta report quarter budget travel claim manager").split()
    with path.open("w", encoding="utf-8") as out:
        n = 0
        while n < mb * 1e6:
            s = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + f" {n}.\n"
            s += "\n" if rng.random() < 0.1 else ""
            out.write(s)
            n += len(s)
else:
    path.write_text("Changed first line.\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
kb = KnowledgeBase.open(root / "kb", embedder="hashing")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
report = kb.ingest(root / "docs")
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{phase}: file {path.stat().st_size / 1e6:.1f} MB, +{report.chunks_added}/-{report.chunks_removed} chunks, "
      f"peak RSS {before / 1024:.0f} -> {after / 1024:.0f} MB (growth {(after - before) / 1024:.0f} MB), {seconds:.1f} s")
"""


def main() -> None:
    mb = sys.argv[1] if len(sys.argv) > 1 else "50"
    with tempfile.TemporaryDirectory() as tmp:
        for phase in ("create", "update"):
            run = subprocess.run(
                [sys.executable, "-c", _CHILD, mb, tmp, phase, str(ROOT)],
                capture_output=True,
                text=True,
                check=True,
            )
            print(run.stdout.strip())


if __name__ == "__main__":
    main()
