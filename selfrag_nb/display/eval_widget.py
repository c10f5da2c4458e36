"""The interactive face of evaluation results: one AnyWidget, three modes.

    EvalReport  --report_state()------>  data (mode "report")
        summary   variant x category -> the key metrics (KEY_METRICS order)
        failures  (id, variant, category, outcome, expected, reason, checks),
                  questions sent once in ``questions`` (every variant repeats them),
                  capped per cell; ``failures_total`` / ``failures_shown`` say so
        latency   per variant: the box of a box plot (quartiles, whiskers, a few outliers)
        variants  name, overrides, config and colour: eval/charts.py
                  variant_colours, the mapping the plotly charts use too
        calibration (when the report came from ``calibrate``)
    Calibration --calibration_state()->  data (mode "calibration")
        the sweep rows, suggested / default value, chosen on <set, count, hash>
    RegressionDiff --regression_state()> data (mode "regression")
        counts + fixed / still failing / broke lists (capped)
      -> over STATE_BUDGET bytes? cut texts and lists harder and rebuild

    EvalWidget(obj)                       python side, _esm = js.esm("eval.js")
      data   ----------------------->     static/eval.js render(model, el)
      metric   <----------------->          metric <select> -> SVG bars per category x variant
      category <----------------->          category filter
      cell     <----------------->          click a bar / a row -> that cell's failing questions
      tab      <----------------->          regression list shown
    faces.widget(obj) -> EvalWidget(obj)   registered in eval_html.py with the
                           text and static HTML faces; the mimebundle and the
                           marimo view come from faces.py like every other type

The charts in the widget are SVG drawn by eval.js (no plotly.js: the widget
must work offline and stay small); the plotly charts stay in
``EvalReport.save``. Everything synced is plain JSON rendered with
``textContent``. Styles: trace.css (shared variables, badges, tables) + eval.css.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import InputTypeError, MissingDependencyError

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise MissingDependencyError(
        "The evaluation widget needs anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.display.html import css
from selfrag_nb.display.js import esm
from selfrag_nb.display.state import STATE_BUDGET, state_size
from selfrag_nb.display.text import one_line
from selfrag_nb.eval.calibrate import SWEEP_COLUMNS

if TYPE_CHECKING:
    from selfrag_nb.eval.calibrate import Calibration
    from selfrag_nb.eval.regression import RegressionDiff
    from selfrag_nb.eval.report import EvalReport

__all__ = [
    "KEY_METRICS",
    "EvalWidget",
    "calibration_state",
    "eval_state",
    "eval_view",
    "regression_state",
    "report_state",
]

_STATIC = Path(__file__).parent / "static"

#: The summary columns the widget carries: (key, label, kind, better).
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

# (characters per question / reason / other string, failures kept per cell,
#  entries kept per regression list), loosest first: the first that fits wins.
_LIMITS = ((400, 400, 60, 400), (240, 240, 25, 200), (120, 160, 10, 100), (60, 100, 4, 40))


def _num(v: Any) -> float | int | None:
    """JSON-safe number: NaN/None -> None, floats rounded (4 significant
    digits are plenty on a chart and keep the state small)."""
    if v is None or isinstance(v, bool):
        return None if v is None else int(v)
    if isinstance(v, int):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or math.isinf(f):
        return None
    return float(f"{f:.4g}")


def _cut(text: object, n: int) -> str:
    # one_line flattens newlines and shows invisible controls as ⟨U+XXXX⟩,
    # so a hostile string cannot reorder or hide what the table shows.
    return one_line(str(text or ""), n)


def _set_info(desc: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "name": _cut(desc.get("name", ""), n),
        "path": _cut(desc.get("path", ""), n),
        "count": int(desc.get("count", 0) or 0),
        "hash": str(desc.get("hash", "")),
    }


# ------------------------------------------------------------------ report


def _report_build(report: EvalReport, limits: tuple[int, int, int, int]) -> dict[str, Any]:
    import json

    from selfrag_nb.eval.charts import latency_stats, variant_colours

    q_n, reason_n, per_cell, _ = limits
    variants = report._variant_order()
    colours = variant_colours(variants)
    latency = []
    for v in variants:
        box = latency_stats([r.latency_ms for r in report.rows if r.variant == v])
        shown = {k: _num(x) for k, x in box.items() if k != "outliers"}
        latency.append({"variant": v, **shown, "outliers": [_num(x) for x in box.get("outliers", [])]})
    records = report.summary_records()
    categories = [c for c in dict.fromkeys(r["category"] for r in records) if c != "all"]
    summary = [
        {
            "variant": r["variant"],
            "category": r["category"],
            "n": int(r["n"]),
            "values": [_num(r[k]) for k, *_ in KEY_METRICS],
        }
        for r in records
    ]

    failing = [r for r in report.rows if r.failed_checks]
    v_rank = {v: i for i, v in enumerate(variants)}
    c_rank = {c: i for i, c in enumerate(categories)}
    failing.sort(key=lambda r: (v_rank.get(r.variant, len(v_rank)), c_rank.get(r.category, len(c_rank))))
    kept: list[dict[str, Any]] = []
    questions: dict[str, str] = {}
    per: dict[tuple[str, str], int] = {}
    for r in failing:
        key = (r.variant, r.category)
        if per.get(key, 0) >= per_cell:
            continue
        per[key] = per.get(key, 0) + 1
        qid = _cut(r.id, 120)
        questions.setdefault(qid, _cut(r.question, q_n))
        kept.append(
            {
                "id": qid,
                "variant": r.variant,
                "category": r.category,
                "outcome": r.outcome or "",
                "expected": [_cut(e, 40) for e in r.expected],
                "reason": _cut(r.failure_reason or "", reason_n),
                "checks": [_cut(c, 40) for c in r.failed_checks],
                "error": _cut(r.error, reason_n) if r.error else "",
            }
        )

    qd = report.questions.describe()
    state: dict[str, Any] = {
        "mode": "report",
        "summary_text": report.to_text().splitlines()[0],
        "set": _set_info(qd, q_n),
        "k": report.k,
        "seconds": _num(report.seconds),
        "rows": len(report.rows),
        "question_count": len({r.id for r in report.rows}),
        "variants": [
            {
                "name": v,
                "overrides": _cut(json.dumps(report.variants.get(v, {}), sort_keys=True, default=str), q_n),
                "config": _cut(report.config_versions.get(v, ""), 80),
                "colour": colours[v],
            }
            for v in variants
        ],
        "categories": categories,
        "metrics": [{"key": k, "label": lab, "kind": kind, "better": b} for k, lab, kind, b in KEY_METRICS],
        "summary": summary,
        "latency": latency,
        "failures": kept,
        "questions": questions,
        "failures_total": len(failing),
        "failures_shown": len(kept),
        "per_cell_limit": per_cell,
        "text_limit": q_n,
    }
    if len(variants) > 1:
        from selfrag_nb.display.eval_html import disagreement_kind

        agree = report.agreement_records()
        off = [a for a in agree if not a["agree"]]
        state["agreement"] = {
            "questions": len(agree),
            "total": len(off),
            # Capped like the failures: the view stays small, report.disagreements has all.
            "rows": [
                {
                    "id": _cut(a["id"], 80),
                    "category": _cut(a["category"], 80),
                    "question": _cut(a["question"], q_n),
                    "differs": disagreement_kind(a),
                    "cells": [
                        None
                        if a["kept"][v] is None
                        else f"{a['outcomes'][v] or '-'} · {len(a['kept'][v])} kept"
                        for v in variants
                    ],
                }
                for a in off[:per_cell]
            ],
        }
    roles = report.role_records()
    if roles:
        state["roles"] = [
            {k: _num(v) if k not in ("variant", "role") else v for k, v in r.items()} for r in roles
        ]
    if report.calibration is not None:
        state["calibration"] = _calibration_build(report.calibration, limits)
    return state


def report_state(report: EvalReport) -> dict[str, Any]:
    """The widget's ``data`` for an EvalReport, within STATE_BUDGET bytes."""
    return _fit(lambda lim: _report_build(report, lim))


