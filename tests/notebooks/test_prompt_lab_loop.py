"""The Prompt Lab notebook walks the whole loop with a real model's answers
(SmolLM2's recording, no key, no server): people's labels, the grade and
verify prompts scored against them, an edit that flips verdicts and raises
kappa, and the better version exported. The notebook's own cells run here in
order; what a reader sees printed is asserted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "02_prompt_lab.ipynb"


def test_the_loop_labels_scores_edits_and_exports(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv("SELFRAG_LOCAL_MODEL", raising=False)  # the recording, as in CI
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]]
    code = [c for c, kind in zip(cells, _kinds(), strict=True) if kind == "code"]
    start = next(i for i, c in enumerate(code) if "sr.LocalModel" in c)
    ns: dict[str, Any] = {}
    exec(compile(code[0], "02_prompt_lab.ipynb", "exec"), ns)  # kb, rag, qs (the offline lab)
    for cell in code[start:]:
        exec(compile(cell, "02_prompt_lab.ipynb", "exec"), ns)  # the notebook's own cells
    out = capsys.readouterr().out
    assert "SmolLM2's recorded answers" in out
    labels = ns["labels"]
    assert labels.counts()["chunk"] == 10
    assert labels.counts()["claim"] >= 4
    # the grade edit flips verdicts and raises kappa against people
    assert "grade vs people: agreement 7/10 -> 7/10, kappa 0.00 -> 0.35" in out
    grade_run = ns["grade_run"]
    assert grade_run.human("new").kappa > grade_run.human("old").kappa
    assert any(i.old != i.new for i in grade_run.label_items)
    # the verify prompts are reported as they are: worse than chance against people
    assert "verify vs people: 0/3 -> 1/5, kappa -0.50 -> -0.43" in out
    vo, vn = ns["verify_run"].human("old"), ns["verify_run"].human("new")
    assert vn.kappa is not None
    assert vo.kappa is not None
    assert vo.kappa < 0
    assert vn.kappa < 0
    # raw agreement prefers the packaged prompt; the export is the edit, chosen by kappa
    assert "best by raw agreement: baseline" in out
    assert "Never write 0." in ns["exported"].read_text(encoding="utf-8")


def _kinds() -> list[str]:
    return [c["cell_type"] for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]]
