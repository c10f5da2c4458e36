"""Charts as view-tree nodes: SVG built in Python, one implementation for both faces.

    bar_chart(groups, series, value, ...)   grouped bars: one group per x label,
                                            one bar per series (a variant's colour)
    box_chart(boxes, ...)                   one box per series: quartiles, whiskers
                                            at 1.5 IQR, a few outliers as dots
    line_chart(xs, lines, marks, ...)       one line per series over numeric x,
                                            vertical marks labelled above the plot
        -> Node("svg", ...) inside a ``srnb-chart`` wrapper that scrolls sideways

The nodes go through tree.py like every other view: ``to_html`` writes them
into the static HTML (a saved notebook, ``report.save``), ``to_json`` sends
them to the widget, mount.js creates them with createElementNS. No plotly.js
and no script: the charts work offline and cost a few KB.

Text in a chart uses ``currentColor`` (trace.css ``.srnb-svg-label``) and the
grid the theme's border colour, so a chart reads on light and dark themes;
only the series carry colours, mid-tone ones. Every axis has one unit for
the whole chart (eval/charts.py ``time_unit``: ms, or s when the largest value
is 10 s or more), and a rate's axis is fitted to the data and says so
(``fitted_range``): the rules the plotly figures follow too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from selfrag_nb.display.tree import Node, h
from selfrag_nb.eval.charts import fitted_range, time_unit

#: A category label longer than this is cut with "…" (the whole label on hover).
LABEL_CHARS = 18
#: Pixels a label character takes at the 11 px label font (a little more than average).
CHAR_PX = 6.5
#: Width the charts aim at: a JupyterLab notebook column; wider ones scroll.
FIT_PX = 900


def nice_max(v: float, whole: bool = False) -> float:
    """The smallest 1 / 2 / 2.5 / 5 x 10^n at or above ``v`` (counts: no 2.5)."""
    if not v > 0:
        return 4 if whole else 1
    p = 10.0 ** math.floor(math.log10(v))
    for m in (1, 2, 4, 5, 10) if whole and p < 10 else (1, 2, 2.5, 5, 10):
        if m * p >= v:
            return float(m * p)
    return 10.0 * p


def _ticks(top: float, whole: bool) -> list[float]:
    n = 4
    if whole:
        n = next((k for k in (4, 5, 2, 1) if float(top / k).is_integer()), 1)
    return [top * i / n for i in range(n + 1)]


def _num(v: float) -> str:
    """A coordinate: one decimal, no trailing zeros (keeps the tree small)."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _xywh(x: float, y: float, width: float, height: float) -> dict[str, str]:
    """A rect's place and size as attributes."""
    return {"x": _num(x), "y": _num(y), "width": _num(width), "height": _num(height)}


def _tick_label(v: float, step: float) -> str:
    if v == 0:
        return "0"
    decimals = 0 if step >= 1 else min(3, max(1, -math.floor(math.log10(step))))
    return f"{v:,.{decimals}f}"


def in_unit(v_ms: float, unit: str, div: float) -> str:
    """A time in its figure's unit (``time_unit``): whole ms, or s to two decimals."""
    return f"{v_ms / div:,.{0 if unit == 'ms' else 2}f}"


def swatch(colour: str) -> Node:
    """A small square of a series' colour (an SVG rect: style carries no colours)."""
    square = h("rect", "", x=0, y=0, width=10, height=10, fill=colour)
    return h("svg", "srnb-swatch", square, viewBox="0 0 10 10", width=10, height=10, aria_hidden="true")


def _text(cls: str, kids: Any, x: float, y: float, anchor: str | None = None, **attrs: Any) -> Node:
    return h("text", f"srnb-svg-label {cls}".strip(), kids, x=_num(x), y=_num(y), text_anchor=anchor, **attrs)


def _line(cls: str, x1: float, x2: float, y1: float, y2: float, **attrs: Any) -> Node:
    return h("line", cls, x1=_num(x1), x2=_num(x2), y1=_num(y1), y2=_num(y2), **attrs)


def _category(name: str, x: float, y: float, angle: int, cls: str = "") -> Node:
    """An x label rotated to end under its place, cut to LABEL_CHARS (the whole name on hover)."""
    kids = [h("title", "", name), name[: LABEL_CHARS - 1] + "…"] if len(name) > LABEL_CHARS else name
    return _text(cls, kids, x, y, "end", transform=f"rotate({angle} {_num(x)} {_num(y)})")


