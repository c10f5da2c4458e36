"""Prompt Lab engine: real pipeline (ScriptedModel + real LanceDB), real files.

The scripted model answers from a marker in the system prompt, so these tests
show that a template edit really reaches the model and changes its verdicts,
and that the lab scores both sides against the labels."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from prompt_lab_fixtures import LAZY, RECORDS, SKEPTIC, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.errors import TemplateError
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import OFFLINE_PROMPT_NOTE, LabRun, PromptLab


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The lab's disk cache lives under the cache dir: each test gets its own.
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_kb"))


@pytest.fixture
def qs() -> QuestionSet:
    return QuestionSet.from_records(RECORDS, name="lab-set")


@pytest.fixture
def model() -> Any:
    return scripted_model(tokens_in=100, tokens_out=20, cost=0.0005)


@pytest.fixture
def lab(kb: Any, qs: QuestionSet, model: Any) -> PromptLab:
    return sr.PromptLab(sr.SelfRAG(kb, model=model), qs)


def test_public_name_is_the_engine() -> None:
    assert sr.PromptLab is PromptLab


def test_grade_template_edit_changes_what_the_model_sees_and_the_agreement(
    lab: PromptLab, model: Any
) -> None:
    base = lab.baseline("grade")
    strict = lab.set_template("grade", with_marker(lab.template("grade"), STRICT), note="strict")
    assert strict == hashlib.sha256(lab.template("grade").encode()).hexdigest()[:12] != base

    seen: list[tuple[str, int, int]] = []
    run = lab.run(
        "grade", ["refund-1", "ship-1"], on_row=lambda row, done, total: seen.append((row.id, done, total))
    )

    assert sorted(i for i, _, _ in seen) == ["refund-1", "ship-1"]
    assert [(d, t) for _, d, t in seen] == [(1, 2), (2, 2)]
    # The model received both templates: the marker only in the candidate's calls.
    grade_calls = model.requests_for("grade")
    assert any(STRICT in r.messages[0].content for r in grade_calls)
    assert any(STRICT not in r.messages[0].content for r in grade_calls)
    for r in grade_calls:
        assert (STRICT in r.messages[0].content) == (r.prompt_hash == strict)

    assert run.role == "grade"
    assert run.baseline == base
    assert run.candidate == strict
    assert run.ids == ["refund-1", "ship-1"]
    refund, ship = run.rows
    # Baseline: every chunk relevant -> half of the judgements are wrong.
    assert refund.old.agreement == 0.5
    assert ship.old.agreement == 0.5
    assert set(refund.old.relevant) == {"refunds.md", "shipping.md"}
    # Candidate: only the right document.
    assert refund.new.relevant == ["refunds.md"]
    assert ship.new.relevant == ["shipping.md"]
    assert refund.new.agreement == 1.0
    assert ship.new.agreement == 1.0
    assert refund.new.precision == 1.0
    assert refund.new.recall == 1.0
    assert refund.old.precision == 0.5
    assert refund.label == "relevant: refunds.md"
    assert refund.changed
    assert ship.changed
    assert run.changed == 2
    assert run.agreement_old == 0.5
    assert run.agreement_new == 1.0
    # Tokens, cost and latency are those of the grade calls (2 chunks each).
    assert refund.new.calls == 2
    assert refund.new.tokens_in == 200
    assert refund.new.tokens_out == 40
    assert refund.new.cost == pytest.approx(0.001)
    assert refund.new.prompt_hashes == [strict]
    assert refund.old.prompt_hashes == [base]
    assert refund.new.latency_ms >= 0
    assert refund.new.wall_ms >= refund.new.latency_ms
    assert not run.offline
    assert run.note == ""
    assert run.model == "scripted"
    totals = run.totals()
    assert totals["old"]["agreement"] == 0.5
    assert totals["new"]["agreement"] == 1.0
    assert totals["new"]["cost"] == pytest.approx(0.002)
    assert totals["new"]["tokens_in"] == 400
    # The user's pipeline was not changed by the run.
    assert lab.rag.prompts.hash("grade") == base


def test_runs_are_cached_per_template_hash(lab: PromptLab, model: Any) -> None:
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    first = lab.run("grade", ["refund-1"])
    n = len(model.requests)
    again = lab.run("grade", ["refund-1"])
    assert len(model.requests) == n, "same templates and context: nothing is asked again"
    assert again.rows[0].old.cached
    assert again.rows[0].new.cached
    assert again.rows[0].new.verdict == first.rows[0].new.verdict
    # A third version re-runs only its own side: the baseline stays cached.
    lab.set_template("grade", with_marker(lab.template("grade"), "another line"))
    grades_before = len(model.requests_for("grade"))
    third = lab.run("grade", ["refund-1"])
    assert third.rows[0].old.cached
    assert not third.rows[0].new.cached
    assert len(model.requests_for("grade")) == grades_before + 2  # two chunks, candidate side only
    # Changing another template changes the context: the cache no longer applies.
    lab.rag.prompts["rerank"] = with_marker(lab.rag.prompts["rerank"], "context changed")
    fourth = lab.run("grade", ["refund-1"])
    assert not fourth.rows[0].old.cached
    before = len(model.requests)
    lab.run("grade", ["refund-1"], use_cache=False)
    assert len(model.requests) > before


def test_decide_template_flips_the_retrieval_decision(lab: PromptLab, model: Any) -> None:
    lab.set_template("decide", with_marker(lab.template("decide"), LAZY), note="lazy")
    run = lab.run("decide", ["france-1", "memo-1"])
    france, memo = run.rows
    assert france.label == "NO_RETRIEVE"
    assert memo.label == "RETRIEVE"
    assert france.old.verdict == "RETRIEVE"
    assert france.old.agreement == 0.0
    assert france.new.verdict == "NO_RETRIEVE"
    assert france.new.agreement == 1.0
    assert france.new.decision_source == "model"
    assert france.new.reason == "general knowledge"
    assert memo.old.verdict == memo.new.verdict == "RETRIEVE"
    assert not memo.changed
    assert run.agreement_old == 0.5
    assert run.agreement_new == 1.0
    # decide runs stop at the decision: no later stage paid for.
    assert model.requests_for("grade") == []
    assert model.requests_for("generate") == []


def test_verify_template_changes_recommendation_and_outcome(lab: PromptLab, model: Any) -> None:
    lab.set_template("verify", with_marker(lab.template("verify"), SKEPTIC))
    run = lab.run("verify", ["refund-1"])
    (row,) = run.rows
    assert row.label == "expected: answered"
    assert row.old.recommendation == "ACCEPT"
    assert row.old.outcome == "answered"
    assert row.old.agreement == 1.0
    assert row.new.recommendation == "ADD_DISCLAIMER"
    assert row.new.outcome == "disclaimed"
    assert row.new.agreement == 0.0
    assert row.new.verdict == "ADD_DISCLAIMER → disclaimed"
    assert lab.best("verify")["hash"] == lab.baseline("verify")


def test_offline_model_says_prompts_are_not_used_and_verdicts_do_not_change(kb: Any, qs: QuestionSet) -> None:
    lab = sr.PromptLab(sr.SelfRAG(kb), qs)
    assert lab.offline
    assert lab.is_offline("grade")
    assert lab.note() == OFFLINE_PROMPT_NOTE
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    run = lab.run("grade", ["refund-1", "ship-1", "memo-1"])
    assert run.offline
    assert run.note == OFFLINE_PROMPT_NOTE
    assert run.rows
    assert all(r.old.verdict == r.new.verdict and not r.changed for r in run.rows)
    assert all(r.new.offline for r in run.rows if r.new.calls)
    assert run.agreement_old == run.agreement_new
    assert OFFLINE_PROMPT_NOTE in lab.to_html()
    assert OFFLINE_PROMPT_NOTE in run.to_html()
    assert "offline" in run.to_text()
    assert "offline" in lab.to_text()


def test_versions_revert_best_export_apply(lab: PromptLab, tmp_path: Path) -> None:
    base = lab.baseline("grade")
    original = lab.template("grade")
    v1 = lab.set_template("grade", with_marker(original, STRICT), note="strict")
    v2 = lab.set_template("grade", with_marker(original, "loose"), note="loose")
    assert lab.set_template("grade", with_marker(original, STRICT)) == v1  # same text, same version
    vs = lab.versions("grade")
    assert [v["hash"] for v in vs] == [base, v1, v2]
    assert [v["note"] for v in vs] == ["baseline: packaged default", "strict", "loose"]
    assert [v["current"] for v in vs] == [False, True, False]
    assert vs[0]["baseline"]
    assert lab.revert("grade", v2[:6]) == v2
    assert lab.template("grade") == with_marker(original, "loose")
    with pytest.raises(KeyError, match="unknown version 'ffffffff' of 'grade'"):
        lab.revert("grade", "ffffffff")

    with pytest.raises(ValueError, match="no run for 'grade' yet"):
        lab.best("grade")
    assert lab.export("grade") == lab.template("grade")  # before any run: the current version

    lab.run("grade", ["refund-1", "ship-1"], version=v1)
    lab.run("grade", ["refund-1", "ship-1"], version=v2)  # loose == baseline's verdicts
    best = lab.best("grade")
    assert best["hash"] == v1
    assert best["agreement"] == 1.0
    assert best["questions"] == 2
    scores = {v["hash"]: v["scores"] for v in lab.versions("grade")}
    assert scores[v1]["agreement"] == 1.0
    assert scores[base]["agreement"] == 0.5
    assert scores[v2]["agreement"] == 0.5

    out = tmp_path / "grade.txt"
    text = lab.export("grade", out)
    assert text == with_marker(original, STRICT)
    assert out.read_text(encoding="utf-8") == text
    meta = json.loads((tmp_path / "grade.txt.json").read_text(encoding="utf-8"))
    assert meta["role"] == "grade"
    assert meta["hash"] == v1
    assert meta["scores"]["agreement"] == 1.0
    assert meta["baseline"] == base
    assert meta["question_set"]["name"] == "lab-set"
    # The exported file loads back into a pipeline with the same hash.
    lab.rag.prompts["grade"] = out.read_text(encoding="utf-8")
    assert lab.rag.prompts.hash("grade") == v1
    lab.rag.prompts.reset("grade")
    assert lab.apply("grade", v2) == v2
    assert lab.rag.prompts.hash("grade") == v2
    assert lab.set_baseline("grade", v1) == v1
    assert lab.baseline("grade") == v1


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Judge {{documnet}}\n=== user ===\n{{question}}", r"unknown placeholder \{\{documnet\}\}"),
        ("Judge {{question.text}}\n=== user ===\n", "malformed placeholder"),
        ("Judge {{question}} with no user part", "=== user ==="),
        ("Judge {{question", "unclosed placeholder"),
    ],
)
def test_bad_template_is_a_clear_error_and_changes_nothing(lab: PromptLab, text: str, problem: str) -> None:
    cur = lab.current("grade")
    with pytest.raises(TemplateError, match=problem):
        lab.set_template("grade", text)
    assert lab.current("grade") == cur
    assert len(lab.versions("grade")) == 1


def test_bad_arguments_name_the_problem(lab: PromptLab, kb: Any) -> None:
    with pytest.raises(TemplateError, match="must be text"):
        lab.set_template("grade", 42)  # type: ignore[arg-type]  # the wrong type is the point
    narrow = PromptLab(lab.rag, RECORDS, roles=["grade"])
    with pytest.raises(ValueError, match="unknown role 'rerank' for this lab; its roles: grade"):
        narrow.template("rerank")
    with pytest.raises(KeyError, match=r"unknown question id\(s\) \['nope'\]"):
        lab.run("grade", ["refund-1", "nope"])
    with pytest.raises(ValueError, match="pick at least one"):
        lab.run("grade", [])
    with pytest.raises(TypeError, match="not one string"):
        lab.run("grade", "refund-1")
    with pytest.raises(TypeError, match="needs a SelfRAG"):
        PromptLab(None, [])  # type: ignore[arg-type]  # the wrong type is the point
    with pytest.raises(ValueError, match="roles must be"):
        PromptLab(sr.SelfRAG(kb), RECORDS, roles=["retrieve"])  # a stage with no model
    with pytest.raises(TypeError, match="not one string"):
        PromptLab(sr.SelfRAG(kb), RECORDS, roles="grade")
    with pytest.raises(ValueError, match="role must be one of this lab's roles"):
        PromptLab(sr.SelfRAG(kb), RECORDS, roles=["grade"], role="verify")
    with pytest.raises(TypeError, match="questions must be"):
        PromptLab(sr.SelfRAG(kb), 42)


def test_failing_question_is_a_visible_row_not_a_lost_run(kb: Any, qs: QuestionSet) -> None:
    m = scripted_model(without=("grade",))  # no scripted grader: the grade call cannot be made
    lab = PromptLab(sr.SelfRAG(kb, model=m), qs)
    run = lab.run("grade", ["refund-1"])
    (row,) = run.rows
    assert row.old.verdict == "error"
    assert "no scripted response left for role 'grade'" in (row.old.error or "")
    assert run.errors == 1
    assert run.agreement_old is None
    assert "error" in run.to_html()


def test_default_subset_is_stratified_and_role_aware() -> None:
    qs = sr.questions("sample")
    kb_less = object.__new__(PromptLab)  # default_ids only needs the question set
    kb_less.questions, kb_less.roles, kb_less.per_category = qs, ("decide", "grade", "verify"), 1
    decide = kb_less.default_ids("decide")
    grade = kb_less.default_ids("grade")
    assert len(decide) == len(qs.categories)
    assert len({qs.get(i).category for i in decide}) == len(decide)
    cats = {qs.get(i).category for i in grade}
    assert "greeting" not in cats
    assert "smalltalk" not in cats
    assert all(qs.get(i).should_retrieve for i in grade)
    assert decide == kb_less.default_ids("decide")  # seeded: the same subset every time


def test_labrun_round_trips_and_tabulates(lab: PromptLab) -> None:
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    run = lab.run("grade", ["refund-1", "ship-1"])
    again = LabRun.model_validate_json(run.to_json())
    assert again == run
    assert again.agreement_new == 1.0
    df = run.to_pandas()
    assert list(df["id"]) == ["refund-1", "ship-1"]
    assert {"old_verdict", "new_verdict", "old_agreement", "new_agreement", "new_cost"} <= set(df.columns)
    bundle = run._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "agreement 50% → 100%" in bundle["text/plain"]


def test_template_edit_travels_over_real_http_to_a_litellm_model(
    kb: Any, qs: QuestionSet, loopback: Any
) -> None:
    """LiteLLM -> loopback OpenAI-compatible server: the edited system prompt
    is what the server receives, and the server's answer flips the grades."""
    from selfrag_nb.testing import default_responder

    def responder(body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        if "relevanceScore" in system and STRICT in system:
            user = str(body["messages"][1]["content"]).lower()
            question = user.split("<question>", 1)[1].split("</question>", 1)[0]
            document = user.split("<document", 1)[1]
            relevant = ("refund" in question) == ("refund" in document)
            return json.dumps({"relevanceScore": 90 if relevant else 10, "isRelevant": relevant})
        return default_responder(body)

    loopback.reply(responder)
    rag = sr.SelfRAG(kb, model="openai/loopback", api_base=loopback.url, api_key="sk-test")
    lab = PromptLab(rag, qs)
    assert not lab.offline
    assert lab.note() == ""
    strict = lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    run = lab.run("grade", ["refund-1", "ship-1"])
    assert run.agreement_old == 0.5
    assert run.agreement_new == 1.0
    sent = [str(r.body["messages"][0]["content"]) for r in loopback.chat_requests() if r.body]
    assert sum(STRICT in s for s in sent) == 4  # two questions x two chunks, candidate side only
    row = run.rows[0]
    assert row.new.prompt_hashes == [strict]
    assert row.new.tokens_in is not None
    assert row.new.tokens_in > 0  # usage from the HTTP body
    # "openai/loopback" has no price: the cost is unknown (None), never a made-up $0.
    assert row.new.cost is None
    assert run.totals()["new"]["cost"] is None
    assert "unknown" in run.to_html()
