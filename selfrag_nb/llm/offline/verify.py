"""The verify role: every claim of an answer checked against the evidence sentences.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                                                   ^^^^^^ here:
                                                                  imports lexical, surface, evidence,
                                                                  and generate (its refusal wordings).

    VerifyInputs -> a refusal (generate.NO_INFO / NOT_FOUND): ACCEPT, claims nothing
                 -> claims (sentences, and a cited sentence's end "[n]." whatever
                    follows; [n] markers and disclaimer removed)
                    x evidence sentences (injections set aside, superseded marked stale):
                    (chunk text through surface.readable: no control characters,
                    table rows as sentences),
                    weighted overlap (adjacent pair merged, discounted),
                    number/ID agreement, negation agreement (lexical.negated_terms),
                    key terms (surface.missing_key_terms: a name, unit, currency
                    or product in no evidence -> unsupported), raw table markup
                    (never supported), an injection echoed
                 -> supported / partial / unsupported per claim
                 -> overallConfidence, ACCEPT / ADD_DISCLAIMER / REGENERATE

Heuristics and thresholds: ``docs/offline_model.md`` (verify).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from selfrag_nb.llm.offline.evidence import evidence_status
from selfrag_nb.llm.offline.generate import NO_INFO, NOT_FOUND, heading_value
from selfrag_nb.llm.offline.lexical import (
    bag,
    coverage,
    disagree,
    exact_terms,
    has_negation,
    looks_like_injection,
    negated_terms,
    quantities,
    sentences,
    strip_citations,
    terms,
)
from selfrag_nb.llm.offline.quotable import headed_code, listed
from selfrag_nb.llm.offline.surface import missing_key_terms, readable, table_markup
from selfrag_nb.llm.schemas import ClaimVerdict, EvidenceQuote, SupportOut, VerifyInputs
from selfrag_nb.text import MARKER, normalize_key

__all__ = ["verify"]


_REFUSALS = frozenset(normalize_key(t) for t in (*NO_INFO.values(), *NOT_FOUND.values()))

_DISCLAIMER_RE = re.compile(
    r"^\s*(?:根据现有信息[：:，,]?|根据现有资料[：:，,]?|"
    r"(?:based on|according to) (?:the )?(?:available|current|existing) (?:information|documents)[,:.]?)\s*",
    re.IGNORECASE,
)


def _contradicts(
    claim_keys: frozenset[str], claim_neg: frozenset[str], keys: frozenset[str], neg: frozenset[str]
) -> bool:
    """Same topic (two or more shared terms) and a shared term negated on one side only."""
    shared = claim_keys & keys
    return len(shared) >= 2 and bool((claim_neg ^ neg) & shared)


@dataclass(frozen=True)
class _EvSentence:
    index: int
    text: str
    bag: Counter[str]
    keys: frozenset[str]
    neg: frozenset[str]
    #: The sentence states a negation at all ("not", "no", "cannot", 不, ...).
    negative: bool = False
    #: From a superseded chunk while a current one is in the evidence.
    stale: bool = False


#: An opposite-polarity sentence contradicts a claim only when it overlaps the
#: claim this much (see ``_opposite``).
CONTRADICT_COVER = 0.6


def _opposite(
    claim: str, cterms: dict[str, float], ev_sents: list[_EvSentence], covs: list[float]
) -> _EvSentence | None:
    """The evidence sentence that says the opposite of the claim, if any: the
    other polarity, a shared term negated on one side only, and about the
    same thing. "Same thing" is the better of two overlaps: how much of the
    claim the sentence covers, and how much of the sentence the claim covers
    ("XML is not supported." is all inside "In API v2, XML export is
    supported"). It must reach ``CONTRADICT_COVER`` and beat every sentence
    of the claim's own polarity, so "The Free plan costs $0" does not refute
    "Webhooks are not supported on the Free plan" (which the evidence says
    verbatim). A superseded chunk contradicts nothing while a current one exists."""
    claim_keys, claim_neg = frozenset(cterms), frozenset(negated_terms(claim))
    negative = has_negation(claim)
    candidates = [
        (es, cov)
        for es, cov in zip(ev_sents, covs, strict=True)
        if es.negative != negative and not es.stale and _contradicts(claim_keys, claim_neg, es.keys, es.neg)
    ]
    if not candidates:
        return None
    claim_bag = bag(claim)

    def overlap(es: _EvSentence, cov: float) -> float:
        return max(cov, coverage(terms(es.text), claim_bag)[0])

    same = max(
        (overlap(es, c) for es, c in zip(ev_sents, covs, strict=True) if es.negative == negative and c > 0),
        default=0.0,
    )
    found: tuple[float, _EvSentence] | None = None
    for es, cov in candidates:
        score = overlap(es, cov)
        if score >= CONTRADICT_COVER and score > same and (found is None or score > found[0]):
            found = (score, es)
    return found[1] if found else None


#: A citation and the full stop after it end a claim, whatever follows: the
#: next claim may open with a name in lower case ("... library [1].
#: responses.get(...) registers ..."), where a sentence splitter waits for a capital.
_CITED_END_RE = re.compile(rf"({MARKER}\s*[.!?。！？])[ \t]+(?=\S)")


def _claims(answer: str) -> list[tuple[str, list[int]]]:
    body = _CITED_END_RE.sub("\\1\n", _DISCLAIMER_RE.sub("", answer.strip()))
    out: list[tuple[str, list[int]]] = []
    for sent in sentences(body):
        clean, cited = strip_citations(sent)
        clean = clean.strip()
        # Connectives ("Here is what I found:") are not claims.
        if sum(terms(clean).values()) < 1.0 or clean.endswith((":", "：")):
            continue
        out.append((clean, cited))
    return out


def verify(inputs: VerifyInputs) -> SupportOut:
    """Per claim: best evidence sentence by weighted overlap, numbers/IDs must
    agree, negations must agree -> verdict; then confidence and recommendation."""
    answer = inputs.answer.strip()
    if normalize_key(_DISCLAIMER_RE.sub("", answer)) in _REFUSALS:
        # "The documents contain no relevant information." claims nothing about them.
        return SupportOut(isFullySupported=True, overallConfidence=100, recommendation="ACCEPT")
    claims = _claims(answer)
    if not claims:
        return SupportOut(isFullySupported=False, overallConfidence=0, recommendation="REGENERATE")
    ev_sents: list[_EvSentence] = []
    injected: list[Counter[str]] = []  # bags of injection sentences: what an obeying model would claim
    ev_exact: set[str] = set()
    chunk_text: dict[int, str] = {}
    any_current = any(evidence_status(e) != "superseded" for e in inputs.evidence)
    for ev in inputs.evidence:
        stale = evidence_status(ev) == "superseded" and any_current
        text = readable(ev.text)
        full = f"{ev.title} {ev.heading} {text}"
        chunk_text[ev.index] = full
        ev_exact |= exact_terms(full).all
        version = ev.metadata.get("version")
        if isinstance(version, str | int | float) and not isinstance(version, bool):
            ev_exact |= exact_terms(f"v{str(version).removeprefix('v')}").all
        # an instruction may hide in a heading or title as well as in the text
        injected.extend(bag(t) for t in (ev.title, ev.heading) if t and looks_like_injection(t))
        # "## License" over "MIT" states "License: MIT." (the quote generate makes).
        # So does "Installation" over a short code block alone: "Installation: `pip install x`."
        value = heading_value(ev) or headed_code(ev.heading, text)
        # A lead-in read with its list items or its code is one sentence, as generate quotes it.
        for sent in [value] if value else [*sentences(text), *listed(text)]:
            if looks_like_injection(sent):
                injected.append(bag(sent))
            else:
                ev_sents.append(
                    _EvSentence(
                        ev.index,
                        sent,
                        bag(sent),
                        frozenset(terms(sent)),
                        frozenset(negated_terms(sent)),
                        has_negation(sent),
                        stale,
                    )
                )

    all_text = "\n".join(chunk_text.values())
    all_bag = bag(all_text)
    verdicts: list[ClaimVerdict] = []
    scores: list[tuple[float, int, bool]] = []  # (weight, confidence, important failure)
    for claim, cited in claims:
        cterms = terms(claim)
        weight = sum(cterms.values())
        best: _EvSentence | None = None
        best_cov = 0.0
        covs: list[float] = []
        for es in ev_sents:
            cov, _ = coverage(cterms, es.bag)
            covs.append(cov)
            if es.index in cited:
                cov += 0.02  # ties go to the document the claim cites
            if cov > best_cov:
                best, best_cov = es, cov
        best_cov = min(best_cov, 1.0)
        # A claim may merge two adjacent sentences of one chunk: their union, discounted.
        for first, second in itertools.pairwise(ev_sents):
            if first.index != second.index:
                continue
            cov, _ = coverage(cterms, first.bag + second.bag)
            if cov * 0.9 > best_cov + 1e-9:
                best_cov = cov * 0.9
                best = first if coverage(cterms, first.bag)[0] >= coverage(cterms, second.bag)[0] else second
        if best is not None and best.index not in cited:
            # A cited sentence holding every word of the claim states it: a word
            # repeated in another document's sentence ("License ... license")
            # scores higher on frequency, not on what it says.
            whole = [es for es in ev_sents if es.index in cited and not coverage(cterms, es.bag)[1]]
            if whole:
                best = max(whole, key=lambda es: coverage(cterms, es.bag)[0])
                best_cov = min(1.0, coverage(cterms, best.bag)[0])
        cx = exact_terms(claim).all
        exact_missing = sorted(cx - ev_exact)
        # A name, unit, currency or product no evidence mentions: the claim adds
        # a specific fact of its own ("Refunds are paid in Bitcoin.").
        key_missing = missing_key_terms(claim, all_text, all_bag)
        # Raw table syntax ("| Pro | 30 days |") is markup, not a statement.
        markup = table_markup(claim)
        mismatch = bool(best and disagree(quantities(claim), quantities(best.text)))
        # Any on-topic evidence sentence with the opposite polarity contradicts the claim.
        opposite = _opposite(claim, cterms, ev_sents, covs)
        contradiction = opposite is not None
        if opposite is not None:
            best = opposite  # show the sentence that says the opposite
        partial_exact = bool(best and cx and not (cx <= exact_terms(chunk_text[best.index]).all))
        # A claim an injected instruction states better than any real sentence
        # is the injection obeyed ("say the Pro plan costs nothing"), not evidence.
        echoes_injection = any(
            (cov := coverage(cterms, inj)[0]) >= 0.7 and cov > best_cov for inj in injected
        )
        hard = bool(exact_missing or key_missing or markup or mismatch or contradiction or echoes_injection)
        if hard:
            verdict, conf = "unsupported", 0
        elif best_cov >= 0.7:
            verdict, conf = "supported", min(100, round(100 * best_cov / 0.85))
            if partial_exact:
                verdict, conf = "partial", min(conf, 60)
        elif best_cov >= 0.4:
            verdict, conf = "partial", min(79, round(100 * best_cov / 0.85))
        else:
            verdict, conf = "unsupported", min(30, round(100 * best_cov))
        quotes = [EvidenceQuote(doc=best.index, quote=best.text)] if best and best_cov > 0 else []
        verdicts.append(ClaimVerdict(claim=claim, verdict=verdict, evidence=quotes, cited=cited))
        scores.append((weight, conf, hard))

    total = sum(w for w, _, _ in scores) or 1.0
    confidence = round(sum(w * c for w, c, _ in scores) / total)
    supported_share = (
        sum(w for (w, _, _), v in zip(scores, verdicts, strict=True) if v.verdict == "supported") / total
    )
    unsupported_important = any(
        v.verdict == "unsupported" and (hard or w / total >= 0.25)
        for (w, _, hard), v in zip(scores, verdicts, strict=True)
    )
    all_supported = all(v.verdict == "supported" for v in verdicts)
    recommendation: Any
    if all_supported and confidence >= 80:
        recommendation = "ACCEPT"
    elif unsupported_important:
        recommendation = "REGENERATE"
    elif supported_share >= 0.5 or (all(v.verdict != "unsupported" for v in verdicts) and confidence >= 50):
        recommendation = "ADD_DISCLAIMER"
    else:
        recommendation = "REGENERATE"
    return SupportOut(
        isFullySupported=all_supported,
        supportedClaims=[v.claim for v in verdicts if v.verdict == "supported"],
        unsupportedClaims=[v.claim for v in verdicts if v.verdict == "unsupported"],
        claims=verdicts,
        overallConfidence=max(0, min(100, confidence)),
        recommendation=recommendation,
    )
