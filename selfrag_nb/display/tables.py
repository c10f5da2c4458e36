"""Table rows for the evaluation, Prompt Lab and explorer views.

tr(cls, *cells)   one <tr>: each cell a <td>, unless it already is one (or a <th>)
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display.tree import Node, h


def tr(cls: str, *cells: Any, **attrs: Any) -> Node:
    """A row: each argument one cell (text, nodes or a list of them, put in a <td>)."""
    return h(
        "tr",
        cls,
        [c if isinstance(c, Node) and c.tag in ("td", "th") else h("td", "", c) for c in cells],
        **attrs,
    )
