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
    kb.ingest(docs_dir / "hr", acl={"roles": ["hr"], "users": ["carol"]})  # the files say tenant acme
    assert SECRET in _seen(kb, sr.User("carol", tenant="acme"))
    assert SECRET not in _seen(kb, sr.User("carol"))  # no tenant: the document's tenant does not match
    assert SECRET not in _seen(kb, sr.User("dave", tenant="acme"))
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


#: Attempts to widen access through ``where``, each either refused or harmless.
WHERE_ATTACKS = [
    "$$ ) OR (1=1 $$ = 'x'",
    "source = $$a$$ ) OR ( $$b$$ = $$b$$",
    "source = $$hr/salary.md$$",
    "source = $tag$ ) OR (true $tag$",
    "$1 = 1",
    "source = E'\\'' ) OR (1=1 OR source = '",
    "source = e'\\\\' OR true",
    "source = N'hr/salary.md'",
    "source = X'61' OR true",
    "source = U&'x' OR true",
    "source = '\\' ) OR (true OR source = '",
    "source = 'a\\' OR true",
    "source = \u2018x\u2019 ) OR (true",
    "source = \u2018x\u2019 OR true",
    "((((true)))) OR ((((true))))",
    "(true OR (true OR (true)))",
    "((source = 'a') OR (1 = 1))",
    "tenant = 'acme' OR array_has_any(acl_roles, ['hr'])",
    "\"source\" = 'x' OR true",
    "`source` = 'x' OR true",
    "source = 'x'')) OR ((''=''",
    "true\n) OR (true",
]


def _public_ids(kb: KnowledgeBase) -> set[str]:
    """Chunk ids an anonymous user may read, from the rule itself: the public
    role and no tenant (read from the raw rows, not through access_filter)."""
    rows = kb._tbl().search().select(["chunk_id", "acl_roles", "tenant"]).limit(None).to_arrow().to_pylist()
    return {r["chunk_id"] for r in rows if "public" in r["acl_roles"] and r["tenant"] == ""}


@pytest.mark.parametrize("where", WHERE_ATTACKS)
def test_where_never_returns_an_unreadable_chunk(kb: KnowledgeBase, where: str) -> None:
    public = _public_ids(kb)
    assert len(public) < len(kb)  # the fixture holds chunks anonymous may not read
    for q in ("salary band level 3", SECRET, "shipping"):
        for mode in MODES:
            try:
                hits = kb.search(q, k=50, mode=mode, where=where)
            except ValueError:
                continue  # refused by the guard or by LanceDB: nothing returned
            assert {h.chunk_id for h in hits} <= public, (where, mode)


@pytest.mark.parametrize(
    ("where", "names"),
    [
        ("source = $$a.md$$", "'\\$'"),
        ("$tag$x$tag$ = source", "'\\$'"),
        ("source = E'a\\'b'", "prefixed string"),
        ("source = N'a'", "prefixed string"),
        ("source = U&'a'", "prefixed string"),
    ],
)
def test_where_quoting_the_guard_does_not_model_is_refused(where: str, names: str) -> None:
    with pytest.raises(ValueError, match=names):
        combine_filters("A", where)


def test_where_plain_strings_keep_working(kb: KnowledgeBase) -> None:
    assert combine_filters("A", "source = 'costs $5'") == "(A) AND (source = 'costs $5')"
    assert combine_filters("A", "source = 'a\\b'") == "(A) AND (source = 'a\\b')"
    # the guard reads a backslash in a plain string as a character, as LanceDB does:
    # if a LanceDB upgrade made it an escape, this string would not end at its quote
    assert kb.search("refund", mode="fts", where="source = 'x\\'").hits == []
    assert [h.source for h in kb.search("refund", mode="fts", where="source = 'refund.md'")][:1] == [
        "refund.md"
    ]


def test_visible_is_the_documented_rule() -> None:
    """docs/access-control.md: tenant matches (blank chunk tenant: every
    tenant) AND (public, or the user's id named, or one of the user's roles)."""
    from selfrag_nb.store.acl import visible

    ana = sr.User("ana", roles=["finance"], tenant="acme")
    assert visible(["public"], [], "", None)
    assert visible(["finance"], [], "", ana)
    assert visible([], ["ana"], "acme", ana)
    assert not visible([], [], "", ana)  # empty lists: nobody
    assert not visible(["finance"], [], "globex", ana)  # another tenant
    assert not visible(["public"], [], "acme", sr.User())  # anonymous has no tenant
    assert not visible([], ["anonymous"], "", sr.User())  # anonymous is nobody in particular
    assert not visible(["hr"], ["bob"], "", ana)
