"""Every record's view, built once as a view tree (tree.py) and shown two ways.

    view_tree(obj, baseline=, what_if=)
      -> Ctx (chunk texts, support per generation attempt, evidence numbers [n])
      -> one builder per kind (each -> one .srnb-card from cards.py's pieces):
         Decision Rewrite Retrieval Grades Hits here; Rerank (rerank_view.py);
         Assessment Generation Support Usefulness Outcome (answer_view.py)
      -> Trace = header + every record's card in order + timeline/cost footer
         (+ a stepper's what-if: the trace before it, folded below)
      -> <div class="srnb-root tex2jax_ignore mathjax_ignore" dir="ltr">
    static_html(obj) = the root + <style>trace.css</style> + to_html(tree)    (no script)
    TraceWidget(obj) = ViewWidget(to_json(tree)) mounted by static/mount.js    (widget.py)

Claim links, paging and open folds are declared with tree.py's ``data-*``
attributes; inline text sits in ``<bdi>``, blocks carry ``dir="auto"``, texts
longer than ``TEXT_LIMIT`` are cut with a note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from selfrag_nb.display.answer_view import ANSWER_CARDS
from selfrag_nb.display.cards import (
    Ctx,
    badge,
    banner,
    bar,
    block,
    breakable,
    card,
    card_head,
    ctx_for,
    details,
    esc,
    flags,
    fold,
    joined,
    listing,
    marked,
    meta,
    num,
    offline_badge,
    outcome_tone,
    root,
    row,
    table,
)
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.markup import find_all, fmt_ms, pct
from selfrag_nb.display.names import chunk_name, search_ranks
from selfrag_nb.display.rerank_view import rerank_card
from selfrag_nb.display.text import trace_times
from selfrag_nb.display.tree import Kid, Node, frag, h, to_html, to_page
from selfrag_nb.errors import InputTypeError
from selfrag_nb.flow import TITLES
from selfrag_nb.formats import fmt_cost
from selfrag_nb.store.types import Hit, Hits
from selfrag_nb.trace import Decision, Grades, Rerank, Retrieval, Rewrite, Trace

#: Every view's root: our class plus the classes that tell MathJax (JupyterLab,
#: Notebook, nbconvert) to leave it alone, or "cost $0 -> $0" becomes maths.
ROOT_CLASS = "srnb-root tex2jax_ignore mathjax_ignore"

# ------------------------------------------------------------ records


def _decision(d: Decision, ctx: Ctx) -> Node:
    verdict = badge("RETRIEVE" if d.retrieve else "NO RETRIEVE", "info" if d.retrieve else "ok")
    who = d.source + (f" ({d.rule})" if d.rule else "")
    body = [
        row("reason", esc(d.reason)),
        row("decided by", esc(who, 500)),
        row("history summary", esc(d.summary)) if d.summary else None,
        row("cache key", h("span", "srnb-id", esc(d.cache_key, 500))) if d.cache_key else None,
    ]
    return card(d, verdict, body, (f"by {d.source}",), key=ctx.key)


def _protect(kids: list[Kid]) -> Node:
    return h("mark", "srnb-protect", kids, title="protected span")


def _protected(text: str, spans: Sequence[str]) -> Node:
    return marked(text, [(a, b, _protect) for s in spans for a, b in find_all(text, s)])


def _column(title: str, *kids: Any) -> Node:
    return h("div", "", h("div", "srnb-col-h", title), kids)


def _rewrite(r: Rewrite, ctx: Ctx) -> Node:
    spans = [p.text for p in r.protected]
    original, *rewrites = r.queries or [""]
    alone = h("div", "srnb-muted", "none: the original question is searched alone")
    cols = h(
        "div",
        "srnb-cols",
        _column("original", _protected(original, spans)),
        _column(f"rewrites ({len(rewrites)})", [_protected(q, spans) for q in rewrites] or alone),
    )
    protected = [
        [h("mark", "srnb-protect", esc(p.text, 300)), " ", meta(esc(p.kind, 50))] for p in r.protected
    ]
    rejected = [
        [
            badge("rejected", "bad"),
            " ",
            esc(x.text, 2000),
            " — ",
            esc(x.reason, 1000),
            [" ", meta(["missing: ", joined((esc(m, 200) for m in x.missing), ", ")])] if x.missing else None,
        ]
        for x in r.rejected
    ]
    body = [
        cols,
        row("protected", joined(protected, " ")) if protected else None,
        listing(f"rejected rewrites ({len(rejected)})", rejected) if rejected else None,
        row("why", esc(r.reason)) if r.reason else None,
    ]
    tag = badge("attempted" if r.attempted else "not attempted", "info" if r.attempted else "")
    return card(r, tag, body, key=ctx.key)


#: What each raw search score is and which way is better, next to every number.
SCORE_NAMES = {
    "vector": "vector similarity, 1 − cosine distance (higher = closer, at most 1)",
    "vector_distance": "cosine distance (lower = closer, 0 = same direction)",
    "fts": "keyword score, BM25 (higher = better match; no upper bound)",
    "hybrid": "fused score, reciprocal rank fusion of the two ranks (higher = better; about 0.03 at most)",
}
#: The short name of the score a search mode orders by, for a hit's summary line.
_SCORE_SHORT = {"vector": "similarity", "fts": "BM25", "hybrid": "RRF"}


def _hit_item(hit: Hit, i: int, key: str) -> Node:
    n = chunk_name(hit)
    # Per-leg ranks explain a fused order; a single-leg score is in list order already.
    scale = next((_SCORE_SHORT[k] for k in ("hybrid", "fts", "vector") if k in hit.scores), "score")
    how = search_ranks(hit) or (f"{scale} {hit.score:.3g} (higher = better)" if hit.score else "")
    summary = h(
        "span",
        "srnb-hit-h",
        h("span", "srnb-rank", f"#{hit.rank or i}"),
        h("span", "srnb-src", breakable(n["file"], 300)),
        h("span", "srnb-path", esc(n["path"], 500)) if n["path"] else None,
        flags(n["flags"]),
        h("span", "srnb-meta", esc(how, 200)) if how else None,
    )
    return details(
        summary,
        row("source", breakable(hit.source, 500)),
        row("chunk", h("span", "srnb-id", breakable(hit.chunk_id, 300))),
        row("document", h("span", "srnb-id", breakable(hit.doc_id, 300))),
        [row(SCORE_NAMES.get(k, k), num(f"{v:.3g}")) for k, v in sorted(hit.scores.items())],
        block(hit.text),
        key=f"{key}-hit-{hit.chunk_id}"[:200],
        cls="srnb-details srnb-hit",
    )


def _hits_list(hits: Sequence[Hit], key: str) -> Node:
    if not hits:
        return h("div", "srnb-muted", "no hits")
    return fold([_hit_item(x, i, key) for i, x in enumerate(hits, 1)], "hits", f"{key}-hits")


def _access(access_filter: str) -> Node:
    return row("access filter", esc(access_filter or "none (every chunk visible)", 2000))


def _retrieval(r: Retrieval, ctx: Ctx) -> Node:
    search = meta(
        esc(r.mode, 40),
        f"k={r.per_query_k} per query",
        f"cap {r.total_cap}",
        f"{r.duplicates_removed} duplicates removed",
        f"kb version {r.kb_version}" if r.kb_version is not None else "",
    )
    per_query = [[esc(q.query, 2000), " ", meta(f"{len(q.chunk_ids)} chunks")] for q in r.per_query]
    body = [
        _access(r.access_filter),
        row("search", search),
        listing("per query", per_query) if per_query else None,
        _hits_list(r.hits, ctx.key or "retrieve"),
    ]
    return card(r, badge(f"{len(r.hits)} hits", "info"), body, (esc(r.mode, 40),), key=ctx.key)


def _hits(x: Hits, ctx: Ctx) -> Node:
    query = meta(esc(x.mode, 40), f"k={x.k}", ["query ", esc(x.query, 2000)])
    head = card_head("Search", badge(f"{len(x.hits)} hits", "info"), query)
    body = [_access(x.access_filter), _hits_list(x.hits, "search")]
    return h("section", "srnb-card srnb-card-search", head, body)


def _grades(g: Grades, ctx: Ctx) -> Node:
    n_rel = sum(1 for x in g.items if x.relevant)
    relevant = {True: badge("✓ relevant", "ok"), False: badge("✗ not relevant", "bad")}
    legend = [
        "bars: grade 0–100 from the grader (higher = more relevant)",
        f"╎ {g.relevance_cutoff} relevance cutoff",
        f"╎ {g.high_relevance} high relevance",
        [relevant[True], " ", relevant[False]],
    ]
    rows = []
    for x in g.items:
        hit = ctx.chunks.get(x.chunk_id)
        in_refs = x.chunk_id in ctx.refs
        name = ctx.label(x.chunk_id) if in_refs else h("span", "srnb-src", breakable(x.source or "?"))
        notes = [
            row("key info", esc(x.key_info, 4000)) if x.key_info else None,
            row("gaps", esc(x.gaps, 4000)) if x.gaps else None,
            row("parse", badge(x.parse_status, "bad")) if x.parse_status != "ok" else None,
            details("chunk", block(hit.text)) if hit is not None else None,
        ]
        tip = f"grade {x.score} of 100 (cutoff {g.relevance_cutoff}, high {g.high_relevance})"
        grade_bar = bar(x.score, x.band, (g.relevance_cutoff, g.high_relevance), tip)
        score = h("div", "", num(f"{x.score:>3}"), " ", relevant[x.relevant], " ", meta(esc(x.band, 20)))
        notes_div = h("div", "srnb-grade-notes", notes) if any(notes) else None
        rows.append(h("div", "srnb-grade", h("div", "srnb-grade-name", name), grade_bar, score, notes_div))
    best = max((x.score for x in g.items), default=None)
    body = [
        h("div", "srnb-legend", [h("span", "", x) for x in legend]),
        fold(rows, "grades", f"{ctx.key or 'grade'}-grades"),
        row("kept (by grade)", joined((ctx.label(k) for k in g.kept), ", ")) if g.kept else None,
    ]
    tag = badge(f"{n_rel}/{len(g.items)} relevant", "ok" if n_rel else "bad")
    extra = (
        f"cutoff {g.relevance_cutoff}",
        f"best {best}" if best is not None else "",
        f"concurrency {g.concurrency}",
    )
    return card(g, tag, body, extra, key=ctx.key)


# --------------------------------------------------------------- trace


def _timeline(t: Trace) -> Node:
    rows = t.stage_table()
    startup = sum(t.startup.values())
    # Start-up is its own first row, before the stages' clock: never a stage's bar.
    lead = [("Start-up", startup)] if t.startup else []
    total = startup + sum(r["latency_ms"] for r in rows) or 1.0
    tl: list[Node] = []
    start = 0.0
    for title, ms in [*lead, *((TITLES[r["stage"]], r["latency_ms"]) for r in rows)]:
        lat = float(ms)
        # the bar's offset is a custom property: the tree allows widths and custom properties only
        style = f"--srnb-left:{pct(100 * start / total)};width:{pct(100 * lat / total)}"
        tl += [
            h("div", "", title),
            h("div", "srnb-tl-track", h("div", "srnb-tl-bar", style=style)),
            h("div", "srnb-r srnb-num", fmt_ms(lat)),
        ]
        start += lat

    def cells(first: Any, r: dict[str, Any], fbs: Any = "") -> Node:
        nums = [fmt_ms(r["latency_ms"]), str(r["model_calls"]), f"{r['tokens_in']:,}", f"{r['tokens_out']:,}"]
        tds = [h("td", "srnb-r srnb-num", v) for v in [*nums, fmt_cost(r["cost"])]]
        return h("tr", "", h("td", "", first), tds, h("td", "", fbs))

    totals = t.totals.model_dump() | {"latency_ms": sum(r["latency_ms"] for r in rows)}
    body = [cells(TITLES[r["stage"]], r, esc(r["fallbacks"], 2000)) for r in rows]
    heads = [h("th", "srnb-r", x) for x in ("latency", "calls", "tokens in", "tokens out", "cost")]
    once = "; ".join(f"{what} {fmt_ms(ms)}" for what, ms in t.startup.items())
    once_note = h("div", "srnb-meta", f"start-up, once, before the question's clock: {once}")
    return h(
        "section",
        "srnb-card srnb-card-totals",
        card_head("Timeline & cost"),
        h("div", "srnb-tl", tl),
        once_note if t.startup else None,
        table("srnb-table", ["stage", *heads, "fallbacks"], [*body, cells(h("strong", "", "total"), totals)]),
    )


def _head(t: Trace, key: str) -> Node:
    tot = t.totals
    who = [
        "user ",
        esc(t.user.id, 200),
        [" (", esc(", ".join(t.user.roles), 500), ")"] if t.user.roles else None,
    ]
    outcome = (
        badge(t.outcome, outcome_tone(t.finish, t.support)) if t.outcome else badge("in progress", "info")
    )
    numbers = meta(
        who,
        f"{len(t.records)} stages",
        f"{tot.model_calls} model calls",
        *(num(x) for x in trace_times(t)),
        f"tokens {tot.tokens_in:,} in / {tot.tokens_out:,} out",
        f"cost {fmt_cost(tot.cost)}",
    )
    totals = h("div", "srnb-totals", outcome, numbers, offline_badge() if t.offline else None)
    turns = [
        [h("div", "srnb-label", esc(m.get("role", "?"), 40)), block(m.get("content", ""), 4000)]
        for m in t.history
    ]
    pairs = [[esc(k, 40), ": ", esc(v, 200)] for k, v in sorted(t.config.models.items())]
    history = details(f"history ({len(t.history)} turns)", turns, key=f"{key}history") if t.history else None
    models = h("div", "srnb-meta", "models — ", joined(pairs, ", ")) if pairs else None
    return h("div", "srnb-head", block(t.question, 2000, "srnb-q"), totals, history, models)


def _trace(t: Trace, ctx: Ctx) -> Node:
    prefix = ctx.key
    cards: list[Node] = []
    for i, r in enumerate(t.records):
        ctx.key = f"{prefix}{r.stage}-{i}"
        cards.append(_RENDERERS[type(r)](r, ctx))
    ctx.key = prefix
    return frag(_head(t, prefix), cards, _timeline(t) if t.records else None)


_RENDERERS: dict[type, Callable[[Any, Ctx], Node]] = {
    Decision: _decision,
    Rewrite: _rewrite,
    Retrieval: _retrieval,
    Grades: _grades,
    Rerank: rerank_card,
    **ANSWER_CARDS,
    Trace: _trace,
    Hits: _hits,
}


#: Every type this module renders: the stage records, the Trace and Hits.
RECORD_TYPES: tuple[type, ...] = tuple(_RENDERERS)


def body_tree(obj: object, *, key: str = "") -> Node:
    """The view of ``obj`` without the root: one card, or a trace's cards."""
    fn = _RENDERERS.get(type(obj))
    if fn is None:
        raise InputTypeError(
            f"selfrag_nb.display cannot render {type(obj).__name__}: expected a Trace, a stage record or Hits"
        )
    ctx = ctx_for(obj)
    ctx.key = key
    return fn(obj, ctx)


def view_tree(obj: object, baseline: Trace | None = None, what_if: str = "") -> Node:
    """The whole view: the root, ``obj``'s tree and, after a stepper's what-if,
    the trace before it (``baseline``) folded below, labelled with ``what_if``."""
    parts: list[Any] = [body_tree(obj)]
    if baseline is not None:
        what = [h("strong", "", "current (what-if): "), esc(what_if or "changed", 2000)]
        now = banner("info", what, " — the trace before the what-if is below")
        before = details(
            "before the what-if (the original run)",
            h("div", "srnb-compare-body", body_tree(baseline, key="before-")),
            key="baseline",
            cls="srnb-details srnb-compare",
        )
        parts = [now, *parts, before]
    return root(ROOT_CLASS, parts)


def render_body(obj: object) -> str:
    """The view's markup without the root wrapper and stylesheet."""
    return to_html(body_tree(obj))


def css() -> str:
    """The shared stylesheet, comments and indentation stripped."""
    return stylesheet("trace.css")


def static_html(obj: object) -> str:
    """Self-contained static HTML for a record, a Trace or Hits."""
    return to_page(root(ROOT_CLASS, body_tree(obj)), css())
