"""evaluate(engine="ray") on a real local Ray cluster: workers rebuild the
pipeline from its configuration and answer as the in-process run does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ray_support import ray_cluster

import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet, questions
from selfrag_nb.eval.ray_eval import build, spec_of
from selfrag_nb.eval.regression import read_failures
from selfrag_nb.eval.runner import config_version
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.testing import ScriptedModel

# slow: a local Ray cluster per module (10-20 s per test) (./run test fast leaves it out)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    pytest.importorskip("ray")
    yield from ray_cluster()


@pytest.fixture(scope="module")
def kb() -> Any:
    return KnowledgeBase.sample(embedder="hashing")


@pytest.fixture(scope="module")
def sample() -> QuestionSet:
    return questions("sample")


def _key(row: Any) -> tuple[Any, ...]:
    return (row.variant, row.id, row.outcome, row.retrieve, tuple(row.retrieved), tuple(row.kept), row.answer)


def test_ray_evaluation_matches_in_process_row_for_row(
    ray: Any, kb: Any, sample: QuestionSet, tmp_path: Path
) -> None:
    rag = sr.SelfRAG(kb)
    local = sr.evaluate(rag, sample, concurrency=2, out=tmp_path / "local", progress=False)
    distributed = sr.evaluate(
        rag, sample, concurrency=2, out=tmp_path / "ray", progress=False, engine="ray", workers=2, traces=True
    )
    assert [_key(r) for r in distributed.rows] == [_key(r) for r in local.rows]
    assert all(r.error is None for r in distributed.rows)
    assert distributed.config_versions == local.config_versions
    assert distributed.summary[["variant", "category", "n", "outcome_accuracy"]].equals(
        local.summary[["variant", "category", "n", "outcome_accuracy"]]
    )
    # The same files, written by the driver.
    lines = (tmp_path / "ray" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(x)["id"] for x in lines) == sorted(q.id for q in sample)
    assert len(read_failures(tmp_path / "ray")) == len(read_failures(tmp_path / "local"))
    traces = sorted((tmp_path / "ray" / "traces").rglob("*.json"))
    assert len(traces) == len(sample)
    assert sr.Trace.load(traces[0]).outcome is not None


def test_ray_variants_travel_as_configuration(ray: Any, kb: Any, sample: QuestionSet, tmp_path: Path) -> None:
    qs = sample.sample(1, seed=3, per_category=True)[:6]
    rag = sr.SelfRAG(kb)
    variants = {"adaptive": {"retrieval": "adaptive"}, "never": {"retrieval": "never"}}
    local = sr.evaluate(rag, qs, variants, out=tmp_path / "local", progress=False)
    distributed = sr.evaluate(rag, qs, variants, out=tmp_path / "ray", progress=False, engine="ray")
    assert [_key(r) for r in distributed.rows] == [_key(r) for r in local.rows]
    assert all(not r.retrieved for r in distributed.rows if r.variant == "never")
    assert list(distributed.disagreements["id"]) == list(local.disagreements["id"])


def test_spec_is_plain_configuration_and_rebuilds_the_pipeline(kb: Any) -> None:
    rag = sr.SelfRAG(
        kb, models={"generate": "openai/gpt-4o-mini"}, api_key="sk-never-shown", reranker="lexical"
    )
    spec = spec_of(rag)
    assert spec.models["generate"] == "openai/gpt-4o-mini"
    assert spec.models["grade"] == "offline"
    assert spec.kb_uri == kb.path
    assert spec.reranker == "lexical"
    assert "sk-never-shown" not in repr(spec)
    rebuilt = build(spec)
    assert rebuilt.config_snapshot().models == rag.config_snapshot().models
    assert config_version(rebuilt) == config_version(rag)


def test_objects_that_cannot_travel_are_refused_before_any_work(kb: Any, tmp_path: Path) -> None:
    rag = sr.SelfRAG(kb, models={"grade": ScriptedModel("grader")})
    with pytest.raises(TypeError, match="'grade' model is a ScriptedModel"):
        sr.evaluate(rag, [], progress=False, engine="ray", out=tmp_path)
    assert not (tmp_path / "rows.jsonl").exists()
