"""Outcome records say why, honestly: a forced "no retrieval" says it was
forced and that the answer is not grounded; a refusal names its real reason
(no evidence, nothing visible to the user, an unsupported answer, documents
that disagree) both as ``Outcome.reason_kind`` and in the words the user reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers_pipeline import SECRET, script_refund, verdict

from selfrag_nb.stages.generate import refusal_message
from selfrag_nb.store.types import User
from selfrag_nb.trace import Trace

Q = "How many days do I have to request a full refund of a purchase?"


def test_stepper_override_off_says_it_was_forced(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("generate", {"answer": "I can't answer that reliably without the knowledge base."})
    step = make_rag().stepper(Q)
    step.override("decide", retrieve=False)
    trace = step.run()
    assert trace.decision.source == "override"
    assert trace.decision.forced
    assert trace.outcome == "direct"
    assert trace.finish.reason_kind == "retrieval_off"
    assert "turned off by a stepper override" in trace.finish.reason
    assert "not grounded in documents" in trace.finish.reason
    assert "no retrieval was needed" not in trace.finish.reason


def test_never_retrieve_setting_says_it_was_forced(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("generate", {"answer": "Probably 30 days."})
    trace = make_rag().with_settings(retrieval="never").ask(Q)
    assert trace.decision.source == "setting"
    assert trace.decision.forced
    assert trace.outcome == "direct"
    assert trace.finish.reason_kind == "retrieval_off"
    assert 'settings.retrieval = "never"' in trace.finish.reason
    assert "not grounded in documents" in trace.finish.reason


def test_greeting_needs_no_retrieval_and_is_not_forced(make_rag: Any, scripted: Any) -> None:
    scripted.default("generate", {"answer": "Hello!"})
    trace = make_rag().ask("Hello!")
    assert not trace.decision.forced
    assert trace.outcome == "direct"
    assert trace.finish.reason_kind == "retrieval_not_needed"
    assert trace.finish.reason == "no retrieval was needed"


def test_refusal_after_failed_verification_says_the_answer_was_unsupported(
    make_rag: Any, scripted: Any
) -> None:
    script_refund(
        scripted,
        verify=verdict([("Refunds take 90 days", "unsupported", 0, "")], "REGENERATE", 10),
        answer="Refunds take 90 days.",
    )
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "unsupported"
    # The documents did cover the question; the answer was what failed.
    assert "do not cover" not in trace.answer
    assert "unsupported" in trace.answer
    assert "Documents about this question" in trace.answer


def test_refusal_without_evidence_says_the_documents_do_not_cover_it(make_rag: Any, scripted: Any) -> None:
    from helpers_pipeline import grade_by_words

    script_refund(scripted)
    scripted.default("grade", grade_by_words("nothing-matches-this"))
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "no_evidence"
    assert "do not cover this question" in trace.answer


def test_conflict_refusal_is_typed(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default(
        "assess",
        {"action": "REFUSE", "reason": "they disagree", "conflict": "one says 30 days, another 14 days"},
    )
    trace = make_rag().ask(Q)
    assert trace.finish.reason_kind == "conflict"
    assert "disagree" in trace.answer


def test_nothing_visible_to_the_user_is_no_access_and_names_nothing(tmp_path: Path, scripted: Any) -> None:
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.store.kb import KnowledgeBase

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "secret.md").write_text(
        "---\ntitle: Merger plan\nroles: [board]\n---\n# Merger plan\n\n"
        f"Project {SECRET}: the refund budget will be cut to 10 days.\n",
        encoding="utf-8",
    )
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs)
    script_refund(scripted)
    rag = SelfRAG(kb, model=scripted)
    trace = rag.ask(Q, user=User("ana", roles=["staff"]))
    assert trace.retrieval is not None
    assert trace.retrieval.hits == []
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "no_access"
    assert "No document available to you matches" in trace.answer
    for text in (trace.answer, trace.finish.reason):
        assert SECRET not in text
        assert "Merger" not in text
        assert "permission" not in text.casefold()
    # The board member sees it: the same question is not refused for lack of access.
    board = rag.ask(Q, user=User("bo", roles=["board"]))
    assert board.finish.reason_kind != "no_access"


def test_old_trace_json_without_reason_kind_still_loads(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    trace = make_rag().ask(Q)
    data = json.loads(trace.to_json())
    for rec in data["records"]:
        rec.pop("reason_kind", None)
    old = Trace.from_json(json.dumps(data))
    assert old.outcome == trace.outcome
    assert old.finish.reason_kind == ""


def test_each_refusal_kind_has_its_own_words() -> None:
    kinds = ("no_evidence", "no_access", "unsupported", "unverified", "no_answer", "deadline", "model_error")
    en = {k: refusal_message("Is X supported?", "en", kind=k) for k in kinds}  # type: ignore[arg-type]
    zh = {k: refusal_message("支持 X 吗？", "zh", kind=k) for k in kinds}  # type: ignore[arg-type]
    assert len(set(en.values())) == len(kinds)
    assert len(set(zh.values())) == len(kinds)
    assert all("Is X supported?" in m for m in en.values())
    assert "do not cover" not in en["unsupported"]


def test_a_failed_check_is_a_model_error_not_unsupported(make_rag: Any, scripted: Any) -> None:
    # A verifier whose provider is down made no check: the refusal says which
    # calls failed and how, never that the answer was unsupported.
    script_refund(scripted)
    scripted.default("verify", RuntimeError("verifier provider down"))
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "model_error"
    assert "verify:" in trace.finish.reason
    assert "verifier provider down" in trace.finish.reason
    assert "unsupported" not in trace.answer


def test_a_failed_generator_is_a_model_error(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("generate", RuntimeError("generator provider down"))
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "model_error"
    assert "generate:" in trace.finish.reason
    assert "generator provider down" in trace.finish.reason
    assert "language model failed" in trace.answer


def test_an_empty_answer_is_no_answer(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    scripted.default("generate", {"answer": ""})
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "no_answer"
    assert "No usable answer" in trace.answer


def test_forced_no_retrieval_is_not_drawn_as_a_green_direct_answer(make_rag: Any, scripted: Any) -> None:
    # The rule: green means nothing about the answer is doubtful. An answer made
    # with retrieval forced off is grounded in nothing, so its badge is amber,
    # while a greeting that needed no retrieval stays green.
    from selfrag_nb.display.html import static_html

    script_refund(scripted)
    scripted.default("generate", {"answer": "Probably 30 days."})
    forced = make_rag().with_settings(retrieval="never").ask(Q)
    greeting = make_rag().ask("Hello!")
    forced_html, greeting_html = static_html(forced.finish), static_html(greeting.finish)
    assert 'srnb-warn"><bdi>direct' in forced_html
    assert 'srnb-ok"><bdi>direct' not in forced_html
    assert 'srnb-ok"><bdi>direct' in greeting_html


def test_a_failed_usefulness_judge_is_a_model_error_not_not_answered(make_rag: Any, scripted: Any) -> None:
    # A judge whose provider is down said nothing about the answer: the
    # refusal names the failed calls, never "does not answer the question".
    script_refund(scripted)
    scripted.default("usefulness", RuntimeError("judge provider down"))
    trace = make_rag().ask(Q)
    assert trace.outcome == "refused"
    assert trace.finish.reason_kind == "model_error"
    assert "usefulness:" in trace.finish.reason
    assert "judge provider down" in trace.finish.reason
    assert "does not answer" not in trace.finish.reason


def test_each_refusal_kind_closes_with_what_helps_it() -> None:
    """ "Add more specific details" helps a search that found nothing; it is
    not advice for an unsupported answer, a failed check or an access refusal
    (which must hint at nothing the user cannot see)."""
    from selfrag_nb.stages.generate import refusal_message

    more = "If you can add more specific details"
    assert more in refusal_message("q", "en", kind="no_evidence")
    for kind in ("no_access", "unsupported", "not_answered", "unverified", "model_error", "deadline"):
        msg = refusal_message("q", "en", kind=kind)  # type: ignore[arg-type]
        assert more not in msg, kind
    assert refusal_message("q", "en", kind="no_access").endswith("so I cannot give a confirmed answer.")
    assert "更具体的信息" not in refusal_message("q", "zh", kind="unsupported")
