"""Faces of an Explorer (selfrag_nb.explorer): text, static HTML, and what the
widget shows when rows are opened.

    explore_text(ex)   'Explorer: 5,000 trace(s) (3,120 answered, 800 refused, ...)'
    explore_html(ex)   <div class="srnb-root srnb-xp tex2jax_ignore mathjax_ignore">
                         counts by outcome, then a table of the first STATIC_ROWS rows
                         (question, user, outcome, reason, flags, latency, tokens, cost)
                         and a note naming how many more there are; no script
                       </div>
    opened_state(traces, labels)  the widget's ``opened`` trait:
                         one trace  -> {"kind": "trace", "tree": to_json(trace_node(t))}
                         two traces -> {"kind": "compare", "tree": to_json(compare_node(
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
from selfrag_nb.display.html import css
from selfrag_nb.display.markup import esc, fmt_ms
from selfrag_nb.display.tree import Node, h, to_json
from selfrag_nb.explorer import Explorer
from selfrag_nb.formats import fmt_cost, fmt_tokens

if TYPE_CHECKING:
    from selfrag_nb.comparison import Comparison
    from selfrag_nb.trace import Trace

__all__ = [
    "STATIC_ROWS",
    "compare_node",
    "explore_css",
    "explore_html",
    "explore_text",
    "opened_state",
    "trace_node",
]

#: Rows the static HTML lists (the widget pages through all of them).
STATIC_ROWS = 200
ROOT_CLASS = "srnb-root srnb-xp tex2jax_ignore mathjax_ignore"
_TONE = {"answered": "ok", "direct": "ok", "disclaimed": "warn", "regenerated": "warn", "clarify": "warn"}


@lru_cache(maxsize=1)
def explore_css() -> str:
    """The shared stylesheet followed by the explorer's own, comments stripped."""
    raw = (Path(__file__).parent / "static" / "explore.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return css() + re.sub(r"\s*\n\s*", "", raw).strip()


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
# Built with the view tree (display/tree.py: allow-listed tags and attributes,
# text only as text); the widget mounts ``to_json(node)`` with mount.js's build().
# The trace's own view (html.py) is not ported to the tree yet, so an opened
# trace is shown by trace_node below: question, outcome and reason, answer,
# usefulness, claims, one line per stage.


def _badge(text: str, tone: str = "") -> Node:
    return h("span", f"srnb-badge srnb-{tone}" if tone else "srnb-badge", text)


def _table(head: list[str], rows: list[Node]) -> Node:
    return h(
        "table",
        "srnb-xp-stages",
        h("thead", "", h("tr", "", [h("th", "", x) for x in head])),
        h("tbody", "", rows),
    )


def trace_node(trace: Trace, label: str = "") -> Node:
    """The opened trace: question, outcome and reason, answer, usefulness,
    claims with their verdicts, and one line per stage."""
    fin = trace.finish
    tot = trace.totals
    use = trace.usefulness
    sup = trace.support
    verdict_tone = {"supported": "ok", "partial": "warn", "unsupported": "bad"}
    return h(
        "div",
        "srnb-card srnb-xp-trace",
        h(
            "div",
            "srnb-card-h",
            h("span", "srnb-stage", label or "Trace"),
            _badge(trace.outcome or "unfinished", _tone(trace.outcome or "")),
            h(
                "span",
                "srnb-meta",
                f"user {trace.user.id} · {fmt_ms(trace.wall_ms)} · "
                f"{fmt_tokens(tot.tokens_in + tot.tokens_out)} tokens · {fmt_cost(tot.cost)}",
            ),
        ),
        h("div", "srnb-q", trace.question, dir="auto"),
        h("div", "srnb-meta", f"{fin.reason_kind or 'reason'}: {fin.reason}") if fin and fin.reason else None,
        h("div", "srnb-block srnb-xp-answer", trace.answer or "(no answer)", dir="auto"),
        h(
            "div",
            "srnb-meta",
            f"usefulness: {use.verdict} ({use.score})",
            use.missing and f" · missing: {use.missing}",
        )
        if use
        else None,
        h(
            "ul",
            "srnb-xp-claims",
            [h("li", "", _badge(c.verdict, verdict_tone[c.verdict]), " ", c.text) for c in sup.claims],
            data_page=10,
        )
        if sup and sup.claims
        else None,
        _table(
            ["stage", "latency", "calls", "fallbacks"],
            [
                h(
                    "tr",
                    "",
                    h("td", "", r.stage),
                    h("td", "srnb-num", fmt_ms(r.latency_ms)),
                    h("td", "srnb-num", str(len(r.calls))),
                    h("td", "", "; ".join(f"{f.what}: {f.reason}" for f in r.fallbacks)),
                    data_stage=r.stage,
                )
                for r in trace.records
            ],
        ),
        data_kind="trace",
    )


def compare_node(cmp: Comparison) -> Node:
    """Two opened traces (sr.compare): the first divergence, then one row per stage."""
    a, b = cmp.labels
    first = cmp.first_divergence
    qa, qb = cmp.questions
    said = (
        f"First divergence: {first.title} ({first.what})"
        if first
        else "No divergence: every stage is the same"
    )
    rows = [
        h(
            "tr",
            "srnb-xp-cmp-row" + (" srnb-cmp-first" if first and r.stage == first.stage else ""),
            h("td", "srnb-stage", r.title),
            h("td", "", r.left.summary if r.left.ran else "did not run"),
            h("td", "", r.right.summary if r.right.ran else "did not run"),
            h("td", "srnb-meta", "same" if r.same else r.what),
            data_stage=r.stage,
        )
        for r in cmp.rows
    ]
    return h(
        "div",
        "srnb-card srnb-xp-compare",
        h(
            "div",
            "srnb-card-h",
            h("span", "srnb-stage", f"{a} vs {b}"),
            _badge(f"{a}: {cmp.outcomes[0] or 'unfinished'}", _tone(cmp.outcomes[0] or "")),
            _badge(f"{b}: {cmp.outcomes[1] or 'unfinished'}", _tone(cmp.outcomes[1] or "")),
        ),
        h("div", "srnb-q", qa if qa == qb else f"{a}: {qa}", dir="auto"),
        None if qa == qb else h("div", "srnb-q", f"{b}: {qb}", dir="auto"),
        h("div", "srnb-cmp-banner srnb-banner", said),
        _table(["stage", a, b, "what changed"], rows),
        data_kind="compare",
    )


def opened_state(traces: list[Trace], labels: list[str]) -> dict[str, Any]:
    """The widget's ``opened``: one trace's view, or the comparison of two, as tree JSON."""
    if len(traces) == 1:
        return {"kind": "trace", "title": labels[0], "tree": to_json(trace_node(traces[0], labels[0]))}
    from selfrag_nb.comparison import compare

    names = (labels[0], labels[1]) if labels[0] != labels[1] else ("A", "B")
    cmp = compare(traces[0], traces[1], labels=names)
    return {"kind": "compare", "title": f"{names[0]} vs {names[1]}", "tree": to_json(compare_node(cmp))}


def _explore_widget(obj: object) -> Any:
    from selfrag_nb.display.explore_widget import ExploreWidget

    return ExploreWidget(obj)


faces.register(Explorer, text=explore_text, html=explore_html, widget=_explore_widget)
