"""Visibility never widens silently: what an ingest changes about who may
read the documents already stored.

    ingest(path, allow_widen=False)
      prepared documents (each with the ACL it would store, Prepared.acl)
      stored_acls(table, sources)       the ACL stored now, per source (one row each)
      acl_changes(prepared, stored)     AclChange per source whose ACL differs:
                                          widened   acl.widens(before, after)
                                          narrowed  acl.widens(after, before)
      refuse_widening(changes, allow)   any widened and not allow_widen
                                          -> AccessWideningError naming each document
                                             (before embedding, and again under the
                                             write lock against what is stored then)
      -> IngestReport.acl_changes       every change, widened or not
      name_warnings(prepared, stored)   role / user names that differ only by case or
                                        spacing ("Finance" vs "finance"): matching is
                                        exact, so one of them reaches nobody
      -> IngestReport.warnings

Why refuse rather than warn: re-ingesting a restricted folder without its
``acl=`` (or after a front-matter edit, or under a handle opened with another
``default_access``) would otherwise publish it with a report that reads
"updated=20". A warning scrolls away; a refusal names the documents and the
one argument that says "yes, I mean it".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import AccessWideningError
from selfrag_nb.store.acl import widens
from selfrag_nb.store.types import AclChange, EffectiveACL

if TYPE_CHECKING:
    from selfrag_nb.store.prepare import Prepared

__all__ = ["acl_changes", "name_warnings", "refuse_widening", "stored_acls"]

#: Sources named in a refusal's message; the error's ``changes`` holds them all.
_NAMED = 10


def stored_acls(table: Any, sources: Iterable[str]) -> dict[str, EffectiveACL]:
    """source -> the ACL its chunks carry now (every chunk of a document
    carries the same one), for those of ``sources`` that are stored."""
    from selfrag_nb.store.kb_core import _sql_in

    wanted = sorted(set(sources))
    if table is None or not wanted:
        return {}
    data = (
        table.search()
        .where(_sql_in("source", wanted))
        .select(["source", "acl_roles", "acl_users", "tenant"])
        .limit(None)
        .to_arrow()
    )
    out: dict[str, EffectiveACL] = {}
    for row in data.to_pylist():
        out.setdefault(
            row["source"],
            EffectiveACL(tuple(row["acl_roles"] or ()), tuple(row["acl_users"] or ()), row["tenant"] or ""),
        )
    return out


def _same(a: EffectiveACL, b: EffectiveACL) -> bool:
    return set(a.roles) == set(b.roles) and set(a.users) == set(b.users) and a.tenant == b.tenant


def acl_changes(prepared: Iterable[Prepared], stored: dict[str, EffectiveACL]) -> list[AclChange]:
    """One AclChange per prepared document that is stored with another ACL."""
    out = []
    for p in prepared:
        before = stored.get(p.source)
        if before is None or _same(before, p.acl):
            continue
        out.append(
            AclChange(
                source=p.source,
                before=before,
                after=p.acl,
                widened=widens(before, p.acl),
                narrowed=widens(p.acl, before),
            )
        )
    return out


def refuse_widening(changes: list[AclChange], allow_widen: bool) -> None:
    """AccessWideningError when a change widens access and the caller did not
    say ``allow_widen=True``."""
    wider = [c for c in changes if c.widened]
    if not wider or allow_widen:
        return
    named = "; ".join(f"{c.source}: {c.before.describe()} -> {c.after.describe()}" for c in wider[:_NAMED])
    more = f"; and {len(wider) - _NAMED} more" if len(wider) > _NAMED else ""
    raise AccessWideningError(
        f"this ingest would let more people read {len(wider)} stored document"
        f"{'s' if len(wider) != 1 else ''}: {named}{more}. Nothing was written. If the documents "
        "lost their acl= or front matter by mistake, ingest them with it; if the wider access "
        "is intended, pass allow_widen=True (CLI: --allow-widen)",
        wider,
    )


def _fold(name: str) -> str:
    return " ".join(name.casefold().split())


def name_warnings(prepared: Iterable[Prepared], stored: dict[str, EffectiveACL]) -> list[tuple[str, str]]:
    """(source, warning) for each role or user name of this ingest that
    differs from another name of this ingest or of the stored documents it
    replaces only by case or spacing. Roles match exactly, so "Finance" and
    "finance" are two roles and a user holding one cannot read the other's
    documents: almost always a typo, never refused (the access is narrower)."""
    docs = list(prepared)
    seen: dict[tuple[str, str], set[str]] = {}
    for acl in [p.acl for p in docs] + list(stored.values()):
        for kind, names in (("role", acl.roles), ("user", acl.users)):
            for name in names:
                seen.setdefault((kind, _fold(name)), set()).add(name)
    out = []
    for p in docs:
        for kind, names in (("role", p.acl.roles), ("user", p.acl.users)):
            for name in names:
                others = sorted(seen[(kind, _fold(name))] - {name})
                if others:
                    out.append(
                        (
                            p.source,
                            f"{kind} {name!r} differs from {', '.join(repr(o) for o in others)} only by case "
                            f"or spacing; names match exactly, so users of one cannot read the other",
                        )
                    )
    return out
