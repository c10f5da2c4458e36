"""Stage 9, usefulness: does the answer answer the question that was asked?

    latest Generation
      mode clarify / refuse        -> skipped (None): a composed message, not an answer
      mode direct                  -> skipped (None): small talk and arithmetic need no judge,
                                      and an answer without documents has nothing to regenerate from
      verify says REGENERATE       -> skipped (None): the answer is about to be replaced;
                                      finish judges the one it keeps
      empty answer                 -> Usefulness("no", 0), no call
      else -> model "usefulness" (UsefulnessInputs: question, answer, history;
              never the documents: support is verify's question)
           -> Usefulness(verdict yes | partly | no, score 0-100, missing, reason)
              an unparsed output is the conservative default ("no", visible
              as the call's parse status and a Fallback)

The third check of the RAG triad: grade judges the chunks against the
question, verify the answer against the chunks, this the answer against the
question. An extractive sentence is trivially supported by the chunk it was
copied from; only this check sees that it does not answer. Finish acts on
it (stages/finish.py): "no" is regenerated once with what is missing named,
then clarify or refuse; "partly" is never a plain "answered".
"""

from __future__ import annotations

import time

from selfrag_nb.llm.schemas import UsefulnessInputs, UsefulnessOut
from selfrag_nb.stages.base import Stage, StageContext
from selfrag_nb.trace import Fallback, Generation, Trace, Usefulness

__all__ = ["UsefulnessStage"]


class UsefulnessStage(Stage):
    name = "usefulness"

    def __init__(self, generation: Generation | None = None) -> None:
        #: The answer to judge; None: the trace's latest generation.
        self.generation = generation

    async def run(self, trace: Trace, ctx: StageContext) -> Usefulness | None:
        gen = self.generation or trace.generation
        if gen is None or gen.mode not in {"grounded", "strict"}:
            return None
        if not ctx.settings.usefulness:
            return None
        support = trace.support
        sent_back = (
            support is not None and support.attempt == gen.attempt and support.recommendation == "REGENERATE"
        )
        if self.generation is None and sent_back:
            # Verify already sends this answer back: judging it would pay for a
            # call whose verdict nothing reads. Finish judges the answer it keeps.
            return None
        t0 = time.perf_counter()
        if not gen.answer.strip():
            return Usefulness(
                latency_ms=(time.perf_counter() - t0) * 1000,
                verdict="no",
                score=0,
                missing="an answer",
                reason="no answer was generated",
                attempt=gen.attempt,
            )
        result = await ctx.runner.acall(
            "usefulness",
            UsefulnessInputs(
                question=ctx.query, answer=gen.answer, history=ctx.history, language=ctx.language
            ),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        out = result.output
        assert isinstance(out, UsefulnessOut)
        fallbacks = []
        if not result.ok:
            fallbacks.append(
                Fallback(
                    what="not useful",
                    reason=f"usefulness model output {result.call.parse_status}: judged conservatively",
                )
            )
        return Usefulness(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            verdict=out.verdict,
            score=out.score,
            missing=out.missing,
            reason=out.reason,
            attempt=gen.attempt,
        )
