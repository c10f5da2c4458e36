"""What remains of the hand-built widget state: the size budget the evaluation widget uses.

    STATE_BUDGET   target bytes of a widget's synced JSON (eval_widget.py cuts to it)
    state_size(s)  bytes of ``s`` as JSON

The record, trace and comparison views no longer build state here: they
sync ``tree.to_json`` of the one view tree (display/html.py, compare_html.py).
"""

from __future__ import annotations

import json
from typing import Any

#: Target size of the JSON state in bytes (<= 200 KB).
STATE_BUDGET = 200_000


def state_size(state: dict[str, Any]) -> int:
    """Bytes of the state as JSON (what the kernel sends to the browser)."""
    return len(json.dumps(state, ensure_ascii=False).encode("utf-8"))
