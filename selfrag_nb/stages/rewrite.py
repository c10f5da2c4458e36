"""Stage 2, rewrite: controlled extra search phrasings, only when useful.

    settings.rewrite False                  -> skipped (the Self-RAG design's pipeline)
    useful?  follow-up reference ("it", "that", "它", "那它", "这个") + history
             or weak match: the best authorised chunk shares few of the question's words
       no  -> Rewrite(queries=[original], attempted=False, reason)
       yes -> protected spans from the ORIGINAL (selfrag_nb.spans)
              -> model "rewrite" (RewriteInputs: question, the user's own history, spans)
              -> each candidate: blank / duplicate / over max_rewrites / span missing /
                 negation flipped -> Rewrite.rejected (reason + missing spans)
              -> Rewrite(queries=[original, *accepted])
    model failure -> original alone + Fallback

Keep the original first, bound the number of rewrites,
never lose product, version, number, time or negation; the answer still
answers the original question (later stages grade and answer ``ctx.query``).
"""

from __future__ import annotations

import asyncio
import re
import time

from selfrag_nb.llm.schemas import RewriteInputs, RewriteOut
from selfrag_nb.spans import check_rewrite, extract_spans
from selfrag_nb.stages.base import FOLLOW_UP_REASON, Stage, StageContext
from selfrag_nb.text import normalize_key, tokenize
from selfrag_nb.trace import Fallback, RejectedRewrite, Rewrite, Trace

__all__ = ["RewriteStage", "needs_rewrite"]

_FOLLOWUP_EN = re.compile(
    r"\b(?:it|its|that|this|those|these|they|them|their|one|ones|same)\b", re.IGNORECASE
)
#: Elliptical follow-ups: "And for the Free plan?", "What about v2?", "那专业版呢？".
_ELLIPSIS_EN = re.compile(r"^\s*(?:and|what about|how about|same for|also)\b", re.IGNORECASE)
_ELLIPSIS_ZH = re.compile(r"^\s*(?:那么|那|还有|另外)")
#: Rewrite.reason of a follow-up completed from the history: grading and
#: reranking then judge chunks against the completed question.
_FOLLOWUP_ZH = ("它", "那它", "这个", "那个", "这些", "那些", "他们", "它们", "该", "其", "上述", "同样")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "i",
        "you",
        "we",
        "my",
        "our",
        "your",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "when",
        "where",
        "why",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "at",
        "by",
        "from",
        "and",
        "or",
        "if",
        "about",
        "as",
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "any",
        "some",
        "me",
        "us",
        "please",
        "tell",
    ]
)
#: Fraction of the question's content words found in the best chunk below
#: which the user's wording is treated as unlike the documents'.
WEAK_OVERLAP = 0.34


def _content_tokens(text: str) -> set[str]:
    return {t for t in tokenize(text) if t not in _STOPWORDS and len(t) > 1}


def needs_rewrite(question: str, has_history: bool, top_text: str | None) -> tuple[bool, str]:
    """(useful, why). ``top_text`` is the best authorised chunk for the
    original question (None: not probed; "" : nothing found)."""
    if has_history and (
        _FOLLOWUP_EN.search(question)
        or any(w in question for w in _FOLLOWUP_ZH)
        or _ELLIPSIS_EN.match(question)
        or _ELLIPSIS_ZH.match(question)
    ):
        return True, FOLLOW_UP_REASON
    if top_text is None:
        return False, "no follow-up reference"
    q = _content_tokens(question)
    if not q:
        return False, "no content words to rephrase"
    if not top_text:
        return True, "no authorised chunk matches the question: trying other phrasings"
    overlap = len(q & _content_tokens(top_text)) / len(q)
    if overlap < WEAK_OVERLAP:
        return True, f"weak match: the best chunk shares {overlap:.0%} of the question's words"
    return False, f"question wording matches the documents ({overlap:.0%} of its words in the best chunk)"


class RewriteStage(Stage):
    name = "rewrite"

    async def run(self, trace: Trace, ctx: StageContext) -> Rewrite | None:
        s = ctx.settings
        if not s.rewrite:
            return None
        t0 = time.perf_counter()
        original = ctx.query
        spans = extract_spans(original)
        has_history = bool(ctx.history)
        useful, why = needs_rewrite(original, has_history, None)
        if not useful and s.max_rewrites > 0:
            hits = await asyncio.to_thread(ctx.kb.search, original, k=1, mode=s.search_mode, user=ctx.user)
            useful, why = needs_rewrite(original, has_history, hits[0].text if len(hits) else "")
        if not useful or s.max_rewrites == 0:
            return Rewrite(
                latency_ms=(time.perf_counter() - t0) * 1000,
                queries=[original],
                protected=spans,
                reason=why if s.max_rewrites else "settings.max_rewrites is 0",
            )

        result = await ctx.runner.acall(
            "rewrite",
            RewriteInputs(
                question=original,
                history=ctx.history,
                protected=[p.text for p in spans],
                max_rewrites=s.max_rewrites,
                language=ctx.language,
            ),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        fallbacks: list[Fallback] = []
        accepted: list[str] = []
        rejected: list[RejectedRewrite] = []
        if not result.ok:
            fallbacks.append(
                Fallback(
                    what="original question only",
                    reason=f"rewrite model output {result.call.parse_status}",
                )
            )
        else:
            out = result.output
            assert isinstance(out, RewriteOut)
            seen = {normalize_key(original)}
            for cand in out.rewrites:
                text = " ".join(str(cand).split())
                if not text:
                    rejected.append(RejectedRewrite(text=str(cand), reason="blank rewrite"))
                    continue
                if normalize_key(text) in seen:
                    rejected.append(RejectedRewrite(text=text, reason="duplicate of an earlier query"))
                    continue
                check = check_rewrite(original, text, spans)
                if not check.ok:
                    rejected.append(RejectedRewrite(text=text, reason=check.reason, missing=check.missing))
                    continue
                if len(accepted) >= s.max_rewrites:
                    rejected.append(
                        RejectedRewrite(text=text, reason=f"over the limit of {s.max_rewrites} rewrites")
                    )
                    continue
                seen.add(normalize_key(text))
                accepted.append(text)
        return Rewrite(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            queries=[original, *accepted],
            rejected=rejected,
            protected=spans,
            reason=why,
            attempted=True,
        )
