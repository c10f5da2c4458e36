"""Stage 6, assess: can the evidence answer the question?

    evidence = reranked top (or top graded), authorised only
      empty because grade calls failed                      -> action "refuse", the reason
               names the role, the error and the count (never "no relevant passage":
               the chunks were not judged; whatever settings.no_evidence says)
      empty -> settings.no_evidence "refuse"                 -> action "refuse"
               settings.no_evidence "answer_with_disclaimer" -> "answer_without_evidence"
               (no model call: an empty result is the "not enough material" signal)
      else  -> model "assess" (AssessInputs) -> ANSWER | CLARIFY (options) | REFUSE,
               conflict / applies when documents disagree
      override (stepper) -> that action
      unparsed -> REFUSE (conservative default) + Fallback

Similarity never decides; missing product/date/version
-> clarify; uncovered or unresolved conflict -> say it cannot be confirmed.
The assessor only ever sees authorised evidence, so a refusal cannot reveal
that an unauthorised document exists.
"""

from __future__ import annotations

import time

from selfrag_nb.llm.schemas import AssessInputs, AssessOut
from selfrag_nb.stages.base import Stage, StageContext, evidence_hits, to_evidence
from selfrag_nb.stages.generate import NO_PASSAGE_AVAILABLE, model_failure
from selfrag_nb.trace import Assessment, Fallback, Trace

__all__ = ["AssessStage"]

_ACTIONS = {"ANSWER": "answer", "CLARIFY": "clarify", "REFUSE": "refuse"}


class AssessStage(Stage):
    name = "assess"

    async def run(self, trace: Trace, ctx: StageContext) -> Assessment | None:
        s = ctx.settings
        if not s.assess and "assess" not in ctx.overrides:
            return None
        t0 = time.perf_counter()
        hits = evidence_hits(trace, ctx)
        evidence_ids = [h.chunk_id for h in hits]
        override = ctx.overrides.get("assess")
        if override is not None:
            action = str(override["action"])
            return Assessment(
                latency_ms=(time.perf_counter() - t0) * 1000,
                action=action,
                reason=str(override.get("reason") or f"overridden in the stepper: {action}"),
                options=list(override.get("options", [])),
                evidence=evidence_ids,
            )
        grades = trace.grades
        unjudged = not hits and grades is not None and not grades.kept
        failed = (
            model_failure("grade", grades.calls, unparsed=True) if unjudged and grades is not None else ""
        )
        if failed:
            # Fail closed: unjudged chunks are neither evidence nor its absence.
            return Assessment(
                latency_ms=(time.perf_counter() - t0) * 1000,
                action="refuse",
                reason=f"the retrieved chunks could not be judged: {failed}",
            )
        if not hits:
            if s.no_evidence == "answer_with_disclaimer":
                return Assessment(
                    latency_ms=(time.perf_counter() - t0) * 1000,
                    action="answer_without_evidence",
                    reason="no relevant document was found: answering without documents, with a disclaimer",
                )
            return Assessment(
                latency_ms=(time.perf_counter() - t0) * 1000,
                action="refuse",
                reason=NO_PASSAGE_AVAILABLE,
            )
        result = await ctx.runner.acall(
            "assess",
            AssessInputs(
                question=ctx.query,
                evidence=to_evidence(hits, trace),
                history=ctx.history,
                language=ctx.language,
            ),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        out = result.output
        assert isinstance(out, AssessOut)
        fallbacks: list[Fallback] = []
        action = _ACTIONS[out.action]
        if not result.ok:
            fallbacks.append(
                Fallback(
                    what="refuse",
                    reason=f"assess model output {result.call.parse_status}: answerability not confirmed",
                )
            )
        options = [o.strip() for o in out.options if o and o.strip()]
        if action == "clarify" and not s.clarify:
            fallbacks.append(Fallback(what="answer instead of clarify", reason="settings.clarify is False"))
            action = "answer"
        return Assessment(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            action=action,
            reason=out.reason.strip(),
            options=options,
            conflict=out.conflict.strip(),
            applies=out.applies.strip(),
            evidence=evidence_ids,
        )
