"""The Prompt Lab result table at notebook width, from its rules (static HTML
and the widget's state; the browser test measures the same in chromium):

    - the outputs get the width: one <tbody> per question, the question on a
      full-width row (colspan 2), old and new side by side in a fixed 50/50 layout
    - old vs new is a word diff computed once in Python: <del>/<ins> in the static
      HTML, the same [op, text] parts in the widget state
    - no mid-token breaks: the lab's table cells never use overflow-wrap: anywhere
    - one mark vocabulary: ✓ ◐ ✗ —, the percentage beside the mark
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from display_fixtures import tree_find, tree_text
from prompt_lab_fixtures import RECORDS, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.prompt_lab_html import lab_css
from selfrag_nb.display.prompt_lab_widget import run_view
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import LabRun, PromptLab


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def run(tmp_path: Path) -> LabRun:
    lab = PromptLab(
        sr.SelfRAG(build_kb(tmp_path / "kb"), model=scripted_model()),
        QuestionSet.from_records(RECORDS, name="layout"),
        role="grade",
    )
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT), note="strict")
    return lab.run("grade", ["refund-1", "ship-1"])


def test_question_spans_the_table_and_outputs_share_its_width(run: LabRun) -> None:
    page = run.to_html()
    bodies = re.findall(r"<tbody class=\"srnb-lab-row[^\"]*\">(.*?)</tbody>", page, flags=re.S)
    assert len(bodies) == 2
    for body in bodies:
        assert body.count("<tr>") == 2
        assert 'colspan="2"' in body.split("</tr>")[0]  # the question row
        assert body.count('class="srnb-lab-side ') == 2  # old and new: the only cells of the second row
    css = lab_css()
    assert re.search(r"\.srnb-lab-results\s*\{\s*table-layout:\s*fixed", css)
    assert re.search(r"\.srnb-lab-half\s*\{\s*width:\s*50%", css)


def test_old_and_new_verdicts_carry_a_word_diff_in_both_faces(run: LabRun) -> None:
    row = run.rows[0]
    assert row.changed  # "2/2 relevant: refunds.md, shipping.md" -> "1/2 relevant: refunds.md"
    page = run.to_html()
    assert '<del class="srnb-diff-del">' in page
    assert '<ins class="srnb-diff-ins">' in page
    first = tree_find(run_view(run), "srnb-lab-row")[0]  # the widget's tree
    old = tree_find(tree_find(first, "srnb-lab-old")[0], "srnb-lab-verdict")[0]
    new = tree_find(tree_find(first, "srnb-lab-new")[0], "srnb-lab-verdict")[0]
    assert tree_text(old) == row.old.verdict
    assert tree_text(new) == row.new.verdict
    assert tree_find(old, "srnb-diff-del")
    assert not tree_find(old, "srnb-diff-ins")
    assert tree_find(new, "srnb-diff-ins")
    assert not tree_find(new, "srnb-diff-del")
    assert "shipping.md" in " ".join(tree_text(d) for d in tree_find(old, "srnb-diff-del"))


def test_lab_tables_never_break_inside_a_word() -> None:
    lab_rules = [r for r in re.findall(r"[^{}]*\{[^}]*\}", lab_css()) if "srnb-lab" in r.split("{")[0]]
    assert lab_rules
    assert not [r for r in lab_rules if "anywhere" in r], "a lab rule breaks words anywhere"
    td = [r for r in lab_rules if re.search(r"\.srnb-lab-table td\s*\{", r)]
    assert td
    assert "word-break: normal" in td[0]


def test_one_mark_vocabulary_with_the_percentage_beside_it(run: LabRun) -> None:
    page = run.to_html()
    marks = re.findall(r'class="srnb-lab-mark[^"]*"[^>]*><bdi>([^<]*)</bdi>', page)
    assert len(marks) == 4
    assert set(marks) <= {"✓", "◐", "✗", "—"}
    heads = tree_find(run_view(run), "srnb-lab-side-h")  # the widget's tree
    pairs = [(tree_text(tree_find(x, "srnb-lab-mark")[0]), tree_text(x).rsplit(" ", 1)[-1]) for x in heads]
    assert {m for m, _ in pairs} <= {"✓", "◐", "✗", "—"}
    partly = [s for r in run.rows for s in (r.old, r.new) if 0 < (s.agreement or 0) < 1]
    assert partly
    assert ("◐", "50%") in pairs
    assert '<span class="srnb-lab-score"><bdi>50%</bdi></span>' in page


def test_rows_the_prompt_did_not_reach_stay_greyed_in_the_tbody_layout() -> None:
    # The row class sits on the question's <tbody>: its rule must reach the cells two levels down.
    rule = re.search(r"\.srnb-lab-unused-row([^{]*)\{[^}]*color:\s*var\(--srnb-muted\)", lab_css())
    assert rule is not None
    assert rule.group(1).strip() == "td"
