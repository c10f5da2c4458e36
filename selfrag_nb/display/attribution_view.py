"""Static faces of an Attribution (and its AttributionPlan): which chunk each claim stands on.

    Attribution -> attribution_text(a)   one line: "attribution: 5 claims × 4 chunks, 3 decisive cells"
                                         (or "attribution: nothing to attribute (<reason>)")
                -> attribution_html(a)   a card:
                     head     counts, verify calls, model, wall time
                     matrix   claims (rows) x chunks (columns, [n] and document name,
                              superseded flagged); each cell the claim's verdict
                              without that chunk, decisive cells marked
                     claims   one <details> per claim, the matrix row links to it:
                              its sentence in the answer (highlighted), its verdict,
                              the evidence spans it quoted and what leaving each
                              sentence out did
AttributionPlan -> plan_text / plan_html  the calls and estimated tokens, before running

Static only (no widget). Self-contained on purpose: its own stylesheet and
markup, only ``markup``'s escaping helpers shared, so it moves to another
display layer as it is. Claims, spans and document names come from models
and documents: every one goes through ``markup.esc`` / ``attr`` / ``marked``.
"""

from __future__ import annotations

import hashlib

from selfrag_nb.attribution import Attribution, AttributionPlan, ClaimAttribution
from selfrag_nb.display import faces
from selfrag_nb.display.markup import attr, esc, fmt_ms, fmt_tokens, marked, neutralize

__all__ = ["attribution_html", "attribution_text", "plan_html", "plan_text"]

ROOT = "srnb-root srnb-attr tex2jax_ignore mathjax_ignore"
#: Characters of a claim shown in its matrix row (the whole claim is in its details).
_ROW_CHARS = 90
#: effect -> (symbol, CSS class, words for the tooltip)
_CELL = {
    "decisive": ("●", "srnb-attr-decisive", "lost without this chunk"),
    "weakened": ("◐", "srnb-attr-weakened", "only partly supported without this chunk"),
    "strengthened": ("▲", "srnb-attr-strengthened", "better supported without this chunk"),
    "unaffected": ("·", "srnb-attr-unaffected", "unaffected"),
    "unknown": ("?", "srnb-attr-unknown", "not known: the call failed or did not name this claim"),
}
_VERDICT_CLASS = {"supported": "srnb-attr-ok", "partial": "srnb-attr-warn", "unsupported": "srnb-attr-bad"}

_CSS = (
    ".srnb-attr{--a-border:var(--jp-border-color2,rgba(128,128,128,.35));"
    "--a-muted:var(--jp-content-font-color2,rgba(128,128,128,.95));--a-panel:rgba(128,128,128,.07);"
    "--a-ok:rgba(45,164,78,.16);--a-warn:rgba(212,167,44,.2);--a-bad:rgba(229,83,75,.22);"
    "--a-info:rgba(68,147,248,.14);font-family:var(--jp-ui-font-family,system-ui,sans-serif);"
    "font-size:13px;line-height:1.5;max-width:980px;unicode-bidi:isolate}"
    ".srnb-attr *{box-sizing:border-box}"
    ".srnb-attr-card{border:1px solid var(--a-border);border-radius:8px;padding:8px 12px;margin:8px 0}"
    ".srnb-attr-h{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:baseline;margin-bottom:6px}"
    ".srnb-attr-title{font-weight:600;font-size:14px}.srnb-attr-meta{color:var(--a-muted);font-size:12px}"
    ".srnb-attr-reason{border-left:4px solid #4493f8;background:var(--a-info);padding:4px 10px;border-radius:4px}"
    ".srnb-attr-matrix{border-collapse:collapse;margin:4px 0;font-size:12.5px}"
    ".srnb-attr-matrix th,.srnb-attr-matrix td{border:1px solid var(--a-border);padding:2px 6px;vertical-align:top}"
    ".srnb-attr-matrix thead th{font-weight:600;max-width:12em;overflow-wrap:anywhere}"
    ".srnb-attr-matrix tbody th{font-weight:400;text-align:left;max-width:34em}"
    ".srnb-attr-matrix td{text-align:center;vertical-align:middle;min-width:3.2em}"
    ".srnb-attr-decisive{background:var(--a-bad);font-weight:700}.srnb-attr-weakened{background:var(--a-warn)}"
    ".srnb-attr-strengthened{background:var(--a-info)}.srnb-attr-unaffected{color:var(--a-muted)}"
    ".srnb-attr-unknown{color:var(--a-muted);font-style:italic}"
    ".srnb-attr-v{display:inline-block;border:1px solid var(--a-border);border-radius:999px;padding:0 7px;"
    "font-size:11px;font-weight:600;white-space:nowrap}"
    ".srnb-attr-ok{background:var(--a-ok)}.srnb-attr-warn{background:var(--a-warn)}.srnb-attr-bad{background:var(--a-bad)}"
    ".srnb-attr-stale{color:#e5534b;font-weight:600}"
    ".srnb-attr details{border:1px solid var(--a-border);border-radius:6px;margin:4px 0;padding:2px 8px}"
    ".srnb-attr summary{cursor:pointer}"
    ".srnb-block{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--a-panel);border-radius:6px;"
    "padding:6px 10px;margin:4px 0;max-height:320px;overflow-y:auto}"
    ".srnb-attr-mark{background:var(--a-warn);border-bottom:2px solid #d4a72c}"
    ".srnb-attr-legend{color:var(--a-muted);font-size:11.5px}"
    ".srnb-trunc{color:var(--a-muted);font-style:italic;font-size:11.5px}"
    ".srnb-ctl{font-family:monospace;font-size:10px;border:1px dotted #e5534b;border-radius:3px;padding:0 2px;color:#e5534b}"
)


