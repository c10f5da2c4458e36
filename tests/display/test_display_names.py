"""Every view names a chunk by its document: file name, heading path (the
title said once), rank and trust flags (superseded, effective, version),
also when a stage record is shown on its own. Scores are drawn on one scale
and coloured by value.

The pipeline part runs a real LanceDB knowledge base (hashing embedder) over
the sample refund policies, a ScriptedModel and a reranker object that gives
reasons, through the Stepper.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import build_full_trace, tree_find, tree_text

from selfrag_nb.display import static_html, view
from selfrag_nb.display.html import css, render_body
from selfrag_nb.display.names import heading_path
from selfrag_nb.stages.rerank import ranking_reasons
from selfrag_nb.trace import Outcome, Support, Trace

ROOT = Path(__file__).resolve().parents[2]
HEX24 = re.compile(r"\b[0-9a-f]{24}\b")


def visible(markup: str) -> str:
    """The text a reader sees: tags (and their attributes, tooltips included) removed."""
    markup = re.sub(r"<title>.*?</title>", "", markup, flags=re.S)
    markup = re.sub(r"<style>.*?</style>", "", markup, flags=re.S)
    return re.sub(r"<[^>]+>", "", markup)


# ------------------------------------------------------------ pure records


def test_heading_path_says_the_title_once() -> None:
    assert heading_path("Refund Policy (2024)", "Refund Policy (2024) > Refund window") == (
        "Refund Policy (2024) › Refund window"
    )
    assert heading_path("Webhooks", "webhooks") == "Webhooks"
    assert heading_path("", "A > B") == "A › B"


def test_records_alone_name_their_chunks_like_the_trace() -> None:
    t = build_full_trace()
    for rec in (t.grades, t.rerank, t.assessment, t.generation, t.support):
        assert rec is not None
        # banners quote model text (a citation error may name an id): labels only
        alone = visible(re.sub(r'<div class="srnb-banner[^"]*">.*?</div>', "", render_body(rec), flags=re.S))
        assert "refund-policy.md" in alone, rec.stage
        assert "⚠ superseded" in alone, rec.stage  # the top hit's document is superseded
        # no bare id as a label: ids are in tooltips and details only
        assert not re.search(r"(?<![\w-])c00\d(?![\w-])", alone), rec.stage


def test_the_rerank_line_says_when_the_top_document_is_superseded() -> None:
    from selfrag_nb.display import text_summary

    rerank = build_full_trace().rerank
    assert rerank is not None
    assert "top refund-policy.md (superseded)" in text_summary(rerank)


def test_old_trace_json_without_refs_loads_and_gets_names() -> None:
    t = build_full_trace()
    data = json.loads(t.to_json())
    for r in data["records"]:
        r.pop("refs", None)
    old = Trace.model_validate(data)
    assert old.rerank is not None
    assert "c000" in old.rerank.refs
    assert old.rerank.refs["c000"].source == "refund-policy.md"
    assert Trace.from_json(t.to_json()) == t  # refs round-trip exactly


def test_confidence_bar_and_outcome_colour_follow_the_value() -> None:
    t = build_full_trace()
    sup = t.support
    assert sup is not None
    low = sup.model_copy(update={"overall_confidence": 19, "recommendation": "ACCEPT"})
    html = render_body(low)
    assert "srnb-fill-irrelevant" in html
    assert "srnb-fill-high" not in html
    answered = Outcome(outcome="answered", answer="x")
    forced = Trace(question="q", records=[*t.records[:-2], low, answered])
    head = static_html(forced).split('<section class="srnb-card')[0]
    assert 'srnb-badge srnb-ok"><bdi>answered' not in head
    assert 'srnb-badge srnb-bad"><bdi>answered' in head
    # the widget mounts the same tree: the same red badge in its header
    assert tree_find(tree_find(view(forced).tree, "srnb-head")[0], "srnb-bad")
    sure = sup.model_copy(
        update={"overall_confidence": 95, "recommendation": "ACCEPT", "is_fully_supported": True}
    )
    ok = Trace(question="q", records=[*t.records[:-2], sure, answered])
    assert tree_find(tree_find(view(ok).tree, "srnb-head")[0], "srnb-ok")


def test_every_grade_row_uses_the_same_fixed_bar_track() -> None:
    rule = next(r for r in css().split("}") if r.startswith(".srnb-grade {"))
    columns = re.search(r"grid-template-columns:([^;]+);", rule)
    assert columns is not None
    bar_col = columns.group(1).split()[0]  # the bar's column: first, fixed
    assert bar_col.endswith("px"), columns.group(1)
    name = next(r for r in css().split("}") if r.startswith(".srnb-grade-name {"))
    assert "grid-column: 1 / -1" in name  # the name has a line of its own


def test_tables_are_left_aligned_against_notebook_styles() -> None:
    rule = re.search(r"\.srnb-root \.srnb-table td \{([^}]*)\}", css())
    assert rule is not None
    assert "text-align: left" in rule.group(1)


def test_reasons_are_read_from_dicts_and_objects_only() -> None:
    class Item:
        def __init__(self, index: int, score: float, reason: str) -> None:
            self.index, self.score, self.reason = index, score, reason

    got = ranking_reasons(
        [{"index": 1, "score": 1.0, "reason": " newer policy "}, (0, 0.5), Item(2, 0.1, "")], 3
    )
    assert got == {1: "newer policy"}


# ------------------------------------------------------- the real pipeline


class ReasonReranker:
    """Puts the candidate that says "current" first and says why."""

    name = "reasons"

    def rank(self, query: str, texts: list[str]) -> list[dict[str, Any]]:
        order = sorted(range(len(texts)), key=lambda i: "Status: current" not in texts[i])
        return [
            {"index": i, "score": float(len(texts) - k), "reason": "current policy" if k == 0 else "older"}
            for k, i in enumerate(order)
        ]


@pytest.fixture(scope="module")
def policy_kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from selfrag_nb.store.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("names_kb")
    docs = root / "docs" / "policies"
    docs.mkdir(parents=True)
    for name in ("refund-policy-2024.md", "refund-policy-2025.md", "sla.md"):
        shutil.copy(ROOT / "sample_data" / "docs" / "policies" / name, docs / name)
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(root / "docs")
    return kb


def _stepper(kb: Any) -> Any:
    import selfrag_nb as sr

    model = sr.ScriptedModel()
    model.default("decide", {"decision": "RETRIEVE", "reason": "policy question"})
    model.default("grade", {"relevanceScore": 85, "isRelevant": True})
    model.default("assess", {"action": "ANSWER", "reason": "the policies state the window"})
    model.default("generate", {"answer": "Within 30 days."})
    rag = sr.SelfRAG(kb, model=model, reranker=ReasonReranker()).with_settings(rewrite=False)
    return rag.stepper("How many days do I have to ask for a refund?")


def test_a_real_rerank_cell_names_documents_flags_and_reasons(policy_kb: Any) -> None:
    step = _stepper(policy_kb)
    ret = step.retrieve()
    assert ret is not None
    assert all(h.ranks for h in ret.hits)  # hybrid: each hit knows its place in each leg
    hits_text = visible(render_body(ret))
    assert "vector #" in hits_text
    assert "keywords #" in hits_text
    assert not re.search(r"hybrid \d", hits_text)  # fused scores are explained in the details only
    rec = step.rerank()
    assert rec is not None
    assert rec.reasons
    first = rec.refs[rec.after[0]]
    assert first.doc.get("status") == "current"
    alone = visible(static_html(rec))
    assert "refund-policy-2024.md" in alone
    assert "refund-policy-2025.md" in alone
    assert "⚠ superseded" in alone
    assert "current policy" in alone
    assert not HEX24.search(alone)
    shown = tree_text(view(rec).tree)  # the widget: the same tree, as text
    assert "refund-policy-2024.md" in shown
    assert "refund-policy-2025.md" in shown
    assert not HEX24.search(shown)


def test_stepper_view_shows_the_what_if_and_the_run_before_it(policy_kb: Any) -> None:
    step = _stepper(policy_kb)
    step.assess()
    view = step.view()
    assert not tree_find(view.tree, "srnb-compare")
    step.override("decide", retrieve=False)
    step.generate()
    (before,) = tree_find(view.tree, "srnb-compare")
    assert [n["c"].split()[1] for n in tree_find(before, "srnb-card")][-2:] == [
        "srnb-card-assess",
        "srnb-card-totals",
    ]
    banner = tree_text(tree_find(view.tree, "srnb-banner-info")[0])
    assert "decide" in banner
    assert "retrieve=False" in banner
    now = [n for n in view.tree["k"] if n is not before and not tree_find(n, "srnb-compare")]
    cards = [n["c"].split()[1] for x in now for n in tree_find(x, "srnb-card")]
    assert cards == ["srnb-card-decide", "srnb-card-generate", "srnb-card-totals"]
    step.clear_override("decide")
    assert not tree_find(view.tree, "srnb-compare")


def test_support_alone_is_a_record_with_refs() -> None:
    sup = build_full_trace().support
    assert isinstance(sup, Support)
    assert set(sup.chunk_ids()) <= set(sup.refs)
