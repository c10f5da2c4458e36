"""The one number format (selfrag_nb/formats.py): costs and tokens read the
same in the text summaries, the static HTML, EvalReport's text and the
explorer widget (its number cells are [value, text], the text formatted here).
One formatter, so no two faces round apart (JS's Math.round and Python's format
did: 12.5 ms read "13 ms" in the widget and "12 ms" in the static face)."""

from __future__ import annotations

import html

import pytest

import selfrag_nb as sr
from selfrag_nb.display import cards, faces
from selfrag_nb.display.explore_widget import ExploreWidget
from selfrag_nb.display.markup import fmt_ms
from selfrag_nb.eval.report import format_metric
from selfrag_nb.formats import fmt_cost, fmt_tokens
from selfrag_nb.trace import Trace

# (value, expected) from the documented rule: $0 for zero, <$0.0001 for tiny,
# four decimals below a cent, cents from a cent up; unknown is not free.
COSTS = [
    (None, "unknown"),
    (float("nan"), "unknown"),
    (0, "$0"),
    (0.0, "$0"),
    (0.00000042, "<$0.0001"),
    (0.00009, "<$0.0001"),
    (0.0001, "$0.0001"),
    (0.0012, "$0.0012"),
    (0.00734, "$0.0073"),
    (0.01, "$0.01"),
    (0.0149, "$0.01"),
    (0.37, "$0.37"),
    (1.5, "$1.50"),
    (1234.5, "$1,234.50"),
    (-0.0012, "-$0.0012"),
]
TOKENS = [(None, "unknown"), (0, "0"), (999, "999"), (1000, "1,000"), (1234567, "1,234,567")]


@pytest.mark.parametrize(("value", "expected"), COSTS)
def test_cost_format(value: float | None, expected: str) -> None:
    assert fmt_cost(value) == expected


@pytest.mark.parametrize(("value", "expected"), TOKENS)
def test_token_format(value: int | None, expected: str) -> None:
    assert fmt_tokens(value) == expected


def test_display_and_eval_use_the_same_formatter() -> None:
    assert cards.fmt_cost is fmt_cost
    # The evaluation text/HTML never prints six zeros again.
    assert format_metric("cost", 0.0) == "$0"
    assert format_metric("cost", 0.0000003) == "<$0.0001"
    assert format_metric("tokens_in", 123456) == "123,456"
    assert format_metric("latency_p95_ms", 12345.6) == "12,346"


def test_the_explorer_widget_shows_numbers_formatted_by_the_same_rule(
    full_trace: Trace, refused_trace: Trace, clarify_trace: Trace
) -> None:
    """The widget's number cells carry their text, formatted in Python: the
    browser shows what the static face shows for the same row."""
    ex = sr.explore([full_trace, refused_trace, clarify_trace])
    widget = ExploreWidget(ex)
    page = faces.html(ex)
    rule = {"ms": fmt_ms, "num": fmt_tokens, "cost": fmt_cost}
    seen = 0
    for row in widget.rows:
        for col, cell in zip(widget.columns, row, strict=True):
            if col["kind"] not in rule:
                continue
            value, text = cell
            assert text == ("" if value is None and col["kind"] != "cost" else rule[col["kind"]](value))
            assert not text or html.escape(text) in page, (col["key"], text)
            seen += 1
    assert seen == 3 * len(widget.rows)
