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
from selfrag_nb.display.tree import Node, h
from selfrag_nb.store.types import IngestReport

#: Rows of each table before the rest is summarised ("and N more").
_ROWS = 50
_TONE = {"widened": "bad", "narrowed": "info", "changed": "info"}


def _more(n: int) -> Node | None:
    return h("div", "srnb-muted", f"and {n:,} more") if n > 0 else None


def _table(heads: list[str], rows: list[list[Any]]) -> Node:
    return table("srnb-table", heads, [h("tr", "", [h("td", "", c) for c in r]) for r in rows])


def _access(report: IngestReport) -> list[Any]:
    if not report.acl_changes:
        return []
    rows = [
        [
            esc(c.source, 300),
            esc(c.before.describe(), 300),
            esc(c.after.describe(), 300),
            badge(c.kind, _TONE[c.kind]),
        ]
        for c in report.acl_changes[:_ROWS]
    ]
    return [
        h("div", "srnb-col-h", "access changed: who may read each document, before → after"),
        _table(["document", "before", "after", "change"], rows),
        _more(len(report.acl_changes) - _ROWS),
    ]


def _pairs(title: str, header: str, pairs: list[tuple[str, str]]) -> list[Any]:
    """A (file, message) table: the skipped files or the warnings."""
    if not pairs:
        return []
    rows = [[esc(path, 300), esc(text, 600)] for path, text in pairs[:_ROWS]]
    return [h("div", "srnb-col-h", title), _table(["file", header], rows), _more(len(pairs) - _ROWS)]


def ingest_tree(report: IngestReport) -> Node:
    """One ingest as a view tree (root included; every name is text)."""
    widened = sum(c.widened for c in report.acl_changes)
    counts = " · ".join(
        f"{n:,} {label}"
        for label, n in (
            ("added", len(report.added)),
            ("updated", len(report.updated)),
            ("unchanged", len(report.unchanged)),
            ("removed", len(report.removed)),
            ("skipped", len(report.skipped)),
            ("access changed", len(report.acl_changes)),
        )
    )
    version = f" · version {report.version}" if report.version is not None else ""
    head = card_head(
        "Ingest",
        badge(f"{widened} widened", "bad", "someone can read these now who could not before")
        if widened
        else None,
        h(
            "span",
            "srnb-meta",
            f"{counts} · chunks +{report.chunks_added:,}/−{report.chunks_removed:,}{version} · {report.seconds:.2f} s",
        ),
    )
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
