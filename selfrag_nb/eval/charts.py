"""Plotly charts of evaluation results (plotly is imported on first use).

summary  --metric_bars()-->      one metric per category, a bar per variant
         --refusal_bars()-->     correct refusals | wrong refusals |
                                 unsupported answers | citation errors (kept apart)
table    --latency_box()-->      per-question latency per variant
calibration table --calibration_curve()--> the four counts per threshold value
[figures] --figures_html()-->    HTML fragments, plotly.js inlined once (no CDN)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import MissingDependencyError, NotFoundError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["calibration_curve", "figures_html", "latency_box", "metric_bars", "refusal_bars"]

_REFUSAL_METRICS = ("correct_refusals", "wrong_refusals", "unsupported_answers", "citation_errors")


def _go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a core dependency
        raise MissingDependencyError(
            "charts need plotly: pip install selfrag-nb (plotly is a core dependency)"
        ) from exc
    return go


def metric_bars(summary: pd.DataFrame, metric: str = "outcome_accuracy") -> Any:
    """Grouped bars: ``metric`` per category (x), one bar per variant."""
    go = _go()
    if metric not in summary.columns:
        raise NotFoundError(f"unknown metric {metric!r}; summary columns: {list(summary.columns)}")
    fig = go.Figure()
    for variant, part in summary.groupby("variant", sort=False):
        fig.add_bar(name=str(variant), x=list(part["category"]), y=[_num(v) for v in part[metric]])
    fig.update_layout(
        title=f"{metric} by category and variant",
        barmode="group",
        xaxis_title="category",
        yaxis_title=metric,
        legend_title="variant",
        template="plotly_white",
        height=380,
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
        title="Refusals, unsupported answers and citation errors (counted separately)",
        barmode="group",
        xaxis_title="variant",
        yaxis_title="questions",
        template="plotly_white",
        height=380,
    )
    return fig


def latency_box(table: pd.DataFrame) -> Any:
    """Box plot of per-question latency (ms), one box per variant."""
    go = _go()
    fig = go.Figure()
    for variant, part in table.groupby("variant", sort=False):
        fig.add_box(name=str(variant), y=list(part["latency_ms"]), boxpoints="outliers")
    fig.update_layout(
        title="Latency per question", yaxis_title="ms", showlegend=False, template="plotly_white", height=380
    )
    return fig


def calibration_curve(table: pd.DataFrame, param: str, suggested: Any = None) -> Any:
    """Counts per threshold value; outcome accuracy on a second axis; the
    suggested value marked."""
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
    if suggested is not None:
        fig.add_vline(x=suggested, line_dash="dash", annotation_text=f"suggested {suggested}")
    fig.update_layout(
        title=f"Calibration of {param}",
        xaxis_title=param,
        yaxis={"title": "questions"},
        yaxis2={"title": "outcome accuracy", "overlaying": "y", "side": "right", "range": [0, 1]},
        template="plotly_white",
        height=400,
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
