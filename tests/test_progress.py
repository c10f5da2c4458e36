"""Progress bars end on the real final count (selfrag_nb/progress.py), and
ingest counts files and chunk batches instead of a lone "1/1".

A bar that finished between two redraws used to stay at 22/24 in JupyterLab
(the last state was never drawn): the kernel test runs the bar in a real
IPython kernel and reads the display the notebook ends with."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from selfrag_nb.progress import ProgressBar, bar_text
from selfrag_nb.store.kb import KnowledgeBase

ROOT = Path(__file__).resolve().parents[1]


def test_terminal_bar_ends_at_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressBar("eval 2 variant(s) x 12", 24, notebook=False) as bar:
        for i in range(24):
            bar.update(i + 1, 24, f"{i // 10} failing")
    err = capsys.readouterr().err
    assert "24/24" in err
    assert "2 failing" in err
    assert bar.done == bar.total == 24


def test_bar_text_counts_and_shows_hostile_names_inertly() -> None:
    assert bar_text("ingest", 3, 12, "reading a.md").startswith("ingest  ")
    assert "3/12 · reading a.md" in bar_text("ingest", 3, 12, "reading a.md")
    assert "1,200/2,400" in bar_text("x", 1200, 2400)
    assert bar_text("x", 5, None).endswith("5 done")
    bar = ProgressBar("ingest", 2, notebook=False)
    bar.update(1, 2, "reading evil\x1b[2J.md")
    bar.close()
    assert "\x1b" not in bar.text()


def _run_in_kernel(tmp_path: Path, code: str, *, timeout: int) -> list[dict[str, Any]]:
    """``code`` as the one cell of a notebook run by a real kernel; that cell's outputs."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + code)]
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs: list[dict[str, Any]] = nb.cells[0].outputs
    return outputs


@pytest.mark.slow
def test_in_a_kernel_the_last_update_is_drawn(tmp_path: Path) -> None:
    # 24 updates in a few milliseconds: all but the first fall between two
    # redraws, so only an explicit final draw can show 24/24.
    outputs = _run_in_kernel(
        tmp_path,
        "from selfrag_nb.progress import ProgressBar\n"
        "bar = ProgressBar('eval 2 variant(s) x 12', 24)\n"
        "for i in range(24):\n"
        "    bar.update(i + 1, 24, f'{i // 10} failing')\n"
        "bar.close()\n",
        timeout=120,
    )
    shown = [o["data"]["text/plain"] for o in outputs if "data" in o]
    assert len(shown) == 1, outputs  # one display, redrawn in place
    assert "24/24 · " in shown[0]  # then the elapsed time
    assert shown[0].endswith("· 2 failing")


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAlpha is short.\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n\nBeta is short too.\n", encoding="utf-8")
    # Enough paragraphs for several 64-chunk embedding batches at max_chars=60.
    body = "\n\n".join(f"Paragraph {i} of the long file talks about item {i}." for i in range(200))
    (root / "long.md").write_text(f"# Long\n\n{body}\n", encoding="utf-8")
    return root


def test_ingest_counts_files_and_chunk_batches(tmp_path: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", max_chars=60)
    try:
        report = kb.ingest(_folder(tmp_path / "docs"), progress=lambda d, t, m: calls.append((d, t, m)))
    finally:
        kb.close()
    assert report.chunks_added > 128
    reading = [c for c in calls if c[2].startswith("reading")]
    assert [(d, t) for d, t, _ in reading] == [(0, 3), (1, 3), (2, 3)]
    batches = [c for c in calls if c[2].startswith("embedding")]
    assert len(batches) >= 3, calls  # told after every chunk batch, not once
    assert "batch 3" in batches[2][2]
    assert all(t == 3 and 0 <= d <= 3 for d, t, _ in calls)
    done = [d for d, _, m in calls if m.startswith("embedding")]
    assert done == sorted(done)
    last = calls[-1]
    assert last[0] == last[1] == 3, last  # the final count equals the total
    assert last[2].startswith("done · 3 added")


def test_unchanged_files_count_as_done(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "docs")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", max_chars=60)
    try:
        kb.ingest(folder, progress=False)
        (folder / "a.md").write_text("# A\n\nAlpha changed.\n", encoding="utf-8")
        calls: list[tuple[int, int, str]] = []
        kb.ingest(folder, progress=lambda d, t, m: calls.append((d, t, m)))
    finally:
        kb.close()
    embedding = [c for c in calls if c[2].startswith("embedding")]
    # The two unchanged files are done before any embedding starts.
    assert embedding
    assert all(d >= 2 and t == 3 for d, t, _ in embedding)
    assert calls[-1][:2] == (3, 3)
    assert "1 updated" in calls[-1][2]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(not os.environ.get("SELFRAG_NB_CACHE"), reason="needs the shared sample cache")
def test_evaluate_in_a_kernel_ends_at_24_of_24(tmp_path: Path) -> None:
    # evaluate runs on a worker thread in a kernel (its loop is busy): the bar
    # must still reach the cell, and end on the total.
    outputs = _run_in_kernel(
        tmp_path,
        "import selfrag_nb as sr\n"
        "rag = sr.SelfRAG(sr.KnowledgeBase.sample())\n"
        "qs = sr.questions('sample').sample(12, seed=3)\n"
        "report = sr.evaluate(rag, qs, variants={'a': {}, 'b': {'rerank': False}}, concurrency=4)\n",
        timeout=600,
    )
    shown = [o["data"]["text/plain"] for o in outputs if "data" in o]
    assert len(shown) == 1, outputs
    assert "24/24" in shown[0]
