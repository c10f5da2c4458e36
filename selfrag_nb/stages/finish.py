"""Stage 9, finish: turn the verified answer into the outcome the user sees.

    Generation mode   Support.recommendation       Outcome
    direct            -                            "direct": reason_kind "retrieval_off" when the
                                                   decision was forced (override, settings), else
                                                   "retrieval_not_needed"; ("disclaimed" + no-evidence
                                                   disclaimer for answer_without_evidence)
    clarify           -                            "clarify"
    refuse            -                            "refused", reason_kind from generate.refusal_kind
                                                   (conflict / no_access / model_error /
                                                   no_evidence)
    grounded          ACCEPT                       "answered"
    grounded          ADD_DISCLAIMER               "disclaimed" ("Based on the available information:")
    grounded          REGENERATE -> strict generate + verify, at most max_regenerations times
                        now ACCEPT / ADD_DISCLAIMER   "regenerated"
                        still REGENERATE              drop unsupported claims of the attempt with
                                                      the most supported ones -> "disclaimed"
                                                      (when a supported claim remains)
                                                      else "refused", reason_kind "unsupported"
                                                      ("no_answer" / "unverified" when the
                                                      model gave no answer / the check failed;
                                                      "model_error" when those calls failed
                                                      at the provider)
    grounded          (verify switched off)        "answered", reason: not checked (plain RAG)

    then the usefulness check of the answer verify settled on (Usefulness; after
    dropping claims, of the supported claims left: what the user will read):
      yes                                          as above
      partly                                       never a plain "answered": "disclaimed", the
                                                   reason names what is missing
      no                                           one strict regeneration told what is missing
                                                   (+ verify + usefulness); still no ->
                                                   "clarify" when the assessment found options,
                                                   else "refused", reason_kind "not_answered"
                                                   ("model_error" when the usefulness calls failed:
                                                   a failed judge is not a "no")

    "model_error" reasons name the role, the most frequent error and how many of
    its calls failed (generate.model_failure); they never speak of the documents.

The regeneration loop is bounded by ``max_regenerations`` and the deadline,
so no loop runs forever. It appends its Generation/Support records itself
(the Trace's documented ``(Generation, Support)*`` tail) before the Outcome.
``deadline_outcome`` is the honest ending when the budget runs out: the best
verified answer with a disclaimer, or a refusal; never an unverified "answered".
"""

from __future__ import annotations

import time
from typing import TypeVar

from selfrag_nb.stages.base import Stage, StageContext
from selfrag_nb.stages.generate import (
    NOTHING_SUPPORTED,
    GenerateStage,
    RefusalKind,
    clarify_message,
    model_failure,
    refusal_kind,
    refusal_message,
    upstream_model_failure,
)
from selfrag_nb.stages.usefulness import UsefulnessStage
from selfrag_nb.stages.verify import VerifyStage
from selfrag_nb.text import markers_in, strip_markers
from selfrag_nb.trace import Claim, Fallback, Generation, Outcome, Support, Trace, Usefulness

__all__ = ["FinishStage", "deadline_outcome", "disclaimer_text"]

_DISCLAIMERS = {
    "support": {"en": "Based on the available information:", "zh": "根据现有信息："},
    "no_evidence": {
        "en": "No relevant document was found; this answer is not based on the documents:",
        "zh": "未找到相关资料，以下回答并非基于文档：",
    },
}


def disclaimer_text(language: str, kind: str = "support") -> str:
    """The disclaimer prefix in the question's language."""
    table = _DISCLAIMERS[kind]
    return table.get(language, table["en"])


def _with_disclaimer(disclaimer: str, answer: str) -> str:
    return f"{disclaimer}\n{answer}"


_R = TypeVar("_R", Support, Usefulness)


def _after(trace: Trace, gen: Generation, kind: type[_R]) -> _R | None:
    """The ``kind`` record that checked ``gen``: after it, before the next Generation."""
    idx = next((i for i, r in enumerate(trace.records) if r is gen), None)
    if idx is None:
        return None
    for rec in trace.records[idx + 1 :]:
        if isinstance(rec, kind):
            return rec
        if isinstance(rec, Generation):
            return None
    return None


