"""evaluate / calibrate / rerun_failures / the CLI against real model calls:
LiteLLM over real HTTP to the loopback server, so latency, tokens and cost
are numbers measured from real calls (a price is registered for the model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.calibrate import calibrate
from selfrag_nb.eval.cli import main as eval_main
from selfrag_nb.eval.questions import Question, QuestionSet, questions
from selfrag_nb.eval.regression import read_failures
from selfrag_nb.eval.runner import evaluate
from selfrag_nb.llm.pricing import register_price, unregister_price
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.testing import LoopbackServer, default_responder, infer_role

MODEL = "openai/loopback-eval"
IN_PRICE, OUT_PRICE = 1e-6, 2e-6


@pytest.fixture(scope="module")
def kb() -> Any:
    # LiteLLM's import takes seconds; done here so no first model call times out on it.
    import litellm  # noqa: F401

    return KnowledgeBase.sample(embedder="hashing")


@pytest.fixture
def priced() -> Iterator[str]:
    register_price(MODEL, input_per_token=IN_PRICE, output_per_token=OUT_PRICE)
    try:
        yield MODEL
    finally:
        unregister_price(MODEL)


def _rag(kb: Any, server: LoopbackServer) -> Any:
    return sr.SelfRAG(
        kb, model=MODEL, api_base=server.url, api_key="sk-loopback-test", timeout=5, deadline=30
    )


def _factual(n: int) -> QuestionSet:
    qs = questions("sample")
    return qs.filter(category=["factual", "version"])[:n]


def test_latency_tokens_and_cost_are_measured(
    kb: Any, loopback: LoopbackServer, priced: str, tmp_path: Path
) -> None:
    loopback.latency = 0.01
    qs = _factual(4)
    report = evaluate(_rag(kb, loopback), qs, concurrency=4, out=tmp_path, progress=False)
    assert len(report.rows) == 4
    assert all(r.error is None for r in report.rows), [r.error for r in report.rows]
    for r in report.rows:
        assert r.model_calls > 0
        assert r.tokens_in > 0
        assert r.tokens_out > 0
        # Every call is priced, so the row's cost is the registered price times its tokens.
        assert r.cost == pytest.approx(r.tokens_in * IN_PRICE + r.tokens_out * OUT_PRICE)
        assert r.latency_ms >= 10  # at least one 10 ms loopback call
    s = report.overall()
    assert s["cost"] == pytest.approx(sum(r.cost or 0 for r in report.rows))
    assert 0 < s["latency_p50_ms"] <= s["latency_p95_ms"]
    # A recorded call may have made a repair request too: never more records than requests.
    assert 0 < s["model_calls"] <= len(loopback.chat_requests())
    # The loopback model retrieves and answers every factual question.
    assert s["decision_accuracy"] == 1.0


def test_server_faults_never_lose_a_row(
    kb: Any, loopback: LoopbackServer, priced: str, tmp_path: Path
) -> None:
    loopback.fail("500", times=3)
    loopback.fail("malformed", times=2)
    loopback.fail("429", times=1, retry_after=0.05)
    qs = _factual(4)
    report = evaluate(_rag(kb, loopback), qs, concurrency=4, out=tmp_path, progress=False)
    assert [r.id for r in report.rows] == [q.id for q in qs]
    assert all(r.outcome is not None or r.error is not None for r in report.rows)
    assert len((tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()) == 4


def _middling_grades() -> Any:
    """A grader whose scores sit between 40 and 70 (deterministic per
    request): the relevance cutoff decides what is kept."""

    def respond(body: dict[str, Any]) -> str:
        if infer_role(body) == "grade":
            text = json.dumps(body.get("messages", []))
            score = 40 + (sum(map(ord, text)) % 31)
            return json.dumps({"relevanceScore": score, "isRelevant": True, "keyInfo": "", "gaps": ""})
        return default_responder(body)

    return respond


def test_calibrate_sweeps_a_threshold(kb: Any, loopback: LoopbackServer, priced: str, tmp_path: Path) -> None:
    loopback.reply(_middling_grades())
    qs = QuestionSet(
        [*_factual(2), *questions("sample").filter(category="unanswerable")[:2]],
        name="calib",
    )
    cal = calibrate(_rag(kb, loopback), qs, "relevance_cutoff", [30, 90], out=tmp_path, progress=False)
    t = cal.table
    # the default (50) is measured too: a suggestion is a comparison with what runs today
    assert list(t["value"]) == [30, 50, 90]
    assert list(t["n"]) == [4, 4, 4]
    # At 90 no chunk passes, so the pipeline refuses more than at 30.
    # At 30 every chunk is kept: all four answered, the two unanswerable ones unsupported.
    # At 90 none is: all four refused, two correctly and two wrongly.
    assert t[["correct_refusals", "wrong_refusals", "unsupported_answers"]].values.tolist() == [
        [0, 0, 2],
        [0, 0, 2],
        [2, 2, 0],
    ]
    assert list(t["score"]) == [-2, -2, 0]
    assert cal.suggested == 90
    assert cal.tied == []
    assert cal.chosen_on == qs.describe()
    # relevance_cutoff 90 > high_relevance 80: the partner setting moved with it.
    assert cal.report is not None
    assert cal.report.variants["relevance_cutoff=90"]["high_relevance"] == 90
    assert cal.report.calibration is cal
    page = cal.save(tmp_path / "cal.html").read_text(encoding="utf-8")
    assert "Calibration of relevance_cutoff" in page
    assert "chosen on" in page.lower()
    with pytest.raises(ValueError, match="cannot calibrate 'timeout'"):
        calibrate(_rag(kb, loopback), qs, "timeout", [1])


def test_rerun_failures_reports_fixed(kb: Any, loopback: LoopbackServer, priced: str, tmp_path: Path) -> None:
    # First configuration: the verifier rejects everything -> answers are not accepted.
    def harsh(body: dict[str, Any]) -> str:
        if infer_role(body) == "assess":
            return json.dumps({"action": "REFUSE", "reason": "scripted refusal"})
        return default_responder(body)

    loopback.reply(harsh)
    qs = QuestionSet(
        [
            Question(
                id="w1",
                category="factual",
                question="How many times is a failed webhook delivery retried?",
                should_retrieve=True,
                expected=["answered", "disclaimed", "regenerated"],
            )
        ],
        name="rerun",
    )
    before = evaluate(_rag(kb, loopback), qs, out=tmp_path / "before", progress=False)
    assert before.rows[0].wrong_refusal
    assert "wrong outcome: refused" in (before.rows[0].failure_reason or "")
    assert list(read_failures(tmp_path / "before")["id"]) == ["w1"]
    loopback.reply(None)  # the fixed configuration: the default, accepting responder
    diff = before.rerun_failures(_rag(kb, loopback), out=tmp_path / "after", progress=False)
    assert [e["id"] for e in diff.fixed] == ["w1"]
    assert not diff.broke


@pytest.mark.usefixtures("priced")
def test_cli_eval_writes_a_report(
    kb: Any,
    loopback: LoopbackServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")  # keys come from the environment, never argv
    qfile = _factual(2).save(tmp_path / "two.jsonl")
    out = tmp_path / "report.html"
    status = eval_main(
        [
            "eval",
            "--questions",
            str(qfile),
            "--variants",
            '{"plain": {"rewrite": false}}',
            "--out",
            str(out),
            "--kb",
            str(kb.path),
            "--embedder",
            "hashing",
            "--model",
            MODEL,
            "--api-base",
            loopback.url,
            "--concurrency",
            "2",
            "--rows",
            str(tmp_path / "rows"),
            "--no-progress",
        ]
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert "1 variant(s) x 2 question(s)" in printed
    assert f"report: {out}" in printed
    assert out.is_file()
    assert '<svg class="srnb-svg srnb-chart-svg"' in out.read_text(encoding="utf-8")  # the view's SVG charts
    assert (tmp_path / "rows" / "rows.jsonl").is_file()
    assert eval_main(["eval", "--questions", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 2
    assert "question set not found" in capsys.readouterr().err
    # The same subcommand through the top-level selfrag-nb parser.
    from selfrag_nb.cli import main as cli_main

    assert cli_main(["eval", "--variants", "nope", "--out", str(out)]) == 2
    assert "unknown variant preset 'nope'" in capsys.readouterr().err
