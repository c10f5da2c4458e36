"""Each workshop exercise (notebooks/04_workshop.ipynb) teaches what it says,
with the offline model: the scenario is run through the API here and the
lesson's outcome and verdicts are asserted. The notebook's own scenario
strings are checked to be the ones tested, so the two cannot drift apart.

Section 10 (record once, replay in class) is tested by executing the
notebook's two cassette cells: the recording cell against a real loopback
HTTP server with a key set, then the replay cell with the key removed and the
server stopped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.attribution import Attribution
from selfrag_nb.testing import LoopbackServer

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_workshop.ipynb"

FACT = "How many times does Quillstack retry a failed webhook delivery?"
IRRELEVANT = "What is Quillstack's parental leave policy for employees?"
REFUND = "What is the refund window for a Pro subscription?"
LIE = "Pro subscriptions can be refunded within 90 days [1]. Refunds are paid in Bitcoin [2]."
FOLLOW_UP = "Is there a Linux version of it?"
INJECTION_Q = "How are partial payments matched to invoices?"
SECRET_Q = "What is the codename of the planned acquisition?"
PAYROLL_Q = "When are salaries paid?"
PAYROLL_DOC = "Salaries are paid on the 25th of each month."


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


@pytest.fixture(scope="module")
def kb() -> sr.KnowledgeBase:
    return sr.KnowledgeBase.sample()


@pytest.fixture(scope="module")
def rag(kb: sr.KnowledgeBase) -> sr.SelfRAG:
    return sr.SelfRAG(kb)


def test_the_notebook_runs_the_scenarios_tested_here() -> None:
    code = "\n".join(_source(c) for c in _cells() if c["cell_type"] == "code")
    for text in (
        FACT,
        IRRELEVANT,
        REFUND,
        LIE,
        FOLLOW_UP,
        INJECTION_Q,
        SECRET_Q,
        PAYROLL_Q,
        PAYROLL_DOC,
        '"你好"',
    ):
        assert text in code, text


def test_1_a_greeting_skips_retrieval_and_judges_a_fact_retrieves(rag: sr.SelfRAG) -> None:
    greeting = rag.ask("你好")
    assert greeting.decision.source == "rule"
    assert greeting.decision.retrieve is False
    assert greeting.retrieval is None
    assert [c.role for c in greeting.model_calls] == ["generate"]  # no decide, grade or verify call
    assert greeting.outcome == "direct"
    assert greeting.finish.reason_kind == "retrieval_not_needed"
    fact = rag.ask(FACT)
    assert fact.decision.retrieve is True
    assert fact.outcome == "answered"
    assert "8 times" in fact.answer
    assert all(c.verdict == "supported" for c in fact.support.claims)


def test_2_irrelevant_documents_are_graded_out_and_the_question_refused(rag: sr.SelfRAG) -> None:
    t = rag.ask(IRRELEVANT)
    assert t.retrieval.hits  # the search returned something ...
    assert t.grades.kept == []  # ... and grading judged none of it relevant
    assert t.assessment.action == "refuse"
    assert t.outcome == "refused"
    assert t.finish.reason_kind == "no_evidence"
    assert t.support is None  # nothing was generated, so nothing to verify


def test_3_hallucinated_claims_are_unsupported_and_refused_with_the_real_reason(kb: sr.KnowledgeBase) -> None:
    liar = sr.ScriptedModel()
    liar.default("generate", {"answer": LIE})
    t = sr.SelfRAG(kb, models={"generate": liar}).ask(REFUND)
    first = t.supports[0]
    verdicts = {c.text: c.verdict for c in first.claims}
    assert verdicts == {
        "Pro subscriptions can be refunded within 90 days.": "unsupported",
        "Refunds are paid in Bitcoin.": "unsupported",
    }
    assert first.recommendation == "REGENERATE"
    assert [g.mode for g in t.generations] == ["grounded", "strict"]
    assert t.outcome == "refused"
    assert t.finish.reason_kind == "unsupported"
    # The refund documents were found: the refusal must not claim they do not cover it.
    assert "do not cover" not in t.answer
    assert "Bitcoin" not in t.answer
    assert "90 days" not in t.answer


def test_4_the_current_policy_applies_and_the_superseded_one_is_marked(rag: sr.SelfRAG) -> None:
    t = rag.ask(REFUND)
    assert t.outcome == "answered"
    # the trace marks the old policy: by its status, or by the new one declaring it replaced
    conflict = t.assessment.conflict
    assert "(2024) superseded" in conflict or ("supersedes" in conflict and "Policy (2024)" in conflict), (
        conflict
    )
    assert "30 days" in t.answer
    cited = {c.chunk_id for c in t.generation.citations if c.valid}
    stale = {h.chunk_id for h in t.retrieval.hits if "2024" in h.source}
    assert stale
    assert cited
    assert not cited & stale  # the answer cites the current policy only
    assert all(c.verdict == "supported" for c in t.support.claims)


def test_5_a_follow_up_is_rewritten_with_the_history_and_keeps_its_spans(rag: sr.SelfRAG) -> None:
    history = [
        {"role": "user", "content": "Tell me about Quillstack Sync."},
        {"role": "assistant", "content": "Quillstack Sync is the desktop app for Windows and macOS."},
    ]
    t = rag.ask(FOLLOW_UP, history=history)
    assert t.rewrite.queries[0] == FOLLOW_UP  # the original first
    assert any("Quillstack Sync" in q for q in t.rewrite.queries[1:])
    assert "Linux" in {s.text for s in t.rewrite.protected}
    assert all("Linux" in q for q in t.rewrite.queries)
    assert t.outcome == "answered"
    assert "Linux" in t.answer
    assert "Quillstack Sync" in t.answer


def test_6_an_injection_is_flagged_and_not_obeyed(rag: sr.SelfRAG) -> None:
    t = rag.ask(INJECTION_Q)
    flags = {f for c in t.model_calls for f in c.injection_flags}
    # the post that hides the line is the best evidence, and its line is flagged on it
    assert t.retrieval.hits[0].source == "community/forum-digest-2025-05.md"
    assert any("forum-digest" in f and "ignore previous instructions" in f for f in flags)
    assert "oldest open invoice" in t.answer
    assert "refunds are approved" not in t.answer.casefold()
    assert "without review" not in t.answer.casefold()
    assert t.outcome == "answered"


def test_7_a_user_without_access_is_refused_without_a_hint(rag: sr.SelfRAG) -> None:
    staff = rag.ask(SECRET_Q, user=sr.User("ana", roles=["staff"]))
    finance = rag.ask(SECRET_Q, user=sr.User("fiona", roles=["finance"]))
    assert staff.outcome == "refused"
    assert staff.finish.reason_kind in {"no_evidence", "no_access"}
    assert not any("finance" in h.source for h in staff.retrieval.hits)
    for text in (staff.answer, staff.finish.reason):
        for secret in ("HALCYON", "Tallyweave", "Finance Plan", "finance", "permission"):
            assert secret not in text
    assert finance.outcome == "answered"
    assert "HALCYON-9" in finance.answer


def test_8_every_refusal_caused_by_access_control_is_found_by_its_reason_kind(
    rag: sr.SelfRAG, tmp_path: Path
) -> None:
    folder = tmp_path / "payroll"
    folder.mkdir()
    (folder / "calendar.md").write_text(
        f"---\ntitle: Payroll calendar\n---\n# Payroll calendar\n\n{PAYROLL_DOC}\n", encoding="utf-8"
    )
    hr_kb = sr.KnowledgeBase.open(tmp_path / "hr_kb", embedder="hashing", default_access="private")
    hr_kb.ingest(folder, acl={"roles": ["hr"]})
    hr_rag = sr.SelfRAG(hr_kb)
    sample = [q for q in sr.questions("sample") if q.category in ("factual", "unauthorized")]
    traces = [rag.ask(q.question, user=q.make_user()) for q in sample]
    users = [sr.User("hana", roles=["hr"]), sr.User("ana", roles=["staff"]), sr.User("anonymous")]
    traces += [hr_rag.ask(PAYROLL_Q, user=u) for u in users]
    ex = sr.explore(traces)
    assert len(ex) == 18
    blocked = ex.filter(outcome="refused", reason_kind="no_access")
    # exactly the people without the hr role, on the question only hr may read the answer to
    assert sorted((t.question, t.user.id) for t in blocked) == [(PAYROLL_Q, "ana"), (PAYROLL_Q, "anonymous")]
    assert "25th" in traces[-3].answer  # hr reads it
    for t in blocked:
        assert t.retrieval.hits == []  # nothing this user may read matched at all
        assert "25th" not in t.answer
    # the sample's unauthorized questions are refused too, but their askers read other
    # documents: no_evidence, so the refusal never hints that a hidden one exists
    for q, t in zip(sample, traces, strict=False):
        if q.category == "unauthorized":
            assert (t.outcome, t.finish.reason_kind) == ("refused", "no_evidence"), q.question


def test_9_the_retry_count_stands_on_the_webhooks_chunk(rag: sr.SelfRAG) -> None:
    t = rag.ask(FACT)
    a = t.attribution()
    assert isinstance(a, Attribution)
    retry = next(c for c in a.claims if "8 times" in c.text)
    assert retry.verdict == "supported"
    (decisive,) = retry.decisive  # lost without exactly one chunk
    chunk = a.chunk(decisive)
    assert chunk.name == "Webhooks"
    text = next(h.text for h in t.retrieval.hits if h.chunk_id == decisive)
    assert "8 times" in text  # the number comes from that chunk
    cell = next(c for c in retry.cells if c.chunk_id == decisive)
    assert cell.verdict == "unsupported"
    assert all(c.effect != "decisive" for c in retry.cells if c.chunk_id != decisive)
    # the notebook asks about this claim
    code = "\n".join(_source(c) for c in _cells() if c["cell_type"] == "code")
    assert '"8 times" in c.text' in code


def _cassette_cells() -> tuple[str, str]:
    by_tag = {tag: _source(c) for c in _cells() for tag in c.get("metadata", {}).get("tags", [])}
    return by_tag["cassette-record"], by_tag["cassette-replay"]


def test_10_recording_is_guarded_without_a_key(
    kb: sr.KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, replay = _cassette_cells()
    for k in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("WORKSHOP_CASSETTE", str(tmp_path / "never.jsonl"))
    ns: dict[str, Any] = {"sr": sr, "kb": kb}
    exec(compile(record, "cassette-record", "exec"), ns)
    assert ns["recorded"] == []
    assert not (tmp_path / "never.jsonl").exists()
    exec(compile(replay, "cassette-replay", "exec"), ns)
    assert ns["replayed"] == []


def test_10_record_with_a_key_then_replay_with_no_key_and_no_network(
    kb: sr.KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, replay = _cassette_cells()
    cassette = tmp_path / "workshop.jsonl"
    monkeypatch.setenv("WORKSHOP_CASSETTE", str(cassette))
    monkeypatch.setenv("WORKSHOP_MODEL", "openai/loopback")
    ns: dict[str, Any] = {"sr": sr, "kb": kb}
    with LoopbackServer() as server:
        monkeypatch.setenv("WORKSHOP_API_BASE", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-workshop-test-0123456789abcdef")
        exec(compile(record, "cassette-record", "exec"), ns)
        sent = len(server.chat_requests())
    recorded = ns["recorded"]
    assert len(recorded) == 2
    assert sent > 0
    assert cassette.exists()
    assert "sk-workshop-test" not in cassette.read_text(encoding="utf-8")

    # Class: the key is gone and the server is stopped; a call that tried the
    # network would fail and show up as an error on the trace.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("WORKSHOP_API_BASE")
    exec(compile(replay, "cassette-replay", "exec"), ns)
    replayed = ns["replayed"]
    assert len(replayed) == 2
    for old, new in zip(recorded, replayed, strict=True):
        assert new.answer == old.answer
        assert new.outcome == old.outcome
        assert [c.raw for c in new.model_calls] == [c.raw for c in old.model_calls]
        assert all(c.error is None for c in new.model_calls)


def test_4_rerank_off_changes_only_the_order_not_which_policy_answers(rag: sr.SelfRAG) -> None:
    # What the notebook's compare cell says: the runs diverge first at Rerank,
    # and both answers give the current policy's 30 days citing no 2024 chunk.
    on = rag.ask(REFUND)
    off = rag.with_settings(rerank=False).ask(REFUND)
    comparison = sr.compare(off, on, labels=("rerank off", "rerank on"))
    assert comparison.first_divergence is not None
    assert comparison.first_divergence.stage == "rerank"
    for t in (on, off):
        assert t.outcome == "answered"
        assert "30 days" in t.answer
        stale = {h.chunk_id for h in t.retrieval.hits if "2024" in h.source}
        assert not {c.chunk_id for c in t.generation.citations if c.valid} & stale
    assert "sr.compare(no_rerank, t" in "\n".join(_source(c) for c in _cells())


def test_exercises_print_what_their_questions_ask_about(capsys: pytest.CaptureFixture[str]) -> None:
    # What a participant reads under exercises 1, 5 and 7: the notebook's own
    # cells run in order; every printed value carries its label, exercise 5
    # shows the answer it asks about, exercise 7 the reason_kind it names.
    cells = [_source(c) for c in _cells() if c["cell_type"] == "code"]
    ns: dict[str, Any] = {}
    wanted = [c for c in cells if c.startswith(("import selfrag_nb", "greeting =", "history =", "staff ="))]
    assert len(wanted) == 4
    for code in wanted:
        exec(compile(code, "04_workshop.ipynb", "exec"), ns)  # the notebook's own cells
    out = capsys.readouterr().out
    assert "greeting  decided by rule  | retrieve: False | model calls: 1 | outcome: direct" in out
    assert "fact      decided by" in out
    assert "| retrieve: True  |" in out
    assert "searched for: ['Is there a Linux version of it?'" in out
    assert f"answer:       {ns['t'].answer}" in out
    assert f"staff:   refused | {ns['staff'].finish.reason_kind} |" in out


def test_10_a_weak_real_judge_makes_self_rag_refuse_not_guess(
    kb: sr.KnowledgeBase, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The notebook's own cell, on SmolLM2's recorded answers (as a room without the extra runs it):
    # the judge copies the 0 of "relevanceScore": 0-100 although its key info quotes the answer,
    # nothing is kept, and the question is refused for lack of evidence instead of answered.
    monkeypatch.delenv("SELFRAG_LOCAL_MODEL", raising=False)
    code = next(
        _source(c) for c in _cells() if c["cell_type"] == "code" and "sr.LocalModel.replay()" in _source(c)
    )
    ns: dict[str, Any] = {"sr": sr, "kb": kb}
    exec(compile(code, "04_workshop.ipynb", "exec"), ns)  # the notebook's own cell
    t = ns["t"]
    assert t.outcome == "refused"
    assert t.finish.reason_kind == "no_evidence"
    assert {g.score for g in t.grades.items} == {0}
    assert "not supported on the Free plan" in t.grades.items[0].key_info
    out = capsys.readouterr().out
    assert "outcome: refused | no_evidence" in out
    assert "first grade: score 0 | key info:" in out
