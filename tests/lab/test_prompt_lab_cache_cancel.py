"""Prompt Lab runs cached on disk (re-runs are free across kernel restarts)
and cancelled from outside (no new question starts after a cancel).

Real pipelines throughout: the offline model, a ScriptedModel, LiteLLM against
the loopback server; a "kernel restart" is a fresh Python process."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from prompt_lab_fixtures import RECORDS, STRICT, build_kb, grade, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import PromptLab
from selfrag_nb.promptlab_cache import RunStore, default_run_dir, model_identity

ROOT = Path(__file__).resolve().parents[2]
IDS = ["refund-1", "ship-1", "memo-1"]


@pytest.fixture(autouse=True)
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(root))
    return root


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_cache_kb"))


def _qs() -> QuestionSet:
    return QuestionSet.from_records(RECORDS, name="lab-set")


# ------------------------------------------------------------------ disk cache


_RESTART = """
import json, sys
import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet
sys.path.insert(0, {support!r})
from prompt_lab_fixtures import RECORDS
kb = sr.KnowledgeBase.open({kb!r}, embedder="hashing")
lab = sr.PromptLab(sr.SelfRAG(kb), QuestionSet.from_records(RECORDS, name="lab-set"))
run = lab.run("grade", {ids!r})
print(json.dumps({{"cached": run.cached, "sides": [[r.old.cached, r.new.cached] for r in run.rows],
                  "verdicts": [r.new.verdict for r in run.rows]}}))
