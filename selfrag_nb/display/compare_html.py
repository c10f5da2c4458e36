"""Faces of a Comparison (selfrag_nb.comparison): text summary and static HTML.

    compare_text(cmp)   'Comparison "A" vs "B": first divergence at Rerank (rerank order): ...'
                        then one line per stage ("= summary" when the same, "≠ what
                        changed" when not, "·" when it ran on neither side), then
                        the config entries that differ
    compare_html(cmp)   <div class="srnb-root srnb-cmp tex2jax_ignore mathjax_ignore">
                          header (question(s), the two labels with their outcomes)
                          first-divergence banner (or "no divergence")
                          one row per stage in flow order: title | left | right,
                            what changed across both columns; the first divergent
                            row is marked srnb-cmp-first and its details are open
                          config differences: key | left | right
                        </div>
    registered: faces.register(Comparison, text, html, widget=CompareWidget)

Every text (questions, chunk names, answers, reasons, config values) enters
the HTML through markup.py's ``esc`` / ``block`` / ``escape``; chunk ids go in
``title`` attributes (hover), never as the visible name. No <script>;
expanding uses <details>. The root carries ``tex2jax_ignore mathjax_ignore``
so a notebook's MathJax leaves ``$x$`` in document text alone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from selfrag_nb.comparison import Comparison, Item, Side, StageRow
from selfrag_nb.display import faces
from selfrag_nb.display.cards import badge, flags_html
from selfrag_nb.display.html import css
from selfrag_nb.display.markup import block, esc, escape
from selfrag_nb.display.names import doc_flags
from selfrag_nb.display.text import one_line

__all__ = ["DETAILS", "MARK_LABELS", "ROOT_CLASS", "compare_css", "compare_html", "compare_text"]

#: The root element's classes: the shared look, this view, and MathJax opt-out.
ROOT_CLASS = "srnb-root srnb-cmp tex2jax_ignore mathjax_ignore"

#: How an item relates to the other side, as the legend and the hover say it.
MARK_LABELS = {
    "only": "only on this side",
    "moved": "other position there",
    "changed": "other score / verdict there",
}


@lru_cache(maxsize=1)
def compare_css() -> str:
    """The shared stylesheet followed by the comparison's own, comments stripped."""
    raw = (Path(__file__).parent / "static" / "compare.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return css() + re.sub(r"\s*\n\s*", "", raw).strip()


# ------------------------------------------------------------------ text


def compare_text(cmp: Comparison) -> str:
    la, lb = (one_line(x, 40) for x in cmp.labels)
    head = f'Comparison "{la}" vs "{lb}": '
    first = cmp.first_divergence
    if first is None:
        head += "no divergence, every stage matches"
    else:
        head += f"first divergence at {first.title} ({first.kind}): {one_line(first.what, 160)}"
    lines = [head]
    for r in cmp.rows:
        if not (r.left.ran or r.right.ran):
            lines.append(f"  · {r.title:<9} ran on neither side")
        elif r.same:
            lines.append(f"  = {r.title:<9} {one_line(r.left.summary, 100)}")
        else:
            lines.append(f"  ≠ {r.title:<9} {one_line(r.what, 140)}")
    if cmp.config:
        shown = "; ".join(f"{c.key} {one_line(c.left, 30)} → {one_line(c.right, 30)}" for c in cmp.config[:6])
        more = f" (and {len(cmp.config) - 6} more)" if len(cmp.config) > 6 else ""
        lines.append(f"  config: {shown}{more}")
    else:
        lines.append("  config: same")
    return "\n".join(lines)


# ------------------------------------------------------------------ html


def _item(it: Item) -> str:
    cls = "srnb-cmp-item" + (f" srnb-cmp-{it.mark}" if it.mark else "")
    tips = [f"chunk {it.chunk_id}"] if it.chunk_id else []
    if it.mark:
        tips.append(MARK_LABELS[it.mark])
    tip = f' title="{escape(" · ".join(tips))}"' if tips else ""
    return f'<li class="{cls}"{tip}>{esc(it.text, 2_000)}{flags_html(doc_flags(it.doc))}</li>'


#: What a stage's expandable part holds, by stage (the <details> summary).
DETAILS = {
    "decide": "reason",
    "rewrite": "queries",
    "retrieve": "chunks in rank order",
    "grade": "kept chunks and scores",
    "rerank": "order after rerank",
    "assess": "reason",
    "generate": "answer and citations",
    "verify": "claims and verdicts",
    "finish": "final answer",
}


def _side(side: Side, stage: str, open_: bool) -> str:
    if not side.ran:
        return '<div class="srnb-cmp-cell srnb-cmp-none"><span class="srnb-muted">did not run</span></div>'
    out = f'<div class="srnb-cmp-sum">{esc(side.summary, 500)}</div>'
    body = ""
    if side.items:
        body += f'<ul class="srnb-cmp-items">{"".join(_item(i) for i in side.items)}</ul>'
    if side.text:
        body += block(side.text, cls="srnb-block srnb-cmp-text")
    if body:
        flag = " open" if open_ else ""
        what = escape(DETAILS.get(stage, "details"))
        out += f'<details class="srnb-details"{flag}><summary>{what}</summary>{body}</details>'
    return f'<div class="srnb-cmp-cell">{out}</div>'


def _row(r: StageRow, first: bool) -> str:
    if not (r.left.ran or r.right.ran):
        state, tag = "srnb-cmp-skip", badge("ran on neither side")
    elif r.same:
        state, tag = "srnb-cmp-same", badge("= same", "ok")
    elif first:
        state, tag = "srnb-cmp-diff srnb-cmp-first", badge("≠ first divergence", "bad")
    else:
        state, tag = "srnb-cmp-diff", badge("≠ differs", "warn")
    what = f'<div class="srnb-cmp-what">{esc(r.what, 2_000)}</div>' if r.what else ""
    return (
        f'<section class="srnb-cmp-row {state}" data-stage="{escape(r.stage)}">'
        f'<div class="srnb-cmp-stage"><span class="srnb-stage">{escape(r.title)}</span> {tag}'
        f'<div class="srnb-meta">{escape(r.kind)}</div></div>'
        f"{_side(r.left, r.stage, first)}{_side(r.right, r.stage, first)}{what}</section>"
    )


def _header(cmp: Comparison) -> str:
    qa, qb = cmp.questions
    if qa == qb:
        q = f'<div class="srnb-q" dir="auto">{esc(qa, 2_000)}</div>'
    else:
        q = "".join(
            f'<div class="srnb-q" dir="auto"><span class="srnb-label">{esc(lab, 200)}</span>{esc(x, 2_000)}</div>'
            for lab, x in zip(cmp.labels, cmp.questions, strict=True)
        )
    sides = []
    for lab, out in zip(cmp.labels, cmp.outcomes, strict=True):
        sides.append(
            f'<span class="srnb-cmp-label">{esc(lab, 200)}</span> '
            + (badge(out, "info") if out else badge("in progress"))
        )
    line = '<div class="srnb-totals">' + '<span class="srnb-meta">vs</span>'.join(sides) + "</div>"
    return f'<div class="srnb-head">{q}{line}</div>'


def _banner(cmp: Comparison) -> str:
    first = cmp.first_divergence
    if first is None:
        return '<div class="srnb-banner srnb-cmp-banner srnb-cmp-nodiff"><strong>No divergence:</strong> every stage matches.</div>'
    return (
        f'<div class="srnb-banner srnb-banner-bad srnb-cmp-banner"><strong>First divergence: '
        f"{escape(first.title)}</strong> ({escape(first.kind)}) — {esc(first.what, 2_000)}</div>"
    )


def _config(cmp: Comparison) -> str:
    head = '<div class="srnb-card-h"><span class="srnb-stage">Configuration</span>'
    if not cmp.config:
        return f'<section class="srnb-card srnb-cmp-config">{head}{badge("same", "ok")}</div></section>'
    la, lb = (esc(x, 200) for x in cmp.labels)
    rows = "".join(
        f'<tr><td class="srnb-id">{esc(c.key, 200)}</td><td>{esc(c.left, 2_000)}</td><td>{esc(c.right, 2_000)}</td></tr>'
        for c in cmp.config
    )
    n = len(cmp.config)
    count = badge(f"{n} difference" + ("s" if n != 1 else ""), "warn")
    return (
        f'<section class="srnb-card srnb-cmp-config">{head}{count}</div>'
        f'<table class="srnb-table"><thead><tr><th>setting</th><th>{la}</th><th>{lb}</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _legend() -> str:
    return (
        '<div class="srnb-legend">'
        + "".join(
            f'<span class="srnb-cmp-item srnb-cmp-{k}">{escape(v)}</span>' for k, v in MARK_LABELS.items()
        )
        + "<span>hover a chunk for its id</span></div>"
    )


def compare_html(cmp: Comparison, **_: Any) -> str:
    """Self-contained static HTML of a Comparison (no script)."""
    first = cmp.first_divergence.stage if cmp.first_divergence else None
    la, lb = (esc(x, 200) for x in cmp.labels)
    grid_head = (
        f'<div class="srnb-cmp-row srnb-cmp-cols"><div></div><div class="srnb-col-h">{la}</div>'
        f'<div class="srnb-col-h">{lb}</div></div>'
    )
    rows = "".join(_row(r, r.stage == first) for r in cmp.rows)
    return (
        f'<div class="{ROOT_CLASS}" dir="ltr"><style>{compare_css()}</style>'
        f"{_header(cmp)}{_banner(cmp)}{_legend()}"
        f'<div class="srnb-cmp-grid">{grid_head}{rows}</div>{_config(cmp)}</div>'
    )


def _compare_widget(obj: object) -> Any:
    from selfrag_nb.display.compare_widget import CompareWidget

    return CompareWidget(obj)


faces.register(Comparison, text=compare_text, html=compare_html, widget=_compare_widget)
