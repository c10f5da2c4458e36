"""``selfrag-nb tour`` / ``app`` without starting a server (the wheel test starts a real one).

copy_notebooks: new -> copied, same -> unchanged, edited -> kept (said so), bundle dir -> no copy
missing JupyterLab / marimo -> exit 1 naming the extra to install
the server command: this interpreter, the tour notebook, --no-browser / --port, --allow-root as root
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from selfrag_nb import tour
from selfrag_nb.cli import main

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.suffix in (".ipynb", ".py"))


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], Path]]:
    calls: list[tuple[list[str], Path]] = []

    def fake(cmd: Sequence[str], cwd: Path) -> int:
        calls.append((list(cmd), cwd))
        return 0

    monkeypatch.setattr(tour, "launch", fake)
    return calls


def test_copy_never_overwrites_an_edited_copy(tmp_path: Path) -> None:
    first = tour.copy_notebooks(tmp_path / "t")
    assert first.copied == NOTEBOOKS
    assert not first.unchanged
    assert not first.kept
    edited = tmp_path / "t" / "01_tour.ipynb"
    edited.write_text("my notes", encoding="utf-8")
    (tmp_path / "t" / "03_ablation.ipynb").unlink()
    again = tour.copy_notebooks(tmp_path / "t")
    assert again.kept == ["01_tour.ipynb"]
    assert again.copied == ["03_ablation.ipynb"]
    assert set(again.unchanged) == set(NOTEBOOKS) - {"01_tour.ipynb", "03_ablation.ipynb"}
    assert edited.read_text(encoding="utf-8") == "my notes"


def test_the_bundle_folder_itself_is_not_copied_onto(tmp_path: Path) -> None:
    report = tour.copy_notebooks(ROOT / "notebooks")
    assert report.unchanged == NOTEBOOKS
    assert not report.copied


def test_tour_starts_lab_on_the_tour_notebook(
    tmp_path: Path, launched: list[tuple[list[str], Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    if tour.missing_extra("jupyter"):
        pytest.skip("needs the jupyter extra")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "02_prompt_lab.ipynb").write_text("{}", encoding="utf-8")
    assert main(["tour", str(tmp_path / "t"), "--no-browser", "--port", "8123"]) == 0
    out = capsys.readouterr().out
    assert "kept your edited copies" in out
    assert "02_prompt_lab.ipynb" in out
    [(cmd, cwd)] = launched
    assert cwd == tmp_path / "t"
    assert cmd[:4] == [sys.executable, "-m", "jupyterlab", "01_tour.ipynb"]
    assert "--no-browser" in cmd
    assert "--port=8123" in cmd
    import os

    assert ("--allow-root" in cmd) == (os.geteuid() == 0)


@pytest.mark.slow
def test_the_url_jupyterlab_prints_opens_the_tour_notebook(tmp_path: Path) -> None:
    """A real JupyterLab started with the tour's command: the URL it prints
    (the one a newcomer copies) is the tour notebook's, not a bare /lab."""
    import socket
    import subprocess
    import time

    if tour.missing_extra("jupyter"):
        pytest.skip("needs the jupyter extra")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    tour.copy_notebooks(tmp_path / "t")
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            tour.lab_command(no_browser=True, port=port),
            cwd=tmp_path / "t",
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(600):
                if "?token=" in log.read_text(encoding="utf-8") or proc.poll() is not None:
                    break
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    urls = [w for w in log.read_text(encoding="utf-8").split() if w.startswith("http://") and "?token=" in w]
    assert urls, log.read_text(encoding="utf-8")[-2000:]
    assert all(f":{port}/lab/tree/01_tour.ipynb?token=" in u for u in urls), urls


def test_app_runs_marimo(tmp_path: Path, launched: list[tuple[list[str], Path]]) -> None:
    if tour.missing_extra("marimo"):
        pytest.skip("needs the marimo extra")
    assert main(["app", str(tmp_path / "a"), "--no-browser"]) == 0
    [(cmd, cwd)] = launched
    assert cmd == [sys.executable, "-m", "marimo", "run", "selfrag_app.py", "--headless"]
    assert (cwd / "selfrag_app.py").is_file()


@pytest.mark.parametrize("case", [("tour", "jupyterlab", "jupyter"), ("app", "marimo", "marimo")])
def test_missing_server_names_the_extra(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    launched: list[tuple[list[str], Path]],
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, str, str],
) -> None:
    command, module, extra = case
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a)
    )
    assert main([command, str(tmp_path / "t")]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"pip install 'selfrag-nb[{extra}]'" in out
    assert not launched
    assert not (tmp_path / "t").exists()  # fails before copying anything


def test_python_m_selfrag_nb_lists_the_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "selfrag_nb", "--help"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    for command in ("tour", "app", "ask", "ingest"):
        assert command in out


def test_run_tour_sets_up_marimo_too() -> None:
    """``./run tour`` installs the extras the README's commands need: JupyterLab
    for the tour and marimo for ``marimo run notebooks/selfrag_app.py``."""
    import re

    tomllib = pytest.importorskip("tomllib")
    script = (ROOT / "run").read_text(encoding="utf-8")
    tour = script.split("\n  tour)\n", 1)[1].split("\n    ;;", 1)[0]
    extras = re.search(r"^\s*setup (\S+)$", tour, flags=re.M)
    assert extras is not None, tour
    wanted = set(extras.group(1).split(","))
    assert {"jupyter", "marimo"} <= wanted
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert wanted <= set(declared)
    assert any(req.startswith("marimo") for req in declared["marimo"])