def _frame(width: float, height: float, label: str, kids: list[Any]) -> Node:
    svg = h(
        "svg",
        "srnb-svg srnb-chart-svg",
        kids,
        viewBox=f"0 0 {_num(width)} {_num(height)}",
        width=_num(width),
        height=_num(height),
        role="img",
        aria_label=label,
    )
    return h("div", "srnb-chart", svg)


def _axis(
    left: float, right: float, y: Callable[[float], float], ticks: list[float], fmt: Callable[[float], str]
) -> list[Node]:
    out: list[Node] = []
    for v in ticks:
        out.append(_line("srnb-ch-grid", left, right, y(v), y(v)))
        out.append(_text("srnb-ch-axis", fmt(v), left - 6, y(v) + 4, "end"))
    return out


def _title(text: str, x: float) -> Node:
    return _text("srnb-ch-title", text, x, 13)


def bar_chart(
    groups: Sequence[str],
    series: Sequence[tuple[str, str]],
    value: Callable[[str, str], float | None],
    *,
    title: str,
    fmt: Callable[[float], str],
    rate: bool = False,
    whole: bool = False,
    strong: str = "",
) -> Node:
    """Grouped bars: ``value(group, series_name)`` per group (x) and series
    (name, colour); None draws "n/a". A rate's axis is fitted to the data.
    ``strong`` names a group drawn in bold (the "all" group)."""
    top, plot_h = 22, 180
    label_px = [min(LABEL_CHARS, len(g)) * CHAR_PX for g in groups]
    # labels are rotated -30 degrees and end under their group: room below and left
    bottom = math.ceil(20 + 0.5 * max([0.0, *label_px]))
    n = max(1, len(series))
    fit = (FIT_PX - 68) / max(1, len(groups)) - 18
    bw = max(6, min(22, math.floor(fit / n)))
    gw = n * bw + 18
    left = max(56.0, math.ceil(0.87 * (label_px[0] if label_px else 0) - 9 - n * bw / 2 + 4))
    width = max(420.0, left + len(groups) * gw + 12)
    height = top + plot_h + bottom
    known = [float(v) for g in groups for s, _ in series if (v := value(g, s)) is not None]
    ymin, ymax = fitted_range(known) if rate else (0.0, float(nice_max(max([0.0, *known]), whole)))
    span = (ymax - ymin) or 1.0

    def y(v: float) -> float:
        return top + plot_h - plot_h * min(span, max(0.0, v - ymin)) / span

    if ymin > 0:
        step = 0.05 if span <= 0.3 else 0.1 if span <= 0.6 else 0.2
        ticks = [round(ymin + i * step, 2) for i in range(int(span / step + 1e-9) + 1)]
    else:
        ticks = _ticks(ymax, whole)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    label_step = 0.01 if rate else step
    kids: list[Any] = _axis(left, width - 6, y, ticks, lambda v: _tick_label(v, label_step))
    fitted = f" · axis fitted to the data: {ymin:g} to {ymax:g}, not from 0" if ymin > 0 else ""
    kids.append(_title(title + fitted, left))
    base = top + plot_h
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + 9
        for si, (s, colour) in enumerate(series):
            v = value(g, s)
            x = x0 + si * bw
            if v is None:
                kids.append(_text("srnb-ch-na", "n/a", x + bw / 2, base - 3, "middle"))
                continue
            yy = y(float(v))
            tip = h("title", "", f"{s} · {g}: {fmt(float(v))}")
            size = _xywh(x + 1, yy, bw - 2, max(0.5, base - yy))
            # data-series: the index, not the name: data stays in text and titles
            kids.append(h("rect", "srnb-ch-bar", tip, attrs=size, fill=colour, data_series=si))
        kids.append(_category(g, x0 + n * bw / 2, base + 14, -30, "srnb-ch-strong" if g == strong else ""))
    kids.append(_line("srnb-ch-axisline", left, width - 6, base, base))
    return _frame(width, height, title, kids)


