"""Faces of an Explorer (selfrag_nb.explorer): text, static HTML, and what the
widget shows when rows are opened.

    Explorer.to_text   'Explorer: 5,000 trace(s) (3,120 answered, 800 refused, ...)'
    explore_tree(ex)   <div class="srnb-root srnb-xp tex2jax_ignore mathjax_ignore">
                         counts by outcome, then a table of the first STATIC_ROWS rows
                         (question, user, outcome, reason, flags, latency, tokens, cost)
                         and a note naming how many more there are
                       </div>                       a view tree (display/tree.py)
    explore_html(ex)   that tree as a page (tree.to_page + explore_css): no script
    opened_state(traces, labels)  the widget's ``opened`` trait:
                         one trace  -> {"kind": "trace", "tree": to_json(view_tree(t))}
                         two traces -> {"kind": "compare", "tree": to_json(compare_tree(
                                        sr.compare(a, b)))}
                       mounted by explore.js with mount.js's build() + attach()
    registered: faces.register(Explorer, text, html, widget=ExploreWidget)

The widget's rows (explore_widget.py, static/explore.js) are not this tree:
they are ticked, sorted, filtered and paged in the browser over every row, so
explore.js draws them from the synced values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from selfrag_nb.display import faces
from selfrag_nb.display.cards import OUTCOME_TONE, card_head, esc, table
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.markup import fmt_ms
from selfrag_nb.display.tables import tr
from selfrag_nb.display.tree import Node, h, to_json, to_page
from selfrag_nb.explorer import Explorer
from selfrag_nb.formats import fmt_cost, fmt_tokens

if TYPE_CHECKING:
    from selfrag_nb.explore_rows import Row
    from selfrag_nb.trace import Trace

#: Rows the static HTML lists (the widget pages through all of them).
STATIC_ROWS = 200
ROOT_CLASS = "srnb-root srnb-xp tex2jax_ignore mathjax_ignore"


def explore_css() -> str:
    """The shared and comparison stylesheets (an opened row is a trace or a
    comparison) followed by the explorer's own, comments stripped."""
    return stylesheet("trace.css", "compare.css", "explore.css")


def _outcome(outcome: str, *count: str) -> Node:
    tone = OUTCOME_TONE.get(outcome, "")
    return h("span", f"srnb-badge srnb-{tone}", esc(outcome or "unknown"), count)


def _row(r: Row) -> Node:
    numbers = (fmt_ms(r.latency_ms), fmt_tokens(r.tokens_in + r.tokens_out), fmt_cost(r.cost))
    return tr(
        "",
        h("td", "srnb-xp-q", esc(r.question, 240)),
        esc(r.user),
        _outcome(r.outcome),
        esc("unknown" if r.reason_kind is None else r.reason_kind),
        esc(", ".join(r.flags)),
        *(h("td", "srnb-num", esc(x)) for x in numbers),
    )


def explore_tree(ex: Explorer) -> Node:
    """The static face's tree: counts, then the first STATIC_ROWS rows (no script)."""
    counts = [[_outcome(k, f" {n:,}"), " "] for k, n in ex.counts("outcome").items()]
    heads = ("question", "user", "outcome", "reason", "flags", "latency", "tokens", "cost")
    body = [_row(r) for r in ex.rows[:STATIC_ROWS]]
    first = f"first {STATIC_ROWS:,} of {len(ex.rows):,} rows; the widget (or ex.to_pandas()) has all of them"
    return h(
        "div",
        ROOT_CLASS,
        card_head("Explorer", h("span", "srnb-meta", f"{len(ex.rows):,} trace(s)"), " ", counts),
        h("div", "srnb-xp-scroll", table("srnb-xp-table", heads, body)),
        h("p", "srnb-meta", first) if len(ex.rows) > STATIC_ROWS else None,
        h("p", "srnb-meta", f"{len(ex.skipped):,} file(s) skipped: ex.skipped says why")
        if ex.skipped
        else None,
    )


def explore_html(ex: Explorer) -> str:
    """Static HTML: explore_tree as a page with its stylesheet."""
    return to_page(explore_tree(ex), explore_css())


# ---------------------------------------------------------------- opened rows
# An opened row is the trace's own view, and two the comparison's: the same
# view trees the trace and sr.compare show everywhere else (html.view_tree,
# compare_html.compare_tree), mounted by mount.js's build().


def opened_state(traces: list[Trace], labels: list[str]) -> dict[str, Any]:
    """The widget's ``opened``: one trace's view, or the comparison of two, as tree JSON."""
    if len(traces) == 1:
        from selfrag_nb.display.html import view_tree

        return {"kind": "trace", "title": labels[0], "tree": to_json(view_tree(traces[0]))}
    from selfrag_nb.comparison import compare
    from selfrag_nb.display.compare_html import compare_tree

    names = (labels[0], labels[1]) if labels[0] != labels[1] else ("A", "B")
    cmp = compare(traces[0], traces[1], labels=names)
    return {"kind": "compare", "title": f"{names[0]} vs {names[1]}", "tree": to_json(compare_tree(cmp))}


def _explore_widget(obj: object) -> Any:
    from selfrag_nb.display.explore_widget import ExploreWidget

    return ExploreWidget(obj)


faces.register(Explorer, text=Explorer.to_text, html=explore_html, widget=_explore_widget)
