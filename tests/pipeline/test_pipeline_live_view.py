"""A stepper's live view follows every stage run, re-run and "what if"."""

from __future__ import annotations

from typing import Any

from helpers_pipeline import script_refund

Q = "How many days do I have to request a full refund of a purchase?"


def _stages(widget: Any) -> list[str]:
    return [r["stage"] for r in widget.data["records"]]


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
