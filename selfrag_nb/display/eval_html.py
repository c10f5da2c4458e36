"""The evaluation views: one view tree per type, two faces from it.

    EvalReport     -> report_view(report)
                        head (set, hash, k, rows, time) + variant legend | variants
                        | charts, one tab each (outcome / decision accuracy, recall@k,
                        refusals and errors, latency) | summary by variant x category
                        (sortable) | calibration | where the variants disagree
                        | per model role | failures, one <details> per variant (each
                        row: outcome, the check that ended it, the reason in words)
    Calibration    -> calibration_view(cal): suggestion, the set it was chosen on, curve, sweep
    RegressionDiff -> regression_view(diff): counts, then one tab per list (broke first)
      -> static face  report_html / calibration_html / regression_html: to_page(view, eval_css())
                      (no script; tabs shown one under the other, each with its heading)
      -> widget face  EvalWidget (eval_widget.py): to_json(view) mounted by mount.js

Charts are SVG nodes (svg_charts.py) in the variants' colours (eval/charts.py
``variant_colours``, as the plotly figures). Every table scrolls sideways
inside its card; an id never breaks inside (cut with "…" past ``ID_CHARS``,
the whole id on hover); evidence is named by its file, the chunk id on hover.
The tree is cut to fit STATE_BUDGET (questions, reasons, rows per list),
loosest limits first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.cards import details, root, table
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.names import file_name
from selfrag_nb.display.state import STATE_BUDGET
from selfrag_nb.display.svg_charts import bar_chart, box_chart, in_unit, line_chart, swatch
from selfrag_nb.display.tables import tr
from selfrag_nb.display.tree import Node, frag, h, to_html, to_json, to_page
from selfrag_nb.errors import InputTypeError
from selfrag_nb.eval.calibrate import SWEEP_COLUMNS, Calibration
from selfrag_nb.eval.charts import latency_stats, time_unit, variant_colours
from selfrag_nb.eval.regression import RegressionDiff
from selfrag_nb.eval.report import EvalReport
from selfrag_nb.formats import fmt_cost, fmt_tokens

#: Class of every root element: MathJax (JupyterLab, Notebook) leaves it alone.
ROOT_CLASS = "srnb-root srnb-ev tex2jax_ignore mathjax_ignore"
#: Characters of an id shown before it is cut with "…" (ids never wrap).
ID_CHARS = 40

#: The summary columns: (key, label, kind, better).
#: kind: rate (0..1) | count | ms | tokens | cost | calls; better: up | down | "" (neither).
KEY_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("outcome_accuracy", "outcome accuracy", "rate", "up"),
    ("decision_accuracy", "decision accuracy", "rate", "up"),
    ("recall_at_k", "recall@k", "rate", "up"),
    ("mrr", "MRR", "rate", "up"),
    ("grading_precision", "grading precision", "rate", "up"),
    ("grading_recall", "grading recall", "rate", "up"),
    ("correct_refusals", "correct refusals", "count", "up"),
    ("wrong_refusals", "wrong refusals", "count", "down"),
    ("unsupported_answers", "unsupported answers", "count", "down"),
    ("citation_errors", "citation errors", "count", "down"),
    ("must_include_hit_rate", "must_include hit rate", "rate", "up"),
    ("must_not_include_violations", "must_not_include violations", "count", "down"),
    ("secret_leaks", "secret leaks", "count", "down"),
    ("protected_preservation", "protected preservation", "rate", "up"),
    ("latency_p50_ms", "P50 latency", "ms", "down"),
    ("latency_p95_ms", "P95 latency", "ms", "down"),
    ("tokens_in", "tokens in", "tokens", "down"),
    ("tokens_out", "tokens out", "tokens", "down"),
    ("cost", "cost", "cost", "down"),
    ("model_calls", "model calls", "calls", ""),
    ("failures", "failing rows", "count", "down"),
)
#: The charts of accuracy, one tab each: the summary's first three columns.
_BARS = [(key, label) for key, label, *_ in KEY_METRICS[:3]]
_REFUSALS = (
    ("correct_refusals", "correct refusals", "ok"),
    ("wrong_refusals", "wrong refusals", "bad"),
    ("unsupported_answers", "unsupported answers", "warn"),
    ("citation_errors", "citation errors", "info"),
)
_TONES = {"ok": "#2da44e", "bad": "#e5534b", "warn": "#d4a72c", "info": "#4493f8"}

# (characters per question, per reason / other text, rows per list), loosest first:
# the first whose tree fits STATE_BUDGET wins.
_LIMITS = ((400, 400, 60), (240, 240, 25), (120, 160, 10), (60, 100, 4))
Limits = tuple[int, int, int]


def eval_css() -> str:
    """The record views' stylesheet followed by the evaluation view's own, comments stripped."""
    return stylesheet("trace.css", "eval.css")


# ------------------------------------------------------------------ pieces


def _id(text: object) -> Node:
    """An id on one line (never broken inside), cut with "…", the whole id on hover."""
    full = str(text)
    return h("span", "srnb-id", full if len(full) <= ID_CHARS else full[: ID_CHARS - 1] + "…", title=full)


def _t(text: object, n: int) -> str:
    """One line of at most ``n`` characters; tree.text_kids labels controls in both faces."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _known(v: Any) -> float | None:
    """A number, or None for a missing or NaN value."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _table(cols: Sequence[Any], rows: Sequence[Node], *, cls: str = "", sort: bool = False) -> Node:
    """A table in a wrapper that scrolls sideways inside its card (never cut by it)."""
    data = {"data_sort": sort or None, "data_key": cls or None}
    return h("div", "srnb-scroll", table(f"srnb-table {cls}".strip(), cols, rows, **data))


def _more(shown: int, total: int, where: str) -> Node | None:
    if shown >= total:
        return None
    return h("div", "srnb-trunc", f"showing {shown} of {total}: {where} has every row")


def _value(kind: str, v: Any) -> str:
    if _known(v) is None:
        return "unknown" if kind in ("cost", "tokens") else "n/a"
    if kind == "rate":
        return f"{float(v):.3f}"
    if kind == "ms":
        return f"{float(v):,.0f} ms"
    if kind == "cost":
        return fmt_cost(float(v))
    if kind == "tokens":
        return fmt_tokens(float(v))
    return f"{int(v):,}" if float(v).is_integer() else f"{float(v):,.2f}"


def _num_cell(text: str) -> Node:
    """A number, right-aligned; mount.js sorts a column by the number in its text."""
    return h("td", "srnb-r srnb-num", text)


def _badge(text: str, tone: str = "") -> Node:
    return h("span", f"srnb-badge srnb-{tone}" if tone else "srnb-badge", text)


def _root(*kids: Any) -> Node:
    return root(ROOT_CLASS, kids)


def _tab(title: str, *kids: Any, **attrs: Any) -> Node:
    """One panel of a ``data-tabs`` set: its heading is the static face's (tabs shown one under another)."""
    return h("div", "srnb-tab", h("h5", "srnb-tab-h", title), kids, data_tab=title, **attrs)


