"""Plotly figures of a trace (plotly is imported when a chart is built).

    grades_chart(grades)     score per chunk, bars coloured by band, 50/80 lines
    rerank_chart(rerank)     bump chart: position before -> after, one line per chunk
    timeline_chart(trace)    stage latencies as consecutive bars (a Gantt strip)
    cost_chart(trace)        tokens in/out per stage; cost per stage in the hover
                             and the labels ("unknown" when a price is unknown)
    figure_html(fig)         standalone HTML with plotly.js inlined (no CDN)

Charts are for exploring; the numbers they show are also in the static HTML.
Each reads in light and dark notebooks (eval/charts.py ``neutral_layout``:
transparent background, mid-grey text) and a time axis keeps one unit
(``time_unit``: ms, or s from 10 s up) in its bars, labels, hover and title.
Chunk labels are data: plotly renders them as SVG text, and we pass them
through ``neutralize`` so bidi controls cannot reorder the axis.
"""

from __future__ import annotations

from itertools import accumulate
from typing import TYPE_CHECKING, Any

from selfrag_nb.display.markup import neutralize
from selfrag_nb.errors import InputTypeError, MissingDependencyError
from selfrag_nb.eval.charts import NEUTRAL, neutral_layout, time_unit
from selfrag_nb.flow import TITLES
from selfrag_nb.formats import fmt_cost
from selfrag_nb.trace import Grades, Rerank, Retrieval, Trace

if TYPE_CHECKING:  # plotly is heavy and optional at import time
    import plotly.graph_objects as go

COLOURS = {"high": "#2da44e", "partial": "#d4a72c", "irrelevant": "#e5534b", "line": "#4493f8"}


def _go(obj: object, cls: type, what: str) -> Any:
    """plotly.graph_objects, once ``obj`` is checked to be the record ``what`` draws."""
    if not isinstance(obj, cls):
        raise InputTypeError(f"{what} expects a {cls.__name__} record, got {type(obj).__name__}")
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a core dependency
        raise MissingDependencyError(
            "Charts need plotly: pip install selfrag-nb (or pip install plotly)"
        ) from exc
    return go


def _label(text: str, n: int = 32) -> str:
    s = neutralize(text).replace("<", "‹").replace(">", "›")  # plotly reads <br>, <b> in labels as markup
    return s if len(s) <= n else s[: n - 1] + "…"


def _names(trace: Trace | None) -> dict[str, str]:
    """Each chunk's file name, from the first retrieval hit of it (walked last to first: the first wins)."""
    hits = [hit for r in trace._all(Retrieval) for hit in r.hits] if trace is not None else []
    return {hit.chunk_id: hit.source.rsplit("/", 1)[-1] for hit in reversed(hits)}


def grades_chart(grades: Grades, trace: Trace | None = None) -> go.Figure:
    """One bar per graded chunk (retrieval order), with the cutoff and high lines."""
    go = _go(grades, Grades, "grades_chart")
    names = _names(trace)
    xs = [
        f"{i + 1}. {_label(g.source or names.get(g.chunk_id, g.chunk_id))}"
        for i, g in enumerate(grades.items)
    ]
    fig = go.Figure(
        go.Bar(
            x=xs,
            y=[g.score for g in grades.items],
            marker_color=[COLOURS[g.band] for g in grades.items],
            text=[f"{g.score}{' ✓' if g.relevant else ' ✗'}" for g in grades.items],
            textposition="outside",
            customdata=[[_label(g.chunk_id, 60), g.band, _label(g.key_info, 120)] for g in grades.items],
            hovertemplate="%{x}<br>score %{y} (%{customdata[1]})<br>%{customdata[0]}<br>%{customdata[2]}<extra></extra>",
        )
    )
    dashed = {"line_dash": "dash", "line_width": 1.5, "line_color": NEUTRAL}
    for y, name in ((grades.relevance_cutoff, "relevance cutoff"), (grades.high_relevance, "high relevance")):
        fig.add_hline(y=y, **dashed, annotation_text=f"{name} {y}", annotation_position="top left")
    rel = sum(1 for g in grades.items if g.relevant)
    return fig.update_layout(
        **neutral_layout(
            title=f"Relevance grades: {rel}/{len(grades.items)} relevant",
            yaxis={"range": [0, 105], "title": "score"},
            xaxis={"title": "chunk (retrieval order)"},
            height=360,
            margin={"l": 50, "r": 20, "t": 50, "b": 90},
        )
    )


