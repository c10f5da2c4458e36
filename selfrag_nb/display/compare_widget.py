"""The interactive face of a Comparison: one AnyWidget.

    CompareWidget(cmp)                      python side, _esm = js.esm("compare.js")
      data = compare_state(cmp)  ------->   static/compare.js render(model, el)
        the Comparison's JSON, long texts cut to fit STATE_BUDGET
      expanded  <----------------->           stages whose items/text are shown;
                                              starts with the first divergence
      only_diff <----------------->           "differences only" hides same rows
      .update(cmp) shows another comparison (selection reset to its divergence)

The JS and CSS ship in the package (static/compare.js, trace.css +
compare.css): no CDN, no build step. Everything synced is plain JSON and the
browser sets it with ``textContent``; chunk ids go to ``title`` (hover).
anywidget is imported here only, and this module only when a view is built.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.errors import InputTypeError, MissingDependencyError

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise MissingDependencyError(
        "The comparison widget needs anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.comparison import Comparison
from selfrag_nb.display.compare_html import MARK_LABELS, compare_css, compare_text
from selfrag_nb.display.js import esm
from selfrag_nb.display.names import doc_flags
from selfrag_nb.display.state import STATE_BUDGET, state_size

__all__ = ["CompareWidget", "compare_state"]

# Characters kept per string, loosest first: the first that fits the budget wins.
_LIMITS = (4_000, 1_500, 500, 200)


def _trim(v: Any, n: int) -> Any:
    if isinstance(v, str):
        return v if len(v) <= n else v[:n] + f"… [truncated: {len(v) - n:,} more characters]"
    if isinstance(v, list):
        return [_trim(x, n) for x in v]
    if isinstance(v, dict):
        return {k: _trim(x, n) for k, x in v.items()}
    return v


def _checked(cmp: object) -> Comparison:
    if not isinstance(cmp, Comparison):
        raise InputTypeError(f"CompareWidget shows a Comparison (sr.compare(a, b)), not {type(cmp).__name__}")
    return cmp


def compare_state(obj: object) -> dict[str, Any]:
    """The ``data`` trait: the Comparison as JSON, cut until it fits STATE_BUDGET."""
    cmp = _checked(obj)
    raw = cmp.model_dump(mode="json")
    # trust flags worded once, in Python (display/names.py), for compare.js to show
    for row in raw["rows"]:
        for side in (row["left"], row["right"]):
            for item in side["items"]:
                item["flags"] = [list(f) for f in doc_flags(item.pop("doc", {}))]
    state: dict[str, Any] = {}
    for n in _LIMITS:
        state = _trim(raw, n) | {"summary": compare_text(cmp), "mark_labels": MARK_LABELS}
        if state_size(state) <= STATE_BUDGET:
            break
    return state


def _first_open(cmp: Comparison) -> list[str]:
    return [cmp.first_divergence.stage] if cmp.first_divergence else []


class CompareWidget(anywidget.AnyWidget):
    """Interactive view of ``sr.compare(a, b)``."""

    _esm = esm("compare.js")
    _css = compare_css()

    data = traitlets.Dict().tag(sync=True)
    #: Stages whose details are expanded.
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Hide the stages that are the same on both sides.
    only_diff = traitlets.Bool(False).tag(sync=True)

    def __init__(self, obj: object, **kwargs: Any) -> None:
        cmp = _checked(obj)
        super().__init__(data=compare_state(cmp), expanded=_first_open(cmp), **kwargs)

    def update(self, obj: object) -> None:
        """Show ``obj`` (a Comparison) instead; the expanded stage resets to its first divergence."""
        cmp = _checked(obj)
        state = compare_state(cmp)
        with self.hold_sync():
            self.expanded = _first_open(cmp)
            self.data = state