def _tabs(cls: str, key: str, panels: list[Node]) -> Node:
    return h("section", cls, h("div", "srnb-tabs", panels, data_tabs="", data_key=key))


def _refusal_legend() -> Node:
    keys = [h("span", "srnb-ev-key", swatch(_TONES[t]), lab) for _, lab, t in _REFUSALS]
    return h("div", "srnb-legend", keys)


def _section(title: str, *kids: Any, cls: str = "") -> Node:
    return h("section", f"srnb-card {cls}".strip(), h("h4", "srnb-ev-h", title), kids)


# ------------------------------------------------------------------ report


def _head(report: EvalReport, colours: dict[str, str], limits: Limits) -> Node:
    qd = report.questions.describe()
    variants = report._variant_order()
    facts = [
        f"{len({r.id for r in report.rows})} question(s) of {qd['count']}",
        f"set hash {qd['hash']}",
        f"recall@{report.k}",
        f"{len(report.rows)} rows",
        f"{report.seconds:.1f} s",
        f"{sum(1 for r in report.rows if r.failed_checks)} failing row(s)",
        f"rows in {report.out}" if report.out else "",
    ]
    overrides = {v: f"overrides {_json(report.variants.get(v, {}))}" for v in variants}
    legend = [h("span", "srnb-ev-key", swatch(colours[v]), _id(v), title=overrides[v]) for v in variants]
    return h(
        "div",
        "srnb-head",
        h("h3", "srnb-q", f"Evaluation: {len(variants)} variant(s) on ", _t(qd["name"], limits[0])),
        h("div", "srnb-meta", " · ".join(f for f in facts if f)),
        h("div", "srnb-legend", legend),
    )


