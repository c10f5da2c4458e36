"""Faces of a Comparison (selfrag_nb.comparison): text summary and static HTML.

    compare_text(cmp)   'Comparison "A" vs "B": first divergence at Rerank (rerank order): ...'
                        then one line per stage ("= summary" when the same, "≠ what
                        changed" when not, "·" when it ran on neither side), then
                        the config entries that differ
    compare_tree(cmp)   <div class="srnb-root srnb-cmp tex2jax_ignore mathjax_ignore">
                          header (question(s), the two labels with their outcomes)
                          first-divergence banner (or "no divergence")
                          one row per stage in flow order: title | left | right,
                            what changed across both columns; the first divergent
                            row is marked srnb-cmp-first and its details are open
                          config differences: key | left | right
                        </div>                 compare_html(cmp): its static page
    registered: faces.register(Comparison, text, html, widget=CompareWidget)

Chunk ids go in ``title`` attributes (hover), never as the visible name. No
<script>; expanding uses <details>.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.comparison import Comparison, Item, Side, StageRow
from selfrag_nb.display import faces
from selfrag_nb.display.cards import badge, banner, block, card_head, details, esc, flags, root, table
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.markup import plural
from selfrag_nb.display.names import doc_flags
from selfrag_nb.display.tables import tr
from selfrag_nb.display.text import one_line
from selfrag_nb.display.tree import Node, h, to_page

#: The root element's classes: the shared look, this view, and MathJax opt-out.
ROOT_CLASS = "srnb-root srnb-cmp tex2jax_ignore mathjax_ignore"

#: How an item relates to the other side, as the legend and the hover say it.
MARK_LABELS = {
    "only": "only on this side",
    "moved": "other position there",
    "changed": "other score / verdict there",
}


def compare_css() -> str:
    """The shared stylesheet followed by the comparison's own, comments stripped."""
    return stylesheet("trace.css", "compare.css")


# ------------------------------------------------------------------ text


def compare_text(cmp: Comparison) -> str:
    la, lb = (one_line(x, 40) for x in cmp.labels)
    first = cmp.first_divergence
    if first is None:
        verdict = "no divergence, every stage matches"
    else:
        verdict = f"first divergence at {first.title} ({first.kind}): {one_line(first.what, 160)}"
    lines = [f'Comparison "{la}" vs "{lb}": {verdict}']
    for r in cmp.rows:
        if not (r.left.ran or r.right.ran):
            lines.append(f"  · {r.title:<9} ran on neither side")
        elif r.same:
            lines.append(f"  = {r.title:<9} {one_line(r.left.summary, 100)}")
        else:
            lines.append(f"  ≠ {r.title:<9} {one_line(r.what, 140)}")
    shown = "; ".join(f"{c.key} {one_line(c.left, 30)} → {one_line(c.right, 30)}" for c in cmp.config[:6])
    more = f" (and {len(cmp.config) - 6} more)" if len(cmp.config) > 6 else ""
    lines.append(f"  config: {shown}{more}" if cmp.config else "  config: same")
    return "\n".join(lines)


# ------------------------------------------------------------------ tree


def _item(it: Item) -> Node:
    cls = "srnb-cmp-item" + (f" srnb-cmp-{it.mark}" if it.mark else "")
    tips = [f"chunk {it.chunk_id}" if it.chunk_id else "", MARK_LABELS[it.mark] if it.mark else ""]
    tip = " · ".join(filter(None, tips))[:500] or None
    return h("li", cls, esc(it.text, 2_000), flags(doc_flags(it.doc)), title=tip)


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


def _side(side: Side, stage: str, open_: bool, key: str) -> Node:
    if not side.ran:
        return h("div", "srnb-cmp-cell srnb-cmp-none", h("span", "srnb-muted", "did not run"))
    body = [
        h("ul", "srnb-cmp-items", [_item(i) for i in side.items]) if side.items else None,
        block(side.text, cls="srnb-block srnb-cmp-text") if side.text else None,
    ]
    summary = DETAILS.get(stage, "details")
    more = details(summary, body, open=open_, key=f"cmp-{stage}-{key}") if any(body) else None
    return h("div", "srnb-cmp-cell", h("div", "srnb-cmp-sum", esc(side.summary, 500)), more)


