"""Rerank: the second article's protocol checks, each violation -> previous order + reason."""

from __future__ import annotations

import math
from typing import Any

import pytest

from selfrag_nb.rerankers import (
    LexicalReranker,
    RerankerOptions,
    available_rerankers,
    register_reranker,
    resolve_reranker,
)
from selfrag_nb.stages.rerank import RerankProtocolError, validate_ranking


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
