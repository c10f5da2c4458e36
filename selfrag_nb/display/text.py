"""One-line ``text/plain`` summaries (what a terminal or a text-only viewer shows).

    text_summary(obj) -> "<Kind>: <verdict> · <key numbers>"

    Decision: RETRIEVE by rule (product keyword) · 0.1 ms
    Grades: 4/10 relevant (cutoff 50) · best 92 · 120 ms
    Trace: "What is the refund window?" → answered · 9 stages · 14 calls · 1.2 s · cost unknown
    (a trace's time is its stages' compute, as in the timeline; then
     "start-up 4.7 s" when one-time start-up ran first, and "wall 6.7 s,
     pauses included" when the wall clock says more: a stepper's cells)

Untrusted text is flattened to one line, shortened, and its invisible or
bidi control characters shown as ⟨U+XXXX⟩ so it cannot reorder the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from selfrag_nb.display.markup import fmt_ms, neutralize, plural
from selfrag_nb.display.names import doc_flags, file_name
from selfrag_nb.errors import InputTypeError
from selfrag_nb.formats import fmt_cost
from selfrag_nb.store.types import Hits
from selfrag_nb.trace import (
    Assessment,
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


def one_line(text: str, n: int = 60) -> str:
    """Untrusted text as a short single line."""
    flat = " ".join(neutralize(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _calls(rec: Any) -> str:
    offline = "offline " if all(c.offline for c in rec.calls) else ""
    return f" · {plural(len(rec.calls), offline + 'call')}" if rec.calls else ""


def _fb(rec: Any) -> str:
    return f" · {len(rec.fallbacks)} fallback(s)" if rec.fallbacks else ""


def _decision(d: Decision) -> str:
    verdict = "RETRIEVE" if d.retrieve else "NO_RETRIEVE"
    who = d.source + (f" ({one_line(d.rule, 40)})" if d.rule else "")
    return f"Decision: {verdict} by {who} · {fmt_ms(d.latency_ms)}{_calls(d)}{_fb(d)}"


def _rewrite(r: Rewrite) -> str:
    if not r.attempted:
        why = f" ({one_line(r.reason, 50)})" if r.reason else ""
        return f"Rewrite: not attempted{why} · {fmt_ms(r.latency_ms)}"
    rej = f" ({len(r.rejected)} rejected)" if r.rejected else ""
    rewrites = plural(max(len(r.queries) - 1, 0), "rewrite")
    spans = plural(len(r.protected), "protected span")
    return f"Rewrite: {rewrites}{rej} · {spans} · {fmt_ms(r.latency_ms)}{_calls(r)}{_fb(r)}"


def _retrieval(r: Retrieval) -> str:
    top = f" · top {one_line(r.hits[0].source, 40)}" if r.hits else ""
    filt = f", filter: {one_line(r.access_filter, 40)}" if r.access_filter else ""
    return f"Retrieval: {len(r.hits)} hits ({r.mode}{filt}){top} · {fmt_ms(r.latency_ms)}{_fb(r)}"


def _hits(h: Hits) -> str:
    top = f" · top {one_line(h.hits[0].source, 40)} {h.hits[0].score:.3g}" if h.hits else ""
    return f'Hits: {len(h.hits)} for "{one_line(h.query, 50)}" ({h.mode}){top}'


def _grades(g: Grades) -> str:
    rel = sum(1 for x in g.items if x.relevant)
    best = max((x.score for x in g.items), default=None)
    b = f" · best {best}" if best is not None else ""
    head = f"Grades: {rel}/{len(g.items)} relevant (cutoff {g.relevance_cutoff}){b}"
    return f"{head} · {fmt_ms(g.latency_ms)}{_calls(g)}{_fb(g)}"


def _rerank(r: Rerank) -> str:
    by = f" by {one_line(r.reranker, 40)}" if r.reranker else ""
    if r.fallback:
        return f"Rerank: fallback, previous order kept ({one_line(r.fallback, 60)}) · {fmt_ms(r.latency_ms)}"
    moved = sum(1 for i, c in enumerate(r.after) if i >= len(r.before) or r.before[i] != c)
    ref = r.refs.get(r.after[0]) if r.after else None
    top = ""
    if ref is not None:  # the document now ranked first, and whether it is still current
        flag = " (superseded)" if any(tone == "bad" for _, tone, _ in doc_flags(ref.doc)) else ""
        top = f" · top {one_line(file_name(ref.source), 40)}{flag}"
    head = f"Rerank: {len(r.before)} → {len(r.after)} kept{by} · {moved} moved{top}"
    return f"{head} · {fmt_ms(r.latency_ms)}{_calls(r)}{_fb(r)}"


def _assessment(a: Assessment) -> str:
    opts = f" · {len(a.options)} options" if a.options else ""
    return f"Assessment: {a.action.upper()} — {one_line(a.reason, 70)}{opts} · {fmt_ms(a.latency_ms)}"


def _generation(g: Generation) -> str:
    bad = sum(1 for c in g.citations if not c.valid)
    inv = f" ({bad} invalid)" if bad else ""
    head = f"Generation: {g.mode} answer, {len(g.citations)} citations{inv} · {len(g.answer):,} chars"
    return f"{head} · attempt {g.attempt} · {fmt_ms(g.latency_ms)}{_calls(g)}"


def _support(s: Support) -> str:
    n = {v: sum(1 for c in s.claims if c.verdict == v) for v in ("supported", "partial", "unsupported")}
    errs = sum(1 for c in s.claims if c.citation_error)
    e = f", {plural(errs, 'citation error')}" if errs else ""
    counts = (
        f"{n['supported']}/{len(s.claims)} supported, {n['partial']} partial, {n['unsupported']} unsupported"
    )
    return f"Support: {counts}{e} · confidence {s.overall_confidence} · {s.recommendation}"


def _usefulness(u: Usefulness) -> str:
    miss = f" · missing: {one_line(u.missing, 50)}" if u.missing else ""
    return f"Usefulness: {u.verdict} ({u.score}/100){miss} · {fmt_ms(u.latency_ms)}{_calls(u)}{_fb(u)}"


def _outcome(o: Outcome) -> str:
    extra = " · deadline exceeded" if o.deadline_exceeded else ""
    if o.reason_kind == "model_error":
        # Failed model calls, never to be read as missing evidence.
        extra += f" · model error: {one_line(o.reason, 90)}"
    return f'Outcome: {o.outcome} · "{one_line(o.answer, 70)}"{extra}'


def trace_times(t: Trace) -> list[str]:
    """The time figures every face shows for a trace (which, and why: the module doc)."""
    compute = sum(r.latency_ms for r in t.records) or t.wall_ms
    out = [fmt_ms(compute)]
    if t.startup:
        out.append(f"start-up {fmt_ms(sum(t.startup.values()))}")
    if t.wall_ms - compute > max(100.0, 0.1 * compute):
        out.append(f"wall {fmt_ms(t.wall_ms)}, pauses included")
    return out


def _trace(t: Trace) -> str:
    tot = t.totals
    offline = " · offline model" if t.offline else ""
    times = " · ".join(trace_times(t))
    return (
        f'Trace: "{one_line(t.question, 60)}" → {t.outcome or "in progress"} · {len(t.records)} stages · '
        f"{plural(tot.model_calls, 'call')} · {times} · cost {fmt_cost(tot.cost)}{offline}"
    )


_SUMMARIES: dict[type, Callable[[Any], str]] = {
    Decision: _decision,
    Rewrite: _rewrite,
    Retrieval: _retrieval,
    Grades: _grades,
    Rerank: _rerank,
    Assessment: _assessment,
    Generation: _generation,
    Support: _support,
    Usefulness: _usefulness,
    Outcome: _outcome,
    Trace: _trace,
    Hits: _hits,
}


def text_summary(obj: object) -> str:
    """The one-line summary of a record, a Trace or Hits."""
    fn = _SUMMARIES.get(type(obj))
    if fn is None:
        raise InputTypeError(
            f"selfrag_nb.display cannot summarise {type(obj).__name__}: expected a Trace, a stage record or Hits"
        )
    return fn(obj)
