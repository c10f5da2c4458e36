"""Keys that name access are refused by a principle, not a list.

The rule (docs/access-control.md): a document declares access only with the
top-level keys roles / users / tenant. A key whose words name access (role,
user, group, owner, org, team, ...; run together, camelCase, in Cyrillic or
Greek look-alike letters) would be stored as harmless metadata and leave the
document public, so the file or JSONL record is skipped with the key named;
ordinary front matter keys still load. Real files, the real loaders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfrag_nb.store.loaders import Document, load_tree

BODY_MD = "## Budget\n\nThe zebra budget is 4.2 million.\n"


def _load(root: Path) -> tuple[dict[str, Document], dict[str, str]]:
    docs, skipped = load_tree(root)
    return {d.source: d for d in docs}, dict(skipped)


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "docs"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_bytes(text.encode("utf-8"))
    return root


# --------------------------------------------------------------------------- access-looking keys

# Keys a reader takes for access control. Most were once stored as plain
# metadata, leaving the document public.
ACCESS_LOOKING = [
    "acl_roles", "read_roles", "visible_roles", "allowed_groups", "security_groups", "access_control",
    "audience", "restricted_to", "teams", "department", "owner", "owners", "confidential",
    "classification", "org", "organization", "customer", "workspace", "org_id",
    "allowedroles", "aclroles", "readroles", "visibleToTeams", "sharedWith", "tenantId",
    "r\u043eles",  # Cyrillic о
    "r\u043el\u0435s",  # Cyrillic о and е
    "us\u0435rs",  # Cyrillic е
    "t\u0435n\u0430nt",  # Cyrillic е and а
    "r\u03bfles",  # Greek ο
    "ro\u200bles",  # a zero-width space inside
    "r\u00f4les",  # an accent
    "\uff52\uff4f\uff4c\uff45\uff53",  # full-width letters
]  # fmt: skip


@pytest.mark.parametrize("key", ACCESS_LOOKING)
def test_access_looking_keys_skip_the_file_and_the_record(tmp_path: Path, key: str) -> None:
    value = "true" if key == "confidential" else "[finance]"
    root = _folder(
        tmp_path,
        {
            "secret.md": f"---\n{key}: {value}\n---\n\n{BODY_MD}",
            "recs.jsonl": json.dumps({"id": "r1", "text": "zebra one", key: ["finance"]}, ensure_ascii=False)
            + "\n"
            + json.dumps({"id": "r2", "text": "zebra two"})
            + "\n",
            "fine.md": "## Fine\n\nA public zebra note.\n",
        },
    )
    docs, skipped = _load(root)
    assert set(docs) == {"fine.md", "recs.jsonl#r2"}
    assert set(skipped) == {"secret.md", "recs.jsonl#r1"}
    assert repr(key) in skipped["recs.jsonl#r1"]
    assert "access control" in skipped["recs.jsonl#r1"]
    # front matter: refused by name, or (a zero-width space) not a key: value line at all
    assert repr(key) in skipped["secret.md"] or repr(f"{key}: {value}") in skipped["secret.md"]


ORDINARY = [
    "title", "author", "authors", "date", "lastmod", "tags", "categories", "category", "description",
    "summary", "draft", "weight", "slug", "aliases", "keywords", "image", "series", "toc", "version",
    "status", "effective", "supersedes", "superseded_by", "license", "layout", "permalink",
    "sidebar_position", "sidebar_label", "lang", "language", "source", "url", "id", "type", "kind",
    "template", "hide", "published", "publishDate", "expiryDate", "updated", "created", "product",
    "region", "audit", "policy", "topic", "level", "rules", "uses", "excerpt", "thumbnail",
    "canonical", "redirect_from", "menu", "nav_order", "parent", "has_children", "comments",
    "related", "read_time", "author_profile", "linkTitle", "sitemap", "hide_table_of_contents",
    "custom_edit_url", "unlisted", "reviewed", "expires", "contact",
]  # fmt: skip


def test_ordinary_front_matter_keys_pass(tmp_path: Path) -> None:
    front = "\n".join(f"{k}: value {i}" for i, k in enumerate(ORDINARY))
    records = "\n".join(json.dumps({"id": k, "text": f"zebra {k}", k: "v"}) for k in ORDINARY if k != "id")
    root = _folder(tmp_path, {"a.md": f"---\n{front}\n---\n\n{BODY_MD}", "r.jsonl": records + "\n"})
    docs, skipped = _load(root)
    assert skipped == {}
    assert docs["a.md"].title == "value 0"
    assert set(docs["a.md"].metadata) == set(ORDINARY) - {"title"}


def test_the_real_acl_keys_keep_their_meaning(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"a.md": f"---\nroles: [finance]\nusers: [bob]\ntenant: acme\n---\n\n{BODY_MD}"})
    docs, skipped = _load(root)
    assert skipped == {}
    doc = docs["a.md"]
    assert (doc.roles, doc.users, doc.tenant, doc.metadata) == (("finance",), ("bob",), "acme", {})


def test_acl_key_error_lives_in_acl_keys_and_agrees_with_acl() -> None:
    from selfrag_nb.store import acl, acl_keys

    assert acl.acl_key_error is acl_keys.acl_key_error
    assert acl_keys._ACL_KEYS == acl.ACL_KEYS
    assert acl.acl_key_error("roles") is None
    assert "access control" in (acl.acl_key_error("read_roles") or "")
