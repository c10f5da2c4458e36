"""Stage 7, generate: the answer text, grounded and cited, or a composed message.

    Decision.retrieve False           -> model "generate" mode "direct" (no evidence)
    Assessment "answer_without_evidence" -> mode "direct" (finish adds the disclaimer)
    Assessment "refuse"               -> composed refusal (mode "refuse", no model call)
    Assessment "clarify"              -> composed question with the options (mode "clarify")
    Assessment "answer"               -> model "generate" mode "grounded", evidence numbered [n]
    regeneration (from finish)        -> mode "strict" (answer only from the documents, else say so),
                                         ``avoid`` = the claims the verifier rejected,
                                         ``missing`` = what the usefulness check found missing
      -> parse_citations(): every [n] -> Citation(marker, chunk_id, valid)

Composed messages are in the question's language and never name a document
the user cannot see, nor invent a link (refusal rules: say what is missing, within what the user may see).
A refusal states its real reason (``RefusalKind``, the same value finish records as
``Outcome.reason_kind``):

    Assessment.conflict set          -> "conflict"     the documents disagree: says on what
    Retrieval.hits empty             -> "no_access"    nothing the user may read matched at all
    assess / grade calls failed      -> "model_error"  the check was never made: says which role,
      (or never parsed)                                which error, how many calls (model_failure)
    otherwise (nothing answers)      -> "no_evidence"  the documents do not cover the question
    (finish) verifier rejected it    -> "unsupported"  found, but the answer was not backed by them
    (finish) usefulness said no      -> "not_answered" found, but no answer to what was asked
    (finish) no check / no answer / time ran out -> "unverified" / "no_answer" / "deadline"
    (finish) generate / verify / usefulness calls failed at the provider -> "model_error"
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from selfrag_nb.llm.schemas import GenerateInputs, GenerateOut
from selfrag_nb.stages.base import Stage, StageContext, evidence_hits, parse_citations, to_evidence
from selfrag_nb.trace import Fallback, Generation, ModelCall, RefusalKind, Trace

__all__ = [
    "GenerateStage",
    "RefusalKind",
    "clarify_message",
    "model_failure",
    "refusal_kind",
    "refusal_message",
    "upstream_model_failure",
]


def _short(question: str, limit: int = 80) -> str:
    q = " ".join(question.split())
    return q if len(q) <= limit else q[: limit - 1] + "…"


# What each kind of refusal tells the user: the real reason, never a document
# the user cannot see. "{q}" is the question, shortened.
_REFUSALS: dict[str, dict[str, str]] = {
    "no_evidence": {
        "en": 'The available documents do not cover this question ("{q}"), so I cannot give a confirmed answer.',
        "zh": "现有资料未能确认这个问题的答案（“{q}”），因此无法给出确定结论。",
    },
    "no_access": {
        "en": 'No document available to you matches this question ("{q}"), so I cannot give a confirmed answer.',
        "zh": "您可查阅的资料中没有与这个问题（“{q}”）相关的内容，因此无法给出确定结论。",
    },
    "unsupported": {
        "en": 'Documents about this question ("{q}") were found, but a check of the answer against them '
        "found it unsupported, so I will not state it as confirmed.",
        "zh": "找到了与这个问题（“{q}”）相关的资料，但核对后发现答案得不到这些资料的支持，因此无法给出确定结论。",
    },
    "not_answered": {
        "en": 'Documents about this question ("{q}") were found, but no answer to what it asks could be '
        "written from them, so I will not give an answer that misses the question.",
        "zh": "找到了与这个问题（“{q}”）相关的资料，但无法据此写出切题的回答，因此不给出答非所问的答案。",
    },
    "unverified": {
        "en": 'An answer to this question ("{q}") was written but could not be checked against the documents, '
        "so I cannot give a confirmed answer.",
        "zh": "已为这个问题（“{q}”）生成了回答，但无法与资料核对，因此无法给出确定结论。",
    },
    "no_answer": {
        "en": 'No usable answer could be produced for this question ("{q}") this time.',
        "zh": "这次未能为这个问题（“{q}”）生成可用的回答。",
    },
    "deadline": {
        "en": 'The time available for this question ("{q}") ran out before an answer could be checked.',
        "zh": "在核对答案之前，这个问题（“{q}”）的处理时间已用完。",
    },
    "model_error": {
        "en": 'The language model failed while this question ("{q}") was being checked, so no answer '
        "could be given; this says nothing about whether the documents cover it.",
        "zh": "处理这个问题（“{q}”）时语言模型调用失败，因此无法给出回答；这并不表示资料中没有相关内容。",
    },
}
#: The stages' fixed refusal reasons (assess, generate, finish), written once
#: so that their Chinese wording below cannot drift from them.
NO_PASSAGE_AVAILABLE = "no relevant passage was found in the documents available to you"
NO_PASSAGE = "no relevant passage was found"
NOTHING_SUPPORTED = "the answer states nothing the documents support"
#: Those reasons as a Chinese reader reads them.
_ZH_REASONS = {
    NO_PASSAGE_AVAILABLE: "在您可以访问的资料中没有找到相关段落",
    NO_PASSAGE: "没有找到相关段落",
    NOTHING_SUPPORTED: "回答中没有资料能够支持的内容",
}
# What the user can do next, per kind: more details help a search that found
# nothing, not a check that failed or a document the user may not read.
_AGAIN = {
    "no_answer": {"en": " Please try again.", "zh": "请稍后再试。"},
    "deadline": {"en": " Please try again.", "zh": "请稍后再试。"},
    "model_error": {"en": " Please try again.", "zh": "请稍后再试。"},
    "unverified": {"en": " Please try again.", "zh": "请稍后再试。"},
    # nothing about access: the message must not hint at documents the user cannot see
    "no_access": {"en": "", "zh": ""},
    "unsupported": {
        "en": " Asking about one part of it at a time may get a checked answer.",
        "zh": "可以尝试每次只问其中一个方面。",
    },
    "not_answered": {
        "en": " Saying exactly what you need (a number, a date, a name) may help.",
        "zh": "说明您具体需要的内容（数字、日期或名称）可能会有帮助。",
    },
}
#: A call that failed at the provider (HTTP error, timeout, no connection):
#: it returned no answer at all.
_FAILED = frozenset({"error"})
#: ... or, for the roles that judge the evidence, returned none that parsed:
#: no other reason kind says "the chunks were never judged".
_UNJUDGED = frozenset({"error", "unparsed"})
_ERROR_CHARS = 300
#: The closing of a refusal for missing evidence (and any kind not in _AGAIN).
_MORE = {
    "en": " If you can add more specific details, I can look again.",
    "zh": "如果能补充更具体的信息，我可以再查一次。",
}


def refusal_message(
    question: str, language: str, reason: str = "", conflict: str = "", kind: RefusalKind = "no_evidence"
) -> str:
    """A refusal that states its real reason within what the user may see:
    ``kind`` picks the wording (no evidence, nothing visible to the user, an
    unsupported answer, ...). With ``conflict`` (the assessment found
    authorised documents that disagree and none says which applies) it says
    so instead of claiming the documents do not cover the question."""
    q = _short(question)
    zh = language == "zh"
    if conflict:
        what = conflict.strip().rstrip(".。")
        if zh:
            return (
                f"现有资料对这个问题（“{q}”）说法不一，且没有说明以哪一份为准：{what}。"
                "因此无法给出确定结论；如果您能说明具体的版本、日期或套餐，我可以再查一次。"
            )
        return (
            f'The documents disagree on this question ("{q}") and do not say which one applies: {what}. '
            "So I cannot give a confirmed answer; if you can tell me the version, date or plan you mean, "
            "I can look again."
        )
    lang = "zh" if zh else "en"
    table = _REFUSALS.get(kind, _REFUSALS["no_evidence"])
    msg = table[lang].format(q=q)
    if reason:
        # The stages state their fixed reasons in English (the trace is read by
        # developers); a Chinese reader gets those in Chinese.
        stated = _ZH_REASONS.get(reason.rstrip(".。"), reason) if zh else reason
        msg += f"原因：{stated.rstrip('.。')}。" if zh else f" Reason: {stated.rstrip('.')}."
    return msg + _AGAIN.get(kind, _MORE)[lang]


def model_failure(
    role: str, calls: Sequence[ModelCall], *, detail: bool = True, unparsed: bool = False
) -> str:
    """Which of ``role``'s calls failed, in words, e.g. "grade: 10 of 10 model
    calls failed (<the most frequent error> x10)"; "" when none did. Failed:
    at the provider (``unparsed=True``: or with output that never parsed).
    ``detail=False`` leaves the error out (the words the user reads)."""
    statuses = _UNJUDGED if unparsed else _FAILED
    failed = [c for c in calls if c.parse_status in statuses]
    if not failed:
        return ""
    what = f"{role}: {len(failed)} of {len(calls)} model call{'s' if len(calls) != 1 else ''} failed"
    if not detail:
        return what
    errors = Counter(
        " ".join((c.error or f"unparsed output: {c.parse_error or 'not valid for the role'}").split())
        for c in failed
    )
    common, times = errors.most_common(1)[0]
    if len(common) > _ERROR_CHARS:
        common = common[: _ERROR_CHARS - 1] + "…"
    more = f"; {len(errors) - 1} other error(s)" if len(errors) > 1 else ""
    return f"{what} ({common}{f' x{times}' if times > 1 else ''}{more})"


def upstream_model_failure(trace: Trace, *, detail: bool = True) -> str:
    """Why the evidence could not be judged, when failed model calls are the
    cause (else ""): the assess call failed, or no chunk was kept and grade
    calls failed (an unchecked chunk is not an irrelevant one). Output that
    never parsed counts as failed here: these roles judge the evidence."""
    assessment = trace.assessment
    if assessment is not None:
        failed = model_failure("assess", assessment.calls, detail=detail, unparsed=True)
        if failed:
            return failed
    grades = trace.grades
    if grades is not None and not grades.kept:
        return model_failure("grade", grades.calls, detail=detail, unparsed=True)
    return ""


def refusal_kind(trace: Trace) -> RefusalKind:
    """Why the evidence cannot answer, from the records so far: documents that
    disagree, nothing the user may read matched at all (the search returned no
    chunk: hidden documents are never counted), the model calls that judge the
    evidence failed, or no passage answers."""
    assessment = trace.assessment
    if assessment is not None and assessment.conflict:
        return "conflict"
    retrieval = trace.retrieval
    if retrieval is not None and not retrieval.hits:
        return "no_access"
    if upstream_model_failure(trace):
        return "model_error"
    return "no_evidence"


def clarify_message(language: str, options: list[str]) -> str:
    """Ask which of the qualifiers the documents distinguish the user means."""
    opts = [o for o in options if o][:6]
    if language == "zh":
        if len(opts) >= 2:
            return f"请问您指的是哪一个：{'、'.join(opts[:-1])} 还是 {opts[-1]}？"
        if opts:
            return f"请问您指的是 {opts[0]} 吗？"
        return "请问您指的是哪个产品、套餐或版本？"
    if len(opts) >= 2:
        return f"Which do you mean: {', '.join(opts[:-1])} or {opts[-1]}?"
    if opts:
        return f"Do you mean {opts[0]}?"
    return "Could you tell me which product, plan or version you mean?"


class GenerateStage(Stage):
    name = "generate"

    def __init__(
        self, *, strict: bool = False, avoid: list[str] | None = None, attempt: int = 1, missing: str = ""
    ) -> None:
        self.strict = strict
        self.avoid = list(avoid or [])
        self.attempt = attempt
        #: What the usefulness check found the previous answer did not give.
        self.missing = missing

    async def run(self, trace: Trace, ctx: StageContext) -> Generation:
        t0 = time.perf_counter()
        decision = trace.decision
        assessment = trace.assessment
        retrieve = decision.retrieve if decision is not None else True

        def composed(answer: str, mode: Literal["clarify", "refuse"]) -> Generation:
            return Generation(
                latency_ms=(time.perf_counter() - t0) * 1000, answer=answer, mode=mode, attempt=self.attempt
            )

        if retrieve and assessment is not None and assessment.action == "refuse":
            kind = refusal_kind(trace)
            # A failed check has no reason of its own: say which calls failed.
            why = upstream_model_failure(trace, detail=False) if kind == "model_error" else assessment.reason
            return composed(
                refusal_message(ctx.question, ctx.language, why, assessment.conflict, kind), "refuse"
            )
        if retrieve and assessment is not None and assessment.action == "clarify":
            return composed(clarify_message(ctx.language, assessment.options), "clarify")

        hits = evidence_hits(trace, ctx) if retrieve else []
        direct = not retrieve or (assessment is not None and assessment.action == "answer_without_evidence")
        if not direct and not hits:
            kind = refusal_kind(trace)
            why = upstream_model_failure(trace, detail=False) if kind == "model_error" else NO_PASSAGE
            return composed(refusal_message(ctx.question, ctx.language, why, kind=kind), "refuse")
        mode: Literal["grounded", "strict", "direct"] = (
            "direct" if direct else "strict" if self.strict else "grounded"
        )
        evidence = [] if direct else to_evidence(hits, trace)
        result = await ctx.runner.acall(
            "generate",
            GenerateInputs(
                question=ctx.query,
                evidence=evidence,
                history=ctx.history,
                mode=mode,
                avoid=self.avoid,
                missing=self.missing,
                language=ctx.language,
            ),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        out = result.output
        assert isinstance(out, GenerateOut)
        answer = out.answer.strip() if result.ok else ""
        fallbacks = []
        if not result.ok or not answer:
            fallbacks.append(
                Fallback(
                    what="no answer",
                    reason=f"generate model output {result.call.parse_status}"
                    + (
                        ""
                        if result.ok
                        else f": {result.call.error or result.call.parse_error or ''}".rstrip(": ")
                    ),
                )
            )
        ids = [e.chunk_id for e in evidence]
        return Generation(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            answer=answer,
            mode=mode,
            citations=parse_citations(answer, ids),
            evidence=ids,
            attempt=self.attempt,
        )
