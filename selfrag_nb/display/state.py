"""The widget's synced ``data``: a small JSON-able dict built from a record or a Trace.

    widget_state(obj)
      -> records: each record's JSON with long strings cut
         (hit texts move to ``chunks`` so they are sent once)
      -> claims get ``span`` (offsets in the answer) and each evidence ``loc``
         (offsets in its chunk) so the JS only slices, never searches
      -> refs: chunk id -> names.chunk_name (file, heading path, rank, trust
         flags) for every chunk a record names, so the widget names chunks as
         the static HTML does; outcomes get their value-driven ``tone``
      -> widget_state(trace, baseline=earlier trace): a stepper's what-if
         shows the current trace and, below it, the one before the what-if
      -> over STATE_BUDGET bytes? cut harder and rebuild

Everything here is plain data: the browser renders it with ``textContent``.
"""

from __future__ import annotations

import json
from typing import Any

from selfrag_nb.display.cards import OFFLINE_NOTE, PAGE, band_of, outcome_tone
from selfrag_nb.display.markup import find_all, locate_span
from selfrag_nb.display.names import chunk_name, search_ranks
from selfrag_nb.display.text import text_summary, trace_times
from selfrag_nb.store.types import ChunkRef, Hit, Hits
from selfrag_nb.trace import Claim, Outcome, Retrieval, Support, Trace, _NamesChunks

__all__ = ["STATE_BUDGET", "state_size", "widget_state"]

#: Target size of the JSON state in bytes (the views issue: <= 200 KB).
STATE_BUDGET = 200_000

# (chunk text, model-call text, any other string) limits, loosest first.
_LIMITS = ((4_000, 1_500, 2_000), (1_500, 600, 1_000), (500, 200, 400))


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n] + f"… [truncated: {len(s) - n:,} more characters]"


def _trim(v: Any, n: int) -> Any:
    if isinstance(v, str):
        return _cut(v, n)
    if isinstance(v, list):
        return [_trim(x, n) for x in v]
    if isinstance(v, dict):
        return {k: _trim(x, n) for k, x in v.items()}
    return v


def _chunk(h: Hit, n: int) -> dict[str, Any]:
    return {
        "source": _cut(h.source, 500),
        "title": _cut(h.title, 500),
        "heading": _cut(h.heading, 500),
        "text": _cut(h.text, n),
    }


def _hit_row(h: Hit) -> dict[str, Any]:
    return {
        "chunk_id": h.chunk_id,
        "doc_id": h.doc_id,
        "source": h.source,
        "title": h.title,
        "heading": h.heading,
        "score": h.score,
        "scores": h.scores,
        "rank": h.rank,
        "ranks": h.ranks,
        "how": search_ranks(h),
    }