# ------------------------------------------------------------------ calibration


def _calibration_build(cal: Calibration, limits: tuple[int, int, int, int]) -> dict[str, Any]:
    return {
        "mode": "calibration",
        "summary_text": cal.to_text(),
        "param": cal.param,
        "suggested": _num(cal.suggested),
        "default": _num(cal.default),
        "chosen_on": _set_info(cal.chosen_on, limits[0]),
        "columns": list(SWEEP_COLUMNS),
        "rows": [[_num(r.get(c)) for c in SWEEP_COLUMNS] for r in cal.rows],
    }


def calibration_state(cal: Calibration) -> dict[str, Any]:
    """The widget's ``data`` for a Calibration (the sweep is small: no cutting needed)."""
    return _fit(lambda lim: _calibration_build(cal, lim))


# ------------------------------------------------------------------ regression

_LISTS = (("broke", "broke"), ("still_failing", "still failing"), ("fixed", "fixed"))


def _regression_build(diff: RegressionDiff, limits: tuple[int, int, int, int]) -> dict[str, Any]:
    q_n, reason_n, _, list_n = limits
    lists: dict[str, list[dict[str, Any]]] = {}
    totals: dict[str, int] = {}
    for key, _label in _LISTS:
        items = getattr(diff, key)
        totals[key] = len(items)
        lists[key] = [
            {
                "variant": e["variant"],
                "id": _cut(e["id"], 120),
                "category": e["category"],
                "question": _cut(e["question"], q_n),
                "before": _cut(e["before"], reason_n),
                "after": _cut(e["after"], reason_n),
                "new_checks": [_cut(c, 40) for c in e["new_checks"]],
            }
            for e in items[:list_n]
        ]
    return {
        "mode": "regression",
        "summary_text": diff.to_text(),
        "labels": dict(_LISTS),
        "order": [k for k, _ in _LISTS],
        "lists": lists,
        "totals": totals,
        "passing": diff.unchanged_passing,
        "not_compared": diff.not_compared,
        "list_limit": list_n,
    }


