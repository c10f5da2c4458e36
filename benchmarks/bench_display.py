"""Display budget: a 10-hit, 10-claim trace renders to static HTML in <= 50 ms
(median of 20) and its widget state is <= 200 KB of JSON.

    python benchmarks/bench_display.py

Also reports the text summary, the widget state build and a 100-hit trace for
scale. The trace is the test fixture (tests/support/display_fixtures.py). The
widget state is the view tree as JSON (``to_json(view_tree(trace))``), the
same tree the static HTML serialises.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from display_fixtures import build_full_trace, make_hits  # noqa: E402 - path set up above

from selfrag_nb.display import static_html, text_summary  # noqa: E402
from selfrag_nb.display.html import view_tree  # noqa: E402
from selfrag_nb.display.state import state_size  # noqa: E402
from selfrag_nb.display.tree import to_json  # noqa: E402
from selfrag_nb.trace import Retrieval, Trace  # noqa: E402


def median_ms(fn: Callable[[], object], n: int = 20) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    trace = build_full_trace()
    static_html(trace)  # warm: stylesheet read once
    html_ms = median_ms(lambda: static_html(trace))
    text_ms = median_ms(lambda: text_summary(trace))
    state_ms = median_ms(lambda: to_json(view_tree(trace)))
    size = state_size(to_json(view_tree(trace)))
    html_kb = len(static_html(trace).encode()) / 1000

    big = Trace(question="scale", started_at=0.0, records=[Retrieval(hits=make_hits(100))])
    big_ms = median_ms(lambda: static_html(big))

    print(f"10-hit 10-claim trace: static HTML median {html_ms:.2f} ms (budget 50 ms), {html_kb:.1f} KB")
    print(
        f"10-hit 10-claim trace: widget state {size / 1000:.1f} KB (budget 200 KB), built in {state_ms:.2f} ms"
    )
    print(f"text summary median {text_ms:.3f} ms; 100-hit retrieval static HTML median {big_ms:.2f} ms")
    ok = html_ms <= 50 and size <= 200_000
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
