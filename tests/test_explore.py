"""sr.explore: rows of many traces, filters, folders, evaluations.

The rules (docs/explorer.md):
  * every filter returns exactly the traces whose field matches; free text
    matches the question or the answer, case-insensitively;
  * a folder of saved traces loads every trace in it and skips each other
    file with its reason; bad input (missing path, empty list, a folder with
    no trace) is an InputError naming it;
  * an evaluation's rows open the traces ``evaluate(traces=True)`` saved; a row
    without one says how to get it.

Real traces: the offline model over real LanceDB knowledge bases
(tests/support/explore_fixtures.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from explore_fixtures import ACCESS_Q, access_traces, eval_run, write_folder

import selfrag_nb as sr
from selfrag_nb.errors import InputError, InputTypeError, PathNotFoundError
from selfrag_nb.trace import Trace


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    return eval_run(tmp_path_factory.mktemp("explore-eval"))


@pytest.fixture(scope="module")
def traces(run: tuple[Any, Path], tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    _, out = run
    saved = [Trace.load(p) for p in sorted((out / "traces").rglob("*.json"))]
    return saved + access_traces(tmp_path_factory.mktemp("explore-access"))


def _truth(t: Trace, field: str) -> Any:
    """A field's value read from the trace itself (not from the explorer's rows)."""
    fin = t.finish
    return {
        "outcome": t.outcome or "",
        "reason_kind": fin.reason_kind if fin else "",
        "user": t.user.id,
        "usefulness": t.usefulness.verdict if t.usefulness else "",
    }[field]


def _questions(ex: Any) -> list[str]:
    return [t.question + "|" + t.user.id for t in ex]


# ---------------------------------------------------------------- filters


@pytest.mark.parametrize("field", ["outcome", "reason_kind", "user", "usefulness"])
def test_each_filter_returns_exactly_the_traces_whose_field_matches(traces: list[Trace], field: str) -> None:
    ex = sr.explore(traces)
    values = {_truth(t, field) for t in traces}
    assert len(values) >= 2, f"the fixture needs variety in {field}: {values}"
    for v in values:
        want = [t.question + "|" + t.user.id for t in traces if _truth(t, field) == v]
        assert _questions(ex.filter(**{field: v})) == want, (field, v)
    # a list is "one of them"; a callable decides
    two = sorted(values)[:2]
    want = [t.question + "|" + t.user.id for t in traces if _truth(t, field) in two]
    assert _questions(ex.filter(**{field: two})) == want
    assert _questions(ex.filter(**{field: lambda x: x == two[0]})) == _questions(ex.filter(**{field: two[0]}))


def test_access_control_refusals_are_found_by_reason_kind(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    refused = ex.filter(reason_kind="no_access")
    assert len(refused) == 1
    (t,) = refused.traces
    assert t.question == ACCESS_Q
    assert t.user.id == "ana"
    assert t.outcome == "refused"
    assert ex.filter(outcome="refused", reason_kind="no_access", user="bo").rows == []


def test_free_text_matches_question_or_answer_case_insensitively(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    for needle in ("REFUND", "refund", "Pro", "days"):
        want = [
            t.question + "|" + t.user.id
            for t in traces
            if needle.casefold() in t.question.casefold() or needle.casefold() in (t.answer or "").casefold()
        ]
        assert want, needle
        assert _questions(ex.filter(text=needle)) == want, needle
    # a word found only in an answer still matches
    t0 = next(t for t in traces if t.answer and t.outcome == "answered")
    word = next(w for w in t0.answer.split() if len(w) > 6 and w.casefold() not in t0.question.casefold())
    assert t0.question in [t.question for t in ex.filter(text=word.upper())]


def test_filters_combine_and_views_filter_again(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    slow = ex.filter(latency_ms=lambda ms: ms > 0, outcome="answered")
    want = [t.question + "|" + t.user.id for t in traces if t.wall_ms > 0 and t.outcome == "answered"]
    assert _questions(slow) == want
    assert _questions(slow.filter(user="bo")) == [w for w in want if w.endswith("|bo")]
    assert sum(ex.counts("outcome").values()) == len(traces)
    df = ex.to_pandas()
    assert len(df) == len(traces)
    assert {
        "question",
        "user",
        "outcome",
        "reason_kind",
        "flags",
        "latency_ms",
        "cost",
        "model_generate",
    } <= set(df.columns)


def test_flags_filter_by_what_the_trace_records(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    want = [
        t.question + "|" + t.user.id
        for t in traces
        if any(r.fallbacks for r in t.records) or any(c.fallback for c in t.model_calls)
    ]
    assert _questions(ex.filter(flag="fallback")) == want


def test_a_typo_in_a_filter_is_an_error_not_an_empty_result(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    with pytest.raises(InputError, match="no_acces"):
        ex.filter(reason_kind="no_acces")
    with pytest.raises(InputError, match="refuse"):
        ex.filter(outcome="refuse")
    with pytest.raises(InputError, match="unknown column 'colour'"):
        ex.filter(colour="red")
    with pytest.raises(InputError, match="injectoin"):
        ex.filter(flag="injectoin")


# ---------------------------------------------------------------- bad input


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError, match="does not exist"):
        sr.explore(tmp_path / "nowhere")
    with pytest.raises(InputError, match="empty"):
        sr.explore([])
    with pytest.raises(InputTypeError, match="item 0 is a str"):
        sr.explore(["not a trace"])
    with pytest.raises(InputTypeError, match="not int"):
        sr.explore(42)
    with pytest.raises(InputError, match="empty"):
        sr.explore(t for t in [])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \.json files"):
        sr.explore(tmp_path / "empty")


def test_a_folder_loads_its_traces_and_skips_other_files_with_the_reason(
    traces: list[Trace], tmp_path: Path
) -> None:
    folder = tmp_path / "traces"
    paths = write_folder(folder, traces)
    (folder / "notes.json").write_text(json.dumps({"hello": "world"}), encoding="utf-8")
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    (folder / "blob.json").write_bytes(b"\xff\xfe\x00garbage")
    (folder / "readme.txt").write_text("not even json", encoding="utf-8")
    ex = sr.explore(folder)
    assert len(ex) == len(traces)
    reasons = {Path(s.path).name: s.reason for s in ex.skipped}
    assert set(reasons) == {"notes.json", "broken.json", "blob.json"}
    assert "not a saved Trace" in reasons["notes.json"]
    assert "question" in reasons["notes.json"]
    assert "not valid JSON" in reasons["broken.json"]
    assert "UTF-8" in reasons["blob.json"] or "not valid JSON" in reasons["blob.json"]
    assert "3 file(s) skipped" in ex.to_text()
    # rows only in memory: each trace is read from its file when asked for
    assert all(ref.trace is None and ref.path is not None for ref in ex._refs)
    for i, p in enumerate(paths):
        assert ex.trace(i).to_json() == Trace.load(p).to_json()
        assert ex.rows[i].path == str(p)
    # one saved trace on its own
    assert sr.explore(paths[0]).trace(0).question == traces[0].question
    with pytest.raises(InputError, match="not a saved Trace"):
        sr.explore(folder / "notes.json")


def test_a_folder_with_no_trace_at_all_is_an_error_naming_why(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"none of 1 \.json file"):
        sr.explore(tmp_path)


def test_a_trace_file_removed_after_loading_is_a_clear_error(traces: list[Trace], tmp_path: Path) -> None:
    paths = write_folder(tmp_path / "t", traces[:2])
    ex = sr.explore(tmp_path / "t")
    paths[1].unlink()
    with pytest.raises(InputError, match="gone"):
        ex.trace(1)
    with pytest.raises(InputError, match="out of range"):
        ex.trace(5)


# ---------------------------------------------------------------- evaluations


def test_an_eval_report_opens_the_traces_it_saved(run: tuple[Any, Path]) -> None:
    report, out = run
    ex = sr.explore(report)
    assert len(ex) == len(report.rows)
    for i, er in enumerate(report.rows):
        row = ex.rows[i]
        assert (row.variant, row.id, row.category, row.outcome) == (
            er.variant,
            er.id,
            er.category,
            er.outcome,
        )
        t = ex.trace(i)
        assert t.question == er.question
        assert t.outcome == er.outcome
    cats = {er.category for er in report.rows}
    for c in cats:
        assert [r.id for r in ex.filter(category=c).rows] == [er.id for er in report.rows if er.category == c]
    # the folder evaluate wrote and its rows.jsonl give the same rows (in the
    # order they finished), the report's JSON the same rows in question order
    for source in (out, out / "rows.jsonl"):
        assert sorted((r.id, r.outcome, r.reason_kind) for r in sr.explore(source).rows) == sorted(
            (r.id, r.outcome, r.reason_kind) for r in ex.rows
        )
    saved = report.save(out / "report.json")
    assert [r.id for r in sr.explore(saved).rows] == [r.id for r in ex.rows]


def test_eval_rows_without_traces_say_how_to_get_them(run: tuple[Any, Path], tmp_path: Path) -> None:
    report, out = run
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "rows.jsonl").write_text((out / "rows.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    ex = sr.explore(bare)
    assert len(ex) == len(report.rows)
    # the row's reason where it names one (a refusal's), the same as its trace says;
    # "" is unknown without the trace (an accepted answer reads as an older row)
    traced = {(r.variant, r.id): r.reason_kind for r in sr.explore(out).rows}
    assert [r.reason_kind for r in ex.rows] == [traced[(r.variant, r.id)] or None for r in ex.rows]
    refused = [r for r in ex.rows if r.outcome == "refused"]
    assert refused
    assert all(r.reason_kind for r in refused)
    kind = refused[0].reason_kind
    assert [r.id for r in ex.filter(reason_kind=kind).rows] == [
        r.id for r in refused if r.reason_kind == kind
    ]
    assert all("no_trace" in r.flags for r in ex.rows)
    assert not ex.has_trace(0)
    with pytest.raises(InputError, match=r"traces=True"):
        ex.trace(0)
    (bare / "rows.jsonl").write_text('{"variant": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"rows.jsonl:1: not an evaluation row"):
        sr.explore(bare)
