from __future__ import annotations

from pathlib import Path

import pytest
from pdf_docs import one_page_pdf

from selfrag_nb.store.loaders import load_file, load_tree, parse_front_matter


def _pdf(text: str | None) -> bytes:
    """A minimal one-page PDF, with a Helvetica text line when ``text`` is given."""
    return one_page_pdf(f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode() if text else b"")


def test_front_matter_values() -> None:
    meta, body = parse_front_matter(
        "---\ntitle: 'Quoted: title'\nroles: [staff, hr]\nversion: 3\nstatus: superseded\nempty: []\n---\n# Body\n"
    )
    assert meta == {
        "title": "Quoted: title",
        "roles": ["staff", "hr"],
        "version": 3,
        "status": "superseded",
        "empty": [],
    }
    assert body == "# Body\n"
    assert parse_front_matter("# no front matter\n") == ({}, "# no front matter\n")
    with pytest.raises(ValueError, match="no closing"):
        parse_front_matter("---\ntitle: x\n# never closed\n")
    with pytest.raises(ValueError, match="not 'key: value'"):
        parse_front_matter("---\njust words\n---\n")


def test_markdown_acl_title_and_metadata(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    p.write_text("---\nroles: [hr]\nusers: ana\ntenant: acme\nversion: 2\n---\n# Salary bands\n\nText.\n")
    (doc,), skipped = load_file(p, "a.md")
    assert skipped == []
    assert doc.title == "Salary bands"  # from the first H1
    assert doc.roles == ("hr",)
    assert doc.users == ("ana",)
    assert doc.tenant == "acme"
    assert doc.metadata == {"version": 2}
    assert doc.kind == "markdown"
    assert doc.text.startswith("# Salary bands")
    q = tmp_path / "plain.md"
    q.write_text("No heading here.\n")
    (doc2,), _ = load_file(q, "plain.md")
    assert doc2.title == "plain"
    assert doc2.roles is None  # not stated: the store applies the public default


def test_html_text_title_and_headings(tmp_path: Path) -> None:
    p = tmp_path / "c.html"
    p.write_text(
        "<html><head><title> Contact  us </title><style>.x{}</style><script>var s='NOPE';</script></head>"
        "<body><h1>Contact</h1><p>Email &amp; phone.</p><noscript>NOPE</noscript><h2>Hours</h2><p>9 to 5</p></body></html>"
    )
    (doc,), _ = load_file(p, "c.html")
    assert doc.title == "Contact us"
    assert "NOPE" not in doc.text
    assert ".x{}" not in doc.text
    assert "Email & phone." in doc.text
    assert "# Contact" in doc.text
    assert "## Hours" in doc.text
    q = tmp_path / "h1.html"
    q.write_text("<body><h1>Only heading</h1><p>text</p></body>")
    (doc2,), _ = load_file(q, "h1.html")
    assert doc2.title == "Only heading"


def test_jsonl_one_document_per_line(tmp_path: Path) -> None:
    p = tmp_path / "faq.jsonl"
    p.write_text(
        '{"id": "q1", "text": "First answer.", "title": "Q1", "roles": ["staff"], "topic": "x"}\n'
        '{"text": "Second answer."}\n'
        "\n"
        "not json\n"
        '{"id": "q3"}\n'
        "[1, 2]\n"
        '{"id": "q1", "text": "duplicate id"}\n'
    )
    docs, skipped = load_file(p, "faq.jsonl")
    assert [d.source for d in docs] == ["faq.jsonl#q1", "faq.jsonl#2"]
    assert docs[0].title == "Q1"
    assert docs[0].roles == ("staff",)
    assert docs[0].metadata == {"topic": "x"}
    reasons = dict(skipped)
    assert "not JSON" in reasons["faq.jsonl#4"]
    assert "no 'text'" in reasons["faq.jsonl#5"]
    assert "not a JSON object" in reasons["faq.jsonl#6"]
    assert "repeats id" in reasons["faq.jsonl#q1"]


def test_pdf_text_layer(tmp_path: Path) -> None:
    p = tmp_path / "policy.pdf"
    p.write_bytes(_pdf("Refunds within thirty days"))
    (doc,), skipped = load_file(p, "policy.pdf")
    assert skipped == []
    assert "Refunds within thirty days" in doc.text
    assert doc.metadata == {"pages": 1}
    blank = tmp_path / "scan.pdf"
    blank.write_bytes(_pdf(None))
    assert load_file(blank, "scan.pdf") == ([], [("scan.pdf", "PDF has no text layer")])
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"this is not a pdf at all")
    docs, skipped = load_file(broken, "broken.pdf")
    assert docs == []
    assert "unreadable PDF" in skipped[0][1]


def test_rst_loads_as_plain_text(tmp_path: Path) -> None:
    p = tmp_path / "README.rst"
    p.write_text("Title\n=====\n\n.. image:: https://example.org/b.svg\n\nUse ``pip install x``.\n")
    (doc,), skipped = load_file(p, "README.rst")
    assert skipped == []
    assert doc.kind == "text"
    assert doc.title == "Title"  # the first section title, as docutils makes it the document's
    assert doc.heading_style == "underline"
    assert doc.text == "Title\n=====\n\n.. image:: https://example.org/b.svg\n\nUse ``pip install x``."
    docs, skipped = load_tree(tmp_path)
    assert [d.source for d in docs] == ["README.rst"]
    assert skipped == []


def test_tree_skips_bad_files_and_loads_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "ok.md").write_text("# Fine\n\nGood text.\n")
    (root / "sub" / "ok.txt").write_text("Also fine.\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n")
    (root / "nul.txt").write_bytes(b"abc\x00def")
    (root / "empty.md").write_text("  \n")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (root / "fm_only.md").write_text("---\ntitle: x\n---\n")
    (root / "bad_fm.md").write_text("---\ntitle x\n---\nbody\n")
    (root / ".hidden.md").write_text("# hidden\n")
    (root / ".git").mkdir()
    (root / ".git" / "config.txt").write_text("hidden\n")
    docs, skipped = load_tree(root)
    assert sorted(d.source for d in docs) == ["ok.md", "sub/ok.txt"]
    reasons = dict(skipped)
    assert reasons["image.png"] == "unsupported file type '.png'"
    assert reasons["nul.txt"] == "binary file"
    assert reasons["empty.md"] == "empty file"
    assert reasons["latin1.txt"].startswith("not UTF-8 text")
    assert reasons["fm_only.md"].startswith("empty file")
    assert reasons["bad_fm.md"].startswith("bad front matter")
    assert len(skipped) == 6


def test_single_file_and_missing_path(tmp_path: Path) -> None:
    p = tmp_path / "one.txt"
    p.write_text("One file.\n")
    docs, _ = load_tree(p)
    assert [d.source for d in docs] == ["one.txt"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_tree(tmp_path / "missing")
