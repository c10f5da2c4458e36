"""SmolLM2's shipped recording, replayed without a server: these always run.

The rule (docs/providers.md, "A real model with no key"): a classroom without
the local-llm extra replays SmolLM2's recorded answers with one line,
``sr.SelfRAG(kb, model=sr.LocalModel.replay())``: the Prompt Lab's grade run
and (with the edited grade prompt applied) its verify run over the recorded
sample questions, default prompt vs the recorded edit (``edited_template``),
replay without a server, and the grade edit visibly flips verdicts. Asking
a recorded question replays too. A call that was not recorded is a clear
error saying how to get the live model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import ModelError
from selfrag_nb.llm.local_cassette import CASSETTE, RECORDED_IDS, ROLES, edited_template
from selfrag_nb.llm.prompts import Prompts

INSTALL = "pip install 'selfrag-nb[local-llm]'"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kb() -> sr.KnowledgeBase:
    return sr.KnowledgeBase.sample(progress=False)


# ------------------------------------------------------------------ the recording


def test_replay_is_a_model_named_like_the_live_one() -> None:
    model = sr.LocalModel.replay()
    assert model.name == "openai/smollm2"
    assert model.offline is False  # it reads prompts: the Prompt Lab counts its rows as reached
    assert model.cassette.mode == "replay"
    assert model.cassette.path == CASSETTE
    assert len(model.cassette) > 100


def test_the_recording_is_shipped_with_the_package_and_holds_no_secret() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"llm/cassettes/*.jsonl"' in pyproject
    assert CASSETTE.parent == ROOT / "selfrag_nb" / "llm" / "cassettes"
    text = CASSETTE.read_text(encoding="utf-8")
    assert not re.search(r"\bsk-[A-Za-z0-9]{6,}|Bearer\s+\S", text)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert {line["model"] for line in lines} == {"openai/smollm2"}
    assert {line["role"] for line in lines} >= {"grade", "verify"}


def test_edited_template_adds_one_rule_to_the_default_instructions() -> None:
    for role in ROLES:
        default, edited = Prompts("en")[role], edited_template(role)
        assert edited != default
        # The user message is untouched: the edit is in the instructions.
        assert edited.split("=== user ===")[1] == default.split("=== user ===")[1]
        assert edited.split("=== user ===")[0].startswith(default.split("=== user ===")[0].rstrip())


def test_prompt_lab_grade_then_verify_replay_and_the_grade_edit_flips_verdicts(kb: sr.KnowledgeBase) -> None:
    rag = sr.SelfRAG(kb, model=sr.LocalModel.replay())
    lab = sr.PromptLab(rag, sr.questions("sample"), cache=False)
    runs = {}
    for role in ROLES:
        lab.set_template(role, edited_template(role), note="recorded edit")
        run = lab.run(role, ids=RECORDED_IDS[role])
        assert not run.cancelled
        # A call missing from the recording fails its question: an "error" side.
        assert [r.id for r in run.rows if "error" in (r.old.verdict, r.new.verdict)] == []
        assert [row.id for row in run.rows] == list(RECORDED_IDS[role])
        assert run.reached_old > 0
        assert run.reached_new > 0
        runs[role] = run
        if role == "grade":
            lab.apply("grade")
    flipped = [row.id for row in runs["grade"].rows if row.old.verdict != row.new.verdict]
    assert flipped == list(RECORDED_IDS["grade"]), "the edited grade prompt should keep chunks"
    # With the edited grade prompt applied, chunks are kept and answers reach
    # verify; the stricter verify prompt changes at least one verdict.
    verified = [row for row in runs["verify"].rows if row.old.recommendation and row.new.recommendation]
    assert verified
    assert any(row.old.verdict != row.new.verdict for row in verified)


def test_the_default_grade_prompt_replays_over_the_grade_subset(kb: sr.KnowledgeBase) -> None:
    rag = sr.SelfRAG(kb, model=sr.LocalModel.replay())
    lab = sr.PromptLab(rag, sr.questions("sample"), cache=False)
    run = lab.run("grade", version=lab.baseline("grade"))
    assert [row.id for row in run.rows] == lab.default_ids("grade")
    assert [row.id for row in run.rows if row.old.verdict == "error"] == []


def test_asking_each_question_of_the_grade_subset_replays_every_call(kb: sr.KnowledgeBase) -> None:
    rag = sr.SelfRAG(kb, model=sr.LocalModel.replay())
    qs = sr.questions("sample")
    ids = sr.PromptLab(rag, qs, cache=False).default_ids("grade")
    for qid in ids:  # a call not recorded raises ModelError out of ask
        q = qs.get(qid)
        trace = rag.ask(q.question, user=q.make_user(), history=q.history)
        assert {c.model for c in trace.model_calls} == {"openai/smollm2"}
        assert trace.finish is not None
        assert trace.finish.reason_kind != "model_error", trace.finish.reason


def test_an_unrecorded_question_says_how_to_get_the_live_model(kb: sr.KnowledgeBase) -> None:
    rag = sr.SelfRAG(kb, model=sr.LocalModel.replay())
    with pytest.raises(ModelError) as info:
        rag.ask("Which colour is the office cat of the Dublin team?")
    message = str(info.value)
    assert "has no recorded call" in message
    assert "RECORDED_IDS" in message
    assert "sr.LocalModel()" in message
    assert INSTALL in message
