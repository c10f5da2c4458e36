"""Prompt Lab for every model role: each is scored against what the labels say
about it. Real pipeline (ScriptedModel reading a marker in the system prompt,
real LanceDB); the expected numbers follow the documented scoring rules
(promptlab_runs.py docstring), worked out by hand from the fixture's labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prompt_lab_fixtures import (
    CAUTIOUS,
    CITE,
    EXPAND,
    RECORDS,
    TOPICAL,
    build_kb,
    scripted_model,
    with_marker,
)

import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.flow import ROLES
from selfrag_nb.promptlab import ROLE_LABELS, TUNABLE_ROLES, PromptLab

FOLLOW_UP = {
    "id": "follow-1",
    "category": "follow-up",
    "question": "How long is it for order ORD-7?",
    "history": [
        {"role": "user", "content": "Tell me about refunds."},
        {"role": "assistant", "content": "Refunds are possible."},
    ],
    "should_retrieve": True,
    "relevant": ["refunds.md"],
    "protected": ["ORD-7"],
    "expected": ["answered"],
}
LOST = dict(FOLLOW_UP, id="follow-2", relevant=["warranty.md"])  # a source the knowledge base lacks


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_roles_kb"))


@pytest.fixture
def model() -> Any:
    return scripted_model()


@pytest.fixture
def lab(kb: Any, model: Any) -> PromptLab:
    qs = QuestionSet.from_records([*RECORDS, FOLLOW_UP, LOST], name="lab-roles")
    return sr.PromptLab(sr.SelfRAG(kb, model=model, reranker="model"), qs)


def test_every_model_role_is_tunable_in_flow_order(lab: PromptLab) -> None:
    assert lab.roles == ROLES == TUNABLE_ROLES
    assert lab.roles == ("decide", "rewrite", "grade", "rerank", "assess", "generate", "verify", "usefulness")
    assert set(ROLE_LABELS) == set(lab.roles)
    assert all(ROLE_LABELS[r] for r in lab.roles)
    assert lab.role == "decide"  # a view opens on the first role unless told otherwise
    # Roles given out of order are shown in flow order; role= picks the opening one.
    other = PromptLab(lab.rag, lab.questions, roles=["verify", "grade"], role="verify")
    assert other.roles == ("grade", "verify")
    assert other.role == "verify"


def test_rewrite_scored_on_protected_spans_and_retrieval_recall(lab: PromptLab, model: Any) -> None:
    assert lab.default_ids("rewrite")  # questions with protected spans or relevant sources
    lab.set_template("rewrite", with_marker(lab.template("rewrite"), EXPAND))
    run = lab.run("rewrite", ["follow-1", "follow-2"])
    found, lost = run.rows
    assert found.label == "keep: ORD-7 · relevant: refunds.md"
    # Baseline: no rewrite; the original question keeps its span and retrieves refunds.md.
    assert found.old.verdict == "0 rewrites"
    assert found.old.queries == [FOLLOW_UP["question"]]
    assert found.old.protected_ok is True
    assert found.old.recall == 1.0
    assert found.old.agreement == 1.0
    # Candidate: the template reached the model; the phrasing that dropped ORD-7 was
    # rejected by the stage, so every searched query still keeps the span.
    assert any(EXPAND in r.messages[0].content for r in model.requests_for("rewrite"))
    assert found.new.queries == [FOLLOW_UP["question"], FOLLOW_UP["question"] + " refund policy"]
    assert found.new.verdict == "1 rewrite (1 rejected)"
    assert found.new.protected_ok is True
    assert found.new.agreement == 1.0
    # A labelled source nobody can retrieve: recall 0, spans kept -> the mean of the two parts.
    assert lost.new.recall == 0.0
    assert lost.new.agreement == 0.5
    # Rewrite runs stop after retrieval: nothing later is paid for.
    assert model.requests_for("grade") == []


def test_rerank_scored_on_the_rank_of_the_relevant_source(lab: PromptLab, model: Any) -> None:
    lab.set_template("rerank", with_marker(lab.template("rerank"), TOPICAL))
    run = lab.run("rerank", ["refund-1", "ship-1"])
    refund, ship = run.rows
    assert refund.label == "relevant: refunds.md"
    # Baseline puts the off-topic passage first: the relevant one is second (RR 1/2).
    assert refund.old.rank == 2
    assert refund.old.agreement == 0.5
    assert refund.old.verdict == "first relevant at #2: refunds.md"
    assert refund.new.rank == 1
    assert refund.new.agreement == 1.0
    assert [s.rsplit("/", 1)[-1] for s in refund.new.order] == ["refunds.md", "shipping.md"]
    assert ship.new.agreement == 1.0
    assert run.agreement_old == 0.5
    assert run.agreement_new == 1.0
    assert all(
        TOPICAL in r.messages[0].content
        for r in model.requests_for("rerank")
        if r.prompt_hash == run.candidate
    )
    assert model.requests_for("assess") == []
    assert lab.note("rerank") == ""


def test_rerank_template_unused_when_the_reranker_is_not_the_model(kb: Any) -> None:
    lab = PromptLab(sr.SelfRAG(kb, model=scripted_model(), reranker="lexical"), RECORDS)
    assert "'lexical'" in lab.note("rerank")
    assert "not used" in lab.note("rerank")
    assert lab.note("grade") == ""
    off = PromptLab(sr.SelfRAG(kb, model=scripted_model(), settings=sr.Settings(rewrite=False)), RECORDS)
    assert "settings.rewrite=False" in off.note("rewrite")


def test_assess_scored_on_action_vs_expected_outcomes(lab: PromptLab) -> None:
    lab.set_template("assess", with_marker(lab.template("assess"), CAUTIOUS))
    run = lab.run("assess", ["refund-1", "memo-1"])
    refund, memo = run.rows
    assert memo.label == "expected: refused"
    # answer leads to answered/disclaimed/regenerated; refuse to refused.
    assert memo.old.verdict == "answer"
    assert memo.old.agreement == 0.0
    assert memo.new.verdict == "refuse"
    assert memo.new.agreement == 1.0
    assert refund.old.agreement == refund.new.agreement == 1.0
    assert run.agreement_old == 0.5
    assert run.agreement_new == 1.0


def test_generate_scored_on_must_include_exclude_and_citations(lab: PromptLab, model: Any) -> None:
    lab.set_template("generate", with_marker(lab.template("generate"), CITE))
    run = lab.run("generate", ["refund-1"])
    (row,) = run.rows
    assert row.label == "include: 30 days · exclude: 60 days · cite: refunds.md"
    # Baseline cites passage [1]: with the default (off-topic first) rerank that is shipping.md.
    assert row.old.includes == ["30 days"]
    assert row.old.excluded_hits == []
    assert row.old.cited_relevant == []
    assert row.old.citation_recall == 0.0
    assert row.old.agreement == pytest.approx((1.0 + 1.0 + 0.0) / 3)
    assert row.new.cited_relevant == ["refunds.md"]
    assert row.new.citation_recall == 1.0
    assert row.new.agreement == 1.0
    assert row.new.verdict.startswith("grounded: Within 30 days [")
    assert row.changed
    # Generate runs stop at the generation: no verification paid for.
    assert model.requests_for("verify") == []


def test_each_role_runs_its_default_subset(lab: PromptLab) -> None:
    for role in lab.roles:
        run = lab.run(role)
        assert run.rows, role
        assert run.planned == len(run.rows) == len(lab.default_ids(role))
        assert not run.cancelled
        assert all(r.old.error is None and r.new.error is None for r in run.rows), role
        assert run.role in run.to_text()
        assert ROLE_LABELS[role] in lab.to_html()


def test_offline_model_runs_every_role(kb: Any, tmp_path: Path) -> None:
    lab = PromptLab(sr.SelfRAG(kb), [*RECORDS, FOLLOW_UP])
    for role in lab.roles:
        run = lab.run(role, lab.default_ids(role)[:2])
        assert run.offline
        assert all(r.old.error is None for r in run.rows), role
        assert all(r.old.verdict == r.new.verdict for r in run.rows)
