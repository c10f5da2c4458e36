"""End to end with a ScriptedModel and a real LanceDB knowledge base."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers_pipeline import (
    REFUND_ANSWER,
    REFUND_CLAIM,
    REFUND_QUOTE,
    SECRET,
    grade_by_words,
    script_mixed,
    script_refund,
    verdict,
)

import selfrag_nb as sr
from selfrag_nb.trace import Trace

Q = "How many days do I have to request a refund?"


def test_grounded_answer_is_accepted_with_citations_and_evidence_offsets(
    make_rag: Any, scripted: Any
) -> None:
    script_refund(scripted)
    trace = make_rag().ask(Q, user=sr.User("ana"))
    assert trace.outcome == "answered"
    assert trace.answer == REFUND_ANSWER
    assert trace.decision.source == "rule"
    assert trace.rewrite.queries[0] == Q
    assert trace.retrieval.hits
    assert trace.retrieval.access_filter
    refund_id = trace.grades.kept[0]
    assert (
        trace.retrieval.hits[[h.chunk_id for h in trace.retrieval.hits].index(refund_id)].source
        == "refunds.md"
    )
    gen = trace.generation
    assert gen.mode == "grounded"
    assert gen.evidence[0] == refund_id
    assert gen.citations[0].chunk_id == refund_id
    assert gen.citations[0].valid
    claim = trace.support.claims[0]
    assert claim.text == REFUND_CLAIM
    assert claim.verdict == "supported"
    assert claim.citation_error is None
    assert claim.cited == [refund_id]
    ev = claim.evidence[0]
    hit_text = next(h.text for h in trace.retrieval.hits if h.chunk_id == refund_id)
    assert hit_text[ev.start : ev.end] == REFUND_QUOTE
    # The span covers the claim with its citation markers and full stop.
    assert trace.answer[claim.start : claim.end] == REFUND_ANSWER
    # config snapshot
    cfg = trace.config
    assert cfg.models["grade"] == "scripted"
    assert set(cfg.prompt_hashes) >= {"decide", "grade", "verify"}
    assert cfg.settings["relevance_cutoff"] == 50
    assert cfg.kb_version is not None
    assert cfg.embedder == "hashing"
    assert cfg.reranker == "model"
    assert cfg.library_version == sr.__version__
    assert trace.wall_ms > 0


def test_trace_json_round_trip_is_exact(make_rag: Any, scripted: Any, tmp_path: Any) -> None:
    script_refund(scripted)
    trace = make_rag().ask(Q, user=sr.User("ana"), history=[{"role": "user", "content": "hi"}])
    again = Trace.from_json(trace.to_json())
    assert again == trace
    assert again.to_json() == trace.to_json()
    assert Trace.load(trace.save(tmp_path / "t.json")) == trace


def test_greeting_is_answered_directly_without_retrieval(make_rag: Any, scripted: Any) -> None:
    scripted.default("generate", {"answer": "Hello! How can I help?"})
    trace = make_rag().ask("Hello!")
    assert trace.outcome == "direct"
    assert trace.decision.retrieve is False
    assert trace.decision.rule == "greeting"
    assert trace.retrieval is None
    assert trace.grades is None
    assert trace.support is None
    assert trace.generation.mode == "direct"
    assert [r.role for r in scripted.requests] == ["generate"]


def test_add_disclaimer_in_the_questions_language(make_rag: Any, scripted: Any) -> None:
    script_refund(
        scripted, verify=verdict([(REFUND_CLAIM, "partial", 1, REFUND_QUOTE)], "ADD_DISCLAIMER", 70)
    )
    trace = make_rag().ask(Q)
    assert trace.outcome == "disclaimed"
    assert trace.answer.startswith("Based on the available information:\n")
    scripted.default("grade", grade_by_words("refund", "退款"))
    zh = make_rag().ask("退款政策是什么？多少天内可以退款？")
    assert zh.outcome == "disclaimed"
    assert zh.answer.startswith("根据现有信息：")


def test_regenerate_then_accept_is_regenerated_with_the_strict_prompt(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    bad = "Refunds take 90 days [1]."
    scripted.enqueue("generate", {"answer": bad})
    scripted.enqueue("verify", verdict([("Refunds take 90 days", "unsupported", 1, "")], "REGENERATE", 20))
    trace = make_rag().ask(Q)
    assert trace.outcome == "regenerated"
    assert trace.answer == REFUND_ANSWER
    gens = trace.generations
    assert [g.mode for g in gens] == ["grounded", "strict"]
    assert gens[1].attempt == 2
    strict_req = scripted.requests_for("generate")[1]
    assert strict_req.inputs.mode == "strict"
    assert strict_req.inputs.avoid == ["Refunds take 90 days"]
    assert len(trace.supports) == 2
    assert Trace.from_json(trace.to_json()) == trace  # every record type survives JSON
    # The first support flagged the citation of an unsupported claim.
    assert trace.supports[0].claims[0].citation_error == "[1] does not support this claim"


@pytest.mark.parametrize("max_regen", [0, 1, 3])
def test_regeneration_is_bounded_then_unsupported_claims_are_dropped(
    make_rag: Any, scripted: Any, max_regen: int
) -> None:
    script_mixed(scripted)
    rag = make_rag().with_settings(max_regenerations=max_regen)
    trace = rag.ask(Q)
    assert len(scripted.requests_for("generate")) == 1 + max_regen
    assert len(trace.generations) == 1 + max_regen
    assert trace.outcome == "disclaimed"
    assert trace.finish.dropped_claims == ["Refunds include shipping costs"]
    assert "shipping" not in trace.answer
    assert trace.answer == "Based on the available information:\n" + REFUND_CLAIM + " [1]"


def test_still_unsupported_with_nothing_left_is_refused(make_rag: Any, scripted: Any) -> None:
    script_refund(
        scripted,
        verify=verdict([("Refunds take 90 days", "unsupported", 0, "")], "REGENERATE", 10),
        answer="Refunds take 90 days.",
    )
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert "could not be supported" in trace.finish.reason
    # The refund document was found; the refusal says the answer failed the check.
    assert trace.finish.reason_kind == "unsupported"
    assert "do not cover" not in trace.answer
    assert len(trace.generations) == 2  # one strict regeneration, then stop


def test_no_relevant_evidence_refuses_without_generation(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("grade", grade_by_words("nothing-matches-this"))
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.assessment.action == "refuse"
    assert trace.assessment.calls == []
    assert trace.generation.mode == "refuse"
    assert not scripted.requests_for("generate")
    assert not scripted.requests_for("assess")
    assert "http" not in trace.answer


def test_no_evidence_can_answer_with_a_disclaimer(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("grade", grade_by_words("nothing-matches-this"))
    scripted.default("generate", {"answer": "Usually about a month."})
    trace = make_rag().with_settings(no_evidence="answer_with_disclaimer").ask(Q)
    assert trace.assessment.action == "answer_without_evidence"
    assert trace.generation.mode == "direct"
    assert trace.support is None
    assert trace.outcome == "disclaimed"
    assert trace.answer.startswith("No relevant document was found")


def test_clarify_asks_with_the_options(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("grade", grade_by_words("plan"))
    scripted.default(
        "assess", {"action": "CLARIFY", "reason": "which plan?", "options": ["Free", "Pro", "Enterprise"]}
    )
    trace = make_rag().ask("How many projects does the plan allow?")
    assert trace.outcome == "clarify"
    assert trace.answer == "Which do you mean: Free, Pro or Enterprise?"
    assert trace.assessment.options == ["Free", "Pro", "Enterprise"]
    assert not scripted.requests_for("generate")


def test_cited_chunk_that_does_not_support_the_claim_is_a_citation_error(
    make_rag: Any, scripted: Any
) -> None:
    script_refund(scripted)
    scripted.default("grade", grade_by_words("refund", "warehouse"))
    scripted.default("rerank", {"ranking": [{"index": 0, "score": 0.9}, {"index": 1, "score": 0.5}]})
    answer = "Customers can request a full refund within 30 days of purchase [2]. See also [7]."
    first = verdict([(REFUND_CLAIM, "supported", 1, REFUND_QUOTE)], "ACCEPT", 95)
    first["claims"][0]["cited"] = [2]
    scripted.enqueue("generate", {"answer": answer})
    scripted.enqueue("verify", first)
    trace = make_rag().ask("How many days do I have to request a refund, and how fast do orders ship?")
    s1 = trace.supports[0]
    assert s1.claims[0].citation_error is not None
    assert "[2] does not support this claim" in s1.claims[0].citation_error
    assert s1.recommendation == "REGENERATE"  # ACCEPT overruled: recorded as a fallback
    assert any(f.what == "REGENERATE" for f in s1.fallbacks)
    invalid = [c for c in trace.generations[0].citations if not c.valid]
    assert [c.marker for c in invalid] == [7]
    assert trace.outcome == "regenerated"


def test_unauthorised_text_never_enters_the_trace_or_a_prompt(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("grade", grade_by_words("merger", "refund"))
    trace = make_rag().ask("What is the refund budget after the merger with Zentrix?", user=sr.User("ana"))
    assert SECRET not in trace.to_json()
    for req in scripted.requests:
        assert all(SECRET not in m.content for m in req.messages)
        assert SECRET not in req.inputs.model_dump_json()
    board = make_rag().ask("What is the refund budget after the merger?", user=sr.User("bo", roles=["board"]))
    assert SECRET in board.to_json()  # the same question with access does see it


def test_bad_input_raises_before_any_work(make_rag: Any, scripted: Any) -> None:
    rag = make_rag()
    with pytest.raises(ValueError, match="blank"):
        rag.ask("   \n ")
    with pytest.raises(ValueError, match="history must be a list"):
        rag.ask(Q, history="hello")
    with pytest.raises(ValueError, match=r"history\[1\]\['role'\]"):
        rag.ask(Q, history=[{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}])
    with pytest.raises(ValueError, match=r"history\[0\]\['content'\] must be a string"):
        rag.ask(Q, history=[{"role": "user", "content": 3}])
    with pytest.raises(TypeError, match="question must be a string"):
        rag.ask(None)  # type: ignore[arg-type]
    assert scripted.requests == []


def test_huge_question_is_truncated_for_models_with_a_fallback(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    question = "refund " + "x" * 100_000
    trace = make_rag().ask(question)
    assert trace.question == question
    assert any(f.what == "question truncated" for f in trace.decision.fallbacks)
    assert all(len(getattr(r.inputs, "question", "")) <= 4000 for r in scripted.requests)
    assert trace.outcome is not None


def test_sync_ask_inside_a_running_event_loop(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    rag = make_rag()

    async def notebook_cell() -> Trace:
        asyncio.get_running_loop()  # as in Jupyter: a loop is running
        return rag.ask(Q)

    trace = asyncio.run(notebook_cell())
    assert trace.outcome == "answered"


def test_aask(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = asyncio.run(make_rag().aask(Q, user="ana"))
    assert trace.outcome == "answered"
    assert trace.user.id == "ana"


def test_with_settings_keeps_runner_and_changes_settings(make_rag: Any) -> None:
    rag = make_rag()
    other = rag.with_settings(rerank=False, relevance_cutoff=40)
    assert other.runner is rag.runner
    assert other.kb is rag.kb
    assert other.settings.rerank is False
    assert rag.settings.rerank is True
    with pytest.raises(ValueError):
        rag.with_settings(no_such_knob=1)


def test_rerank_disabled_leaves_no_record(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = make_rag().with_settings(rerank=False).ask(Q)
    assert trace.rerank is None
    assert trace.outcome == "answered"
    assert all(r.stage != "rerank" for r in trace.records)