def box_chart(boxes: Sequence[tuple[str, str, dict[str, Any]]], *, title: str) -> Node:
    """One box per (name, colour, stats in ms); stats as eval/charts.py latency_stats.
    The axis is in one unit (ms, or s for 10 s and more), said in the title."""
    shown = [b for b in boxes if b[2].get("n")]
    every = [v for _, _, st in shown for v in (st["min"], st["max"], *st.get("outliers", []))]
    unit, div = time_unit(every)
    left, top, plot_h, bottom, bw, gap = 64, 24, 170, 44, 34, 40
    width = max(420.0, left + len(shown) * (bw + gap) + 20)
    height = top + plot_h + bottom
    ymax = float(nice_max(max([1.0 / div, *(v / div for v in every)])))

    def y(v_ms: float) -> float:
        return top + plot_h - plot_h * max(0.0, v_ms / div) / ymax

    ticks = [t * div for t in _ticks(ymax, False)]
    step = ymax / 4
    kids: list[Any] = _axis(left, width - 6, y, ticks, lambda v: _tick_label(v / div, step))
    kids.append(_title(f"{title} ({unit}, lower is better)", left))
    for i, (name, colour, st) in enumerate(shown):
        x0 = left + gap / 2 + i * (bw + gap)
        cx = x0 + bw / 2

        def ln(y1: float, y2: float, x1: float = cx, x2: float = cx, colour: str = colour) -> Node:
            return _line("srnb-ch-whisker", x1, x2, y(y1), y(y2), stroke=colour)

        q3 = y(st["q3"])
        size = _xywh(x0, q3, bw, max(1.0, y(st["q1"]) - q3))
        tip = (
            f"{name}: median {in_unit(st['median'], unit, div)} {unit}, "
            f"quartiles {in_unit(st['q1'], unit, div)}–{in_unit(st['q3'], unit, div)} {unit}, {st['n']} questions"
        )
        g = [
            ln(st["whisker_lo"], st["whisker_hi"]),
            ln(st["whisker_lo"], st["whisker_lo"], cx - bw / 4, cx + bw / 4),
            ln(st["whisker_hi"], st["whisker_hi"], cx - bw / 4, cx + bw / 4),
            h("rect", "srnb-ch-boxrect", h("title", "", tip), attrs=size, fill=colour, stroke=colour),
            _line("srnb-ch-median", x0, x0 + bw, y(st["median"]), y(st["median"])),
            [
                h("circle", "srnb-ch-outlier", cx=_num(cx), cy=_num(y(o)), r=2.5, fill=colour)
                for o in st.get("outliers", [])
            ],
        ]
        kids.append(h("g", "srnb-ch-box", g, data_series=i))
        kids.append(_category(name, cx, top + plot_h + 14, -20))
    return _frame(width, height, title, kids)


def line_chart(
    xs: Sequence[float],
    lines: Sequence[tuple[str, str, Sequence[float | None]]],
    *,
    title: str,
    x_label: str,
    marks: Sequence[tuple[float, str, str]] = (),
) -> Node:
    """One line per (label, tone, ys) over ``xs`` (counts: a whole-number axis);
    ``marks`` (x, label, class) are vertical lines labelled above the plot,
    on rows of their own and on the side away from each other."""
    left, top, plot_h, bottom = 44, 44, 170, 40
    plot_w = max(300, len(xs) * 60)
    width, height = left + plot_w + 20, top + plot_h + bottom
    xmin, xmax = (min(xs), max(xs)) if xs else (0.0, 1.0)

    def x(v: float) -> float:
        return left + (plot_w / 2 if xmax == xmin else (v - xmin) * plot_w / (xmax - xmin))

    ymax = float(nice_max(max([0.0, *(float(v) for _, _, ys in lines for v in ys if v is not None)]), True))

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / ymax

    kids: list[Any] = _axis(left, left + plot_w, y, _ticks(ymax, True), lambda v: _tick_label(v, 1))
    kids.append(_title(title, left))
    kids += [_text("srnb-ch-axis", f"{v:g}", x(v), top + plot_h + 16, "middle") for v in xs]
    kids.append(_text("srnb-ch-axis", x_label, left + plot_w / 2, height - 4, "middle"))
    inside = [m for m in marks if xmin <= m[0] <= xmax]
    for i, (mv, label, cls) in enumerate(inside):
        ly = top - 22 + 16 * i
        other = [o[0] for o in inside if o is not inside[i]]
        anchor = "middle" if not other else ("end" if mv < other[0] else "start")
        dx = {"start": 3, "end": -3, "middle": 0}[anchor]
        kids.append(_line(cls, x(mv), x(mv), ly + 3, top + plot_h))
        kids.append(_text(f"{cls}-t", label, x(mv) + dx, ly, anchor))
    for label, tone, ys in lines:
        pts = [(xv, float(yv)) for xv, yv in zip(xs, ys, strict=True) if yv is not None]
        if not pts:
            continue
        d = " ".join(f"{'L' if i else 'M'}{_num(x(a))} {_num(y(b))}" for i, (a, b) in enumerate(pts))
        kids.append(h("path", f"srnb-ch-line srnb-ch-{tone}", d=d))
        dot = f"srnb-ch-dot srnb-ch-{tone}"
        kids += [
            h("circle", dot, h("title", "", f"{label} at {a:g}: {b:g}"), cx=_num(x(a)), cy=_num(y(b)), r=3)
            for a, b in pts
        ]
    return _frame(width, height, title, kids)
