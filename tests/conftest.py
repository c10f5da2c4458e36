"""Shared pytest fixtures.

loopback   a started LoopbackServer (real HTTP on 127.0.0.1), stopped after the test
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from selfrag_nb.testing import LoopbackServer

# Anything that imports litellm must not fetch its price map from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


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