def _variants(report: EvalReport, limits: Limits) -> Node:
    rows = [
        tr("", _id(n), h("td", "srnb-code", _t(_json(ov), limits[1])), _id(report.config_versions.get(n, "")))
        for n, ov in report.variants.items()
    ]
    return _section("Variants", _table(["variant", "overrides", "config version"], rows))


def _charts(report: EvalReport, records: list[dict[str, Any]], colours: dict[str, str]) -> Node:
    variants = report._variant_order()
    cats = [c for c in dict.fromkeys(r["category"] for r in records) if c != "all"] + ["all"]
    cell = {(r["variant"], r["category"]): r for r in records}
    series = [(v, colours[v]) for v in variants]
    panels = []
    for key, label in _BARS:

        def val(g: str, s: str, key: str = key) -> float | None:
            return _known(cell.get((s, g), {}).get(key))

        if all(val(g, v) is None for g in cats for v in variants):
            continue  # nothing to draw (no labels for it): the summary says n/a
        title = f"{label} (higher is better)"
        chart = bar_chart(cats, series, val, title=title, fmt=lambda v: f"{v:.3f}", rate=True, strong="all")
        panels.append(_tab(label, chart))
    overall = {r["variant"]: r for r in records if r["category"] == "all"}
    key_of = {lab: k for k, lab, _ in _REFUSALS}
    refusal = bar_chart(
        variants,
        [(label, _TONES[tone]) for _, label, tone in _REFUSALS],
        lambda g, s: float(overall[g][key_of[s]]),
        title="questions per variant: refusals and errors, counted apart",
        fmt=lambda v: f"{v:,.0f}",
        whole=True,
    )
    panels.append(_tab("refusals and errors", _refusal_legend(), refusal))
    boxes = [
        (v, colours[v], latency_stats([r.latency_ms for r in report.rows if r.variant == v]))
        for v in variants
    ]
    if any(b[2].get("n") for b in boxes):
        panels.append(_tab("latency", box_chart(boxes, title="latency per question")))
    return _tabs("srnb-card srnb-ev-charts", "charts", panels)


def _summary(records: list[dict[str, Any]]) -> Node:
    # The best known value per category and metric is bold; "better" says which way.
    best: dict[tuple[str, str], float] = {}
    for key, _, _, better in KEY_METRICS:
        sign = 1 if better == "up" else -1
        for r in records if better else ():
            v, k = _known(r.get(key)), (r["category"], key)
            if v is not None and (k not in best or sign * v > sign * best[k]):
                best[k] = v
    unit, div = time_unit([r.get(k) for r in records for k in ("latency_p50_ms", "latency_p95_ms")])
    cols = ["variant", "category", h("th", "srnb-r", "n")]
    cols += [
        h("th", "srnb-r", lab, title=f"{'higher' if b == 'up' else 'lower'} is better" if b else None)
        for _, lab, _, b in KEY_METRICS
    ]

    def cell(r: dict[str, Any], key: str, kind: str) -> Node:
        v = r.get(key)
        strong = v is not None and best.get((r["category"], key)) == v and len(records) > 2
        secs = float(v) / div if kind == "ms" and v is not None and unit == "s" else None
        text = f"{secs:,.2f} s" if secs is not None else _value(kind, v)
        # no class per cell: the stylesheet aligns the summary's number columns (a smaller tree)
        return h("td", "srnb-ev-best" if strong else "", text)

    rows = [
        tr(
            "srnb-ev-all" if r["category"] == "all" else "",
            _id(r["variant"]),
            r["category"],
            str(r["n"]),
            *(cell(r, key, kind) for key, _, kind, _ in KEY_METRICS),
        )
        for r in records
    ]
    note = h("div", "srnb-meta", "Click a column header to sort by it; bold: the best value of its category.")
    table_ = _table(cols, rows, cls="srnb-ev-summary", sort=True)
    return _section("Summary by variant and category", note, table_)


