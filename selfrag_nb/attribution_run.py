"""Leave-one-out attribution of a trace's verification (records: attribution.py).

attribute(trace, rag, estimate, confirm, sentences)    (sync; aattribute is the async form)
  _Target: the latest Support and the Generation it judged
    refused / no generation / not from documents / not verified / no claims
      -> Attribution(reason=...), no call
  _verifier: the verify model, prompts, settings, language
    rag given     its runner, if its verify model is the trace's (else InputError)
    no rag        the offline model, if the trace's verify call was offline
                  (else InputError: pass the SelfRAG that made the trace)
    the rebuilt full-context prompt must be the one the trace recorded
      (else InputError: the trace was made with other prompts or language)
  _plan: the full context's VerifyInputs (as stages/verify.py builds them)
    one per kept chunk left out (its [n] stays a gap: the answer's markers
      keep their numbers and the one left out points at nothing)
    one per evidence sentence a supported claim quoted, cut from its chunk
      (sentences=None: only with the offline model, where calls are free)
    identical calls keyed by model + inputs + rendered prompt: made once;
    the full context itself: the trace's call, never made again
    -> AttributionPlan (calls, tokens estimated from the trace's verify call)
       real model above CONFIRM_CALLS / CONFIRM_TOKENS, no confirm
         -> AttributionCostError stating the plan
  _run: every distinct call at once, bounded by a semaphore (_concurrency:
    Settings.provider_concurrency, else the backend's own provider limit,
    1 for a local server, else grade_concurrency, else DEFAULT_CONCURRENCY)
    with PROVIDER_CONCURRENCY set as the pipeline's stages set it
  _verdicts: each ablated output's claims matched to the trace's claims
    (same words without markers and case, else overlapping offsets in the answer)
    -> effect_of(before, after) per claim x chunk / sentence
  = Attribution
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selfrag_nb._sync import run_sync
from selfrag_nb.attribution import (
    CONFIRM_CALLS,
    CONFIRM_TOKENS,
    Attribution,
    AttributionChunk,
    AttributionCostError,
    AttributionPlan,
    Cell,
    ClaimAttribution,
    SentenceCell,
    effect_of,
)
from selfrag_nb.config import Settings
from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.llm.base import PROVIDER_CONCURRENCY
from selfrag_nb.llm.schemas import ClaimVerdict, Evidence, SupportOut, VerifyInputs
from selfrag_nb.stages.base import MAX_MODEL_QUESTION_CHARS, to_evidence
from selfrag_nb.stages.verify import locate, locate_claim
from selfrag_nb.store.types import ChunkRef
from selfrag_nb.text import detect_language, strip_markers
from selfrag_nb.trace import Claim, Generation, ModelCall, Support, Trace

if TYPE_CHECKING:
    from selfrag_nb.llm.runner import CallResult, ModelRunner

__all__ = ["DEFAULT_CONCURRENCY", "aattribute", "attribute", "plan"]

#: Ablation calls in flight when neither the settings nor the backend set a limit.
DEFAULT_CONCURRENCY = 8


@dataclass
class _Target:
    trace: Trace
    generation: Generation
    support: Support
    call: ModelCall


@dataclass
class _Verifier:
    runner: ModelRunner
    settings: Settings
    language: str
    name: str
    offline: bool


@dataclass
class _Ablation:
    kind: str  # "chunk" | "sentence"
    chunk_id: str
    span: str
    key: str


@dataclass
class _Plan:
    record: AttributionPlan
    ablations: list[_Ablation] = field(default_factory=list)
    #: key -> inputs, in plan order; the full context's key is never in it.
    calls: dict[str, VerifyInputs] = field(default_factory=dict)
    full_key: str = ""


# ---------------------------------------------------------------- entry points


def attribute(
    trace: Trace,
    rag: Any = None,
    *,
    estimate: bool = False,
    confirm: bool = False,
    sentences: bool | None = None,
) -> Attribution | AttributionPlan:
    """Which chunk each claim of ``trace``'s answer stands on (see the module doc).
    ``estimate=True``: the AttributionPlan only, no call made. Works inside a running loop."""
    return run_sync(lambda: aattribute(trace, rag, estimate=estimate, confirm=confirm, sentences=sentences))


def plan(trace: Trace, rag: Any = None, *, sentences: bool | None = None) -> AttributionPlan:
    """The cost of ``attribute(trace, rag)``, stated before it runs (no model call)."""
    out = attribute(trace, rag, estimate=True, sentences=sentences)
    assert isinstance(out, AttributionPlan)
    return out


async def aattribute(
    trace: Trace,
    rag: Any = None,
    *,
    estimate: bool = False,
    confirm: bool = False,
    sentences: bool | None = None,
) -> Attribution | AttributionPlan:
    """Async ``attribute``."""
    if not isinstance(trace, Trace):
        raise InputTypeError(f"attribution needs a selfrag_nb.Trace, got {type(trace).__name__}")
    if sentences is not None and not isinstance(sentences, bool):
        raise InputTypeError(f"sentences must be True, False or None, got {type(sentences).__name__}")
    t0 = time.perf_counter()
    target = _target(trace)
    if isinstance(target, str):
        empty = AttributionPlan(question=trace.question, reason=target)
        if estimate:
            return empty
        return Attribution(question=trace.question, answer=trace.answer or "", reason=target, plan=empty)
    verifier = _verifier(target, rag)
    p = _plan(target, verifier, verifier.offline if sentences is None else sentences)
    if estimate:
        return p.record
    if p.record.needs_confirmation and not confirm:
        r = p.record
        raise AttributionCostError(
            f"attribution with {r.model!r} would make {r.calls} verify call(s), about "
            f"{r.tokens_in:,} input tokens (limit without confirmation: {CONFIRM_CALLS} calls, "
            f"{CONFIRM_TOKENS:,} tokens); pass confirm=True to run it, or estimate=True to see the plan",
            plan=r,
        )
    results = await _run(p, verifier)
    return _attribution(target, verifier, p, results, (time.perf_counter() - t0) * 1000)


# ---------------------------------------------------------------- what to attribute


def _target(trace: Trace) -> _Target | str:
    """The verification to ablate, or why there is none."""
    finish = trace.finish
    if finish is not None and finish.outcome == "refused":
        why = f" ({finish.reason_kind})" if finish.reason_kind else ""
        return f"refused{why}: no answer was delivered, so no claim stands on a chunk"
    support = trace.support
    if support is None:
        gen = trace.generation
        if gen is None:
            return "no answer was generated"
        if gen.mode not in {"grounded", "strict"}:
            return f"the answer was not drawn from documents (generation mode {gen.mode!r})"
        return "the answer was not verified (the verify stage did not run)"
    gen = next((g for g in reversed(trace.generations) if g.attempt == support.attempt), None)
    if gen is None:
        return f"the trace holds no generation for verification attempt {support.attempt}"
    failed = next((c for c in support.calls if c.parse_status in ("error", "unparsed")), None)
    if failed is not None and not support.claims:
        return f"the verification call failed ({failed.parse_status}): there are no verdicts to compare"
    if not support.claims or not support.calls:
        return "the verifier found no claims in the answer"
    if not gen.evidence:
        return "the answer was verified against no chunks"
    return _Target(trace=trace, generation=gen, support=support, call=support.calls[0])


def _trace_settings(trace: Trace) -> Settings:
    try:
        return Settings.model_validate(trace.config.settings)
    except ValueError:  # a trace from another version: the defaults bound the calls
        return Settings()


def _verifier(target: _Target, rag: Any) -> _Verifier:
    """The trace's own verify model, prompts and language, or an error naming what to pass.

    ``rag``: None (the offline model, when the trace's verification was
    offline), a SelfRAG (or Stepper: its pipeline), or a verify model (a
    Model object or a LiteLLM model string) used with the trace's settings."""
    from selfrag_nb.llm.base import Model
    from selfrag_nb.llm.runner import ModelRunner

    call = target.call
    trace = target.trace
    rag = getattr(rag, "rag", rag)  # a Stepper: its pipeline
    language = getattr(rag, "language", None) or detect_language(trace.question)
    if rag is None:
        if not call.offline:
            raise InputError(
                f"this trace was verified by {call.model!r}, not the offline model: pass the "
                "SelfRAG that made it (trace.attribution(rag) or rag.attribution(trace)) or its "
                "verify model; attribution never judges with a different model"
            )
        settings = _trace_settings(trace)
        runner = ModelRunner(None, prompts=settings.prompts, timeout=settings.timeout)
    elif isinstance(rag, str | Model):
        settings = _trace_settings(trace)
        runner = ModelRunner(rag, prompts=settings.prompts, timeout=settings.timeout)
    else:
        given_runner = getattr(rag, "runner", None)
        given_settings = getattr(rag, "settings", None)
        if not isinstance(given_runner, ModelRunner) or not isinstance(given_settings, Settings):
            raise InputTypeError(
                "attribution needs a selfrag_nb.SelfRAG, a Stepper, a Model or a LiteLLM model "
                f"string (or None for an offline trace), got {type(rag).__name__}"
            )
        runner, settings = given_runner, given_settings
    name = runner.models_by_role().get("verify", "")
    if name != call.model:
        raise InputError(
            f"this trace was verified by {call.model!r} but what was given verifies with {name!r}: "
            "pass the SelfRAG (or the verify model) that made the trace"
        )
    model = runner.model_for("verify")
    return _Verifier(
        runner=runner,
        settings=settings,
        language=language,
        name=call.model,
        offline=bool(getattr(model, "offline", False)),
    )


