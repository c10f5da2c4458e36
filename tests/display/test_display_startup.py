"""Start-up is its own row in every face of a trace, never a stage's bar.

The rule: a Trace whose ``startup`` holds one-time work shows it as a
"Start-up" row of the timeline (static HTML and widget), says what it was,
and names it in the header and the text line; the stages' rows and their
total stay the stages' own compute time.
"""

from __future__ import annotations

import re
from pathlib import Path

from display_fixtures import build_full_trace, tree_text

from selfrag_nb.display import static_html, text_summary
from selfrag_nb.display.markup import fmt_ms
from selfrag_nb.display.widget import TraceWidget
from selfrag_nb.trace import Trace

HERE = Path(__file__).parent
STARTUP = {"importing LiteLLM": 4700.0, "opening the knowledge base (minilm embedder, first search)": 2400.0}


def _cold_trace() -> Trace:
    t = build_full_trace()
    t.startup = dict(STARTUP)
    t.wall_ms = sum(r.latency_ms for r in t.records)
    return t


def _timeline_labels(html: str) -> list[str]:
    tl = re.search(r'<div class="srnb-tl">(.*?)</div><div class="srnb-meta">', html, re.S)
    assert tl is not None, "no timeline followed by its start-up note"
    return re.findall(r"<div>([^<]+)</div><div class=\"srnb-tl-track\">", tl.group(1))


def test_static_html_draws_start_up_as_its_own_first_row() -> None:
    t = _cold_trace()
    html = static_html(t)
    labels = _timeline_labels(html)
    assert labels[0] == "Start-up"
    assert labels[1:] == [
        r["stage"].title() if r["stage"] != "finish" else "Outcome" for r in t.stage_table()
    ]
    assert "importing LiteLLM 4.7 s" in html
    assert "opening the knowledge base (minilm embedder, first search) 2.4 s" in html
    assert f"start-up {fmt_ms(7100.0)}" in html
    # The stages' total is still theirs alone.
    compute = sum(r.latency_ms for r in t.records)
    assert f'<strong>total</strong></td><td class="srnb-r srnb-num">{fmt_ms(compute)}</td>' in html


def test_text_line_names_start_up_apart_from_the_stages() -> None:
    t = _cold_trace()
    line = text_summary(t)
    compute = sum(r.latency_ms for r in t.records)
    assert f" · {fmt_ms(compute)} · start-up 7.1 s · " in line, line


def test_a_warm_trace_has_no_start_up_row() -> None:
    t = build_full_trace()
    assert t.startup == {}
    html = static_html(t)
    assert "Start-up" not in html
    assert "start-up" not in text_summary(t)


def test_widget_draws_start_up_as_its_own_first_row() -> None:
    t = _cold_trace()
    text = tree_text(TraceWidget(t).tree)
    assert "Start-up" in text
    assert "importing LiteLLM 4.7 s" in text
    assert "start-up 7.1 s" in text
    # the start-up row comes before the first stage's row in the timeline
    timeline = text[text.index("Timeline & cost") :]
    assert timeline.index("Start-up") < timeline.index("Decide")
