"""Rerank: the validated protocol's checks, each violation -> previous order + reason."""

from __future__ import annotations

import math
from typing import Any

import pytest

from selfrag_nb.errors import RerankProtocolError
from selfrag_nb.rerankers import (
    LexicalReranker,
    RerankerOptions,
    available_rerankers,
    register_reranker,
    resolve_reranker,
)
from selfrag_nb.stages.rerank import validate_ranking


def test_valid_subset_sorted_by_score() -> None:
    assert validate_ranking([(2, 0.1), (0, 0.9)], 3) == [(0, 0.9), (2, 0.1)]
    assert validate_ranking([{"index": 1, "score": 3}], 3) == [(1, 3.0)]


@pytest.mark.parametrize(
    ("ranking", "message"),
    [
        (None, "missing"),
        ([], "empty"),
        ([(3, 0.5)], "out of range"),
        ([(-1, 0.5)], "out of range"),
        ([(0, 0.5), (0, 0.4)], "duplicate"),
        ([(0, math.nan)], "not finite"),
        ([(0, math.inf)], "not finite"),
        ([(0, None)], "not a number"),
        ([None], "None"),
        ([(1.0, 0.5)], "not an integer"),
        ([(True, 0.5)], "not an integer"),
        ("0,1", "not a list"),
        ([(0,)], "not (index, score)"),
    ],
)
def test_violations_raise_with_reason(ranking: Any, message: str) -> None:
    with pytest.raises(RerankProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_ranking(ranking, 3)


def test_full_coverage_is_optional() -> None:
    assert validate_ranking([(1, 0.5)], 3) == [(1, 0.5)]
    with pytest.raises(RerankProtocolError, match="missing indices \\[0, 2\\]"):
        validate_ranking([(1, 0.5)], 3, full_coverage=True)


def test_lexical_reranker_prefers_matching_text() -> None:
    ranked = LexicalReranker().rank(
        "refund window days", ["shipping in 2 days", "refund within 30 days", "SSO"]
    )
    assert ranked[0][0] == 1
    assert validate_ranking(ranked, 3)[0][0] == 1


def test_registry_resolves_builtins_and_outside_names() -> None:
    assert {"model", "lexical", "litellm", "cross-encoder"} <= set(available_rerankers())

    class Mine:
        name = "mine"

        def __init__(self, arg: str) -> None:
            self.arg = arg

        def rank(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
            return [(i, 1.0) for i in range(len(texts))]

    register_reranker("mine-test", lambda arg, opts: Mine(arg), replace=True)
    rr, name = resolve_reranker("mine-test:xyz", RerankerOptions())
    assert isinstance(rr, Mine)
    assert rr.arg == "xyz"
    assert name == "mine-test:xyz"
    with pytest.raises(ValueError, match="already registered"):
        register_reranker("mine-test", lambda arg, opts: Mine(arg))
    with pytest.raises(ValueError, match="unknown reranker"):
        resolve_reranker("nope", RerankerOptions())
    with pytest.raises(TypeError, match="rank"):
        resolve_reranker(42, RerankerOptions())


def test_cross_encoder_missing_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now raises ImportError
    with pytest.raises(ImportError, match=r'pip install "selfrag-nb\[torch\]"'):
        resolve_reranker("cross-encoder:some/model", RerankerOptions())


# ------------------------------------------------------------ the stage

Q2 = "refund shipping plan export"


class Fixed:
    """A reranker answering a fixed response (or raising it)."""

    name = "fixed"

    def __init__(self, response: Any) -> None:
        self.response = response
        self.seen: list[list[str]] = []

    def rank(self, query: str, texts: list[str]) -> Any:
        self.seen.append(list(texts))
        if isinstance(self.response, BaseException):
            raise self.response
        return self.response


def _step(kb: Any, reranker: Any, **settings: Any) -> Any:
    import selfrag_nb as sr

    model = sr.ScriptedModel()
    model.default("decide", {"decision": "RETRIEVE", "reason": ""})
    model.default("grade", lambda r: {"relevanceScore": 90 - len(r.inputs.text) % 7, "isRelevant": True})
    model.default("rerank", {"ranking": [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]})
    rag = sr.SelfRAG(kb, model=model, reranker=reranker).with_settings(rewrite=False, **settings)
    return rag.stepper(Q2), model


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ([(9, 1.0)], "out of range"),
        ([(0, 1.0), (0, 0.5)], "duplicate"),
        ([(0, math.nan)], "not finite"),
        ([(0, math.inf)], "not finite"),
        (None, "missing"),
        ([], "empty"),
        (RuntimeError("service down"), "reranker error: RuntimeError: service down"),
    ],
)
def test_stage_falls_back_to_previous_order_with_reason(kb: Any, response: Any, reason: str) -> None:
    rr = Fixed(response)
    step, _ = _step(kb, rr, rerank_keep=2)
    rec = step.rerank()
    assert rec.fallback is not None
    assert reason in rec.fallback
    assert rec.after == rec.before[:2]
    assert rec.fallbacks[0].what == "previous order kept"
    assert rec.reranker == "fixed"