def regression_state(diff: RegressionDiff) -> dict[str, Any]:
    """The widget's ``data`` for a RegressionDiff, within STATE_BUDGET bytes."""
    return _fit(lambda lim: _regression_build(diff, lim))


# ------------------------------------------------------------------ dispatch


def _fit(build: Any) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for limits in _LIMITS:
        state = build(limits)
        if state_size(state) <= STATE_BUDGET:
            break
    return state


def eval_state(obj: object) -> dict[str, Any]:
    """``data`` for an EvalReport, a Calibration or a RegressionDiff."""
    from selfrag_nb.eval.calibrate import Calibration
    from selfrag_nb.eval.regression import RegressionDiff
    from selfrag_nb.eval.report import EvalReport

    if isinstance(obj, EvalReport):
        return report_state(obj)
    if isinstance(obj, Calibration):
        return calibration_state(obj)
    if isinstance(obj, RegressionDiff):
        return regression_state(obj)
    raise InputTypeError(
        f"EvalWidget shows an EvalReport, a Calibration or a RegressionDiff, not {type(obj).__name__}"
    )


@lru_cache(maxsize=1)
def eval_css() -> str:
    """The record views' stylesheet followed by the evaluation view's own, comments stripped."""
    raw = (_STATIC / "eval.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return css() + re.sub(r"\s*\n\s*", "", raw).strip()


# ------------------------------------------------------------------ the widget


class EvalWidget(anywidget.AnyWidget):
    """Interactive view of an EvalReport (mode "report"), a Calibration
    ("calibration") or a RegressionDiff ("regression")."""

    _esm = esm("eval.js")
    _css = eval_css()

    data = traitlets.Dict().tag(sync=True)
    mode = traitlets.Unicode("report").tag(sync=True)
    #: Metric drawn in the bar chart and highlighted in the table (a KEY_METRICS key).
    metric = traitlets.Unicode("outcome_accuracy").tag(sync=True)
    #: Category filter ("" = every category).
    category = traitlets.Unicode("").tag(sync=True)
    #: Selected (variant, category) cell, [] when none: its failures are listed.
    cell = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Regression list shown: broke | still_failing | fixed.
    tab = traitlets.Unicode("broke").tag(sync=True)

    def __init__(self, obj: object, **kwargs: Any) -> None:
        state = eval_state(obj)
        super().__init__(data=state, mode=state["mode"], tab=_first_tab(state), **kwargs)

    @traitlets.validate("metric")
    def _check_metric(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        known = [k for k, *_ in KEY_METRICS]
        if value not in known:
            raise traitlets.TraitError(f"unknown metric {value!r}; metrics: {', '.join(known)}")
        return value

    def update(self, obj: object) -> None:
        """Show ``obj`` instead; the selection resets (the metric is kept)."""
        state = eval_state(obj)
        with self.hold_sync():
            self.cell = []
            self.category = ""
            self.tab = _first_tab(state)
            self.mode = state["mode"]
            self.data = state


def _first_tab(state: dict[str, Any]) -> str:
    """The first non-empty regression list (broke first: it matters most)."""
    totals = state.get("totals") or {}
    for key, _ in _LISTS:
        if totals.get(key):
            return key
    return "broke"


def eval_view(obj: object) -> EvalWidget:
    """The interactive view of an EvalReport, a Calibration or a RegressionDiff."""
    return EvalWidget(obj)
