"""labels.annotate(trace, qid): label chunks, claims and the answer from a view.

The rules (docs/prompt_lab.md, "Labelling from a view"):
  - a mark's message for a chunk on the sheet writes exactly that label to the JSONL file;
  - a message for anything the sheet did not offer (a forged chunk id, a claim
    position past the sheet, a value not offered) writes nothing;
  - after a label is written the widget's tree marks it (✓ and srnb-lmark-on);
  - chunk and claim text from the data is escaped in the static face;
  - a blank qid is a clear InputError.
Real parts: the sample knowledge base answered by the offline model, a real
labels file in a tmp folder, the real widget's message path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import InputError
from selfrag_nb.trace import Claim, Retrieval, Support, Trace

QUESTION = "What is the refund window for a Pro subscription?"


@pytest.fixture(scope="module")
def trace() -> Trace:
    kb = sr.KnowledgeBase.sample()
    t = sr.SelfRAG(kb).ask(QUESTION, user=sr.User("ana"))
    assert t.grades, "the sample answer is graded"
    assert t.support, "the sample answer is verified"
    assert t.grades.items
    assert t.support.claims
    return t


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _marks(node: Any) -> list[dict[str, Any]]:
    """Every mark (data-send) in a widget's JSON tree."""
    out = []
    if isinstance(node, dict):
        if "data-send" in node.get("a", {}):
            out.append(node)
        for k in node.get("k", []):
            out.extend(_marks(k))
    return out


def _text(node: Any) -> str:
    if isinstance(node, str):
        return node
    return "".join(_text(k) for k in node.get("k", []))


