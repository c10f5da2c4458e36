"""The display seam: three faces per displayable type, one registry each.

    obj (inherits selfrag_nb._displayable.Displayable)
      ._repr_mimebundle_()  -> mimebundle(obj)   text/plain + text/html (+ widget in a kernel)
      ._display_()          -> marimo_view(obj)  mo.ui.anywidget(widget(obj)) inside marimo,
                                                 else StaticView(obj)
      ._repr_html_()        -> html(obj)
    text(obj)    one-line (or short) text/plain     singledispatch on type(obj)
    tree(obj)    the view tree (display/tree.py)    singledispatch on type(obj)
    html(obj)    static HTML, no script, escaped     singledispatch on type(obj)
    widget(obj)  the AnyWidget view                  singledispatch on type(obj)

A display module registers each of its types once, all faces together::

    faces.register(Trace, text=text_summary, tree=view_tree, widget=_trace_widget)

With ``tree=`` the other faces derive from the one tree: ``html`` defaults to
the tree as a static page (tree.to_page with trace.css) and ``widget="tree"``
is the generic ViewWidget mounting it; a type passes its own ``html`` or
``widget`` only to add something (its stylesheet, a stepper's ``update``).

``widget`` functions import their AnyWidget module inside the call, so
registering (which happens when ``selfrag_nb.display`` is imported) pulls in
neither anywidget nor IPython. ``widget=None`` registers a static-only type
(text and HTML; no widget view is offered).

This module is a leaf: standard library only, no record module. Records
never import it directly: ``selfrag_nb._displayable`` reaches it lazily.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from functools import partial, singledispatch
from typing import Any

from selfrag_nb.errors import InputTypeError

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_log = logging.getLogger(__name__)


@singledispatch
def text(obj: object) -> str:
    """The text/plain face of ``obj``."""
    raise InputTypeError(f"selfrag_nb.display cannot summarise {type(obj).__name__}: no text face registered")


@singledispatch
def html(obj: object, **options: Any) -> str:
    """The static HTML face of ``obj`` (no script; every text escaped).
    ``options`` go to the type's renderer (e.g. ``charts=True`` for an EvalReport)."""
    raise InputTypeError(f"selfrag_nb.display cannot render {type(obj).__name__}: no HTML face registered")


@singledispatch
def widget(obj: object) -> Any:
    """The interactive AnyWidget view of ``obj``."""
    raise InputTypeError(f"selfrag_nb.display has no widget view of {type(obj).__name__}")


@singledispatch
def tree(obj: object) -> Any:
    """The view tree of ``obj`` (a display.tree.Node, root included)."""
    raise InputTypeError(f"selfrag_nb.display has no view tree of {type(obj).__name__}")


_NO_WIDGET = widget.dispatch(object)
_text, _html, _widget, _tree = text, html, widget, tree  # register's keywords shadow the names


def _page(make: Callable[[Any], Any], obj: object, **_: Any) -> str:
    from selfrag_nb.display.html import css
    from selfrag_nb.display.tree import to_page

    return to_page(make(obj), css())


def _view_widget(make: Callable[[Any], Any], obj: object) -> Any:
    from selfrag_nb.display.tree_widget import ViewWidget

    return ViewWidget(make(obj), shown=obj)


def register(
    cls: type,
    *,
    text: Callable[[Any], str],
    html: Callable[..., str] | None = None,
    tree: Callable[[Any], Any] | None = None,
    widget: Callable[[Any], Any] | str | None = None,
) -> None:
    """Register the faces of ``cls`` (how ``html`` and ``widget`` derive from ``tree``: module doc)."""
    if html is None:
        if tree is None:
            raise InputTypeError(f"faces.register({cls.__name__}): give html= or tree=")
        html = partial(_page, tree)
    _text.register(cls, text)
    _html.register(cls, html)
    if tree is not None:
        _tree.register(cls, tree)
    if widget == "tree":
        if tree is None:
            raise InputTypeError(f'faces.register({cls.__name__}): widget="tree" needs tree=')
        widget = partial(_view_widget, tree)
    if callable(widget):
        _widget.register(cls, widget)


def has_widget(cls: type) -> bool:
    """True when a widget face is registered for ``cls`` (or a base class)."""
    return widget.dispatch(cls) is not _NO_WIDGET


def faces_of(cls: type) -> set[str]:
    """The faces registered for ``cls``: a subset of {"text", "tree", "html", "widget"}."""
    named = (("text", text), ("tree", tree), ("html", html), ("widget", widget))
    return {name for name, fn in named if fn.dispatch(cls) is not fn.dispatch(object)}


# ------------------------------------------------------------ front ends


def in_kernel() -> bool:
    """True inside a Jupyter kernel (a widget comm can reach a front end)."""
    if "IPython" not in sys.modules:  # plain python: do not import IPython for nothing
        return False
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except Exception:  # noqa: BLE001 - a broken IPython means "no kernel", not a crash in repr
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _marimo_running() -> bool:
    if "marimo" not in sys.modules:
        return False
    try:
        import marimo as mo

        return bool(mo.running_in_notebook())
    except Exception:  # noqa: BLE001 - marimo internals changed: behave as outside marimo
        return False


def mimebundle(obj: object) -> dict[str, Any]:
    """text/plain + text/html always; the widget view too when in a kernel.
    Never raises for the widget: a failure to build it leaves the static HTML."""
    bundle: dict[str, Any] = {"text/plain": text(obj), "text/html": html(obj)}
    if has_widget(type(obj)) and in_kernel():
        try:
            data: Any = widget(obj)._repr_mimebundle_()
            if isinstance(data, tuple):  # anywidget returns (data, metadata)
                data = data[0]
            if data and WIDGET_MIME in data:
                bundle[WIDGET_MIME] = data[WIDGET_MIME]
        except Exception:  # noqa: BLE001 - a display hook must never raise; the static HTML still shows
            _log.debug(
                "widget view of %s unavailable, showing static HTML", type(obj).__name__, exc_info=True
            )
    return bundle


class StaticView:
    """Static HTML with a text fallback, for front ends without widgets."""

    def __init__(self, obj: object) -> None:
        self.html = html(obj)
        self.text = text(obj)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def marimo_view(obj: object) -> Any:
    """What marimo shows for ``obj``: the AnyWidget wrapped by ``mo.ui.anywidget``
    when marimo runs the cell, else static HTML (``mo.Html``) or a StaticView."""
    if _marimo_running():
        import marimo as mo

        if has_widget(type(obj)):
            try:
                return mo.ui.anywidget(widget(obj))
            except Exception:  # noqa: BLE001 - no widget support in this marimo: show the static face
                _log.debug("marimo widget view of %s unavailable", type(obj).__name__, exc_info=True)
        return mo.Html(html(obj))
    return StaticView(obj)