def _row(r: StageRow, first: bool) -> Node:
    if not (r.left.ran or r.right.ran):
        state, tag = "srnb-cmp-skip", badge("ran on neither side")
    elif r.same:
        state, tag = "srnb-cmp-same", badge("= same", "ok")
    elif first:
        state, tag = "srnb-cmp-diff srnb-cmp-first", badge("≠ first divergence", "bad")
    else:
        state, tag = "srnb-cmp-diff", badge("≠ differs", "warn")
    stage = h(
        "div", "srnb-cmp-stage", h("span", "srnb-stage", r.title), " ", tag, h("div", "srnb-meta", r.kind)
    )
    sides = [_side(r.left, r.stage, first, "a"), _side(r.right, r.stage, first, "b")]
    what = h("div", "srnb-cmp-what", esc(r.what, 2_000)) if r.what else None
    return h("section", f"srnb-cmp-row {state}", stage, sides, what, data_stage=r.stage)


def _header(cmp: Comparison) -> Node:
    qa, qb = cmp.questions
    if qa == qb:
        q: list[Any] = [h("div", "srnb-q", esc(qa, 2_000), dir="auto")]
    else:
        q = [
            h("div", "srnb-q", h("span", "srnb-label", esc(lab, 200)), esc(x, 2_000), dir="auto")
            for lab, x in zip(cmp.labels, cmp.questions, strict=True)
        ]
    sides = [
        [
            h("span", "srnb-meta", "vs") if i else None,
            h("span", "srnb-cmp-label", esc(lab, 200)),
            " ",
            badge(out, "info") if out else badge("in progress"),
        ]
        for i, (lab, out) in enumerate(zip(cmp.labels, cmp.outcomes, strict=True))
    ]
    return h("div", "srnb-head", q, h("div", "srnb-totals", sides))


def _banner(cmp: Comparison) -> Node:
    first = cmp.first_divergence
    if first is None:
        lead = h("strong", "", "No divergence:")
        return banner("", lead, " every stage matches.", cls="srnb-cmp-banner srnb-cmp-nodiff")
    lead = h("strong", "", f"First divergence: {first.title}")
    return banner("bad", lead, f" ({first.kind}) — ", esc(first.what, 2_000), cls="srnb-cmp-banner")


def _config(cmp: Comparison) -> Node:
    n = len(cmp.config)
    count = badge(plural(n, "difference"), "warn") if n else badge("same", "ok")
    rows = [
        tr("", h("td", "srnb-id", esc(c.key, 200)), esc(c.left, 2000), esc(c.right, 2000)) for c in cmp.config
    ]
    heads = ["setting", *(esc(x, 200) for x in cmp.labels)]
    diffs = table("srnb-table", heads, rows) if n else None
    return h("section", "srnb-card srnb-cmp-config", card_head("Configuration", count), diffs)


def _legend() -> Node:
    marks = [h("span", f"srnb-cmp-item srnb-cmp-{k}", v) for k, v in MARK_LABELS.items()]
    return h("div", "srnb-legend", marks, h("span", "", "hover a chunk for its id"))


def compare_tree(cmp: Comparison) -> Node:
    """The comparison's one view tree (root included): both faces serialise it."""
    first = cmp.first_divergence.stage if cmp.first_divergence else None
    cols = [h("div", "srnb-col-h", esc(x, 200)) for x in cmp.labels]
    grid_head = h("div", "srnb-cmp-row srnb-cmp-cols", h("div", ""), cols)
    rows = [_row(r, r.stage == first) for r in cmp.rows]
    grid = h("div", "srnb-cmp-grid", grid_head, rows)
    return root(ROOT_CLASS, _header(cmp), _banner(cmp), _legend(), grid, _config(cmp))


def compare_html(cmp: Comparison, **_: Any) -> str:
    """Self-contained static HTML of a Comparison (no script): the tree, its
    stylesheet inlined as the root's first child."""
    return to_page(compare_tree(cmp), compare_css())


def _compare_widget(obj: object) -> Any:
    from selfrag_nb.display.compare_widget import CompareWidget

    return CompareWidget(obj)


faces.register(Comparison, text=compare_text, tree=compare_tree, html=compare_html, widget=_compare_widget)
