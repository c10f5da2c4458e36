"""EvalReport views and persistence, regression-sample files and diffs,
calibration suggestion: on hand-built rows (no pipeline needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eval_fixtures import hand_report, hand_row

from selfrag_nb.eval import charts
from selfrag_nb.eval.calibrate import Calibration, _suggest
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.regression import RegressionDiff, failures_to_questions, read_failures, write_failures
from selfrag_nb.eval.report import EvalReport

QS = QuestionSet(
    [
        Question(
            id="a",
            category="factual",
            question="Refund <script>alert(1)</script> window?",
            expected=["answered"],
        ),
        Question(
            id="b",
            category="factual",
            question="SSO providers?",
            expected=["answered"],
            user={"id": "ana", "roles": ["staff"]},
            extra={"difficulty": "hard"},
        ),
        Question(id="c", category="unanswerable", question="CEO's shoe size?", expected=["refused"]),
    ],
    name="hand",
)


def _row(variant: str, qid: str, *, failed: list[str] | None = None, **kw: Any) -> EvalRow:
    return hand_row(QS, variant, qid, failed=failed, **{"evidence": ["doc::0", "doc::1"], **kw})


def _report(rows: list[EvalRow]) -> EvalReport:
    return hand_report(rows, QS)


ROWS = [
    _row("base", "a"),
    _row("base", "b", failed=["outcome"], outcome="refused", wrong_refusal=True),
    _row("base", "c", outcome="refused", correct_refusal=True, outcome_ok=True),
    _row("rr", "a", latency_ms=300.0),
    _row("rr", "b"),
    _row("rr", "c", failed=["outcome", "unsupported"], unsupported_answer=True, cost=None),
]


def test_summary_failures_and_text() -> None:
    rep = _report(ROWS)
    s = rep.summary
    assert list(zip(s["variant"], s["category"], strict=True)) == [
        ("base", "factual"),
        ("base", "unanswerable"),
        ("base", "all"),
        ("rr", "factual"),
        ("rr", "unanswerable"),
        ("rr", "all"),
    ]
    base_all = rep.overall("base")
    assert base_all["wrong_refusals"] == 1
    assert base_all["correct_refusals"] == 1
    assert rep.overall("rr")["cost"] is None
    assert rep.overall("base")["cost"] == pytest.approx(0.003)
    with pytest.raises(ValueError, match="several variants"):
        rep.overall()
    f = rep.failures
    assert list(f["id"]) == ["b", "c"]
    assert list(f["evidence"].iloc[0]) == ["doc::0", "doc::1"]
    assert f["config_version"].iloc[1] == "cfg-rr"
    assert [q.id for q in rep.failures_as_questions()] == ["b", "c"]
    text = rep.to_text()
    assert "2 variant(s) x 3 question(s)" in text
    assert "2 failing row(s)" in text
    assert "base: outcome 0.667" in text
    assert "wrong refusals 1" in text


def test_static_html_is_inert_and_escaped() -> None:
    bundle = _report([_row("base", "a", failed=["outcome"]), *ROWS[1:]])._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    page = bundle["text/html"]
    assert "<script" not in page  # no script in the static view: escaped question text stays text
    assert "Refund &lt;script&gt;alert(1)&lt;/script&gt; window?" in page
    assert "wrong refusals" in page  # column labels with spaces: the header wraps
    assert "cfg-rr" in page
    assert "Failures (3)" in page


def test_saved_html_draws_svg_charts_without_script_and_json_round_trips(tmp_path: Path) -> None:
    rep = _report(ROWS)
    page = rep.save(tmp_path / "report.html").read_text(encoding="utf-8")
    # the report's own view: SVG charts, no plotly.js, no script, opens offline
    assert "<script" not in page
    assert "Plotly" not in page
    assert page.count('<svg class="srnb-svg srnb-chart-svg"') == 3  # outcome accuracy, refusals, latency
    assert rep.to_html() in page
    back = EvalReport.load(rep.save(tmp_path / "report.json"))
    assert [r.model_dump() for r in back.rows] == [r.model_dump() for r in rep.rows]
    assert back.variants == rep.variants
    assert back.k == 5
    assert [q.model_dump() for q in back.questions] == [q.model_dump() for q in QS]
    assert back.summary.equals(rep.summary)
    assert EvalReport.load(rep.to_json()).config_versions == rep.config_versions
    with pytest.raises(ValueError, match="not an EvalReport JSON"):
        EvalReport.load('{"rows": []}')
    with pytest.raises(ValueError, match=r"save writes \.html or \.json"):
        rep.save(tmp_path / "report.txt")


def test_failure_samples_parquet_round_trip(tmp_path: Path) -> None:
    path = write_failures(ROWS, QS, tmp_path / "samples")
    assert path == tmp_path / "samples" / "failures.parquet"
    df = read_failures(tmp_path / "samples")
    assert list(df["id"]) == ["b", "c"]
    assert list(df["failed_checks"].iloc[1]) == ["outcome", "unsupported"]
    assert df["failure_reason"].iloc[0] == "outcome failed"
    again = failures_to_questions(path)
    assert [q.id for q in again] == ["b", "c"]
    assert again.get("b").make_user().roles == ("staff",)
    assert again.get("b").extra == {"difficulty": "hard"}
    empty = write_failures([_row("base", "a")], QS, tmp_path / "none.parquet")
    assert len(read_failures(empty)) == 0
    assert next(iter(read_failures(empty).columns)) == "variant"
    with pytest.raises(FileNotFoundError, match="no regression samples"):
        read_failures(tmp_path / "missing")


def test_failure_samples_keep_the_check_that_ended_each_row(tmp_path: Path) -> None:
    rows = [
        _row("base", "b", failed=["outcome"], outcome="refused", reason_kind="not_answered"),
        _row("rr", "b", failed=["outcome"], outcome="refused", reason_kind="no_evidence"),
    ]
    assert list(_report(rows).failures["reason_kind"]) == ["not_answered", "no_evidence"]
    df = read_failures(write_failures(rows, QS, tmp_path / "new.parquet"))
    assert list(df["reason_kind"]) == ["not_answered", "no_evidence"]
    assert list(df.columns[4:6]) == ["outcome", "reason_kind"]


def test_older_failure_samples_still_read_and_other_files_are_refused(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    path = write_failures(ROWS, QS, tmp_path / "old.parquet")
    # a file written before rows carried reason_kind reads with the column added ("")
    pq.write_table(pq.read_table(path).drop(["reason_kind"]), path)
    df = read_failures(path)
    assert list(df.columns) == list(read_failures(write_failures(ROWS, QS, tmp_path / "n.parquet")).columns)
    assert list(df["reason_kind"]) == ["", ""]
    assert [q.id for q in failures_to_questions(path)] == ["b", "c"]
    # a Parquet file of something else, and a file that is not Parquet: named, refused
    pq.write_table(pq.read_table(path).drop(["question_record", "outcome"]), tmp_path / "other.parquet")
    with pytest.raises(
        ValueError,
        match=r"other\.parquet: not a regression-sample file \(no column outcome, question_record\)",
    ):
        read_failures(tmp_path / "other.parquet")
    (tmp_path / "text.parquet").write_text("id,question\nb,SSO?\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"text\.parquet: not a regression-sample file \(not Parquet"):
        read_failures(tmp_path / "text.parquet")


def test_regression_diff_statuses() -> None:
    after = [
        _row("base", "b"),  # fixed
        _row("rr", "c", failed=["outcome"]),  # still failing (no new check)
        _row("base", "a", failed=["secret"]),  # passed before: broke
        _row("rr", "a", failed=["citation"]),  # broke
        _row("rr", "b"),  # passing before and after
        _row("new", "a"),  # not in the earlier run
    ]
    diff = RegressionDiff(ROWS, after)
    assert [e["id"] for e in diff.fixed] == ["b"]
    assert [(e["variant"], e["id"]) for e in diff.still_failing] == [("rr", "c")]
    assert [(e["variant"], e["id"], e["new_checks"]) for e in diff.broke] == [
        ("base", "a", ["secret"]),
        ("rr", "a", ["citation"]),
    ]
    assert diff.unchanged_passing == 1
    assert diff.not_compared == 1
    t = diff.table
    assert list(t["status"]) == ["broke", "broke", "still failing", "fixed"]
    assert repr(diff) == "RegressionDiff(fixed=1, still_failing=1, broke=2, passing=1)"
    html = diff._repr_mimebundle_()["text/html"]
    assert "<script" not in html
    assert ">2 broke</span>" in html
    # Failing with an extra check counts as broke, not still failing.
    worse = RegressionDiff(
        [_row("v", "a", failed=["outcome"])], [_row("v", "a", failed=["outcome", "secret"])]
    )
    assert len(worse.broke) == 1
    assert not worse.still_failing


def test_calibration_suggestion_rule_and_view() -> None:
    rows = [
        {"value": v, "n": 10, "correct_refusals": cr, "wrong_refusals": wr, "unsupported_answers": ua}
        | {"citation_errors": 0, "outcome_accuracy": 0.5, "score": cr - wr - ua}
        for v, cr, wr, ua in [(30, 1, 0, 4), (40, 3, 0, 1), (50, 3, 1, 0), (60, 4, 2, 0), (70, 4, 3, 0)]
    ]
    assert _suggest(rows, default=50) == 50  # 40, 50 and 60 tie at 2: the default setting wins
    assert _suggest(rows[:2] + rows[3:], default=50) == 40  # tie 40/60 without 50: nearest, lower first
    assert _suggest([rows[0], rows[4]], default=50) == 70
    cal = Calibration(
        "relevance_cutoff",
        rows,
        suggested=50,
        default=50,
        chosen_on={"name": "hand", "path": "", "count": 3, "hash": "abc123"},
    )
    assert list(cal.table["value"]) == [30, 40, 50, 60, 70]
    assert "chosen on 'hand' (3 questions, hash abc123)" in cal.to_text()
    # a tie is said, not hidden: the rule chose among equals
    assert cal.tied == [40, 60]
    assert "suggested 50 (default 50, tied with 40, 60)" in cal.to_text()
    html = cal._repr_mimebundle_()["text/html"]
    assert "<script" not in html
    assert "relevance_cutoff = 50" in html
    fig = cal.chart()
    assert [t.name for t in fig.data] == [
        "correct refusals",
        "wrong refusals",
        "unsupported answers",
        "outcome accuracy",
    ]


def test_charts_build_from_summary() -> None:
    rep = _report(ROWS)
    fig = charts.metric_bars(rep.summary, "outcome_accuracy")
    assert [t.name for t in fig.data] == ["base", "rr"]
    assert list(fig.data[0].x) == ["factual", "unanswerable", "all"]
    with pytest.raises(KeyError, match="unknown metric 'nope'"):
        charts.metric_bars(rep.summary, "nope")
    bars = charts.refusal_bars(rep.summary)
    assert [t.name for t in bars.data] == [
        "correct refusals",
        "wrong refusals",
        "unsupported answers",
        "citation errors",
    ]
    box = charts.latency_box(rep.table)
    assert list(box.data[1].y) == [300.0, 100.0, 100.0]
    frags = charts.figures_html([fig, bars])
    assert len(frags[0]) > 1_000_000 > len(frags[1])  # plotly.js inlined once
