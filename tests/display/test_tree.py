"""The view tree's rules, from its docstring: text is only ever text, tags and
attributes come from allow-lists, behaviour is declared by data attributes and
the static face folds what the widget pages."""

from __future__ import annotations

import json

import pytest

from selfrag_nb import errors as sr_errors
from selfrag_nb.display.js import allow_lists, module
from selfrag_nb.display.tree import Node, frag, h, text_kids, to_html, to_json

HOSTILE = '<script>alert(1)</script> "quoted" & \u202eevil\u200b <img src=x onerror=alert(2)>'


def test_text_is_escaped_in_the_static_face_and_plain_in_the_widget_face() -> None:
    node = h("div", "srnb-block", HOSTILE, dir="auto")
    out = to_html(node)
    assert "<script" not in out
    assert "<img" not in out
    assert "&lt;script&gt;" in out
    assert "&quot;quoted&quot; &amp;" in out
    # the widget face carries text as strings: mount.js sets them with textContent
    data = to_json(node)
    assert data["t"] == "div"
    assert data["a"] == {"dir": "auto"}
    texts = [k for k in data["k"] if isinstance(k, str)]
    assert any("<script>alert(1)</script>" in t for t in texts)


def test_control_characters_become_the_same_labelled_span_in_both_faces() -> None:
    kids = text_kids("a\u202eb\u200bc")
    assert kids[0] == "a"
    assert kids[2] == "b"
    assert kids[4] == "c"
    labels = [k for k in kids if isinstance(k, Node)]
    assert [k.text() for k in labels] == ["U+202E", "U+200B"]
    assert all(k.cls == "srnb-ctl" for k in labels)
    out = to_html(h("span", "", "a\u202eb"))
    assert "\u202e" not in out
    assert 'class="srnb-ctl"' in out
    assert "U+202E" in out
    assert "\u202e" not in json.dumps(to_json(h("span", "", "a\u202eb")), ensure_ascii=False)


@pytest.mark.parametrize(
    ("tag", "attrs"),
    [
        ("script", {}),
        ("img", {}),
        ("a", {}),
        ("iframe", {}),
        ("style", {}),
        ("div", {"onclick": "x()"}),
        ("div", {"href": "javascript:x()"}),
        ("div", {"src": "http://example.com/x.png"}),
        ("div", {"srcdoc": "<b>"}),
        ("div", {"style": "background:url(http://example.com/x)"}),
        ("div", {"style": "width: 10%; position: fixed"}),
        ("div", {"data-X": "1"}),
    ],
)
def test_tags_and_attributes_outside_the_allow_lists_are_refused(tag: str, attrs: dict[str, str]) -> None:
    with pytest.raises(sr_errors.InputError, match=r"not|only"):
        h(tag, "", attrs=attrs)


def test_allowed_attributes_pass_and_keywords_become_dashed_names() -> None:
    node = h("div", "srnb-bar", style="width: 42.5%", data_page=20, aria_label="score", open=True, title=None)
    assert node.attrs == (
        ("style", "width: 42.5%"),
        ("data-page", "20"),
        ("aria-label", "score"),
        ("open", ""),
    )
    assert (
        to_html(node)
        == '<div class="srnb-bar" style="width: 42.5%" data-page="20" aria-label="score" open></div>'
    )


def test_attribute_values_from_data_are_escaped() -> None:
    out = to_html(h("span", "", "x", title='a" onmouseover="alert(1)'))
    assert 'title="a&quot; onmouseover&#61;&quot;alert(1)"' in out


def test_the_static_face_folds_what_the_widget_pages() -> None:
    items = [h("li", "", f"item {i}") for i in range(25)]
    node = h("ul", "srnb-list", items, data_page=10)
    out = to_html(node)
    assert out.count("<li>") == 25  # nothing is lost
    head, _, rest = out.partition('<details class="srnb-more"><summary>show 15 more</summary>')
    assert head.count("<li>") == 10
    assert rest.count("<li>") == 15
    # a list that fits its page is not folded
    assert "srnb-more" not in to_html(h("ul", "", items[:10], data_page=10))
    # the widget gets every item; mount.js pages them
    assert len(to_json(node)["k"]) == 25


def test_fragments_none_and_nested_lists_flatten_into_the_parent() -> None:
    node = h("div", "", None, frag("a", h("b", "", "b")), [["c"], None, False], 3)
    assert to_html(node) == "<div>a<b>b</b>c3</div>"
    assert to_json(frag("x", h("br")))["k"] == ["x", {"t": "br"}]


def test_void_elements_have_no_closing_tag() -> None:
    assert to_html(h("span", "", "a", h("wbr"), "b", h("br"))) == "<span>a<wbr>b<br></span>"


def test_mount_module_carries_the_python_allow_lists() -> None:
    src = module("mount.js", "tree_view.js")
    assert src.startswith(allow_lists())
    assert '"script"' not in allow_lists()
    assert '"onclick"' not in allow_lists()
    assert "innerHTML" not in src  # the widget face never parses markup
    assert "export default { render: renderTree }" in src
