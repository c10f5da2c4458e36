"""Ingest's boundary under hostile names and fields: no bad item aborts a folder.

    folder of .md (front matter title + note), .txt and .jsonl (id, text, title,
    note) files whose names, values and bodies mix lone surrogates, quotes, rich
    / HTML / Markdown markup, control characters and Cyrillic look-alike letters
      -> ingest never raises
      -> every file is stored or in report.skipped with a reason (a JSONL file:
         every record line is one or the other)
      -> what is stored reads back as loaded: chunk text, title, metadata, and
         a vector search for a chunk's text returns that same text

Lone surrogates reach a file as bytes that are not UTF-8 (the whole file is
skipped), as JSON "\\ud800" escapes (that record is skipped) or as file name
bytes that are not UTF-8 (that file is skipped).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from cases import record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfrag_nb.store.chunking import chunk_text
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.loaders import load_tree, printable
from selfrag_nb.text import tokenize

PIECES = [
    "\ud800",
    "\udcff",
    "\udfff",
    '"',
    "'",
    "`",
    "<script>alert(1)</script>",
    "[red]rich[/red]",
    "**bold** _x_",
    "[link](javascript:x)",
    "# ",
    "---",
    "\x01",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\x0b",
    "\t",
    "раураl",  # Cyrillic р, а, у look like Latin p, a, y
    "Аdmin",  # Cyrillic А
    "refund",
    "policy",
    " ",
    "é",
    "中文",
]

hostile = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)


def _name_bytes(value: str) -> bytes:
    """A file name holding ``value``: a lone surrogate becomes bytes that are not UTF-8."""
    cleaned = value.replace("/", "_").replace("\x00", "_")
    return cleaned.encode("utf-8", "surrogatepass")


def _write(folder: Path, name: str, data: bytes) -> str:
    """Write ``data`` under a raw-bytes name; returns the name as the loader sees it."""
    raw = b"f" + _name_bytes(name)  # "f": never a hidden file
    fd = os.open(os.fsencode(folder) + b"/" + raw, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return os.fsdecode(raw)


def _encode(text: str) -> bytes:
    # surrogatepass: a lone surrogate goes into the file as bytes that are not UTF-8
    return text.encode("utf-8", "surrogatepass")


@st.composite
def folders(draw: st.DrawFn) -> list[tuple[str, str, bytes, int]]:
    """(name, suffix, bytes, records): records is the JSONL line count, else 0."""
    files = []
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from([".md", ".txt", ".jsonl"]))
        name = f"{i}{draw(hostile)}{kind}"
        if kind == ".md":
            data = _encode(
                f"---\ntitle: {draw(hostile)}\nnote: {draw(hostile)}\n---\n{draw(hostile)} words\n"
            )
            files.append((name, kind, data, 0))
        elif kind == ".txt":
            files.append((name, kind, _encode(f"{draw(hostile)} text {draw(hostile)}"), 0))
        else:
            recs = [
                {
                    "id": f"{n}{draw(hostile)}",
                    "text": draw(hostile),
                    "title": draw(hostile),
                    "note": [draw(hostile)],
                }
                for n in range(draw(st.integers(1, 3)))
            ]
            # ensure_ascii: a lone surrogate becomes a JSON "\ud800" escape, as in a real file
            data = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in recs).encode()
            files.append((name, kind, data, len(recs)))
    return files


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(folders())
def test_hostile_items_are_stored_exactly_or_skipped_with_a_reason(
    files: list[tuple[str, str, bytes, int]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        written = [(_write(docs, name, data), records) for name, _, data, records in files]
        kb = KnowledgeBase.open(Path(tmp) / "kb", embedder="hashing")
        report = kb.ingest(docs)  # never raises for a bad item
        stored = [*report.added, *report.unchanged, *report.updated]
        for source, reason in report.skipped:
            assert reason.strip(), source
            (source + reason).encode("utf-8")  # printable as reported
        skipped = {s for s, _ in report.skipped}
        for source, records in written:
            shown = printable(source)
            if shown in skipped:
                continue
            if records:
                mine = [s for s in stored if s.startswith(source + "#")]
                theirs = [s for s in skipped if s.startswith(shown + "#")]
                assert len(mine) + len(theirs) == records, (source, report)
            else:
                assert source in stored, (source, report)

        loaded = {d.source: d for d in load_tree(docs)[0]}
        chunks = kb.chunks()
        assert {h.source for h in chunks} == set(stored)
        for source in stored:
            doc = loaded[source]
            mine = [h for h in chunks if h.source == source]
            expected = chunk_text(doc.text, headings=doc.heading_style, max_chars=kb.max_chars)
            assert [h.text for h in mine] == [c.text for c in expected]
            assert {h.title for h in mine} == {doc.title}
            assert all(h.metadata == doc.metadata for h in mine)
            if doc.kind != "markdown":  # no heading lines dropped: every character kept
                assert "".join("".join(h.text for h in mine).split()) == "".join(doc.text.split())
            if tokenize(mine[0].text):  # a text of no words ('"') has no direction to search by
                hit = kb.search(mine[0].text, k=50, mode="vector")
                assert any(h.chunk_id == mine[0].chunk_id and h.text == mine[0].text for h in hit)
        kb.close()
    record("ingest boundary: hostile folders", 1)
    record("ingest boundary: hostile files", len(files))
