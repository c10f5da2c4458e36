"""EvalReport: the measured rows of one evaluation and their views.

    EvalReport(rows, variants, config_versions, questions, k)
      .table      one row per variant x question (pandas); per-role columns
                  {role}_tokens_in / _tokens_out / _cost / _latency_ms
      .summary    variant x category metrics + an "all" row per variant,
                  then the per-role columns (eval/variants.py role_summary)
      .agreement  per question: same outcome / same kept evidence in every variant
      .disagreements   the questions where the variants differ
      .failures   failing rows: question, category, outcome and its reason_kind,
                  candidate evidence named by file (the chunk ids stay in the rows),
                  config version, failure reason
      .failures_as_questions() / .rerun_failures(rag2) -> RegressionDiff
      .save("report.html")   self-contained: the static view, SVG charts, no script
      .to_html() / ._repr_mimebundle_ / ._display_   through Displayable: static HTML
                  (no script, display/eval_html.py) + text/plain (+ EvalWidget in a kernel)
      .to_json() / EvalReport.load(path_or_json)

Numbers are computed by ``selfrag_nb.eval.metrics`` only; this module
arranges them (and writes the text summary); ``selfrag_nb.display`` renders them. Variants are listed in the order they ran, and
categories in question-set order, so two reports line up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb._displayable import Displayable
from selfrag_nb._displayable import html as render_html
from selfrag_nb.errors import InputError, NotFoundError
from selfrag_nb.eval.metrics import METRICS, EvalRow, summarize
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.formats import fmt_cost, fmt_tokens

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.eval.calibrate import Calibration
    from selfrag_nb.eval.regression import RegressionDiff

__all__ = ["EvalReport", "format_metric"]

_FORMAT = "selfrag_nb.eval.report/1"


def format_metric(name: str, v: Any) -> str:
    """A metric value as text: n/a, dollars and tokens as every view shows them
    (selfrag_nb.formats), whole milliseconds, 3 decimals, counts with separators."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if name == "cost":
        return fmt_cost(float(v))
    if name.startswith("tokens_"):
        return fmt_tokens(float(v))
    if name.endswith("_ms"):
        return f"{float(v):,.0f}"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


