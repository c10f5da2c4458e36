"""Fixtures for the real-browser tests: Debian chromium driven by Playwright
against a real JupyterLab server and a real ``marimo run`` server.

    sample_cache (session)   SELFRAG_NB_CACHE with KnowledgeBase.sample() built once,
                             so both servers reuse the same LanceDB folder
    chromium (session)       sync Playwright + /usr/bin/chromium (never `playwright install`)
    page                     a fresh context + page; console errors and page errors
                             collected in ``page_log``; the log is written to
                             test-artifacts/browser/<test>.console.txt
    jupyterlab               `jupyter lab` on 127.0.0.1:<free port> with a token, tmp
                             root and tmp config/data/runtime/settings dirs
    marimo_app               `marimo run notebooks/selfrag_app.py` on 127.0.0.1 with a
                             token password

Every server is a subprocess in its own session; teardown shuts the kernels
down, terminates the server, then kills whatever is left of its process tree
(also when the test failed). Tests skip with a reason only when
/usr/bin/chromium is absent: CI installs it, so there they run.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM_ARGS = [
    "--no-sandbox",  # the CI container runs as root, where the sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 90.0) -> None:
    """Poll ``url`` until it answers 200; fail with the server log if the
    process dies or the deadline passes."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except Exception as exc:
            last = exc
        time.sleep(0.3)
    raise TimeoutError(
        f"{url} did not answer in {timeout} s ({last}):\n{log.read_text(errors='replace')[-4000:]}"
    )


def stop_tree(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """Terminate ``proc``, then kill it and every descendant still alive
    (kernels start in their own session, so a process-group kill misses them)."""
    import psutil

    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        kids = []
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    _, alive = psutil.wait_procs(kids, timeout=5)
    for k in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            k.kill()
    psutil.wait_procs(alive, timeout=5)


def server_env(cache: Path, home: Path) -> dict[str, str]:
    """The servers' environment: no provider key, local LiteLLM price map,
    the shared sample cache, and Jupyter state confined to ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        SELFRAG_NB_CACHE=str(cache),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),  # the venv's kernelspec is still found via sys.prefix
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(home / "ipython"),
        MARIMO_CONFIG_DIR=str(home / "marimo"),
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_CACHE_HOME=str(home / "xdg-cache"),
        XDG_STATE_HOME=str(home / "xdg-state"),
        PYTHONUNBUFFERED="1",
    )
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    # Kernels and marimo import this checkout's package, not whatever the venv
    # was installed from (a worktree's tests must exercise its own code).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


# --------------------------------------------------------------------- session


@pytest.fixture(scope="session")
def sample_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SELFRAG_NB_CACHE with the sample knowledge base already built (the
    first build embeds every sample chunk: slow on two cores, done once)."""
    cache = Path(os.environ["SELFRAG_NB_CACHE"]) if os.environ.get("SELFRAG_NB_CACHE") else None
    if cache is None:
        cache = tmp_path_factory.mktemp("selfrag-cache")
    code = "import selfrag_nb as sr; sr.KnowledgeBase.sample()"
    env = {**os.environ, "SELFRAG_NB_CACHE": str(cache), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # A subprocess: the pytest process stays free of lancedb and the embedder.
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=240)
    return cache


# Module scope, not session: Playwright's sync API keeps an event loop running
# in the main thread while it is started, and the rest of the suite (which
# calls asyncio.run) must not run inside it.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


# ------------------------------------------------------------------ per test


@dataclass
class PageLog:
    """Everything the page said: console messages (all types) and uncaught errors."""

    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [*self.messages, "", "== errors ==", *self.errors]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(chromium: Any, page_log: PageLog, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    pg = context.new_page()

    def on_console(msg: Any) -> None:
        loc = msg.location or {}
        where = f"{loc.get('url', '')}:{loc.get('lineNumber', '')}"
        page_log.messages.append(f"[{msg.type}] {msg.text}  ({where})")
        if msg.type == "error":
            page_log.errors.append(f"console.error: {msg.text}  ({where})")

    pg.on("console", on_console)
    pg.on("pageerror", lambda exc: page_log.errors.append(f"pageerror: {exc}"))
    try:
        yield pg
    finally:
        page_log.write(ARTIFACTS / f"{request.node.name}.console.txt")
        context.close()


# --------------------------------------------------------------------- servers


@dataclass
class Server:
    base: str
    token: str
    root: Path
    log: Path

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        """A notebook of these code cells (unexecuted) in the server's root."""
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"c{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": src,
                }
                for i, src in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = self.root / name
        path.write_text(json.dumps(nb), encoding="utf-8")
        return path

    def api(self, path: str, method: str = "GET") -> Any:
        req = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None


def _lab_settings(settings: Path) -> None:
    """User settings that keep the page quiet and every cell in the DOM."""
    files = {
        # No news / update fetches: no network here, and no toast over the outputs.
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        # Every cell stays rendered, so selectors reach outputs below the fold.
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }
    for rel, value in files.items():
        p = settings / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value), encoding="utf-8")


@pytest.fixture
def jupyterlab(tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    root = tmp_path / "root"
    home = tmp_path / "home"
    root.mkdir()
    for d in ("config", "data", "runtime", "ipython", "settings", "workspaces"):
        (home / d).mkdir(parents=True)
    (home / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"LabApp": {"news_url": None}}), encoding="utf-8"
    )
    _lab_settings(home / "settings")
    port = free_port()
    token = secrets.token_hex(16)
    log = tmp_path / "jupyterlab.log"
    cmd = [
        str(VENV_BIN / "jupyter"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--allow-root",
        "--expose-app-in-browser",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabApp.user_settings_dir={home / 'settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=server_env(sample_cache, home),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", token, root, log)
    try:
        wait_http(server.url("/api/status"), proc, log)
        yield server
    finally:
        try:
            for k in server.api("/api/kernels") or []:
                server.api(f"/api/kernels/{k['id']}", method="DELETE")
        except Exception:
            pass  # the server may already be gone; stop_tree still reaps the kernels
        stop_tree(proc)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{request.node.name}.jupyterlab.log").write_bytes(log.read_bytes())


@contextlib.contextmanager
def run_marimo(
    app: Path, tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest
) -> Iterator[Server]:
    """``marimo run APP`` on 127.0.0.1 (headless, a token, its own home); its
    log lands in test-artifacts when the test ends."""
    home = tmp_path / "home"
    (home / "marimo").mkdir(parents=True, exist_ok=True)
    port = free_port()
    token = secrets.token_hex(16)
    log = tmp_path / "marimo.log"
    cmd = [
        str(VENV_BIN / "marimo"),
        "run",
        str(app),
        "--headless",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--token-password",
        token,
        "--no-sandbox",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=app.parent,
            env=server_env(sample_cache, home),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", token, app.parent, log)
    try:
        wait_http(f"{server.base}/health", proc, log)
        yield server
    finally:
        stop_tree(proc)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{request.node.name}.marimo.log").write_bytes(log.read_bytes())


@pytest.fixture
def marimo_app(tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    root = tmp_path / "app"
    root.mkdir()
    app = root / "selfrag_app.py"
    app.write_bytes((ROOT / "notebooks" / "selfrag_app.py").read_bytes())
    with run_marimo(app, tmp_path, sample_cache, request) as server:
        yield server
