"""The evaluation views in a real browser (Debian chromium) at 1000 px wide.

    report.save("report.html")   the static report with its plotly charts
      -> the page does not scroll sideways: wide tables scroll inside their wrapper
      -> the plotly bars' colour per variant
    EvalWidget's module (display/js.py esm("eval.js")) + eval_css(), rendered into
    a 1000 px page with a minimal model (get / set / on / off / save_changes)
      -> no horizontal overflow of the page; the summary table scrolls inside
      -> each variant's bar and latency box have the colour the plotly chart gave it
      -> no console error, no page error; screenshots in test-artifacts/browser/

No server is needed: both pages are set as content (plotly.js is inlined by
``save``; the widget's module runs as an inline module script).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from selfrag_nb.display.eval_widget import eval_css, report_state
from selfrag_nb.display.js import esm
from selfrag_nb.eval.charts import variant_colours
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.report import EvalReport

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

WIDTH = 1000
VARIANTS = {
    "baseline": {},
    "+rewrite": {"rewrite": True},
    "+rerank": {"rerank": True},
    "+rewrite+rerank": {"rewrite": True, "rerank": True},
}
CATEGORIES = (
    "ambiguous_follow_up_zh",  # first and long: its rotated label reaches furthest left
    "factual",
    "multi_hop",
    "unanswerable",
    "ambiguous_follow_up",
    "access_controlled",
    "chinese_zh",
)


def _report() -> EvalReport:
    qs = QuestionSet(
        [
            Question(
                id=f"{cat}/refund-policy_window.v2-section-{i:02d}",
                category=cat,
                question=f"Question {i} about {cat}: how long is the refund window for annual plans?",
                expected=["answered"],
            )
            for cat in CATEGORIES
            for i in range(4)
        ],
        name="browser layout set",
    )
    rows = []
    for vi, variant in enumerate(VARIANTS):
        for qi, q in enumerate(qs):
            ok = (qi + vi) % 5 != 0
            rows.append(
                EvalRow(
                    variant=variant,
                    id=q.id,
                    category=q.category,
                    question=q.question,
                    expected=q.expected,
                    outcome="answered" if ok else "refused",
                    outcome_ok=ok,
                    latency_ms=80.0 + 7 * qi + 40 * vi + (1500 if qi == 3 else 0),
                    cost=0.0,
                    model_calls=3,
                    tokens_in=1200 + qi,
                    tokens_out=80,
                    config_version=f"cfg-{vi}-0123456789abcdef",
                    failed_checks=[] if ok else ["outcome"],
                    failure_reason=None if ok else "wrong outcome: refused not in [answered]",
                )
            )
    return EvalReport(rows, variants=VARIANTS, questions=qs, k=5)


WIDGET_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>{css}</style>
<style>body{{margin:0;font-family:sans-serif}} #out{{width:{width}px;box-sizing:border-box;padding:8px}}</style>
</head><body><div id="out"></div>
<script type="module">
{module}
const traits = {traits};
const handlers = {{}};
const model = {{
  get: (k) => traits[k],
  set: (k, v) => {{ traits[k] = v; }},
  save_changes: () => {{}},
  on: (ev, f) => {{ (handlers[ev] = handlers[ev] || []).push(f); }},
  off: () => {{}},
}};
render({{ model, el: document.getElementById("out") }});
window.__rendered = true;
</script></body></html>
"""


def _overflow(page: Any) -> int:
    return int(
        page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def test_eval_views_fit_1000px_and_share_colours(page: Any, page_log: PageLog, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    rep = _report()
    colours = variant_colours(list(VARIANTS))
    page.set_viewport_size({"width": WIDTH, "height": 900})

    # The static report with its plotly charts, as saved.
    saved = rep.save(tmp_path / "report.html")
    page.set_content(saved.read_text(encoding="utf-8"), wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .trace').length > 0")
    page.screenshot(path=str(ARTIFACTS / "eval_report_1000px.png"), full_page=True)
    assert _overflow(page) <= 0, "the static report makes the page scroll sideways"
    plotly = page.evaluate(
        "() => { const p = document.querySelector('.js-plotly-plot');"
        " return Object.fromEntries(p.data.map((t) => [t.name, t.marker.color])); }"
    )
    assert plotly == colours
    wrapped = page.evaluate(
        "() => Array.from(document.querySelectorAll('.selfrag-eval table')).every("
        "(t) => t.parentElement.classList.contains('tbl') && t.parentElement.clientWidth <= window.innerWidth)"
    )
    assert wrapped
    align = page.evaluate("() => getComputedStyle(document.querySelector('.selfrag-eval td.n')).textAlign")
    assert align in ("left", "start")

    # The widget.
    traits = {
        "data": report_state(rep),
        "mode": "report",
        "metric": "outcome_accuracy",
        "category": "",
        "cell": [],
        "tab": "broke",
    }
    html = WIDGET_PAGE.format(css=eval_css(), width=WIDTH, module=esm("eval.js"), traits=json.dumps(traits))
    page.set_content(html, wait_until="load")
    page.wait_for_function("() => window.__rendered === true")
    page.screenshot(path=str(ARTIFACTS / "eval_widget_1000px.png"), full_page=True)
    assert _overflow(page) <= 0, "the widget makes the page scroll sideways"
    fills = page.evaluate(
        "() => Object.fromEntries(Array.from(document.querySelectorAll('rect.srnb-ev-rect'))"
        ".map((r) => [r.getAttribute('data-variant'), getComputedStyle(r).fill]))"
    )
    boxes = page.evaluate(
        "() => Object.fromEntries(Array.from(document.querySelectorAll('g.srnb-ev-box'))"
        ".map((g) => [g.getAttribute('data-variant'), getComputedStyle(g.querySelector('rect')).fill]))"
    )

    def rgb(hex_colour: str) -> str:
        r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgb({r}, {g}, {b})"

    # Category labels are rotated and end under their bars: none may reach past
    # the chart's left or bottom edge, where the SVG cuts it (the first one is long).
    cut = page.evaluate(
        "() => { const svg = document.querySelector('.srnb-ev-chartwrap svg');"
        " const box = svg.getBoundingClientRect();"
        " return Array.from(svg.querySelectorAll('text'))"
        ".filter((t) => t.getAttribute('transform')).filter((t) => {"
        " const r = t.getBoundingClientRect();"
        " return r.left < box.left - 0.5 || r.bottom > box.bottom + 0.5; }).map((t) => t.textContent); }"
    )
    assert cut == [], f"category labels cut at the chart's edge: {cut}"
    assert fills == {v: rgb(c) for v, c in colours.items()}
    assert boxes == {v: rgb(c) for v, c in colours.items()}
    # The summary table is wider than the page: it scrolls inside its wrapper.
    table = page.evaluate(
        "() => { const w = document.querySelector('.srnb-ev-scroll');"
        " return [w.scrollWidth, w.clientWidth, getComputedStyle(w).overflowX]; }"
    )
    assert table[1] <= WIDTH
    assert table[2] == "auto"
    assert page.evaluate("() => document.querySelector('.srnb-ev').classList.contains('mathjax_ignore')")
    assert page_log.errors == []