def _uid(a: Attribution | AttributionPlan) -> str:
    """A stable id prefix for the in-page links (the same record draws the same HTML)."""
    return "srnb-attr-" + hashlib.sha256(a.model_dump_json().encode("utf-8")).hexdigest()[:10]


def _wrap(body: str) -> str:
    return f'<div class="{ROOT}" dir="ltr"><style>{_CSS}</style><section class="srnb-attr-card">{body}</section></div>'


# ------------------------------------------------------------------ text


def attribution_text(a: Attribution) -> str:
    """One line: claims x chunks and the decisive cells, or why there is nothing."""
    if a.reason:
        return neutralize(f"attribution: nothing to attribute ({a.reason})")
    n = a.decisive_cells
    return (
        f"attribution: {len(a.claims)} claim{'s' * (len(a.claims) != 1)} × {len(a.chunks)} "
        f"chunk{'s' * (len(a.chunks) != 1)}, {n} decisive cell{'s' * (n != 1)}"
    )


def plan_text(p: AttributionPlan) -> str:
    """One line: the calls and tokens an attribution will cost."""
    if p.reason:
        return neutralize(f"attribution plan: nothing to attribute ({p.reason})")
    price = "free" if p.offline else ("price unknown" if p.cost is None else f"about ${p.cost:.4f}")
    confirm = "; needs confirm=True" if p.needs_confirmation else ""
    return neutralize(
        f"attribution plan: {p.calls} verify call{'s' * (p.calls != 1)} ({p.chunk_ablations} chunks, "
        f"{p.sentence_ablations} sentences left out; {p.collapsed} identical made once), "
        f"about {p.tokens_in:,} tokens in, model {p.model!r} ({price}){confirm}"
    )


# ------------------------------------------------------------------ HTML


def _head(a: Attribution) -> str:
    t = a.totals
    calls = f"{t.model_calls} verify call{'s' * (t.model_calls != 1)}"
    tokens = f" · {fmt_tokens(t.tokens_in)} tokens in" if t.tokens_in else ""
    return (
        '<div class="srnb-attr-h"><span class="srnb-attr-title">Attribution</span>'
        f'<span class="srnb-attr-meta">{esc(attribution_text(a).removeprefix("attribution: "), 300)}'
        f" · {calls}{tokens} · model {esc(a.model, 120)} · {fmt_ms(a.wall_ms)}</span></div>"
    )


def _column(a: Attribution, chunk_id: str) -> str:
    c = a.chunk(chunk_id)
    stale = ' <span class="srnb-attr-stale" title="superseded document">⚠</span>' if c.superseded else ""
    tip = attr(f"{c.ref.source} · {c.ref.heading} · chunk {c.chunk_id}")
    return f'<th scope="col" title="{tip}">[{c.index}] {esc(c.name, 80)}{stale}</th>'