def rerank_chart(rerank: Rerank, trace: Trace | None = None) -> go.Figure:
    """Bump chart: each chunk's position before and after reranking (1 at top)."""
    go = _go(rerank, Rerank, "rerank_chart")
    names = _names(trace)
    lines = []
    after = {c: i for i, c in enumerate(rerank.after)}
    for i, c in enumerate(rerank.before):
        label = _label(names.get(c, c))
        j = after.get(c)
        dropped = j is None  # a dropped chunk's line stays level, dotted and faint
        lines.append(
            go.Scatter(
                x=[0, 1.0],
                y=[i + 1, i + 1 if j is None else j + 1],
                mode="lines+markers",
                name=label,
                line={"dash": "dot" if dropped else "solid", "width": 2},
                opacity=0.45 if dropped else 1.0,
                hovertemplate=f"{label}<br>before {i + 1} → {'dropped' if j is None else f'after {j + 1}'}<extra></extra>",
            )
        )
    title = "Rerank: order before → after"
    if rerank.fallback:
        title += f" (fallback: {_label(rerank.fallback, 60)})"
    n = max(len(rerank.before), 1)
    return go.Figure(lines).update_layout(
        **neutral_layout(
            title=title,
            xaxis={"tickvals": [0, 1], "ticktext": ["before", "after"], "range": [-0.15, 1.15]},
            yaxis={"autorange": "reversed", "title": "position", "dtick": 1},
            height=max(260, 28 * n + 120),
            margin={"l": 50, "r": 20, "t": 50, "b": 40},
        )
    )


def timeline_chart(trace: Trace) -> go.Figure:
    """Stage latencies as consecutive horizontal bars, labelled with their duration."""
    go = _go(trace, Trace, "timeline_chart")
    rows = trace.stage_table()
    starts = list(accumulate((float(r["latency_ms"]) for r in rows), initial=0.0))
    t = starts.pop()  # the total; each stage starts where the ones before it end
    labels = [f"{i + 1}. {TITLES[r['stage']]}" for i, r in enumerate(rows)]
    # one unit for bars, labels, hover, axis and title
    unit, div = time_unit([t])
    fmt = ".1f" if unit == "ms" else ".2f"
    return go.Figure(
        go.Bar(
            y=labels,
            x=[float(r["latency_ms"]) / div for r in rows],
            base=[s / div for s in starts],
            orientation="h",
            marker_color=COLOURS["line"],
            text=[f"{float(r['latency_ms']) / div:{fmt}} {unit}" for r in rows],
            textposition="outside",
            hovertemplate=f"%{{y}}: %{{x:{fmt}}} {unit} (starts at %{{base:{fmt}}} {unit})<extra></extra>",
        )
    ).update_layout(
        **neutral_layout(
            title=f"Stage latencies (total {t / div:,.{0 if unit == 'ms' else 1}f} {unit})",
            xaxis={"title": f"{unit} since start", "tickformat": ",.0f" if unit == "ms" else ",.1f"},
            yaxis={"autorange": "reversed"},
            height=max(220, 30 * len(rows) + 100),
            margin={"l": 100, "r": 40, "t": 50, "b": 40},
        )
    )


def cost_chart(trace: Trace) -> go.Figure:
    """Tokens in and out per stage, stacked; each stage's cost in its label."""
    go = _go(trace, Trace, "cost_chart")
    rows = trace.stage_table()
    labels = [f"{i + 1}. {TITLES[r['stage']]}" for i, r in enumerate(rows)]
    costs = [fmt_cost(r["cost"]) if r["model_calls"] else "no calls" for r in rows]

    def bar(key: str, colour: str, **labels_kw: Any) -> Any:
        name = key.replace("_", " ")
        hover = f"%{{x}}: %{{y}} {name} · cost %{{customdata}}<extra></extra>"
        ys = [r[key] for r in rows]
        return go.Bar(
            x=labels, y=ys, name=name, marker_color=colour, customdata=costs, hovertemplate=hover, **labels_kw
        )

    tot = trace.totals
    return go.Figure(
        [bar("tokens_in", "#4493f8"), bar("tokens_out", "#d4a72c", text=costs, textposition="outside")]
    ).update_layout(
        **neutral_layout(
            barmode="stack",
            title=f"Tokens per stage (total {tot.tokens_in + tot.tokens_out:,}; cost {fmt_cost(tot.cost)})",
            yaxis={"title": "tokens"},
            height=360,
            margin={"l": 50, "r": 20, "t": 50, "b": 60},
        )
    )


def figure_html(fig: go.Figure, full_html: bool = False) -> str:
    """The figure as HTML with plotly.js inlined: works offline, no CDN."""
    return str(fig.to_html(include_plotlyjs=True, full_html=full_html))
