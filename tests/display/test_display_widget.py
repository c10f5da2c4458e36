"""The interactive view of a Trace, a record or Hits: one view tree, two faces.

The widget syncs ``to_json`` of the same tree the static page serialises with
``to_html`` (display/html.py builds it once), so what a notebook saved without
widget state shows and what the live widget shows cannot drift. mount.js
itself (textContent only, pager, claim selection) is tested in Chromium
(tests/browser/test_browser_tree.py, test_browser_trace_tree.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from display_fixtures import make_hits, tree_find, tree_text

from selfrag_nb.display import static_html, view
from selfrag_nb.display.html import view_tree
from selfrag_nb.display.tree import to_html, to_json
from selfrag_nb.display.widget import TraceWidget
from selfrag_nb.trace import Retrieval, Trace


def test_the_widget_mounts_the_tree_the_static_page_shows(full_trace: Trace) -> None:
    w = view(full_trace)
    assert isinstance(w, TraceWidget)
    assert w.selected_claim == -1
    assert w.tree == to_json(view_tree(full_trace))
    # the static face is the same tree as HTML: the root, then the trace's cards
    page = static_html(full_trace)
    body = to_html(view_tree(full_trace))
    assert page.split("</style>", 1)[1] == body.split(">", 1)[1]
    assert [n["c"].split()[1] for n in tree_find(w.tree, "srnb-card")] == [
        *(f"srnb-card-{r.stage}" for r in full_trace.records),
        "srnb-card-totals",
    ]
    json.dumps(w.tree)  # JSON-able


def test_claims_in_the_answer_select_their_evidence(full_trace: Trace) -> None:
    tree = view(full_trace).tree
    gen = tree_find(tree, "srnb-card-generate")[0]
    claims = [n for n in tree_find(gen, "srnb-claim") if "data-claim" in n.get("a", {})]
    assert [c["a"]["data-claim"] for c in claims] == [str(i) for i in range(1, 11)]
    evidence = {n["a"]["data-for-claim"]: n for n in tree_find(tree, "srnb-evidence-for")}
    assert set(evidence) == {str(i) for i in range(1, 11)}
    # claim 1's evidence is its span, marked inside the chunk's text
    marks = [tree_text(m) for m in tree_find(evidence["1"], "srnb-mark")]
    assert marks == ["full refund within 30 days of purchase"]


def test_every_record_and_hits_have_a_widget(full_trace: Trace, hits_obj: Any) -> None:
    for rec in full_trace.records:
        w = view(rec)
        assert tree_find(w.tree, f"srnb-card-{rec.stage}"), rec.stage
        assert w.tree["c"].startswith("srnb-root")
    assert len(tree_find(view(hits_obj).tree, "srnb-hit")) == 3


def test_update_replaces_the_tree_and_resets_the_selection(full_trace: Trace) -> None:
    w = view(full_trace.records[0])
    w.selected_claim = 3
    w.update(full_trace)
    assert w.selected_claim == -1
    assert len(tree_find(w.tree, "srnb-card")) == len(full_trace.records) + 1


def test_a_what_if_shows_the_run_before_it_folded_below(full_trace: Trace) -> None:
    what_if = Trace(question=full_trace.question, records=full_trace.records[:1], started_at=0.0)
    w = view(what_if)
    w.update(what_if, baseline=full_trace, what_if="override decide: retrieve=False")
    text = tree_text(w.tree)
    assert text.startswith("current (what-if): override decide: retrieve=False")
    before = tree_find(w.tree, "srnb-compare")
    assert len(before) == 1
    assert before[0]["t"] == "details"
    assert before[0]["a"]["data-key"] == "baseline"  # stays open across the stepper's redraws
    assert len(tree_find(before[0], "srnb-card")) == len(full_trace.records) + 1
    # its folds have their own keys: opening one in the run before opens nothing above
    keys = [n["a"]["data-key"] for n in tree_find(before[0], "srnb-details") if "data-key" in n.get("a", {})][
        1:
    ]
    assert keys
    assert all(k.startswith("before-") for k in keys)


def test_long_lists_are_paged_in_the_widget_and_folded_in_the_static_face() -> None:
    rec = Retrieval(hits=make_hits(45))
    (items,) = tree_find(view(rec).tree, "srnb-items-hits")
    assert items["a"]["data-page"] == "20"
    assert len(items["k"]) == 45
    assert "show 25 more hits" in static_html(rec)


def test_unknown_object_has_no_widget() -> None:
    with pytest.raises(TypeError, match="cannot render"):
        view_tree(object())
