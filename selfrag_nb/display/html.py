"""Static HTML views: no script, safe in nbconvert, GitHub and untrusted notebooks.

    static_html(obj)
      -> Ctx (chunk texts from the retrieval, support per generation attempt)
      -> one renderer per kind: Decision Rewrite Retrieval Grades Rerank
         Assessment Generation Support Usefulness Outcome Hits  (each -> one .srnb-card,
         built from cards.py: card, badge, meta, row, fold, bar, calls_view)
      -> Trace = header + every record's card in order + timeline/cost footer
      -> '<div class="srnb-root tex2jax_ignore mathjax_ignore" dir="ltr"><style>trace.css</style> ... </div>'

Safety rules every renderer follows (all text passes through markup.py's
``escape``, mostly via ``esc`` / ``block`` / ``marked``):

- ``html.escape(quote=True)`` on every piece of document, question or model text;
- zero-width and bidi control characters are shown as ``U+XXXX`` labels so
  right-to-left text cannot reorder the surrounding UI; inline text sits in
  ``<bdi>``, blocks carry ``dir="auto"``;
- texts longer than ``TEXT_LIMIT`` are cut, with a note saying so;
- no ``<script>``, no ``href``/``src``: URLs in data stay plain text;
- expanding uses ``<details>``; scores are CSS bars (inline ``width:%``) and
  the numbers are printed next to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from selfrag_nb.display.cards import (
    OFFLINE_NOTE,
    PAGE,
    STAGE_TITLES,
    STATIC_MAX_ITEMS,
    VERDICT_ICON,
    VERDICT_LABEL,
    Ctx,
    badge,
    band_of,
    bar,
    breakable,
    card,
    ctx_for,
    flags_html,
    fold,
    meta,
    offline_badge,
    outcome_tone,
    row,
)
from selfrag_nb.display.markup import (
    TEXT_LIMIT,
    block,
    cut,
    esc,
    escape,
    find_all,
    fmt_cost,
    fmt_ms,
    locate_span,
    marked,
    pct,
)
from selfrag_nb.display.names import chunk_name, search_ranks
from selfrag_nb.display.rerank_view import rerank_card
from selfrag_nb.display.text import trace_times
from selfrag_nb.errors import InputTypeError
from selfrag_nb.store.types import Hit, Hits
from selfrag_nb.trace import (
    USEFULNESS_WORDS,
    Assessment,
    Claim,
    Decision,
    Generation,
    Grades,
    Outcome,
    Rerank,
    Retrieval,
    Rewrite,
    Support,
    Trace,
    Usefulness,
)

__all__ = [
    "OFFLINE_NOTE",
    "PAGE",
    "RECORD_TYPES",
    "ROOT_CLASS",
    "STAGE_TITLES",
    "STATIC_MAX_ITEMS",
    "TEXT_LIMIT",
    "css",
    "render_body",
    "static_html",
]

#: Every view's root: our class plus the classes that tell MathJax (JupyterLab,
#: Notebook, nbconvert) to leave it alone, or "cost $0 -> $0" becomes maths.
ROOT_CLASS = "srnb-root tex2jax_ignore mathjax_ignore"

# ------------------------------------------------------------ records


def _decision(d: Decision, ctx: Ctx) -> str:
    verdict = badge("RETRIEVE" if d.retrieve else "NO RETRIEVE", "info" if d.retrieve else "ok")
    who = d.source + (f" ({d.rule})" if d.rule else "")
    body = row("reason", esc(d.reason)) + row("decided by", esc(who, 500))
    if d.summary:
        body += row("history summary", esc(d.summary))
    if d.cache_key:
        body += row("cache key", f'<span class="srnb-id">{esc(d.cache_key, 500)}</span>')
    return card(d, verdict, body, (f"by {escape(d.source)}",))


def _protected_ranges(text: str, spans: Sequence[str]) -> list[tuple[int, int, str, str]]:
    out = []
    for s in spans:
        for a, b in find_all(text, s):
            out.append((a, b, '<mark class="srnb-protect" title="protected span">', "</mark>"))
    return out


def _rewrite(r: Rewrite, ctx: Ctx) -> str:
    spans = [p.text for p in r.protected]
    original = r.queries[0] if r.queries else ""
    left = '<div class="srnb-col-h">original</div>' + marked(original, _protected_ranges(original, spans))
    rewrites = r.queries[1:]
    right = f'<div class="srnb-col-h">rewrites ({len(rewrites)})</div>'
    right += "".join(marked(q, _protected_ranges(q, spans)) for q in rewrites) or (
        '<div class="srnb-muted">none: the original question is searched alone</div>'
    )
    body = f'<div class="srnb-cols"><div>{left}</div><div>{right}</div></div>'
    if r.protected:
        body += row(
            "protected",
            " ".join(
                f'<mark class="srnb-protect">{esc(p.text, 300)}</mark> {meta(esc(p.kind, 50))}'
                for p in r.protected
            ),
        )
    if r.rejected:
        items = "".join(
            f'<li class="srnb-list-item">{badge("rejected", "bad")} {esc(x.text, 2000)} — {esc(x.reason, 1000)}'
            + (f" {meta('missing: ' + ', '.join(esc(m, 200) for m in x.missing))}" if x.missing else "")
            + "</li>"
            for x in r.rejected
        )
        body += f'<div class="srnb-col-h">rejected rewrites ({len(r.rejected)})</div><ul class="srnb-list">{items}</ul>'
    if r.reason:
        body += row("why", esc(r.reason))
    tag = badge("attempted" if r.attempted else "not attempted", "info" if r.attempted else "")
    return card(r, tag, body)


#: What each raw search score is, for the details of a hit.
SCORE_NAMES = {
    "vector": "vector similarity (1 − cosine distance)",
    "vector_distance": "cosine distance",
    "fts": "keyword score (BM25)",
    "hybrid": "fused score (reciprocal rank fusion of the two ranks)",
}


def _score_rows(scores: dict[str, float]) -> str:
    return "".join(
        row(SCORE_NAMES.get(k, k), f'<span class="srnb-num">{v:.3g}</span>')
        for k, v in sorted(scores.items())
    )


def _hit_item(h: Hit, i: int) -> str:
    n = chunk_name(h)
    # Per-leg ranks explain a fused order; a single-leg score is in list order already.
    how = search_ranks(h) or (f"score {h.score:.3g}" if h.score else "")
    summary = (
        f'<span class="srnb-hit-h"><span class="srnb-rank">#{h.rank or i}</span>'
        f'<span class="srnb-src">{breakable(n["file"], 300)}</span>'
        + (f'<span class="srnb-path">{esc(n["path"], 500)}</span>' if n["path"] else "")
        + flags_html(n["flags"])
        + (f'<span class="srnb-meta">{esc(how, 200)}</span>' if how else "")
        + "</span>"
    )
    return (
        f'<details class="srnb-details srnb-hit"><summary>{summary}</summary>'
        + row("source", breakable(h.source, 500))
        + row("chunk", f'<span class="srnb-id">{breakable(h.chunk_id, 300)}</span>')
        + row("document", f'<span class="srnb-id">{breakable(h.doc_id, 300)}</span>')
        + _score_rows(h.scores)
        + f"{block(h.text)}</details>"
    )


def _hits_list(hits: Sequence[Hit]) -> str:
    return fold([_hit_item(h, i) for i, h in enumerate(hits, 1)], "hits")


def _retrieval(r: Retrieval, ctx: Ctx) -> str:
    body = row("access filter", esc(r.access_filter or "none (every chunk visible)", 2000))
    body += row(
        "search",
        meta(
            esc(r.mode, 40),
            f"k={r.per_query_k} per query",
            f"cap {r.total_cap}",
            f"{r.duplicates_removed} duplicates removed",
            f"kb version {r.kb_version}" if r.kb_version is not None else "",
        ),
    )
    if r.per_query:
        items = "".join(
            f'<li class="srnb-list-item">{esc(q.query, 2000)} {meta(f"{len(q.chunk_ids)} chunks")}</li>'
            for q in r.per_query
        )
        body += f'<div class="srnb-col-h">per query</div><ul class="srnb-list">{items}</ul>'
    body += _hits_list(r.hits) if r.hits else '<div class="srnb-muted">no hits</div>'
    return card(r, badge(f"{len(r.hits)} hits", "info"), body, (esc(r.mode, 40),))


def _hits(h: Hits, ctx: Ctx) -> str:
    head = (
        '<div class="srnb-card-h"><span class="srnb-stage">Search</span>'
        + badge(f"{len(h.hits)} hits", "info")
        + meta(esc(h.mode, 40), f"k={h.k}", "query " + esc(h.query, 2000))
        + "</div>"
    )
    body = row("access filter", esc(h.access_filter or "none (every chunk visible)", 2000))
    body += _hits_list(h.hits) if h.hits else '<div class="srnb-muted">no hits</div>'
    return f'<section class="srnb-card srnb-card-search">{head}{body}</section>'


def _grades(g: Grades, ctx: Ctx) -> str:
    n_rel = sum(1 for x in g.items if x.relevant)
    legend = (
        f'<div class="srnb-legend"><span>bars: score 0-100</span>'
        f"<span>╎ {g.relevance_cutoff} relevance cutoff</span><span>╎ {g.high_relevance} high relevance</span>"
        f"<span>{badge('✓ relevant', 'ok')} {badge('✗ not relevant', 'bad')}</span></div>"
    )
    rows = []
    for x in g.items:
        hit = ctx.chunks.get(x.chunk_id)
        name = (
            ctx.label(x.chunk_id)
            if x.chunk_id in ctx.refs
            else f'<span class="srnb-src">{breakable(x.source or "?")}</span>'
        )
        notes = ""
        if x.key_info:
            notes += row("key info", esc(x.key_info, 4000))
        if x.gaps:
            notes += row("gaps", esc(x.gaps, 4000))
        if x.parse_status != "ok":
            notes += row("parse", badge(x.parse_status, "bad"))
        if hit is not None:
            notes += f'<details class="srnb-details"><summary>chunk</summary>{block(hit.text)}</details>'
        rel = badge("✓ relevant", "ok") if x.relevant else badge("✗ not relevant", "bad")
        rows.append(
            f'<div class="srnb-grade"><div class="srnb-grade-name">{name}</div>'
            f"{bar(x.score, x.band, (g.relevance_cutoff, g.high_relevance), f'score {x.score} (cutoff {g.relevance_cutoff}, high {g.high_relevance})')}"
            f'<div><span class="srnb-num">{x.score:>3}</span> {rel} {meta(esc(x.band, 20))}</div>'
            + (f'<div class="srnb-grade-notes">{notes}</div>' if notes else "")
            + "</div>"
        )
    best = max((x.score for x in g.items), default=None)
    body = legend + fold(rows, "grades")
    if g.kept:
        body += row("kept (by score)", ", ".join(ctx.label(k) for k in g.kept))
    tag = badge(f"{n_rel}/{len(g.items)} relevant", "ok" if n_rel else "bad")
    return card(
        g,
        tag,
        body,
        (
            f"cutoff {g.relevance_cutoff}",
            f"best {best}" if best is not None else "",
            f"concurrency {g.concurrency}",
        ),
    )


#: The outcome card's banner for reason_kind "model_error" (static/trace.js says the same).
MODEL_ERROR_BANNER = "model error: model calls failed, so the check was not made (not missing evidence)"
_ACTION_TONE = {"answer": "ok", "clarify": "warn", "refuse": "bad", "answer_without_evidence": "warn"}


def _assessment(a: Assessment, ctx: Ctx) -> str:
    body = row("why", esc(a.reason))
    if a.options:
        items = "".join(f'<li class="srnb-list-item">{esc(o, 2000)}</li>' for o in a.options)
        body += f'<div class="srnb-col-h">options to clarify</div><ul class="srnb-list">{items}</ul>'
    if a.conflict:
        body += row("conflict", esc(a.conflict))
    if a.applies:
        body += row("applies", esc(a.applies))
    if a.evidence:
        body += row("evidence", ", ".join(ctx.label(c) for c in a.evidence))
    tag = badge(a.action.replace("_", " ").upper(), _ACTION_TONE[a.action])
    return card(a, tag, body)


_CITE_RE = re.compile(r"\[(\d{1,3})\]")


def _answer_html(g: Generation, sup: Support | None) -> str:
    """The answer with claims highlighted by verdict (when verified) and
    citation markers styled; invalid citations get a wavy red underline."""
    text = g.answer
    bad = {c.marker for c in g.citations if not c.valid}
    ranges: list[tuple[int, int, str, str]] = []
    claimed: list[tuple[int, int]] = []
    if sup is not None:
        for i, c in enumerate(sup.claims, 1):
            span = _claim_span(text, c)
            if span is None:
                continue
            a, b = span
            err = " ⚠ citation" if c.citation_error else ""
            tip = escape(f"claim {i}: {VERDICT_LABEL[c.verdict]}{err}")
            ranges.append(
                (
                    a,
                    b,
                    f'<span class="srnb-claim srnb-v-{c.verdict}" title="{tip}">',
                    f'<sup class="srnb-claim-tag">{VERDICT_ICON[c.verdict]}{i}'
                    f"{'⚠' if c.citation_error else ''}</sup></span>",
                )
            )
            claimed.append((a, b))
    for m in _CITE_RE.finditer(text):
        if any(a <= m.start() < b for a, b in claimed):
            continue  # inside a claim: the claim's own span already escapes it
        cls = "srnb-cite srnb-cite-bad" if int(m.group(1)) in bad else "srnb-cite"
        tip = ' title="invalid citation"' if int(m.group(1)) in bad else ""
        ranges.append((m.start(), m.end(), f'<span class="{cls}"{tip}>', "</span>"))
    return marked(text, ranges, cls="srnb-block srnb-answer")


def _claim_span(answer: str, c: Claim) -> tuple[int, int] | None:
    if 0 <= c.start < c.end <= len(answer):
        return c.start, c.end
    found = find_all(answer, c.text.strip())
    return found[0] if found else None


def _legend() -> str:
    return (
        '<div class="srnb-legend">'
        + "".join(
            f'<span class="srnb-claim srnb-v-{v}">{VERDICT_ICON[v]} {VERDICT_LABEL[v]}</span>'
            for v in ("supported", "partial", "unsupported")
        )
        + "<span>⚠ citation error</span><span>[n] cited chunk</span></div>"
    )


def _generation(g: Generation, ctx: Ctx) -> str:
    sup = ctx.supports.get(g.attempt) if ctx.in_trace else None
    body = (_legend() if sup is not None else "") + _answer_html(g, sup)
    if g.citations:
        items = []
        for c in g.citations:
            flag = "" if c.valid else " " + badge("⚠ invalid citation", "bad")
            items.append(f'<li class="srnb-list-item">[{c.marker}] {ctx.label(c.chunk_id)}{flag}</li>')
        body += f'<div class="srnb-col-h">citations</div><ul class="srnb-list">{"".join(items)}</ul>'
    if g.evidence:
        shown = "".join(
            f'<li class="srnb-list-item">[{i}] {ctx.label(c)}</li>' for i, c in enumerate(g.evidence, 1)
        )
        body += f'<div class="srnb-col-h">evidence shown to the model</div><ul class="srnb-list">{shown}</ul>'

    n_bad = sum(1 for c in g.citations if not c.valid)
    badges = badge(g.mode, "info") + (badge(f"{n_bad} invalid citation(s)", "bad") if n_bad else "")
    return card(g, badges, body, (f"attempt {g.attempt}", f"{len(g.answer):,} chars"))


def _evidence_view(c: Claim, ctx: Ctx) -> str:
    if not c.evidence:
        return '<div class="srnb-muted">no supporting evidence found</div>'
    out = []
    for ev in c.evidence:
        hit = ctx.chunks.get(ev.chunk_id)
        head = f'<div class="srnb-label">evidence in {ctx.label(ev.chunk_id)}</div>'
        if hit is None:
            out.append(head + marked(ev.span, [(0, len(ev.span), '<mark class="srnb-mark">', "</mark>")]))
            continue
        where = locate_span(hit.text, ev.span, ev.start, ev.end)
        if where is None:
            out.append(
                head
                + '<div class="srnb-trunc">span not found in the chunk; quoted span:</div>'
                + block(ev.span)
                + block(hit.text)
            )
        else:
            a, b = where
            out.append(head + marked(hit.text, [(a, b, '<mark class="srnb-mark">', "</mark>")]))
    return "".join(out)


def _claim_item(c: Claim, i: int, ctx: Ctx) -> str:
    tone = {"supported": "ok", "partial": "warn", "unsupported": "bad"}[c.verdict]
    summary = (
        f'<span class="srnb-rank">{i}.</span>{badge(VERDICT_ICON[c.verdict] + " " + VERDICT_LABEL[c.verdict], tone)} '
        f'<span class="srnb-claim srnb-v-{c.verdict}">{esc(c.text, 4000)}</span>'
        + (f" {meta('cites ' + ', '.join(ctx.label(x, rank=False) for x in c.cited))}" if c.cited else "")
        + (f" {badge('⚠ citation error', 'bad')}" if c.citation_error else "")
    )
    body = ""
    if c.citation_error:
        body += f'<div class="srnb-banner srnb-banner-bad">⚠ {esc(c.citation_error, 2000)}</div>'
    body += _evidence_view(c, ctx)
    return f'<details class="srnb-details srnb-claim-d"><summary>{summary}</summary>{body}</details>'


def _support(s: Support, ctx: Ctx) -> str:
    counts = {v: sum(1 for c in s.claims if c.verdict == v) for v in VERDICT_ICON}
    errs = sum(1 for c in s.claims if c.citation_error)
    tone = {"ACCEPT": "ok", "ADD_DISCLAIMER": "warn", "REGENERATE": "bad"}[s.recommendation]
    conf = (
        f'<div class="srnb-grade"><div class="srnb-grade-name">overall confidence</div>'
        f"{bar(s.overall_confidence, band_of(s.overall_confidence), (50, 80), f'confidence {s.overall_confidence} of 100')}"
        f'<div><span class="srnb-num">{s.overall_confidence}</span></div></div>'
    )
    body = (
        _legend()
        + row(
            "claims",
            meta(
                f"{VERDICT_ICON['supported']} {counts['supported']} supported",
                f"{VERDICT_ICON['partial']} {counts['partial']} partial",
                f"{VERDICT_ICON['unsupported']} {counts['unsupported']} unsupported",
                f"⚠ {errs} citation error(s)" if errs else "",
            ),
        )
        + conf
        + fold([_claim_item(c, i, ctx) for i, c in enumerate(s.claims, 1)], "claims")
    )
    badges = badge(s.recommendation, tone) + (
        badge("fully supported", "ok") if s.is_fully_supported else badge("not fully supported", "warn")
    )
    return card(s, badges, body, (f"attempt {s.attempt}", f"confidence {s.overall_confidence}"))


#: Usefulness verdict -> (badge text, tone); trace.js keeps the same table (USEFUL), pinned by a test.
USEFUL_TONE = {
    v: (USEFULNESS_WORDS[v], tone) for v, tone in (("yes", "ok"), ("partly", "warn"), ("no", "bad"))
}


def _usefulness(u: Usefulness, ctx: Ctx) -> str:
    label, tone = USEFUL_TONE[u.verdict]
    score = (
        f'<div class="srnb-grade"><div class="srnb-grade-name">usefulness</div>'
        f"{bar(u.score, band_of(u.score), (50, 80), f'usefulness {u.score} of 100')}"
        f'<div><span class="srnb-num">{u.score}</span></div></div>'
    )
    body = row("why", esc(u.reason)) + (row("missing", esc(u.missing)) if u.missing else "") + score
    return card(u, badge(label, tone), body, (f"attempt {u.attempt}", f"score {u.score}"))


def _outcome(o: Outcome, ctx: Ctx) -> str:
    body = ""
    if o.deadline_exceeded:
        body += '<div class="srnb-banner srnb-banner-bad">deadline exceeded</div>'
    if o.reason_kind == "model_error":
        body += f'<div class="srnb-banner srnb-banner-bad">{MODEL_ERROR_BANNER}</div>'
    if o.disclaimer:
        body += f'<div class="srnb-banner"><strong>disclaimer:</strong> {esc(o.disclaimer)}</div>'
    label = (
        "refusal" if o.outcome == "refused" else "clarifying question" if o.outcome == "clarify" else "answer"
    )
    body += f'<div class="srnb-col-h">{label}</div>' + block(o.answer, cls="srnb-block srnb-answer")
    if o.reason:
        body += row("why", esc(o.reason))
    if o.dropped_claims:
        items = "".join(f'<li class="srnb-list-item">{esc(c, 2000)}</li>' for c in o.dropped_claims)
        body += f'<div class="srnb-col-h">dropped claims ({len(o.dropped_claims)})</div><ul class="srnb-list">{items}</ul>'
    if o.skipped:
        body += row("skipped (deadline)", esc(", ".join(o.skipped), 500))
    sup = max(ctx.supports.items())[1] if ctx.supports else None
    return card(o, badge(o.outcome, outcome_tone(o, sup)), body)


# --------------------------------------------------------------- trace


def _timeline(t: Trace) -> str:
    rows = t.stage_table()
    startup = sum(t.startup.values())
    # Start-up is its own first row, before the stages' clock: never a stage's bar.
    lead = [{"title": "Start-up", "latency_ms": startup}] if t.startup else []
    total = startup + sum(r["latency_ms"] for r in rows) or 1.0
    tl, start = [], 0.0
    for r in [*lead, *({"title": STAGE_TITLES[r["stage"]]} | r for r in rows)]:
        lat = float(r["latency_ms"])
        tl.append(
            f"<div>{escape(r['title'])}</div>"
            f'<div class="srnb-tl-track"><div class="srnb-tl-bar" style="left:{pct(100 * start / total)};'
            f'width:{pct(100 * lat / total)}"></div></div><div class="srnb-r srnb-num">{fmt_ms(lat)}</div>'
        )
        start += lat
    table_rows = "".join(
        f"<tr><td>{escape(STAGE_TITLES[r['stage']])}</td>"
        f'<td class="srnb-r srnb-num">{fmt_ms(r["latency_ms"])}</td>'
        f'<td class="srnb-r srnb-num">{r["model_calls"]}</td>'
        f'<td class="srnb-r srnb-num">{r["tokens_in"]:,}</td><td class="srnb-r srnb-num">{r["tokens_out"]:,}</td>'
        f'<td class="srnb-r srnb-num">{fmt_cost(r["cost"])}</td><td>{esc(r["fallbacks"], 2000)}</td></tr>'
        for r in rows
    )
    tot = t.totals
    table_rows += (
        f'<tr><td><strong>total</strong></td><td class="srnb-r srnb-num">{fmt_ms(sum(r["latency_ms"] for r in rows))}</td>'
        f'<td class="srnb-r srnb-num">{tot.model_calls}</td><td class="srnb-r srnb-num">{tot.tokens_in:,}</td>'
        f'<td class="srnb-r srnb-num">{tot.tokens_out:,}</td><td class="srnb-r srnb-num">{fmt_cost(tot.cost)}</td><td></td></tr>'
    )
    return (
        '<section class="srnb-card srnb-card-totals"><div class="srnb-card-h"><span class="srnb-stage">'
        "Timeline &amp; cost</span></div>"
        f'<div class="srnb-tl">{"".join(tl)}</div>'
        + (
            '<div class="srnb-meta">start-up, once, before the question\'s clock: '
            + escape("; ".join(f"{what} {fmt_ms(ms)}" for what, ms in t.startup.items()))
            + "</div>"
            if t.startup
            else ""
        )
        + '<table class="srnb-table"><thead><tr><th>stage</th><th class="srnb-r">latency</th>'
        '<th class="srnb-r">calls</th><th class="srnb-r">tokens in</th><th class="srnb-r">tokens out</th>'
        f'<th class="srnb-r">cost</th><th>fallbacks</th></tr></thead><tbody>{table_rows}</tbody></table></section>'
    )


def _trace(t: Trace, ctx: Ctx) -> str:
    tot = t.totals
    outcome = t.outcome
    q, q_note = cut(t.question, 2000)
    head = (
        f'<div class="srnb-head"><div class="srnb-q" dir="auto">{escape(q, ctl="span")}{q_note}</div>'
        + '<div class="srnb-totals">'
        + (badge(outcome, outcome_tone(t.finish, t.support)) if outcome else badge("in progress", "info"))
        + meta(
            f"user {esc(t.user.id, 200)}"
            + (f" ({esc(', '.join(t.user.roles), 500)})" if t.user.roles else ""),
            f"{len(t.records)} stages",
            f"{tot.model_calls} model calls",
            *(f'<span class="srnb-num">{escape(x)}</span>' for x in trace_times(t)),
            f"tokens {tot.tokens_in:,} in / {tot.tokens_out:,} out",
            f"cost {fmt_cost(tot.cost)}",
        )
        + (offline_badge() if t.offline else "")
        + "</div>"
    )
    if t.history:
        turns = "".join(
            f'<div class="srnb-label">{esc(m.get("role", "?"), 40)}</div>{block(m.get("content", ""), 4000)}'
            for m in t.history
        )
        head += f'<details class="srnb-details"><summary>history ({len(t.history)} turns)</summary>{turns}</details>'
    if t.config.models:
        models = ", ".join(f"{esc(k, 40)}: {esc(v, 200)}" for k, v in sorted(t.config.models.items()))
        head += f'<div class="srnb-meta">models — {models}</div>'
    head += "</div>"
    cards = "".join(_RENDERERS[type(r)](r, ctx) for r in t.records)
    return head + cards + (_timeline(t) if t.records else "")


_RENDERERS: dict[type, Callable[[Any, Ctx], str]] = {
    Decision: _decision,
    Rewrite: _rewrite,
    Retrieval: _retrieval,
    Grades: _grades,
    Rerank: rerank_card,
    Assessment: _assessment,
    Generation: _generation,
    Support: _support,
    Usefulness: _usefulness,
    Outcome: _outcome,
    Trace: _trace,
    Hits: _hits,
}


#: Every type this module renders: the stage records, the Trace and Hits.
RECORD_TYPES: tuple[type, ...] = tuple(_RENDERERS)


def render_body(obj: object) -> str:
    """The view's markup without the root wrapper and stylesheet."""
    fn = _RENDERERS.get(type(obj))
    if fn is None:
        raise InputTypeError(
            f"selfrag_nb.display cannot render {type(obj).__name__}: expected a Trace, a stage record or Hits"
        )
    return fn(obj, ctx_for(obj))


@lru_cache(maxsize=1)
def css() -> str:
    """The shared stylesheet, comments and indentation stripped."""
    raw = (Path(__file__).parent / "static" / "trace.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return re.sub(r"\s*\n\s*", "", raw).strip()


def static_html(obj: object) -> str:
    """Self-contained static HTML for a record, a Trace or Hits."""
    return f'<div class="{ROOT_CLASS}" dir="ltr"><style>{css()}</style>{render_body(obj)}</div>'