def _matching_support(trace: Trace, gen: Generation) -> Support | None:
    """The Support that verified ``gen``."""
    return _after(trace, gen, Support)


async def _judged(trace: Trace, ctx: StageContext, gen: Generation) -> Usefulness | None:
    """The usefulness of ``gen``: its record, or judged now and appended
    (None when the check is switched off)."""
    found = _after(trace, gen, Usefulness)
    if found is not None:
        return found
    judged = await UsefulnessStage(gen).run(trace, ctx)
    if judged is not None:
        trace.append(judged)
    return judged


def _remaining_answer(claims: list[Claim], gen: Generation) -> tuple[str, list[str]]:
    """(answer from the supported claims, dropped claim texts). A supported
    claim that cited the wrong chunk is kept with its citation pointed at the
    chunk that holds its evidence; partial and unsupported claims are dropped."""
    keep = [c for c in claims if c.verdict == "supported"]
    dropped = [c.text for c in claims if c.verdict != "supported"]
    parts = []
    for c in keep:
        text = c.text.rstrip()
        ids = c.cited
        if c.citation_error:
            text = strip_markers(text).rstrip()
            ids = [e.chunk_id for e in c.evidence]
        if not markers_in(text):
            nums = [gen.evidence.index(cid) + 1 for cid in ids if cid in gen.evidence]
            text += "".join(f" [{n}]" for n in dict.fromkeys(nums))
        parts.append(text)
    return " ".join(parts), dropped


