"""Static HTML of evaluation results (no script; scripts only in ``save``'s charts).

    EvalReport     -> report_html(report, charts=False)
                        what ran (set, hash, k, rows) | variants | summary by
                        variant x category (CSS bars for rates) | [plotly charts:
                        charts=True, used by report.save] | calibration | failures
    Calibration    -> calibration_html(cal, embedded=False)
                        the suggestion, the set it was chosen on, the sweep table
    RegressionDiff -> regression_html(diff)
                        counts, then one folded table per status (broke first)

Every text goes through ``markup.escape`` (controls shown as ⟨U+XXXX⟩), as
in every other view. Registered here for each type: text = the object's own ``to_text``, html =
the functions above, widget = EvalWidget (eval_widget.py, imported when built).
"""

from __future__ import annotations

import json
import math
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.markup import escape
from selfrag_nb.eval.calibrate import SWEEP_COLUMNS, Calibration
from selfrag_nb.eval.regression import RegressionDiff
from selfrag_nb.eval.report import EvalReport, format_metric

__all__ = ["EVAL_CSS", "calibration_html", "regression_html", "report_html"]

# Columns of the summary shown in the static view (the rest stay in .summary).
_SHOWN = (
    "n",
    "outcome_accuracy",
    "decision_accuracy",
    "recall_at_k",
    "mrr",
    "grading_precision",
    "grading_recall",
    "correct_refusals",
    "wrong_refusals",
    "unsupported_answers",
    "citation_errors",
    "must_include_hit_rate",
    "secret_leaks",
    "latency_p50_ms",
    "latency_p95_ms",
    "cost",
    "failures",
)

EVAL_CSS = """
.selfrag-eval{font-family:system-ui,-apple-system,sans-serif;font-size:13px;color:#222}
.selfrag-eval table{border-collapse:collapse;margin:6px 0 12px}
.selfrag-eval th,.selfrag-eval td{border:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:top}
.selfrag-eval th{background:#f4f4f4}
.selfrag-eval td.t{text-align:left;max-width:420px;overflow-wrap:anywhere}
.selfrag-eval tr.all td{font-weight:600;background:#fafafa}
.selfrag-eval .bar{display:inline-block;height:8px;background:#4c78a8;margin-right:4px;vertical-align:middle}
.selfrag-eval .muted{color:#777}
"""


def _cell(name: str, v: Any) -> str:
    text = escape(format_metric(name, v))
    rate = name in ("outcome_accuracy", "decision_accuracy", "recall_at_k", "mrr") or name.endswith(
        ("_rate", "_precision", "_recall", "preservation")
    )
    if rate and isinstance(v, (int, float)) and not math.isnan(v):
        # A CSS bar, not a script: the static view stays inert.
        return f'<td><span class="bar" style="width:{round(40 * float(v))}px"></span>{text}</td>'
    return f"<td>{text}</td>"


# ------------------------------------------------------------------ report


