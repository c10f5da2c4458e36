"""Progress a person can watch: the total is known before the first file is
read, a phase change is drawn at once (not swallowed by the redraw throttle),
the line says how long it has run, a first sample build says why it is slow,
and a script run in a terminal shows the bar without asking for it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from selfrag_nb.progress import ProgressBar, bar_text, fmt_elapsed, reporter
from selfrag_nb.store.loaders import load_tree

ROOT = Path(__file__).resolve().parents[1]


def _docs(root: Path, n: int = 3) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"d{i}.md").write_text(f"# Doc {i}\n\nDocument {i} says something short.\n", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.md").write_text("not read", encoding="utf-8")
    return root


def test_the_total_is_known_before_the_first_file_is_read(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    docs, _ = load_tree(_docs(tmp_path / "docs"), on_file=lambda i, n, s: seen.append((i, n, s)))
    assert len(docs) == 3
    assert seen == [(0, 3, "d0.md"), (1, 3, "d1.md"), (2, 3, "d2.md")]


def test_elapsed_time_is_on_the_line() -> None:
    assert fmt_elapsed(4.9) == "4 s"
    assert fmt_elapsed(65) == "1 min 05 s"
    assert (
        bar_text("ingest", 1, 3, "reading a.md", 12.0)
        == f"ingest  {'█' * 8}{'░' * 16} 1/3 · 12 s · reading a.md"
    )


def test_a_new_phase_is_drawn_at_once_in_a_notebook() -> None:
    # A real IPython shell whose display publisher records every draw: the
    # redraw throttle (0.2 s) must not hold back the first update of a phase,
    # or the bar sits on a stale count while a long phase (embedding) runs.
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    with capture_output() as captured:
        bar = ProgressBar("ingest", notebook=True)
        for i in range(3):
            bar.update(i, 3, f"reading d{i}.md")
        bar.update(0, 3, "chunking d0.md")
        bar.update(1, 3, "chunking d1.md")
        bar.update(3, 3, "embedding · batch 1 · 40 chunks")
        drawn = [o.data["text/plain"] for o in captured.outputs]
        bar.close()
    assert drawn[0].startswith("ingest  0 done")
    assert any("0/3 · 0 s · reading d0.md" in d for d in drawn)  # the total, at once
    assert "chunking d0.md" in drawn[-2]
    assert drawn[-1].endswith("3/3 · 0 s · embedding · batch 1 · 40 chunks")
    assert len(drawn) == 4  # within a phase the throttle still holds


def test_a_note_is_shown_above_the_bar() -> None:
    bar = ProgressBar("sample knowledge base", 2, notebook=False, note="First run: embedding 2 documents")
    bar.close()
    assert bar.text().startswith("First run: embedding 2 documents\nsample knowledge base  ")


def test_no_bar_where_nobody_watches(capsys: pytest.CaptureFixture[str]) -> None:
    with reporter(None) as report:  # pytest's stderr is not a terminal, and this is no kernel
        report(1, 2, "reading a.md")
    assert capsys.readouterr().err == ""


def _run_in_terminal(code: str, env: dict[str, str], timeout: float = 240) -> str:
    """Run ``code`` with stdout and stderr on a pseudo-terminal; everything it drew."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; output so far: {out[-2000:]!r}")
    finally:
        proc.wait(timeout=30)
        os.close(master)
    assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
    return out.decode(errors="replace")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        SELFRAG_NB_CACHE=str(tmp_path / "cache"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        COLUMNS="120",
    )
    return env


def test_a_script_in_a_terminal_shows_ingest_progress_by_default(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs")
    code = textwrap.dedent(f"""
        import selfrag_nb as sr
        kb = sr.KnowledgeBase.open({str(tmp_path / "kb")!r}, embedder="hashing")
        rep = kb.ingest({str(docs)!r})
        print("REPORT", len(rep.added))
    """)
    out = _run_in_terminal(code, _env(tmp_path))
    assert "REPORT 3" in out
    assert "ingest" in out
    assert "3/3" in out  # the bar, drawn on stderr without progress=True
    assert "done · 3 added" in out


def test_the_first_sample_build_says_what_it_is_doing(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs")
    code = textwrap.dedent(f"""
        import selfrag_nb as sr
        sr.KnowledgeBase.sample("hashing", docs={str(docs)!r})
        print("BUILT")
        sr.KnowledgeBase.sample("hashing", docs={str(docs)!r})
        print("CACHED")
    """)
    out = _run_in_terminal(code, _env(tmp_path))
    first, _, second = out.partition("BUILT")
    assert "First run: embedding the 3 sample documents with hashing" in " ".join(first.split())
    assert "3/3" in first
    assert "CACHED" in second
    assert "First run" not in second  # a cached sample is quiet