class FinishStage(Stage):
    name = "finish"

    async def run(self, trace: Trace, ctx: StageContext) -> Outcome:
        t0 = time.perf_counter()
        s = ctx.settings
        lang = ctx.language
        gen = trace.generation
        assessment = trace.assessment

        def out(outcome: str, answer: str, **kw: object) -> Outcome:
            return Outcome(
                latency_ms=(time.perf_counter() - t0) * 1000,
                outcome=outcome,
                answer=answer,
                **kw,
            )

        def refuse(kind: RefusalKind, reason: str, **kw: object) -> Outcome:
            return out(
                "refused",
                refusal_message(ctx.question, lang, kind=kind),
                reason=reason,
                reason_kind=kind,
                **kw,
            )

        def not_answered(useful: Usefulness, fallbacks: list[Fallback]) -> Outcome:
            failed = model_failure("usefulness", useful.calls)
            if failed:
                why = f"whether the answer answers the question could not be judged: {failed}"
                return refuse("model_error", why, fallbacks=fallbacks)
            why = f"the answer does not answer the question: {useful.reason}"
            if useful.missing:
                why += f" (missing: {useful.missing})"
            if assessment is not None and assessment.options:
                # The documents distinguish cases the question did not name: ask which.
                return out(
                    "clarify",
                    clarify_message(lang, assessment.options),
                    reason=why,
                    reason_kind="not_answered",
                    fallbacks=fallbacks,
                )
            return refuse("not_answered", why, fallbacks=fallbacks)

        def no_answer(why: str, **kw: object) -> Outcome:
            assert gen is not None
            failed = model_failure("generate", gen.calls)
            if failed:
                return refuse("model_error", f"{why}: {failed}", **kw)
            return refuse("no_answer", why, **kw)

        if gen is None:
            return refuse("no_answer", "no answer was generated")
        if gen.mode == "clarify":
            return out("clarify", gen.answer, reason=assessment.reason if assessment else "")
        if gen.mode == "refuse":
            kind = refusal_kind(trace)
            why = assessment.reason if assessment else ""
            if kind == "no_access":
                why = "no chunk the user may read matched the question"
            elif kind == "model_error":
                why = f"the evidence could not be judged: {upstream_model_failure(trace)}"
            return out("refused", gen.answer, reason=why, reason_kind=kind)
        if gen.mode == "direct":
            if not gen.answer:
                return no_answer("no answer could be generated")
            if assessment is not None and assessment.action == "answer_without_evidence":
                d = disclaimer_text(lang, "no_evidence")
                return out(
                    "disclaimed",
                    _with_disclaimer(d, gen.answer),
                    disclaimer=d,
                    reason=assessment.reason,
                    reason_kind=refusal_kind(trace),
                )
            decision = trace.decision
            if decision is not None and decision.forced:
                by = (
                    "a stepper override"
                    if decision.source == "override"
                    else f'settings.retrieval = "{ctx.settings.retrieval}"'
                )
                return out(
                    "direct",
                    gen.answer,
                    reason=f"retrieval was turned off by {by}; the answer is not grounded in documents",
                    reason_kind="retrieval_off",
                )
            return out(
                "direct", gen.answer, reason="no retrieval was needed", reason_kind="retrieval_not_needed"
            )

        support = _matching_support(trace, gen)
        if support is None and s.verify:
            support = await VerifyStage().run(trace, ctx)
            if support is not None:
                trace.append(support)
        fallbacks: list[Fallback] = []
        if support is None and not s.verify:
            # Plain RAG (the check switched off): nothing says whether it holds.
            unchecked = await _judged(trace, ctx, gen)
            if unchecked is not None and unchecked.verdict == "no":
                return not_answered(unchecked, fallbacks)
            return out(
                "answered",
                gen.answer,
                reason="verification is switched off: the answer was not checked against the documents",
            )
        if support is None:
            return refuse("unverified", "the answer could not be verified")
        regenerations = sum(1 for g in trace.generations if g.mode == "strict")
        while support.recommendation == "REGENERATE" and regenerations < s.max_regenerations:
            if ctx.remaining() <= 0:
                fallbacks.append(Fallback(what="no regeneration", reason="deadline reached"))
                break
            avoid = [c.text for c in support.claims if c.verdict == "unsupported" or c.citation_error]
            regenerations += 1
            gen = await GenerateStage(strict=True, avoid=avoid, attempt=gen.attempt + 1).run(trace, ctx)
            trace.append(gen)
            verified = await VerifyStage().run(trace, ctx)
            if verified is None:
                break
            support = verified
            trace.append(support)
        rec = support.recommendation
        if rec != "REGENERATE" and not support.claims and not any(c.valid for c in gen.citations):
            # Nothing was claimed and nothing cited ("the documents do not contain
            # this", the strict prompt's way out): that is a refusal, not an answer.
            return refuse("no_evidence", NOTHING_SUPPORTED, fallbacks=fallbacks)
        useful: Usefulness | None = None
        if rec != "REGENERATE":
            useful = await _judged(trace, ctx, gen)
            if useful is not None and useful.verdict == "no":
                if ctx.remaining() <= 0:
                    fallbacks.append(Fallback(what="no regeneration", reason="deadline reached"))
                else:
                    # Once, told what is missing; the new answer must pass verify too.
                    retry = await GenerateStage(
                        strict=True,
                        avoid=[strip_markers(gen.answer)],
                        attempt=gen.attempt + 1,
                        missing=useful.missing,
                    ).run(trace, ctx)
                    trace.append(retry)
                    verified = await VerifyStage().run(trace, ctx)
                    if verified is not None:
                        trace.append(verified)
                    judged = await _judged(trace, ctx, retry)
                    ok = verified is not None and verified.recommendation != "REGENERATE"
                    if ok and verified is not None and judged is not None and judged.verdict != "no":
                        gen, support, useful, rec = retry, verified, judged, verified.recommendation
                if useful.verdict == "no":
                    return not_answered(useful, fallbacks)
        regenerated = gen.attempt > 1
        partly = useful is not None and useful.verdict == "partly"
        if rec == "ACCEPT" and not partly:
            return out("regenerated" if regenerated else "answered", gen.answer, fallbacks=fallbacks)
        if rec in {"ACCEPT", "ADD_DISCLAIMER"}:
            d = disclaimer_text(lang)
            why = "the answer is mainly, not entirely, supported by the documents"
            if partly and useful is not None:
                why = f"the answer addresses the question only in part (missing: {useful.missing or 'unspecified'})"
            return out(
                "regenerated" if regenerated and not partly else "disclaimed",
                _with_disclaimer(d, gen.answer),
                disclaimer=d,
                fallbacks=fallbacks,
                reason=why,
            )
        if s.drop_unsupported:
            # Drop from the attempt that kept the most supported claims: a strict
            # regeneration can be worse than the first answer.
            best_gen, best_support = gen, support
            for g in trace.generations:
                sup = _matching_support(trace, g)
                n_sup = sum(c.verdict == "supported" for c in sup.claims) if sup else 0
                if sup is not None and n_sup > sum(c.verdict == "supported" for c in best_support.claims):
                    best_gen, best_support = g, sup
            remaining, dropped = _remaining_answer(best_support.claims, best_gen)
            # Judge what the user will read: the supported claims left, not the
            # attempt they were cut from, whose dropped sentences may have been
            # the ones that addressed the question.
            kept = (
                best_gen
                if remaining == best_gen.answer
                else best_gen.model_copy(update={"answer": remaining})
            )
            best_useful = await _judged(trace, ctx, kept) if remaining else None
            if best_useful is not None and best_useful.verdict == "no":
                return not_answered(best_useful, fallbacks)
            if remaining:
                d = disclaimer_text(lang)
                return out(
                    "disclaimed",
                    _with_disclaimer(d, remaining),
                    disclaimer=d,
                    dropped_claims=dropped,
                    fallbacks=fallbacks,
                    reason=f"{len(dropped)} unsupported claim(s) removed after {regenerations} regeneration(s)",
                )
        # Say what actually failed: no answer to check, a check that could not
        # be made, or an answer the check rejected.
        dropped_claims = [c.text for c in support.claims if c.verdict != "supported"]
        if not gen.answer.strip():
            return no_answer(
                f"no answer was generated after {regenerations} regeneration(s)",
                dropped_claims=dropped_claims,
                fallbacks=fallbacks,
            )
        failed = model_failure("verify", support.calls)
        unparsed = [c for c in support.calls if c.parse_status == "unparsed"]
        ending: RefusalKind = "unsupported"
        reason = f"the answer could not be supported by the documents after {regenerations} regeneration(s)"
        if failed:
            ending, reason = "model_error", f"the answer could not be checked: {failed}"
        elif unparsed:
            ending = "unverified"
            reason = f"the answer could not be checked: verify model output {unparsed[-1].parse_status}"
        return refuse(ending, reason, dropped_claims=dropped_claims, fallbacks=fallbacks)


