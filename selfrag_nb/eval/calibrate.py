"""Calibrate a refusal threshold on a fixed question set.

    calibrate(rag, questions, param="relevance_cutoff", values=30..90)
      values + the default + rag's own setting (always measured)
        -> variants {"relevance_cutoff=30": {...}, ...}   (one evaluate run)
      per value: correct refusals, wrong refusals, unsupported answers,
                 citation errors, outcome accuracy
      score = correct refusals - wrong refusals - unsupported answers
      suggested = best score; ties -> the default setting, else the value nearest it
    = Calibration (.table .suggested .chosen_on .chart() .to_html() .report)
      faces (text, static HTML, EvalWidget) through Displayable: display/eval_html.py

Refusal conditions are calibrated on a fixed question
set instead of treating one number (0.8) as a universal trust line; too high
a threshold throws away real evidence worded differently, too low lets
unsupported answers through. So the result always says on which set (name,
path, count, content hash) the value was chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb._displayable import Displayable
from selfrag_nb._displayable import html as render_html
from selfrag_nb._sync import run_sync
from selfrag_nb.errors import InputError
from selfrag_nb.eval.metrics import summarize
from selfrag_nb.eval.runner import as_question_set

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.eval.questions import Question, QuestionSet
    from selfrag_nb.eval.report import EvalReport

__all__ = ["CALIBRATABLE", "Calibration", "acalibrate", "calibrate"]

#: Thresholds that can be swept, and the paired setting that must move with
#: them to keep ``Settings`` consistent (cutoff <= high; disclaimer <= accept).
CALIBRATABLE: dict[str, tuple[str, str]] = {
    "relevance_cutoff": ("high_relevance", "raise"),
    "accept_confidence": ("disclaimer_confidence", "lower"),
}

#: Columns of a sweep, in the order tables and the widget show them.
SWEEP_COLUMNS = (
    "value",
    "n",
    "correct_refusals",
    "wrong_refusals",
    "unsupported_answers",
    "citation_errors",
    "outcome_accuracy",
    "score",
)


def _overrides(base: Any, param: str, value: int) -> dict[str, Any]:
    partner, direction = CALIBRATABLE[param]
    ov: dict[str, Any] = {param: value}
    current = getattr(base, partner)
    if (direction == "raise" and value > current) or (direction == "lower" and value < current):
        ov[partner] = value
    return ov


class Calibration(Displayable):
    """One threshold sweep: a row per value, the suggested value, and the
    question set it was chosen on."""

    def __init__(
        self,
        param: str,
        table_rows: list[dict[str, Any]],
        *,
        suggested: int,
        default: int,
        chosen_on: dict[str, Any],
        report: EvalReport | None = None,
    ) -> None:
        self.param = param
        self.rows = table_rows
        self.suggested = suggested
        self.default = default
        self.chosen_on = chosen_on
        self.report = report

    @property
    def table(self) -> pd.DataFrame:
        """value, n, correct/wrong refusals, unsupported answers, citation
        errors, outcome accuracy, score."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(SWEEP_COLUMNS))

    def chart(self) -> Any:
        """Plotly figure of the sweep."""
        from selfrag_nb.eval.charts import calibration_curve

        return calibration_curve(self.table, self.param, self.suggested, self.default)

    @property
    def tied(self) -> list[int]:
        """The other values that scored as well as the suggestion (the tie
        went to the default, else to the value nearest it)."""
        best = next(r["score"] for r in self.rows if r["value"] == self.suggested)
        return [r["value"] for r in self.rows if r["score"] == best and r["value"] != self.suggested]

    def to_text(self) -> str:
        c = self.chosen_on
        tied = f", tied with {', '.join(map(str, self.tied))}" if self.tied else ""
        return (
            f"Calibration of {self.param}: suggested {self.suggested} (default {self.default}{tied}), "
            f"chosen on {c['name']!r} ({c['count']} questions, hash {c['hash']})"
        )

    def __repr__(self) -> str:
        return self.to_text()

    def to_html(self, *, embedded: bool = False) -> str:
        """Static HTML (no script): the sweep table with the suggestion marked
        (``embedded``: without the page wrapper, as inside a report)."""
        return render_html(self, embedded=embedded)

    def save(self, path: str | Path) -> Path:
        """A self-contained HTML page: the sweep, its curve and the full report."""
        if self.report is None:
            p = Path(path)
            page = f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{self.to_html()}</body></html>'
            p.write_text(page, encoding="utf-8")
            return p
        return self.report.save(path)


def _suggest(rows: list[dict[str, Any]], default: int) -> int:
    best = max(r["score"] for r in rows)
    tied = [r["value"] for r in rows if r["score"] == best]
    if default in tied:
        return default
    return int(min(tied, key=lambda v: (abs(v - default), v)))


async def acalibrate(
    rag: Any,
    questions: QuestionSet | Iterable[Question] | str | Path,
    param: str = "relevance_cutoff",
    values: Iterable[int] = range(30, 91, 10),
    **kwargs: Any,
) -> Calibration:
    """Async ``calibrate``: see there."""
    from selfrag_nb.config import Settings
    from selfrag_nb.eval.runner import aevaluate

    if param not in CALIBRATABLE:
        raise InputError(f"cannot calibrate {param!r}; calibratable: {', '.join(CALIBRATABLE)}")
    vals = list(dict.fromkeys(int(v) for v in values))
    if not vals:
        raise InputError("values: at least one threshold value is needed")
    for v in vals:
        if not 0 <= v <= 100:
            raise InputError(f"{param} values are 0..100, got {v}")
    # A suggestion is a comparison with what runs today: the documented default
    # and the pipeline's own setting are always measured, whatever the grid.
    default = int(Settings.model_fields[param].default)
    vals = sorted({*vals, default, int(getattr(rag.settings, param))})
    qs = as_question_set(questions)
    if not any(q.expected for q in qs):
        raise InputError(f"{qs.name}: calibration needs questions labelled with expected outcomes")
    variants = {f"{param}={v}": _overrides(rag.settings, param, v) for v in vals}
    report = await aevaluate(rag, qs, variants, **kwargs)
    rows = []
    for v in vals:
        s = summarize([r for r in report.rows if r.variant == f"{param}={v}"])
        rows.append(
            {
                "value": v,
                "n": s["n"],
                "correct_refusals": s["correct_refusals"],
                "wrong_refusals": s["wrong_refusals"],
                "unsupported_answers": s["unsupported_answers"],
                "citation_errors": s["citation_errors"],
                "outcome_accuracy": s["outcome_accuracy"],
                "score": s["correct_refusals"] - s["wrong_refusals"] - s["unsupported_answers"],
            }
        )
    cal = Calibration(
        param,
        rows,
        suggested=_suggest(rows, default),
        default=default,
        chosen_on=qs.describe(),
        report=report,
    )
    report.calibration = cal
    return cal


def calibrate(
    rag: Any,
    questions: QuestionSet | Iterable[Question] | str | Path,
    param: str = "relevance_cutoff",
    values: Iterable[int] = range(30, 91, 10),
    **kwargs: Any,
) -> Calibration:
    """Sweep ``param`` ("relevance_cutoff" or "accept_confidence") over
    ``values`` on ``questions`` and suggest a value: the one maximising
    correct refusals - wrong refusals - unsupported answers (ties: the
    documented default, else the nearest value to it). ``kwargs`` go to
    ``evaluate`` (concurrency, out, progress, k)."""
    return run_sync(lambda: acalibrate(rag, questions, param, values, **kwargs))
