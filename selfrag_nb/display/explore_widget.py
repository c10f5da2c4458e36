"""The interactive face of an Explorer: one AnyWidget, rows only until a row is opened.

    ExploreWidget(ex)                       python side
      _esm = explore_module():  mount.js + static/explore.js
    columns, rows = explore_state(ex) -->  static/explore.js render(model, el)
        one short list per row (question cut    sort by any column, filter by any
        to QUESTION_CHARS; no answer, no        column and free text, pages of rows,
        document text, no prompt); a number     counts + latency / cost histogram (SVG)
        as [value, text] formatted here, a      of the rows the filter keeps
        text with control characters as
        [value, view tree]: JS formats nothing
      text       <-------------------------   the free-text box (debounced)
      text_hits  ------------------------->   rows whose answer holds it (answers
                                              stay in Python; questions match in the browser)
      selected   <-------------------------   rows ticked, in order
      opened     ------------------------->   one: that trace's view; two: sr.compare(a, b);
                                              three or more: a note. A view tree built
                                              on demand (display/explore_view.py,
                                              tree.py to_json), mounted by mount.js's
                                              build() + attach(): textContent only
      ex.selection follows ``selected`` (``ex.selected`` gives the traces)

Nothing of a trace but its row reaches the browser before it is opened:
tests/display/test_explore_widget.py reads the synced state to check.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.errors import InputTypeError, MissingDependencyError, SelfRAGError

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise MissingDependencyError(
        "The explorer widget needs anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.display.cards import OUTCOME_TONE
from selfrag_nb.display.explore_view import explore_css, opened_state
from selfrag_nb.display.js import STATIC, module
from selfrag_nb.display.markup import CONTROL_RE, fmt_ms
from selfrag_nb.display.tree import h, to_json
from selfrag_nb.explore_rows import Row
from selfrag_nb.explorer import Explorer
from selfrag_nb.formats import fmt_cost, fmt_tokens

#: Characters of a question shipped per row (the whole question is in the opened trace).
QUESTION_CHARS = 240

#: The table's columns: key, label, kind (text | num | ms | cost | flags | outcome:
#: its badge tones, cards.OUTCOME_TONE, sent with it).
COLUMNS: list[dict[str, Any]] = [
    {"key": "question", "label": "question", "kind": "text"},
    {"key": "user", "label": "user", "kind": "text"},
    {"key": "outcome", "label": "outcome", "kind": "outcome", "tones": OUTCOME_TONE},
    {"key": "reason_kind", "label": "reason", "kind": "text"},
    {"key": "category", "label": "category", "kind": "text"},
    {"key": "variant", "label": "variant", "kind": "text"},
    {"key": "flags", "label": "flags", "kind": "flags"},
    {"key": "usefulness", "label": "useful", "kind": "text"},
    {"key": "support", "label": "supported", "kind": "text"},
    {"key": "latency_ms", "label": "latency", "kind": "ms"},
    {"key": "tokens", "label": "tokens", "kind": "num"},
    {"key": "cost", "label": "cost", "kind": "cost"},
    {"key": "model", "label": "model", "kind": "text"},
]
_OPTIONAL = ("category", "variant")  # shown only when some row has one


#: How a number column's cell reads: formatted here, once (formats.py, markup.fmt_ms),
#: so the widget shows what the static face and the text summaries show; an
#: unknown latency or count is a blank cell.
_SHOWN = {
    "ms": lambda v: "" if v is None else fmt_ms(v),
    "num": lambda v: "" if v is None else fmt_tokens(v),
    "cost": fmt_cost,
}


def _cell(r: Row, col: dict[str, Any]) -> Any:
    """A column's cell: its value, or [value, shown] (explore.js sorts, filters
    and bins the value and shows ``shown``): a number's text, or the view tree
    of a text holding control characters (tree.py labels each one, as every
    view does; the widget draws the tree with mount.js's build())."""
    raw = _value(r, col["key"])
    shown = _SHOWN.get(col["kind"])
    if shown is not None:
        return [raw, shown(raw)]
    if isinstance(raw, str) and CONTROL_RE.search(raw):
        return [raw, to_json(h("bdi", "", raw))]
    return raw


def _value(r: Row, key: str) -> Any:
    if key == "question":
        q = r.question
        return q if len(q) <= QUESTION_CHARS else q[:QUESTION_CHARS] + "…"
    if key == "tokens":
        return r.tokens_in + r.tokens_out
    if key == "flags":
        return list(r.flags)
    if key == "usefulness":
        return f"{r.usefulness} {r.usefulness_score}" if r.usefulness_score is not None else r.usefulness
    if key == "latency_ms":
        return round(r.latency_ms, 1)
    if key == "support":  # "2/3": claims supported of those verified (the header says it)
        return f"{r.supported}/{r.claims}" if r.claims else ""
    return r.value(key)


def explore_state(ex: Explorer) -> dict[str, Any]:
    """The synced ``columns`` and ``rows``: one short list per row, nothing more."""
    cols = [c for c in COLUMNS if c["key"] not in _OPTIONAL or any(r.value(c["key"]) for r in ex.rows)]
    rows = [[_cell(r, c) for c in cols] for r in ex.rows]
    return {"columns": cols, "rows": rows, "source": ex.source, "skipped": len(ex.skipped)}


def explore_module() -> str:
    """The widget's module: mount.js (with its generated allow-lists) and explore.js."""
    return "\n".join([module("mount.js"), (STATIC / "explore.js").read_text(encoding="utf-8")])


class ExploreWidget(anywidget.AnyWidget):
    """Interactive view of ``sr.explore(...)``."""

    _esm = explore_module()
    _css = explore_css()

    columns: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    rows: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    source = traitlets.Unicode("").tag(sync=True)
    skipped = traitlets.Int(0).tag(sync=True)
    #: The free-text box (set by the browser) and the rows whose answer holds it.
    text = traitlets.Unicode("").tag(sync=True)
    text_hits = traitlets.Dict().tag(sync=True)
    #: Positions of the selected rows, in the order they were selected.
    selected = traitlets.List(traitlets.Int()).tag(sync=True)
    #: What is open under the table: {"kind": "trace" | "compare" | "note", "title", "tree"}.
    opened = traitlets.Dict().tag(sync=True)
    #: Rows per page of the table (only these are in the DOM).
    page_size = traitlets.Int(25).tag(sync=True)

    def __init__(self, obj: object, **kwargs: Any) -> None:
        if not isinstance(obj, Explorer):
            raise InputTypeError(
                f"ExploreWidget shows an Explorer (sr.explore(...)), not {type(obj).__name__}"
            )
        self.explorer = obj
        super().__init__(**explore_state(obj), **kwargs)
        self.observe(self._on_text, names="text")
        self.observe(self._on_selected, names="selected")

    def _on_text(self, change: dict[str, Any]) -> None:
        needle = str(change["new"]).casefold()
        hits = [i for i, r in enumerate(self.explorer.rows) if needle and needle in r.answer.casefold()]
        self.text_hits = {"text": change["new"], "rows": hits}

    def _on_selected(self, change: dict[str, Any]) -> None:
        n = len(self.explorer.rows)
        picked = [i for i in dict.fromkeys(change["new"]) if isinstance(i, int) and 0 <= i < n]
        self.explorer.selection = picked
        self.opened = self.open_state(picked)

    def open_state(self, picked: list[int]) -> dict[str, Any]:
        """What ``opened`` holds for the selected rows ``picked``."""
        ex = self.explorer
        if not picked:
            return {}
        if len(picked) > 2:
            return {
                "kind": "note",
                "title": f"{len(picked)} rows selected",
                "note": "select one row to open its trace, two to compare them; ex.selected holds them all",
            }
        missing = [i for i in picked if not ex.has_trace(i)]
        if missing:
            return {"kind": "note", "title": "no trace to open", "note": ex.why_no_trace(missing[0])}
        try:
            traces = [ex.trace(i) for i in picked]
        except SelfRAGError as exc:  # the file went away or changed since the rows were read
            return {"kind": "note", "title": "cannot open this trace", "note": str(exc)}
        labels = [_label(ex.rows[i], i) for i in picked]
        return opened_state(traces, labels)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        from selfrag_nb.display import faces

        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/html"] = faces.html(self.explorer)
            data["text/plain"] = faces.text(self.explorer)
        return bundle


def _label(r: Row, i: int) -> str:
    return " / ".join(p for p in (r.variant, r.id or f"row {i + 1}") if p)