def disagreement_kind(a: dict[str, Any]) -> str:
    """What differs on one agreement record, in words."""
    return " and ".join(
        w for w, same in (("outcome", a["same_outcome"]), ("kept evidence", a["same_kept"])) if not same
    )


def _disagreements(report: EvalReport, limits: Limits) -> Node:
    variants = report._variant_order()
    agree = report.agreement_records()
    off = [a for a in agree if not a["agree"]]
    title = f"Where the variants disagree ({len(off)} of {len(agree)} questions)"
    if not off:
        same = "Every variant ended the same way with the same evidence on every question."
        return _section(title, h("p", "", same))

    def kept(a: dict[str, Any], v: str) -> Node:
        if a["kept"][v] is None:
            return h("td", "srnb-muted", "not run")
        return h("td", "srnb-nowrap", f"{a['outcomes'][v] or '-'} · {len(a['kept'][v])} kept")

    rows = [
        tr(
            "",
            _id(a["id"]),
            a["category"],
            h("td", "srnb-ev-q", _t(a["question"], limits[0])),
            disagreement_kind(a),
            *(kept(a, v) for v in variants),
        )
        for a in off[: limits[2]]
    ]
    cols = ["id", "category", "question", "differs in", *(_id(v) for v in variants)]
    return _section(title, _table(cols, rows), _more(len(rows), len(off), "report.disagreements"))


def _roles(report: EvalReport) -> Node:
    recs = report.role_records()
    unit, div = time_unit([r["latency_ms"] for r in recs])
    rows = [
        tr(
            "srnb-ev-role",
            _id(r["variant"]),
            r["role"],
            _num_cell(_value("tokens", r["tokens_in"])),
            _num_cell(_value("tokens", r["tokens_out"])),
            _num_cell(_value("cost", r["cost"])),
            _num_cell("–" if r["latency_ms"] is None else in_unit(float(r["latency_ms"]), unit, div)),
        )
        for r in recs
    ]
    numbers = ("tokens in", "tokens out", "cost", f"{unit} per question")
    cols = ["variant", "role", *(h("th", "srnb-r", x) for x in numbers)]
    return _section("Per model role", _table(cols, rows), cls="srnb-ev-roles")


def _evidence(sources: Sequence[str], ids: Sequence[str]) -> list[Node]:
    """Each retrieved chunk named by its document's file; the chunk id on hover."""
    padded = [*sources[:5], *[""] * 5]  # a chunk without its source is named by its id
    out = [
        h("span", "srnb-ev-doc", _t(file_name(src) if src else cid, 60), title=f"chunk {cid}")
        for cid, src in zip(ids[:5], padded, strict=False)
    ]
    return [*out, h("span", "srnb-muted", f"+{len(ids) - 5} more")] if len(ids) > 5 else out


def _failure_row(r: Any, limits: Limits) -> Node:
    return tr(
        "srnb-ev-fail",
        _id(r.id),
        r.category,
        h("td", "srnb-ev-q", _t(r.question, limits[0])),
        [
            _badge(r.outcome or "none", "bad"),
            # the check that had the last word (the trace's reason_kind): a refusal
            # by no_evidence and one by not_answered are different failures
            h("div", "srnb-meta", "reason_kind ", h("code", "", r.reason_kind)) if r.reason_kind else None,
            h("div", "srnb-meta", "expected " + " / ".join(r.expected)) if r.expected else None,
        ],
        h(
            "td",
            "srnb-ev-reason",
            _t(r.failure_reason or "", limits[1]),
            h("div", "srnb-ev-err", _t(r.error, limits[1])) if r.error else None,
            h("div", "srnb-ev-checks", [_badge(c, "bad") for c in r.failed_checks]),
        ),
        _evidence(r.retrieved, r.evidence),
    )


