"""Static faces of an IngestReport: what one ingest did, and whose access changed.

    IngestReport -> ingest_html(report)   a card: counts (added / updated / unchanged /
                                          removed / skipped, chunks, version), then
                                          "access changed": one row per document,
                                          before -> after, widened rows marked
                                          (a red badge), then the warnings, then the
                                          skipped files and why
                 -> ingest_text(report)   str(report), then one line per access change
                                          and per warning

Static only (no widget): a report is read once, right after the cell ran.
Source names, role names and skip reasons come from the documents, so all of
it goes through ``markup.esc``.
"""

from __future__ import annotations

from selfrag_nb.display import faces
from selfrag_nb.display.cards import badge
from selfrag_nb.display.html import ROOT_CLASS, css
from selfrag_nb.display.markup import esc, neutralize
from selfrag_nb.store.types import IngestReport

__all__ = ["ingest_html", "ingest_text"]

#: Rows of each table before the rest is summarised ("and N more").
_ROWS = 50
_TONE = {"widened": "bad", "narrowed": "info", "changed": "info"}


def _more(n: int) -> str:
    return f'<div class="srnb-muted">and {n:,} more</div>' if n > 0 else ""


def _access(report: IngestReport) -> str:
    if not report.acl_changes:
        return ""
    rows = "".join(
        f"<tr><td>{esc(c.source, 300)}</td><td>{esc(c.before.describe(), 300)}</td>"
        f"<td>{esc(c.after.describe(), 300)}</td>"
        f"<td>{badge(c.kind, _TONE[c.kind])}</td></tr>"
        for c in report.acl_changes[:_ROWS]
    )
    return (
        '<div class="srnb-col-h">access changed: who may read each document, before → after</div>'
        '<table class="srnb-table"><thead><tr><th>document</th><th>before</th><th>after</th>'
        f"<th>change</th></tr></thead><tbody>{rows}</tbody></table>" + _more(len(report.acl_changes) - _ROWS)
    )


def _pairs(title: str, header: str, pairs: list[tuple[str, str]]) -> str:
    """A (file, message) table: the skipped files or the warnings."""
    if not pairs:
        return ""
    rows = "".join(
        f"<tr><td>{esc(path, 300)}</td><td>{esc(text, 600)}</td></tr>" for path, text in pairs[:_ROWS]
    )
    return (
        f'<div class="srnb-col-h">{title}</div><table class="srnb-table"><thead><tr><th>file</th>'
        f"<th>{header}</th></tr></thead><tbody>{rows}</tbody></table>" + _more(len(pairs) - _ROWS)
    )


def ingest_html(report: IngestReport) -> str:
    """Static HTML of one ingest (no script; every name escaped)."""
    widened = sum(c.widened for c in report.acl_changes)
    badges = (
        badge(f"{widened} widened", "bad", "someone can read these now who could not before")
        if widened
        else ""
    )
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
    head = (
        f'<div class="srnb-card-h"><span class="srnb-stage">Ingest</span>{badges}'
        f'<span class="srnb-meta">{counts} · chunks +{report.chunks_added:,}/−{report.chunks_removed:,}'
        f"{version} · {report.seconds:.2f} s</span></div>"
    )
    body = (
        _access(report)
        + _pairs("warnings", "warning", report.warnings)
        + _pairs("skipped", "reason", report.skipped)
    )
    return (
        f'<div class="{ROOT_CLASS}" dir="ltr"><style>{css()}</style>'
        f'<section class="srnb-card srnb-card-ingest">{head}{body}</section></div>'
    )


def ingest_text(report: IngestReport) -> str:
    """``str(report)``, then one line per document whose access changed."""
    lines = [str(report)]
    # names come from files: terminal control characters are shown, not obeyed
    lines += [neutralize(f"  access {c}") for c in report.acl_changes[:_ROWS]]
    if len(report.acl_changes) > _ROWS:
        lines.append(f"  and {len(report.acl_changes) - _ROWS} more access changes")
    lines += [neutralize(f"  warning {source}: {text}") for source, text in report.warnings[:_ROWS]]
    return "\n".join(lines)


faces.register(IngestReport, text=ingest_text, html=ingest_html, widget=None)
