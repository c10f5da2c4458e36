"""How every view names a chunk: document, heading path, rank, trust flags.

    Hit / ChunkRef (a record's ``refs``)
      -> chunk_name(ref)   {"id", "source", "file", "path", "rank", "flags"}
           file   the source's last path segment       refund-policy-2024.md
           path   title › heading, the title said once  Refund Policy (2024) › Refund window
           flags  (text, tone, tooltip) from TRUST_KEYS  ⚠ superseded · effective 2024-01-01
      -> cards.Ctx.label / short: the view tree both faces (static HTML, widget) show

Chunk ids are never the visible name when the document is known: they stay
in tooltips and a hit's details. When only an id is known (a trace without its
retrieval), ``short_id`` cuts it with an ellipsis, never mid-word by the layout.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.store.types import ChunkRef, Hit

#: Characters of a chunk id shown when nothing better names the chunk.
SHORT_ID = 10


def file_name(source: str) -> str:
    """The last segment of a source path (the whole source when it has none)."""
    return source.rstrip("/").rsplit("/", 1)[-1] or source


def heading_path(title: str, heading: str) -> str:
    """``title › heading`` with the heading's leading parts that only repeat
    the title left out (Markdown documents start with their title as H1)."""
    parts = [p.strip() for p in heading.split(" > ") if p.strip()] if heading else []
    while parts and title and parts[0].casefold() == title.strip().casefold():
        parts.pop(0)
    head = [title.strip()] if title.strip() else []
    return " › ".join(head + parts)


def short_id(chunk_id: str) -> str:
    return chunk_id if len(chunk_id) <= SHORT_ID + 1 else chunk_id[:SHORT_ID] + "…"


def doc_flags(doc: dict[str, str]) -> list[tuple[str, str, str]]:
    """(text, tone, tooltip) per trust fact of a document, worst first."""
    flags: list[tuple[str, str, str]] = []
    status = doc.get("status", "").strip().lower()
    by = doc.get("superseded_by", "")
    if status == "superseded" or (by and not status):
        flags.append(("⚠ superseded", "bad", f"superseded by {by}" if by else "this document is superseded"))
    elif status == "current":
        tip = f"current; supersedes {doc['supersedes']}" if doc.get("supersedes") else "current version"
        flags.append(("current", "ok", tip))
    elif status:
        flags.append((status, "warn", f"document status: {status}"))
    if doc.get("effective"):
        flags.append((f"effective {doc['effective']}", "", "effective date of the document"))
    if doc.get("version"):
        flags.append((f"version {doc['version']}", "", "document version"))
    return flags


def search_ranks(hit: Hit) -> str:
    """ "vector #2 · keywords #1": where each search leg placed the hit."""
    names = {"vector": "vector", "fts": "keywords"}
    order = sorted(hit.ranks, key=lambda k: (k not in names, list(names).index(k) if k in names else 0, k))
    return " · ".join(f"{names.get(k, k)} #{hit.ranks[k]}" for k in order)


def chunk_name(ref: ChunkRef | Hit) -> dict[str, Any]:
    """What a view shows for a chunk (see the module doc)."""
    r = ChunkRef.from_hit(ref) if isinstance(ref, Hit) else ref
    return {
        "id": r.chunk_id,
        "source": r.source,
        "file": file_name(r.source),
        "path": heading_path(r.title, r.heading),
        "rank": r.rank,
        "flags": [list(f) for f in doc_flags(r.doc)],
    }
