"""The Rerank card (static HTML): a before/after slope chart and a table.

    Rerank(before, after, scores, reasons, refs)
      -> banner when the previous order was kept (fallback)
      -> bump_svg: one line per chunk from its place before to its place
         after; dropped chunks dashed; labels are file names (⚠ when the
         document is superseded), each with a <title> naming source and id
      -> table: chunk (rank, file, heading path, trust flags) · before ·
         after · move · score · why (the reranker's reason, when it gave one)

Labels are cut with an ellipsis to fit the chart; the table shows them whole.
"""

from __future__ import annotations

from selfrag_nb.display.cards import Ctx, badge, card, fold
from selfrag_nb.display.markup import attr, esc, escape
from selfrag_nb.trace import Rerank

__all__ = ["bump_svg", "rerank_card"]

#: Slope chart geometry (px): label columns either side of the lines.
WIDTH, LEFT_X, RIGHT_X, ROW_H, TOP = 640, 250, 330, 20, 22
#: Characters of a label that fit a label column at 11 px.
LABEL_CHARS = 34


def _label(ctx: Ctx, chunk_id: str, xy: tuple[int, int], i: int, anchor: str) -> str:
    x, y = xy
    name = ctx.name(chunk_id)
    text = f"{i}. {ctx.short(chunk_id, LABEL_CHARS)}"
    bad = name is not None and any(tone == "bad" for _, tone, _ in name["flags"])
    tip = f"{name['source']} · {name['path']} · chunk {chunk_id}" if name else f"chunk {chunk_id}"
    cls = "srnb-svg-label srnb-svg-bad" if bad else "srnb-svg-label"
    end = ' text-anchor="end"' if anchor == "end" else ""
    # The tooltip sits beside the label in a <g>, so it is never part of the label's text.
    return f'<g><title>{attr(tip)}</title><text class="{cls}" x="{x}" y="{y}"{end}>{escape(text)}</text></g>'


def bump_svg(r: Rerank, ctx: Ctx) -> str:
    """Before/after order as a slope chart: one line per chunk, dropped chunks dashed."""
    n = min(max(len(r.before), len(r.after), 1), 50)
    lx, rx = LEFT_X, RIGHT_X
    height = TOP + n * ROW_H + 6
    after_pos = {c: i for i, c in enumerate(r.after)}
    parts = [
        f'<svg class="srnb-svg" role="img" aria-label="rerank order before and after" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text class="srnb-svg-label" x="{lx}" y="14" text-anchor="end" font-weight="600">before</text>',
        f'<text class="srnb-svg-label" x="{rx}" y="14" font-weight="600">after</text>',
    ]
    for i, c in enumerate(r.before[:n]):
        y = TOP + i * ROW_H + 10
        parts.append(_label(ctx, c, (lx - 8, y + 4), i + 1, "end"))
        j = after_pos.get(c)
        if j is not None and j < n:
            y2 = TOP + j * ROW_H + 10
            parts.append(
                f'<path class="srnb-svg-line" d="M{lx} {y} C{lx + 40} {y} {rx - 40} {y2} {rx} {y2}"/>'
            )
        else:
            parts.append(f'<path class="srnb-svg-line srnb-svg-drop" d="M{lx} {y} L{lx + 30} {y}"/>')
    for j, c in enumerate(r.after[:n]):
        parts.append(_label(ctx, c, (rx + 8, TOP + j * ROW_H + 14), j + 1, "start"))
    parts.append("</svg>")
    return "".join(parts)


def _move(i: int | None, j: int | None) -> str:
    if i is None:
        return "new"
    if j is None:
        return '<span class="srnb-muted">✗ dropped</span>'
    if j < i:
        return f"↑ {i - j}"
    if j > i:
        return f"↓ {j - i}"
    return "= same"


def rerank_card(r: Rerank, ctx: Ctx) -> str:
    body = ""
    if r.fallback:
        body += (
            f'<div class="srnb-banner srnb-banner-bad"><strong>fallback: previous order kept</strong> — '
            f"{esc(r.fallback, 2000)}</div>"
        )
    body += bump_svg(r, ctx)
    before_pos = {c: i for i, c in enumerate(r.before)}
    after_pos = {c: i for i, c in enumerate(r.after)}
    why = bool(r.reasons)
    rows = []
    for c in [*r.before, *(c for c in r.after if c not in before_pos)]:
        i, j = before_pos.get(c), after_pos.get(c)
        score = r.scores.get(c)
        rows.append(
            f"<tr><td>{ctx.label(c)}</td>"
            f'<td class="srnb-r srnb-num">{"—" if i is None else i + 1}</td>'
            f'<td class="srnb-r srnb-num">{"—" if j is None else j + 1}</td><td class="srnb-nowrap">{_move(i, j)}</td>'
            f'<td class="srnb-r srnb-num">{"—" if score is None else f"{score:.3g}"}</td>'
            + (f"<td>{esc(r.reasons.get(c, ''), 500)}</td>" if why else "")
            + "</tr>"
        )
    table = (
        '<table class="srnb-table"><thead><tr><th>chunk</th><th class="srnb-r">before</th>'
        '<th class="srnb-r">after</th><th>move</th><th class="srnb-r">score</th>'
        + ("<th>why (reranker)</th>" if why else "")
        + "</tr></thead><tbody>"
    )
    body += fold(rows, "chunks", wrap=(table, "</tbody></table>"))
    if not why and not r.fallback and r.before:
        body += '<div class="srnb-muted">the reranker gave scores, no reasons</div>'
    tag = badge(
        "fallback" if r.fallback else f"{len(r.before)} → {len(r.after)}", "bad" if r.fallback else "info"
    )
    return card(r, tag, body, (f"by {esc(r.reranker or 'unknown reranker', 200)}", f"keep {r.keep}"))
