from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_docs import SECRET

from selfrag_nb.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_ingest_then_search(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(tmp_path / "kb")
    assert main(["ingest", str(docs_dir), "--kb", kb, "--embedder", "hashing", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "added" in out
    assert "skipped" in out
    assert "embedder hashing" in out
    assert main(["ingest", str(docs_dir), "--kb", kb, "--no-progress"]) == 0
    assert "chunks +0 / -0" in capsys.readouterr().out

    assert main(["search", "digital goods refundable", "--kb", kb, "--k", "2", "--mode", "fts"]) == 0
    out = capsys.readouterr().out
    assert "refund.md" in out
    assert "Exceptions" in out

    assert main(["search", "salary band", "--kb", kb, "--mode", "fts"]) == 0
    assert SECRET not in capsys.readouterr().out
    assert (
        main(["search", "salary band", "--kb", kb, "--user", "h", "--roles", "hr", "--tenant", "acme"]) == 0
    )
    assert "hr/salary.md" in capsys.readouterr().out
    assert main(["search", "salary", "--kb", kb, "--mode", "fts", "--roles", "hr", "--tenant", "acme"]) == 0
    assert "hr/salary.md" in capsys.readouterr().out


def test_roles_override_on_ingest(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(tmp_path / "kb")
    main(
        [
            "ingest",
            str(docs_dir / "shipping.txt"),
            "--kb",
            kb,
            "--embedder",
            "hashing",
            "--roles",
            "staff,ops",
        ]
    )
    capsys.readouterr()
    main(["search", "shipping", "--kb", kb, "--mode", "fts"])
    assert "shipping.txt" not in capsys.readouterr().out
    main(["search", "shipping", "--kb", kb, "--mode", "fts", "--roles", "ops"])
    assert "shipping.txt" in capsys.readouterr().out


def test_bad_input_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--kb", str(tmp_path / "none")]) == 2
    assert "no knowledge base" in capsys.readouterr().out
    assert (
        main(["ingest", str(tmp_path / "missing"), "--kb", str(tmp_path / "kb"), "--embedder", "hashing"])
        == 2
    )
    # The console wraps at its width, and the tmp path's length varies (pytest-xdist
    # adds a popen-gwN folder): the message is read with its line breaks as spaces.
    assert "does not exist" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as exc:
        main(["search", "x", "--kb", "k", "--k", "0"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["search", "x", "--kb", "k", "--mode", "bm25"])


def test_parser_lists_subcommands() -> None:
    helptext = build_parser().format_help()
    for cmd in ("ingest", "search", "eval"):
        assert cmd in helptext


@pytest.mark.slow
def test_runs_as_a_program(docs_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200"}
    kb = str(tmp_path / "kb")
    cmd = [sys.executable, "-m", "selfrag_nb.cli"]
    r = subprocess.run(
        [*cmd, "ingest", str(docs_dir), "--kb", kb, "--embedder", "hashing"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [*cmd, "search", "退款", "--kb", kb, "--mode", "fts"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "zh/退款.md" in r.stdout
