"""Stage 8, verify: is every claim of the answer supported by its evidence?

latest Generation
  mode direct / clarify / refuse -> skipped (None): nothing was drawn from
                                     documents, so there is nothing to check against
  empty answer                   -> Support(REGENERATE), no call
  else -> model "verify" (VerifyInputs: question, answer, the same [n] evidence)
       -> claims: per-claim verdicts (or supportedClaims / unsupportedClaims)
          evidence quote -> ClaimEvidence(chunk_id, span, offsets in the chunk text):
                            the quote is of the clean text the model read, found
                            there and mapped back to the original (locate_quote)
          cited [n] (from the verdict, the claim text, the markers after it in the answer)
          citation_error: [n] not in the evidence, or a cited chunk that does
                          not support the claim (a citation must hold the claim's evidence)
       -> recommendation, made consistent: ACCEPT with an unsupported claim ->
          ADD_DISCLAIMER; any citation error -> REGENERATE (both recorded as Fallback)
"""

from __future__ import annotations

import re
import time

from selfrag_nb.cleantext import clean
from selfrag_nb.llm.schemas import ClaimVerdict, VerifyInputs
from selfrag_nb.llm.schemas import SupportOut as SupportOutput
from selfrag_nb.stages.base import Stage, StageContext, to_evidence
from selfrag_nb.store.types import Hit
from selfrag_nb.text import MARKER, markers_in, strip_markers
from selfrag_nb.trace import Claim, ClaimEvidence, Fallback, Support, Trace

__all__ = ["VerifyStage", "locate", "locate_claim", "locate_quote"]

_TRAILING_MARKERS_RE = re.compile(rf"^(?:\s*{MARKER})+")


