"""Ingest's checks and row building: what a Document becomes before it is embedded.

    ingest(path, acl=..., metadata=..., prefix=..., on_conflict=...)
      check_acl(acl)            only roles / users / tenant, names without control chars;
                                an empty list is kept (it means nobody), a blank tenant refused
      check_metadata(metadata)  a dict of JSON values, no key that looks like an ACL key
      check_prefix(prefix)      "" or a relative folder name ("colA" -> "colA/")
      origin_of(path)           the ingested folder, resolved (a file: its folder)
      for each Document:
        prepare(doc, ...)       effective ACL (store/acl.py, with the knowledge base's
                                default_access) -> a content hash of
                                everything stored + rows() that chunks lazily (no vectors)
      conflict(...)             a source stored from ANOTHER folder is not replaced
                                unless on_conflict="replace": it is skipped with a
                                reason naming both folders and the fix

Why the origin: sources are paths relative to the ingested folder, so
``colA/report.md`` and ``colB/report.md`` are both "report.md". Without the
folder on each stored chunk, ingesting colA would silently replace colB's
document, ACL included; ``prune`` would delete colB's documents too.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.store.acl import ACL_KEYS, acl_key_error, effective_acl, validate_acl_name
from selfrag_nb.store.chunking import context_header, iter_chunks

if TYPE_CHECKING:
    from selfrag_nb.store.loaders import Document
    from selfrag_nb.store.types import EffectiveACL

__all__ = [
    "CONFLICT_POLICIES",
    "FORMAT",
    "Prepared",
    "check_acl",
    "check_metadata",
    "check_policy",
    "check_prefix",
    "conflict",
    "origin_of",
    "prepare",
    "sha",
]

#: Version of what a stored row means; part of every content hash, so a change
#: re-writes each source on its next ingest. 2: the origin column, and
#: documents naming only users are no longer public. 3: underlined titles
#: (Markdown setext, reStructuredText, plain text) are headings. 4: a packed
#: paragraph keeps its first line's indentation (an indented block stays code).
#: ``tests/store/test_store_format.py`` pins the chunker's output to it.
FORMAT = 4
CONFLICT_POLICIES = ("skip", "replace")


def sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\x1f")
    return h.hexdigest()


class Prepared:
    """A Document's content hash and its chunk rows (without vectors).

    ``rows()`` chunks the document anew on each call, one row at a time:
    unchanged sources are never chunked, and a big one never sits in memory
    as a list of row dicts (store/batches.py turns them into Arrow as they come)."""

    __slots__ = ("acl", "content_hash", "rows", "size", "source")

    def __init__(
        self,
        source: str,
        content_hash: str,
        rows: Callable[[], Iterator[dict[str, Any]]],
        size: int,
        acl: EffectiveACL,
    ) -> None:
        self.source = source
        self.content_hash = content_hash
        self.rows = rows
        self.size = size  # characters of text: what embedding progress counts
        self.acl = acl  # what every chunk will store: compared with what is stored (visibility.py)


def check_acl(acl: dict[str, Any] | None) -> dict[str, Any]:
    """``ingest(acl=...)`` checked: only the ACL keys, names without control
    characters, roles/users as lists (a bare string is one name)."""
    if acl is None:
        return {}
    if not isinstance(acl, dict):
        raise InputTypeError(f"acl must be a dict with roles/users/tenant, got {type(acl).__name__}")
    unknown = sorted(str(k) for k in acl if k not in ACL_KEYS)
    if unknown:
        raise InputError(f"acl accepts only 'roles', 'users', 'tenant'; got {unknown}")
    out: dict[str, Any] = {}
    for key in ("roles", "users"):
        if key in acl:
            value = acl[key]
            if not isinstance(value, str | list | tuple | set | frozenset):
                raise InputTypeError(f"acl {key} must be a list of names, got {value!r}")
            vals = [value] if isinstance(value, str) else list(value)
            out[key] = tuple(validate_acl_name(v, f"acl {key[:-1]}") for v in vals)
    if "tenant" in acl:
        tenant = acl["tenant"]
        if not isinstance(tenant, str) or not tenant.strip():
            # "" or None would read as "every tenant": a config that yields a
            # blank must not publish documents across tenants.
            raise InputError(
                f"acl tenant must be a non-blank name, got {tenant!r} (leave the key out to keep "
                "each document's own tenant)"
            )
        out["tenant"] = validate_acl_name(tenant, "acl tenant")
    return out


def check_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """``ingest(metadata=...)``: JSON values, and no key a reader would take
    for access control (it would be stored as harmless metadata)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InputTypeError(f"metadata must be a dict, got {type(metadata).__name__}")
    for key in metadata:
        refused = acl_key_error(str(key)) if key not in ACL_KEYS else "ACL keys belong in acl=, not metadata="
        if refused is not None:
            raise InputError(f"metadata {refused}")
    try:
        json.dumps(metadata)
    except (TypeError, ValueError) as exc:
        raise InputError(f"metadata must be JSON-serialisable: {exc}") from exc
    return dict(metadata)


