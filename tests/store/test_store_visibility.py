"""Visibility never widens silently; empty means nobody; blank is refused;
default-deny (docs/access-control.md, "The rule" and "Access never widens
silently").

Every check reads what a user can SEE through search (the documented
boundary), not the stored columns, and each was written from the rule:

- an ingest that would let someone read a stored document they could not
  read before is refused, naming the document; nothing is written;
  ``allow_widen=True`` / ``--allow-widen`` says "I mean it";
- every change of a stored document's access is in ``IngestReport.acl_changes``
  (before -> after), and its text, HTML and CLI faces show it;
- an empty users or roles list means nobody; a declared blank tenant is refused;
- ``default_access="private"``: a document that declares nothing is readable
  by nobody, and the knowledge base remembers it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.cli import main as cli_main
from selfrag_nb.store.types import EffectiveACL

SECRET = "QUARTERLY-EBITDA-7731"
FINANCE = sr.User("fay", roles=["finance"])
HR = sr.User("hal", roles=["hr"])
NOBODY_SPECIAL = [sr.User(), sr.User("eve"), sr.User("eve", tenant="acme"), sr.User("eve", roles=["staff"])]
MODES = ("vector", "fts", "hybrid")


def _folder(root: Path, n: int = 3, front: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"q{i}.md").write_text(
            f"{front}# Forecast {i}\n\nThe forecast {i} says {SECRET} for the quarter.\n", encoding="utf-8"
        )
    return root


def _sees(kb: sr.KnowledgeBase, user: sr.User | None) -> bool:
    return any(
        SECRET in h.text for m in MODES for h in kb.search("forecast quarter", k=10, mode=m, user=user)
    )


@pytest.fixture
def kb(tmp_path: Path) -> sr.KnowledgeBase:
    return sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")


# ------------------------------------------------------------- widening refused


def test_reingesting_a_restricted_folder_without_its_acl_is_refused(
    tmp_path: Path, kb: sr.KnowledgeBase
) -> None:
    folder = _folder(tmp_path / "finance")
    kb.ingest(folder, acl={"roles": ["finance"]})
    version = kb.version
    with pytest.raises(sr.InputError, match="would let more people read 3 stored documents") as err:
        kb.ingest(folder)
    assert isinstance(err.value, sr.AccessWideningError)
    assert all(name in str(err.value) for name in ("q0.md", "q1.md", "q2.md"))
    assert sorted(c.source for c in err.value.changes) == ["q0.md", "q1.md", "q2.md"]
    # nothing was written: same version, still finance-only
    assert kb.version == version
    assert _sees(kb, FINANCE)
    assert not any(_sees(kb, u) for u in NOBODY_SPECIAL)


def test_allow_widen_says_so_and_the_report_lists_every_change(tmp_path: Path, kb: sr.KnowledgeBase) -> None:
    folder = _folder(tmp_path / "finance")
    kb.ingest(folder, acl={"roles": ["finance"]})
    report = kb.ingest(folder, allow_widen=True)
    assert _sees(kb, sr.User())
    assert [(c.source, c.kind) for c in report.acl_changes] == [(f"q{i}.md", "widened") for i in range(3)]
    change = report.acl_changes[0]
    assert change.before == EffectiveACL(("finance",), (), "")
    assert change.after.roles == ("public",)
    assert "q0.md: roles finance -> public (widened)" in report.to_text()
    assert "access changed=3 (3 widened)" in str(report)
    page = report.to_html()
    assert "access changed" in page
    assert "q2.md" in page
    assert "widened" in page
    assert "<script" not in page
    # the record is plain data: JSON round trip exact
    assert sr.IngestReport.model_validate_json(report.model_dump_json()) == report


def test_a_front_matter_edit_that_adds_a_role_is_refused_and_narrowing_is_reported(
    tmp_path: Path, kb: sr.KnowledgeBase
) -> None:
    folder = _folder(tmp_path / "docs", n=1, front="---\nroles: [finance]\n---\n")
    kb.ingest(folder)
    (folder / "q0.md").write_text(
        f"---\nroles: [finance, hr]\n---\n# Forecast\n\nThe forecast says {SECRET}.\n", encoding="utf-8"
    )
    with pytest.raises(sr.AccessWideningError, match=r"q0\.md: roles finance -> roles finance, hr"):
        kb.ingest(folder)
    assert not _sees(kb, HR)
    kb.ingest(folder, allow_widen=True)
    assert _sees(kb, HR)
    # narrowing back needs no permission, and is reported
    (folder / "q0.md").write_text(
        f"---\nroles: [hr]\n---\n# Forecast\n\nThe forecast says {SECRET}.\n", encoding="utf-8"
    )
    report = kb.ingest(folder)
    assert [str(c) for c in report.acl_changes] == ["q0.md: roles finance, hr -> roles hr (narrowed)"]
    assert not _sees(kb, FINANCE)
    assert _sees(kb, HR)


@pytest.mark.parametrize(
    ("first", "second", "who_gains"),
    [
        ({"roles": ["finance"]}, {"users": ["bob"]}, sr.User("bob")),  # a named user added
        ({"users": ["bob"]}, {"users": ["bob", "eve"]}, sr.User("eve")),
        ({"roles": ["finance"], "tenant": "acme"}, {"roles": ["finance"], "tenant": "globex"}, None),
        ({"roles": []}, {"roles": ["finance"]}, FINANCE),  # nobody -> someone
    ],
)
def test_every_kind_of_widening_is_refused(
    tmp_path: Path, kb: sr.KnowledgeBase, first: dict, second: dict, who_gains: sr.User | None
) -> None:
    folder = _folder(tmp_path / "docs", n=1)
    kb.ingest(folder, acl=first)
    if who_gains is not None:
        assert not _sees(kb, who_gains)
    with pytest.raises(sr.AccessWideningError):
        kb.ingest(folder, acl=second)
    if who_gains is not None:
        assert not _sees(kb, who_gains)


def test_a_cleared_tenant_is_a_widening(tmp_path: Path, kb: sr.KnowledgeBase) -> None:
    folder = _folder(tmp_path / "docs", n=1, front="---\ntenant: acme\n---\n")
    kb.ingest(folder)
    assert not _sees(kb, sr.User("x", tenant="globex"))
    (folder / "q0.md").write_text(f"# Forecast\n\nThe forecast says {SECRET}.\n", encoding="utf-8")
    with pytest.raises(sr.AccessWideningError, match=r"public \(tenant acme\) -> public"):
        kb.ingest(folder)
    assert not _sees(kb, sr.User("x", tenant="globex"))


def test_widening_is_refused_on_the_ray_engine_before_any_work(tmp_path: Path, kb: sr.KnowledgeBase) -> None:
    pytest.importorskip("ray")
    folder = _folder(tmp_path / "finance", n=1)
    kb.ingest(folder, acl={"roles": ["finance"]})
    with pytest.raises(sr.AccessWideningError):
        kb.ingest(folder, engine="ray")  # refused before a cluster is started
    assert not _sees(kb, sr.User())


def test_cli_refuses_names_the_documents_and_shows_the_change(
    tmp_path: Path, kb: sr.KnowledgeBase, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "finance", n=1)
    kb.ingest(folder, acl={"roles": ["finance"]})
    base = ["ingest", str(folder), "--kb", kb.path, "--no-progress"]
    assert cli_main(base) == 2
    out = capsys.readouterr()
    assert "q0.md" in out.out + out.err
    assert "--allow-widen" in out.out + out.err
    assert not _sees(sr.KnowledgeBase.open(kb.path), sr.User())
    assert cli_main([*base, "--allow-widen"]) == 0
    printed = capsys.readouterr().out
    assert "access changed" in printed
    assert "roles finance" in printed
    assert "widened" in printed


# ------------------------------------------------------------- empty means nobody, blank refused


_BODY = f"The forecast says {SECRET} for the quarter."
#: how the empty list is declared -> (file name, file text, ingest acl)
_EMPTY = {
    "front matter users: []": ("f.md", f"---\nusers: []\n---\n# Forecast\n\n{_BODY}\n", None),
    "front matter roles: []": ("f.md", f"---\nroles: []\n---\n# Forecast\n\n{_BODY}\n", None),
    "jsonl users: []": ("f.jsonl", json.dumps({"id": "a", "text": _BODY, "users": []}) + "\n", None),
    "acl users [] over roles [finance]": (
        "f.md",
        f"---\nroles: [finance]\n---\n# Forecast\n\n{_BODY}\n",
        {"users": []},
    ),
    "acl roles []": ("f.md", f"# Forecast\n\n{_BODY}\n", {"roles": []}),
}


@pytest.mark.parametrize("how", list(_EMPTY))
def test_an_empty_list_means_nobody(tmp_path: Path, kb: sr.KnowledgeBase, how: str) -> None:
    name, text, acl = _EMPTY[how]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / name).write_text(text, encoding="utf-8")
    report = kb.ingest(docs, acl=acl)
    assert report.added
    assert not report.skipped
    everyone = [*NOBODY_SPECIAL, FINANCE, sr.User("eve", tenant="globex"), sr.User("x", roles=["public"])]
    for user in everyone:
        assert not _sees(kb, user), (how, user)


@pytest.mark.parametrize(
    "front", ["tenant:\n", 'tenant: ""\n', "tenant: '  '\n"], ids=["empty", "quoted-empty", "spaces"]
)
def test_a_declared_blank_tenant_skips_the_document(tmp_path: Path, kb: sr.KnowledgeBase, front: str) -> None:
    folder = _folder(tmp_path / "docs", n=1, front=f"---\nroles: [finance]\n{front}---\n")
    report = kb.ingest(folder)
    assert [p for p, _ in report.skipped] == ["q0.md"]
    assert "tenant" in report.skipped[0][1]
    assert not _sees(kb, sr.User("x", roles=["finance"], tenant="globex"))


def test_a_jsonl_null_tenant_and_a_blank_acl_tenant_are_refused(tmp_path: Path, kb: sr.KnowledgeBase) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "r.jsonl").write_text(
        json.dumps({"id": "a", "text": SECRET, "tenant": None}) + "\n", encoding="utf-8"
    )
    report = kb.ingest(docs)
    assert [p for p, _ in report.skipped] == ["r.jsonl#a"]
    for blank in ("", "  ", None):
        with pytest.raises(sr.InputError, match="tenant"):
            kb.ingest(docs, acl={"roles": ["finance"], "tenant": blank})
    assert cli_main(["ingest", str(docs), "--kb", kb.path, "--no-progress", "--tenant", ""]) == 2
    assert len(kb) == 0


# ------------------------------------------------------------- default-deny


def test_default_access_private_hides_undeclared_documents_and_is_remembered(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "docs", n=2)
    (folder / "open.md").write_text(
        f"---\nroles: [public]\n---\n# Open\n\nThe forecast says {SECRET} openly.\n", encoding="utf-8"
    )
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing", default_access="private")
    kb.ingest(folder)
    hits = [h.source for m in MODES for h in kb.search("forecast quarter", k=10, mode=m, user=FINANCE)]
    assert set(hits) == {"open.md"}  # only the document that said public
    again = sr.KnowledgeBase.open(tmp_path / "kb")
    assert again.default_access == "private"
    assert again.describe()["default_access"] == "private"
    # a handle that asks for public cannot publish what is stored private
    public = sr.KnowledgeBase.open(tmp_path / "kb", default_access="public")
    with pytest.raises(sr.AccessWideningError, match=r"q0\.md: nobody -> public"):
        public.ingest(folder)
    with pytest.raises(sr.InputError, match="default_access"):
        sr.KnowledgeBase.open(tmp_path / "kb", default_access="open")  # type: ignore[arg-type]


def test_cli_default_access_private(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "docs", n=1)
    path = str(tmp_path / "kb")
    assert (
        cli_main(["ingest", str(folder), "--kb", path, "--no-progress", "--default-access", "private"]) == 0
    )
    kb = sr.KnowledgeBase.open(path)
    assert kb.default_access == "private"
    assert not any(_sees(kb, u) for u in [*NOBODY_SPECIAL, FINANCE])


def test_the_report_views_treat_names_as_data(tmp_path: Path, kb: sr.KnowledgeBase) -> None:
    """Source and role names come from files: escaped in HTML, terminal
    escapes shown (not obeyed) in text."""
    docs = tmp_path / "docs"
    docs.mkdir()
    name = "<img src=x onerror=alert(1)>\x1b[31mred.md"
    (docs / name).write_text(f"# Forecast\n\nThe forecast says {SECRET}.\n", encoding="utf-8")
    kb.ingest(docs, acl={"roles": ["<b>fin</b>"]})
    report = kb.ingest(docs, allow_widen=True)
    page = report.to_html()
    assert "<img" not in page
    assert "<b>fin" not in page
    assert "&lt;img" in page
    assert "\x1b" not in page
    assert "\x1b" not in report.to_text()
    assert "⟨U+001B⟩" in report.to_text()


def test_a_role_that_differs_only_by_case_is_stored_with_a_warning(
    tmp_path: Path, kb: sr.KnowledgeBase
) -> None:
    """Names match exactly (docs/access-control.md): "Finance" is not
    "finance", so the report says so instead of leaving a typo unnoticed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"---\nroles: [finance]\n---\n# A\n\n{SECRET} a.\n", encoding="utf-8")
    (docs / "b.md").write_text(f"---\nroles: [Finance]\n---\n# B\n\n{SECRET} b.\n", encoding="utf-8")
    report = kb.ingest(docs)
    assert sorted(report.added) == ["a.md", "b.md"]
    assert [s for s, _ in report.warnings] == ["a.md", "b.md"]
    assert "'Finance' differs from 'finance' only by case" in report.warnings[1][1]
    assert "warnings=2" in str(report)
    assert "only by case" in report.to_html()
    # stored as written: exact matching is the rule
    assert [h.source for h in kb.search("a b", mode="fts", user=FINANCE)] == ["a.md"]