def locate(haystack: str, needle: str) -> tuple[int, int]:
    """(start, end) of ``needle`` in ``haystack``: exact, then ignoring case
    and runs of whitespace; (-1, -1) when absent."""
    needle = needle.strip()
    if not needle:
        return -1, -1
    i = haystack.find(needle)
    if i >= 0:
        return i, i + len(needle)
    pattern = r"\s+".join(re.escape(w) for w in needle.split())
    m = re.search(pattern, haystack, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else (-1, -1)


def locate_quote(chunk_text: str, quote: str) -> tuple[int, int]:
    """(start, end) in the original ``chunk_text`` of a quote the verifier took
    from its clean text (``selfrag_nb.cleantext``): found in the clean text
    and mapped back, so the span covers the quoted words and any markup
    between them; else found in the original as it is; (-1, -1) when absent."""
    start, end = clean(chunk_text).locate(quote)
    return (start, end) if start >= 0 else locate(chunk_text, quote)


_CLAIM_TAIL_RE = re.compile(rf"(?:\s*{MARKER})*(?:\s*[.。!?！？;；])?")
_END_PUNCT = ".。!?！？;；"


def locate_claim(answer: str, claim: str) -> tuple[int, int]:
    """(start, end) of a verifier's claim inside the answer, (-1, -1) when
    absent. Verifiers quote claims without their citation markers and often
    with the full stop, while answers read "... the invoice date [1].": so
    the claim is matched without markers and closing punctuation, markers
    may sit between its words, and the span then extends over the markers
    and the closing punctuation that follow it (views highlight the whole
    sentence, and the markers cited there belong to the claim)."""
    core = strip_markers(claim).strip().rstrip(_END_PUNCT).strip()
    words = core.split()
    if not words:  # nothing but markers and punctuation: not a claim
        return -1, -1
    start, end = locate(answer, claim)
    if start < 0:
        gap = rf"(?:\s*{MARKER})*\s+"
        pattern = gap.join(re.escape(w) for w in words)
        m = re.search(pattern, answer, flags=re.IGNORECASE)
        if m is None:
            return -1, -1
        start, end = m.span()
    tail = _CLAIM_TAIL_RE.match(answer, end)
    return start, tail.end() if tail else end


def _supports(chunk_text: str, evidence: list[ClaimEvidence], claim: str) -> bool:
    """True when the cited chunk itself holds a quote the verifier gave for the
    claim (or the claim verbatim): the same fact in two chunks is no citation error."""
    quotes = [e.span for e in evidence if e.span.strip()] + [strip_markers(claim)]
    return any(locate_quote(chunk_text, q)[0] >= 0 for q in quotes)


class VerifyStage(Stage):
    name = "verify"

    async def run(self, trace: Trace, ctx: StageContext) -> Support | None:
        gen = trace.generation
        if gen is None or gen.mode not in {"grounded", "strict"} or not ctx.settings.verify:
            return None
        t0 = time.perf_counter()
        attempt = gen.attempt
        if not gen.answer.strip():
            return Support(
                latency_ms=(time.perf_counter() - t0) * 1000,
                fallbacks=[Fallback(what="REGENERATE", reason="empty answer: nothing to verify")],
                claims=[],
                recommendation="REGENERATE",
                attempt=attempt,
            )
        retrieval = trace.retrieval
        by_id = {h.chunk_id: h for h in (retrieval.hits if retrieval else [])}
        hits: list[Hit] = [by_id[c] for c in gen.evidence if c in by_id]
        evidence = to_evidence(hits, trace)
        result = await ctx.runner.acall(
            "verify",
            VerifyInputs(question=ctx.query, answer=gen.answer, evidence=evidence, language=ctx.language),
            timeout=ctx.call_timeout(),
            deadline=ctx.deadline,
        )
        out = result.output
        assert isinstance(out, SupportOutput)
        fallbacks: list[Fallback] = []
        verdicts = list(out.claims) or [
            *(ClaimVerdict(claim=c, verdict="supported") for c in out.supportedClaims),
            *(ClaimVerdict(claim=c, verdict="unsupported") for c in out.unsupportedClaims),
        ]
        n = len(hits)
        claims: list[Claim] = []
        for cv in verdicts:
            text = cv.claim.strip()
            if not text:
                continue
            start, end = locate_claim(gen.answer, text)
            cited_nums = list(dict.fromkeys([*cv.cited, *markers_in(text)]))
            if start >= 0:
                cited_nums += [x for x in markers_in(gen.answer[start:end]) if x not in cited_nums]
                tail = _TRAILING_MARKERS_RE.match(gen.answer[end:])
                if tail:
                    cited_nums += [x for x in markers_in(tail.group(0)) if x not in cited_nums]
            ev: list[ClaimEvidence] = []
            for q in cv.evidence:
                if not 1 <= q.doc <= n:
                    fallbacks.append(
                        Fallback(
                            what="evidence ignored", reason=f"verifier quoted unknown document [{q.doc}]"
                        )
                    )
                    continue
                hit = hits[q.doc - 1]
                s, e = locate_quote(hit.text, q.quote) if q.quote else (-1, -1)
                ev.append(ClaimEvidence(chunk_id=hit.chunk_id, span=q.quote, start=s, end=e))
            support_ids = {e.chunk_id for e in ev}
            errors: list[str] = []
            cited_ids: list[str] = []
            for num in cited_nums:
                if not 1 <= num <= n:
                    errors.append(f"[{num}] is not in the evidence")
                    continue
                cid = hits[num - 1].chunk_id
                cited_ids.append(cid)
                if cv.verdict == "unsupported":
                    errors.append(f"[{num}] does not support this claim")
                elif support_ids and cid not in support_ids and not _supports(hits[num - 1].text, ev, text):
                    where = ", ".join(f"[{hits.index(by_id[c]) + 1}]" for c in sorted(support_ids))
                    errors.append(f"[{num}] does not support this claim (support found in {where})")
            claims.append(
                Claim(
                    text=text,
                    verdict=cv.verdict,
                    evidence=ev,
                    cited=cited_ids,
                    citation_error="; ".join(errors) or None,
                    start=start,
                    end=end,
                )
            )
        rec = out.recommendation
        if not result.ok:
            fallbacks.append(
                Fallback(what="REGENERATE", reason=f"verify model output {result.call.parse_status}")
            )
        unsupported = [c for c in claims if c.verdict == "unsupported"]
        invalid_markers = [c.marker for c in gen.citations if not c.valid]
        cite_errors = [c for c in claims if c.citation_error]
        if rec == "ACCEPT" and unsupported:
            rec = "ADD_DISCLAIMER"
            fallbacks.append(
                Fallback(what="ADD_DISCLAIMER", reason=f"{len(unsupported)} unsupported claim(s) with ACCEPT")
            )
        if rec != "REGENERATE" and (cite_errors or invalid_markers):
            rec = "REGENERATE"
            detail = (
                f"citation markers {invalid_markers} are not in the evidence"
                if invalid_markers
                else f"{len(cite_errors)} claim(s) cite a chunk that does not support them"
            )
            fallbacks.append(Fallback(what="REGENERATE", reason=detail))
        fully = bool(
            out.isFullySupported and result.ok and not unsupported and not cite_errors and not invalid_markers
        )
        return Support(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=[result.call],
            fallbacks=fallbacks,
            claims=claims,
            overall_confidence=out.overallConfidence if result.ok else 0,
            recommendation=rec,
            is_fully_supported=fully,
            attempt=attempt,
        )