"""


@pytest.mark.slow
def test_a_rerun_after_a_kernel_restart_comes_from_the_disk_cache(kb: Any, cache_root: Path) -> None:
    script = _RESTART.format(support=str(ROOT / "tests" / "support"), kb=str(kb.path), ids=IDS)

    def fresh_process() -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
        )
        assert out.returncode == 0, out.stderr[-3000:]
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return result

    first = fresh_process()
    second = fresh_process()
    assert first["cached"] == 0
    assert first["sides"] == [[False, False]] * 3
    # Baseline and candidate are the same version: one side per question, from disk.
    assert second["cached"] == 3
    assert second["sides"] == [[True, True]] * 3
    assert second["verdicts"] == first["verdicts"]
    assert len(list((cache_root / "prompt_lab" / "runs").glob("*/*.json"))) == 3


def test_litellm_rerun_in_a_new_lab_sends_nothing(kb: Any, loopback: Any) -> None:
    def build() -> PromptLab:
        rag = sr.SelfRAG(kb, model="openai/loopback", api_base=loopback.url, api_key="sk-test")
        return PromptLab(rag, _qs())

    lab = build()
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    first = lab.run("grade", ["refund-1", "ship-1"])
    sent = len(loopback.chat_requests())
    assert sent > 0
    assert first.cached == 0

    again = build()  # a new pipeline and lab: nothing in memory
    again.set_template("grade", with_marker(again.template("grade"), STRICT))
    second = again.run("grade", ["refund-1", "ship-1"])
    assert len(loopback.chat_requests()) == sent, "every side came from the disk cache"
    assert second.cached == 4
    assert all(r.old.cached and r.new.cached for r in second.rows)
    assert [r.new.verdict for r in second.rows] == [r.new.verdict for r in first.rows]
    assert "cached" in second.to_html()
    assert "4 of 4 sides cached" in second.to_text()
    # The key is never the place a credential hides.
    files = list(default_run_dir().glob("*/*.json"))
    assert files
    assert all("sk-test" not in f.read_text(encoding="utf-8") for f in files)
    assert "sk-test" not in json.dumps(model_identity(lab.rag.runner.model_for("grade")))


def test_the_key_follows_model_template_and_question(kb: Any) -> None:
    lab = PromptLab(sr.SelfRAG(kb), _qs())
    lab.run("grade", ["refund-1"])
    assert lab.run("grade", ["refund-1"]).cached == 1
    # Another model string: another key.
    loop = PromptLab(sr.SelfRAG(kb, model="openai/other", api_base="http://127.0.0.1:9"), _qs())
    ctx_a, ctx_b = lab._context("grade"), loop._context("grade")
    assert ctx_a["models"]["grade"] != ctx_b["models"]["grade"]
    # Another label on the same question: another key (its score would differ).
    relabelled = [dict(r, relevant=["shipping.md"]) if r["id"] == "refund-1" else r for r in RECORDS]
    other = PromptLab(sr.SelfRAG(kb), QuestionSet.from_records(relabelled, name="lab-set"))
    run = other.run("grade", ["refund-1"])
    assert run.cached == 0
    assert run.rows[0].label == "relevant: shipping.md"


def test_scripted_answers_are_not_served_to_another_model_object(kb: Any) -> None:
    model = scripted_model()
    lab = PromptLab(sr.SelfRAG(kb, model=model), _qs())
    lab.run("grade", ["refund-1"])
    same_model = PromptLab(sr.SelfRAG(kb, model=model), _qs())
    assert same_model.run("grade", ["refund-1"]).cached == 1
    # A ScriptedModel's answers are code, not configuration: another object is never served them.
    fresh = scripted_model()
    run = PromptLab(sr.SelfRAG(kb, model=fresh), _qs()).run("grade", ["refund-1"])
    assert run.cached == 0
    assert fresh.requests_for("grade")


def test_unreadable_cache_file_is_a_miss_and_cache_false_writes_nothing(kb: Any, cache_root: Path) -> None:
    lab = PromptLab(sr.SelfRAG(kb), _qs())
    lab.run("grade", ["refund-1"])
    (f,) = list(default_run_dir().glob("*/*.json"))
    f.write_text("{not json", encoding="utf-8")
    fresh = PromptLab(sr.SelfRAG(kb), _qs())
    run = fresh.run("grade", ["refund-1"])
    assert run.cached == 0
    assert run.rows[0].old.error is None
    assert json.loads(f.read_text(encoding="utf-8"))["verdict"] == run.rows[0].old.verdict  # rewritten

    f.unlink()
    memory_only = PromptLab(sr.SelfRAG(kb), _qs(), cache=False)
    assert memory_only.store is None
    memory_only.run("grade", ["refund-1"])
    assert list(default_run_dir().glob("*/*.json")) == []
    elsewhere = PromptLab(sr.SelfRAG(kb), _qs(), cache=cache_root / "mine")
    elsewhere.run("grade", ["refund-1"])
    assert isinstance(elsewhere.store, RunStore)
    assert len(list((cache_root / "mine").glob("*/*.json"))) == 1
    assert elsewhere.store.clear() == 1


# ------------------------------------------------------------------ cancel


def test_cancel_stops_scheduling_new_questions(kb: Any) -> None:
    model = scripted_model()
    lab = PromptLab(sr.SelfRAG(kb, model=model), _qs(), concurrency=1)
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    asked: list[int] = []

    def on_row(row: Any, done: int, total: int) -> None:
        asked.append(lab.cancel("grade"))

    run = lab.run("grade", IDS, on_row=on_row)
    assert asked[0] == 1  # the running run was asked to stop
    assert run.cancelled
    assert run.planned == 3
    assert [r.id for r in run.rows] == ["refund-1"]
    assert run.progress == "1/3"
    assert "cancelled after 1/3" in run.to_text()
    assert "cancelled after 1/3" in run.to_html()
    # Only the first question reached the model (two chunks, two versions).
    graded = {r.inputs.question for r in model.requests_for("grade")}
    assert graded == {"What is the refund window?"}
    assert not lab.running
    assert lab.cancel() == 0  # nothing left to cancel

    # The next run starts afresh; the finished question comes from the cache.
    rerun = lab.run("grade", IDS)
    assert not rerun.cancelled
    assert [r.id for r in rerun.rows] == IDS
    assert rerun.rows[0].old.cached


def test_cancel_from_another_thread_lets_the_question_in_flight_finish(kb: Any) -> None:
    entered = threading.Event()
    release = threading.Event()

    def slow_grade(request: Any) -> dict[str, Any]:
        entered.set()
        release.wait()  # held until the test has cancelled: no timing involved
        return grade(request)

    model = scripted_model(without=("grade",))
    model.default("grade", slow_grade)
    lab = PromptLab(sr.SelfRAG(kb, model=model), _qs(), concurrency=1)
    result: list[Any] = []
    stop = threading.Event()
    worker = threading.Thread(target=lambda: result.append(lab.run("grade", IDS, cancel=stop)))
    worker.start()
    try:
        assert entered.wait(60)
        assert lab.running
        stop.set()  # the caller's own event works like lab.cancel()
    finally:
        release.set()
    worker.join(120)
    assert not worker.is_alive()
    (run,) = result
    assert run.cancelled
    assert [r.id for r in run.rows] == ["refund-1"]
    assert run.rows[0].old.error is None  # the question in flight finished normally
    assert {r.inputs.question for r in model.requests_for("grade")} == {"What is the refund window?"}


def test_model_identity_leaves_credentials_out() -> None:
    from selfrag_nb.llm.litellm_model import LiteLLMModel

    model = LiteLLMModel(
        "openai/gpt-4o-mini",
        api_base="http://127.0.0.1:9",
        api_key="sk-secret-1",
        extra={"temperature": 0.2, "extra_headers": {"Authorization": "Bearer sk-secret-2"}},
    )
    ident = model_identity(model)
    assert ident["name"] == "openai/gpt-4o-mini"
    assert ident["api_base"] == "http://127.0.0.1:9"
    assert ident["extra"] == {"temperature": "0.2"}  # sampling options change answers: part of the key
    assert "sk-secret" not in json.dumps(ident)
    hotter = LiteLLMModel("openai/gpt-4o-mini", api_base="http://127.0.0.1:9", extra={"temperature": 0.9})
    assert model_identity(hotter) != ident
