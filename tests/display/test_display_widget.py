"""The AnyWidget view: its synced state (Python) and its renderer (trace.js under node).

The JS runs in node against a tiny DOM (js_harness.mjs) whose innerHTML
throws, driven through the AnyWidget model API the way a front end would:
select a claim, page through hits, expand a chunk, replace the data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import build_full_trace, build_hostile_trace, make_hits, run_harness

from selfrag_nb.display import view
from selfrag_nb.display.state import STATE_BUDGET, state_size, widget_state
from selfrag_nb.display.widget import LiveTraceWidget, TraceWidget
from selfrag_nb.trace import Retrieval, Trace

HERE = Path(__file__).parent


def test_widget_state_of_a_full_trace_is_small_and_complete(full_trace: Trace) -> None:
    w = view(full_trace)
    assert isinstance(w, TraceWidget)
    assert w.kind == "trace"
    assert w.selected_claim == -1
    assert w.page == 0
    assert state_size(w.data) <= STATE_BUDGET
    assert [r["stage"] for r in w.data["records"]] == [r.stage for r in full_trace.records]
    assert len(w.data["chunks"]) == 10
    claims = w.data["records"][7]["claims"]
    assert len(claims) == 10
    # offsets precomputed: the JS slices, it never searches
    c0 = claims[0]
    assert full_trace.generation is not None
    assert full_trace.generation.answer[c0["span"][0] : c0["span"][1]] == claims[0]["text"]
    a, b = c0["locs"][0]
    assert w.data["chunks"]["c000"]["text"][a:b] == "full refund within 30 days of purchase"
    json.dumps(w.data)  # JSON-able


def test_widget_files_are_package_local() -> None:
    assert str(TraceWidget._esm).startswith("export") or "render" in str(TraceWidget._esm)
    assert "srnb-root" in str(TraceWidget._css)


def test_update_replaces_the_data_and_resets_the_selection(full_trace: Trace) -> None:
    w = view(full_trace.records[0])
    assert w.kind == "decide"
    w.selected_claim, w.page = 3, 2
    w.update(full_trace)
    assert w.kind == "trace"
    assert w.selected_claim == -1
    assert w.page == 0
    assert len(w.data["records"]) == 9
    assert LiveTraceWidget is TraceWidget


def test_each_record_and_hits_have_a_widget_state(full_trace: Trace, hits_obj: Any) -> None:
    for rec in full_trace.records:
        st = widget_state(rec)
        assert st["kind"] == rec.stage
        assert len(st["records"]) == 1
    st = widget_state(hits_obj)
    assert st["kind"] == "search"
    assert len(st["search"]["hits"]) == 3
    assert len(st["chunks"]) == 3


def test_oversized_state_is_cut_to_the_budget() -> None:
    big = Retrieval(hits=make_hits(100, texts=["x" * 5000]))
    st = widget_state(big)
    assert state_size(st) <= STATE_BUDGET
    assert len(st["chunks"]) == 100
    assert all(len(c["text"]) < 1600 for c in st["chunks"].values())
    # beyond what cutting texts can save, every item is still sent, at the tightest limits
    huge = widget_state(Retrieval(hits=make_hits(300, texts=["x" * 5000])))
    assert all(len(c["text"]) < 600 for c in huge["chunks"].values())


def test_unknown_object_has_no_widget() -> None:
    with pytest.raises(TypeError, match="cannot summarise"):
        widget_state(object())


# ----------------------------------------------------------------- the JS


def _run_js(tmp_path: Path, state: dict[str, Any], actions: list[list[Any]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = run_harness(
        tmp_path, HERE / "js_harness.mjs", "trace.js", ("state", state), ("actions", actions)
    )
    return result


def test_js_renders_every_stage_and_selects_claims(tmp_path: Path) -> None:
    t = build_full_trace()
    steps = _run_js(
        tmp_path,
        widget_state(t),
        [["click_claim_in_answer", 1], ["click_claim_row", 9], ["click_claim_row", 9]],
    )
    first = steps[0]
    assert first["cards"] == [f"srnb-card-{r.stage}" for r in t.records] + ["srnb-card-totals"]
    assert "What is the refund window?" in first["text"]
    assert "cost unknown" in first["text"]
    assert "1.2 s" in first["text"]
    assert first["panel"] == "Select a claim to see the span that supports it."
    verdicts = [c.split()[1] for c in first["claims_in_answer"]]
    assert verdicts.count("srnb-v-supported") == 7
    assert verdicts.count("srnb-v-unsupported") == 2
    # superseded document: flagged in the chart too
    assert "1. ⚠ refund-policy.md" in first["svg_texts"]

    sel = steps[1]
    assert sel["selected"] == 1
    assert sel["saves"] == 1
    assert sel["panel_marks"] == ["original payment method within 5 business days"]
    assert "srnb-selected" in sel["claims_in_answer"][1]

    err = steps[2]
    assert err["selected"] == 9
    assert "does not mention weekend support" in err["panel"]
    assert steps[3]["selected"] == -1  # a second click deselects
    assert steps[-1]["handlers"] == 0  # cleanup removed the listeners


def test_js_names_chunks_of_a_record_shown_alone(tmp_path: Path) -> None:
    rerank = build_full_trace().rerank
    assert rerank is not None
    first = _run_js(tmp_path, widget_state(rerank), [])[0]
    assert first["root_class"] == "srnb-root tex2jax_ignore mathjax_ignore"  # MathJax leaves it alone
    labels = first["chunk_labels"]
    assert labels[0] == "#1 refund-policy.md Refund policy › Refund window ⚠ superseded effective 2024-01-01"
    assert not any(re.search(r"\bc00\d\b", x) for x in labels)  # ids: on hover only
    assert first["chunk_titles"][0] == "refund-policy.md · chunk c000"
    assert "names the exceptions to the refund window" in first["text"]  # the reranker's reason
    assert "2. ⚠ refund-policy.md" in first["svg_texts"]
    # hits: where each search leg put them, not fused scores; the title said once
    full = _run_js(tmp_path, widget_state(build_full_trace()), [])[0]["text"]
    assert (
        "#1refund-policy.mdRefund policy › Refund window ⚠ superseded effective 2024-01-01vector #1 · keywords #2"
        in full
    )


def test_js_shows_the_what_if_and_the_run_before_it(tmp_path: Path) -> None:
    t = build_full_trace()
    what_if = Trace(question=t.question, records=t.records[:1], started_at=0.0)
    state = widget_state(what_if, baseline=t, what_if="override decide: retrieve=False")
    steps = _run_js(tmp_path, state, [["open_details", "before the what-if (the original run)"]])
    assert steps[0]["text"].startswith("current (what-if): override decide: retrieve=False")
    assert steps[0]["cards"] == ["srnb-card-decide", "srnb-card-totals"]  # the run before is folded
    assert len(steps[1]["cards"]) == 2 + len(t.records) + 1  # ... and whole once opened
    assert "disclaimed" in steps[1]["text"]


def test_js_pages_long_lists_and_expands_chunks(tmp_path: Path) -> None:
    hits = make_hits(45)
    t = Trace(question="many hits", started_at=0.0)
    t.append(Retrieval(hits=hits))
    steps = _run_js(tmp_path, widget_state(t), [["open_hit", 0], ["next_page", None], ["next_page", None]])
    assert steps[0]["hits"] == 20
    assert steps[0]["pager"] == ["‹ prevhits 1-20 of 45 · page 1/3next ›"]
    assert hits[0].text not in steps[0]["text"]  # chunks are folded until opened
    assert hits[0].text in steps[1]["text"]
    assert steps[2]["page"] == 1
    assert "hits 21-40 of 45" in steps[2]["pager"][0]
    assert "#21" in steps[2]["text"]
    assert "#1refund" not in steps[2]["text"]
    assert steps[3]["hits"] == 5


def test_js_update_rerenders_with_new_data(tmp_path: Path) -> None:
    t = build_full_trace()
    partial = Trace(question="What is the refund window?", records=t.records[:3], started_at=0.0)
    (tmp_path / "next.json").write_text(json.dumps(widget_state(t)), encoding="utf-8")
    steps = _run_js(tmp_path, widget_state(partial), [["set_data", str(tmp_path / "next.json")]])
    assert len(steps[0]["cards"]) == 4
    assert "in progress" in steps[0]["text"]
    assert len(steps[1]["cards"]) == 10
    assert "disclaimed" in steps[1]["text"]


def test_js_shows_hostile_text_as_text(tmp_path: Path) -> None:
    steps = _run_js(tmp_path, widget_state(build_hostile_trace()), [["click_claim_row", 1]])
    text = steps[0]["text"]
    assert "<script>alert(1)</script>" in text  # visible as characters, never parsed (innerHTML throws)
    assert {"U+202E", "U+200B", "U+2066"} <= set(steps[0]["ctl"])
    assert "\u202e" not in text
    assert steps[1]["selected"] == 1
