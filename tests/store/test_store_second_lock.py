"""The second lock: every row a search returns is checked in Python against
the access rule before it becomes a Hit, so a broken SQL prefilter cannot
hand a chunk to the wrong reader.

    real LanceDB knowledge base (hashing embedder) with public and restricted
    documents (a role, a named user, a tenant), all about refunds
      -> the SQL access filter broken on purpose (search's access_filter
         returns "true": every row passes the prefilter)
      -> search in every mode, as anonymous / a staff member / bob / a user
         of another tenant
      -> no hit the rule (docs/access-control.md) refuses; each drop is logged
         at ERROR without chunk text, warned about and counted
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import AccessCheckWarning
from selfrag_nb.store import search as search_module

MODES = ("vector", "fts", "hybrid")

#: source -> (front matter, who may read it under the rule)
DOCS = {
    "public.md": ("", "everyone"),
    "finance.md": ("roles: [finance]\n", "role finance"),
    "bob.md": ("users: [bob]\n", "user bob"),
    "acme.md": ("roles: [public]\ntenant: acme\n", "tenant acme"),
}
RESTRICTED_WORD = "CONFIDENTIAL-7731"


def _write(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for name, (front, who) in DOCS.items():
        secret = "" if name == "public.md" else f" {RESTRICTED_WORD}"
        head = f"---\n{front}---\n" if front else ""
        body = f"# Refunds for {who}\n\nThe refund window is thirty days for {who}.{secret}\n"
        (docs / name).write_text(head + body, encoding="utf-8")
    return docs


@pytest.fixture
def kb(tmp_path: Path) -> sr.KnowledgeBase:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(_write(tmp_path))
    return kb


#: user -> sources the rule lets them read
READERS = {
    "anonymous": (None, {"public.md"}),
    "staff": (sr.User("ana", roles=["staff"]), {"public.md"}),
    "finance": (sr.User("fay", roles=["finance"]), {"public.md", "finance.md"}),
    "bob": (sr.User("bob"), {"public.md", "bob.md"}),
    "acme": (sr.User("ann", tenant="acme"), {"public.md", "acme.md"}),
    # finance.md has no tenant (every tenant); acme.md is acme's only
    "globex": (sr.User("gus", tenant="globex", roles=["finance"]), {"public.md", "finance.md"}),
}


def test_the_prefilter_alone_is_the_rule(kb: sr.KnowledgeBase) -> None:
    """With the prefilter intact, every reader gets exactly what the rule
    allows and nothing is dropped (the lock never fires on a healthy store)."""
    for who, (user, allowed) in READERS.items():
        for mode in MODES:
            got = {h.source for h in kb.search("refund window thirty days", k=10, mode=mode, user=user)}
            assert got == allowed, (who, mode, got)
    assert kb.access_drops == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_broken_prefilter_leaks_nothing(
    kb: sr.KnowledgeBase, mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(search_module, "access_filter", lambda user: "true")
    caplog.set_level(logging.ERROR, logger="selfrag_nb")
    for who, (user, allowed) in READERS.items():
        before = kb.access_drops
        with pytest.warns(AccessCheckWarning, match="dropped"):
            hits = kb.search("refund window thirty days", k=10, mode=mode, user=user)
        got = {h.source for h in hits}
        assert got == allowed, f"{who} ({mode}) read {sorted(got - allowed)}"
        assert all(RESTRICTED_WORD not in h.text for h in hits if h.source not in allowed)
        # 4 documents, one chunk each: what the rule refuses was returned by the
        # broken prefilter and dropped, and counted
        assert kb.access_drops - before == len(DOCS) - len(allowed), who
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.name.startswith("selfrag_nb")]
    assert errors, "a drop must be logged at ERROR"
    for record in errors:
        message = record.getMessage()
        assert "access check" in message
        assert RESTRICTED_WORD not in message, "the log must not carry chunk text"
        assert "thirty days" not in message


def test_a_broken_prefilter_with_a_where(kb: sr.KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's where ANDed with a broken access clause still passes the lock."""
    monkeypatch.setattr(search_module, "access_filter", lambda user: "true")
    with pytest.warns(AccessCheckWarning):
        hits = kb.search("refund", mode="hybrid", where="source != 'public.md'")
    assert list(hits) == []


@pytest.mark.parametrize("mode", MODES)
def test_an_access_filter_that_cannot_run_is_our_fault_and_shows_no_sql(
    kb: sr.KnowledgeBase, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the access clause itself fails (not the caller's where), the error
    is a KnowledgeBaseError that says so without quoting the clause, and
    nothing is returned."""
    broken = "array_has_any(no_such_acl_column, ['public'])"
    monkeypatch.setattr(search_module, "access_filter", lambda user: broken)
    with pytest.raises(sr.KnowledgeBaseError, match="access filter") as info:
        kb.search("refund", mode=mode, where="source != 'x.md'")
    assert "no_such_acl_column" not in str(info.value)
    assert "array_has_any" not in str(info.value)
    assert not isinstance(info.value, sr.InputError), "the caller's where is fine"
