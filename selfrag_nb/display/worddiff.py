"""Word-level diff of two short texts (the old and new verdict of a Prompt Lab row).

    word_diff(old, new) -> (old_parts, new_parts)
        tokens(text)         words (``NO_RETRIEVE``, ``webhooks.md``, ``1/2`` stay whole),
                             punctuation on its own, each with its trailing whitespace
        difflib.SequenceMatcher over the tokens without their whitespace
        old_parts            [(op, text)], op "same" | "del" (words only the old text has)
        new_parts            [(op, text)], op "same" | "ins" (words only the new text has)
    diff_tree(parts)         one <bdi> node: <del class="srnb-diff-del">, <ins class="srnb-diff-ins">

Computed once in Python into the Prompt Lab's view tree (display/tree.py): the
static HTML is that tree through to_html, the widget mounts the same tree, so
both faces mark the same words. Joining the parts gives the text back.
"""

from __future__ import annotations

import difflib
import re

from selfrag_nb.display.tree import Node, h

#: Characters of each side that are diffed and shown (a generate verdict is a whole answer).
DIFF_CHARS = 2_000

#: (op, text); op is "same", "del" or "ins".
Part = tuple[str, str]

# A word keeps its inner dots, slashes, dashes, underscores, apostrophes and
# colons (file names, ids, "1/2", URLs); it starts and ends with a letter or a digit.
_TOKEN = re.compile(r"\s+|(?:[^\W_](?:[\w.'/@:\-]*[^\W_])?|\S)\s*")


def tokens(text: str) -> list[str]:
    """``text`` as word and punctuation tokens, each carrying its trailing whitespace."""
    return _TOKEN.findall(text)


def _merge(parts: list[Part]) -> list[Part]:
    # Adjacent parts of one op become one span: fewer nodes, one strike-through line.
    out: list[Part] = []
    for op, text in parts:
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        elif text:
            out.append((op, text))
    return out


def _changed(op: str, text: str) -> list[Part]:
    # The whitespace after the last changed word is not part of the change: no
    # strike-through or underline running into the gap before the next word.
    core = text.rstrip()
    return [(op, core), ("same", text[len(core) :])]


def word_diff(old: str, new: str) -> tuple[list[Part], list[Part]]:
    """The parts of ``old`` (same / del) and of ``new`` (same / ins), word by word.
    Whitespace does not count as a change."""
    a, b = tokens(old), tokens(new)
    sm = difflib.SequenceMatcher(None, [t.strip() for t in a], [t.strip() for t in b], autojunk=False)
    left: list[Part] = []
    right: list[Part] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            left.append(("same", "".join(a[i1:i2])))
            right.append(("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.extend(_changed("del", "".join(a[i1:i2])))
        if j2 > j1:
            right.extend(_changed("ins", "".join(b[j1:j2])))
    return _merge(left), _merge(right)


def clip(text: str) -> str:
    """``text`` cut to ``DIFF_CHARS`` (the view notes the cut: cards.cut_note)."""
    return text[:DIFF_CHARS]


def diff_tree(parts: list[Part]) -> Node:
    """The parts inside one ``<bdi>``: deletions struck, insertions marked."""
    tags = {"del": ("del", "srnb-diff-del"), "ins": ("ins", "srnb-diff-ins")}
    return h("bdi", "", [h(*tags[op], text) if op in tags else text for op, text in parts])
