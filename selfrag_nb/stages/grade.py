"""Stage 4, grade: is each retrieved chunk useful for the question?

    Retrieval.hits (minus chunks dropped in the stepper)
      -> one "grade" call per chunk (GradeInputs, clean text: selfrag_nb.cleantext), all at once (one wave: at most
         total_cap chunks reach here), or bounded by asyncio.Semaphore(grade_concurrency)
         when that is set; per-call timeout; the provider's own bound
         (Settings.provider_concurrency, LiteLLMModel) holds across questions
      -> relevanceScore -> band: >= high_relevance "high", >= relevance_cutoff "partial",
         else "irrelevant"
      -> relevant iff parsed ok and score >= cutoff (an unparsed grade never is)
      -> Grades(items in retrieval order, kept = relevant by score desc)

Documents are graded in parallel (CompletableFuture per
document) and keeps the relevant ones sorted by score; the same here with
asyncio, so the stage costs about one call's latency, not ten.
"""

from __future__ import annotations

import asyncio
import time

from selfrag_nb.cleantext import clean_text
from selfrag_nb.llm.schemas import GradeInputs, RelevanceOut
from selfrag_nb.stages.base import Stage, StageContext, resolved_question
from selfrag_nb.store.types import Hit
from selfrag_nb.trace import Fallback, Grade, Grades, ModelCall, Trace

__all__ = ["GradeStage"]


class GradeStage(Stage):
    name = "grade"

    async def run(self, trace: Trace, ctx: StageContext) -> Grades | None:
        s = ctx.settings
        if not s.grade:
            return None
        t0 = time.perf_counter()
        retrieval = trace.retrieval
        hits = [h for h in (retrieval.hits if retrieval else []) if h.chunk_id not in ctx.dropped]
        # None: every chunk at once (one wave); the provider limit still applies.
        concurrency = s.grade_concurrency or max(1, len(hits))
        sem = asyncio.Semaphore(concurrency)
        question = resolved_question(trace, ctx)

        async def grade_one(hit: Hit) -> tuple[Grade, ModelCall]:
            async with sem:
                c0 = time.perf_counter()
                result = await ctx.runner.acall(
                    "grade",
                    GradeInputs(
                        question=question,
                        text=clean_text(hit.text),
                        title=clean_text(hit.title),
                        heading=clean_text(hit.heading),
                        source=hit.source,
                        metadata={
                            k: v for k, v in hit.metadata.items() if isinstance(v, (str, int, float, bool))
                        },
                        language=ctx.language,
                    ),
                    timeout=ctx.call_timeout(),
                    deadline=ctx.deadline,
                )
                latency = (time.perf_counter() - c0) * 1000
            out = result.output
            assert isinstance(out, RelevanceOut)
            score = out.relevanceScore if result.ok else 0
            relevant = result.ok and score >= s.relevance_cutoff
            band = (
                "high" if relevant and score >= s.high_relevance else "partial" if relevant else "irrelevant"
            )
            grade = Grade(
                chunk_id=hit.chunk_id,
                source=hit.source,
                score=score,
                relevant=relevant,
                band=band,
                key_info=out.keyInfo if result.ok else "",
                gaps=out.gaps,
                parse_status=result.call.parse_status,
                latency_ms=latency,
            )
            return grade, result.call

        results = await asyncio.gather(*(grade_one(h) for h in hits))
        items = [g for g, _ in results]
        calls = [c for _, c in results]
        fallbacks = [
            Fallback(
                what=f"grade {g.chunk_id}", reason=f"model output {g.parse_status}: treated as irrelevant"
            )
            for g in items
            if g.parse_status in {"unparsed", "error"}
        ]
        dropped = [c for c in (retrieval.hits if retrieval else []) if c.chunk_id in ctx.dropped]
        fallbacks += [Fallback(what=f"drop {h.chunk_id}", reason="dropped in the stepper") for h in dropped]
        ranked = sorted((g for g in items if g.relevant), key=lambda g: -g.score)
        return Grades(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=calls,
            fallbacks=fallbacks,
            items=items,
            kept=[g.chunk_id for g in ranked],
            relevance_cutoff=s.relevance_cutoff,
            high_relevance=s.high_relevance,
            concurrency=concurrency,
            question=question,
        )