# ---------------------------------------------------------------- the plan


def _full_inputs(target: _Target, verifier: _Verifier) -> tuple[VerifyInputs, dict[str, ChunkRef]]:
    """The full context's VerifyInputs as the verify stage built them, and each chunk's ref."""
    trace, gen = target.trace, target.generation
    retrieval = trace.retrieval
    by_id = {h.chunk_id: h for h in (retrieval.hits if retrieval else [])}
    hits = [by_id[c] for c in gen.evidence if c in by_id]
    inputs = VerifyInputs(
        question=trace.question[:MAX_MODEL_QUESTION_CHARS],
        answer=gen.answer,
        evidence=to_evidence(hits, trace),
        language=verifier.language,
    )
    return inputs, {h.chunk_id: ChunkRef.from_hit(h) for h in hits}


def _key(verifier: _Verifier, inputs: VerifyInputs) -> tuple[str, list[dict[str, str]]]:
    """(identity of a call, its rendered messages): the same model, inputs and prompt."""
    messages = [
        {"role": m.role, "content": m.content} for m in verifier.runner.prompts.render("verify", inputs)
    ]
    blob = json.dumps([verifier.name, inputs.model_dump(mode="json"), messages], sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest(), messages


def _without_span(ev: Evidence, span: str) -> Evidence | None:
    """``ev`` with the quoted sentence cut out of its text (None when not found)."""
    start, end = locate(ev.text, span)
    if start < 0:
        return None
    text = re.sub(r"\s{2,}", " ", f"{ev.text[:start]} {ev.text[end:]}").strip()
    return ev.model_copy(update={"text": text})


def _plan(target: _Target, verifier: _Verifier, sentences: bool) -> _Plan:
    full, _ = _full_inputs(target, verifier)
    full_key, messages = _key(verifier, full)
    # A repaired call records the repair conversation: the prompt is its beginning.
    recorded = target.call.messages[: len(messages)]
    if recorded and messages != recorded and not any("[REDACTED]" in m.get("content", "") for m in recorded):
        raise InputError(
            "cannot rebuild the verification this trace recorded: the prompt differs (other prompt "
            "templates, language or library version); pass the SelfRAG that made the trace"
        )
    out = _Plan(record=AttributionPlan(), full_key=full_key)
    seen: set[str] = {full_key}
    collapsed = 0

    def add(kind: str, chunk_id: str, span: str, inputs: VerifyInputs) -> None:
        nonlocal collapsed
        key, _ = _key(verifier, inputs)
        out.ablations.append(_Ablation(kind, chunk_id, span, key))
        if key in seen:
            collapsed += key != full_key
            return
        seen.add(key)
        out.calls[key] = inputs

    for ev in full.evidence:
        add(
            "chunk",
            ev.chunk_id,
            "",
            full.model_copy(update={"evidence": [e for e in full.evidence if e is not ev]}),
        )
    n_chunks = len(out.ablations)
    if sentences:
        by_id = {e.chunk_id: e for e in full.evidence}
        planned: set[tuple[str, str]] = set()
        for claim in target.support.claims:
            if claim.verdict == "unsupported":
                continue
            for q in claim.evidence:
                quoted = by_id.get(q.chunk_id)
                if (q.chunk_id, q.span) in planned:
                    continue
                planned.add((q.chunk_id, q.span))
                cut = _without_span(quoted, q.span) if quoted is not None and q.span.strip() else None
                if cut is None:
                    continue
                evidence = [cut if e.chunk_id == q.chunk_id else e for e in full.evidence]
                add("sentence", q.chunk_id, q.span, full.model_copy(update={"evidence": evidence}))
    out.record = _estimate(
        target, verifier, full=full, messages=messages, p=out, n_chunks=n_chunks, collapsed=collapsed
    )
    return out


def _chars(messages: list[dict[str, str]]) -> int:
    return sum(len(m.get("content", "")) for m in messages)


def _estimate(
    target: _Target,
    verifier: _Verifier,
    *,
    full: VerifyInputs,
    messages: list[dict[str, str]],
    p: _Plan,
    n_chunks: int,
    collapsed: int,
) -> AttributionPlan:
    """Tokens and dollars of the planned calls, scaled from the trace's own
    verify call by prompt length (4 characters a token when it has no count)."""
    call = target.call
    full_chars = max(1, _chars(messages))
    per_char = (call.tokens_in / full_chars) if call.tokens_in else 0.25
    out_tokens = call.tokens_out if call.tokens_out is not None else math.ceil(len(call.raw) / 4)
    tokens_in = 0
    cost: float | None = 0.0
    for inputs in p.calls.values():
        chars = _chars(_key(verifier, inputs)[1])
        est = math.ceil(chars * per_char)
        tokens_in += est
        if cost is not None:
            cost = None if call.cost is None else cost + call.cost * chars / full_chars
    calls = len(p.calls)
    return AttributionPlan(
        question=target.trace.question,
        model=verifier.name,
        offline=verifier.offline,
        chunks=len(full.evidence),
        claims=len(target.support.claims),
        chunk_ablations=n_chunks,
        sentence_ablations=len(p.ablations) - n_chunks,
        calls=calls,
        collapsed=collapsed,
        reused=1,
        tokens_in=tokens_in,
        tokens_out=out_tokens * calls,
        cost=cost,
        concurrency=_concurrency(verifier),
        needs_confirmation=not verifier.offline and (calls > CONFIRM_CALLS or tokens_in > CONFIRM_TOKENS),
    )


def _concurrency(verifier: _Verifier) -> int:
    """Calls in flight at once (see the module doc)."""
    s = verifier.settings
    if s.provider_concurrency is not None:
        return s.provider_concurrency
    model: Any = verifier.runner.model_for("verify")
    while model is not None:  # through the cache / cassette wrappers to the backend
        limit = getattr(model, "provider_concurrency", None)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1:
            return limit
        model = getattr(model, "inner", None)
    return s.grade_concurrency or DEFAULT_CONCURRENCY


# ---------------------------------------------------------------- the calls


async def _run(p: _Plan, verifier: _Verifier) -> dict[str, CallResult]:
    limit = asyncio.Semaphore(p.record.concurrency)
    timeout = verifier.settings.timeout

    async def one(inputs: VerifyInputs) -> CallResult:
        async with limit:
            return await verifier.runner.acall("verify", inputs, timeout=timeout)

    # Set before gather creates the tasks, which copy the context (as the pipeline's stages do).
    token = PROVIDER_CONCURRENCY.set(verifier.settings.provider_concurrency)
    try:
        results = await asyncio.gather(*(one(i) for i in p.calls.values()))
    finally:
        PROVIDER_CONCURRENCY.reset(token)
    return dict(zip(p.calls, results, strict=True))


_END = ".。!?！？;；"


def _norm(text: str) -> str:
    return " ".join(strip_markers(text).split()).strip().rstrip(_END).strip().casefold()


def _verdicts(claims: list[Claim], answer: str, result: CallResult | None) -> list[str | None]:
    """The ablated verdict of each of the trace's claims (None: not known)."""
    if result is None or not result.ok:
        return [None] * len(claims)
    out = result.output
    assert isinstance(out, SupportOut)
    given = list(out.claims) or [
        *(ClaimVerdict(claim=c, verdict="supported") for c in out.supportedClaims),
        *(ClaimVerdict(claim=c, verdict="unsupported") for c in out.unsupportedClaims),
    ]
    found: list[str | None] = [None] * len(claims)
    names = [_norm(c.text) for c in claims]
    rest: list[ClaimVerdict] = []
    for cv in given:
        i = next((i for i, n in enumerate(names) if found[i] is None and n == _norm(cv.claim)), None)
        if i is None:
            rest.append(cv)
        else:
            found[i] = cv.verdict
    for cv in rest:  # worded differently: the claim at the same place in the answer
        s, e = locate_claim(answer, cv.claim)
        if s < 0:
            continue
        i = next(
            (
                i
                for i, c in enumerate(claims)
                if found[i] is None and c.start >= 0 and s < c.end and c.start < e
            ),
            None,
        )
        if i is not None:
            found[i] = cv.verdict
    return found


def _attribution(
    target: _Target, verifier: _Verifier, p: _Plan, results: dict[str, CallResult], wall_ms: float
) -> Attribution:
    full, refs = _full_inputs(target, verifier)
    claims, answer = target.support.claims, target.generation.answer
    by_key: dict[str, list[str | None]] = {p.full_key: [c.verdict for c in claims]}
    for key, res in results.items():
        by_key[key] = _verdicts(claims, answer, res)
    rows = []
    for i, claim in enumerate(claims):
        cells = []
        sents = []
        for ab in p.ablations:
            after = by_key[ab.key][i]
            verdict: Any = after
            if ab.kind == "chunk":
                cells.append(
                    Cell(chunk_id=ab.chunk_id, verdict=verdict, effect=effect_of(claim.verdict, after))
                )
            elif any(q.chunk_id == ab.chunk_id and q.span == ab.span for q in claim.evidence):
                sents.append(
                    SentenceCell(
                        chunk_id=ab.chunk_id,
                        span=ab.span,
                        verdict=verdict,
                        effect=effect_of(claim.verdict, after),
                    )
                )
        rows.append(
            ClaimAttribution(
                text=claim.text,
                verdict=claim.verdict,
                start=claim.start,
                end=claim.end,
                evidence=claim.evidence,
                cited=claim.cited,
                cells=cells,
                sentences=sents,
            )
        )
    return Attribution(
        question=target.trace.question,
        answer=answer,
        model=verifier.name,
        offline=verifier.offline,
        attempt=target.support.attempt,
        chunks=[
            AttributionChunk.of(e.chunk_id, e.index, refs.get(e.chunk_id, ChunkRef(chunk_id=e.chunk_id)))
            for e in full.evidence
        ],
        claims=rows,
        calls=[results[k].call for k in p.calls],
        plan=p.record,
        wall_ms=wall_ms,
    )
