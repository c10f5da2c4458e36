"""Explorer budget: sr.explore over 500 and 5,000 saved traces.

    python benchmarks/bench_explorer.py [--sizes 500,5000] [--keep DIR]

Traces: every sample question answered once by the offline model over the
sample knowledge base (hashing embedder), then copied with a new question
("... (copy 17)") until there are N, each saved with Trace.save into a
folder. Measured, per size:

    build      sr.explore(folder): read and validate every file, keep rows only
    state      the widget's synced JSON (columns + rows), KB
    py filter  ex.filter(outcome="refused", text="refund"), median of 20
    py open    the widget's open_state for the heaviest row (most tokens: read
               the file, build the view tree), median of 20; and for the two
               heaviest (sr.compare)
    browser    Debian chromium, the widget's real module in a 950 px page with
               a model whose save_changes calls back into this process (as a
               kernel would): the first render, a column filter typed
               (input -> count redrawn), the free text typed, the heaviest row
               clicked (click -> its trace mounted, with the round trip to Python);
               median of 5

Target: filter and open under 200 ms in the browser at 5,000 traces.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = Path("/usr/bin/chromium")
WIDTH = 950

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>{css}</style>
<style>body{{margin:0;font-family:sans-serif}} #out{{width:{width}px;box-sizing:border-box;padding:8px}}</style>
</head><body><div id="out"></div>
<script type="module">
{module}
const traits = {traits};
const handlers = {{}};
const fire = (k) => (handlers["change:" + k] || []).forEach((f) => f());
let dirty = {{}};
const model = {{
  get: (k) => traits[k],
  set: (k, v) => {{ traits[k] = v; dirty[k] = v; }},
  // as a kernel would: send the changed traits, apply what Python sets back
  save_changes: async () => {{
    const sent = dirty; dirty = {{}};
    const back = await window.py_sync(JSON.stringify(sent));
    for (const [k, v] of Object.entries(JSON.parse(back))) {{ traits[k] = v; fire(k); }}
  }},
  on: (ev, f) => {{ (handlers[ev] = handlers[ev] || []).push(f); }},
  off: () => {{}},
}};
window.__t0 = performance.now();
render({{ model, el: document.getElementById("out") }});
window.__render_ms = performance.now() - window.__t0;
</script></body></html>
"""


def median_ms(fn: Callable[[], object], n: int = 20) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def make_traces(folder: Path, n: int) -> None:
    """``n`` saved traces: the real ones first, then copies with new questions."""
    import selfrag_nb as sr

    base_dir = folder.parent / "base"
    if not base_dir.exists():
        base_dir.mkdir(parents=True)
        kb = sr.KnowledgeBase.sample(embedder="hashing")
        rag = sr.SelfRAG(kb)
        for i, q in enumerate(sr.questions("sample")):
            rag.ask(q.question, user=q.make_user(), history=[dict(t) for t in q.history]).save(
                base_dir / f"{i:03d}.json"
            )
    base = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(base_dir.glob("*.json"))]
    folder.mkdir(parents=True)
    for i in range(n):
        data = dict(base[i % len(base)])
        if i >= len(base):
            data["question"] = f"{data['question']} (copy {i // len(base)})"
        (folder / f"{i:05d}.json").write_text(json.dumps(data), encoding="utf-8")


