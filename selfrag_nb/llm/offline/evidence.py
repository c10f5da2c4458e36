"""What the answer side reads off one piece of evidence: its status and its label.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                   ^^^^^^^^ here: imports nothing of
                                                            the package; shared by assess,
                                                            generate and verify.

    Evidence.metadata["status"] --evidence_status()--> "superseded" | "current" | ""
    Evidence --evidence_label()--> "[n] title"          how assess names a source

Superseded evidence loses conflicts (assess), is scored lower (generate) and
contradicts nothing while current evidence exists (verify).
"""

from __future__ import annotations

from selfrag_nb.llm.schemas import Evidence

__all__ = ["evidence_label", "evidence_status"]


_SUPERSEDED = frozenset(
    {"superseded", "deprecated", "archived", "obsolete", "outdated", "inactive", "retired"}
)
_CURRENT = frozenset({"current", "active", "effective", "published", "latest", "live"})


def evidence_status(ev: Evidence) -> str:
    """ "superseded", "current" or "" from the metadata (and a "supersedes" line)."""
    value = str(ev.metadata.get("status", "")).strip().lower()
    if value in _SUPERSEDED:
        return "superseded"
    if value in _CURRENT:
        return "current"
    return ""


def evidence_label(ev: Evidence) -> str:
    name = ev.title or ev.source or ev.chunk_id
    return f"[{ev.index}] {name}"