def test_stage_reorders_a_valid_subset_and_keeps_top(kb: Any) -> None:
    rr = Fixed([(2, 0.9), (0, 0.5)])
    step, _ = _step(kb, rr, rerank_keep=1)
    rec = step.rerank()
    assert rec.fallback is None
    assert rec.after == [rec.before[2]]
    assert rec.scores == {rec.before[2]: 0.9, rec.before[0]: 0.5}


def test_full_coverage_setting(kb: Any) -> None:
    step, _ = _step(kb, Fixed([(1, 0.9)]), rerank_full_coverage=True)
    rec = step.rerank()
    assert rec.fallback is not None
    assert "does not cover every candidate" in rec.fallback


def test_only_authorised_relevant_chunks_reach_the_reranker(kb: Any) -> None:
    rr = Fixed([(0, 1.0)])
    step, _ = _step(kb, rr)
    step.rerank()
    sent = rr.seen[0]
    assert sent
    assert all("Bluefin" not in t for t in sent)


def test_the_reranker_reads_each_chunk_under_its_heading_path(kb: Any) -> None:
    # A chunk's topic is often named only in its document's title or section
    # heading (a README's tagline under its title): the reranker reads the same
    # header the search index embedded with the chunk, above its clean text.
    from selfrag_nb.cleantext import clean_text
    from selfrag_nb.store.chunking import context_header

    rr = Fixed([(0, 1.0)])
    step, _ = _step(kb, rr)
    step.rerank()
    hits = {h.chunk_id: h for h in step.trace.retrieval.hits}
    sent = rr.seen[0]
    before = step.trace.rerank.before
    assert len(sent) == len(before) >= 2
    for text, chunk_id in zip(sent, before, strict=True):
        hit = hits[chunk_id]
        header = context_header(hit.title, hit.heading)
        assert header, hit.source
        assert text == f"{clean_text(header)}\n{clean_text(hit.text)}"


def test_model_reranker_records_its_call(kb: Any) -> None:
    step, model = _step(kb, None)
    rec = step.rerank()
    assert rec.reranker == "model"
    assert rec.fallback is None
    assert len(rec.calls) == 1
    assert rec.calls[0].role == "rerank"
    assert rec.after[:2] == [rec.before[1], rec.before[0]]
    assert model.requests_for("rerank")[0].inputs.query == Q2


def test_model_reranker_unparsed_falls_back(kb: Any) -> None:
    step, model = _step(kb, "model")
    model.default("rerank", "garbage")
    rec = step.rerank()
    assert rec.fallback is not None
    assert "unparsed" in rec.fallback
    assert rec.calls


def test_lexical_reranker_in_the_stage(kb: Any) -> None:
    step, _ = _step(kb, "lexical")
    rec = step.rerank()
    assert rec.reranker == "lexical"
    assert rec.fallback is None
    assert set(rec.after) <= set(rec.before)


def test_litellm_reranker_against_the_loopback_server(kb: Any) -> None:
    from selfrag_nb.testing import LoopbackServer

    with LoopbackServer() as server:
        import selfrag_nb as sr

        model = sr.ScriptedModel()
        model.default("decide", {"decision": "RETRIEVE", "reason": ""})
        model.default("grade", {"relevanceScore": 90, "isRelevant": True})
        rag = sr.SelfRAG(
            kb, model=model, reranker="litellm:cohere/rerank-v3.5", api_base=server.url, api_key="sk-test"
        )
        rec = rag.with_settings(rewrite=False).stepper(Q2).rerank()
    assert rec.reranker == "litellm:cohere/rerank-v3.5"
    assert rec.fallback is None, rec.fallback
    assert len(rec.after) == min(5, len(rec.before))


def test_the_offline_model_reranker_explains_every_item_it_keeps() -> None:
    # With no reranker configured the pipeline's model reranks; the offline
    # model says why for each item, and the record keeps it per chunk.
    import selfrag_nb as sr

    rag = sr.SelfRAG(sr.KnowledgeBase.sample())
    t = rag.ask("What is the refund window for a Pro subscription?")
    assert t.rerank is not None
    assert t.rerank.after
    assert set(t.rerank.after) <= set(t.rerank.reasons)
    assert all("covers" in t.rerank.reasons[c] for c in t.rerank.after)
