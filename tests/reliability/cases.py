"""Registry of how many cases each reliability test tried.

    test body --record("acl sweep", n)--> RECORDS --tests/conftest.py
    pytest_terminal_summary--> "reliability cases: acl sweep: 1032, ..."

Test modules import it as ``from cases import record`` (pytest's default
prepend import mode puts ``tests/reliability`` on ``sys.path``); the root
conftest finds it in ``sys.modules`` at the end of the session, so the
summary appears in every run that collected a reliability test.
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
