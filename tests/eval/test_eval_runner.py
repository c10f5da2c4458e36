"""evaluate(): variants, per-question users, failure rows, streaming, notebooks.

Real pipeline (SelfRAG) over the real sample knowledge base (LanceDB, hashing
embedder, cached); the offline model or a ScriptedModel behind the runner."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import ModelError
from selfrag_nb.eval.questions import Question, QuestionSet, questions
from selfrag_nb.eval.regression import read_failures
from selfrag_nb.eval.runner import PRESETS, aevaluate, evaluate, resolve_variants
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.testing import ScriptedModel
from selfrag_nb.trace import Trace


@pytest.fixture(scope="module")
def kb() -> Any:
    return KnowledgeBase.sample(embedder="hashing")


@pytest.fixture(scope="module")
def sample() -> QuestionSet:
    return questions("sample")


def _spread(qs: QuestionSet, n: int) -> QuestionSet:
    """n questions from n different categories (deterministic)."""
    return qs.sample(1, seed=7, per_category=True)[:n]


def _scripted(on_generate: Any = None, decide: Any = None) -> ScriptedModel:
    m = ScriptedModel("scripted", tokens_in=3, tokens_out=2, cost=0.0001)
    m.default("decide", decide or {"decision": "RETRIEVE", "reason": "scripted"})
    m.default("rewrite", {"rewrites": [], "reason": "scripted"})
    m.default("grade", {"relevanceScore": 85, "isRelevant": True, "keyInfo": "k", "gaps": ""})
    m.default("rerank", {"ranking": []})
    m.default("assess", {"action": "ANSWER", "reason": "scripted"})
    m.default("generate", on_generate or {"answer": "Refunds are accepted within 30 days [1]."})
    m.default(
        "verify",
        {
            "isFullySupported": True,
            "supportedClaims": ["Refunds are accepted within 30 days"],
            "unsupportedClaims": [],
            "claims": [],
            "overallConfidence": 90,
            "recommendation": "ACCEPT",
        },
    )
    m.default("usefulness", {"verdict": "yes", "score": 90, "reason": "scripted"})
    return m


def _made_up(n: int, prefix: str = "q") -> QuestionSet:
    return QuestionSet(
        [
            Question(
                id=f"{prefix}{i}",
                category="cat-a" if i % 2 else "cat-b",
                question=f"What is the refund window for plan {i}?",
                should_retrieve=True,
                expected=["answered"],
            )
            for i in range(n)
        ],
        name="made-up",
    )


def test_variant_presets_and_validation() -> None:
    assert list(resolve_variants("ablation")) == ["baseline", "+rewrite", "+rerank", "+rewrite+rerank"]
    assert resolve_variants("ablation")["+rerank"] == {"rewrite": False, "rerank": True}
    assert resolve_variants("retrieval") == {k: dict(v) for k, v in PRESETS["retrieval"].items()}
    assert resolve_variants(None) == {"default": {}}
    assert resolve_variants({"tight": {"relevance_cutoff": 70}}) == {"tight": {"relevance_cutoff": 70}}
    with pytest.raises(ValueError, match="unknown variant preset 'nope'"):
        resolve_variants("nope")
    with pytest.raises(ValueError, match=r"variant 'x': unknown setting\(s\) \['temperature'\]"):
        resolve_variants({"x": {"temperature": 0}})
    with pytest.raises(ValueError, match="at least one variant"):
        resolve_variants({})
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        resolve_variants({"x": 3})  # type: ignore[dict-item]  # deliberately wrong


def test_ablation_on_sample_offline(kb: Any, sample: QuestionSet, tmp_path: Path) -> None:
    qs = _spread(sample, 5)
    rag = sr.SelfRAG(kb)
    report = sr.evaluate(rag, qs, variants="ablation", concurrency=4, out=tmp_path, progress=False)
    assert len(report.rows) == 4 * 5
    # Rows come back in variant order, then question order, whatever finished first.
    assert [(r.variant, r.id) for r in report.rows] == [(v, q.id) for v in PRESETS["ablation"] for q in qs]
    lines = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 20
    assert {json.loads(x)["variant"] for x in lines} == set(PRESETS["ablation"])
    # Each variant's settings (only) differ, so each has its own config version.
    assert len(set(report.config_versions.values())) == 4
    assert {r.config_version for r in report.rows if r.variant == "baseline"} == {
        report.config_versions["baseline"]
    }
    s = report.summary
    for v in PRESETS["ablation"]:
        part = s[s["variant"] == v]
        assert list(part["category"]) == [*qs.categories, "all"]
        assert int(part[part["category"] == "all"]["n"].iloc[0]) == 5
    assert report.table.shape[0] == 20
    assert "failure_reason" in report.table.columns
    assert all(r.model_calls >= 0 and r.latency_ms > 0 for r in report.rows)
    assert all(r.error is None for r in report.rows)
    stored = read_failures(tmp_path)
    assert len(stored) == sum(1 for r in report.rows if r.failed_checks) == len(report.failures)
    # The baseline never rewrites; rows of "+rewrite" carry a different config only.
    assert all(r.outcome is not None for r in report.rows)


def test_each_question_runs_as_its_own_user_with_history(
    kb: Any, sample: QuestionSet, tmp_path: Path
) -> None:
    with_user = [q for q in sample if q.user][:2]
    with_history = [q for q in sample if q.history][:1]
    qs = QuestionSet(with_user + with_history, name="users")
    report = evaluate(sr.SelfRAG(kb), qs, concurrency=2, out=tmp_path, progress=False, traces=True)
    for q in qs:
        files = list((tmp_path / "traces" / "default").glob(f"{q.id}*.json"))
        assert len(files) == 1, q.id
        trace = Trace.load(files[0])
        assert trace.question == q.question
        assert trace.user == q.make_user()
        assert trace.history == q.history
    assert len(report.rows) == len(qs)


def test_a_question_that_raises_is_a_failure_row(kb: Any, tmp_path: Path) -> None:
    def decide(request: ModelRequest) -> dict[str, str]:
        if "explode" in request.inputs.question:  # type: ignore[attr-defined]  # DecideInputs has .question
            raise ModelError("scripted explosion")
        return {"decision": "RETRIEVE", "reason": "scripted"}

    rag = sr.SelfRAG(kb, model=_scripted(decide=decide)).with_settings(decision_rules=False)
    qs = QuestionSet(
        [
            *_made_up(3),
            Question(id="boom", category="cat-a", question="please explode now", expected=["answered"]),
        ],
        name="with-boom",
    )
    streamed: list[str] = []
    report = evaluate(
        rag, qs, concurrency=3, out=tmp_path, progress=False, on_row=lambda r: streamed.append(r.id)
    )
    assert len(report.rows) == 4
    assert sorted(streamed) == sorted(q.id for q in qs)  # on_row saw every row, the failure included
    boom = next(r for r in report.rows if r.id == "boom")
    assert boom.error == "ModelError: scripted explosion"
    assert boom.failure_reason == "error: ModelError: scripted explosion"
    assert boom.outcome_ok is False
    others = [r for r in report.rows if r.id != "boom"]
    assert all(r.outcome == "answered" and not r.failed_checks for r in others)
    assert all(r.cost is not None and r.cost > 0 and r.tokens_in > 0 for r in others)
    assert report.overall()["errors"] == 1
    assert read_failures(tmp_path)["id"].tolist() == ["boom"]


def test_timeouts_become_failure_rows(kb: Any, tmp_path: Path) -> None:
    slow = _scripted()
    slow.latency = 0.3
    rag = sr.SelfRAG(kb, model=slow).with_settings(decision_rules=False)
    report = evaluate(rag, _made_up(2), concurrency=2, out=tmp_path, progress=False, timeout=0.05)
    assert [r.failure_reason for r in report.rows] == ["error: timed out after 0.05s"] * 2
    assert all(40 <= r.latency_ms < 2000 for r in report.rows)


@pytest.mark.slow
def test_rows_stream_to_disk_and_traces_are_not_kept(kb: Any, tmp_path: Path) -> None:
    """At most `concurrency` traces are alive during the run, and earlier rows
    are already on disk while later questions are still being answered."""
    seen: list[tuple[int, int]] = []
    rows_file = tmp_path / "rows.jsonl"

    def generate(request: ModelRequest) -> dict[str, str]:
        # No gc.collect() here: traces hold no cycles, so refcounting frees them
        # at once, and a full collection per call would dominate the test.
        live = sum(1 for o in gc.get_objects() if type(o) is Trace)
        on_disk = len(rows_file.read_text(encoding="utf-8").splitlines()) if rows_file.exists() else 0
        seen.append((live, on_disk))
        return {"answer": "Refunds are accepted within 30 days [1]."}

    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is Trace)
    rag = sr.SelfRAG(kb, model=_scripted(on_generate=generate)).with_settings(decision_rules=False)
    n, conc = 14, 2
    report = evaluate(rag, _made_up(n), concurrency=conc, out=tmp_path, progress=False)
    assert len(report.rows) == n
    assert len(seen) >= n
    assert max(live for live, _ in seen) - before <= conc
    assert max(d for _, d in seen) >= n - conc - 1  # rows were on disk before the run ended
    assert [d for _, d in seen] == sorted(d for _, d in seen)


def test_sync_evaluate_inside_a_running_loop_and_async_form(kb: Any, tmp_path: Path) -> None:
    rag = sr.SelfRAG(kb, model=_scripted()).with_settings(decision_rules=False)
    qs = _made_up(2)

    async def notebook_cell() -> tuple[int, int]:
        # A notebook cell: the loop is running, yet the sync API must work.
        sync = evaluate(rag, qs, out=tmp_path / "sync", progress=False)
        direct = await aevaluate(rag, qs, out=tmp_path / "async", progress=False)
        return len(sync.rows), len(direct.rows)

    assert asyncio.run(notebook_cell()) == (2, 2)


def test_progress_bar_and_default_out(kb: Any, capsys: pytest.CaptureFixture[str]) -> None:
    rag = sr.SelfRAG(kb, model=_scripted()).with_settings(decision_rules=False)
    report = evaluate(rag, _made_up(2), progress=True)
    assert report.out is not None
    assert (report.out / "rows.jsonl").is_file()
    assert (report.out / "failures.parquet").is_file()
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        evaluate(rag, _made_up(1), concurrency=0)
