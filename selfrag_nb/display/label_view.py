"""The label sheet's view: one tree, both faces.

    LabelSheet (label_sheet.py)
      label_tree(sheet)   section "label sheet · <qid>"
        chunks   per graded chunk: name (names.py), judge's grade, human label,
                 marks relevant / not relevant, the chunk text folded
        claims   per verified claim: text, judge's verdict, evidence sentence,
                 human label, marks supported / partly / not supported
        answer   judge's usefulness verdict, human label, marks yes / partly / no
      a mark:  <span role=button tabindex=0 data-send="label" data-kind data-item data-value>
               the current label's mark reads "✓ <word>" and has class srnb-lmark-on
      widget   label_widget.LabelWidget: mount.js sends a clicked mark's data-*
               attributes; the widget writes the label and redraws this tree
      static   the same tree through to_html: the marks are plain text, no script

The marks say the label in words and the chosen one carries a ✓, so a saved
notebook (no kernel, no colour) still reads which label each item has.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.cards import USEFUL_TONE, VERDICT_TONE, badge, block, details, esc, meta
from selfrag_nb.display.names import chunk_name, short_id
from selfrag_nb.display.tree import Node, h
from selfrag_nb.label_sheet import CHOICES, LabelSheet, SheetChunk, SheetClaim
from selfrag_nb.trace import USEFULNESS_WORDS

_CHUNK_TEXT = 4000


def _word(kind: str, value: str | None) -> str:
    return dict(CHOICES[kind]).get(value or "", "") if value else ""


def marks(kind: str, item: str, current: str | None, what: str) -> Node:
    """The marks that set one item's label; the current one ticked."""
    out = [
        h(
            "span",
            "srnb-lmark srnb-lmark-on" if value == current else "srnb-lmark",
            f"✓ {word}" if value == current else word,
            role="button",
            tabindex=0,
            title=f"label {what}: {word}",
            data_send="label",
            data_kind=kind,
            data_item=item,
            data_value=value,
        )
        for value, word in CHOICES[kind]
    ]
    return h("span", "srnb-lmarks", out, role="group", aria_label=f"label {what}")


def _human(kind: str, current: str | None) -> Node:
    if current is None:
        return h("span", "srnb-lhuman srnb-muted", "your label: none yet")
    return h("span", "srnb-lhuman", "your label: ", h("b", "", _word(kind, current)))


def _chunk(sheet: SheetChunk, current: str | None, n: int) -> Node:
    g = sheet.grade
    name = chunk_name(sheet.ref) if sheet.ref else None
    title = (name["file"] if name else "") or short_id(g.chunk_id)
    path = name["path"] if name else ""
    judge = f"judge: {'relevant' if g.relevant else 'not relevant'} · {g.score}"
    text = block(sheet.text, _CHUNK_TEXT)
    return h(
        "div",
        "srnb-litem",
        h("div", "srnb-lhead", h("b", "", esc(title, 200)), " ", meta(esc(path, 300)) if path else None),
        h("div", "srnb-lrow", badge(judge, "ok" if g.relevant else "bad"), " ", _human("chunk", current)),
        marks("chunk", g.chunk_id, current, f"chunk {title}"),
        details("chunk text", text, key=f"label-chunk-{n}", cls="srnb-ltext") if sheet.text else None,
        title=g.chunk_id,
        data_label_kind="chunk",
    )


def _claim(c: SheetClaim, current: str | None) -> Node:
    verdict = c.claim.verdict
    judge = badge(f"judge: {_word('claim', verdict)}", VERDICT_TONE[verdict])
    evidence = (
        h("div", "srnb-levidence", h("span", "srnb-label", "evidence "), esc(c.evidence, 2000))
        if c.evidence
        else h("div", "srnb-levidence srnb-muted", "no evidence sentence quoted")
    )
    return h(
        "div",
        "srnb-litem",
        h("div", "srnb-lhead", block(c.claim.text, 2000)),
        h("div", "srnb-lrow", judge, " ", _human("claim", current)),
        evidence,
        marks("claim", str(c.index), current, f"claim {c.index + 1}"),
        data_label_kind="claim",
    )


def _answer(sheet: LabelSheet) -> Node:
    u = sheet.usefulness
    judge = (
        badge(f"judge: {u.verdict} · {USEFULNESS_WORDS[u.verdict]}", USEFUL_TONE[u.verdict])
        if u
        else badge("judge: not judged")
    )
    current = sheet.answer_value()
    return h(
        "div",
        "srnb-litem",
        details("answer text", block(sheet.answer_text, 6000), key="label-answer", cls="srnb-ltext"),
        h("div", "srnb-lrow", judge, " ", _human("answer", current)),
        marks("answer", "answer", current, "the answer"),
        data_label_kind="answer",
    )


def label_tree(sheet: LabelSheet) -> Node:
    """The label sheet's view tree (see the module doc)."""
    chunks = [_chunk(c, sheet.chunk_value(c.chunk_id), i) for i, c in enumerate(sheet.chunks)]
    claims = [_claim(c, sheet.claim_value(c.index)) for c in sheet.claims]
    qid = h("code", "", esc(sheet.qid, 200))
    count = meta(f"{sheet.labelled()} of {sheet.size()} labelled", esc(str(sheet.labels.path), 300))
    body: list[Any] = [
        h("div", "srnb-head", h("b", "", "label sheet · question "), qid, " ", count),
        h("div", "srnb-block", esc(sheet.trace.question, 2000)),
        h("h4", "", f"chunks ({len(chunks)})"),
        chunks or h("div", "srnb-muted", "no graded chunks in this trace"),
        h("h4", "", f"claims ({len(claims)})"),
        claims or h("div", "srnb-muted", "no verified claims in this trace"),
        h("h4", "", "answer"),
        _answer(sheet) if sheet.offers_answer else h("div", "srnb-muted", "no answer in this trace"),
    ]
    return h("div", "srnb-root srnb-labels tex2jax_ignore mathjax_ignore", body, data_label_sheet=sheet.qid)


def label_text(sheet: LabelSheet) -> str:
    return (
        f"LabelSheet(question {sheet.qid!r}: {len(sheet.chunks)} chunks, {len(sheet.claims)} claims, "
        f"{'an answer' if sheet.offers_answer else 'no answer'}; {sheet.labelled()} of {sheet.size()} "
        f"labelled in {sheet.labels.path})"
    )


def _widget(sheet: LabelSheet) -> Any:
    from selfrag_nb.display.label_widget import LabelWidget

    return LabelWidget(sheet)


faces.register(LabelSheet, text=label_text, tree=label_tree, widget=_widget)
