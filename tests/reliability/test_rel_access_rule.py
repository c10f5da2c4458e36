"""The access rule, checked from its written form (docs/access-control.md), not from the code.

    DOCS: what each document DECLARES (front matter written from this table)
    rule_allows(user, declared): the rule as the docs state it, in Python here
    for user in USERS, mode in (vector, fts, hybrid):
        {sources kb.search returns}  ==  {docs the rule allows}     (k > every chunk)

The oracle never reads the stored ACL columns or calls store/acl.py: a store
that writes the wrong ACL (a document naming only users stored as public) and
a filter that reads it faithfully would agree with each other, not with this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cases import record

import selfrag_nb as sr
from selfrag_nb.cli import main as cli_main
from selfrag_nb.store.types import User

#: name -> (declared roles, declared users, declared tenant); None = not declared
DOCS: dict[str, tuple[list[str] | None, list[str] | None, str | None]] = {
    "public.md": (None, None, None),
    "users-only.md": (None, ["bob"], None),
    "two-users.md": (None, ["bob", "carol"], None),
    "roles-only.md": (["finance"], None, None),
    "roles-and-users.md": (["hr"], ["carol"], None),
    "explicit-public-with-users.md": (["public"], ["bob"], None),
    "no-one.md": ([], None, None),
    "tenant-public.md": (None, None, "acme"),
    "tenant-roles.md": (["finance"], None, "acme"),
    "tenant-users.md": (None, ["bob"], "acme"),
    "names-anonymous.md": (None, ["anonymous"], None),
}

USERS: list[User | None] = [
    None,
    User(),
    User("mallory"),
    User("mallory", roles=["staff"]),
    User("bob"),
    User("carol"),
    User("fiona", roles=["finance"]),
    User("hana", roles=["hr", "staff"]),
    User("bob", tenant="acme"),
    User("fiona", roles=["finance"], tenant="acme"),
    User("mallory", tenant="acme"),
    User("fiona", roles=["finance"], tenant="globex"),
]


def rule_allows(
    user: User | None, roles: list[str] | None, users: list[str] | None, tenant: str | None
) -> bool:
    """docs/access-control.md: visible only if the tenant matches and (the
    document is public, or names the user, or names one of the user's roles).
    A document that names users or roles is public only if it says "public";
    one that names neither is public. Anonymous (None or User()) is never a
    named user."""
    uid, uroles, utenant = (None, [], None) if user is None else (user.id, list(user.roles), user.tenant)
    if uid == "anonymous":
        uid = None
    if tenant and tenant != utenant:
        return False
    public = (roles is None and not users) or (roles is not None and "public" in roles)
    return public or uid in (users or []) or any(r in (roles or []) for r in uroles)


def front_matter(name: str, roles: list[str] | None, users: list[str] | None, tenant: str | None) -> str:
    lines = ["---", f"title: {name}"]
    if roles is not None:
        lines.append(f"roles: [{', '.join(roles)}]")
    if users is not None:
        lines.append(f"users: [{', '.join(users)}]")
    if tenant is not None:
        lines.append(f"tenant: {tenant}")
    body = f"## Zebra facts for {name}\n\nThe zebra ledger entry for {name} records a quarterly figure."
    return "\n".join([*lines, "---", "", body, ""])


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("access")
    docs = root / "docs"
    docs.mkdir()
    for name, declared in DOCS.items():
        (docs / name).write_text(front_matter(name, *declared), encoding="utf-8")
    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing")
    report = kb.ingest(docs)
    assert report.skipped == []
    assert sorted(report.added) == sorted(DOCS)
    return kb


def visible_sources(kb: Any, user: User | None, mode: str) -> set[str]:
    return {h.source for h in kb.search("zebra ledger quarterly figure", k=100, mode=mode, user=user)}


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
@pytest.mark.parametrize(
    "user", USERS, ids=lambda u: "none" if u is None else f"{u.id}{list(u.roles)}@{u.tenant}"
)
def test_search_returns_exactly_what_the_rule_allows(kb: Any, user: User | None, mode: str) -> None:
    expected = {name for name, declared in DOCS.items() if rule_allows(user, *declared)}
    assert visible_sources(kb, user, mode) == expected
    record("access rule: user x search mode (every document checked)", 1)


def test_a_document_naming_only_users_is_not_public(kb: Any) -> None:
    """The first-round leak, stated directly."""
    for user in (None, User(), User("mallory"), User("mallory", roles=["staff"])):
        assert "users-only.md" not in visible_sources(kb, user, "hybrid")
    assert "users-only.md" in visible_sources(kb, User("bob"), "hybrid")


def test_ask_does_not_answer_from_a_users_only_document(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bob-salary.md").write_text(
        "---\nusers: [bob]\n---\n\n## Salary\n\nBob's salary band is QX-77 with a bonus of 12 percent.\n",
        encoding="utf-8",
    )
    (docs / "handbook.md").write_text(
        "## Holidays\n\nStaff get 25 days of holiday a year.\n", encoding="utf-8"
    )
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs)
    rag = sr.SelfRAG(kb)
    trace = rag.ask("What is Bob's salary band?", user=User("mallory"))
    assert "QX-77" not in trace.to_json()
    assert all(h.source != "bob-salary.md" for h in (trace.retrieval.hits if trace.retrieval else []))
    bob = rag.ask("What is Bob's salary band?", user=User("bob"))
    assert bob.retrieval is not None
    assert any(h.source == "bob-salary.md" for h in bob.retrieval.hits)


@pytest.mark.parametrize(
    ("acl", "cli_args"),
    [
        ({"users": ["bob"]}, ["--users", "bob"]),
        ({"roles": ["finance"]}, ["--roles", "finance"]),
        ({"users": ["bob"], "tenant": "acme"}, ["--users", "bob", "--tenant", "acme"]),
    ],
)
def test_ingest_acl_override_follows_the_rule(
    tmp_path: Path, acl: dict[str, Any], cli_args: list[str]
) -> None:
    """ingest(acl=...) and `selfrag-nb ingest --users/--roles/--tenant` replace
    the documents' own ACL: a document that declared roles [public] and is
    ingested with users [bob] is bob's alone."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(front_matter("a.md", ["public"], None, None), encoding="utf-8")
    (docs / "b.md").write_text(front_matter("b.md", None, None, None), encoding="utf-8")
    roles, users, tenant = acl.get("roles"), acl.get("users"), acl.get("tenant")
    api = sr.KnowledgeBase.open(tmp_path / "api", embedder="hashing")
    api.ingest(docs, acl=acl)
    assert (
        cli_main(
            [
                "ingest",
                str(docs),
                "--kb",
                str(tmp_path / "cli"),
                "--embedder",
                "hashing",
                "--no-progress",
                *cli_args,
            ]
        )
        == 0
    )
    cli = sr.KnowledgeBase.open(tmp_path / "cli", embedder="hashing")
    for user in USERS:
        expected = {"a.md", "b.md"} if rule_allows(user, roles, users, tenant) else set()
        for kb in (api, cli):
            assert visible_sources(kb, user, "vector") == expected, (user, acl)
    record("access rule: ingest overrides (api + cli) x user", 2 * len(USERS))


ACL_LOOKALIKES = ["Roles", "ROLES", "role", "User", "user", "Users", "tennant", "Tenant", "rolse", "acl", "groups",
                  "allowed_roles", "permissions", "public", "visible-to"]  # fmt: skip


@pytest.mark.parametrize("key", ACL_LOOKALIKES)
def test_acl_lookalike_keys_are_refused_never_stored_public(tmp_path: Path, key: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "secret.md").write_text(
        f"---\n{key}: [finance]\n---\n\n## Budget\n\nThe zebra budget is 4.2 million.\n", encoding="utf-8"
    )
    (docs / "recs.jsonl").write_text(
        f'{{"id": "r1", "text": "zebra record one", "{key}": ["finance"]}}\n'
        '{"id": "r2", "text": "zebra record two"}\n',
        encoding="utf-8",
    )
    (docs / "fine.md").write_text("## Fine\n\nA public zebra note.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(docs)
    skipped = dict(report.skipped)
    assert set(skipped) == {"secret.md", "recs.jsonl#r1"}, report.skipped
    for reason in skipped.values():
        assert repr(key) in reason
        assert "access control" in reason
    assert sorted(report.added) == ["fine.md", "recs.jsonl#r2"]
    assert {h.source for h in kb.search("zebra", k=20, mode="fts")} == {"fine.md", "recs.jsonl#r2"}
    record("access rule: ACL look-alike keys refused (front matter + JSONL)", 2)


@pytest.mark.parametrize("key", ["rules", "author", "uses", "version", "maintainer", "summary"])
def test_ordinary_metadata_keys_are_kept(tmp_path: Path, key: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"---\n{key}: x\n---\n\n## A\n\nSome zebra text.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    report = kb.ingest(docs)
    assert report.added == ["a.md"], report.skipped
    assert kb.chunks()[0].metadata == {key: "x"}


def test_metadata_argument_refuses_acl_keys(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("## A\n\nSome zebra text.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    for bad in ({"roles": ["finance"]}, {"Users": ["bob"]}, {"acl": "x"}):
        with pytest.raises(ValueError, match="metadata"):
            kb.ingest(docs, metadata=bad)
    assert len(kb) == 0
