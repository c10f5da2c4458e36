"""Rewrite (bounded, spans protected, fallbacks) and retrieve (merge, dedupe, caps, ACL)."""

from __future__ import annotations

from typing import Any

from helpers_pipeline import script_refund

import selfrag_nb as sr
from selfrag_nb.stages.rewrite import needs_rewrite

HISTORY = [
    {"role": "user", "content": "Tell me about export in version 2.3"},
    {"role": "assistant", "content": "Version 2.3 exports several formats."},
]


def test_not_useful_means_no_call(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    rw = make_rag().stepper("How many days do I have to request a full refund of a purchase?").rewrite()
    assert rw.attempted is False
    assert rw.queries == ["How many days do I have to request a full refund of a purchase?"]
    assert "matches the documents" in rw.reason
    assert scripted.requests_for("rewrite") == []


def test_followup_with_history_is_rewritten_and_spans_are_enforced(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    q = "Which formats does it not support in v2.3?"
    scripted.enqueue(
        "rewrite",
        {
            "rewrites": [
                "Which export formats does Quill v2.3 not support?",  # kept
                "Which export formats does Quill support?",  # loses v2.3 and the negation
                "Which export formats are supported in v2.3?",  # negation flipped
                "which formats does it not support in v2.3",  # duplicate of the original
                "What formats can v2.3 not export?",  # over the limit of 1
            ]
        },
    )
    rag = make_rag().with_settings(max_rewrites=1)
    step = rag.stepper(q, history=HISTORY)
    rw = step.rewrite()
    assert rw.attempted is True
    assert "follow-up" in rw.reason
    assert rw.queries == [q, "Which export formats does Quill v2.3 not support?"]
    reasons = {r.text: r for r in rw.rejected}
    assert reasons["Which export formats does Quill support?"].missing == ["v2.3"]
    assert "negation" in reasons["Which export formats are supported in v2.3?"].reason
    assert "duplicate" in reasons["which formats does it not support in v2.3"].reason
    assert "limit" in reasons["What formats can v2.3 not export?"].reason
    assert {p.text for p in rw.protected} >= {"v2.3", "not"}
    req = scripted.requests_for("rewrite")[0]
    assert req.inputs.protected == [p.text for p in rw.protected]
    assert [m.content for m in req.inputs.history] == [h["content"] for h in HISTORY]
    # Retrieval searches the original and the accepted rewrite, then merges.
    ret = step.retrieve()
    assert [p.query for p in ret.per_query] == rw.queries
    ids = [h.chunk_id for h in ret.hits]
    assert len(ids) == len(set(ids))
    assert ret.duplicates_removed > 0
    assert [h.rank for h in ret.hits] == list(range(1, len(ids) + 1))
    # The answer still answers the original question; chunks are judged
    # against the question as completed from the history.
    step.finish()
    assert all(r.inputs.question == q for r in scripted.requests if r.role in {"assess", "generate"})
    assert {r.inputs.question for r in scripted.requests_for("grade")} == {rw.queries[1]}


def test_rewrite_failure_falls_back_to_the_original(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.enqueue("rewrite", "no json here", "still not json")
    q = "And what about that one?"
    rw = make_rag().stepper(q, history=HISTORY).rewrite()
    assert rw.queries == [q]
    assert rw.fallbacks[0].what == "original question only"
    assert rw.calls[0].parse_status == "unparsed"


def test_weak_match_triggers_a_rewrite() -> None:
    useful, why = needs_rewrite(
        "Can I get my cash back?", False, "Customers can request a full refund within 30 days."
    )
    assert useful is True
    assert "weak match" in why
    assert needs_rewrite("refund within 30 days?", False, "full refund within 30 days")[0] is False


def test_rewrite_disabled_is_skipped(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = make_rag().with_settings(rewrite=False).ask("How many days do I have to request a refund?")
    assert trace.rewrite is None
    assert [p.query for p in trace.retrieval.per_query] == ["How many days do I have to request a refund?"]


def test_retrieval_caps_and_access_filter(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    rag = make_rag().with_settings(per_query_k=3, total_cap=2, rewrite=False)
    ret = rag.stepper("refund merger budget", user=sr.User("ana")).retrieve()
    assert len(ret.per_query[0].chunk_ids) <= 3
    assert len(ret.hits) == 2
    assert "ana" in ret.access_filter
    assert ret.kb_version is not None
    assert all(h.source != "secret.md" for h in ret.hits)


def test_elliptical_followups_are_completed_from_the_history() -> None:
    for q in ("And what about the Free plan?", "What about v2?", "那专业版呢？"):
        useful, why = needs_rewrite(q, True, "some chunk text that shares every word of the question")
        assert useful, q
        assert why.startswith("follow-up")
    # Without history an ellipsis is just a question.
    assert needs_rewrite("And what about the Free plan?", False, None)[0] is False


def test_followup_chunks_are_graded_and_reranked_against_the_completed_question(
    make_rag: Any, scripted: Any
) -> None:
    script_refund(scripted)
    completed = "Which export formats does version 2.3 not support?"
    scripted.enqueue("rewrite", {"rewrites": [completed]})
    step = make_rag().stepper("Which formats does it not support?", history=HISTORY)
    step.rewrite()
    grades = step.grade()
    assert grades.question == completed
    assert {r.inputs.question for r in scripted.requests_for("grade")} == {completed}
    # The answer still answers the original question.
    step.run()
    assert {r.inputs.question for r in scripted.requests_for("generate")} == {
        "Which formats does it not support?"
    }


def test_grading_uses_the_original_question_when_nothing_was_completed(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    q = "How many days do I have to request a full refund of a purchase?"
    grades = make_rag().stepper(q).grade()
    assert grades.question == q
