"""One view, two faces: a small tree of nodes built once in Python.

    view function (one per record type)  ->  Node(tag, cls, kids, attrs)
                                              kids: Node | str (text, never markup)
        to_html(node)   static HTML: the one place text is escaped; no script
        to_json(node)   the widget's JSON {"t","c","a","k"}: static/mount.js builds
                        the DOM from it with createElement/textContent only

Both faces read the same tree, so what a saved notebook shows without a kernel
and what the widget shows in one are the same view (rich renders once and
exports to several formats for the same reason). Two rules make the tree safe
whatever the data:

- text is a ``str`` kid and only ever text: ``to_html`` escapes it (through
  markup.py's ``escape``, the one door into HTML), the widget
  sets it with ``textContent``. Invisible and bidi control characters in data
  are split out by ``text_kids`` into labelled ``srnb-ctl`` spans while the
  tree is built, so both faces show the same ``U+202E`` label (in attribute
  values, tooltips, both faces write ``⟨U+202E⟩``, and ``to_html`` encodes
  ``=`` too so no ``src=`` of the data reads like an attribute);
- tags and attributes come from allow-lists (no ``on*``, ``href``, ``src``,
  ``srcdoc``; ``style`` only as widths and custom properties); a view that asks
  for anything else is a programming error raised at build time. mount.js
  checks the same lists again, so a tree from anywhere else cannot widen them.

Behaviour is declared, not scripted: ``data-page="20"`` on a list pages its
children (static face: the rest inside a "show N more" ``<details>``; with
``data-noun="hits"`` both faces name what is counted),
``data-claim``/``data-for-claim`` link a claim to its evidence, ``data-key`` on
a ``<details>`` keeps it open across redraws. mount.js attaches these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeAlias

from selfrag_nb.display.markup import CONTROL_RE, escape, neutralize
from selfrag_nb.errors import InputError

#: Elements a view may use: HTML, plus the SVG subset charts draw with.
SVG_TAGS = frozenset(["svg", "g", "path", "rect", "line", "circle", "text", "title", "polyline"])
TAGS = frozenset(
    [
        *("b", "bdi", "br", "code", "del", "em", "i", "ins", "kbd", "mark", "small", "span"),
        *("strong", "sub", "sup", "u", "wbr"),
        *("div", "p", "pre", "section", "h3", "h4", "h5", "ul", "ol", "li", "details", "summary"),
        *("table", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td"),
        *SVG_TAGS,
    ]
)
VOID_TAGS = frozenset({"br", "col", "wbr"})

#: Attributes a view may set, besides ``class`` and ``data-*`` (HTML, then SVG).
ATTRS = frozenset(
    [
        *("title", "dir", "open", "style", "colspan", "rowspan", "role", "aria-label", "aria-hidden"),
        *("lang", "tabindex", "span"),
        *("viewBox", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "d", "points"),
        *("fill", "stroke", "stroke-width", "text-anchor", "dominant-baseline", "font-size", "font-weight"),
        *("preserveAspectRatio", "xmlns", "transform"),
    ]
)
DATA_PATTERN = r"data-[a-z][a-z0-9-]*"
# width/height in % or px, and CSS custom properties holding a number or %:
# enough for score bars and chart sizes, nothing that can load or position content
STYLE_PATTERN = r"((width|height|min-width|--[a-z][a-z0-9-]*)\s*:\s*-?[0-9.]+(%|px|em)?\s*;?\s*)+"
_DATA_RE = re.compile(DATA_PATTERN + r"\Z")
_STYLE_RE = re.compile(STYLE_PATTERN + r"\Z")

Kid: TypeAlias = "Node | str"


@dataclass(frozen=True, slots=True)
class Node:
    """One element: tag, class, children (nodes or text) and attributes."""

    tag: str
    cls: str = ""
    kids: tuple[Kid, ...] = ()
    attrs: tuple[tuple[str, str], ...] = ()

    def attr(self, name: str) -> str | None:
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    def text(self) -> str:
        """All text under this node, in order (tests and summaries)."""
        return "".join(k if isinstance(k, str) else k.text() for k in self.kids)

    def find_all(self, cls: str) -> list[Node]:
        """Every node under (and including) this one whose class list holds ``cls``."""
        out = [self] if cls in self.cls.split() else []
        for k in self.kids:
            if isinstance(k, Node):
                out.extend(k.find_all(cls))
        return out


@lru_cache(maxsize=1024)
def _name_ok(name: str) -> bool:
    return name in ATTRS or _DATA_RE.match(name) is not None


def _check_attr(tag: str, name: str, value: str) -> None:
    if _name_ok(name):
        if name == "style" and not _STYLE_RE.match(value):
            raise InputError(f"<{tag}> style {value!r}: only widths and custom properties")
        return
    raise InputError(f"<{tag}> attribute {name!r} is not allowed in a view")


def text_kids(text: str) -> list[Kid]:
    """``text`` as kids: plain runs, and each control character as a labelled span."""
    if not CONTROL_RE.search(text):
        return [text] if text else []
    out: list[Kid] = []
    pos = 0
    for m in CONTROL_RE.finditer(text):
        if m.start() > pos:
            out.append(text[pos : m.start()])
        label = f"U+{ord(m.group(0)):04X}"
        out.append(Node("span", "srnb-ctl", (label,), (("title", "invisible control character"),)))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def _kids(items: Iterable[Any]) -> list[Kid]:
    out: list[Kid] = []
    for item in items:
        if isinstance(item, str):  # the commonest kid first: text
            if item:
                out.extend(text_kids(item))
        elif isinstance(item, Node):
            if item.tag == "":  # a fragment: its kids join the parent
                out.extend(item.kids)
            else:
                out.append(item)
        elif item is None or item is False:
            continue
        elif isinstance(item, (list, tuple)):
            out.extend(_kids(item))
        else:
            out.extend(text_kids(str(item)))
    return out


def h(tag: str, cls: str = "", *kids: Any, attrs: Mapping[str, object] | None = None, **kw: object) -> Node:
    """Build a node. ``kids``: nodes, text, lists of either, or None (skipped).
    Attributes come as ``attrs={...}`` or keywords (``data_page=20`` -> ``data-page``);
    a value of None or False is left out, True becomes an empty attribute."""
    if tag not in TAGS:
        raise InputError(f"<{tag}> is not an element a view may use")
    pairs: list[tuple[str, str]] = []
    for name, value in [*(attrs or {}).items(), *((k.replace("_", "-"), v) for k, v in kw.items())]:
        if value is None or value is False:
            continue
        sval = "" if value is True else str(value)
        _check_attr(tag, name, sval)
        pairs.append((name, sval))
    return Node(tag, cls, tuple(_kids(kids)), tuple(pairs))


def frag(*kids: Any) -> Node:
    """Several nodes where one is expected: their kids join the parent."""
    return Node("", "", tuple(_kids(kids)))


# ------------------------------------------------------------- static HTML


def _more_label(n: int, noun: str | None = None) -> str:
    return f"show {n:,} more {noun}" if noun else f"show {n:,} more"


def to_html(node: Kid) -> str:
    """The static face: escaped text, allow-listed tags and attributes, no script."""
    parts: list[str] = []
    _write(node, parts)
    return "".join(parts)


def _write(node: Kid, out: list[str]) -> None:
    if isinstance(node, str):
        out.append(escape(node))
        return
    if node.tag == "":
        for k in node.kids:
            _write(k, out)
        return
    out.append(f"<{node.tag}")
    if node.cls:
        out.append(f' class="{escape(node.cls)}"')
    for name, value in node.attrs:
        # "=" encoded too: no "src=" of the data ever reads like an attribute
        out.append(f' {name}="{escape(value).replace("=", "&#61;")}"' if value != "" else f" {name}")
    out.append(">")
    if node.tag in VOID_TAGS:
        return
    kids = node.kids
    page = node.attr("data-page") if node.attrs else None
    if page and page.isdigit() and len(kids) > int(page) > 0:
        # no script in the static face: what the widget pages is folded here
        n = int(page)
        for k in kids[:n]:
            _write(k, out)
        rest = kids[n:]
        label = _more_label(len(rest), node.attr("data-noun"))
        out.append(f'<details class="srnb-more"><summary>{escape(label)}</summary>')
        for k in rest:
            _write(k, out)
        out.append("</details>")
    else:
        for k in kids:
            _write(k, out)
    out.append(f"</{node.tag}>")


def to_page(root: Node, css: str) -> str:
    """A static page: ``root`` with an inline stylesheet as its first child. ``css``
    is the package's own stylesheet (trusted); ``<style>`` is not a view tag, so
    a tree cannot carry one."""
    shell = to_html(Node(root.tag, root.cls, (), root.attrs))
    opening = shell[: -len(f"</{root.tag}>")]
    return opening + f"<style>{css}</style>" + "".join(to_html(k) for k in root.kids) + f"</{root.tag}>"


# ------------------------------------------------------------- widget JSON


def to_json(node: Kid) -> Any:
    """The widget's face: compact JSON, text as strings (set with textContent)."""
    if isinstance(node, str):
        return node
    if node.tag == "":
        return {"t": "", "k": [to_json(k) for k in node.kids]}
    out: dict[str, Any] = {"t": node.tag}
    if node.cls:
        out["c"] = node.cls
    if node.attrs:
        # attribute values (tooltips) carry control characters as ⟨U+XXXX⟩, as to_html writes them
        out["a"] = {k: neutralize(v) for k, v in node.attrs}
    if node.kids:
        out["k"] = [to_json(k) for k in node.kids]
    return out
