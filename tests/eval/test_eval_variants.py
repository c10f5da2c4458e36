"""Variants that are whole pipelines: model swaps per role and SelfRAG objects.

Real SelfRAG over the real sample knowledge base (LanceDB, hashing embedder);
the "models" are ScriptedModels with different names, token counts and
prices, so what each role cost is known from the script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.testing import ScriptedModel

_VERIFIED = {
    "isFullySupported": True,
    "supportedClaims": ["Refunds are accepted within 30 days"],
    "unsupportedClaims": [],
    "claims": [],
    "overallConfidence": 90,
    "recommendation": "ACCEPT",
}


@pytest.fixture(scope="module")
def kb() -> Any:
    return KnowledgeBase.sample(embedder="hashing")


def _base() -> ScriptedModel:
    m = ScriptedModel("base-model", tokens_in=3, tokens_out=2, cost=0.0001)
    m.default("decide", {"decision": "RETRIEVE", "reason": "scripted"})
    m.default("rewrite", {"rewrites": [], "reason": "scripted"})
    m.default("grade", {"relevanceScore": 85, "isRelevant": True, "keyInfo": "k", "gaps": ""})
    m.default("rerank", {"ranking": []})
    m.default("assess", {"action": "ANSWER", "reason": "scripted"})
    m.default("generate", {"answer": "Refunds are accepted within 30 days [1]."})
    m.default("verify", _VERIFIED)
    m.default("usefulness", {"verdict": "yes", "score": 90, "reason": "scripted"})
    return m


def _grader(name: str, *, relevant: bool, tokens_in: int, cost: float) -> ScriptedModel:
    m = ScriptedModel(name, tokens_in=tokens_in, tokens_out=1, cost=cost)
    score = 90 if relevant else 5
    m.default("grade", {"relevanceScore": score, "isRelevant": relevant, "keyInfo": "k", "gaps": ""})
    return m


def _questions(n: int = 4) -> QuestionSet:
    return QuestionSet(
        [
            Question(
                id=f"q{i}",
                category="refunds",
                question=f"What is the refund window for the plan number {i}?",
                should_retrieve=True,
                expected=["answered"],
            )
            for i in range(n)
        ],
        name="refunds",
    )


def test_two_graders_compared_per_role_with_disagreements(kb: Any, tmp_path: Path) -> None:
    rag = sr.SelfRAG(kb, model=_base())
    keen = _grader("grader-keen", relevant=True, tokens_in=7, cost=0.002)
    strict = _grader("grader-strict", relevant=False, tokens_in=11, cost=0.003)
    qs = _questions()
    report = sr.evaluate(
        rag,
        qs,
        {"keen": {"models": {"grade": keen}}, "strict": {"models": {"grade": strict}, "rerank": False}},
        out=tmp_path,
        progress=False,
        concurrency=2,
    )
    assert [(r.variant, r.id) for r in report.rows] == [(v, q.id) for v in ("keen", "strict") for q in qs]
    # The report keeps plain data: the settings changed and the model per role.
    assert report.variants["keen"]["models"]["grade"] == "grader-keen"
    assert report.variants["strict"]["models"]["grade"] == "grader-strict"
    assert report.variants["strict"]["models"]["generate"] == "base-model"
    assert report.variants["strict"]["rerank"] is False
    json.dumps(report.variants)  # plain JSON
    # Only the graded role changed model: each variant's grade calls are its grader's.
    keen_rows = [r for r in report.rows if r.variant == "keen"]
    strict_rows = [r for r in report.rows if r.variant == "strict"]
    for r in keen_rows:
        n_grades = r.role_tokens_in["grade"] // 7
        assert n_grades >= 1
        assert r.role_tokens_in["grade"] == 7 * n_grades
        assert r.role_cost["grade"] == pytest.approx(0.002 * n_grades)
        # the base model (3 tokens a call) still generates
        assert r.role_tokens_in["generate"] > 0
        assert r.role_tokens_in["generate"] % 3 == 0
    for r in strict_rows:
        assert r.role_tokens_in["grade"] % 11 == 0
        assert r.role_tokens_in["grade"] > 0
    # Per-role columns in the table and the summary.
    table = report.table
    for col in ("grade_tokens_in", "grade_tokens_out", "grade_cost", "grade_latency_ms", "generate_cost"):
        assert col in table.columns
    assert list(table[table["variant"] == "keen"]["grade_tokens_in"]) == [
        r.role_tokens_in["grade"] for r in keen_rows
    ]
    summary = report.summary
    all_rows = summary[summary["category"] == "all"].set_index("variant")
    assert all_rows.loc["keen", "grade_tokens_in"] == sum(r.role_tokens_in["grade"] for r in keen_rows)
    assert all_rows.loc["strict", "grade_cost"] == pytest.approx(
        sum(r.role_cost["grade"] for r in strict_rows)
    )
    # The keen grader keeps evidence, the strict one keeps none: every question disagrees.
    assert all(r.kept for r in keen_rows)
    assert all(not r.kept for r in strict_rows)
    agreement = report.agreement
    assert list(agreement["id"]) == [q.id for q in qs]
    assert not agreement["same_kept"].any()
    assert list(report.disagreements["id"]) == [q.id for q in qs]
    assert list(agreement["outcome:keen"]) == [r.outcome for r in keen_rows]
    assert "agreement:" in report.to_text()
    assert f"{len(qs)} disagreement(s)" in report.to_text()


def test_selfrag_objects_as_variants_agree_when_only_the_generator_differs(kb: Any, tmp_path: Path) -> None:
    one = _base()
    two = ScriptedModel("generator-two", tokens_in=5, tokens_out=4, cost=None)
    two.default("generate", {"answer": "You can get a refund within 30 days [1]."})
    rag_one = sr.SelfRAG(kb, model=one)
    rag_two = sr.SelfRAG(kb, model=_base(), models={"generate": two})
    qs = _questions(3)
    report = sr.evaluate(rag_one, qs, {"one": rag_one, "two": rag_two}, out=tmp_path, progress=False)
    assert report.variants["two"]["models"]["generate"] == "generator-two"
    assert report.variants["one"]["models"]["generate"] == "base-model"
    # Different generators, same evidence and the same outcome: they agree.
    assert all(report.agreement["same_kept"])
    assert report.disagreements.empty
    two_rows = [r for r in report.rows if r.variant == "two"]
    assert all(r.role_tokens_in["generate"] >= 5 for r in two_rows)
    # An unknown price makes that role's cost unknown, not zero.
    assert all(r.role_cost["generate"] is None for r in two_rows)
    s = report.summary
    assert s[(s["variant"] == "two") & (s["category"] == "all")]["generate_cost"].isna().all()
    assert len(set(report.config_versions.values())) == 2
    # The report holds model names, not models: a re-run must be given the pipelines again.
    with pytest.raises(ValueError, match="pass variants= again"):
        report.rerun_failures(rag_one)
    again = report.rerun_failures(rag_one, variants={"one": rag_one, "two": rag_two}, progress=False)
    assert again.broke == []  # the same pipelines again: nothing that passed fails now


def test_variant_input_is_checked(kb: Any, tmp_path: Path) -> None:
    rag = sr.SelfRAG(kb, model=_base())
    qs = _questions(1)
    with pytest.raises(TypeError, match="name each pipeline"):
        sr.evaluate(rag, qs, [rag, rag], progress=False)  # type: ignore[arg-type]  # deliberately a list
    with pytest.raises(ValueError, match=r"unknown role\(s\) \['judge'\]"):
        sr.evaluate(rag, qs, {"x": {"models": {"judge": "offline"}}}, progress=False)
    with pytest.raises(TypeError, match="'models' must be a mapping"):
        sr.evaluate(rag, qs, {"x": {"models": "offline"}}, progress=False)
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['temperature'\]"):
        sr.evaluate(rag, qs, {"x": {"models": {"grade": "offline"}, "temperature": 0}}, progress=False)