def check_prefix(prefix: str) -> str:
    """ "" or a relative folder name ending in "/" that every source gets."""
    if not isinstance(prefix, str):
        raise InputTypeError(f"prefix must be a string, got {type(prefix).__name__}")
    if not prefix:
        return ""
    validate_acl_name(prefix, "prefix")
    if prefix.startswith(("/", "\\")) or "#" in prefix or ".." in prefix.replace("\\", "/").split("/"):
        raise InputError(f"prefix must be a relative folder name without '#' or '..', got {prefix!r}")
    prefix = prefix.replace("\\", "/")
    return prefix if prefix.endswith("/") else prefix + "/"


def check_policy(on_conflict: str) -> str:
    if on_conflict not in CONFLICT_POLICIES:
        raise InputError(f"on_conflict must be one of {', '.join(CONFLICT_POLICIES)}, got {on_conflict!r}")
    return on_conflict


def origin_of(path: str | os.PathLike[str]) -> str:
    """The folder whose relative paths the sources are: the ingested folder,
    or a single file's folder, resolved (so "docs" and "./docs/" agree)."""
    p = Path(path).resolve()
    return (p.parent if p.is_file() else p).as_posix()


def conflict(source: str, stored_origin: str | None, origin: str, prefix: str) -> str | None:
    """Why ``source`` must not replace what is stored under the same name, or None."""
    if not stored_origin or stored_origin == origin:
        # "" is a chunk stored before origins were recorded (format 1): the
        # same source name from the folder the caller names is the usual case.
        return None
    suggestion = Path(origin).name or "this-folder"
    return (
        f"already stored from another folder ({stored_origin}); ingest this one with "
        f"prefix={(prefix + suggestion + '/')!r} to keep both, or on_conflict='replace' to replace it"
    )


def prepare(
    doc: Document,
    override: dict[str, Any],
    extra: dict[str, Any],
    max_chars: int,
    *,
    prefix: str,
    origin: str,
    default_access: str = "public",
) -> Prepared:
    """Rows (without vectors) for one Document; ValueError for a bad ACL.
    ``default_access``: what a document that declares no access gets."""
    from selfrag_nb.text import detect_language

    # ingest(acl=...) replaces who may read (roles and users together: an
    # override naming only users must not inherit the document's roles) and,
    # separately, the tenant.
    if "roles" in override or "users" in override:
        who = (override.get("roles"), override.get("users"))
    else:
        who = (doc.roles, doc.users)
    try:
        acl = effective_acl(*who, override.get("tenant", doc.tenant), default_access=default_access)
    except ValueError as exc:
        raise InputError(f"bad ACL: {exc}") from exc
    roles, users, tenant = acl
    source = prefix + doc.source
    meta = {**doc.metadata, **extra}
    meta_json = json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str)
    # the hash covers what ends up stored, so a new ACL or metadata re-writes the source
    content_hash = sha(
        doc.raw_hash,
        json.dumps([sorted(roles), sorted(users), tenant]),
        meta_json,
        str(max_chars),
        str(FORMAT),
    )
    doc_id = sha("doc", source)[:16]

    def rows() -> Iterator[dict[str, Any]]:
        # the repeat count of each text keeps chunk ids unique; hashed, so a
        # big file's texts are not all kept alive here as dict keys
        seen: dict[str, int] = {}
        for c in iter_chunks(doc.text, headings=doc.heading_style, max_chars=max_chars):
            text_key = hashlib.sha256(c.text.encode()).hexdigest()
            n = seen.get(text_key, 0)
            seen[text_key] = n + 1
            context = context_header(doc.title, c.heading)
            yield {
                "chunk_id": sha("chunk", source, c.text, str(n))[:24],
                "doc_id": doc_id,
                "source": source,
                "title": doc.title,
                "heading": c.heading,
                "text": c.text,
                "context": context,
                "search_text": f"{context}\n{c.text}" if context else c.text,
                "ordinal": c.ordinal,
                "content_hash": content_hash,
                "acl_roles": list(roles),
                "acl_users": list(users),
                "tenant": tenant,
                "lang": detect_language(c.text),
                "metadata": meta_json,
                "origin": origin,
            }

    return Prepared(source, content_hash, rows, len(doc.text), acl)
