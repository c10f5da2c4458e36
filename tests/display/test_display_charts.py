"""Plotly charts: the numbers of the trace, drawn; plotly.js inlined (no CDN)."""

from __future__ import annotations

import re

import pytest

from selfrag_nb.display import charts
from selfrag_nb.trace import Trace


def test_grades_chart_has_scores_bands_and_both_lines(full_trace: Trace) -> None:
    g = full_trace.grades
    assert g is not None
    fig = charts.grades_chart(g, full_trace)
    bar = fig.data[0]
    assert list(bar.y) == [x.score for x in g.items]
    assert bar.marker.color[0] == charts.COLOURS["high"]
    assert bar.marker.color[5] == charts.COLOURS["irrelevant"]
    lines = sorted(s.y0 for s in fig.layout.shapes)
    assert lines == [50, 80]
    assert "5/10 relevant" in fig.layout.title.text
    assert bar.x[0] == "1. refund-policy.md"


def test_rerank_chart_draws_one_line_per_chunk(full_trace: Trace, fallback_trace: Trace) -> None:
    r = full_trace.rerank
    assert r is not None
    fig = charts.rerank_chart(r, full_trace)
    assert len(fig.data) == len(r.before)
    moved = {tr.name: list(tr.y) for tr in fig.data}
    assert moved["refund-policy-zh.md"] == [2, 3]  # c007 went from 2nd to 3rd
    fb = fallback_trace.rerank
    assert fb is not None
    assert "fallback" in charts.rerank_chart(fb).layout.title.text


def test_timeline_and_cost_charts(full_trace: Trace) -> None:
    tl = charts.timeline_chart(full_trace)
    bar = tl.data[0]
    assert len(bar.y) == 9
    assert bar.base[0] == 0
    assert bar.base[1] == pytest.approx(0.1)
    cost = charts.cost_chart(full_trace)
    assert [d.name for d in cost.data] == ["tokens in", "tokens out"]
    assert "unknown" in cost.data[1].text  # cost None is "unknown", never 0
    assert "no calls" in cost.data[1].text  # the rule-based decision made none
    assert "cost unknown" in cost.layout.title.text


def test_figure_html_inlines_plotly(full_trace: Trace) -> None:
    out = charts.figure_html(charts.timeline_chart(full_trace))
    # no <script src=...>: plotly.js is inline (its bundle mentions CDNs only for geo maps we do not draw)
    assert not re.search(r"<script[^>]*\bsrc=", out)
    assert len(out) > 1_000_000  # plotly.js itself is inside


def test_charts_reject_wrong_records(full_trace: Trace) -> None:
    with pytest.raises(TypeError, match="grades_chart expects a Grades record, got Rerank"):
        charts.grades_chart(full_trace.rerank)  # type: ignore[arg-type]  # deliberately wrong


def test_chart_labels_cannot_carry_markup_or_bidi(hostile_trace: Trace) -> None:
    g = hostile_trace.grades
    assert g is not None
    fig = charts.grades_chart(g, hostile_trace)
    for label in fig.data[0].x:
        assert "<" not in label
        assert "\u202e" not in label
