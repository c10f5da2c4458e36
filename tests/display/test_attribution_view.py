"""The attribution view (docs/attribution.md, "Views"): one view tree, two faces.

Rules tested, on real attributions of real answers (the sample knowledge base,
the offline model):
- the matrix marks every decisive cell, and each effect has its own symbol and
  words (not told by colour alone); the legend names all five;
- a claim (data-claim="i") is linked to its decisive cells, its sentence in the
  answer and the evidence spans it quoted (data-for-claim="i"), and only those;
- the static face is the tree through to_html, with its stylesheet, no script,
  each claim's detail in a <details>; the widget is a ViewWidget fed by
  to_json of the same tree, registered as the Attribution's widget face;
- hostile text stays text in both faces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.attribution import EFFECTS, Attribution
from selfrag_nb.display import faces
from selfrag_nb.display.attribution_view import CELL, attribution_css, attribution_html, attribution_node
from selfrag_nb.display.tree import Node, to_html, to_json

REFUND = "What is the refund window for a Pro subscription?"


@pytest.fixture(scope="module")
def attribution() -> Attribution:
    kb = sr.KnowledgeBase.sample()
    trace = sr.SelfRAG(kb).ask(REFUND, user=sr.User("ana"))
    a = trace.attribution()
    assert isinstance(a, Attribution)
    assert a.decisive_cells >= 2
    return a


def _walk(node: Node) -> list[Node]:
    out = [node]
    for k in node.kids:
        if isinstance(k, Node):
            out.extend(_walk(k))
    return out


def _with(node: Node, name: str, value: str | None = None) -> list[Node]:
    return [n for n in _walk(node) if n.attr(name) is not None and (value is None or n.attr(name) == value)]


def test_every_decisive_cell_is_marked_and_only_those(attribution: Attribution) -> None:
    node = attribution_node(attribution)
    cells = [n for n in _walk(node) if n.tag == "td"]
    assert len(cells) == len(attribution.claims) * len(attribution.chunks)
    marked = [c for c in cells if c.attr("data-effect") == "decisive"]
    assert len(marked) == attribution.decisive_cells
    for cell in marked:
        assert "srnb-attr-decisive" in cell.cls.split()
        assert cell.text() == "●"
    # which claim x chunk: the row's claim and the column's [n]
    want = {
        (str(i), str(attribution.chunk(c).index))
        for i, row in enumerate(attribution.claims)
        for c in row.decisive
    }
    assert {(c.attr("data-for-claim"), c.attr("data-chunk")) for c in marked} == want
    assert all(c.attr("data-for-claim") is None for c in cells if c not in marked)


def test_each_effect_has_its_own_symbol_and_words_and_the_legend_names_all() -> None:
    assert set(CELL) == set(EFFECTS)
    symbols = [sym for sym, _, _ in CELL.values()]
    assert len(set(symbols)) == len(symbols)  # a shape per effect, not a colour
    css = attribution_css()
    # decisive, weakened and strengthened cells differ by border style too
    for effect, style in (("decisive", "solid"), ("weakened", "dashed"), ("strengthened", "dotted")):
        assert re.search(rf"td\.srnb-attr-{effect}[^{{]*\{{[^}}]*outline:\s*2px {style}", css), effect


def test_cells_say_their_effect_in_words(attribution: Attribution) -> None:
    node = attribution_node(attribution)
    for cell in (n for n in _walk(node) if n.tag == "td"):
        effect = cell.attr("data-effect")
        assert (cell.attr("aria-label") or "").startswith(f"{effect}: without ")
        assert CELL[effect or ""][2] in (cell.attr("title") or "")
    legend = node.find_all("srnb-attr-legend")[0].text()
    for effect, (sym, _, _) in CELL.items():
        assert f"{sym}{effect}" in legend


def test_a_claim_links_to_its_decisive_cells_sentence_and_evidence(attribution: Attribution) -> None:
    node = attribution_node(attribution)
    for i, row in enumerate(attribution.claims):
        claims = _with(node, "data-claim", str(i))
        assert [n.tag for n in claims] == ["th", "span"]  # its matrix row and its details' summary
        assert all(row.text[:40] in n.text() for n in claims)
        linked = _with(node, "data-for-claim", str(i))
        cells = [n for n in linked if n.tag == "td"]
        assert len(cells) == len(row.decisive)
        (mark,) = [n for n in linked if n.tag == "mark"]
        assert mark.text() == attribution.answer[row.start : row.end]
        spans = [n.text() for n in linked if "srnb-attr-span" in n.cls.split()]
        assert spans == [q.span for q in row.evidence]
    details = [n for n in _walk(node) if n.tag == "details"]
    assert [d.attr("data-key") for d in details] == [
        f"attr-claim-{i}" for i in range(len(attribution.claims))
    ]


def test_the_static_face_is_the_tree_with_its_stylesheet_and_no_script(attribution: Attribution) -> None:
    html = attribution_html(attribution)
    assert html == attribution.to_html() == faces.html(attribution)
    assert "<script" not in html.lower()
    names = {
        n
        for tag in re.findall(r"<[a-z][^>]*>", re.sub(r'"[^"]*"', '""', html))
        for n in re.findall(r"\s([a-z-]+)", tag)
    }
    assert not [n for n in names if n.startswith("on")], names  # no event handler
    assert html.count("<style>") == 1
    assert attribution_css() in html
    node = attribution_node(attribution)
    assert "".join(to_html(k) for k in node.kids) in html
    assert html.count("<details") == len(attribution.claims)
    assert "<details open" not in html  # the static face opens a claim on a click, not before


def test_the_widget_is_a_view_widget_fed_by_the_same_tree(attribution: Attribution) -> None:
    from selfrag_nb.display.tree_widget import ViewWidget

    assert faces.faces_of(Attribution) == {"text", "html", "widget"}
    w = faces.widget(attribution)
    assert isinstance(w, ViewWidget)
    assert w.tree == to_json(attribution_node(attribution))
    assert "srnb-attr-decisive" in w._css
    assert w.selected_claim == -1
    bundle = w._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == str(attribution)


def test_nothing_to_attribute_shows_the_reason_and_no_matrix() -> None:
    a = Attribution(
        question="Hello!", reason="the answer was not drawn from documents (generation mode 'direct')"
    )
    node = attribution_node(a)
    assert "nothing to attribute: the answer was not drawn from documents" in node.text()
    assert not [n for n in _walk(node) if n.tag in ("table", "details")]
    assert "<table" not in a.to_html()


HOSTILE = '<script>alert(1)</script> "x" \u202e<img src=x onerror=alert(2)>'


def test_hostile_text_stays_text_in_both_faces(attribution: Attribution) -> None:
    data: dict[str, Any] = json.loads(attribution.to_json())
    data["answer"] = HOSTILE + " " + data["answer"]
    shift = len(HOSTILE) + 1
    for row in data["claims"]:
        row["text"] = HOSTILE + row["text"]
        row["start"] += shift
        row["end"] += shift
        for q in row["evidence"]:
            q["span"] = HOSTILE + q["span"]
    for c in data["chunks"]:
        c["name"] = HOSTILE
    a = Attribution.model_validate(data)
    html = a.to_html()
    for raw in ("<script", "<img", "\u202e"):
        assert raw not in html, raw
    assert "&lt;script&gt;" in html
    assert "U+202E" in html
    # the widget's JSON holds the text as strings: the script tag is a string kid, never a node
    tree = faces.widget(a).tree
    tags: set[str] = set()

    def visit(n: Any) -> None:
        if isinstance(n, dict):
            tags.add(n.get("t", ""))
            for k in n.get("k", []):
                visit(k)

    visit(tree)
    assert not tags & {"script", "img"}
    assert "<script>alert(1)</script>" in json.dumps(tree, ensure_ascii=False)
    assert "\u202e" not in json.dumps(tree, ensure_ascii=False)


def test_the_stylesheet_ships_with_the_package() -> None:
    from selfrag_nb.display import attribution_view

    assert (Path(attribution_view.__file__).parent / "static" / "attribution.css").is_file()
