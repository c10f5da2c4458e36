"""The evaluation report in a real ``marimo run`` app (Debian chromium), light and
dark, at notebook width: the same view tree, mounted by mount.js inside
<marimo-anywidget>, passes the same checks as in JupyterLab.

    app.py (tmp)  sys.path: this checkout first (asserted) + tests/support
                  report = eval_fixtures.browser_report(); report
                  -> EvalReport._display_ -> mo.ui.anywidget(EvalWidget)
    chromium /?access_token=<token>, 1000 px viewport (marimo's medium column)
      -> eval_fixtures.MEASURE / check in light and in dark (data-theme, .dark,
         prefers-color-scheme), a tab click and a header sort work
Screenshots: test-artifacts/browser/marimo-eval-{light,dark}.png
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fixtures import MEASURE, check

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

# conftest.py's server helpers (free_port, wait_http, stop_tree, server_env): it is
# not importable by name under --import-mode=importlib, so it is loaded from its path.
_spec = importlib.util.spec_from_file_location("_browser_conftest", Path(__file__).with_name("conftest.py"))
assert _spec is not None
assert _spec.loader is not None
servers = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = servers  # its dataclasses look their module up
_spec.loader.exec_module(servers)

APP = """
import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import sys
    sys.path[:0] = [{root!r}, {support!r}]
    import selfrag_nb as sr
    assert sr.__file__.startswith({root!r}), sr.__file__
    from eval_fixtures import browser_report
    report = browser_report()
    report
    return


if __name__ == "__main__":
    app.run()
"""


def shoot(page: Any, name: str) -> None:
    """Whole-app screenshot: marimo scrolls inside its own container, so the
    viewport is grown to the app's height instead of using full_page."""
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('*')).map((e) => e.scrollHeight))"
    )
    page.set_viewport_size({"width": size["width"], "height": int(min(max(size["height"], height), 8000))})
    try:
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    finally:
        page.set_viewport_size(size)


@pytest.fixture
def eval_app(tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    app = tmp_path / "app" / "eval_app.py"
    app.parent.mkdir()
    app.write_text(APP.format(root=str(ROOT), support=str(ROOT / "tests" / "support")), encoding="utf-8")
    with servers.run_marimo(app, tmp_path, sample_cache, request) as server:
        yield server.base, server.token


def test_eval_report_in_marimo_light_and_dark(
    eval_app: tuple[str, str], page: Any, page_log: PageLog
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base, token = eval_app
    page.set_viewport_size({"width": 1000, "height": 1000})
    page.goto(f"{base}/?access_token={token}")
    view = page.locator("marimo-anywidget .srnb-ev")
    view.first.wait_for(timeout=180_000)
    view.locator(".srnb-ev-roles tbody tr").first.wait_for()
    assert view.count() == 1
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        page.evaluate("(s) => document.documentElement.setAttribute('data-theme', s)", theme)
        page.evaluate("(s) => document.body.classList.toggle('dark', s === 'dark')", theme)
        page.wait_for_timeout(400)
        check(view.evaluate(MEASURE), "marimo", theme)
        shoot(page, f"marimo-eval-{theme}")
    view.locator(".srnb-tabbar button", has_text="latency").click()
    assert "latency per question (s, lower is better)" in view.locator(".srnb-chart:visible").inner_text()
    assert view.locator("script").count() == 0
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)