def _claim_extras(c: Claim, answer: str, chunks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    span = None
    if 0 <= c.start < c.end <= len(answer):
        span = [c.start, c.end]
    else:
        found = find_all(answer, c.text.strip())
        span = list(found[0]) if found else None
    locs = []
    for ev in c.evidence:
        chunk = chunks.get(ev.chunk_id)
        where = locate_span(chunk["text"], ev.span, ev.start, ev.end) if chunk else None
        locs.append(list(where) if where else None)
    return {"span": span, "locs": locs}


def _build(obj: object, limits: tuple[int, int, int]) -> dict[str, Any]:
    summary = text_summary(obj)  # also rejects objects that have no view
    chunk_n, call_n, other_n = limits
    chunks: dict[str, dict[str, Any]] = {}
    if isinstance(obj, Trace):
        records: list[Any] = list(obj.records)
        kind = "trace"
    elif isinstance(obj, Hits):
        records = []
        kind = "search"
    else:
        records = [obj]
        kind = str(obj.stage)  # type: ignore[attr-defined]  # every record has its stage name
    refs: dict[str, ChunkRef] = {}
    for r in records:
        if isinstance(r, Retrieval):
            for h in r.hits:
                chunks.setdefault(h.chunk_id, _chunk(h, chunk_n))
                refs.setdefault(h.chunk_id, ChunkRef.from_hit(h))
        if isinstance(r, _NamesChunks):
            for k, v in r.refs.items():
                refs.setdefault(k, v)
    if isinstance(obj, Hits):
        refs.update((h.chunk_id, ChunkRef.from_hit(h)) for h in obj.hits)
    latest_support = obj.support if isinstance(obj, Trace) else None
    answers = {g.attempt: g.answer for g in obj.generations} if isinstance(obj, Trace) else {}

    out_records = []
    for r in records:
        d = r.model_dump(mode="json", exclude={"calls", "hits", "claims", "refs"})
        d = _trim(d, other_n)
        d["calls"] = [
            _trim(c.model_dump(mode="json", exclude={"messages", "raw"}), other_n)
            | {
                "messages": [{k: _cut(v, call_n) for k, v in m.items()} for m in c.messages],
                "raw": _cut(c.raw, call_n),
            }
            for c in r.calls
        ]
        if isinstance(r, Retrieval):
            d["hits"] = [_trim(_hit_row(h), other_n) for h in r.hits]
        if isinstance(r, Support):
            answer = answers.get(r.attempt, "")
            d["claims"] = [
                _trim(c.model_dump(mode="json"), other_n) | _claim_extras(c, answer, chunks) for c in r.claims
            ]
        if isinstance(r, Support):
            d["band"] = band_of(r.overall_confidence)
        if isinstance(r, Outcome):
            d["tone"] = outcome_tone(r, latest_support)
        out_records.append(d)

    state: dict[str, Any] = {
        "kind": kind,
        "summary": summary,
        "offline_note": OFFLINE_NOTE,
        "page_size": PAGE,
        "records": out_records,
        "chunks": chunks,
        "refs": {k: _trim(chunk_name(v), other_n) for k, v in refs.items()},
    }
    if isinstance(obj, Trace):
        tot = obj.totals
        state |= {
            "question": _cut(obj.question, other_n),
            "user": {"id": obj.user.id, "roles": list(obj.user.roles)},
            "outcome": obj.outcome,
            "outcome_tone": outcome_tone(obj.finish, obj.support),
            "offline": obj.offline,
            "totals": tot.model_dump(mode="json") | {"stages": len(obj.records)},
            # compute · start-up · wall, worded once (display/text.py trace_times)
            "times": trace_times(obj),
            "startup": [[_cut(what, other_n), ms] for what, ms in obj.startup.items()],
            "stages": _trim(obj.stage_table(), other_n),
            "history": _trim(obj.history, other_n),
        }
    elif isinstance(obj, Hits):
        for h in obj.hits:
            chunks.setdefault(h.chunk_id, _chunk(h, chunk_n))
        state |= {
            "search": {
                "query": _cut(obj.query, other_n),
                "mode": obj.mode,
                "k": obj.k,
                "access_filter": _cut(obj.access_filter, other_n),
                "hits": [_trim(_hit_row(h), other_n) for h in obj.hits],
            }
        }
    return state


def state_size(state: dict[str, Any]) -> int:
    """Bytes of the state as JSON (what the kernel sends to the browser)."""
    return len(json.dumps(state, ensure_ascii=False).encode("utf-8"))


def widget_state(obj: object, baseline: Trace | None = None, what_if: str = "") -> dict[str, Any]:
    """The ``data`` trait for ``obj``: cut harder until it fits STATE_BUDGET.
    ``baseline``: the trace before a stepper's what-if (``what_if`` says
    what changed), shown below the current one; the two share the budget."""
    state: dict[str, Any] = {}
    for limits in _LIMITS:
        state = _build(obj, limits)
        if baseline is not None:
            state["baseline"] = _build(baseline, limits)
            state["what_if"] = what_if
        if state_size(state) <= STATE_BUDGET:
            break
    return state
