"""Registry of how many cases each reliability test tried.

    test body --record("acl sweep", n)--> RECORDS --tests/conftest.py
    pytest_terminal_summary--> "reliability cases: acl sweep: 1032, ..."

Test modules import it as ``from cases import record``: tests/support is on
pytest's ``pythonpath`` (pyproject.toml), so the import works in every import
mode, and the root conftest imports the same module to print the summary.
"""

from __future__ import annotations

RECORDS: dict[str, int] = {}


def record(name: str, n: int) -> None:
    """Add ``n`` cases under ``name`` (repeated calls accumulate)."""
    if not name:
        raise ValueError("record() needs a non-empty name")
    if n < 0:
        raise ValueError(f"record({name!r}, {n}): a case count cannot be negative")
    RECORDS[name] = RECORDS.get(name, 0) + n
