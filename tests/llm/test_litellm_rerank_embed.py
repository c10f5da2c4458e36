"""Rerank and embeddings through LiteLLM over real HTTP, plus the pricing
table and redaction they rely on."""

from __future__ import annotations

import asyncio
import math

import pytest

from selfrag_nb.errors import ModelError, ProviderError
from selfrag_nb.llm.litellm_model import LiteLLMReranker, aembed, arerank, embed, rerank
from selfrag_nb.llm.pricing import cost_of, get_price, register_price, unregister_price
from selfrag_nb.llm.redact import REDACTED, redact
from selfrag_nb.testing import LoopbackServer, embedding_vector

KEY = "sk-rerank-SECRET-0123456789abcdef"
DOCS = [
    "Shipping is free for orders over 50 euros.",
    "The refund window is 30 days from delivery.",
    "Refunds go back to the original payment method within 30 days.",
]


def test_rerank_orders_by_the_server_scores(loopback: LoopbackServer) -> None:
    ranked = rerank(
        "refund window days", DOCS, model="cohere/rerank-english-v3.0", api_base=loopback.url, api_key=KEY
    )
    assert [i for i, _ in ranked] == [1, 2, 0]
    assert ranked[0][1] == pytest.approx(1.0)
    assert ranked[-1][1] == pytest.approx(0.0)
    sent = loopback.requests[-1]
    assert sent.path.endswith("/rerank")
    assert sent.body is not None
    assert sent.body["query"] == "refund window days"
    assert sent.authorized


def test_rerank_top_n_and_async(loopback: LoopbackServer) -> None:
    ranked = asyncio.run(
        arerank(
            "refund window",
            DOCS,
            model="cohere/rerank-english-v3.0",
            top_n=1,
            api_base=loopback.url,
            api_key=KEY,
        )
    )
    assert [i for i, _ in ranked] == [1]
    assert ranked[0][1] == pytest.approx(1.0)
    assert asyncio.run(arerank("q", [], model="cohere/x", api_base=loopback.url, api_key=KEY)) == []


def test_reranker_object_for_the_pipeline(loopback: LoopbackServer) -> None:
    reranker = LiteLLMReranker("cohere/rerank-english-v3.0", api_base=loopback.url, api_key=KEY)
    assert reranker.rank("original payment method", DOCS)[0][0] == 2
    assert KEY not in repr(reranker)


def test_rerank_server_down_is_a_provider_error_without_key() -> None:
    with LoopbackServer() as server:
        url = server.url
    with pytest.raises(ProviderError) as info:
        rerank("q", DOCS, model="cohere/rerank-english-v3.0", api_base=url, api_key=KEY, timeout=2)
    assert KEY not in str(info.value)


def test_embeddings_are_deterministic_vectors(loopback: LoopbackServer) -> None:
    texts = ["refund window", "shipping", "refund window"]
    vectors = embed(texts, "openai/text-embedding-3-small", api_base=loopback.url, api_key=KEY)
    assert len(vectors) == 3
    assert vectors[0] == pytest.approx(embedding_vector("refund window"))
    assert vectors[0] == pytest.approx(vectors[2])
    assert vectors[0] != pytest.approx(vectors[1])
    assert math.isclose(sum(v * v for v in vectors[1]), 1.0, rel_tol=1e-6)
    assert loopback.requests[-1].path == "/v1/embeddings"
    assert asyncio.run(aembed([], "openai/e", api_base=loopback.url, api_key=KEY)) == []


def test_embedding_auth_failure_is_a_model_error(loopback: LoopbackServer) -> None:
    loopback.fail("401")
    with pytest.raises(ModelError) as info:
        embed(["x"], "openai/e", api_base=loopback.url, api_key=KEY)
    assert KEY not in str(info.value)


def test_rerank_server_error_is_a_provider_error(loopback: LoopbackServer) -> None:
    loopback.fail("503")
    with pytest.raises(ProviderError, match="503"):
        rerank("q", DOCS, model="cohere/rerank-english-v3.0", api_base=loopback.url, api_key=KEY)
    # The next call is served normally.
    assert len(rerank("q", DOCS, model="cohere/rerank-english-v3.0", api_base=loopback.url, api_key=KEY)) == 3


def test_price_table_validates_and_computes() -> None:
    register_price("openai/table-test", input_per_token=1e-6, output_per_token=2e-6)
    try:
        assert get_price("openai/table-test") is not None
        assert cost_of("openai/table-test", 1000, 500) == pytest.approx(0.002)
        assert cost_of("openai/table-test", None, 500) is None
    finally:
        unregister_price("openai/table-test")
    assert cost_of("openai/table-test", 1000, 500) is None
    with pytest.raises(ValueError, match="finite number >= 0"):
        register_price("m/x", input_per_token=-1, output_per_token=0)
    with pytest.raises(TypeError, match="US dollars per token"):
        register_price("m/x", input_per_token="cheap", output_per_token=0)  # type: ignore[arg-type]  # deliberately wrong
    with pytest.raises(ValueError, match="non-empty"):
        register_price(" ", input_per_token=0, output_per_token=0)


def test_redact_removes_secrets_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "zz-env-secret-value")
    text = (
        "given=abc-given-secret env=zz-env-secret-value token=sk-abcdef123456 "
        "header: Authorization: Bearer eyJhbGciOi.x.y and api_key=plainvalue123"
    )
    out = redact(text, ["abc-given-secret"])
    for secret in (
        "abc-given-secret",
        "zz-env-secret-value",
        "sk-abcdef123456",
        "eyJhbGciOi",
        "plainvalue123",
    ):
        assert secret not in out
    assert out.count(REDACTED) >= 5
    # Answers keep key-shaped prose; only exact secrets go.
    assert redact("use sk-learning-toolkit", [], patterns=False) == "use sk-learning-toolkit"
    assert redact("", ["x" * 10]) == ""