def _failures(report: EvalReport, limits: Limits) -> Node:
    failing = [r for r in report.rows if r.failed_checks]
    title = f"Failures ({len(failing)})"
    if not failing:
        return _section(title, h("p", "", "No failing rows."))
    cols = ["id", "category", "question", "outcome", "failure reason", "evidence"]
    blocks = []
    for vi, v in enumerate(report._variant_order()):
        mine = [r for r in failing if r.variant == v]
        rows = [_failure_row(r, limits) for r in mine[: limits[2]]]
        blocks.append(
            details(
                [_id(v), f" · {len(mine)} failing row(s)"],
                _table(cols, rows),
                _more(len(rows), len(mine), "report.failures"),
                key=f"failures:{vi}",  # the index: names stay in text
            )
            if mine
            else None
        )
    return _section(title, blocks)


def _report_tree(report: EvalReport, limits: Limits, charts: bool = True) -> Node:
    colours = variant_colours(report._variant_order())
    head = [_head(report, colours, limits), _variants(report, limits)]
    if not report.rows:
        return _root(head, h("p", "srnb-muted", "No rows: nothing was evaluated."))
    records = report.summary_records()
    return _root(
        head,
        _charts(report, records, colours) if charts else None,
        _summary(records),
        _calibration_card(report.calibration, limits) if report.calibration is not None else None,
        _disagreements(report, limits) if len(report._variant_order()) > 1 else None,
        _roles(report) if report.role_records() else None,
        _failures(report, limits),
    )


# ------------------------------------------------------------------ calibration


def _calibration_card(cal: Calibration, limits: Limits) -> Node:
    c, rows = cal.chosen_on, cal.rows
    lines = [(lab, tone, [r.get(k) for r in rows]) for k, lab, tone in _REFUSALS]
    marks = [(float(cal.suggested), f"suggested {cal.suggested}", "srnb-ch-suggest")]
    if cal.default != cal.suggested:
        marks.append((float(cal.default), f"default {cal.default}", "srnb-ch-default"))
    xs = [float(r["value"]) for r in rows]
    title = f"calibration of {cal.param}"

    def cell(col: str, v: Any) -> Node:
        text = "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)
        return h("td", "srnb-num" if col == "value" else "srnb-r srnb-num", text)

    sweep = _table(
        [h("th", "" if col == "value" else "srnb-r", col.replace("_", " ")) for col in SWEEP_COLUMNS],
        [
            tr(
                "srnb-ev-suggested" if r["value"] == cal.suggested else "",
                *(cell(k, r.get(k)) for k in SWEEP_COLUMNS),
            )
            for r in rows
        ],
    )
    return h(
        "section",
        "srnb-card srnb-ev-cal",
        h(
            "div",
            "srnb-card-h",
            h("h4", "srnb-ev-h", f"Calibration of {cal.param}"),
            _badge(f"suggested {cal.param} = {cal.suggested}", "info"),
            h("span", "srnb-meta", f"default {cal.default}"),
        ),
        h(
            "p",
            "srnb-row",
            h("span", "srnb-label", "chosen on"),
            _t(c.get("name", ""), limits[0]),
            f" — {c.get('count', '')} questions, hash {c.get('hash', '')}",
            f", {_t(c['path'], limits[1])}" if c.get("path") else None,
        ),
        h(
            "div",
            "srnb-meta",
            "score = correct refusals − wrong refusals − unsupported answers; ties go to the default. "
            "Re-calibrate when the question set, corpus or models change.",
        ),
        [line_chart(xs, lines, title=title, x_label=cal.param, marks=marks), _refusal_legend()]
        if rows
        else None,
        sweep,
    )


# ------------------------------------------------------------------ regression

_LISTS = (("broke", "broke", "bad"), ("still_failing", "still failing", "warn"), ("fixed", "fixed", "ok"))
_REGRESSION_COLS = ["variant", "id", "category", "question", "before", "after", "new checks"]


