"""The one door from data to views: records, Hits, evaluation results and the
Prompt Lab inherit ``Displayable``; nothing else outside ``selfrag_nb.display``
imports it (tests/test_display_seam.py checks).

    Displayable (mixin)                        selfrag_nb.display (imported on first use)
      ._repr_mimebundle_()  ----------------->   faces.mimebundle(obj)
      ._display_()          (marimo) -------->   faces.marimo_view(obj)
      ._repr_html_() / .to_html()  ---------->   faces.html(obj)
      .to_text()            ----------------->   faces.text(obj)
    html(obj, **options) / text(obj) / view(obj)   the same faces as functions

Importing ``selfrag_nb.display`` registers every type's renderers
(``faces.register``), so the first display of any object loads them all; the
records themselves never name a renderer. This module imports nothing at
import time: a record module can import it freely.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["Displayable", "html", "text", "view"]


def _faces() -> ModuleType:
    # Importing the package (not only the leaf) runs every registration.
    from selfrag_nb.display import faces

    return faces


def html(obj: object, **options: Any) -> str:
    """The static HTML face of ``obj`` (no script, every text escaped)."""
    out: str = _faces().html(obj, **options)
    return out


def text(obj: object) -> str:
    """The text/plain face of ``obj``."""
    out: str = _faces().text(obj)
    return out


def view(obj: object) -> Any:
    """The interactive AnyWidget view of ``obj`` (a Trace, a record, Hits, an
    evaluation result or a Prompt Lab)."""
    return _faces().widget(obj)


class Displayable:
    """Mixin: the notebook faces of an object, drawn by ``selfrag_nb.display``."""

    __slots__ = ()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        out: dict[str, Any] = _faces().mimebundle(self)
        return out

    def _display_(self) -> Any:
        """marimo: the widget (``mo.ui.anywidget``) when marimo runs the cell."""
        return _faces().marimo_view(self)

    def _repr_html_(self) -> str:
        return html(self)

    def to_html(self) -> str:
        """Static HTML (no script), safe to embed anywhere."""
        return html(self)

    def to_text(self) -> str:
        """The plain-text summary (the ``text/plain`` face)."""
        return text(self)
