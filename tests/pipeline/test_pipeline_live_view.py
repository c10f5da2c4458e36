"""A stepper's live view follows every stage run, re-run and "what if"."""

from __future__ import annotations

from typing import Any

from helpers_pipeline import script_refund

from selfrag_nb.flow import TITLES

Q = "How many days do I have to request a full refund of a purchase?"


def _stages(widget: Any) -> list[str]:
    """The stage cards the live view shows now, in order (from the tree the browser mounts)."""

    def cards(node: Any) -> list[str]:
        if isinstance(node, str) or node.get("a", {}).get("data-key") == "baseline":
            return []  # the run before a what-if is folded below: not the current trace
        classes = str(node.get("c", "")).split()
        if "srnb-card" in classes:  # a card's own content holds no further stage card
            named = [c.removeprefix("srnb-card-") for c in classes if c.startswith("srnb-card-")]
            return [n for n in named if n in TITLES][:1]  # stage cards, not the totals card
        return [s for k in node.get("k", []) for s in cards(k)]

    return cards(widget.tree)


def test_live_view_updates_after_each_stage_and_rerun(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    live = step.view()
    assert _stages(live) == []
    step.decide()
    assert _stages(live) == ["decide"]
    step.grade()  # runs rewrite and retrieve first
    assert _stages(live) == ["decide", "rewrite", "retrieve", "grade"]
    step.run()
    assert _stages(live)[-1] == "finish"
    # "What if" without retrieval: the records after decide are dropped at once...
    step.override("decide", retrieve=False, reason="what if")
    assert _stages(live) == []
    # ...and the view shows the new run.
    step.run()
    assert _stages(live)[0] == "decide"
    assert "retrieve" not in _stages(live)


def test_dropping_a_chunk_refreshes_the_view(make_rag: Any, scripted: Any) -> None:
    script_refund(scripted)
    step = make_rag().stepper(Q)
    live = step.view()
    step.grade()
    first = step.trace.retrieval.hits[0].chunk_id
    step.drop_chunk(first)
    assert _stages(live) == ["decide", "rewrite", "retrieve"]
