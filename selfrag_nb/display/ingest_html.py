"""Static faces of an IngestReport: what one ingest did, and whose access changed.

    IngestReport -> ingest_tree(report)   a view tree (tree.py); the static face is its page:
                                          a card: counts (added / updated / unchanged /
                                          removed / skipped, chunks, version), then
                                          "access changed": one row per document,
                                          before -> after, widened rows marked
                                          (a red badge), then the warnings, then the
                                          skipped files and why
                 -> ingest_text(report)   str(report), then one line per access change
                                          and per warning

Static only (no widget): a report is read once, right after the cell ran.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.cards import badge, card_head, esc, root, table
from selfrag_nb.display.html import ROOT_CLASS
from selfrag_nb.display.markup import neutralize
from selfrag_nb.display.tables import tr
from selfrag_nb.display.tree import Node, h
from selfrag_nb.store.types import IngestReport

#: Rows of each table before the rest is summarised ("and N more").
_ROWS = 50
_TONE = {"widened": "bad", "narrowed": "info", "changed": "info"}


def _section(title: str, heads: list[str], rows: list[list[Any]], total: int) -> list[Any]:
    """A titled table of the first rows (at most _ROWS of ``total``), then "and N more"."""
    if not rows:
        return []
    more = h("div", "srnb-muted", f"and {total - _ROWS:,} more") if total > _ROWS else None
    return [h("div", "srnb-col-h", title), table("srnb-table", heads, [tr("", *r) for r in rows]), more]


def _access(report: IngestReport) -> list[Any]:
    rows = [
        [
            esc(c.source, 300),
            esc(c.before.describe(), 300),
            esc(c.after.describe(), 300),
            badge(c.kind, _TONE[c.kind]),
        ]
        for c in report.acl_changes[:_ROWS]
    ]
    title = "access changed: who may read each document, before → after"
    return _section(title, ["document", "before", "after", "change"], rows, len(report.acl_changes))


def _pairs(title: str, header: str, pairs: list[tuple[str, str]]) -> list[Any]:
    """A (file, message) table: the skipped files or the warnings."""
    rows = [[esc(path, 300), esc(text, 600)] for path, text in pairs[:_ROWS]]
    return _section(title, ["file", header], rows, len(pairs))


def ingest_tree(report: IngestReport) -> Node:
    """One ingest as a view tree (root included; every name is text)."""
    widened = sum(c.widened for c in report.acl_changes)
    sizes = {k: len(getattr(report, k)) for k in ("added", "updated", "unchanged", "removed", "skipped")}
    sizes["access changed"] = len(report.acl_changes)
    counts = " · ".join(f"{n:,} {label}" for label, n in sizes.items())
    version = f" · version {report.version}" if report.version is not None else ""
    chunks = f"chunks +{report.chunks_added:,}/−{report.chunks_removed:,}{version}"
    tip = "someone can read these now who could not before"
    numbers = h("span", "srnb-meta", f"{counts} · {chunks} · {report.seconds:.2f} s")
    head = card_head("Ingest", badge(f"{widened} widened", "bad", tip) if widened else None, numbers)
    body = [
        _access(report),
        _pairs("warnings", "warning", report.warnings),
        _pairs("skipped", "reason", report.skipped),
    ]
    return root(ROOT_CLASS, h("section", "srnb-card srnb-card-ingest", head, body))


def ingest_text(report: IngestReport) -> str:
    """``str(report)``, then one line per document whose access changed."""
    lines = [str(report)]
    # names come from files: terminal control characters are shown, not obeyed
    lines += [neutralize(f"  access {c}") for c in report.acl_changes[:_ROWS]]
    if len(report.acl_changes) > _ROWS:
        lines.append(f"  and {len(report.acl_changes) - _ROWS} more access changes")
    lines += [neutralize(f"  warning {source}: {text}") for source, text in report.warnings[:_ROWS]]
    return "\n".join(lines)


# html: the tree as a static page with trace.css (faces' default for a tree); no widget
faces.register(IngestReport, text=ingest_text, tree=ingest_tree, widget=None)
