"""The evaluation view: EvalWidget's synced state (Python) for reports built
from hand-made rows and from a real run, the display hooks of EvalReport /
Calibration / RegressionDiff, and eval.js under node (eval_js_harness.mjs,
whose DOM throws on innerHTML) for the three modes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import traitlets
from display_fixtures import run_harness

from selfrag_nb.display import WIDGET_MIME
from selfrag_nb.display.eval_widget import (
    KEY_METRICS,
    EvalWidget,
    calibration_state,
    eval_state,
    regression_state,
    report_state,
)
from selfrag_nb.display.js import esm
from selfrag_nb.display.state import STATE_BUDGET, state_size
from selfrag_nb.eval.calibrate import Calibration
from selfrag_nb.eval.charts import VARIANT_PALETTE, latency_box, metric_bars, variant_colours
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.regression import RegressionDiff
from selfrag_nb.eval.report import EvalReport

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
KEYS = [k for k, *_ in KEY_METRICS]

HOSTILE_Q = 'Refund <img src=x onerror="alert(1)"> window\u202e?'
HOSTILE_REASON = "wrong outcome: <script>alert(2)</script> not in [answered]"

QS = QuestionSet(
    [
        Question(id="a", category="factual", question=HOSTILE_Q, expected=["answered"]),
        Question(id="b", category="factual", question="SSO providers?", expected=["answered"]),
        Question(id="c", category="unanswerable", question="CEO's shoe size?", expected=["refused"]),
    ],
    name="hand",
)


def _row(variant: str, qid: str, *, failed: list[str] | None = None, **kw: Any) -> EvalRow:
    q = QS.get(qid)
    failed = failed or []
    base: dict[str, Any] = {
        "variant": variant,
        "id": qid,
        "category": q.category,
        "question": q.question,
        "expected": q.expected,
        "outcome": "answered",
        "outcome_ok": not failed,
        "latency_ms": 100.0,
        "cost": 0.001,
        "model_calls": 3,
        "tokens_in": 100,
        "tokens_out": 20,
        "config_version": f"cfg-{variant}",
        "failed_checks": failed,
        "failure_reason": "; ".join(f"{c} failed" for c in failed) or None,
    }
    return EvalRow(**{**base, **kw})


ROWS = [
    _row(
        "base", "a", failed=["outcome"], outcome="refused", wrong_refusal=True, failure_reason=HOSTILE_REASON
    ),
    _row("base", "b", failed=["outcome"], outcome="refused", wrong_refusal=True),
    _row("base", "c", outcome="refused", correct_refusal=True, outcome_ok=True),
    _row("rr", "a", latency_ms=300.0),
    _row("rr", "b"),
    _row("rr", "c", failed=["outcome", "unsupported"], unsupported_answer=True, cost=None),
]


def _report(rows: list[EvalRow] = ROWS, qs: QuestionSet = QS) -> EvalReport:
    return EvalReport(
        rows,
        variants={"base": {"rerank": False}, "rr": {"rerank": True}},
        config_versions={"base": "cfg-base", "rr": "cfg-rr"},
        questions=qs,
        k=5,
    )


def _calibration(default: int = 50) -> Calibration:
    rows = [
        {
            "value": v,
            "n": 10,
            "correct_refusals": cr,
            "wrong_refusals": wr,
            "unsupported_answers": ua,
            "citation_errors": ce,
            "outcome_accuracy": acc,
            "score": cr - wr - ua,
        }
        for v, cr, wr, ua, ce, acc in (
            (30, 1, 0, 4, 1, 0.5),
            (50, 3, 1, 1, 0, 0.8),
            (70, 4, 3, 0, 0, 0.6),
        )
    ]
    chosen = {"name": "hand <b>set</b>", "path": "", "count": 10, "hash": "abc123def456"}
    return Calibration("relevance_cutoff", rows, suggested=50, default=default, chosen_on=chosen)


def _diff() -> RegressionDiff:
    after = [
        _row("base", "a"),  # fixed
        _row("base", "b", failed=["outcome", "citation"], failure_reason="2 citation error(s)"),  # broke
        _row("base", "c"),  # passing before and after
        _row("rr", "c", failed=["outcome", "unsupported"]),  # still failing
    ]
    return RegressionDiff(ROWS, after)


def _cell(state: dict[str, Any], variant: str, category: str) -> dict[str, Any]:
    return next(r for r in state["summary"] if r["variant"] == variant and r["category"] == category)


def _value(state: dict[str, Any], variant: str, category: str, metric: str) -> Any:
    return _cell(state, variant, category)["values"][KEYS.index(metric)]


# ------------------------------------------------------------------ state


def test_report_state_from_hand_rows() -> None:
    rep = _report()
    st = report_state(rep)
    assert json.loads(json.dumps(st)) == st  # plain JSON, nothing else
    assert st["mode"] == "report"
    assert [m["key"] for m in st["metrics"]] == KEYS
    for key in (
        "outcome_accuracy",
        "decision_accuracy",
        "recall_at_k",
        "mrr",
        "grading_precision",
        "grading_recall",
        "correct_refusals",
        "wrong_refusals",
        "unsupported_answers",
        "citation_errors",
        "must_include_hit_rate",
        "must_not_include_violations",
        "secret_leaks",
        "protected_preservation",
        "latency_p50_ms",
        "latency_p95_ms",
        "tokens_in",
        "cost",
        "model_calls",
    ):
        assert key in KEYS
    assert [v["name"] for v in st["variants"]] == ["base", "rr"]
    assert st["variants"][1] == {
        "name": "rr",
        "overrides": '{"rerank": true}',
        "config": "cfg-rr",
        "colour": VARIANT_PALETTE[1],
    }
    # The latency box of each variant (every hand row took 100 ms).
    assert [(b["variant"], b["n"], b["median"]) for b in st["latency"]] == [
        ("base", 3, 100.0),
        ("rr", 3, 100.0),
    ]
    assert st["categories"] == ["factual", "unanswerable"]
    assert [(r["variant"], r["category"], r["n"]) for r in st["summary"]] == [
        ("base", "factual", 2),
        ("base", "unanswerable", 1),
        ("base", "all", 3),
        ("rr", "factual", 2),
        ("rr", "unanswerable", 1),
        ("rr", "all", 3),
    ]
    # Values are the report's own summary, in KEY_METRICS order.
    for rec in rep.summary_records():
        cell = _cell(st, rec["variant"], rec["category"])
        for key, value in zip(KEYS, cell["values"], strict=True):
            want = rec[key]
            assert value == (pytest.approx(want, rel=1e-3) if isinstance(want, float) else want), key
    assert _value(st, "base", "all", "wrong_refusals") == 2
    assert _value(st, "base", "all", "outcome_accuracy") == pytest.approx(1 / 3, rel=1e-3)
    assert _value(st, "rr", "all", "cost") is None  # unknown price stays unknown (JS shows "unknown")
    assert _value(st, "base", "all", "cost") == pytest.approx(0.003)
    assert _value(st, "rr", "factual", "latency_p95_ms") == pytest.approx(290.0)
    assert _value(st, "base", "all", "recall_at_k") is None  # no relevant labels: n/a, not 0
    # Failures: one entry per failing row, question text sent once per id.
    assert [(f["variant"], f["id"], f["category"]) for f in st["failures"]] == [
        ("base", "a", "factual"),
        ("base", "b", "factual"),
        ("rr", "c", "unanswerable"),
    ]
    first = st["failures"][0]
    assert first["reason"] == HOSTILE_REASON
    assert first["outcome"] == "refused"
    assert first["expected"] == ["answered"]
    assert first["checks"] == ["outcome"]
    assert st["questions"]["a"] == 'Refund <img src=x onerror="alert(1)"> window⟨U+202E⟩?'
    assert set(st["questions"]) == {"a", "b", "c"}
    assert st["failures_total"] == st["failures_shown"] == 3
    assert st["set"] == {"name": "hand", "path": "", "count": 3, "hash": QS.fingerprint}
    assert "calibration" not in st
    assert eval_state(rep) == st


def test_state_stays_under_budget_for_86_questions_x_4_variants() -> None:
    # Worst case: every row fails, questions and reasons far longer than any view shows.
    cats = [f"category-{i:02d}" for i in range(3)]
    qs = QuestionSet(
        [
            Question(
                id=f"q{i:03d}",
                category=cats[i % 3],
                question=f"question {i} " + "长问题 long words " * 400,
                expected=["answered"],
            )
            for i in range(86)
        ],
        name="big",
    )
    variants = ["baseline", "+rewrite", "+rerank", "+rewrite+rerank"]
    rows = [
        EvalRow(
            variant=v,
            id=q.id,
            category=q.category,
            question=q.question,
            expected=["answered"],
            outcome="refused",
            outcome_ok=False,
            wrong_refusal=True,
            failed_checks=["outcome", "retrieval", "must_include"],
            failure_reason="wrong outcome: refused not in [answered]; " + "missing 'x' " * 500,
            latency_ms=float(i),
        )
        for v in variants
        for i, q in enumerate(qs)
    ]
    rep = EvalReport(rows, variants={v: {} for v in variants}, questions=qs)
    st = report_state(rep)
    size = state_size(st)
    assert size <= STATE_BUDGET, size
    assert st["failures_total"] == 344
    assert 0 < st["failures_shown"] < 344  # capped, and the counts say so
    # Every (variant, category) cell keeps some of its failures, none more than the cap.
    shown: dict[tuple[str, str], int] = {}
    for f in st["failures"]:
        shown[(f["variant"], f["category"])] = shown.get((f["variant"], f["category"]), 0) + 1
    assert len(shown) == 4 * 3
    assert max(shown.values()) <= st["per_cell_limit"]
    assert all(len(q) <= st["text_limit"] for q in st["questions"].values())
    assert all(q.endswith("…") for q in st["questions"].values())
    assert all(f["reason"].endswith("…") for f in st["failures"])
    # The summary is never cut: 4 variants x (3 categories + all).
    assert len(st["summary"]) == 4 * 4
    assert _value(st, "+rerank", "all", "failures") == 86


def test_calibration_and_regression_state() -> None:
    cal = _calibration()
    cs = calibration_state(cal)
    assert cs["mode"] == "calibration"
    assert cs["param"] == "relevance_cutoff"
    assert cs["suggested"] == 50
    assert cs["chosen_on"] == {"name": "hand <b>set</b>", "path": "", "count": 10, "hash": "abc123def456"}
    assert cs["columns"][0] == "value"
    assert [r[0] for r in cs["rows"]] == [30, 50, 70]
    assert cs["rows"][1][cs["columns"].index("score")] == 1
    rep = _report()
    rep.calibration = cal
    assert report_state(rep)["calibration"] == cs  # a calibrate() report carries its curve

    rs = regression_state(_diff())
    assert rs["mode"] == "regression"
    assert rs["totals"] == {"broke": 1, "still_failing": 1, "fixed": 1}
    assert rs["passing"] == 1
    assert rs["lists"]["broke"][0]["new_checks"] == ["citation"]
    assert rs["lists"]["fixed"][0]["before"] == HOSTILE_REASON
    assert rs["lists"]["fixed"][0]["question"].startswith("Refund <img")


def test_widget_traits_update_and_errors() -> None:
    rep = _report()
    w = EvalWidget(rep)
    assert w.mode == "report"
    assert w.data == report_state(rep)
    assert w.metric == "outcome_accuracy"
    w.metric = "cost"
    with pytest.raises(traitlets.TraitError, match="unknown metric 'nope'"):
        w.metric = "nope"
    w.cell = ["base", "factual"]
    w.category = "factual"
    w.update(_diff())
    assert (w.mode, w.cell, w.category, w.tab) == ("regression", [], "", "broke")
    assert w.metric == "cost"  # kept across updates
    assert EvalWidget(_calibration()).mode == "calibration"
    with pytest.raises(TypeError, match="not str"):
        EvalWidget("report")


# ------------------------------------------------------------------ display hooks


def test_mimebundle_outside_a_kernel_is_static_html_and_text() -> None:
    for obj in (_report(), _calibration(), _diff()):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}  # no kernel: no widget view
        assert bundle["text/plain"] == obj.to_text()
        assert bundle["text/html"] == obj.to_html()
        assert "<script" not in bundle["text/html"]
        static = obj._display_()  # outside marimo: the static face
        assert static._repr_html_() == obj.to_html()
        assert repr(static) == obj.to_text()


def test_hostile_text_is_escaped_in_the_static_face() -> None:
    page = _report()._repr_mimebundle_()["text/html"]
    assert "<img" not in page
    assert "<script>alert" not in page
    assert "Refund &lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    diff_page = _diff()._repr_mimebundle_()["text/html"]
    assert "<img" not in diff_page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in diff_page
    cal_page = _calibration()._repr_mimebundle_()["text/html"]
    assert "hand &lt;b&gt;set&lt;/b&gt;" in cal_page


def test_js_file_has_no_html_injection_eval_or_network() -> None:
    # The code only: the header comment names what the file avoids (innerHTML, plotly.js).
    src = "\n".join(line for line in esm("eval.js").splitlines() if not line.lstrip().startswith("//"))
    for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert bad not in src, bad
    for bad in ("fetch(", "XMLHttpRequest", "WebSocket", "import(", "<script", "src="):
        assert bad not in src, bad
    # The only URL is the SVG namespace name (an identifier, never requested).
    assert re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'`]*", src) == ["http://www.w3.org/2000/svg"]
    assert "plotly" not in src.lower()


# ------------------------------------------------------------------ the JS under node


def _run_js(tmp_path: Path, traits: dict[str, Any], actions: list[list[Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = run_harness(
        tmp_path, HERE / "eval_js_harness.mjs", "eval.js", ("traits", traits), ("actions", actions)
    )
    assert out[-1] == {"label": "cleanup", "handlers": 0}  # render's cleanup removed every listener
    return out[:-1]


def _traits(obj: object) -> dict[str, Any]:
    w = EvalWidget(obj)
    return {
        "data": w.data,
        "mode": w.mode,
        "metric": w.metric,
        "category": w.category,
        "cell": w.cell,
        "tab": w.tab,
    }


def test_js_report_metric_filter_and_cell_failures(tmp_path: Path) -> None:
    snaps = _run_js(
        tmp_path,
        _traits(_report()),
        [
            ["metric", "cost"],
            ["bar", 0],
            ["category", "unanswerable"],
            ["row", 3],
            ["header", "wrong refusals"],
            ["button", "close"],
        ],
    )
    first, cost, bar, cat, row, header, closed = snaps
    # Initial view: header, legend, both selects, a bar per (variant, category incl. all).
    assert "Evaluation: 2 variant(s) on hand" in first["text"]
    assert first["selects"][0]["value"] == "outcome_accuracy"
    assert first["selects"][0]["options"] == KEYS
    assert first["selects"][1]["options"] == ["", "factual", "unanswerable"]
    assert first["bars"] == 6
    assert first["rows"] == 6
    assert first["header_hl"] == ["outcome accuracy"]
    assert "outcome accuracy (higher is better)" in first["svg_labels"]
    assert "Click a bar or a table row" in first["text"]
    assert first["panel"] is None
    # Hostile question / reason are not in the summary view, but the variant names etc. are text.
    assert first["ctl"] == []
    # Metric select: trait set and saved, chart redrawn for cost; unknown cost reads "unknown".
    assert cost["traits"]["metric"] == "cost"
    assert cost["saves"] == 1
    assert "cost (lower is better)" in cost["svg_labels"]
    assert cost["bars"] == 4  # rr's unanswerable and all have no known cost: "n/a" instead of a bar
    assert "unknown" in cost["text"]
    assert "$0.0030" in cost["text"]
    assert "base · all: $0.0030 (click: failing questions)" in cost["tooltips"]
    # Click the first bar: base x factual -> its two failures with reasons, hostile text as text.
    assert bar["traits"]["cell"] == ["base", "factual"]
    assert bar["selected_bars"] == 1
    assert bar["panel_rows"] == 2
    assert "2 failing of 2 row(s)" in bar["panel"]
    assert 'Refund <img src=x onerror="alert(1)"> window' in bar["panel"]
    assert HOSTILE_REASON in bar["panel"]
    # The bidi override never reaches the browser: it arrives as a visible label.
    assert "window⟨U+202E⟩?" in bar["panel"]
    assert all("\u202e" not in snap["text"] for snap in snaps)
    assert "expected answered" in bar["panel"]
    # Category filter: only that category and "all" remain; the selection stays.
    assert cat["traits"]["category"] == "unanswerable"
    assert cat["rows"] == 4
    assert cat["selects"][1]["value"] == "unanswerable"
    # Row 3 under the filter is rr x all: one failure, with its two failed checks.
    assert row["traits"]["cell"] == ["rr", "all"]
    assert "1 failing of 3 row(s)" in row["panel"]
    assert "CEO's shoe size?" in row["panel"]
    assert "unsupported failed" in row["panel"]
    # Clicking a column header picks that metric.
    assert header["traits"]["metric"] == "wrong_refusals"
    assert header["header_hl"] == ["wrong refusals"]
    assert "wrong refusals (lower is better)" in header["svg_labels"]
    assert closed["traits"]["cell"] == []
    assert closed["panel"] is None


def test_js_calibration_curve_and_regression_lists(tmp_path: Path) -> None:
    (cal,) = _run_js(tmp_path, _traits(_calibration()), [])
    assert "Calibration of relevance_cutoff" in cal["text"]
    assert "suggested relevance_cutoff = 50" in cal["text"]
    assert "chosen onhand <b>set</b> — 10 questions, hash abc123def456" in cal["text"]
    assert len(cal["lines"]) == 4  # correct / wrong refusals, unsupported answers, citation errors
    assert cal["dots"] == 12
    assert "suggested 50" in cal["svg_labels"]
    assert len(cal["suggest_lines"]) == 1
    assert "wrong refusals at 70: 3" in cal["tooltips"]
    assert "default 50" not in cal["svg_labels"]  # default == suggested: one mark only

    snaps = _run_js(tmp_path, _traits(_diff()), [["button", "fixed"], ["button", "still failing"]])
    first, fixed, still = snaps
    assert "1 broke" in first["text"]
    assert "1 fixed" in first["text"]
    assert "1 still failing" in first["text"]
    assert "1 passing before and after" in first["text"]
    assert first["tabs_on"] == ["broke (1)"]
    assert len(first["fail_rows"]) == 1
    assert "citation" in first["fail_rows"][0]
    assert fixed["traits"]["tab"] == "fixed"
    assert HOSTILE_REASON in fixed["fail_rows"][0]
    assert "passes" in fixed["fail_rows"][0]
    assert "window⟨U+202E⟩?" in fixed["fail_rows"][0]
    assert still["tabs_on"] == ["still failing (1)"]
    assert "CEO's shoe size?" in still["fail_rows"][0]


def test_js_report_with_calibration_and_empty_report(tmp_path: Path) -> None:
    rep = _report()
    rep.calibration = _calibration()
    (snap,) = _run_js(tmp_path, _traits(rep), [])
    assert "Calibration of relevance_cutoff" in snap["text"]
    assert snap["bars"] == 6
    assert len(snap["lines"]) == 4
    empty = EvalReport([], variants={"base": {}}, questions=QS)
    (snap,) = _run_js(tmp_path, _traits(empty), [])
    assert "No rows: nothing was evaluated." in snap["text"]


def _fitted_rows() -> list[EvalRow]:
    """Three variants whose outcome accuracy differs by a few points only."""
    rows = []
    for vi, variant in enumerate(("base", "+rewrite", "+rewrite+rerank")):
        for i in range(20):
            ok = i < 16 + vi  # 0.80, 0.85, 0.90
            rows.append(
                _row(
                    variant,
                    "a" if i % 2 else "b",
                    failed=[] if ok else ["outcome"],
                    outcome_ok=ok,
                    latency_ms=100.0 + 10 * i + 50 * vi + (900 if i == 19 else 0),
                )
            )
    return rows


def test_js_colours_axis_ids_and_latency_box(tmp_path: Path) -> None:
    rows = _fitted_rows()
    variants = {
        "base": {},
        "+rewrite": {"rewrite": True},
        "+rewrite+rerank": {"rewrite": True, "rerank": True},
    }
    rep = EvalReport(rows, variants=variants, questions=QS, k=5)
    (snap,) = _run_js(tmp_path, _traits(rep), [])
    colours = variant_colours(list(variants))
    # One colour per variant: the bars, the swatches and the boxes use the mapping the plotly charts use.
    assert dict(snap["bar_fills"]) == colours
    assert [(v, f) for v, f, _ in snap["boxes"]] == list(colours.items())
    fig = metric_bars(rep.summary, "outcome_accuracy")
    assert {t.name: t.marker.color for t in fig.data} == colours
    box = latency_box(rep.table)
    assert {t.name: t.marker.color for t in box.data} == colours
    # The rate axis is fitted to 0.80-0.90 padded by 0.05, not 0-1, and the title says so.
    title = next(lab for lab in snap["svg_labels"] if lab.startswith("outcome accuracy"))
    assert "axis fitted to the data: 0.75 to 0.95, not from 0" in title
    assert fig.layout.yaxis.range == (0.75, 0.95)
    assert "not from 0" in fig.layout.yaxis.title.text
    # The latency box plot: one box per variant, the 1,000+ ms question an outlier.
    assert len(snap["boxes"]) == 3
    assert all(n_out >= 1 for *_, n_out in snap["boxes"])
    assert "latency per question (lower is better)" in snap["svg_labels"]
    # Ids wrap after separators only (<wbr>), and carry the whole id on hover.
    assert snap["wbr"] > 0
    assert "+rewrite+rerank" in snap["id_titles"]
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set(snap["root_classes"])


def test_js_calibration_labels_sit_above_the_curves(tmp_path: Path) -> None:
    (cal,) = _run_js(tmp_path, _traits(_calibration(default=70)), [])
    labels = {text: (y, anchor) for text, y, anchor in cal["mark_labels"]}
    assert set(labels) == {"suggested 50", "default 70"}
    # Both labels are above the highest point of every curve, on different rows.
    assert all(y < cal["plot_top"] - 4 for y, _ in labels.values())
    assert labels["suggested 50"][0] != labels["default 70"][0]
    # Each on the side away from the other.
    assert labels["suggested 50"][1] == "end"
    assert labels["default 70"][1] == "start"


# ------------------------------------------------------------------ a real run


@pytest.fixture(scope="module")
def real_report() -> EvalReport:
    import selfrag_nb as sr

    rag = sr.SelfRAG(sr.KnowledgeBase.sample())
    qs = sr.questions("sample").sample(1, seed=1, per_category=True)
    return sr.evaluate(rag, qs, variants="ablation", progress=False)


@pytest.mark.slow
def test_real_run_state_and_view(real_report: EvalReport, tmp_path: Path) -> None:
    rep = real_report
    st = report_state(rep)
    assert state_size(st) <= STATE_BUDGET
    variants = ["baseline", "+rewrite", "+rerank", "+rewrite+rerank"]
    assert [v["name"] for v in st["variants"]] == variants
    cats = list(rep.questions.categories)
    assert st["categories"] == cats
    assert len(st["summary"]) == len(variants) * (len(cats) + 1)
    failing = [r for r in rep.rows if r.failed_checks]
    assert st["failures_total"] == len(failing)
    assert st["failures_shown"] == len(failing)  # a small run keeps every failure
    assert {f["id"] for f in st["failures"]} == set(st["questions"]) == {r.id for r in failing}
    for rec in rep.summary_records():
        for key, value in zip(KEYS, _cell(st, rec["variant"], rec["category"])["values"], strict=True):
            want = rec[key]
            assert value == (pytest.approx(want, rel=1e-3) if isinstance(want, float) else want)
    assert _value(st, "baseline", "all", "cost") == 0  # the offline model is free, and known to be
    # In the view: click the failing cells of the "all" row per variant.
    first_failing = failing[0]
    row_index = next(
        i
        for i, r in enumerate(st["summary"])
        if r["variant"] == first_failing.variant and r["category"] == first_failing.category
    )
    (initial, clicked) = _run_js(tmp_path, _traits(rep), [["row", row_index]])
    assert initial["bars"] + initial["svg_labels"].count("n/a") == len(st["summary"])
    assert clicked["traits"]["cell"] == [first_failing.variant, first_failing.category]
    in_cell = [
        r for r in failing if (r.variant, r.category) == (first_failing.variant, first_failing.category)
    ]
    assert clicked["panel_rows"] == len(in_cell)
    assert (first_failing.failure_reason or "") in clicked["panel"]


# ------------------------------------------------------------------ inside a kernel


@pytest.mark.slow
def test_inside_a_kernel_the_report_offers_the_widget(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    saved = _report().save(tmp_path / "report.json")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "from selfrag_nb.eval.report import EvalReport\n"
            f"report = EvalReport.load({str(saved)!r})\n"
            "report"
        )
    ]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    data = nb.cells[0].outputs[-1]["data"]
    assert WIDGET_MIME in data, data.keys()
    assert data["text/html"].startswith('<div class="selfrag-eval tex2jax_ignore mathjax_ignore">')
    assert data["text/plain"].startswith("EvalReport: 2 variant(s) x 3 question(s)")
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    ours = [s for s in states.values() if s["state"].get("_anywidget_id", "").endswith("EvalWidget")]
    assert len(ours) == 1
    assert ours[0]["state"]["data"]["mode"] == "report"
    assert ours[0]["state"]["data"]["failures_total"] == 3


MARIMO_APP = """
import marimo