def _row(a: Attribution, i: int, row: ClaimAttribution, uid: str) -> str:
    short = row.text if len(row.text) <= _ROW_CHARS else row.text[:_ROW_CHARS] + "…"
    cells = []
    for cell in row.cells:
        symbol, cls, words = _CELL[cell.effect]
        name = a.chunk(cell.chunk_id).name
        tip = attr(f"without {name}: {cell.verdict or 'unknown'} ({words})")
        cells.append(f'<td class="{cls}" title="{tip}" data-effect="{cell.effect}">{symbol}</td>')
    verdict = f'<span class="srnb-attr-v {_VERDICT_CLASS[row.verdict]}">{row.verdict}</span>'
    return (
        f'<tr><th scope="row"><a href="#{uid}-c{i}">{i + 1}.</a> {esc(short, _ROW_CHARS + 1)} '
        f"{verdict}</th>{''.join(cells)}</tr>"
    )


def _matrix(a: Attribution, uid: str) -> str:
    head = "".join(_column(a, c.chunk_id) for c in a.chunks)
    rows = "".join(_row(a, i, row, uid) for i, row in enumerate(a.claims))
    legend = ", ".join(f"{sym} {effect}" for effect, (sym, _, _) in _CELL.items())
    return (
        f'<table class="srnb-attr-matrix"><thead><tr><th scope="col">claim · verdict with every chunk</th>'
        f"{head}</tr></thead><tbody>{rows}</tbody></table>"
        f'<div class="srnb-attr-legend">each cell: the claim without that chunk — {legend}</div>'
    )


def _details(a: Attribution, i: int, row: ClaimAttribution, uid: str) -> str:
    if 0 <= row.start < row.end <= len(a.answer):
        sentence = marked(a.answer, [(row.start, row.end, '<mark class="srnb-attr-mark">', "</mark>")])
    else:
        sentence = marked(row.text, [])
    spans = []
    for q in row.evidence:
        name = a.chunk(q.chunk_id).name if any(c.chunk_id == q.chunk_id for c in a.chunks) else q.chunk_id
        left_out = next((s for s in row.sentences if s.chunk_id == q.chunk_id and s.span == q.span), None)
        effect = (
            f" · without this sentence: {esc(left_out.verdict or 'unknown', 20)} ({left_out.effect})"
            if left_out
            else ""
        )
        spans.append(f"<div>from {esc(name, 120)}{effect}</div>{marked(q.span, [])}")
    decisive = ", ".join(a.chunk(c).name for c in row.decisive) or "none"
    evidence = "".join(spans) or '<div class="srnb-attr-legend">the verifier quoted no evidence</div>'
    return (
        f'<details id="{uid}-c{i}"><summary>{i + 1}. <span class="srnb-attr-v {_VERDICT_CLASS[row.verdict]}">'
        f"{row.verdict}</span> {esc(row.text, 300)}</summary>"
        f"<div>in the answer:</div>{sentence}"
        f"<div>lost without: {esc(decisive, 600)}</div>"
        f"<div>evidence quoted:</div>{evidence}</details>"
    )


def attribution_html(a: Attribution) -> str:
    """Static HTML of an attribution (no script; every text escaped)."""
    if a.reason:
        return _wrap(
            '<div class="srnb-attr-h"><span class="srnb-attr-title">Attribution</span></div>'
            f'<div class="srnb-attr-reason">nothing to attribute: {esc(a.reason, 600)}</div>'
        )
    uid = _uid(a)
    details = "".join(_details(a, i, row, uid) for i, row in enumerate(a.claims))
    return _wrap(_head(a) + _matrix(a, uid) + details)


def plan_html(p: AttributionPlan) -> str:
    """Static HTML of an attribution plan: its one line, in a card."""
    return _wrap(
        '<div class="srnb-attr-h"><span class="srnb-attr-title">Attribution plan</span></div>'
        f"<div>{esc(plan_text(p).removeprefix('attribution plan: '), 1000)}</div>"
    )


faces.register(Attribution, text=attribution_text, html=attribution_html, widget=None)
faces.register(AttributionPlan, text=plan_text, html=plan_html, widget=None)
