"""The Prompt Lab's read-only panes are built once: the static face and the
widget show the same view tree (display/tree.py).

Rule: each pane (a LabRun's results, with the human-label figures; the
versions table; the header) is one tree; the static HTML is ``to_html`` of it
and the widget's trait holds ``to_json`` of the same tree, which mount.js
builds. So the widget's JSON, serialised to HTML the way tree.to_html does,
is byte for byte the pane in the static page: no second renderer can drift.
Real PromptLab runs (real LanceDB, ScriptedModel), hostile text in the
question and the version note."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from prompt_lab_fixtures import RECORDS, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.tree import Node, to_html
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import PromptLab

HOSTILE = '</td><script>alert(1)</script> \u202eevil\u202c "q" & x=1'


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


def from_json(node: Any) -> Node | str:
    """A widget tree (the JSON mount.js builds: {t, c, a, k}) back as a Node."""
    if isinstance(node, str):
        return node
    assert isinstance(node, dict)
    assert "t" in node, f"not a view tree: {sorted(node)[:8]}"
    kids = tuple(from_json(k) for k in node.get("k", []))
    return Node(node["t"], node.get("c", ""), kids, tuple(node.get("a", {}).items()))


def inner(page: str) -> str:
    """A static page without its root <div> and stylesheet: the panes."""
    assert page.endswith("</div>")
    return page[page.index("</style>") + len("</style>") : -len("</div>")]


@pytest.fixture
def lab(tmp_path: Path) -> PromptLab:
    kb = build_kb(tmp_path / "kb")
    ids = {h.source: h.chunk_id for h in kb.chunks()}
    labels = sr.Labels(tmp_path / "labels.jsonl")  # scored against people: the human block too
    labels.chunk("refund-1", ids["refunds.md"], relevant=True)
    labels.chunk("refund-1", ids["shipping.md"], relevant=False, note="about shipping")
    labels.chunk("ship-1", ids["shipping.md"], relevant=True)
    records = [dict(RECORDS[0], question="Refund? " + HOSTILE), *RECORDS[1:]]
    lab = sr.PromptLab(
        sr.SelfRAG(kb, model=scripted_model()),
        QuestionSet.from_records(records, name="one-tree"),
        labels=labels,
        roles=["grade"],
    )
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT), note="strict " + HOSTILE)
    return lab


def test_a_runs_static_face_and_widget_json_are_one_tree(lab: PromptLab) -> None:
    run = lab.run("grade", ["refund-1", "ship-1", "memo-1"])
    results = lab.widget.results
    assert to_html(from_json(results)) == inner(run.to_html())
    # the pieces the tests of each face pin are in that one tree
    html = to_html(from_json(results))
    for piece in ("srnb-lab-human", "srnb-lab-confusion", "srnb-lab-categories", "srnb-lab-disagreements"):
        assert piece in html
    assert '<del class="srnb-diff-del">' in html
    assert "U+202E" in html
    assert "<script>" not in html


def test_the_versions_pane_is_the_static_versions_table(lab: PromptLab) -> None:
    lab.run("grade", ["refund-1"])
    w = lab.widget
    table = to_html(from_json(w.versions)).split("</div>", 1)[1].removesuffix("</section>")
    assert table.startswith('<table class="srnb-lab-table srnb-lab-versions">')
    assert table in lab.to_html()  # the role's table in the lab's static page, "best" mark and all
    assert "best" in table


def test_the_header_is_a_tree_with_the_roles_model_and_note(tmp_path: Path) -> None:
    offline = sr.PromptLab(sr.SelfRAG(build_kb(tmp_path / "kb2")), RECORDS, roles=["grade"])
    head = to_html(from_json(offline.widget.head))
    assert head.startswith('<section class="srnb-card srnb-lab-head">')
    assert html.escape(offline.note("grade")) in head  # the offline note, as text
    assert f"model <bdi>{html.escape(offline.model_name('grade'))}</bdi>" in head
    assert f"{len(RECORDS)} questions · " in head
