"""EvalReport: the measured rows of one evaluation and their views.

    EvalReport(rows, variants, config_versions, questions, k)
      .table      one row per variant x question (pandas)
      .summary    variant x category metrics + an "all" row per variant
      .failures   failing rows: question, category, candidate evidence ids,
                  config version, failure reason
      .failures_as_questions() / .rerun_failures(rag2) -> RegressionDiff
      .save("report.html")   self-contained: tables + plotly charts (JS inlined)
      ._repr_mimebundle_     static HTML (no script) + text/plain (+ EvalWidget in a kernel)
      .to_json() / EvalReport.load(path_or_json)

Numbers are computed by ``selfrag_nb.eval.metrics`` only; this module
arranges and renders them. Variants are listed in the order they ran, and
categories in question-set order, so two reports line up.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb.display.html import neutralize
from selfrag_nb.eval.metrics import METRICS, EvalRow, summarize
from selfrag_nb.eval.questions import Question, QuestionSet

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.eval.calibrate import Calibration
    from selfrag_nb.eval.regression import RegressionDiff

__all__ = ["EvalReport"]

_FORMAT = "selfrag_nb.eval.report/1"

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

_CSS = """
.selfrag-eval{font-family:system-ui,-apple-system,sans-serif;font-size:13px;color:#222}
.selfrag-eval table{border-collapse:collapse;margin:6px 0 12px}
.selfrag-eval th,.selfrag-eval td{border:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:top}
.selfrag-eval th{background:#f4f4f4}
.selfrag-eval td.t{text-align:left;max-width:420px;overflow-wrap:anywhere}
.selfrag-eval tr.all td{font-weight:600;background:#fafafa}
.selfrag-eval .bar{display:inline-block;height:8px;background:#4c78a8;margin-right:4px;vertical-align:middle}
.selfrag-eval .muted{color:#777}
"""


def _esc(text: str) -> str:
    """Escaped, with bidi and zero-width characters made visible (as the trace
    views do): a question set must not reorder or hide what the report shows."""
    return neutralize(html.escape(text))


def _fmt(name: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if name == "cost":
        return f"${float(v):.6f}"
    if name.endswith("_ms"):
        return f"{float(v):.0f}"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _cell(name: str, v: Any) -> str:
    text = _esc(_fmt(name, v))
    rate = name in ("outcome_accuracy", "decision_accuracy", "recall_at_k", "mrr") or name.endswith(
        ("_rate", "_precision", "_recall", "preservation")
    )
    if rate and isinstance(v, (int, float)) and not math.isnan(v):
        # A CSS bar, not a script: the static view stays inert.
        return f'<td><span class="bar" style="width:{round(40 * float(v))}px"></span>{text}</td>'
    return f"<td>{text}</td>"


class EvalReport:
    """Rows of one run plus what they were measured on."""

    def __init__(
        self,
        rows: Sequence[EvalRow],
        *,
        variants: Mapping[str, Mapping[str, Any]],
        config_versions: Mapping[str, str] | None = None,
        questions: QuestionSet | None = None,
        k: int = 10,
        out: str | Path | None = None,
        seconds: float = 0.0,
    ) -> None:
        self.rows: list[EvalRow] = list(rows)
        self.variants: dict[str, dict[str, Any]] = {n: dict(v) for n, v in variants.items()}
        self.config_versions: dict[str, str] = dict(config_versions or {})
        self.questions: QuestionSet = (
            questions if questions is not None else QuestionSet([], name="questions")
        )
        self.k = k
        self.out = Path(out) if out is not None else None
        self.seconds = seconds
        #: Set by ``calibrate``: its curve is drawn in ``save``'s HTML.
        self.calibration: Calibration | None = None

    # ------------------------------------------------------------ tables

    @property
    def table(self) -> pd.DataFrame:
        """One row per (variant, question): every field of ``EvalRow``."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.rows], columns=list(EvalRow.model_fields))

    def _groups(self) -> list[tuple[str, str, list[EvalRow]]]:
        cats = list(self.questions.categories) if len(self.questions) else []
        cats += [c for c in dict.fromkeys(r.category for r in self.rows) if c not in cats]
        groups = []
        for variant in self._variant_order():
            vrows = [r for r in self.rows if r.variant == variant]
            for cat in cats:
                crow = [r for r in vrows if r.category == cat]
                if crow:
                    groups.append((variant, cat, crow))
            groups.append((variant, "all", vrows))
        return groups

    def _variant_order(self) -> list[str]:
        names = list(self.variants)
        return names + [v for v in dict.fromkeys(r.variant for r in self.rows) if v not in names]

    def summary_records(self) -> list[dict[str, Any]]:
        """The summary as plain dicts (variant, category, n, every metric)."""
        return [{"variant": v, "category": c, **summarize(rows)} for v, c, rows in self._groups()]

    @property
    def summary(self) -> pd.DataFrame:
        """Metrics per variant x category, plus an "all" row per variant."""
        import pandas as pd

        return pd.DataFrame(self.summary_records(), columns=["variant", "category", "n", *METRICS])

    def overall(self, variant: str | None = None) -> dict[str, Any]:
        """The "all" metrics of one variant (the only one when None)."""
        names = self._variant_order()
        if variant is None:
            if len(names) != 1:
                raise ValueError(f"several variants ran ({names}); name one")
            variant = names[0]
        if variant not in names:
            raise KeyError(f"unknown variant {variant!r}; variants: {names}")
        return summarize([r for r in self.rows if r.variant == variant])

    @property
    def failures(self) -> pd.DataFrame:
        """Failing rows: variant, id, category, question, outcome, expected,
        candidate evidence ids, config version, failure reason, failed checks."""
        from selfrag_nb.eval.regression import failures_frame

        return failures_frame(self.rows, self.questions)

    def failures_as_questions(self) -> QuestionSet:
        """The questions that failed in any variant, each once, for a re-run."""
        failed = {r.id for r in self.rows if r.failed_checks}
        items: list[Question] = [q for q in self.questions if q.id in failed]
        return QuestionSet(items, name=f"{self.questions.name} failures", path=self.questions.path)

    def rerun_failures(self, rag: Any, variants: Any = None, **kwargs: Any) -> RegressionDiff:
        """Re-run only the failed questions against ``rag`` (each variant's
        overrides applied again unless ``variants`` is given) and compare with
        this run: what got fixed, what still fails, what broke. ``kwargs`` go
        to ``evaluate`` (concurrency, progress, out...)."""
        from selfrag_nb.eval.regression import RegressionDiff
        from selfrag_nb.eval.runner import evaluate

        qs = self.failures_as_questions()
        if not len(qs):
            return RegressionDiff(self.rows, [])
        after = evaluate(rag, qs, self.variants if variants is None else variants, **kwargs)
        return RegressionDiff(self.rows, after.rows)

    # ------------------------------------------------------------ views

    def to_text(self) -> str:
        """Plain-text summary: one line per variant."""
        n_q = len({r.id for r in self.rows})
        lines = [
            f"EvalReport: {len(self._variant_order())} variant(s) x {n_q} question(s) "
            f"on {self.questions.name!r}, {sum(1 for r in self.rows if r.failed_checks)} failing row(s)"
        ]
        for rec in self.summary_records():
            if rec["category"] != "all":
                continue
            lines.append(
                f"  {rec['variant']}: outcome {_fmt('r', rec['outcome_accuracy'])}, "
                f"decision {_fmt('r', rec['decision_accuracy'])}, recall@{self.k} {_fmt('r', rec['recall_at_k'])}, "
                f"correct refusals {rec['correct_refusals']}, wrong refusals {rec['wrong_refusals']}, "
                f"unsupported {rec['unsupported_answers']}, citation errors {rec['citation_errors']}, "
                f"p50 {_fmt('_ms', rec['latency_p50_ms'])} ms, p95 {_fmt('_ms', rec['latency_p95_ms'])} ms, "
                f"cost {_fmt('cost', rec['cost'])}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _summary_html(self) -> str:
        head = "".join(f"<th>{_esc(c)}</th>" for c in ("variant", "category", *_SHOWN))
        body = []
        for rec in self.summary_records():
            cls = ' class="all"' if rec["category"] == "all" else ""
            cells = f'<td class="t">{_esc(rec["variant"])}</td><td class="t">{_esc(rec["category"])}</td>'
            cells += "".join(_cell(c, rec[c]) for c in _SHOWN)
            body.append(f"<tr{cls}>{cells}</tr>")
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"

    def _variants_html(self) -> str:
        rows = "".join(
            f'<tr><td class="t">{_esc(n)}</td><td class="t">{_esc(json.dumps(ov, sort_keys=True))}</td>'
            f'<td class="t">{_esc(self.config_versions.get(n, ""))}</td></tr>'
            for n, ov in self.variants.items()
        )
        return (
            "<table><thead><tr><th>variant</th><th>overrides</th><th>config version</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )

    def _failures_html(self, limit: int = 200) -> str:
        failing = [r for r in self.rows if r.failed_checks]
        if not failing:
            return "<p>No failing rows.</p>"
        head = "".join(
            f"<th>{c}</th>"
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
            body.append("<tr>" + "".join(f'<td class="t">{_esc(str(v))}</td>' for v in vals) + "</tr>")
        more = (
            f'<p class="muted">{len(failing) - limit} more in .failures</p>' if len(failing) > limit else ""
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"

    def to_html(self, *, charts: bool = False) -> str:
        """Static HTML: what ran, the summary, the failures. ``charts=True``
        adds plotly charts (with scripts; used by ``save``)."""
        qd = self.questions.describe()
        parts = [
            f'<div class="selfrag-eval"><style>{_CSS}</style>',
            f"<h3>Evaluation: {len(self._variant_order())} variant(s) on {_esc(str(qd['name']))}</h3>",
            f'<p class="muted">{qd["count"]} questions, set hash {_esc(str(qd["hash"]))}, '
            f"recall@{self.k}, {len(self.rows)} rows, {self.seconds:.1f} s"
            + (f", rows in {_esc(str(self.out))}" if self.out else "")
            + "</p>",
            "<h4>Variants</h4>",
            self._variants_html(),
            "<h4>Summary by variant and category</h4>",
            self._summary_html(),
        ]
        if charts and self.rows:
            from selfrag_nb.eval import charts as ch

            summary = self.summary
            figs = [
                ch.metric_bars(summary, "outcome_accuracy"),
                ch.metric_bars(summary, "recall_at_k"),
                ch.refusal_bars(summary),
                ch.latency_box(self.table),
            ]
            if self.calibration is not None:
                figs.append(self.calibration.chart())
            parts.append("<h4>Charts</h4>")
            parts.extend(f"<div>{frag}</div>" for frag in ch.figures_html(figs))
        if self.calibration is not None:
            parts.append("<h4>Calibration</h4>")
            parts.append(self.calibration.to_html(embedded=True))
        parts.append(f"<h4>Failures ({sum(1 for r in self.rows if r.failed_checks)})</h4>")
        parts.append(self._failures_html())
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # text/plain + static HTML always; the EvalWidget view only inside a kernel.
        from selfrag_nb.display.eval_widget import eval_mimebundle

        return eval_mimebundle(self)

    def _display_(self) -> Any:
        """marimo: the EvalWidget (``mo.ui.anywidget``) when marimo runs the cell."""
        from selfrag_nb.display.eval_widget import eval_marimo_view

        return eval_marimo_view(self)

    def save(self, path: str | Path) -> Path:
        """Write ``.html`` (self-contained page with charts, plotly.js inlined)
        or ``.json`` (``to_json``)."""
        p = Path(path)
        if p.suffix.lower() == ".json":
            p.write_text(self.to_json(), encoding="utf-8")
            return p
        if p.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"{p}: save writes .html or .json")
        page = (
            '<!DOCTYPE html><html><head><meta charset="utf-8"><title>selfrag_nb evaluation</title></head>'
            f"<body>{self.to_html(charts=True)}</body></html>"
        )
        p.write_text(page, encoding="utf-8")
        return p

    # ------------------------------------------------------------ persistence

    def to_json(self, indent: int | None = None) -> str:
        """Everything needed to rebuild the report (rows, variants, questions)."""
        data = {
            "format": _FORMAT,
            "variants": self.variants,
            "config_versions": self.config_versions,
            "question_set": {"name": self.questions.name, "path": self.questions.path},
            "questions": [q.to_record() for q in self.questions],
            "k": self.k,
            "seconds": self.seconds,
            "out": str(self.out) if self.out else None,
            "rows": [r.model_dump(mode="json") for r in self.rows],
        }
        return json.dumps(data, ensure_ascii=False, indent=indent)

    @classmethod
    def load(cls, source: str | Path) -> EvalReport:
        """Rebuild from ``to_json`` text or a file holding it."""
        text = str(source)
        if not text.lstrip().startswith("{"):
            text = Path(source).read_text(encoding="utf-8")
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"not an EvalReport JSON (format {_FORMAT!r} expected)")
        qmeta = data.get("question_set") or {}
        qs = QuestionSet.from_records(data.get("questions") or [], name=str(qmeta.get("name", "questions")))
        qs.path = str(qmeta.get("path", ""))
        return cls(
            [EvalRow.model_validate(r) for r in data["rows"]],
            variants=data.get("variants") or {},
            config_versions=data.get("config_versions") or {},
            questions=qs,
            k=int(data.get("k", 10)),
            out=data.get("out"),
            seconds=float(data.get("seconds", 0.0)),
        )
