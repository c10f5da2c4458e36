"""Static HTML of evaluation results (no script; scripts only in ``save``'s charts).

    EvalReport     -> report_html(report, charts=False)
                        what ran (set, hash, k, rows) | variants | summary by
                        variant x category (CSS bars for rates) | [plotly charts:
                        charts=True, used by report.save] | calibration |
                        where the variants disagree | per model role | failures
    Calibration    -> calibration_html(cal, embedded=False)
                        the suggestion, the set it was chosen on, the sweep table
    RegressionDiff -> regression_html(diff)
                        counts, then one folded table per status (broke first)

Every text goes through ``markup.escape`` (controls shown as ⟨U+XXXX⟩), as
in every other view. Layout rules, for JupyterLab and a saved page alike:
the root carries ``tex2jax_ignore mathjax_ignore`` (MathJax would typeset
"$0 ... $0" as math), every table sits in a wrapper that scrolls sideways
inside the output (the page never grows past its width), cells are
left-aligned (JupyterLab right-aligns by default), and ids break only after
a separator (``_id``: <wbr> after - _ / . : # @ +, long ones cut with "…" and
the whole id on hover), never mid-word. Registered here for each type: text = the object's own ``to_text``, html =
the functions above, widget = EvalWidget (eval_widget.py, imported when built).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.markup import escape
from selfrag_nb.eval.calibrate import SWEEP_COLUMNS, Calibration
from selfrag_nb.eval.regression import RegressionDiff
from selfrag_nb.eval.report import EvalReport, format_metric

__all__ = [
    "EVAL_CSS",
    "ROOT_CLASS",
    "calibration_html",
    "disagreement_kind",
    "regression_html",
    "report_html",
]

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

#: Class of every root element: MathJax (JupyterLab, Notebook) leaves it alone.
ROOT_CLASS = "tex2jax_ignore mathjax_ignore"

# ``div.selfrag-eval`` outranks JupyterLab's ``.jp-RenderedHTMLCommon td``
# (right-aligned, fixed layout, centred tables).
EVAL_CSS = """
div.selfrag-eval{font-family:system-ui,-apple-system,sans-serif;font-size:13px;color:#222;max-width:100%;box-sizing:border-box}
div.selfrag-eval .tbl{max-width:100%;overflow-x:auto;margin:6px 0 12px}
div.selfrag-eval table{border-collapse:collapse;margin:0;table-layout:auto;width:auto}
div.selfrag-eval table th,div.selfrag-eval table td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
div.selfrag-eval table th{background:#f4f4f4;font-weight:600;white-space:normal;min-width:3.5em}
div.selfrag-eval table td.n{font-variant-numeric:tabular-nums;white-space:nowrap}
div.selfrag-eval table td.t{max-width:360px;overflow-wrap:break-word;word-break:normal}
div.selfrag-eval .id{font-family:ui-monospace,monospace;font-size:12px;overflow-wrap:normal;word-break:normal}
div.selfrag-eval tr.all td{font-weight:600;background:#fafafa}
div.selfrag-eval .bar{display:inline-block;height:8px;background:#4c78a8;margin-right:4px;vertical-align:middle}
div.selfrag-eval .muted{color:#777}
"""

_SEP = re.compile(r"([-_/.:#@+])")


def _id(text: object, limit: int = 48) -> str:
    """An id that wraps only after a separator (<wbr>), never mid-word; longer
    than ``limit``: cut with "…", the whole id in the tooltip."""
    full = str(text)
    shown = full if len(full) <= limit else full[: limit - 1] + "…"
    parts = [p for p in _SEP.split(shown) if p]
    # no break after a leading separator ("+rewrite" stays whole)
    body = "".join(escape(p) + ("<wbr>" if i and _SEP.fullmatch(p) else "") for i, p in enumerate(parts))
    return f'<span class="id" title="{escape(full)}">{body}</span>'


def _table(head: str, body: str) -> str:
    """A table in a wrapper that scrolls sideways inside the output."""
    return f'<div class="tbl"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _cell(name: str, v: Any) -> str:
    text = escape(format_metric(name, v))
    rate = name in ("outcome_accuracy", "decision_accuracy", "recall_at_k", "mrr") or name.endswith(
        ("_rate", "_precision", "_recall", "preservation")
    )
    if rate and isinstance(v, (int, float)) and not math.isnan(v):
        # A CSS bar, not a script: the static view stays inert.
        return f'<td class="n"><span class="bar" style="width:{round(40 * float(v))}px"></span>{text}</td>'
    return f'<td class="n">{text}</td>'


# ------------------------------------------------------------------ report


def _summary_html(report: EvalReport) -> str:
    # Labels with spaces, not underscores: the header wraps, the table stays narrow.
    head = "".join(f"<th>{escape(c.replace('_', ' '))}</th>" for c in ("variant", "category", *_SHOWN))
    body = []
    for rec in report.summary_records():
        cls = ' class="all"' if rec["category"] == "all" else ""
        cells = f'<td class="t">{_id(rec["variant"])}</td><td class="t">{escape(rec["category"])}</td>'
        cells += "".join(_cell(c, rec[c]) for c in _SHOWN)
        body.append(f"<tr{cls}>{cells}</tr>")
    return _table(head, "".join(body))


def _variants_html(report: EvalReport) -> str:
    rows = "".join(
        f'<tr><td class="t">{_id(n)}</td><td class="t">{escape(json.dumps(ov, sort_keys=True))}</td>'
        f'<td class="t">{_id(report.config_versions.get(n, ""))}</td></tr>'
        for n, ov in report.variants.items()
    )
    return _table("<th>variant</th><th>overrides</th><th>config version</th>", rows)


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
        evidence = ", ".join(_id(e, 32) for e in r.evidence[:5]) + (" ..." if len(r.evidence) > 5 else "")
        cells = (
            _id(r.variant),
            _id(r.id),
            escape(r.category),
            escape(r.question),
            escape(r.outcome or "-"),
            escape(r.failure_reason or ""),
            evidence,
            _id(r.config_version, 16),
        )
        body.append("<tr>" + "".join(f'<td class="t">{c}</td>' for c in cells) + "</tr>")
    more = f'<p class="muted">{len(failing) - limit} more in .failures</p>' if len(failing) > limit else ""
    return _table(head, "".join(body)) + more


def _roles_html(report: EvalReport) -> str:
    """Per variant and model role: tokens, dollars, mean latency per question."""
    body = []
    for rec in report.role_records():
        cells = [
            f'<td class="t">{_id(rec["variant"])}</td>',
            f'<td class="t">{escape(rec["role"])}</td>',
            f'<td class="n">{escape(format_metric("tokens_in", rec["tokens_in"]))}</td>',
            f'<td class="n">{escape(format_metric("tokens_out", rec["tokens_out"]))}</td>',
            f'<td class="n">{escape(format_metric("cost", rec["cost"]))}</td>',
            f'<td class="n">{escape(format_metric("latency_ms", rec["latency_ms"]))}</td>',
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(
        f"<th>{c}</th>" for c in ("variant", "role", "tokens in", "tokens out", "cost", "ms per question")
    )
    return _table(head, "".join(body))


def _disagreements_html(report: EvalReport, limit: int = 200) -> str:
    """The questions where the variants ended differently or kept different evidence."""
    variants = report._variant_order()
    rows = [a for a in report.agreement_records() if not a["agree"]]
    if not rows:
        return "<p>Every variant ended the same way with the same evidence on every question.</p>"
    head = "".join(f"<th>{escape(c)}</th>" for c in ("id", "category", "question", "differs in"))
    head += "".join(f"<th>{_id(v)}</th>" for v in variants)
    body = []
    for a in rows[:limit]:
        cells = [
            f'<td class="t">{_id(a["id"])}</td>',
            f'<td class="t">{escape(a["category"])}</td>',
            f'<td class="t">{escape(a["question"])}</td>',
            f'<td class="t">{escape(disagreement_kind(a))}</td>',
        ]
        for v in variants:
            kept = a["kept"][v]
            shown = "not run" if kept is None else f"{a['outcomes'][v] or '-'} · {len(kept)} kept"
            cells.append(f'<td class="t">{escape(shown)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="muted">{len(rows) - limit} more in .disagreements</p>' if len(rows) > limit else ""
    return _table(head, "".join(body)) + more


def disagreement_kind(a: dict[str, Any]) -> str:
    """What differs on one agreement record, in words (views and tests share it)."""
    parts = [w for w, same in (("outcome", a["same_outcome"]), ("kept evidence", a["same_kept"])) if not same]
    return " and ".join(parts)


def report_html(report: EvalReport, *, charts: bool = False) -> str:
    """Static HTML: what ran, the summary, the failures. ``charts=True``
    adds plotly charts (with scripts; used by ``save``)."""
    qd = report.questions.describe()
    parts = [
        f'<div class="selfrag-eval {ROOT_CLASS}"><style>{EVAL_CSS}</style>',
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
    if len(report._variant_order()) > 1 and report.rows:
        agree = report.agreement_records()
        n_off = sum(not a["agree"] for a in agree)
        parts.append(f"<h4>Where the variants disagree ({n_off} of {len(agree)} questions)</h4>")
        parts.append(_disagreements_html(report))
    if report.role_records():
        parts.append("<h4>Per model role</h4>")
        parts.append(_roles_html(report))
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
            f'<td class="n">{escape("n/a" if r[c] is None else (f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c])))}</td>'
            for c in SWEEP_COLUMNS
        )
        body.append(f"<tr{mark}>{cells}</tr>")
    c = cal.chosen_on
    text = (
        f"<p>Suggested <b>{escape(cal.param)} = {cal.suggested}</b> (default {cal.default}); "
        "score = correct refusals - wrong refusals - unsupported answers, ties go to the default. "
        f"Chosen on <b>{escape(c['name'])}</b>: {escape(c['count'])} questions, hash {escape(c['hash'])}"
        + (f", {escape(c['path'])}" if c.get("path") else "")
        + ". Re-calibrate when the question set, corpus or models change.</p>"
    )
    table = _table(head, "".join(body))
    if embedded:
        return text + table
    return f'<div class="selfrag-eval {ROOT_CLASS}"><style>{EVAL_CSS}</style><h4>Calibration</h4>{text}{table}</div>'


# ------------------------------------------------------------------ regression


def regression_html(diff: RegressionDiff) -> str:
    """Static HTML (no script): counts, then one table per status."""
    parts = [
        f'<div class="selfrag-eval selfrag-regression {ROOT_CLASS}"><style>{EVAL_CSS}</style>',
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
        head = "".join(f"<th>{c}</th>" for c in ("variant", "id", "category", "question", "before", "after"))
        body = "".join(
            f'<tr><td class="t">{_id(e["variant"])}</td><td class="t">{_id(e["id"])}</td>'
            + "".join(
                f'<td class="t">{escape(str(e[c]))}</td>' for c in ("category", "question", "before", "after")
            )
            + "</tr>"
            for e in items
        )
        parts.append(_table(head, body) + "</details>")
    parts.append("</div>")
    return "".join(parts)


# ------------------------------------------------------------------ registration


def _eval_widget(obj: object) -> Any:
    from selfrag_nb.display.eval_widget import EvalWidget

    return EvalWidget(obj)


faces.register(EvalReport, text=EvalReport.to_text, html=report_html, widget=_eval_widget)
faces.register(Calibration, text=Calibration.to_text, html=calibration_html, widget=_eval_widget)
faces.register(RegressionDiff, text=RegressionDiff.to_text, html=regression_html, widget=_eval_widget)
