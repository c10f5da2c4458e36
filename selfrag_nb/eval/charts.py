"""Plotly charts of evaluation results (plotly is imported on first use).

summary  --metric_bars()-->      one metric per category, a bar per variant
         --refusal_bars()-->     correct refusals | wrong refusals |
                                 unsupported answers | citation errors (kept apart)
table    --latency_box()-->      per-question latency per variant
calibration table --calibration_curve()--> the four counts per threshold value
[figures] --figures_html()-->    HTML fragments, plotly.js inlined once (no CDN)

VARIANT_PALETTE / variant_colours(names): the one variant -> colour mapping;
the report's SVG charts (display/eval_html.py) use the same mapping, so a
variant has one colour in every chart. fitted_range(values):
a rate axis fitted to the data (a 0-1 axis hides a 0.82 vs 0.86
difference); the axis title says when it does not start at 0.
latency_stats(values): the box of a box plot, for the views' SVG.

These are the "give me a plotly figure" helpers; the report's own views draw
SVG (display/svg_charts.py). A figure must read in a dark notebook as well as
a light one: ``neutral_layout`` gives every figure a transparent background,
mid-grey text and grid (contrast >= 3.5 on white and on near-black), and no
SI suffixes on the axes; a time axis has one unit for the whole figure
(``time_unit``: ms, or s from 10 s up), named in its title.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import MissingDependencyError, NotFoundError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "VARIANT_PALETTE",
    "calibration_curve",
    "figures_html",
    "fitted_range",
    "latency_box",
    "latency_stats",
    "metric_bars",
    "neutral_layout",
    "refusal_bars",
    "time_unit",
    "variant_colours",
]

#: Text colour of a figure: mid grey, legible on light and dark backgrounds.
NEUTRAL = "#808891"
_GRID = "rgba(128, 128, 128, 0.28)"

#: Variant colours in run order, reused after eight: mid-tone, readable on
#: light and dark backgrounds.
VARIANT_PALETTE = (
    "#4493f8",
    "#e8833a",
    "#2da44e",
    "#a371f7",
    "#d4a72c",
    "#e5534b",
    "#39c5cf",
    "#8c959f",
)

#: Metrics on a 0..1 scale: their axis is fitted to the data.
RATE_METRICS = frozenset(
    {
        "outcome_accuracy",
        "decision_accuracy",
        "recall_at_k",
        "mrr",
        "grading_precision",
        "grading_recall",
        "must_include_hit_rate",
        "protected_preservation",
    }
)

_REFUSAL_METRICS = ("correct_refusals", "wrong_refusals", "unsupported_answers", "citation_errors")


def _go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a core dependency
        raise MissingDependencyError(
            "charts need plotly: pip install selfrag-nb (plotly is a core dependency)"
        ) from exc
    return go


def neutral_layout(**layout: Any) -> dict[str, Any]:
    """Layout for a figure that reads in light and dark notebooks: transparent
    paper and plot, NEUTRAL text, translucent grey grid, full numbers on the
    axes (no "1.5k", no "500m"). ``layout`` is merged in (axes key by key)."""
    axis = {
        "gridcolor": _GRID,
        "zerolinecolor": _GRID,
        "linecolor": _GRID,
        "exponentformat": "none",
        "separatethousands": True,
    }
    out: dict[str, Any] = {
        "template": "none",
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"color": NEUTRAL},
        "xaxis": dict(axis),
        "yaxis": dict(axis),
    }
    for key, value in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            out[key] = {**axis, **value}
        else:
            out[key] = value
    return out


def time_unit(values_ms: Sequence[float | None]) -> tuple[str, float]:
    """(unit, divisor) for milliseconds: one unit per figure, seconds from 10 s up."""
    known = [float(v) for v in values_ms if v is not None and not math.isnan(float(v))]
    return ("s", 1000.0) if known and max(known) >= 10_000 else ("ms", 1.0)


def variant_colours(names: Sequence[str]) -> dict[str, str]:
    """Variant -> colour, by position in run order (the widget uses the same)."""
    return {n: VARIANT_PALETTE[i % len(VARIANT_PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def fitted_range(values: Sequence[float | None], lo: float = 0.0, hi: float = 1.0) -> tuple[float, float]:
    """An axis range around ``values`` within [lo, hi], padded by 15% of the
    spread (at least 0.05) and rounded out to 0.05: bars that differ by a few
    points look different. No known value: the whole [lo, hi]."""
    known = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not known:
        return lo, hi
    vmin, vmax = min(known), max(known)
    pad = max(0.05, 0.15 * (vmax - vmin))
    # 1e-9: 0.45 / 0.05 is 8.999... in floating point, and 0.45 must stay 0.45
    bottom = max(lo, math.floor((vmin - pad) / 0.05 + 1e-9) * 0.05)
    top = min(hi, math.ceil((vmax + pad) / 0.05 - 1e-9) * 0.05)
    return round(bottom, 2), round(top, 2)


def axis_title(label: str, bottom: float, top: float) -> str:
    """The axis title, saying when the axis does not start at 0."""
    if bottom <= 0:
        return label
    return f"{label} (axis fitted to the data: {bottom:g} to {top:g}, not from 0)"


def latency_stats(values: Sequence[float], outliers: int = 20) -> dict[str, Any]:
    """Five-number box (Tukey whiskers at 1.5 IQR) and up to ``outliers`` outliers."""
    xs = sorted(float(v) for v in values if v is not None and not math.isnan(float(v)))
    if not xs:
        return {"n": 0}

    def q(p: float) -> float:
        k = (len(xs) - 1) * p
        f = math.floor(k)
        c = min(f + 1, len(xs) - 1)
        return xs[f] + (xs[c] - xs[f]) * (k - f)

    q1, med, q3 = q(0.25), q(0.5), q(0.75)
    iqr = q3 - q1
    inside = [x for x in xs if q1 - 1.5 * iqr <= x <= q3 + 1.5 * iqr]
    out = [x for x in xs if x not in inside]
    step = max(1, math.ceil(len(out) / outliers)) if out else 1
    return {
        "n": len(xs),
        "min": xs[0],
        "q1": q1,
        "median": med,
        "q3": q3,
        "max": xs[-1],
        "whisker_lo": inside[0],
        "whisker_hi": inside[-1],
        "outliers": out[::step][:outliers],
    }


def metric_bars(summary: pd.DataFrame, metric: str = "outcome_accuracy") -> Any:
    """Grouped bars: ``metric`` per category (x), one bar per variant, in the
    variants' colours; a rate's axis is fitted to the data."""
    go = _go()
    if metric not in summary.columns:
        raise NotFoundError(
            f"unknown metric {metric!r}; summary columns: {list(summary.columns)}", key=metric
        )
    fig = go.Figure()
    colours = variant_colours([str(v) for v in summary["variant"]])
    for variant, part in summary.groupby("variant", sort=False):
        fig.add_bar(
            name=str(variant),
            x=list(part["category"]),
            y=[_num(v) for v in part[metric]],
            marker_color=colours[str(variant)],
        )
    label = metric.replace("_", " ")
    yaxis: dict[str, Any] = {"title": label}
    if metric in RATE_METRICS:
        bottom, top = fitted_range([_num(v) for v in summary[metric]])
        yaxis = {"title": axis_title(label, bottom, top), "range": [bottom, top]}
    elif metric.endswith("_ms"):
        # one unit for the whole figure: the bars are redrawn in it
        unit, div = time_unit([_num(v) for v in summary[metric]])
        for trace in fig.data:
            trace.y = [None if v is None else v / div for v in trace.y]
        yaxis = {"title": f"{label} ({unit})", "tickformat": ",.0f" if unit == "ms" else ",.1f"}
    fig.update_layout(
        **neutral_layout(
            title=f"{label} by category and variant",
            barmode="group",
            xaxis={"title": "category"},
            yaxis=yaxis,
            legend_title="variant",
            height=380,
        )
    )
    return fig


def refusal_bars(summary: pd.DataFrame) -> Any:
    """Per variant (category "all"): the four counts an evidence-quality evaluation asks
    to keep separate, side by side."""
    go = _go()
    overall = summary[summary["category"] == "all"]
    fig = go.Figure()
    for m in _REFUSAL_METRICS:
        fig.add_bar(name=m.replace("_", " "), x=list(overall["variant"]), y=[_num(v) for v in overall[m]])
    fig.update_layout(
        **neutral_layout(
            title="Refusals, unsupported answers and citation errors (counted separately)",
            barmode="group",
            xaxis={"title": "variant"},
            yaxis={"title": "questions"},
            height=380,
        )
    )
    return fig


def latency_box(table: pd.DataFrame) -> Any:
    """Box plot of per-question latency, one box per variant, in one unit
    (ms, or s when a question took 10 s or more)."""
    go = _go()
    fig = go.Figure()
    colours = variant_colours([str(v) for v in table["variant"]])
    unit, div = time_unit(list(table["latency_ms"]))
    fmt = ",.0f" if unit == "ms" else ",.2f"
    for variant, part in table.groupby("variant", sort=False):
        fig.add_box(
            name=str(variant),
            y=[float(v) / div for v in part["latency_ms"]],
            boxpoints="outliers",
            marker_color=colours[str(variant)],
            hovertemplate=f"%{{y:{fmt}}} {unit}<extra>%{{x}}</extra>",
        )
    fig.update_layout(
        **neutral_layout(
            title=f"Latency per question ({unit})",
            yaxis={"title": unit, "tickformat": ",.0f" if unit == "ms" else ",.1f", "hoverformat": fmt},
            showlegend=False,
            height=380,
        )
    )
    return fig


def calibration_curve(table: pd.DataFrame, param: str, suggested: Any = None, default: Any = None) -> Any:
    """Counts per threshold value; outcome accuracy on a second axis; the
    suggested value (and the default, when it differs) marked with labels
    above the plot, where no line runs."""
    go = _go()
    fig = go.Figure()
    x = list(table["value"])
    for m in ("correct_refusals", "wrong_refusals", "unsupported_answers"):
        fig.add_scatter(name=m.replace("_", " "), x=x, y=[_num(v) for v in table[m]], mode="lines+markers")
    fig.add_scatter(
        name="outcome accuracy",
        x=x,
        y=[_num(v) for v in table["outcome_accuracy"]],
        mode="lines+markers",
        yaxis="y2",
        line={"dash": "dot"},
    )
    for value, text, dash, side in (
        (suggested, "suggested", "dash", "right"),
        (default if default != suggested else None, "default", "dot", "left"),
    ):
        if value is None:
            continue
        fig.add_vline(x=value, line_dash=dash, line_width=1.5, line_color=NEUTRAL)
        fig.add_annotation(
            x=value,
            y=1.0,
            yref="paper",
            yanchor="bottom",
            xanchor="left" if side == "right" else "right",
            text=f"{text} {value}",
            showarrow=False,
        )
    acc_range = fitted_range([_num(v) for v in table["outcome_accuracy"]])
    fig.update_layout(
        **neutral_layout(
            title=f"Calibration of {param}",
            xaxis={"title": param},
            yaxis={"title": "questions"},
            yaxis2={
                "title": axis_title("outcome accuracy", *acc_range),
                "overlaying": "y",
                "side": "right",
                "range": list(acc_range),
                "showgrid": False,
            },
            height=420,
            margin={"t": 90},
        )
    )
    return fig


def figures_html(figures: Sequence[Any]) -> list[str]:
    """One HTML fragment per figure; the first carries plotly.js inline so a
    saved report opens offline (no CDN)."""
    out = []
    for i, fig in enumerate(figures):
        out.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False}))
    return out


def _num(v: Any) -> float | None:
    # pandas turns None into NaN in numeric columns; plotly wants None for gaps.
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f
