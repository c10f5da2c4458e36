"""Metadata that names access fails closed; metadata blocks are parsed or the
file is skipped; no single file aborts a folder.

The rules (docs/access-control.md): a document declares access only with the
top-level keys roles / users / tenant. Anything that looks like access control
but is not read as such would leave a restricted document public, so the file
(or JSONL record) is skipped with a reason naming the key or the problem.
Real files in tmp folders, the real loaders, a real LanceDB for the end-to-end
checks.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from pdf_docs import one_page_pdf

import selfrag_nb as sr
from selfrag_nb.store.loaders import LOADERS, Document, Loaded, load_tree

BODY_MD = "## Budget\n\nThe zebra budget is 4.2 million.\n"


def _load(root: Path, **kw: object) -> tuple[dict[str, Document], dict[str, str]]:
    docs, skipped = load_tree(root, **kw)  # type: ignore[arg-type]
    return {d.source: d for d in docs}, dict(skipped)


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "docs"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_bytes(text.encode("utf-8"))
    return root


# --------------------------------------------------------------------------- nested keys and values


@pytest.mark.parametrize(
    "record",
    [
        {"metadata": {"roles": ["finance"]}},
        {"properties": {"tenant": "acme"}},
        {"meta": {"sharing": {"users": ["bob"]}}},
        {"blocks": [{"kind": "note"}, {"allowed_users": ["bob"]}]},
        {"extra": {"Access": "finance only"}},
    ],
)
def test_nested_access_keys_in_jsonl_are_refused(tmp_path: Path, record: dict[str, object]) -> None:
    lines = [
        {"id": "bad", "text": "zebra secret", **record},
        {"id": "ok", "text": "zebra fine", "x": {"a": 1}},
    ]
    root = _folder(tmp_path, {"recs.jsonl": "\n".join(json.dumps(r) for r in lines) + "\n"})
    docs, skipped = _load(root)
    assert set(docs) == {"recs.jsonl#ok"}
    assert docs["recs.jsonl#ok"].metadata == {"x": {"a": 1}}
    assert "access control" in skipped["recs.jsonl#bad"]
    assert "top-level" in skipped["recs.jsonl#bad"]


@pytest.mark.parametrize(
    ("front", "key"),
    [
        ("sensitivity: confidential", "sensitivity"),
        ("label: restricted", "label"),
        ("tags: [howto, Confidential]", "tags"),
        ("marking: 'Internal Use Only'", "marking"),
    ],
)
def test_classification_markers_are_refused(tmp_path: Path, front: str, key: str) -> None:
    root = _folder(
        tmp_path,
        {
            "a.md": f"---\n{front}\n---\n\n{BODY_MD}",
            "b.md": f"---\ndescription: how a confidential process is audited\n---\n\n{BODY_MD}",
        },
    )
    docs, skipped = _load(root)
    assert set(docs) == {"b.md"}
    assert f"'{key}" in skipped["a.md"]
    assert "access control" in skipped["a.md"]


# --------------------------------------------------------------------------- strict mode


def test_strict_mode_allows_only_the_named_keys(tmp_path: Path) -> None:
    root = _folder(
        tmp_path,
        {
            "ok.md": f"---\ntitle: T\nauthor: ana\nroles: [hr]\n---\n\n{BODY_MD}",
            "extra.md": f"---\nauthor: ana\nversion: 2\n---\n\n{BODY_MD}",
            "plain.md": BODY_MD,
            "recs.jsonl": '{"id": "a", "text": "zebra", "author": "x"}\n{"id": "b", "text": "zebra", "stage": 1}\n',
        },
    )
    # a one-shot iterator: read once, used for every file
    docs, skipped = _load(root, metadata_keys=iter(["author"]))
    assert set(docs) == {"ok.md", "plain.md", "recs.jsonl#a"}
    assert set(skipped) == {"extra.md", "recs.jsonl#b"}
    assert "'version'" in skipped["extra.md"]
    assert "metadata_keys" in skipped["extra.md"]
    assert "'stage'" in skipped["recs.jsonl#b"]
    # without strict mode both load; an access-looking key is refused either way
    assert set(_load(root)[0]) == set(docs) | {"extra.md", "recs.jsonl#b"}
    (root / "own.md").write_text(f"---\nowner: ana\n---\n\n{BODY_MD}", encoding="utf-8")
    assert "access control" in _load(root, metadata_keys=["owner"])[1]["own.md"]


def test_strict_mode_argument_is_checked(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"a.md": BODY_MD})
    with pytest.raises(sr.InputError, match="metadata_keys"):
        load_tree(root, metadata_keys="author")  # a str would be read letter by letter
    with pytest.raises(sr.InputError, match="metadata_keys"):
        load_tree(root, metadata_keys=["author", ""])


# --------------------------------------------------------------------------- metadata blocks

HTML_BODY = "<html><body><h2>Budget</h2><p>The zebra budget is 4.2 million.</p></body></html>\n"
TEXT_BODY = "The zebra budget is 4.2 million.\n"
BODIES = {".md": BODY_MD, ".txt": TEXT_BODY, ".rst": TEXT_BODY, ".html": HTML_BODY}

# Blocks that must be PARSED: the document is restricted to finance.
PARSED = {
    "blank_line": "\n\n---\nroles: [finance]\n---\n",
    "zero_width_space": "\u200b---\nroles: [finance]\n---\n",
    "bom": "\ufeff---\nroles: [finance]\n---\n",
    "word_joiner": "\u2060---\nroles: [finance]\n---\n",
    "line_separators": "---\u2028roles: [finance]\u2028---\u2029",
    "carriage_returns": "---\rroles: [finance]\r---\r",
    "toml": '+++\nroles = ["finance"]\ndate = 2024-05-01\n+++\n',
    "html_comment": "<!-- roles: [finance] -->\n",
    "html_comment_lines": "<!--\nroles: [finance]\ntitle: Budget\n-->\n",
}
# Blocks that cannot be read: the file is skipped.
UNREAD = {
    "four_dashes": "----\nroles: [finance]\n----\n",
    "dashes_yaml": "--- yaml\nroles: [finance]\n---\n",
    "unterminated": "---\nroles: [finance]\n",
    "second_block": "---\ntitle: T\n---\n---\nroles: [finance]\n---\n",
    "bad_toml": "+++\nroles = [finance\n+++\n",
    "prose_comment": "<!--\nroles: [finance]\nOnly the finance team may read this page.\n-->\n",
    "unterminated_comment": "<!-- roles: [finance]\n",
    "multimarkdown": "Roles: finance\nTitle: Budget\n\n",
    "rst_field": ":roles: finance\n\n",
    "nested_yaml": "---\nroles:\n  - finance\n---\n",
    "flow_mapping": "---\nmeta: {roles: [finance]}\n---\n",
}


@pytest.mark.parametrize("suffix", list(BODIES))
def test_metadata_blocks_are_parsed(tmp_path: Path, suffix: str) -> None:
    root = _folder(tmp_path, {f"{name}{suffix}": block + BODIES[suffix] for name, block in PARSED.items()})
    docs, skipped = _load(root)
    assert skipped == {}
    assert len(docs) == len(PARSED)
    for source, doc in docs.items():
        assert doc.roles == ("finance",), source
        assert "roles" not in doc.text, (source, doc.text)
        assert "finance" not in doc.text, (source, doc.text)
        assert "zebra budget" in doc.text, source
    assert docs[f"toml{suffix}"].metadata == {"date": "2024-05-01"}


@pytest.mark.parametrize("suffix", list(BODIES))
def test_unread_metadata_blocks_skip_the_file(tmp_path: Path, suffix: str) -> None:
    files = {f"{name}{suffix}": block + BODIES[suffix] for name, block in UNREAD.items()}
    files[f"fine{suffix}"] = BODIES[suffix]
    docs, skipped = _load(_folder(tmp_path, files))
    assert set(docs) == {f"fine{suffix}"}
    assert set(skipped) == set(files) - {f"fine{suffix}"}
    assert all(reason.startswith("bad front matter") for reason in skipped.values()), skipped


def test_ordinary_tops_of_files_still_load(tmp_path: Path) -> None:
    files = {
        "banner.txt": "----------\n README\n----------\n\nThe zebra tool.\n",
        "overline.rst": "-----------------\nAPI: Reference\n-----------------\n\nThe zebra API.\n",
        "lint.md": "<!-- markdownlint-disable MD013 -->\n# Zebra\n\nText.\n",
        "guide.txt": "User guide: how to install the zebra tool\n\nRun it.\n",
        "note.txt": "Note: the zebra is striped\n\nMore.\n",
        "page.html": '<!DOCTYPE html>\n<html lang="en"><head><meta name="viewport" content="w"></head>'
        "<body><p>The zebra.</p></body></html>\n",
    }
    docs, skipped = _load(_folder(tmp_path, files))
    assert skipped == {}
    assert set(docs) == set(files)
    assert all(d.roles is None for d in docs.values())


def test_html_meta_tags_naming_access_skip_the_page(tmp_path: Path) -> None:
    page = '<html><head><meta name="roles" content="finance"></head><body><p>The zebra.</p></body></html>\n'
    docs, skipped = _load(_folder(tmp_path, {"a.html": page}))
    assert docs == {}
    assert "<meta name='roles'>" in skipped["a.html"]


def test_unread_blocks_never_reach_public_search(tmp_path: Path) -> None:
    files = {f"{n}{s}": b + BODIES[s] for s in BODIES for n, b in {**PARSED, **UNREAD}.items()}
    root = _folder(tmp_path, files)
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(root)
    assert len(report.added) == len(PARSED) * len(BODIES)
    assert list(kb.search("zebra budget", k=100, mode="fts")) == []  # anonymous: nothing is public
    finance = kb.search("zebra budget", k=100, mode="fts", user=sr.User("f", roles=["finance"]))
    assert {h.source for h in finance} == set(report.added)


# --------------------------------------------------------------------------- ACL names with a comma


@pytest.mark.parametrize(
    "front",
    ["roles: finance, hr", 'roles: "finance, hr"', "roles: [finance, 'hr, legal']", "users: ana, bob"],
)
def test_an_acl_name_with_a_comma_skips_the_file(tmp_path: Path, front: str) -> None:
    root = _folder(
        tmp_path,
        {
            "a.md": f"---\n{front}\n---\n\n{BODY_MD}",
            "r.jsonl": '{"id": "x", "text": "zebra", "roles": "finance, hr"}\n',
            "t.jsonl": '{"id": "x", "text": "zebra", "tenant": "acme, globex"}\n',
        },
    )
    docs, skipped = _load(root)
    assert docs == {}
    assert "write a list [" in skipped["a.md"], skipped
    assert "write a list [finance, hr]" in skipped["r.jsonl#x"]
    assert "comma" in skipped["t.jsonl#x"]


# --------------------------------------------------------------------------- no file aborts a folder


def _bomb_pdf(expanded: int) -> bytes:
    """A one-page PDF whose FlateDecode content stream expands to ``expanded`` bytes."""
    comp = zlib.compressobj(9)
    parts = [comp.compress(b"BT /F1 18 Tf 72 720 Td (Bomb) Tj ET\n")]
    block = b" " * (1 << 20)
    parts += [comp.compress(block) for _ in range(expanded // len(block))]
    stream = b"".join(parts) + comp.flush()
    return one_page_pdf(stream, flate=True)


def test_a_decompression_bomb_pdf_is_skipped_and_the_folder_loads(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"ok.md": BODY_MD})
    bomb = _bomb_pdf(200 << 20)  # 200 MB of content, past pypdf's 75 MB limit
    assert len(bomb) < 500_000
    (root / "bomb.pdf").write_bytes(bomb)
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(root)
    assert report.added == ["ok.md"]
    reason = dict(report.skipped)["bomb.pdf"]
    assert "limit" in reason
    assert "Traceback" not in reason


def test_any_parser_exception_is_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crashing_loader(path: Path, source: str) -> Loaded:
        raise RuntimeError("parser fell over")  # what a third-party parser may raise

    monkeypatch.setitem(LOADERS, ".crash", crashing_loader)  # the registry for new formats
    root = _folder(tmp_path, {"a.crash": "x", "ok.md": BODY_MD})
    docs, skipped = _load(root)
    assert set(docs) == {"ok.md"}
    assert "a.crash" in skipped["a.crash"]
    assert "RuntimeError: parser fell over" in skipped["a.crash"]


def test_strict_mode_through_ingest_and_the_cli(tmp_path: Path) -> None:
    """kb.ingest(metadata_keys=...) / --metadata-keys: a key outside the list
    skips the file; the listed ones (and title/roles/users/tenant) load."""
    from selfrag_nb.cli import main as cli_main

    root = tmp_path / "docs"
    root.mkdir()
    (root / "ok.md").write_text("---\ntitle: OK\nstatus: draft\nroles: [finance]\n---\n# OK\n\nBody ok.\n")
    (root / "extra.md").write_text("---\nstatus: draft\nreviewer: ann\n---\n# Extra\n\nBody extra.\n")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(root, metadata_keys=["status"])
    assert report.added == ["ok.md"]
    assert [p for p, _ in report.skipped] == ["extra.md"]
    assert "reviewer" in report.skipped[0][1]
    path = str(tmp_path / "kb2")
    assert cli_main(["ingest", str(root), "--kb", path, "--no-progress", "--metadata-keys", "status"]) == 0
    assert sr.KnowledgeBase.open(path).sources() == ["ok.md"]
