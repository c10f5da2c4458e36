"""Time `import selfrag_nb` in a fresh interpreter, best of 3 (target <= 0.3 s).

    python benchmarks/bench_import.py

Also checks that the import pulled in none of the heavy modules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("litellm", "lancedb", "torch", "plotly", "pandas", "pyarrow", "numpy")
PROBE = (
    "import time, sys; t = time.perf_counter(); import selfrag_nb; d = time.perf_counter() - t; "
    f"print(d); print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
)


def main() -> None:
    times = []
    heavy = ""
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        times.append(float(out[0]))
        heavy = out[1]
    best = min(times)
    print(
        f"import selfrag_nb: best of 3 = {best * 1000:.1f} ms (runs: {', '.join(f'{t * 1000:.1f}' for t in times)} ms)"
    )
    print(f"heavy modules imported: {heavy or 'none'}")
    print(f"target <= 300 ms: {'OK' if best <= 0.3 and not heavy else 'MISSED'}")


if __name__ == "__main__":
    main()
