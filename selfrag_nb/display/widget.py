"""The interactive view: one AnyWidget for every record kind and the Trace.

    TraceWidget(obj)                       python side
      _esm  = js.esm("trace.js")           generated CTL + static/prelude.js + static/trace.js
      data  = widget_state(obj)   ----->   static/trace.js render(model, el)
      kind  = "trace" | stage name           one renderer per kind, textContent only
      selected_claim  <------------------>   click a claim -> its evidence span
      page            <------------------>   pager over hits / grades / claims
      .update(obj) replaces data (a stepper re-running a stage refreshes the view;
                   baseline= the trace before its what-if, shown below)
      _repr_mimebundle_  the widget view + text/html (the static view of the object
                   shown last) + text/plain (its summary): nbconvert, GitHub and a
                   notebook saved without widget state show the static view, not
                   "<TraceWidget object at 0x...>"

The .js/.css ship inside the package (no CDN, no build step), so the view
works offline in JupyterLab 4, Notebook 7, VS Code and marimo
(``mo.ui.anywidget``). anywidget and ipywidgets are imported here only, and
this module is imported only when a view is actually built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfrag_nb.errors import MissingDependencyError

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise MissingDependencyError(
        "The interactive views need anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.display.js import esm
from selfrag_nb.display.state import widget_state

__all__ = ["LiveTraceWidget", "TraceWidget", "view"]

_STATIC = Path(__file__).parent / "static"


class TraceWidget(anywidget.AnyWidget):
    """Interactive view of a Trace, a stage record or Hits."""

    _esm = esm("trace.js")
    _css = _STATIC / "trace.css"

    data = traitlets.Dict().tag(sync=True)
    kind = traitlets.Unicode("trace").tag(sync=True)
    #: Index of the selected claim in the latest Support (-1: none).
    selected_claim = traitlets.Int(-1).tag(sync=True)
    #: Page of the long lists (hits, grades, claims), 0-based.
    page = traitlets.Int(0).tag(sync=True)

    def __init__(self, obj: object, **kwargs: Any) -> None:
        state = widget_state(obj)
        super().__init__(data=state, kind=state["kind"], **kwargs)
        self._shown = obj

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        from selfrag_nb.display import faces

        bundle = super()._repr_mimebundle_(**kwargs)
        # ipywidgets returns the data alone or (data, metadata), by version
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            # where no kernel renders the widget, the same record's static face shows
            data["text/html"] = faces.html(self._shown)
            data["text/plain"] = faces.text(self._shown)
        return bundle

    def update(self, obj: object, baseline: Any = None, what_if: str = "") -> None:
        """Show ``obj`` instead (same kind or not); selection and page reset.
        ``baseline``: a Trace shown below ``obj`` as "before the what-if"."""
        state = widget_state(obj, baseline=baseline, what_if=what_if)
        self._shown = obj
        with self.hold_sync():
            self.selected_claim = -1
            self.page = 0
            self.kind = state["kind"]
            self.data = state


#: A TraceWidget kept by a stepper and refreshed with ``update(trace)``.
LiveTraceWidget = TraceWidget


def view(obj: object) -> TraceWidget:
    """The interactive view of a Trace, a stage record or Hits."""
    return TraceWidget(obj)