def _regression_panel(items: list[dict[str, Any]], label: str, limits: Limits) -> Any:
    if not items:
        return h("p", "srnb-muted", f"Nothing {label}.")
    rows = [
        tr(
            "srnb-ev-fail",
            _id(e["variant"]),
            _id(e["id"]),
            e["category"],
            h("td", "srnb-ev-q", _t(e["question"], limits[0])),
            h("td", "srnb-ev-reason", _t(e["before"], limits[1]) or "—"),
            h("td", "srnb-ev-reason", _t(e["after"], limits[1]) or "passes"),
            [_badge(c, "bad") for c in e["new_checks"]],
        )
        for e in items[: limits[2]]
    ]
    return frag(_table(_REGRESSION_COLS, rows), _more(len(rows), len(items), "diff.table"))


def _regression_tree(diff: RegressionDiff, limits: Limits) -> Node:
    counts = [_badge(f"{len(getattr(diff, k))} {label}", tone) for k, label, tone in _LISTS]
    extra = f"{diff.unchanged_passing} passing before and after"
    if diff.not_compared:
        extra += f" · {diff.not_compared} not in the earlier run"
    head = h(
        "div",
        "srnb-head",
        h("h3", "srnb-q", "Regression re-run"),
        h("div", "srnb-totals", counts, h("span", "srnb-meta", extra)),
    )
    first = next((k for k, _, _ in _LISTS if getattr(diff, k)), "broke")
    panels = [
        _tab(
            f"{label} ({len(getattr(diff, key))})",
            _regression_panel(getattr(diff, key), label, limits),
            data_tab_open=key == first or None,
        )
        for key, label, _ in _LISTS
    ]
    return _root(head, _tabs("srnb-card", "regression", panels))


# ------------------------------------------------------------------ fitting and faces


def _fit(build: Callable[[Limits], Node]) -> Node:
    """The tree with the loosest limits whose widget JSON fits STATE_BUDGET."""
    node = build(_LIMITS[0])
    for limits in _LIMITS[1:]:
        if len(json.dumps(to_json(node), ensure_ascii=False, separators=(",", ":"))) <= STATE_BUDGET:
            break
        node = build(limits)
    return node


def report_view(report: EvalReport, *, charts: bool = True) -> Node:
    """The view tree of an EvalReport (``charts=False``: without the charts card)."""
    return _fit(lambda lim: _report_tree(report, lim, charts))


def calibration_view(cal: Calibration) -> Node:
    """The view tree of a Calibration."""
    return _fit(lambda lim: _root(_calibration_card(cal, lim)))


def regression_view(diff: RegressionDiff) -> Node:
    """The view tree of a RegressionDiff."""
    return _fit(lambda lim: _regression_tree(diff, lim))


def eval_view(obj: object) -> Node:
    """The view tree of an EvalReport, a Calibration or a RegressionDiff."""
    if isinstance(obj, EvalReport):
        return report_view(obj)
    if isinstance(obj, Calibration):
        return calibration_view(obj)
    if isinstance(obj, RegressionDiff):
        return regression_view(obj)
    raise InputTypeError(
        f"the evaluation view shows an EvalReport, a Calibration or a RegressionDiff, not {type(obj).__name__}"
    )


def page(node: Node) -> str:
    """The static face of a view tree: the root with the stylesheet first in it."""
    return to_page(node, eval_css())


def report_html(report: EvalReport, *, charts: bool = True) -> str:
    """Static HTML (no script): the report's view tree, SVG charts included unless ``charts=False``."""
    return page(report_view(report, charts=charts))


def calibration_html(cal: Calibration, *, embedded: bool = False) -> str:
    """Static HTML (no script); ``embedded``: the card alone, for a page that has the stylesheet."""
    tree = calibration_view(cal)
    return "".join(to_html(k) for k in tree.kids) if embedded else page(tree)


def regression_html(diff: RegressionDiff) -> str:
    return page(regression_view(diff))


def _eval_widget(obj: object) -> Any:
    from selfrag_nb.display.eval_widget import EvalWidget

    return EvalWidget(obj)


faces.register(EvalReport, text=EvalReport.to_text, html=report_html, widget=_eval_widget)
faces.register(Calibration, text=Calibration.to_text, html=calibration_html, widget=_eval_widget)
faces.register(RegressionDiff, text=RegressionDiff.to_text, html=regression_html, widget=_eval_widget)
