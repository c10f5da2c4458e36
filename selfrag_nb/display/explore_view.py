"""Faces of an Explorer (selfrag_nb.explorer): text, static HTML, and what the
widget shows when rows are opened.

    explore_text(ex)   'Explorer: 5,000 trace(s) (3,120 answered, 800 refused, ...)'
    explore_html(ex)   <div class="srnb-root srnb-xp tex2jax_ignore mathjax_ignore">
                         counts by outcome, then a table of the first STATIC_ROWS rows
                         (question, user, outcome, reason, flags, latency, tokens, cost)
                         and a note naming how many more there are; no script
                       </div>
    opened_state(traces, labels)  the widget's ``opened`` trait:
                         one trace  -> {"kind": "trace", "tree": to_json(view_tree(t))}
                         two traces -> {"kind": "compare", "tree": to_json(compare_tree(
                                        sr.compare(a, b)))}
                       nodes from the view tree (display/tree.py ``h``: allow-listed
                       tags and attributes, text only as text), mounted by
                       explore.js with mount.js's build() + attach()
    registered: faces.register(Explorer, text, html, widget=ExploreWidget)

Every text enters the static HTML through markup.py's ``esc``; in a node it is
a plain string the browser sets as text (control characters split out as
labelled spans by tree.py, as in every view).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb.display import faces
from selfrag_nb.display.markup import esc, fmt_ms
from selfrag_nb.display.tree import to_json
from selfrag_nb.explorer import Explorer
from selfrag_nb.formats import fmt_cost, fmt_tokens

if TYPE_CHECKING:
    from selfrag_nb.trace import Trace

__all__ = [
    "STATIC_ROWS",
    "explore_css",
    "explore_html",
    "explore_text",
    "opened_state",
]

#: Rows the static HTML lists (the widget pages through all of them).
STATIC_ROWS = 200
ROOT_CLASS = "srnb-root srnb-xp tex2jax_ignore mathjax_ignore"
_TONE = {"answered": "ok", "direct": "ok", "disclaimed": "warn", "regenerated": "warn", "clarify": "warn"}


@lru_cache(maxsize=1)
def explore_css() -> str:
    """The shared and comparison stylesheets (an opened row is a trace or a
    comparison) followed by the explorer's own, comments stripped."""
    from selfrag_nb.display.compare_html import compare_css

    raw = (Path(__file__).parent / "static" / "explore.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return compare_css() + re.sub(r"\s*\n\s*", "", raw).strip()


def explore_text(ex: Explorer) -> str:
    return ex.to_text()


def _tone(outcome: str) -> str:
    return _TONE.get(outcome, "bad" if outcome == "refused" else "")


def explore_html(ex: Explorer) -> str:
    """Static HTML: counts, then the first STATIC_ROWS rows (no script)."""
    counts = "".join(
        f'<span class="srnb-badge srnb-{_tone(k)}">{esc(k or "unknown")} {n:,}</span> '
        for k, n in ex.counts("outcome").items()
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("question", "user", "outcome", "reason", "flags", "latency", "tokens", "cost")
    )
    body = []
    for r in ex.rows[:STATIC_ROWS]:
        reason = "unknown" if r.reason_kind is None else r.reason_kind
        body.append(
            "<tr>"
            f'<td class="srnb-xp-q">{esc(r.question, 240)}</td><td>{esc(r.user)}</td>'
            f'<td><span class="srnb-badge srnb-{_tone(r.outcome)}">{esc(r.outcome or "unknown")}</span></td>'
            f"<td>{esc(reason)}</td><td>{esc(', '.join(r.flags))}</td>"
            f'<td class="srnb-num">{esc(fmt_ms(r.latency_ms))}</td>'
            f'<td class="srnb-num">{esc(fmt_tokens(r.tokens_in + r.tokens_out))}</td>'
            f'<td class="srnb-num">{esc(fmt_cost(r.cost))}</td>'
            "</tr>"
        )
    more = len(ex.rows) - STATIC_ROWS
    note = (
        f'<p class="srnb-meta">first {STATIC_ROWS:,} of {len(ex.rows):,} rows; '
        f"the widget (or ex.to_pandas()) has all of them</p>"
        if more > 0
        else ""
    )
    skipped = (
        f'<p class="srnb-meta">{len(ex.skipped):,} file(s) skipped: ex.skipped says why</p>'
        if ex.skipped
        else ""
    )
    return (
        f'<div class="{ROOT_CLASS}"><style>{explore_css()}</style>'
        f'<div class="srnb-card-h"><span class="srnb-stage">Explorer</span>'
        f'<span class="srnb-meta">{len(ex.rows):,} trace(s)</span> {counts}</div>'
        f'<div class="srnb-xp-scroll"><table class="srnb-xp-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}{skipped}</div>"
    )


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


faces.register(Explorer, text=explore_text, html=explore_html, widget=_explore_widget)
