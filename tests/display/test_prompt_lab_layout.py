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
from typing import Any

import pytest
from prompt_lab_fixtures import RECORDS, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.prompt_lab_html import lab_css
from selfrag_nb.display.prompt_lab_widget import run_state
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
    state: dict[str, Any] = run_state(run)["rows"][0]
    old, new = state["old"]["parts"], state["new"]["parts"]
    assert "".join(t for _, t in old) == row.old.verdict
    assert "".join(t for _, t in new) == row.new.verdict
    assert {op for op, _ in old} == {"same", "del"}
    assert {op for op, _ in new} == {"same", "ins"}
    assert "shipping.md" in " ".join(t for op, t in old if op == "del")


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
    states = [s for r in run_state(run)["rows"] for s in (r["old"], r["new"])]
    assert {s["mark"] for s in states} <= {"✓", "◐", "✗", "—"}
    partly = [s for s in states if 0 < (s["agreement"] or 0) < 1]
    assert partly
    assert all(s["mark"] == "◐" and s["score"].endswith("%") for s in partly)
    assert '<span class="srnb-lab-score"><bdi>50%</bdi></span>' in page


def test_rows_the_prompt_did_not_reach_stay_greyed_in_the_tbody_layout() -> None:
    # The row class sits on the question's <tbody>: its rule must reach the cells two levels down.
    rule = re.search(r"\.srnb-lab-unused-row([^{]*)\{[^}]*color:\s*var\(--srnb-muted\)", lab_css())
    assert rule is not None
    assert rule.group(1).strip() == "td"
