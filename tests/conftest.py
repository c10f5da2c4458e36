"""Shared pytest fixtures.

loopback   a started LoopbackServer (real HTTP on 127.0.0.1), stopped after the test

pytest_terminal_summary prints "reliability cases: name: n, ..." from
tests/support/cases.py (a hook only the root conftest can carry). Under
pytest-xdist (`./run test fast` runs with -n) each worker counts its own
cases: it hands them to the controller at its end (workeroutput), and the
controller adds them up before printing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import cases
import pytest
from hypothesis import settings

from selfrag_nb.testing import LoopbackServer

# Anything that imports litellm must not fetch its price map from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Property tests check behaviour, not timings: no per-example deadline (these
# machines are shared and noisy). In CI the examples are derived from the test
# itself, so a red CI is reproducible; developers' runs keep exploring.
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A started ``selfrag_nb.testing.LoopbackServer``; its ``timeout``
    failure stalls 30 s but stopping wakes it, so teardown is immediate."""
    server = LoopbackServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Only a pytest-xdist worker has workeroutput: what it puts there reaches the controller.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["reliability_cases"] = dict(cases.RECORDS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    # pytest-xdist's controller: one worker finished, add its counts.
    for name, n in getattr(node, "workeroutput", {}).get("reliability_cases", {}).items():
        cases.record(name, n)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # The registry every reliability test records into (tests/support/cases.py).
    if cases.RECORDS:
        terminalreporter.write_line(
            "reliability cases: " + ", ".join(f"{name}: {n}" for name, n in sorted(cases.RECORDS.items()))
        )