def test_a_chunk_message_writes_exactly_that_label(trace: Trace, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    sheet = labels.annotate(trace, "refund-pro")
    chunk_id = trace.grades.items[1].chunk_id  # type: ignore[union-attr]
    sheet.apply({"send": "label", "kind": "chunk", "item": chunk_id, "value": "no"})
    lines = _lines(labels.path)
    assert len(lines) == 1
    line = lines[0]
    assert (line["kind"], line["id"], line["chunk_id"], line["relevant"]) == (
        "chunk",
        "refund-pro",
        chunk_id,
        False,
    )
    # a fresh reader of the file sees the same label
    again = sr.Labels(labels.path).get_chunk("refund-pro", chunk_id)
    assert again is not None
    assert again.relevant is False


def test_a_claim_message_writes_the_claim_text_the_sheet_showed(trace: Trace, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    sheet = labels.annotate(trace, "refund-pro")
    sheet.apply({"send": "label", "kind": "claim", "item": "1", "value": "partial"})
    (line,) = _lines(labels.path)
    assert line["kind"] == "claim"
    assert line["support"] == "partial"
    assert line["claim"] == trace.support.claims[1].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "msg",
    [
        {"send": "label", "kind": "chunk", "item": "not-a-chunk-on-the-sheet", "value": "no"},
        {"send": "label", "kind": "chunk", "item": "", "value": "yes"},
        {"send": "label", "kind": "claim", "item": "99", "value": "partial"},
        {"send": "label", "kind": "claim", "item": "-1", "value": "partial"},
        {"send": "label", "kind": "claim", "item": "0", "value": "maybe"},
        {"send": "label", "kind": "answer", "item": "answer", "value": "true"},
        {"send": "label", "kind": "note", "item": "x", "value": "yes"},
        {"send": "other", "kind": "chunk", "item": "x", "value": "no"},
        "not a dict",
    ],
)
def test_a_message_for_something_not_on_the_sheet_writes_nothing(
    trace: Trace, tmp_path: Path, msg: Any, caplog: pytest.LogCaptureFixture
) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    sheet = labels.annotate(trace, "refund-pro")
    with caplog.at_level("WARNING"):
        assert sheet.apply(msg) is None
    assert _lines(labels.path) == []
    assert "message ignored" in caplog.text


def test_the_widget_writes_the_label_and_marks_it(trace: Trace, tmp_path: Path) -> None:
    from selfrag_nb.display.faces import widget

    labels = sr.Labels(tmp_path / "labels.jsonl")
    sheet = labels.annotate(trace, "refund-pro")
    w = widget(sheet)
    chunk_id = trace.grades.items[0].chunk_id  # type: ignore[union-attr]
    before = [m for m in _marks(w.tree) if m["a"]["data-item"] == chunk_id]
    assert [m["a"]["data-value"] for m in before] == ["yes", "no"]
    assert not any("srnb-lmark-on" in m["c"] for m in before)
    # the message path a browser click takes (ipywidgets' custom message handler)
    w._handle_custom_msg({"send": "label", "kind": "chunk", "item": chunk_id, "value": "no"}, [])
    assert _lines(labels.path)[-1]["chunk_id"] == chunk_id
    after = {m["a"]["data-value"]: m for m in _marks(w.tree) if m["a"]["data-item"] == chunk_id}
    assert "srnb-lmark-on" in after["no"]["c"]
    assert _text(after["no"]) == "✓ not relevant"
    assert "srnb-lmark-on" not in after["yes"]["c"]
    # a forged message leaves the file and the tree as they were
    tree = w.tree
    w._handle_custom_msg({"send": "label", "kind": "chunk", "item": "forged", "value": "yes"}, [])
    assert len(_lines(labels.path)) == 1
    assert w.tree == tree


def test_the_static_face_shows_labels_as_text_and_no_script(trace: Trace, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    claim = trace.support.claims[0].text  # type: ignore[union-attr]
    labels.claim("refund-pro", claim, support="unsupported")
    page = labels.annotate(trace, "refund-pro").to_html()
    assert "<script" not in page
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page)
    assert "✓ not supported" in page
    assert page.count('class="srnb-lmark srnb-lmark-on"') == 1


def _hostile(trace: Trace) -> Trace:
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    t = trace.model_copy(deep=True)
    records: list[Any] = []
    for rec in t.records:
        new: Any = rec
        if isinstance(rec, Retrieval):
            hits = [rec.hits[0].model_copy(update={"text": evil + " chunk"}), *rec.hits[1:]]
            new = rec.model_copy(update={"hits": hits})
        elif isinstance(rec, Support):
            first = rec.claims[0].model_copy(update={"text": evil + " claim"})
            new = rec.model_copy(update={"claims": [first, *rec.claims[1:]]})
        records.append(new)
    t.records = records
    return t


def test_hostile_chunk_and_claim_text_is_escaped(trace: Trace, tmp_path: Path) -> None:
    t = _hostile(trace)
    assert isinstance(t.support.claims[0], Claim)  # type: ignore[union-attr]
    sheet = sr.Labels(tmp_path / "labels.jsonl").annotate(t, "refund-pro")
    page = sheet.to_html()
    assert "<script" not in page
    assert "<img" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 2  # the chunk text and the claim


@pytest.mark.parametrize("qid", ["", "   ", None])
def test_annotate_needs_a_question_id(trace: Trace, tmp_path: Path, qid: Any) -> None:
    with pytest.raises(InputError, match="qid"):
        sr.Labels(tmp_path / "labels.jsonl").annotate(trace, qid)


def test_the_sheet_has_every_face() -> None:
    import selfrag_nb.display  # noqa: F401 - registers the faces
    from selfrag_nb.display.faces import faces_of
    from selfrag_nb.label_sheet import LabelSheet

    assert faces_of(LabelSheet) == {"text", "tree", "html", "widget"}


def test_a_label_the_file_cannot_take_leaves_the_view_and_says_why(
    trace: Trace, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from selfrag_nb.display.faces import widget

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the labels folder should be", encoding="utf-8")
    w = widget(sr.Labels(blocker / "labels.jsonl").annotate(trace, "refund-pro"))
    tree = w.tree
    chunk_id = trace.grades.items[0].chunk_id  # type: ignore[union-attr]
    with caplog.at_level("ERROR"):
        w._handle_custom_msg({"send": "label", "kind": "chunk", "item": chunk_id, "value": "no"}, [])
    assert w.tree == tree
    assert "label not written" in caplog.text
