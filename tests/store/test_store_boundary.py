"""Ingest's boundary: what a folder may make the knowledge base store.

symbolic links   leave the folder -> skipped with the target named; stay inside -> read
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.loaders import LOADERS, Document, Loaded, load_file


def _kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.open(tmp_path / "kb", embedder="hashing")


def test_links_leaving_the_folder_are_skipped_and_links_inside_are_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("TOPSECRET payroll figures", encoding="utf-8")
    (outside / "deep" / "key.md").write_text("# Key\n\nTOPSECRET signing key\n", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub" / "inner").mkdir(parents=True)
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    (docs / "abs.txt").symlink_to(outside / "secret.txt")  # absolute
    (docs / "sub" / "inner" / "rel.txt").symlink_to("../../../outside/secret.txt")  # relative ../ chain
    (docs / "sub" / "hop.md").symlink_to("../hop2.md")  # a chain: inside, then out
    (docs / "hop2.md").symlink_to(outside / "deep" / "key.md")
    (docs / "etc.txt").symlink_to("/etc/hostname")
    (docs / "outdir").symlink_to(outside, target_is_directory=True)
    (docs / "twin.md").symlink_to("good.md")  # stays inside: read
    (docs / "sub" / "up.md").symlink_to("../good.md")  # stays inside through ../
    kb = _kb(tmp_path)
    report = kb.ingest(docs)
    skipped = dict(report.skipped)
    leaving = {
        "abs.txt": outside / "secret.txt",
        "sub/inner/rel.txt": outside / "secret.txt",
        "sub/hop.md": outside / "deep" / "key.md",
        "hop2.md": outside / "deep" / "key.md",
        "etc.txt": Path("/etc/hostname").resolve(),
        "outdir": outside,
    }
    for source, target in leaving.items():
        assert skipped.get(source) == f"symbolic link leaves the ingested folder (-> {target.resolve()})", (
            source,
            report.skipped,
        )
    assert sorted(report.added) == ["good.md", "sub/up.md", "twin.md"]
    assert not [h for h in kb.chunks() if "TOPSECRET" in h.text]
    assert {h.source for h in kb.search("refunds within 30 days", k=5)} == {"good.md", "sub/up.md", "twin.md"}


def test_root_given_through_a_link_still_bounds_its_links(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET", encoding="utf-8")
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    (real / "b.txt").symlink_to(tmp_path / "secret.txt")
    (real / "c.txt").symlink_to(real / "a.md")  # absolute, through the real path
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    report = _kb(tmp_path).ingest(alias)
    assert sorted(report.added) == ["a.md", "c.txt"]
    assert dict(report.skipped)["b.txt"].startswith("symbolic link leaves the ingested folder")
    assert os.path.islink(real / "b.txt")


def test_records_with_lone_surrogates_are_skipped_and_the_rest_stored(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    lines = [
        '{"id": "ok1", "text": "plain record"}',
        '{"id": "a", "text": "x \\ud800 y"}',  # the JSON escape, as the file holds it
        '{"id": "b", "text": "fine", "title": "t \\udfff"}',
        '{"id": "c", "text": "fine", "tags": ["ok", "\\udc80"]}',
        '{"id": "d\\ud834", "text": "fine"}',
        '{"id": "e", "text": "fine", "k\\ud800": 1}',
        '{"id": "pair", "text": "emoji \\ud83d\\ude00 is a valid pair"}',
    ]
    (docs / "recs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fd = os.open(os.fsencode(docs) + b"/bad\xff.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Bad name\n\nbody\n")
    os.close(fd)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(docs)
    assert sorted(report.added) == ["good.md", "recs.jsonl#ok1", "recs.jsonl#pair"]
    assert dict(report.skipped) == {
        "recs.jsonl#2": "line 2: text contains a lone surrogate (U+D800)",
        "recs.jsonl#3": "line 3: title contains a lone surrogate (U+DFFF)",
        "recs.jsonl#4": "line 4: tags[1] contains a lone surrogate (U+DC80)",
        "recs.jsonl#5": "line 5: id contains a lone surrogate (U+D834)",
        "recs.jsonl#6": "line 6: a key of the record contains a lone surrogate (U+D800)",
        "bad\\udcff.md": "file name is not valid UTF-8: 'bad\\udcff.md'",
    }
    for source, reason in report.skipped:  # printable: a CLI or a log can write them
        (source + reason).encode("utf-8")
    assert [h.text for h in kb.chunks("recs.jsonl#pair")] == ["emoji \U0001f600 is a valid pair"]
    again = kb.ingest(docs)
    assert again.added == []
    assert sorted(again.unchanged) == sorted(report.added)


def test_a_file_named_outside_utf8_is_skipped_when_ingested_alone(tmp_path: Path) -> None:
    path = os.fsencode(tmp_path) + b"/caf\xe9.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"latin-1 named file")
    os.close(fd)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(os.fsdecode(path))
    assert report.added == []
    assert report.skipped == [("caf\\udce9.txt", "file name is not valid UTF-8: 'caf\\udce9.txt'")]


def test_hostile_but_encodable_characters_are_stored_as_written(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "Control \x01\x07\x1b[31m red \x7f; quotes '\"` ; <script>alert(1)</script> [b]x[/b] раураl"
    (docs / "hostile.txt").write_text(body, encoding="utf-8")
    (docs / "fm.md").write_text(
        f"---\ntitle: 'T \x1b[1m \"q\" <i>'\nnote: раураl \x07\n---\n{body}\n", encoding="utf-8"
    )
    rec = {"id": "r\x01", "text": body + " \x00 nul", "title": "<b>t</b>", "note": ["\x1b", "раураl"]}
    (docs / "r.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(docs)
    assert report.skipped == []
    stored = {h.source: h for h in kb.chunks()}
    assert stored["hostile.txt"].text == body
    assert stored["fm.md"].text == body
    assert stored["fm.md"].title == 'T \x1b[1m "q" <i>'
    assert stored["fm.md"].metadata == {"note": "раураl \x07"}
    assert stored["r.jsonl#r\x01"].text == body + " \x00 nul"
    assert stored["r.jsonl#r\x01"].metadata == {"note": ["\x1b", "раураl"]}
    hits = kb.search("раураl quotes", k=5, mode="fts")
    assert {h.source for h in hits} == set(stored)


def test_a_document_with_a_surrogate_from_any_loader_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loader (a PDF text layer) can hand back a surrogate too: load_file refuses it.
    path = tmp_path / "x.surr"
    path.write_text("x", encoding="utf-8")

    def surrogate_loader(p: Path, source: str) -> Loaded:
        return [Document(source=source, text="a \udc81 b", title="t", kind="text")], []

    monkeypatch.setitem(LOADERS, ".surr", surrogate_loader)  # the registry for new formats
    assert load_file(path, "x.surr") == ([], [("x.surr", "text contains a lone surrogate (U+DC81)")])


def test_headings_without_text_are_skipped_on_every_ingest(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    (docs / "heads.md").write_text("# Title\n\n## Section\n", encoding="utf-8")
    (docs / "fm.md").write_text("---\ntitle: T\n---\n# Only\n\n### a heading\n", encoding="utf-8")
    (docs / "heads.html").write_text("<html><body><h1>Title</h1><h2>Sub</h2></body></html>", encoding="utf-8")
    # a fenced "# comment" is text, not a heading
    (docs / "fence.md").write_text("# Shell\n\n```\n# comment\n```\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    for _ in range(2):
        report = kb.ingest(docs)
        assert sorted(dict(report.skipped).items()) == [
            ("fm.md", "no text under the headings"),
            ("heads.html", "no text under the headings"),
            ("heads.md", "no text under the headings"),
        ]
        assert sorted(report.added + report.unchanged) == ["fence.md", "good.md"]
    assert report.added == []
    assert kb.sources() == ["fence.md", "good.md"]
