"""Fixtures of tests/display: the traces are built in display_fixtures.py (a
uniquely named module, so tests can import its builders directly)."""

from __future__ import annotations

from display_fixtures import (  # noqa: F401 - re-exported as pytest fixtures
    clarify_trace,
    fallback_trace,
    full_trace,
    greeting_trace,
    hits_obj,
    hostile_trace,
    refused_trace,
)
