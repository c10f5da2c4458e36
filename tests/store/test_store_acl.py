from __future__ import annotations

from pathlib import Path

import pytest
from store_docs import SECRET

import selfrag_nb as sr
from selfrag_nb.store.acl import access_filter, combine_filters, sql_literal
from selfrag_nb.store.kb import KnowledgeBase

QUERIES = ["salary band level 3", SECRET, "HR", "salary", "level", "Salary bands"]
MODES = ("vector", "fts", "hybrid")


def _seen(kb: KnowledgeBase, user: sr.User | None, where: str | None = None) -> str:
    """Everything a user gets back from many searches, concatenated."""
    out = []
    for q in QUERIES:
        for mode in MODES:
            for h in kb.search(q, k=50, mode=mode, user=user, where=where):
                out.append(h.text + h.context + h.title + str(h.metadata))
    return "\n".join(out)


def test_filter_text() -> None:
    assert access_filter(None) == "array_has_any(acl_roles, ['public']) AND tenant = ''"
    assert access_filter(sr.User()) == access_filter(None)
    f = access_filter(sr.User("o'brien", roles=["it's"], tenant="ac'me"))
    assert "'o''brien'" in f
    assert "'it''s'" in f
    assert "tenant = 'ac''me'" in f
    assert sql_literal("x' OR 1=1 --") == "'x'' OR 1=1 --'"
    with pytest.raises(ValueError, match="control characters"):
        sql_literal("a\x00b")
    assert combine_filters("A", None) == "A"
    assert combine_filters("A", "  ") == "A"
    assert combine_filters("A", "x = '()'") == "(A) AND (x = '()')"
    for bad in ("1=1) OR (1=1", "1=1 --", "(x", "x = 'open", "1=1; DROP TABLE chunks", "1=1 /* c */"):
        with pytest.raises(ValueError, match="where"):
            combine_filters("A", bad)


def test_secret_never_leaves_the_store_for_the_wrong_user(kb: KnowledgeBase) -> None:
    assert SECRET not in _seen(kb, None)
    assert SECRET not in _seen(kb, sr.User("ana", roles=["staff"], tenant="acme"))
    assert SECRET not in _seen(kb, sr.User("hr-person", roles=["hr"]))  # right role, no tenant
    assert SECRET not in _seen(kb, sr.User("hr-person", roles=["hr"], tenant="globex"))  # wrong tenant
    assert SECRET in _seen(kb, sr.User("hr-person", roles=["hr"], tenant="acme"))
    # the tenant-less public chunks stay visible to a tenant user
    assert kb.search("shipping", mode="fts", user=sr.User("x", tenant="acme")).hits


def test_user_id_grants_access(tmp_path: Path, docs_dir: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kbu", embedder="hashing")
    kb.ingest(docs_dir / "hr", acl={"roles": ["hr"], "users": ["carol"], "tenant": ""})
    assert SECRET in _seen(kb, sr.User("carol"))
    assert SECRET not in _seen(kb, sr.User("dave"))
    assert SECRET not in _seen(kb, None)


def test_injection_in_names_does_not_widen_access(kb: KnowledgeBase) -> None:
    for evil in ("x' OR 1=1 --", "public') OR true OR ('", "hr' , 'hr", "' OR tenant = 'acme"):
        user = sr.User("mallory", roles=[evil], tenant="acme")
        assert SECRET not in _seen(kb, user), evil
        assert SECRET not in _seen(kb, sr.User(evil, tenant="acme")), evil
        assert SECRET not in _seen(kb, sr.User("m", roles=["hr"], tenant=evil)), evil
    # a role literally named like an injection is still an exact role match
    assert kb.search("shipping", mode="fts", user=sr.User("m", roles=["x' OR 1=1 --"])).hits


def test_where_is_anded_never_replaces_the_acl(kb: KnowledgeBase) -> None:
    assert SECRET not in _seen(kb, None, where="source = 'hr/salary.md'")
    assert SECRET not in _seen(kb, None, where="true")
    assert SECRET not in _seen(kb, None, where="tenant = 'acme' OR 1 = 1")
    with pytest.raises(ValueError, match="unmatched"):
        kb.search("salary", where="true) OR (true")
    hits = kb.search(
        "salary", user=sr.User("h", roles=["hr"], tenant="acme"), where="source = 'hr/salary.md'"
    )
    assert {h.source for h in hits} == {"hr/salary.md"}
