"""The Rerank card (a view tree): a before/after slope chart and a table.

    Rerank(before, after, scores, reasons, refs)
      -> banner when the previous order was kept (fallback)
      -> note when a superseded document comes first: rerankers order by
         relevance to the question and do not read document status
      -> legend: the three numbers a chunk carries, and how they map
           #n   retrieval rank (the search's order)
           1.   place before / after reranking
           [n]  evidence number: what Assess and Generate cite (the order after reranking)
      -> bump_svg: one line per chunk from its place before to its place
         after; dropped chunks dashed; each label names the chunk distinctly
         (file › last heading, "(chunk k)" when still equal; ⚠ when the
         document is superseded), with a <title> naming source and id
      -> table: chunk (rank, file, heading path, trust flags) · before ·
         after · move · [n] · reranker score (higher = better, its own scale)
         · why (the reranker's reason, when it gave one)

Labels are cut with an ellipsis to fit the chart; the table shows them whole.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display.cards import STATIC_MAX_ITEMS, Ctx, badge, banner, card, esc, table
from selfrag_nb.display.tree import Node, h
from selfrag_nb.trace import Rerank

#: Slope chart geometry (px): label columns either side of the lines.
WIDTH, LEFT_X, RIGHT_X, ROW_H, TOP = 700, 290, 370, 20, 22
#: Characters of a chunk's name that fit a label column at 11 px (after its numbers).
LABEL_CHARS = 36
#: What the reranker's score is, next to the number.
SCORE_NOTE = (
    "the reranker's own scale: higher = more relevant; not comparable with grades (0–100) or search scores"
)

#: Why a superseded document can come first (the rerank card's banner says it).
SUPERSEDED_NOTE = (
    "the reranker orders chunks by relevance to the question and does not read document "
    "status, so a superseded version can outrank the current one (Assess and Generate see the flag)."
)


def _fit(file: str, head: str, n: int) -> str:
    """``file › head`` in ``n`` characters: the heading (what tells chunks of one
    file apart) is kept, the file name is cut first."""
    text = f"{file} › {head}" if head else file
    if len(text) <= n:
        return text
    if head and len(head) < n - 8:
        room = n - len(head) - 3
        return f"{file[: room - 1]}… › {head}"
    return text[: n - 1] + "…"


def chart_labels(r: Rerank, ctx: Ctx) -> dict[str, str]:
    """A distinct short name per chunk: file › last heading, with ``(chunk k)``
    when two are still equal (several chunks of one section)."""
    ids = list(dict.fromkeys([*r.before, *r.after]))
    out: dict[str, str] = {}
    for c in ids:
        name = ctx.name(c)
        if name is None:
            out[c] = ctx.short(c, LABEL_CHARS)
            continue
        head = str(name["path"]).split(" › ")[-1] if name["path"] else ""
        mark = "⚠ " if ctx.superseded(c) else ""
        out[c] = mark + _fit(str(name["file"]), head, LABEL_CHARS - len(mark))
    seen: dict[str, int] = {}
    for c in ids:
        if list(out.values()).count(out[c]) > 1:
            seen[out[c]] = k = seen.get(out[c], 0) + 1
            out[c] = f"{out[c]} (chunk {k})"
    return out


def _label(ctx: Ctx, chunk_id: str, text: str, x: int, y: int, *, anchor: str | None = None) -> Node:
    name = ctx.name(chunk_id)
    tip = f"{name['source']} · {name['path']} · chunk {chunk_id}" if name else f"chunk {chunk_id}"
    cls = "srnb-svg-label srnb-svg-bad" if ctx.superseded(chunk_id) else "srnb-svg-label"
    # The tooltip sits beside the label in a <g>, so it is never part of the label's text.
    return h("g", "", h("title", "", tip[:500]), h("text", cls, text, x=x, y=y, text_anchor=anchor))


def _rank(ctx: Ctx, chunk_id: str) -> str:
    name = ctx.name(chunk_id)
    return f"#{name['rank']} " if name and name["rank"] else ""


def _evidence(ctx: Ctx, chunk_id: str) -> str:
    n = ctx.evidence_no.get(chunk_id)
    return f"[{n}] " if n else ""


def bump_svg(r: Rerank, ctx: Ctx) -> Node:
    """Before/after order as a slope chart: one line per chunk, dropped chunks dashed.
    Left labels: place before · retrieval rank · name; right: place after · [n] · name."""
    n = min(max(len(r.before), len(r.after), 1), 50)
    lx, rx = LEFT_X, RIGHT_X
    height = TOP + n * ROW_H + 6
    after_pos = {c: i for i, c in enumerate(r.after)}
    names = chart_labels(r, ctx)
    heads = [
        ("before (#retrieval rank)", lx, "end"),
        ("after ([evidence number])" if ctx.evidence_no else "after", rx, None),
    ]
    parts = [h("text", "srnb-svg-label", t, x=x, y=14, text_anchor=a, font_weight=600) for t, x, a in heads]
    for i, c in enumerate(r.before[:n]):
        y = TOP + i * ROW_H + 10
        parts.append(_label(ctx, c, f"{i + 1}. {_rank(ctx, c)}{names[c]}", lx - 8, y + 4, anchor="end"))
        j = after_pos.get(c)
        if j is not None and j < n:
            y2 = TOP + j * ROW_H + 10
            parts.append(h("path", "srnb-svg-line", d=f"M{lx} {y} C{lx + 40} {y} {rx - 40} {y2} {rx} {y2}"))
        else:
            parts.append(h("path", "srnb-svg-line srnb-svg-drop", d=f"M{lx} {y} L{lx + 30} {y}"))
    for j, c in enumerate(r.after[:n]):
        parts.append(_label(ctx, c, f"{j + 1}. {_evidence(ctx, c)}{names[c]}", rx + 8, TOP + j * ROW_H + 14))
    return h(
        "svg",
        "srnb-svg",
        parts,
        role="img",
        aria_label="rerank order before and after",
        viewBox=f"0 0 {WIDTH} {height}",
        width=WIDTH,
        height=height,
        xmlns="http://www.w3.org/2000/svg",
    )


def _move(i: int | None, j: int | None) -> Any:
    if i is None:
        return "new"
    if j is None:
        return h("span", "srnb-muted", "✗ dropped")
    if j < i:
        return f"↑ {i - j}"
    if j > i:
        return f"↓ {j - i}"
    return "= same"


def _legend(ctx: Ctx) -> Node:
    cited = "[n] evidence number cited by Assess and Generate (the order after reranking)"
    parts = ["#n retrieval rank (the search's order)", "1. 2. … place before → after reranking"]
    return h(
        "div", "srnb-legend", [h("span", "", x) for x in [*parts, cited if ctx.evidence_no else None] if x]
    )


def _num(text: str) -> Node:
    return h("td", "srnb-r srnb-num", text)


def rerank_card(r: Rerank, ctx: Ctx) -> Node:
    first_superseded = r.after and ctx.superseded(r.after[0])
    before_pos = {c: i for i, c in enumerate(r.before)}
    after_pos = {c: i for i, c in enumerate(r.after)}
    why = bool(r.reasons)
    cited = bool(ctx.evidence_no)
    rows = []
    for c in [*r.before, *(c for c in r.after if c not in before_pos)][:STATIC_MAX_ITEMS]:
        i, j, score = before_pos.get(c), after_pos.get(c), r.scores.get(c)
        cells = [
            h("td", "", ctx.label(c)),
            *(_num("—" if k is None else str(k + 1)) for k in (i, j)),
            h("td", "srnb-nowrap", _move(i, j)),
            _num(_evidence(ctx, c).strip() or "—") if cited else None,
            _num("—" if score is None else f"{score:.3g}"),
            h("td", "", esc(r.reasons.get(c, ""), 500)) if why else None,
        ]
        rows.append(h("tr", "", cells))
    heads = [
        "chunk (#retrieval rank)",
        h("th", "srnb-r", "before"),
        h("th", "srnb-r", "after"),
        "move",
        h("th", "srnb-r", "[n] cited as") if cited else None,
        h("th", "srnb-r", "reranker score", title=SCORE_NOTE),
        "why (reranker)" if why else None,
    ]
    fallback = [h("strong", "", "fallback: previous order kept"), " — ", esc(r.fallback, 2000)]
    superseded = [h("strong", "", "⚠ a superseded document ranks first: "), SUPERSEDED_NOTE]
    said = "scores, no reasons" if r.scores else "an order, no scores or reasons"
    gave = h("div", "srnb-muted", f"the reranker gave {said}") if not why and r.before else None
    body = [
        banner("bad", fallback) if r.fallback else banner("", superseded) if first_superseded else None,
        _legend(ctx),
        bump_svg(r, ctx),
        table("srnb-table", heads, rows),
        h("div", "srnb-meta", f"reranker score: {SCORE_NOTE}"),
        None if r.fallback else gave,
    ]
    tag = badge("fallback", "bad") if r.fallback else badge(f"{len(r.before)} → {len(r.after)}", "info")
    extra = (["by ", esc(r.reranker or "unknown reranker", 200)], f"keep {r.keep}")
    return card(r, tag, body, extra, key=ctx.key)