app = marimo.App()


@app.cell
def _():
    import sys
    sys.path.insert(0, {root!r})
    from selfrag_nb.eval.report import EvalReport
    report = EvalReport.load({saved!r})
    report
    return


if __name__ == "__main__":
    app.run()
"""


@pytest.mark.slow
def test_in_marimo_the_report_displays_as_mo_ui_anywidget(tmp_path: Path) -> None:
    pytest.importorskip("marimo")
    saved = _report().save(tmp_path / "report.json")
    app = tmp_path / "app.py"
    app.write_text(MARIMO_APP.format(root=str(ROOT), saved=str(saved)), encoding="utf-8")
    out = tmp_path / "out.html"
    run = subprocess.run(
        [sys.executable, "-m", "marimo", "export", "html", str(app), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    page = out.read_text(encoding="utf-8")
    # _display_ returned mo.ui.anywidget(EvalWidget): marimo embeds its element and the widget id
    assert "marimo-anywidget" in page
    assert "selfrag_nb.display.eval_widget.EvalWidget" in page


def test_static_report_layout_rules() -> None:
    from selfrag_nb.display.eval_html import calibration_html, regression_html, report_html

    long_id = "refunds/zh-hant_policy.v2:section-12#paragraph-7-with-a-very-long-tail"
    rows = [*ROWS, _row("rr", "a", failed=["outcome"], id=long_id)]
    html = report_html(_report(rows))
    # MathJax leaves every root alone ("$0 ... $0" is not math).
    for page in (html, calibration_html(_calibration()), regression_html(_diff())):
        assert re.match(r'<div class="selfrag-eval[^"]* tex2jax_ignore mathjax_ignore">', page), page[:80]
    # Left-aligned cells; every table inside a wrapper that scrolls sideways.
    assert "text-align:left" in html
    assert "text-align:right" not in html
    assert html.count("<table>") == html.count('<div class="tbl"><table>')
    assert "overflow-x:auto" in html
    # The id wraps only after separators and carries the whole id on hover; it is cut with "…".
    assert f'title="{long_id}"' in html
    assert "refunds/<wbr>zh-<wbr>hant_<wbr>policy.<wbr>v2:<wbr>section-<wbr>12#<wbr>" in html
    assert "…" in html
    assert "overflow-wrap:anywhere" not in html
    # Costs read "$0.0010" (one formatter), never "$0.001000".
    assert "$0.0010" in html
    assert "$0.001000" not in html


def test_plotly_calibration_marks_default_above_the_plot_and_fits_accuracy() -> None:
    fig = _calibration(default=70).chart()
    marks = {a.text: a for a in fig.layout.annotations}
    assert {"suggested 50", "default 70"} <= set(marks)
    # Above the plot area (paper y = 1, anchored at the bottom), where no curve runs,
    # and on opposite sides of their lines.
    for a in (marks["suggested 50"], marks["default 70"]):
        assert (a.yref, a.y, a.yanchor) == ("paper", 1.0, "bottom")
    assert marks["suggested 50"].xanchor != marks["default 70"].xanchor
    # Outcome accuracy 0.5 to 0.8: its axis is 0.45 to 0.85, and says it is fitted.
    assert fig.layout.yaxis2.range == (0.45, 0.85)
    assert "not from 0" in fig.layout.yaxis2.title.text


def _compared_report() -> EvalReport:
    # Written from what the rule says: a question is a disagreement when the
    # variants end differently OR keep different evidence; "a" agrees on both,
    # "b" ends differently, "c" ends the same on other evidence.
    role = {"role_tokens_in": {"grade": 40, "generate": 60}, "role_tokens_out": {"grade": 4, "generate": 30}}
    rows = [
        _row("base", "a", kept=["k1"], **role),
        _row("base", "b", kept=["k1"], **role),
        _row("base", "c", outcome="refused", correct_refusal=True, kept=[], **role),
        _row("rr", "a", kept=["k1"], **role),
        _row("rr", "b", outcome="refused", failed=["outcome"], kept=["k1"], **role),
        _row("rr", "c", outcome="refused", correct_refusal=True, kept=["k9"], **role),
    ]
    return _report(rows)


def test_static_report_lists_where_the_variants_disagree_and_each_roles_cost() -> None:
    html = _compared_report().to_html()
    section = html.split("Where the variants disagree (2 of 3 questions)")[1].split("<h4>")[0]
    assert ">b<" in section or 'title="b"' in section
    assert "outcome" in section
    assert "answered · 1 kept" in section
    assert "refused · 1 kept" in section
    assert "kept evidence" in section  # c: same outcome, other evidence
    assert 'title="a"' not in section  # a agrees on both
    roles = html.split("Per model role")[1].split("<h4>")[0]
    assert roles.index(">grade<") < roles.index(">generate<")  # flow order
    assert ">120<" in roles  # grade tokens in: 3 questions x 40


def test_js_report_lists_disagreements_and_roles(tmp_path: Path) -> None:
    snap = _run_js(tmp_path, _traits(_compared_report()), [])[0]
    assert "where the variants disagree: 2 of 3 questions" in snap["text"]
    assert "answered · 1 kept" in snap["text"]
    assert "kept evidence" in snap["text"]
    assert "per model role" in snap["text"]
    one = EvalReport(
        [r for r in ROWS if r.variant == "base"],
        variants={"base": {"rerank": False}},
        config_versions={"base": "cfg-base"},
        questions=QS,
        k=5,
    )
    single = _run_js(tmp_path, _traits(one), [])[0]
    assert "where the variants disagree" not in single["text"]
