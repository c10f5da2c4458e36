"""Evaluation of answer usefulness and the plain-RAG comparison (offline
model, the sample knowledge base with the hashing embedder):
``answer_relevance`` and ``wrong_accepted`` per variant, and the
``plain_rag`` preset running the pipeline Self-RAG claims to improve."""

from __future__ import annotations

from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.metrics import METRICS
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.store.kb import KnowledgeBase


@pytest.fixture(scope="module")
def kb() -> Any:
    return KnowledgeBase.sample(embedder="hashing")


QS = QuestionSet(
    [
        Question(
            id="refund",
            category="factual",
            question="What is the refund window for a Pro subscription?",
            expected=["answered", "disclaimed", "regenerated"],
            must_include=["30 days"],
            user={"id": "ana"},
        ),
        Question(
            id="missing-fact",
            category="factual",
            question="What is the refund window for a Pro subscription?",
            expected=["answered", "disclaimed", "regenerated"],
            # a fact the answer cannot hold: the row counts as a wrong answer accepted
            must_include=["a string no answer contains"],
            user={"id": "ana"},
        ),
        Question(
            id="unknown",
            category="unanswerable",
            question="What is the office dress code on Fridays?",
            expected=["refused", "clarify"],
            user={"id": "ana"},
        ),
    ],
    name="usefulness",
)


def test_answer_relevance_and_wrong_accepted_are_reported_per_variant(kb: Any) -> None:
    assert list(METRICS).index("answer_relevance") < list(METRICS).index("wrong_accepted")
    report = sr.evaluate(sr.SelfRAG(kb), QS, progress=False)
    rows = {r.id: r for r in report.rows}
    assert rows["refund"].usefulness == "yes"
    assert rows["refund"].usefulness_score is not None
    assert rows["refund"].wrong_accepted is False
    assert rows["missing-fact"].wrong_accepted is True
    assert rows["unknown"].usefulness is None  # a refusal is not judged
    assert rows["unknown"].wrong_accepted is False
    everything = report.summary.set_index(["variant", "category"]).loc[("default", "all")]
    assert everything["wrong_accepted"] == 1
    scored = [r.usefulness_score for r in report.rows if r.usefulness_score is not None]
    assert everything["answer_relevance"] == pytest.approx(sum(scored) / (100 * len(scored)))


def test_plain_rag_preset_answers_without_any_check(kb: Any) -> None:
    report = sr.evaluate(sr.SelfRAG(kb), QS, variants="plain_rag", progress=False)
    assert sorted({r.variant for r in report.rows}) == ["plain_rag", "self_rag"]
    plain = {r.id: r for r in report.rows if r.variant == "plain_rag"}
    selfrag = {r.id: r for r in report.rows if r.variant == "self_rag"}
    # Plain RAG answers the unanswerable question; Self-RAG refuses it.
    assert plain["unknown"].outcome == "answered"
    assert selfrag["unknown"].outcome == "refused"
    assert set(plain["refund"].role_tokens_in) == {"generate"}
    assert plain["refund"].usefulness is None


def test_each_row_says_which_check_turned_the_question_down(kb: Any, tmp_path: Any) -> None:
    """A declined question's row carries the outcome's reason_kind, the same as
    the trace of the same question says; a plain answer's is empty. It
    survives a save and a load."""
    rag = sr.SelfRAG(kb)
    report = sr.evaluate(rag, QS, progress=False)
    rows = {r.id: r for r in report.rows}
    trace = rag.ask(QS[2].question, user=sr.User(id="ana"))
    assert trace.finish is not None
    assert trace.finish.reason_kind
    assert rows["unknown"].outcome == "refused"
    assert rows["unknown"].reason_kind == trace.finish.reason_kind
    assert rows["refund"].reason_kind == ""
    loaded = sr.EvalReport.load(report.save(tmp_path / "report.json"))
    assert {r.id: r.reason_kind for r in loaded.rows} == {r.id: r.reason_kind for r in report.rows}