class EvalReport(Displayable):
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
        """One row per (variant, question): every field of ``EvalRow``, then
        the per-role fields spread into ``{role}_tokens_in``, ``_tokens_out``,
        ``_cost`` and ``_latency_ms`` columns (empty where a role made no call)."""
        import pandas as pd

        roles = list(dict.fromkeys(role for r in self.rows for role in r.role_tokens_in))
        records = []
        for r in self.rows:
            rec = r.model_dump()
            for role in roles:
                rec[f"{role}_tokens_in"] = r.role_tokens_in.get(role)
                rec[f"{role}_tokens_out"] = r.role_tokens_out.get(role)
                rec[f"{role}_cost"] = r.role_cost.get(role)
                rec[f"{role}_latency_ms"] = r.role_latency_ms.get(role)
            records.append(rec)
        spread = [f"{role}_{m}" for role in roles for m in ("tokens_in", "tokens_out", "cost", "latency_ms")]
        return pd.DataFrame(records, columns=[*EvalRow.model_fields, *spread])

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
        """The summary as plain dicts (variant, category, n, every metric,
        then the per-role tokens, cost and mean latency)."""
        from selfrag_nb.eval.attribution_eval import attribution_summary
        from selfrag_nb.eval.variants import role_summary

        return [
            {
                "variant": v,
                "category": c,
                **summarize(rows),
                **role_summary(rows),
                **attribution_summary(rows),
            }
            for v, c, rows in self._groups()
        ]

    @property
    def summary(self) -> pd.DataFrame:
        """Metrics per variant x category, plus an "all" row per variant,
        then the per-role columns."""
        import pandas as pd

        records = self.summary_records()
        fixed = ["variant", "category", "n", *METRICS]
        extra = list(dict.fromkeys(k for rec in records for k in rec if k not in fixed))
        return pd.DataFrame(records, columns=[*fixed, *extra])

    def agreement_records(self) -> list[dict[str, Any]]:
        """Per question: each variant's outcome and kept evidence (chunk ids),
        ``same_outcome``, ``same_kept`` and ``agree`` (both)."""
        from selfrag_nb.eval.variants import agreement

        return agreement(self.rows, self._variant_order())

    def role_records(self) -> list[dict[str, Any]]:
        """Per variant and model role (flow order): ``tokens_in``,
        ``tokens_out``, ``cost`` (None when a price is unknown) and
        ``latency_ms`` (mean per question that called the role)."""
        from selfrag_nb.eval.variants import role_summary
        from selfrag_nb.flow import ROLES

        out = []
        for v in self._variant_order():
            per = role_summary([r for r in self.rows if r.variant == v])
            roles = {k.rsplit("_tokens_in", 1)[0] for k in per if k.endswith("_tokens_in")}
            for role in sorted(roles, key=lambda r: (ROLES.index(r) if r in ROLES else 99, r)):
                out.append(
                    {
                        "variant": v,
                        "role": role,
                        **{m: per[f"{role}_{m}"] for m in ("tokens_in", "tokens_out", "cost", "latency_ms")},
                    }
                )
        return out

    @property
    def agreement(self) -> pd.DataFrame:
        """One row per question: id, category, question, same_outcome,
        same_kept, agree, then ``outcome:<variant>`` per variant."""
        import pandas as pd

        names = self._variant_order()
        records = [
            {
                **{k: rec[k] for k in ("id", "category", "question", "same_outcome", "same_kept", "agree")},
                **{f"outcome:{v}": rec["outcomes"][v] for v in names},
            }
            for rec in self.agreement_records()
        ]
        columns = ["id", "category", "question", "same_outcome", "same_kept", "agree"]
        return pd.DataFrame(records, columns=[*columns, *(f"outcome:{v}" for v in names)])

    @property
    def disagreements(self) -> pd.DataFrame:
        """The rows of ``agreement`` where the variants did not all agree."""
        table = self.agreement
        return table[~table["agree"].astype(bool)].reset_index(drop=True)

    def overall(self, variant: str | None = None) -> dict[str, Any]:
        """The "all" metrics of one variant (the only one when None)."""
        names = self._variant_order()
        if variant is None:
            if len(names) != 1:
                raise InputError(f"several variants ran ({names}); name one")
            variant = names[0]
        if variant not in names:
            raise NotFoundError(f"unknown variant {variant!r}; variants: {names}", key=variant)
        return summarize([r for r in self.rows if r.variant == variant])

    @property
    def failures(self) -> pd.DataFrame:
        """Failing rows: variant, id, category, question, outcome, reason_kind
        (the check that ended it), expected, candidate evidence, config version,
        failure reason, failed checks.
        ``evidence`` names each retrieved chunk by its document's file (what a
        person reads; a chunk id is a hash): the chunk ids stay in the rows
        (``EvalRow.evidence``, same order) and in ``write_failures``' file."""
        from selfrag_nb.eval.regression import failures_frame

        def file_name(source: str) -> str:  # display/names.py's rule: records never import display
            return source.rstrip("/").rsplit("/", 1)[-1] or source

        frame = failures_frame(self.rows, self.questions)
        failing = [r for r in self.rows if r.failed_checks]
        frame["evidence"] = [
            [
                file_name(r.retrieved[i]) if i < len(r.retrieved) and r.retrieved[i] else cid
                for i, cid in enumerate(r.evidence)
            ]
            for r in failing
        ]
        return frame

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

        piped = [n for n, v in self.variants.items() if "models" in v]
        if variants is None and piped:
            # the report keeps model names, not the models: rebuilding them from
            # names could call a different model than the one that ran
            raise InputError(
                f"variants {piped} compared models or pipelines; pass variants= again "
                "(the same {name: SelfRAG} or {name: {'models': ...}} given to evaluate)"
            )
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
                f"  {rec['variant']}: outcome {format_metric('r', rec['outcome_accuracy'])}, "
                f"decision {format_metric('r', rec['decision_accuracy'])}, recall@{self.k} {format_metric('r', rec['recall_at_k'])}, "
                f"correct refusals {rec['correct_refusals']}, wrong refusals {rec['wrong_refusals']}, "
                f"model errors {rec['model_errors']}, "
                f"unsupported {rec['unsupported_answers']}, citation errors {rec['citation_errors']}, "
                f"p50 {format_metric('_ms', rec['latency_p50_ms'])} ms, p95 {format_metric('_ms', rec['latency_p95_ms'])} ms, "
                f"cost {format_metric('cost', rec['cost'])}"
            )
        if len(self._variant_order()) > 1:
            agree = self.agreement_records()
            lines.append(
                f"  agreement: same outcome on {sum(a['same_outcome'] for a in agree)} of {len(agree)} "
                f"question(s), same kept evidence on {sum(a['same_kept'] for a in agree)}, "
                f"{sum(not a['agree'] for a in agree)} disagreement(s)"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def to_html(self, *, charts: bool = True) -> str:
        """Static HTML (no script): the report's view, its SVG charts included
        unless ``charts=False``."""
        return render_html(self, charts=charts)

    def save(self, path: str | Path) -> Path:
        """Write ``.html`` (a self-contained page: the view with its SVG charts,
        no script, opens offline) or ``.json`` (``to_json``). Plotly figures
        are there on request: ``selfrag_nb.eval.charts``."""
        p = Path(path)
        if p.suffix.lower() == ".json":
            p.write_text(self.to_json(), encoding="utf-8")
            return p
        if p.suffix.lower() not in (".html", ".htm"):
            raise InputError(f"{p}: save writes .html or .json")
        page = (
            '<!DOCTYPE html><html><head><meta charset="utf-8"><title>selfrag_nb evaluation</title></head>'
            f"<body>{self.to_html()}</body></html>"
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
            raise InputError(f"not an EvalReport JSON (format {_FORMAT!r} expected)")
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
