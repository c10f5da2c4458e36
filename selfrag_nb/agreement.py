"""Agreement between people and a judge: confusion matrix, precision / recall / F1, Cohen's kappa.

    agreement(pairs, classes, positive, no_label=0)        pairs: (human label, judge verdict)
      confusion[human][judge]   counts, every class in ``classes`` order (rows: people)
      n          rows with both a label and a verdict: the denominator of observed agreement
      agree      rows on the diagonal;  observed = agree / n
      expected   chance agreement = sum over classes of (people's share) x (judge's share)
      kappa      (observed - expected) / (1 - expected)            Cohen (1960), unweighted
                 None with ``kappa_note`` when n = 0, or when expected = 1 (both raters gave
                 every row one and the same label: no disagreement was possible by chance)
      precision  judge positive and people positive / judge positive   (denominator: judge_positive)
      recall     judge positive and people positive / people positive  (denominator: human_positive)
      f1         2PR / (P + R); None when P or R is None (0.0 when both are 0)
      no_label   verdicts with no human label: reported apart, never counted as agreement
    by_category(rows, classes, positive) -> {category: Agreement, ..., "all": Agreement}
      rows: (category, human label or None, judge verdict)

Plain arithmetic on counts (no numpy), so the figures can be checked by hand:
tests/lab/test_agreement.py works textbook tables through it. Used by the
Prompt Lab (promptlab_labels.py) to score grade, verify and usefulness
against human labels (labels.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from selfrag_nb.errors import InputError

__all__ = ["ALL", "Agreement", "agreement", "by_category"]

#: The key of the overall figures in ``by_category``.
ALL = "overall"


@dataclass(frozen=True)
class Agreement:
    """People (rows) vs a judge (columns) over ``n`` rows both ruled on."""

    classes: tuple[str, ...]
    positive: str
    #: confusion[human][judge] = rows; every class present, in ``classes`` order.
    confusion: dict[str, dict[str, int]]
    #: Verdicts with no human label (not in any other count).
    no_label: int = 0
    kappa: float | None = field(init=False)
    #: Why kappa is None ("" when it is defined).
    kappa_note: str = field(init=False)

    def __post_init__(self) -> None:
        kappa, note = self._kappa()
        object.__setattr__(self, "kappa", kappa)
        object.__setattr__(self, "kappa_note", note)

    # -- counts (the denominators, by name) -------------------------------------
    @property
    def n(self) -> int:
        """Rows with both a human label and a judge verdict."""
        return sum(sum(row.values()) for row in self.confusion.values())

    @property
    def agree(self) -> int:
        """Rows where the judge's verdict is the people's label."""
        return sum(self.confusion[c][c] for c in self.classes)

    @property
    def human_positive(self) -> int:
        """Rows people labelled ``positive`` (recall's denominator)."""
        return sum(self.confusion[self.positive].values())

    @property
    def judge_positive(self) -> int:
        """Rows the judge called ``positive`` (precision's denominator)."""
        return sum(self.confusion[h][self.positive] for h in self.classes)

    @property
    def true_positive(self) -> int:
        return self.confusion[self.positive][self.positive]

    # -- rates --------------------------------------------------------------------
    @property
    def observed(self) -> float | None:
        """agree / n (None when n = 0)."""
        return self.agree / self.n if self.n else None

    @property
    def expected(self) -> float | None:
        """Chance agreement: sum over classes of people's share x judge's share."""
        n = self.n
        if not n:
            return None
        return self._chance_numerator() / (n * n)

    def _chance_numerator(self) -> int:
        rows = {c: sum(self.confusion[c].values()) for c in self.classes}
        cols = {c: sum(self.confusion[h][c] for h in self.classes) for c in self.classes}
        return sum(rows[c] * cols[c] for c in self.classes)

    def _kappa(self) -> tuple[float | None, str]:
        n = self.n
        if not n:
            return None, "no rows with both a human label and a judge verdict"
        chance = self._chance_numerator()
        if chance == n * n:  # exact in integers: expected agreement is 1
            only = next(c for c in self.classes if self.confusion[c][c])
            return None, (
                f"chance agreement is 1: people and the judge gave all {n} rows the same label "
                f"({only!r}), so kappa is undefined (observed agreement 100%)"
            )
        po = self.agree / n
        pe = chance / (n * n)
        return (po - pe) / (1 - pe), ""

    @property
    def precision(self) -> float | None:
        """true_positive / judge_positive (None when the judge called nothing positive)."""
        return self.true_positive / self.judge_positive if self.judge_positive else None

    @property
    def recall(self) -> float | None:
        """true_positive / human_positive (None when people labelled nothing positive)."""
        return self.true_positive / self.human_positive if self.human_positive else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, Any]:
        """Every figure with its denominator, JSON-able (exports, widget state)."""
        return {
            "n": self.n,
            "agree": self.agree,
            "no_label": self.no_label,
            "observed": self.observed,
            "expected": self.expected,
            "kappa": self.kappa,
            "kappa_note": self.kappa_note,
            "positive": self.positive,
            "precision": self.precision,
            "judge_positive": self.judge_positive,
            "recall": self.recall,
            "human_positive": self.human_positive,
            "f1": self.f1,
            "classes": list(self.classes),
            "confusion": {h: dict(row) for h, row in self.confusion.items()},
        }

    def describe(self) -> str:
        """ "kappa 0.40 · agree 35/50 · precision 20/30 · recall 20/25 · F1 0.73 · 3 no label"."""
        kappa = "kappa undefined" if self.kappa is None else f"kappa {self.kappa:.2f}"
        parts = [kappa, f"agree {self.agree}/{self.n}"]
        if self.judge_positive:
            parts.append(f"precision {self.true_positive}/{self.judge_positive}")
        if self.human_positive:
            parts.append(f"recall {self.true_positive}/{self.human_positive}")
        if self.f1 is not None:
            parts.append(f"F1 {self.f1:.2f}")
        if self.no_label:
            parts.append(f"{self.no_label} no label")
        return " · ".join(parts)


def agreement(
    pairs: Iterable[tuple[str, str]], classes: Sequence[str], positive: str, *, no_label: int = 0
) -> Agreement:
    """The figures of ``(human, judge)`` pairs over ``classes`` (``positive`` among them)."""
    classes = tuple(classes)
    if positive not in classes:
        raise InputError(f"positive class {positive!r} is not one of {list(classes)}")
    confusion = {h: dict.fromkeys(classes, 0) for h in classes}
    for human, judge in pairs:
        if human not in confusion or judge not in confusion:
            raise InputError(f"label {human!r} / verdict {judge!r} not among the classes {list(classes)}")
        confusion[human][judge] += 1
    return Agreement(classes, positive, confusion, no_label=no_label)


def by_category(
    rows: Iterable[tuple[str, str | None, str]], classes: Sequence[str], positive: str
) -> dict[str, Agreement]:
    """Per category (first-seen order) and overall (``ALL``, last): rows with
    no human label are counted as ``no_label`` and nowhere else."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    missing: dict[str, int] = {}
    for cat, human, judge in rows:
        pairs.setdefault(cat, [])
        missing.setdefault(cat, 0)
        if human is None:
            missing[cat] += 1
        else:
            pairs[cat].append((human, judge))
    out = {c: agreement(p, classes, positive, no_label=missing[c]) for c, p in pairs.items()}
    every = [pair for p in pairs.values() for pair in p]
    out[ALL] = agreement(every, classes, positive, no_label=sum(missing.values()))
    return out
