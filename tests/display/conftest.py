"""Fixtures of tests/display: the traces are built in tests/support/display_fixtures.py (a
uniquely named module, so tests can import its builders directly). The Prompt
Lab widget tests reuse the engine's builders, tests/support/prompt_lab_fixtures.py."""

from __future__ import annotations

import sys
from pathlib import Path

from display_fixtures import (  # noqa: F401 - re-exported as pytest fixtures
    clarify_trace,
    fallback_trace,
    full_trace,
    greeting_trace,
    hits_obj,
    hostile_trace,
    refused_trace,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "lab"))
