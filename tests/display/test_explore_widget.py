"""The explorer's faces: the widget ships rows only until a row is opened;
opening one row gives its trace, two their comparison; the static HTML lists
the first rows (no script, every text escaped); the text face is one line.

Real traces (offline model, real LanceDB; tests/support/explore_fixtures.py);
the widget's synced state is read with ``get_state()``, what a front end receives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from explore_fixtures import access_traces, eval_run, write_folder

import selfrag_nb as sr
from selfrag_nb.display import faces
from selfrag_nb.display.explore_view import STATIC_ROWS
from selfrag_nb.display.explore_widget import ExploreWidget
from selfrag_nb.display.html import view_tree
from selfrag_nb.display.tree import to_json
from selfrag_nb.trace import Trace


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    _, out = eval_run(tmp_path_factory.mktemp("xw-eval"), n=10)
    saved = [Trace.load(p) for p in sorted((out / "traces").rglob("*.json"))]
    return saved + access_traces(tmp_path_factory.mktemp("xw-access"))


def _synced(w: Any) -> str:
    state = w.get_state()
    return json.dumps({k: v for k, v in state.items() if not k.startswith("_")}, ensure_ascii=False)


def _trace_texts(t: Trace) -> list[str]:
    """Texts of a trace that are not its question: answer, chunk texts, prompts, raw outputs."""
    out = [t.answer or ""]
    if t.retrieval is not None:
        out += [h.text for h in t.retrieval.hits]
    for c in t.model_calls:
        out += [m.get("content", "") for m in c.messages] + [c.raw]
    return [s for s in out if len(s) >= 25 and not any(s in x or x in s for x in (t.question,))]


def test_no_trace_text_reaches_the_browser_before_a_row_is_opened(
    traces: list[Trace], tmp_path: Path
) -> None:
    write_folder(tmp_path / "f", traces)
    w = ExploreWidget(sr.explore(tmp_path / "f"))
    state = _synced(w)
    texts = [s for t in traces for s in _trace_texts(t)]
    assert len(texts) > 20
    leaked = [s[:60] for s in texts if s[:60] in state]
    assert not leaked, leaked
    assert w.opened == {}
    # the questions are there: they are the rows
    assert all(t.question[:60] in state for t in traces)
    # a free-text search answers with row numbers only
    w.text = "refund"
    assert set(w.text_hits) == {"text", "rows"}
    assert all(isinstance(i, int) for i in w.text_hits["rows"])
    assert not [s[:60] for s in texts if s[:60] in _synced(w)]


def test_opening_one_row_ships_that_trace_only_and_two_their_comparison(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    w = ExploreWidget(ex)
    i = next(k for k, t in enumerate(traces) if t.outcome == "answered")
    w.selected = [i]
    assert w.opened["kind"] == "trace"
    state = _synced(w)
    assert (traces[i].answer or "")[:60] in state
    others = [
        s[:60]
        for k, t in enumerate(traces)
        if k != i
        for s in _trace_texts(t)
        if s not in _trace_texts(traces[i])
    ]
    assert not [s for s in others if s in state]
    assert ex.selected == [traces[i]]
    assert ex.selection == [i]
    # an opened row is the trace's own full view, the tree every other face shows
    assert w.opened["tree"] == to_json(view_tree(traces[i]))
    w.selected = [i, len(traces) - 1]
    assert w.opened["kind"] == "compare"
    assert '"data-stage"' in json.dumps(w.opened)
    assert [t.question for t in ex.selected] == [traces[i].question, traces[-1].question]
    w.selected = [0, 1, 2]
    assert w.opened["kind"] == "note"
    assert "3 rows selected" in w.opened["title"]
    assert len(ex.selected) == 3
    w.selected = []
    assert w.opened == {}
    assert ex.selected == []


def test_a_row_without_a_saved_trace_opens_a_note_saying_why(tmp_path: Path) -> None:
    _report, out = eval_run(tmp_path, n=2)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "rows.jsonl").write_bytes((out / "rows.jsonl").read_bytes())
    w = ExploreWidget(sr.explore(bare))
    w.selected = [0]
    assert w.opened["kind"] == "note"
    assert "traces=True" in w.opened["note"]


def test_static_face_lists_the_first_rows_escaped_without_script(traces: list[Trace]) -> None:
    hostile = traces[0].model_copy(update={"question": '<script>alert(1)</script> "quoted" \u202eevil'})
    many = [hostile] + [traces[k % len(traces)] for k in range(STATIC_ROWS + 40)]
    ex = sr.explore(many)
    page = faces.html(ex)
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\u202e" not in page
    assert "U+202E" in page
    assert page.count("<tr>") == STATIC_ROWS + 1  # header + the first STATIC_ROWS rows
    assert f"first {STATIC_ROWS:,} of {len(many):,} rows" in page
    text = faces.text(ex)
    assert "\n" not in text
    assert text.startswith(f"Explorer: {len(many):,} trace(s)")
    bundle = ex._repr_mimebundle_()
    assert bundle["text/plain"] == text
    assert bundle["text/html"] == page


def test_the_widget_is_the_registered_view_and_refuses_other_objects(traces: list[Trace]) -> None:
    ex = sr.explore(traces)
    assert isinstance(sr.view(ex), ExploreWidget)
    with pytest.raises(sr.InputTypeError, match="shows an Explorer"):
        ExploreWidget(traces[0])


def test_the_explorer_js_never_parses_data_as_html() -> None:
    from selfrag_nb.display.explore_widget import explore_module

    js = explore_module()  # every file of the widget, as it loads them
    code = "\n".join(line for line in js.splitlines() if not line.lstrip().startswith("//"))
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ):
        assert forbidden not in code, forbidden
    assert "textContent" in code
    assert "https://" not in code
    assert "http://" not in code.replace("http://www.w3.org/2000/svg", "")  # no CDN, no network


def test_a_row_text_holding_a_control_character_arrives_labelled(traces: list[Trace]) -> None:
    """A question with a bidi override reaches the browser as the view tree
    every view draws for it (the control shown as a labelled U+202E span), so
    the widget script never labels controls itself; a plain text stays a string."""
    hostile = traces[0].model_copy(update={"question": "Refund \u202eoverride\u202c window?"})
    w = ExploreWidget(sr.explore([hostile, traces[1]]))
    q = [c["key"] for c in w.columns].index("question")
    value, tree = w.rows[0][q]
    assert value == hostile.question
    labels = [k for k in tree["k"] if isinstance(k, dict)]
    assert [(k["c"], k["k"]) for k in labels] == [("srnb-ctl", ["U+202E"]), ("srnb-ctl", ["U+202C"])]
    assert "\u202e" not in json.dumps(tree, ensure_ascii=False)
    assert isinstance(w.rows[1][q], str)


def test_the_widget_colours_outcomes_as_the_static_face_does(traces: list[Trace]) -> None:
    """One tone table: the widget's outcome column carries it, and each
    outcome's badge in the static face has that tone."""
    ex = sr.explore(traces)
    w = ExploreWidget(ex)
    tones = next(c["tones"] for c in w.columns if c["kind"] == "outcome")
    page = faces.html(ex)
    outcomes = {t.outcome for t in traces}
    assert {"answered", "refused"} <= outcomes
    for outcome in outcomes:
        assert f'<span class="srnb-badge srnb-{tones[outcome]}"><bdi>{outcome}</bdi>' in page, outcome