def browser(ex: Any, widget: Any, runs: int = 5) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    from selfrag_nb.display.explore_widget import explore_module

    traits = {k: v for k, v in widget.get_state().items() if not k.startswith("_")}
    html = PAGE.format(
        css=widget._css, width=WIDTH, module=explore_module(), traits=json.dumps(traits).replace("</", "<\\/")
    )

    def py_sync(payload: str) -> str:
        for k, v in json.loads(payload).items():
            setattr(widget, k, v)  # the observers run as in a kernel
        return json.dumps({"opened": widget.opened, "text_hits": widget.text_hits})

    out: dict[str, list[float]] = {"render": [], "filter": [], "text": [], "open": []}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        for _ in range(runs):
            page = b.new_page(viewport={"width": WIDTH, "height": 1000})
            page.expose_function("py_sync", py_sync)
            page.set_content(html, wait_until="load")
            page.wait_for_function("() => window.__render_ms !== undefined")
            out["render"].append(page.evaluate("() => window.__render_ms"))
            # a column filter: input event -> the table, counts and histogram redrawn (synchronous)
            out["filter"].append(
                page.evaluate(
                    """() => { const i = document.querySelector('input.srnb-xp-filter[data-key="outcome"]');
                    const t0 = performance.now(); i.value = "refused";
                    i.dispatchEvent(new Event("input")); return performance.now() - t0; }"""
                )
            )
            out["text"].append(
                page.evaluate(
                    """() => { const i = document.querySelector('input.srnb-xp-text');
                    const t0 = performance.now(); i.value = "refund";
                    i.dispatchEvent(new Event("input")); return performance.now() - t0; }"""
                )
            )
            page.evaluate(
                """() => { for (const i of document.querySelectorAll("input.srnb-xp-filter, input.srnb-xp-text")) {
                    i.value = ""; i.dispatchEvent(new Event("input")); } }"""
            )
            # the heaviest trace first (tokens, descending), then open it:
            # click -> Python (round trip) -> the trace's view mounted
            page.click('th.srnb-xp-sort[data-key="tokens"]')
            page.click('th.srnb-xp-sort[data-key="tokens"]')
            out["open"].append(
                page.evaluate(
                    """() => new Promise((done) => {
                      const row = document.querySelector("tbody .srnb-xp-row");
                      const t0 = performance.now();
                      const seen = new MutationObserver(() => {
                        if (document.querySelector('.srnb-xp-opened[data-kind="trace"] .srnb-card-finish')) {
                          seen.disconnect(); done(performance.now() - t0);
                        }
                      });
                      seen.observe(document.body, { childList: true, subtree: true });
                      row.click();
                    })"""
                )
            )
            widget.selected = []
            page.close()
        b.close()
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,5000")
    ap.add_argument("--keep", default=None, help="folder to keep the generated traces in")
    args = ap.parse_args()

    import selfrag_nb as sr
    from selfrag_nb.display.explore_widget import ExploreWidget

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-explorer-"))
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = work / f"traces-{n}"
            if not folder.exists():
                make_traces(folder, n)
            disk_mb = sum(p.stat().st_size for p in folder.glob("*.json")) / 1e6
            t0 = time.perf_counter()
            ex = sr.explore(folder)
            build_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            w = ExploreWidget(ex)
            widget_ms = (time.perf_counter() - t0) * 1000
            state = {k: v for k, v in w.get_state().items() if not k.startswith("_")}
            state_kb = len(json.dumps(state).encode()) / 1000
            filt = median_ms(lambda ex=ex: ex.filter(outcome="refused", text="refund"))
            # the heaviest traces (most tokens): the most to read and draw
            heavy = sorted(
                range(len(ex)), key=lambda i, ex=ex: -(ex.rows[i].tokens_in + ex.rows[i].tokens_out)
            )
            open1 = median_ms(lambda w=w, heavy=heavy: w.open_state(heavy[:1]))
            open2 = median_ms(lambda w=w, heavy=heavy: w.open_state(heavy[:2]))
            print(
                f"{n:>6,} traces ({disk_mb:,.0f} MB on disk): build {build_s:.2f} s, widget {widget_ms:.0f} ms, "
                f"state {state_kb:,.0f} KB; python filter {filt:.1f} ms, open one {open1:.1f} ms, "
                f"open two (compare) {open2:.1f} ms"
            )
            if CHROMIUM.exists():
                got = browser(ex, w)
                print(
                    f"{'':>6} chromium (median of 5): first render {got['render']:.0f} ms, column filter "
                    f"{got['filter']:.1f} ms, free text {got['text']:.1f} ms, open a row {got['open']:.0f} ms"
                )
            else:
                print("       chromium not at /usr/bin/chromium: browser timings skipped")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