def _summary_html(report: EvalReport) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in ("variant", "category", *_SHOWN))
    body = []
    for rec in report.summary_records():
        cls = ' class="all"' if rec["category"] == "all" else ""
        cells = f'<td class="t">{escape(rec["variant"])}</td><td class="t">{escape(rec["category"])}</td>'
        cells += "".join(_cell(c, rec[c]) for c in _SHOWN)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _variants_html(report: EvalReport) -> str:
    rows = "".join(
        f'<tr><td class="t">{escape(n)}</td><td class="t">{escape(json.dumps(ov, sort_keys=True))}</td>'
        f'<td class="t">{escape(report.config_versions.get(n, ""))}</td></tr>'
        for n, ov in report.variants.items()
    )
    return (
        "<table><thead><tr><th>variant</th><th>overrides</th><th>config version</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _failures_html(report: EvalReport, limit: int = 200) -> str:
    failing = [r for r in report.rows if r.failed_checks]
    if not failing:
        return "<p>No failing rows.</p>"
    head = "".join(
        f"<th>{escape(c)}</th>"
        for c in (
            "variant",
            "id",
            "category",
            "question",
            "outcome",
            "failure reason",
            "evidence",
            "config",
        )
    )
    body = []
    for r in failing[:limit]:
        vals = (
            r.variant,
            r.id,
            r.category,
            r.question,
            r.outcome or "-",
            r.failure_reason or "",
            ", ".join(r.evidence[:5]) + (" ..." if len(r.evidence) > 5 else ""),
            r.config_version,
        )
        body.append("<tr>" + "".join(f'<td class="t">{escape(str(v))}</td>' for v in vals) + "</tr>")
    more = f'<p class="muted">{len(failing) - limit} more in .failures</p>' if len(failing) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def report_html(report: EvalReport, *, charts: bool = False) -> str:
    """Static HTML: what ran, the summary, the failures. ``charts=True``
    adds plotly charts (with scripts; used by ``save``)."""
    qd = report.questions.describe()
    parts = [
        f'<div class="selfrag-eval"><style>{EVAL_CSS}</style>',
        f"<h3>Evaluation: {len(report._variant_order())} variant(s) on {escape(str(qd['name']))}</h3>",
        f'<p class="muted">{qd["count"]} questions, set hash {escape(str(qd["hash"]))}, '
        f"recall@{report.k}, {len(report.rows)} rows, {report.seconds:.1f} s"
        + (f", rows in {escape(str(report.out))}" if report.out else "")
        + "</p>",
        "<h4>Variants</h4>",
        _variants_html(report),
        "<h4>Summary by variant and category</h4>",
        _summary_html(report),
    ]
    if charts and report.rows:
        from selfrag_nb.eval import charts as ch

        summary = report.summary
        figs = [
            ch.metric_bars(summary, "outcome_accuracy"),
            ch.metric_bars(summary, "recall_at_k"),
            ch.refusal_bars(summary),
            ch.latency_box(report.table),
        ]
        if report.calibration is not None:
            figs.append(report.calibration.chart())
        parts.append("<h4>Charts</h4>")
        parts.extend(f"<div>{frag}</div>" for frag in ch.figures_html(figs))
    if report.calibration is not None:
        parts.append("<h4>Calibration</h4>")
        parts.append(calibration_html(report.calibration, embedded=True))
    parts.append(f"<h4>Failures ({sum(1 for r in report.rows if r.failed_checks)})</h4>")
    parts.append(_failures_html(report))
    parts.append("</div>")
    return "".join(parts)


# ------------------------------------------------------------------ calibration


def calibration_html(cal: Calibration, *, embedded: bool = False) -> str:
    """Static HTML (no script): the sweep table with the suggestion marked."""
    head = "".join(f"<th>{escape(c)}</th>" for c in SWEEP_COLUMNS)
    body = []
    for r in cal.rows:
        mark = ' style="font-weight:600;background:#eef5ff"' if r["value"] == cal.suggested else ""
        cells = "".join(
            f"<td>{escape('n/a' if r[c] is None else (f'{r[c]:.3f}' if isinstance(r[c], float) else str(r[c])))}</td>"
            for c in SWEEP_COLUMNS
        )
        body.append(f"<tr{mark}>{cells}</tr>")
    c = cal.chosen_on
    text = (
        f"<p>Suggested <b>{escape(cal.param)} = {cal.suggested}</b> (article default {cal.default}); "
        "score = correct refusals - wrong refusals - unsupported answers, ties go to the default. "
        f"Chosen on <b>{escape(c['name'])}</b>: {escape(c['count'])} questions, hash {escape(c['hash'])}"
        + (f", {escape(c['path'])}" if c.get("path") else "")
        + ". Re-calibrate when the question set, corpus or models change.</p>"
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    if embedded:
        return text + table
    return f'<div class="selfrag-eval"><style>{EVAL_CSS}</style><h4>Calibration</h4>{text}{table}</div>'


# ------------------------------------------------------------------ regression


def regression_html(diff: RegressionDiff) -> str:
    """Static HTML (no script): counts, then one table per status."""
    parts = [
        '<div class="selfrag-regression">',
        f"<p><b>{len(diff.fixed)}</b> fixed, <b>{len(diff.still_failing)}</b> still failing, "
        f"<b>{len(diff.broke)}</b> broke, {diff.unchanged_passing} passing before and after.</p>",
    ]
    for title, items in (
        ("Broke", diff.broke),
        ("Still failing", diff.still_failing),
        ("Fixed", diff.fixed),
    ):
        if not items:
            continue
        parts.append(
            f"<details{' open' if title == 'Broke' else ''}><summary>{title} ({len(items)})</summary>"
        )
        parts.append(
            "<table><thead><tr><th>variant</th><th>id</th><th>category</th><th>question</th>"
            "<th>before</th><th>after</th></tr></thead><tbody>"
        )
        for e in items:
            parts.append(
                "<tr>"
                + "".join(
                    f"<td>{escape(str(e[c]))}</td>"
                    for c in ("variant", "id", "category", "question", "before", "after")
                )
                + "</tr>"
            )
        parts.append("</tbody></table></details>")
    parts.append("</div>")
    return "".join(parts)


# ------------------------------------------------------------------ registration


def _eval_widget(obj: object) -> Any:
    from selfrag_nb.display.eval_widget import EvalWidget

    return EvalWidget(obj)


faces.register(EvalReport, text=EvalReport.to_text, html=report_html, widget=_eval_widget)
faces.register(Calibration, text=Calibration.to_text, html=calibration_html, widget=_eval_widget)
faces.register(RegressionDiff, text=RegressionDiff.to_text, html=regression_html, widget=_eval_widget)
