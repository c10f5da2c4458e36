"""Stage 3, retrieve: search the original and each accepted rewrite, merge.

    queries (Rewrite.queries, original first; or the question alone)
      -> kb.search(q, k=per_query_k, mode=search_mode, user=<asking user>)   ACL prefilter in the store
      -> merge by chunk_id: best position across queries first, best score kept,
         duplicates counted
      -> cap at total_cap
      -> Retrieval(hits, per_query, access_filter, kb_version)

Expansion is bounded: per-query candidates, total after
dedupe. Only chunks the user may read are ever returned, so nothing
unauthorised reaches grading, reranking or a prompt.
"""

from __future__ import annotations

import asyncio
import time

from selfrag_nb.stages.base import Stage, StageContext
from selfrag_nb.store.types import Hit
from selfrag_nb.trace import QueryHits, Retrieval, Trace

__all__ = ["RetrieveStage"]


class RetrieveStage(Stage):
    name = "retrieve"

    async def run(self, trace: Trace, ctx: StageContext) -> Retrieval:
        t0 = time.perf_counter()
        s = ctx.settings
        rewrite = trace.rewrite
        queries = rewrite.queries if rewrite is not None and rewrite.queries else [ctx.query]
        best: dict[str, tuple[int, int, Hit]] = {}  # chunk_id -> (position, query index, hit)
        per_query: list[QueryHits] = []
        access_filter = ""
        total = 0
        for qi, q in enumerate(queries):
            # LanceDB's search is synchronous: keep the event loop free for timers.
            hits = await asyncio.to_thread(
                ctx.kb.search, q, k=s.per_query_k, mode=s.search_mode, user=ctx.user
            )
            access_filter = access_filter or hits.access_filter
            per_query.append(QueryHits(query=q, chunk_ids=[h.chunk_id for h in hits]))
            for pos, h in enumerate(hits):
                total += 1
                prev = best.get(h.chunk_id)
                if prev is None:
                    best[h.chunk_id] = (pos, qi, h)
                    continue
                # Keep the best rank, and the higher-scored copy of the hit.
                keep_hit = h if h.score > prev[2].score else prev[2]
                best[h.chunk_id] = (min(pos, prev[0]), min(qi, prev[1]), keep_hit)
        merged = sorted(best.values(), key=lambda e: (e[0], e[1], -e[2].score))
        hits_out = [
            h.model_copy(update={"rank": i}) for i, (_, _, h) in enumerate(merged[: s.total_cap], start=1)
        ]
        version = None
        try:
            version = int(ctx.kb.version)
        except (TypeError, ValueError, AttributeError):
            version = None
        return Retrieval(
            latency_ms=(time.perf_counter() - t0) * 1000,
            hits=hits_out,
            per_query=per_query,
            mode=s.search_mode,
            access_filter=access_filter,
            per_query_k=s.per_query_k,
            total_cap=s.total_cap,
            duplicates_removed=total - len(best),
            kb_version=version,
        )
