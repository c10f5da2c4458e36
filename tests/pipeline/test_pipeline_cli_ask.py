"""`selfrag-nb ask`: one question from the command line, every stage shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfrag_nb.cli import main


def test_ask_prints_stages_and_writes_trace_and_html(
    kb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace_file = tmp_path / "t.json"
    html_file = tmp_path / "t.html"
    status = main(
        [
            "ask",
            "How many days do I have to request a full refund?",
            "--kb",
            str(kb_dir),
            "--trace",
            str(trace_file),
            "--html",
            str(html_file),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    for stage in ("decide", "retrieve", "grade", "finish"):
        assert stage in out
    data = json.loads(trace_file.read_text(encoding="utf-8"))
    assert data["question"] == "How many days do I have to request a full refund?"
    assert "<script" not in html_file.read_text(encoding="utf-8")


def test_ask_never_shows_what_the_user_may_not_read(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "What is Project Bluefin?", "--kb", str(kb_dir), "--roles", "staff"]) == 0
    assert "Zentrix" not in capsys.readouterr().out


def test_ask_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "   ", "--kb", str(tmp_path / "missing")]) == 2
    assert "selfrag-nb ask:" in capsys.readouterr().out
