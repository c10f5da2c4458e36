"""Word-level diff of two verdicts (display/worddiff.py), from its rule: words,
not characters, are compared; deleted words only on the old side, inserted
words only on the new side; joining the parts gives each text back; file
names and ids stay one word; the HTML is escaped."""

from __future__ import annotations

from selfrag_nb.display.tree import to_html
from selfrag_nb.display.worddiff import diff_tree, tokens, word_diff

HOSTILE = '<script>alert(1)</script> & "q"'


def _join(parts: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in parts)


def test_parts_give_each_text_back_and_mark_only_changed_words() -> None:
    old = "The refund window is 14 days [1]."
    new = "The refund window for Pro is 30 days [1]."
    left, right = word_diff(old, new)
    assert _join(left) == old
    assert _join(right) == new
    assert {op for op, _ in left} <= {"same", "del"}
    assert {op for op, _ in right} <= {"same", "ins"}
    assert [t for op, t in left if op == "del"] == ["14"]
    assert [t for op, t in right if op == "ins"] == ["for Pro", "30"]


def test_identifiers_and_file_names_are_single_words() -> None:
    assert [t.strip() for t in tokens("NO_RETRIEVE webhooks.md 1/2 it's")] == [
        "NO_RETRIEVE",
        "webhooks.md",
        "1/2",
        "it's",
    ]
    left, right = word_diff("RETRIEVE: refunds.md", "NO_RETRIEVE: refunds.md, webhooks.md")
    assert [t for op, t in left if op == "del"] == ["RETRIEVE"]
    assert [t for op, t in right if op == "ins"] == ["NO_RETRIEVE", ", webhooks.md"]


def test_whitespace_is_not_a_change_and_equal_texts_have_no_marks() -> None:
    left, right = word_diff("a  b\nc", "a b c")
    assert {op for op, _ in left + right} == {"same"}
    assert word_diff("same text", "same text") == ([("same", "same text")], [("same", "same text")])


def test_diff_tree_escapes_every_part() -> None:
    left, right = word_diff("safe", HOSTILE)
    html = to_html(diff_tree(right))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert '<ins class="srnb-diff-ins">' in html
    assert '<del class="srnb-diff-del">safe</del>' in to_html(diff_tree(left))
