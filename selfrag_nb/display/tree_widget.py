"""The generic interactive view: one AnyWidget that mounts any view tree.

    ViewWidget(node, shown=obj)
      tree = to_json(node)      ----->  static/mount.js build() + attach()
      selected_claim  <------------>    click a data-claim node
      _repr_mimebundle_   the widget + text/html (the same tree through to_html; the
                          shown object's static page, stylesheet included, when there is one)
                          + text/plain (the shown object's summary, when there is one)
      .show(node, shown=obj)  replaces the tree (open <details> and pages are kept)

A saved notebook without widget state, nbconvert and GitHub show the text/html
face, which is the same tree serialised the other way.
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

from selfrag_nb.display.js import module
from selfrag_nb.display.tree import Node, to_html, to_json


class ViewWidget(anywidget.AnyWidget):
    """Any view tree, mounted with textContent only; behaviour from data attributes."""

    _esm = module("mount.js", "tree_view.js")
    _css: str | Path = Path(__file__).parent / "static" / "trace.css"

    tree = traitlets.Dict().tag(sync=True)
    #: Index of the selected claim (-1: none); set by a click on a ``data-claim`` node.
    selected_claim = traitlets.Int(-1).tag(sync=True)

    def __init__(self, node: Node, *, shown: object = None, **kwargs: Any) -> None:
        super().__init__(tree=to_json(node), **kwargs)
        self._node = node
        self._shown = shown

    def show(self, node: Node, *, shown: object = None) -> None:
        """Mount ``node`` instead; the claim selection resets."""
        self._node, self._shown = node, shown
        with self.hold_sync():
            self.selected_claim = -1
            self.tree = to_json(node)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/html"] = to_html(self._node)
            if self._shown is not None:
                from selfrag_nb.display import faces

                # the shown object's own static page: the same tree, with its stylesheet
                data["text/html"] = faces.html(self._shown)
                data["text/plain"] = faces.text(self._shown)
        return bundle
