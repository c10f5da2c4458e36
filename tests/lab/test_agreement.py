"""Agreement figures (selfrag_nb/agreement.py) against values worked out by
hand from textbook tables: kappa = (po - pe) / (1 - pe), undefined when pe = 1;
precision over what the judge called positive, recall over what people did."""

from __future__ import annotations

import pytest

from selfrag_nb.agreement import ALL, agreement, by_category
from selfrag_nb.errors import InputError

YN = ("yes", "no")


def table(a: int, b: int, c: int, d: int) -> list[tuple[str, str]]:
    """2x2 table: a = both yes, b = people yes / judge no, c = people no / judge yes, d = both no."""
    return [("yes", "yes")] * a + [("yes", "no")] * b + [("no", "yes")] * c + [("no", "no")] * d


def test_kappa_textbook_two_by_two() -> None:
    # 50 proposals read by two raters: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
    # po = 35/50 = 0.7; people yes 25/50, judge yes 30/50: pe = .5*.6 + .5*.4 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = agreement(table(20, 5, 10, 15), YN, "yes")
    assert a.n == 50
    assert a.agree == 35
    assert a.observed == pytest.approx(0.7)
    assert a.expected == pytest.approx(0.5)
    assert a.kappa == pytest.approx(0.4)
    assert a.kappa_note == ""
    # precision 20 / (20 + 10) judge-positive rows; recall 20 / (20 + 5) people-positive rows
    assert (a.judge_positive, a.human_positive, a.true_positive) == (30, 25, 20)
    assert a.precision == pytest.approx(20 / 30)
    assert a.recall == pytest.approx(20 / 25)
    assert a.f1 == pytest.approx(2 * (2 / 3) * 0.8 / (2 / 3 + 0.8))
    assert a.confusion == {"yes": {"yes": 20, "no": 5}, "no": {"yes": 10, "no": 15}}


@pytest.mark.parametrize(
    ("cells", "kappa"),
    [
        # same observed agreement (60%), different marginals, different kappa:
        # 45/15/25/15: pe = .6*.7 + .4*.3 = 0.54, kappa = .06/.46 = 0.1304
        ((45, 15, 25, 15), 0.06 / 0.46),
        # 25/35/5/35: pe = .6*.3 + .4*.7 = 0.46, kappa = .14/.54 = 0.2593
        ((25, 35, 5, 35), 0.14 / 0.54),
        # perfect agreement with both classes used: kappa 1
        ((10, 0, 0, 10), 1.0),
        # agreement no better than chance: po = pe = 0.5 -> 0
        ((25, 25, 25, 25), 0.0),
        # systematic disagreement: po = 0, pe = 0.5 -> -1
        ((0, 5, 5, 0), -1.0),
    ],
)
def test_kappa_hand_computed(cells: tuple[int, int, int, int], kappa: float) -> None:
    assert agreement(table(*cells), YN, "yes").kappa == pytest.approx(kappa, abs=1e-9)


def test_kappa_three_classes() -> None:
    # people (rows) x judge (cols), supported / partial / unsupported:
    #            sup par uns   row
    #   sup       10   2   1    13
    #   par        1   4   1     6
    #   uns        0   1   5     6
    #   col       11   7   7    25
    # po = 19/25 = 0.76; pe = (13*11 + 6*7 + 6*7) / 625 = 227/625 = 0.3632
    # kappa = (0.76 - 0.3632) / (1 - 0.3632) = 0.3968 / 0.6368 = 0.623116...
    classes = ("supported", "partial", "unsupported")
    counts = {
        ("supported", "supported"): 10,
        ("supported", "partial"): 2,
        ("supported", "unsupported"): 1,
        ("partial", "supported"): 1,
        ("partial", "partial"): 4,
        ("partial", "unsupported"): 1,
        ("unsupported", "partial"): 1,
        ("unsupported", "unsupported"): 5,
    }
    pairs = [k for k, v in counts.items() for _ in range(v)]
    a = agreement(pairs, classes, "supported")
    assert a.expected == pytest.approx(227 / 625)
    assert a.kappa == pytest.approx(0.3968 / 0.6368)
    assert a.precision == pytest.approx(10 / 11)
    assert a.recall == pytest.approx(10 / 13)


def test_kappa_undefined_when_chance_agreement_is_one() -> None:
    a = agreement(table(7, 0, 0, 0), YN, "yes")
    assert a.observed == 1.0
    assert a.expected == 1.0
    assert a.kappa is None
    assert "chance agreement is 1" in a.kappa_note
    assert "'yes'" in a.kappa_note
    assert a.precision == 1.0
    assert a.recall == 1.0
    # one class each but different ones: pe = 0, po = 0 -> kappa 0, defined
    b = agreement(table(0, 4, 0, 0), YN, "yes")
    assert b.kappa == 0.0
    assert b.kappa_note == ""
    assert b.precision is None
    assert b.recall == 0.0
    assert b.f1 is None
    empty = agreement([], YN, "yes", no_label=3)
    assert empty.kappa is None
    assert "no rows" in empty.kappa_note
    assert empty.observed is None
    assert empty.no_label == 3


def test_by_category_counts_missing_labels_apart() -> None:
    rows = [
        ("factual", "yes", "yes"),
        ("factual", "no", "yes"),
        ("factual", None, "yes"),  # no label: never agreement
        ("negation", "no", "no"),
        ("negation", None, "no"),
    ]
    figs = by_category(rows, YN, "yes")
    assert list(figs) == ["factual", "negation", ALL]
    assert (figs["factual"].n, figs["factual"].agree, figs["factual"].no_label) == (2, 1, 1)
    assert (figs["negation"].n, figs["negation"].agree, figs["negation"].no_label) == (1, 1, 1)
    overall = figs[ALL]
    assert (overall.n, overall.agree, overall.no_label) == (3, 2, 2)
    # kappa over the 3 labelled rows: po = 2/3, people yes 1/3, judge yes 2/3:
    # pe = 1/3*2/3 + 2/3*1/3 = 4/9 -> (2/3 - 4/9) / (5/9) = 0.4
    assert overall.kappa == pytest.approx(0.4)
    d = overall.to_dict()
    assert d["judge_positive"] == 2
    assert d["human_positive"] == 1
    assert d["no_label"] == 2


def test_unknown_classes_refused() -> None:
    with pytest.raises(InputError, match="positive class"):
        agreement([], YN, "maybe")
    with pytest.raises(InputError, match="not among the classes"):
        agreement([("yes", "perhaps")], YN, "yes")
