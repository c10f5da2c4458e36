"""Evidence attribution (docs/attribution.md): each kept chunk left out of the
verification in turn; a claim lost without a chunk rests on it (decisive).

Real parts throughout: a LanceDB knowledge base in a tmp folder, the offline
model, and for the cost and concurrency rules a ScriptedModel verifier."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from helpers_pipeline import DOCS, REFUND_CLAIM, script_refund, verdict

import selfrag_nb as sr
from selfrag_nb.attribution import CONFIRM_TOKENS, Attribution, AttributionCostError, AttributionPlan
from selfrag_nb.llm.base import Completion, ModelRequest

Q = "How long do I have to request a refund?"


def _kb(root: Path, docs: dict[str, str]) -> Any:
    (root / "docs").mkdir(parents=True)
    for name, text in docs.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(root / "docs")
    return kb


def _plain(kb: Any, **kw: Any) -> Any:
    """Offline pipeline whose answer is verified against the top retrieved
    chunks (no grading), so chunks that say nothing about the claim are kept too."""
    return sr.SelfRAG(kb, settings=sr.Settings(grade=False), **kw)


def _by_source(a: Attribution) -> dict[str, str]:
    return {c.ref.source: c.chunk_id for c in a.chunks}


def _timeless(a: Attribution) -> dict[str, Any]:
    """The record without what a clock measures (wall time, each call's latency)."""
    data: dict[str, Any] = json.loads(a.to_json())
    data.pop("wall_ms")
    for call in data["calls"]:
        call.pop("latency_ms")
    return data


# ------------------------------------------------------------ the rule


def test_the_only_supporting_chunk_is_decisive_and_a_chunk_that_supports_nothing_is_unaffected(
    kb: Any,
) -> None:
    trace = _plain(kb).ask(Q)
    assert trace.outcome == "answered"
    a = trace.attribution()
    assert isinstance(a, Attribution)
    ids = _by_source(a)
    assert set(ids) == {"refunds.md", "plans.md", "export.md", "shipping.md"}
    refund = next(r for r in a.claims if "refund" in r.text)
    assert refund.verdict == "supported"
    cell = next(c for c in refund.cells if c.chunk_id == ids["refunds.md"])
    assert (cell.verdict, cell.effect) == ("unsupported", "decisive")
    assert refund.decisive == [ids["refunds.md"]]
    assert refund.rests_on_single_chunk
    # Shipping says nothing any claim says: leaving it out changes no verdict.
    for row in a.claims:
        ship = next(c for c in row.cells if c.chunk_id == ids["shipping.md"])
        assert (ship.verdict, ship.effect) == (row.verdict, "unaffected")
    # The quoted sentence alone carries the claim too.
    assert [s.effect for s in refund.sentences] == ["decisive"]
    assert str(a) == repr(a) == f"attribution: {len(a.claims)} claim × 4 chunks, 1 decisive cell"


def test_a_claim_two_chunks_support_rests_on_neither_alone(tmp_path: Path) -> None:
    docs = dict(DOCS)
    docs["refund-faq.md"] = (
        "---\ntitle: Refund FAQ\n---\n# Refund FAQ\n\n"
        "Customers can request a full refund within 30 days of purchase.\n"
    )
    trace = _plain(_kb(tmp_path, docs)).ask(Q)
    a = trace.attribution()
    assert isinstance(a, Attribution)
    ids = _by_source(a)
    assert {"refunds.md", "refund-faq.md"} <= set(ids)
    refund = next(r for r in a.claims if "refund" in r.text)
    assert refund.verdict == "supported"
    assert refund.decisive == []
    assert not refund.rests_on_single_chunk
    assert a.decisive_cells == 0


# ------------------------------------------------------------ determinism, reuse


def test_offline_attribution_is_deterministic_and_its_json_round_trip_exact(kb: Any, tmp_path: Path) -> None:
    trace = _plain(kb).ask(Q)
    first = trace.attribution()
    assert isinstance(first, Attribution)
    again = trace.attribution()
    loaded = sr.Trace.load(trace.save(tmp_path / "t.json")).attribution()
    assert isinstance(again, Attribution)
    assert isinstance(loaded, Attribution)
    assert _timeless(first) == _timeless(again) == _timeless(loaded)
    assert Attribution.from_json(first.to_json()) == first
    assert Attribution.load(first.save(tmp_path / "a.json")) == first


def test_the_full_verification_is_taken_from_the_trace_and_each_ablation_made_once(
    make_rag: Any, scripted: Any
) -> None:
    """Two claims quote the same sentence (in other case): leaving it out is one call."""
    answer = "Customers can request a full refund within 30 days of purchase [1]. Refunds take 30 days [1]."
    quote = "full refund within 30 days of purchase"
    script_refund(
        scripted,
        answer=answer,
        verify=verdict(
            [(REFUND_CLAIM, "supported", 1, quote), ("Refunds take 30 days", "supported", 1, quote.upper())],
            "ACCEPT",
        ),
    )
    rag = make_rag(settings=sr.Settings(grade=False, rerank=False))
    trace = rag.ask(Q)
    n_chunks = len(trace.generation.evidence)
    before = len(scripted.requests_for("verify"))
    plan = rag.attribution_plan(trace, sentences=True)
    assert isinstance(plan, AttributionPlan)
    assert len(scripted.requests_for("verify")) == before  # a plan makes no call
    assert (plan.chunk_ablations, plan.sentence_ablations) == (n_chunks, 2)
    assert (plan.calls, plan.collapsed, plan.reused) == (n_chunks + 1, 1, 1)
    a = rag.attribution(trace, sentences=True)
    made = scripted.requests_for("verify")[before:]
    assert len(made) == len(a.calls) == plan.calls
    # None of them is the full context again: each lacks a chunk or a sentence.
    full = trace.support.calls[0].messages
    assert all([m.model_dump() for m in r.messages] != full for r in made)
    assert sorted(len(r.inputs.evidence) for r in made) == [n_chunks - 1] * n_chunks + [n_chunks]


def test_a_pipeline_with_a_response_cache_answers_a_repeated_attribution_from_it(
    kb: Any, tmp_path: Path
) -> None:
    rag = sr.SelfRAG(kb, settings=sr.Settings(grade=False), cache=tmp_path / "cache")
    trace = rag.ask(Q)
    first = rag.attribution(trace)
    again = rag.attribution(trace)
    assert first.calls
    assert not any(c.cached for c in first.calls)
    assert all(c.cached for c in again.calls)
    assert [r.cells for r in again.claims] == [r.cells for r in first.claims]


# ------------------------------------------------------------ cost, model, concurrency


class _Counting:
    """A verify backend in front of another that counts the calls in flight at once."""

    offline = False

    def __init__(self, inner: Any, *, latency: float, provider_concurrency: int | None = None) -> None:
        self.inner = inner
        self.name = "counting"
        self.latency = latency
        if provider_concurrency is not None:
            self.provider_concurrency = provider_concurrency
        self.now = 0
        self.peak = 0

    def complete(self, request: ModelRequest) -> Completion:
        out: Completion = self.inner.complete(request)
        return out

    async def acomplete(self, request: ModelRequest) -> Completion:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(self.latency)
            out: Completion = await self.inner.acomplete(request)
            return out
        finally:
            self.now -= 1


@pytest.mark.parametrize(("limit", "backend_limit", "peak"), [(2, None, 2), (None, 1, 1), (None, None, 4)])
def test_ablations_run_concurrently_within_the_pipelines_limit(
    kb: Any, limit: int | None, backend_limit: int | None, peak: int
) -> None:
    counting = _Counting(sr.OfflineModel(), latency=0.2, provider_concurrency=backend_limit)
    rag = sr.SelfRAG(
        kb, models={"verify": counting}, settings=sr.Settings(grade=False, provider_concurrency=limit)
    )
    trace = rag.ask(Q)
    assert len(trace.generation.evidence) == 4
    counting.peak = 0
    a = rag.attribution(trace)
    assert len(a.calls) == 4
    assert counting.peak == peak


def test_a_real_models_costly_plan_is_stated_and_needs_confirmation(make_rag: Any, scripted: Any) -> None:
    scripted.tokens_in = 30_000  # as reported by the provider for each call
    script_refund(scripted)
    rag = make_rag(settings=sr.Settings(grade=False, rerank=False))
    trace = rag.ask(Q)
    before = len(scripted.requests_for("verify"))
    plan = trace.attribution(rag, estimate=True)
    assert isinstance(plan, AttributionPlan)
    assert plan.needs_confirmation
    assert not plan.offline
    assert plan.tokens_in > CONFIRM_TOKENS
    with pytest.raises(AttributionCostError, match="confirm=True") as err:
        trace.attribution(rag)
    assert err.value.plan == plan
    assert len(scripted.requests_for("verify")) == before
    a = trace.attribution(rag, confirm=True)
    assert len(a.calls) == plan.calls == len(scripted.requests_for("verify")) - before


def test_the_trace_s_own_verifier_or_a_clear_error(make_rag: Any, scripted: Any, kb: Any) -> None:
    script_refund(scripted)
    trace = make_rag().ask(Q)
    with pytest.raises(sr.InputError, match="pass the SelfRAG"):
        trace.attribution()
    with pytest.raises(sr.InputError, match=r"'scripted'.*'offline'"):
        trace.attribution(sr.SelfRAG(kb))
    with pytest.raises(sr.InputError, match=r"'scripted'.*'offline'"):
        trace.attribution("offline")
    with pytest.raises(sr.InputTypeError, match="SelfRAG"):
        trace.attribution(object())
    # The verify model itself will do, with the trace's settings.
    a = trace.attribution(scripted)
    assert isinstance(a, Attribution)
    assert a.model == "scripted"
    assert len(a.calls) == len(a.chunks)


def test_nothing_to_attribute_is_an_empty_record_with_its_reason(kb: Any) -> None:
    rag = sr.SelfRAG(kb)
    direct = rag.ask("Hello!")
    refused = rag.ask("What is the boiling point of liquid helium on Mars?")
    assert direct.outcome == "direct"
    assert refused.outcome == "refused"
    for trace, words in ((direct, "not drawn from documents"), (refused, "refused")):
        a = trace.attribution()
        assert isinstance(a, Attribution)
        assert a.empty
        assert not a.calls
        assert words in a.reason
        assert str(a).startswith("attribution: nothing to attribute")
        plan = trace.attribution(estimate=True)
        assert isinstance(plan, AttributionPlan)
        assert plan.calls == 0
        assert words in plan.reason


def test_a_failed_verification_has_nothing_to_compare_against(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted, verify=ConnectionError("provider down"))
    step = make_rag().stepper(Q)
    step.verify()
    a = step.attribution()
    assert isinstance(a, Attribution)
    assert a.empty
    assert not a.calls
    assert "verification call failed (error)" in a.reason


def test_the_stepper_attributes_its_trace_after_verify(kb: Any) -> None:
    rag = _plain(kb)
    step = rag.stepper(Q)
    step.verify()
    a = step.attribution()
    assert isinstance(a, Attribution)
    assert _timeless(a) == _timeless(rag.attribution(step.trace))
    assert a.decisive_cells == 1


# ------------------------------------------------------------ the HTML face


HOSTILE = '<script>alert(1)</script> "x" \u202e<img src=x onerror=alert(2)>'


def _verify_by_evidence(claim: str, quote: str, needle: str) -> Any:
    """A verifier that supports ``claim`` (quoting ``quote``) while some document shown holds ``needle``."""

    def respond(request: Any) -> dict[str, Any]:
        doc = next((e.index for e in request.inputs.evidence if needle in e.text), 0)
        return verdict([(claim, "supported" if doc else "unsupported", doc, quote)], "ACCEPT")

    return respond


def test_hostile_chunk_text_is_escaped_in_the_matrix(tmp_path: Path, scripted: Any) -> None:
    quote = f"refund within 30 days {HOSTILE}"
    docs = {
        "evil.txt": f"Customers can request a full {quote}.\n",
        "evil.md": f"---\ntitle: <b onmouseover=alert(3)>Refunds</b> {HOSTILE}\n---\n# Refunds\n\nA refund.\n",
    }
    claim = f"You get a full {quote}"
    script_refund(scripted, answer=f"{claim} [1].", verify=_verify_by_evidence(claim, quote, "30 days"))
    rag = sr.SelfRAG(_kb(tmp_path, docs), model=scripted, settings=sr.Settings(grade=False, rerank=False))
    trace = rag.ask(Q)
    a = rag.attribution(trace)
    assert isinstance(a, Attribution)
    assert a.decisive_cells == 1  # the chunk holding the quote
    assert "<script>" in a.claims[0].text
    assert any("<b " in c.name for c in a.chunks)
    html = a.to_html()
    for raw in ("<script", "<img", "<b ", "\u202e"):
        assert raw not in html, raw
    assert "&lt;script&gt;" in html
    assert "U+202E" in html
    assert 'data-effect="decisive"' in html
    assert "\u202e" not in str(a)
