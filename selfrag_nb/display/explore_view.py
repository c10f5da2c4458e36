"""Faces of an Explorer (selfrag_nb.explorer): text, static HTML, and what the
widget shows when rows are opened.

    explore_text(ex)   'Explorer: 5,000 trace(s) (3,120 answered, 800 refused, ...)'
    explore_html(ex)   <div class="srnb-root srnb-xp tex2jax_ignore mathjax_ignore">
                         counts by outcome, then a table of the first STATIC_ROWS rows
                         (question, user, outcome, reason, flags, latency, tokens, cost)
                         and a note naming how many more there are; no script
                       </div>
    opened_state(traces, labels)  the widget's ``opened`` trait:
                         one trace  -> {"kind": "trace", "tree": node}
                         two traces -> {"kind": "compare", "tree": node} (sr.compare)
                       a node is compact JSON {"t": tag, "c": class, "a": {attrs},
                       "k": [children or strings]}, mounted by explore.js with
                       textContent only
    registered: faces.register(Explorer, text, html, widget=ExploreWidget)

Every text enters the static HTML through markup.py's ``esc``; in a node it is
a plain string the browser sets as text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.html import css
from selfrag_nb.display.markup import esc, fmt_ms
from selfrag_nb.explorer import Explorer
from selfrag_nb.formats import fmt_cost, fmt_tokens

__all__ = ["STATIC_ROWS", "explore_css", "explore_html", "explore_text", "opened_state"]

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


def node(tag: str, cls: str = "", *kids: Any, **attrs: str) -> dict[str, Any]:
    """A compact view node: {"t", "c", "a", "k"} (strings in ``k`` are text)."""
    out: dict[str, Any] = {"t": tag}
    if cls:
        out["c"] = cls
    if attrs:
        out["a"] = {k.replace("_", "-"): v for k, v in attrs.items()}
    kept = [k for k in kids if k is not None and k != ""]
    if kept:
        out["k"] = kept
    return out


def _badge(text: str, tone: str = "") -> dict[str, Any]:
    return node("span", f"srnb-badge srnb-{tone}" if tone else "srnb-badge", text)


def trace_node(trace: Any, label: str = "") -> dict[str, Any]:
    """The opened trace: question, outcome and reason, answer, usefulness,
    claims with their verdicts, and one line per stage."""
    fin = trace.finish
    tot = trace.totals
    head = node(
        "div",
        "srnb-card-h",
        node("span", "srnb-stage", label or "Trace"),
        _badge(trace.outcome or "unfinished", _tone(trace.outcome or "")),
        node(
            "span",
            "srnb-meta",
            f"user {trace.user.id} · {fmt_ms(trace.wall_ms)} · {fmt_tokens(tot.tokens_in + tot.tokens_out)} tokens"
            f" · {fmt_cost(tot.cost)}",
        ),
    )
    kids: list[Any] = [head, node("div", "srnb-q", trace.question)]
    if fin is not None and fin.reason:
        kids.append(node("div", "srnb-meta", f"{fin.reason_kind or 'reason'}: {fin.reason}"))
    kids.append(node("div", "srnb-block srnb-xp-answer", trace.answer or "(no answer)", dir="auto"))
    use = trace.usefulness
    if use is not None:
        kids.append(
            node(
                "div",
                "srnb-meta",
                f"usefulness: {use.verdict} ({use.score})",
                use.missing and f" · missing: {use.missing}",
            )
        )
    sup = trace.support
    if sup is not None and sup.claims:
        tone = {"supported": "ok", "partial": "warn", "unsupported": "bad"}
        kids.append(
            node(
                "ul",
                "srnb-xp-claims",
                *(node("li", "", _badge(c.verdict, tone[c.verdict]), " ", c.text) for c in sup.claims),
            )
        )
    stages = [
        node(
            "tr",
            "",
            node("td", "", r.stage),
            node("td", "srnb-num", fmt_ms(r.latency_ms)),
            node("td", "srnb-num", str(len(r.calls))),
            node("td", "", "; ".join(f"{f.what}: {f.reason}" for f in r.fallbacks)),
        )
        for r in trace.records
    ]
    head_row = node("tr", "", *(node("th", "", h) for h in ("stage", "latency", "calls", "fallbacks")))
    kids.append(node("table", "srnb-xp-stages", node("thead", "", head_row), node("tbody", "", *stages)))
    return node("div", "srnb-card srnb-xp-trace", *kids, data_kind="trace")


def compare_node(cmp: Any) -> dict[str, Any]:
    """The comparison of two opened traces: the first divergence, then one row per stage."""
    a, b = cmp.labels
    first = cmp.first_divergence
    banner = (
        node("div", "srnb-cmp-banner srnb-banner", f"First divergence: {first.title} ({first.what})")
        if first
        else node("div", "srnb-cmp-banner srnb-banner", "No divergence: every stage is the same")
    )
    rows = []
    for r in cmp.rows:
        cls = "srnb-xp-cmp-row" + (" srnb-cmp-first" if first and r.stage == first.stage else "")
        rows.append(
            node(
                "tr",
                cls,
                node("td", "srnb-stage", r.title),
                node("td", "", r.left.summary if r.left.ran else "did not run"),
                node("td", "", r.right.summary if r.right.ran else "did not run"),
                node("td", "srnb-meta", "same" if r.same else r.what),
                data_stage=r.stage,
            )
        )
    head = node("tr", "", *(node("th", "", h) for h in ("stage", a, b, "what changed")))
    qa, qb = cmp.questions
    kids: list[Any] = [
        node(
            "div",
            "srnb-card-h",
            node("span", "srnb-stage", f"{a} vs {b}"),
            _badge(f"{a}: {cmp.outcomes[0] or 'unfinished'}", _tone(cmp.outcomes[0] or "")),
            _badge(f"{b}: {cmp.outcomes[1] or 'unfinished'}", _tone(cmp.outcomes[1] or "")),
        ),
        node("div", "srnb-q", qa if qa == qb else f"{a}: {qa}"),
        None if qa == qb else node("div", "srnb-q", f"{b}: {qb}"),
        banner,
        node("table", "srnb-xp-stages", node("thead", "", head), node("tbody", "", *rows)),
    ]
    return node("div", "srnb-card srnb-xp-compare", *kids, data_kind="compare")


def opened_state(traces: list[Any], labels: list[str]) -> dict[str, Any]:
    """The widget's ``opened``: one trace's view, or the comparison of two."""
    if len(traces) == 1:
        return {"kind": "trace", "title": labels[0], "tree": trace_node(traces[0], labels[0])}
    from selfrag_nb.comparison import compare

    cmp = compare(
        traces[0], traces[1], labels=(labels[0], labels[1]) if labels[0] != labels[1] else ("A", "B")
    )
    return {"kind": "compare", "title": f"{labels[0]} vs {labels[1]}", "tree": compare_node(cmp)}


def _explore_widget(obj: object) -> Any:
    from selfrag_nb.display.explore_widget import ExploreWidget

    return ExploreWidget(obj)


faces.register(Explorer, text=explore_text, html=explore_html, widget=_explore_widget)