def deadline_outcome(trace: Trace, ctx: StageContext, skipped: list[str], budget: float) -> Outcome:
    """The honest ending when the question's time budget ran out."""
    lang = ctx.language
    why = f"the time budget of {budget:g} s ran out before: {', '.join(skipped)}"
    gen = trace.generation
    common = {"skipped": skipped, "deadline_exceeded": True}
    if gen is not None and gen.mode == "direct" and gen.answer:
        return Outcome(outcome="direct", answer=gen.answer, reason=why, reason_kind="deadline", **common)
    if gen is not None and gen.mode == "clarify":
        return Outcome(outcome="clarify", answer=gen.answer, reason=why, **common)
    if gen is not None and gen.mode in {"grounded", "strict"} and gen.answer:
        support = _matching_support(trace, gen)
        if support is not None and support.recommendation in {"ACCEPT", "ADD_DISCLAIMER"}:
            d = disclaimer_text(lang)
            return Outcome(
                outcome="disclaimed",
                answer=_with_disclaimer(d, gen.answer),
                disclaimer=d,
                reason=why,
                reason_kind="deadline",
                **common,
            )
    return Outcome(
        outcome="refused",
        answer=refusal_message(ctx.question, lang, kind="deadline"),
        reason=why,
        reason_kind="deadline",
        **common,
    )
