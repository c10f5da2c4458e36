"""Numbers as people read them: the one cost and token format of every view.

    cost  None -> "unknown"        (a price nobody knows is not free)
          0    -> "$0"
          below $0.0001 -> "<$0.0001"
          below a cent  -> "$0.0012"  (four decimals: a model call costs fractions of a cent)
          a cent or more -> "$0.37", "$1,234.50"  (cents)
    tokens None -> "unknown", else thousands separators ("12,345")

Used by the text summaries, the static HTML, the widgets' state (the explorer's
number cells arrive formatted: no script formats a number), the plotly charts and
``EvalReport``'s text.
Pure Python, so data modules may use it without reaching the display layer.
"""

from __future__ import annotations

import math

__all__ = ["fmt_cost", "fmt_tokens"]


def fmt_cost(cost: float | None) -> str:
    """Dollars, readable at every scale; None (and NaN) mean unknown, not free."""
    if cost is None:
        return "unknown"
    c = float(cost)
    if math.isnan(c) or math.isinf(c):
        return "unknown"
    if c < 0:
        return "-" + fmt_cost(-c)
    if c == 0:
        return "$0"
    if c < 0.0001:
        return "<$0.0001"
    if round(c, 4) < 0.01:
        return f"${c:.4f}"
    return f"${c:,.2f}"


def fmt_tokens(n: float | None) -> str:
    """A token count with thousands separators; None means unknown."""
    if n is None:
        return "unknown"
    f = float(n)
    if math.isnan(f):
        return "unknown"
    return f"{round(f):,}"
