"""Attribution in an evaluation: ``evaluate(..., attribution=True)``.

    answer(...) scored a row and kept its trace
      -> attribution_fields(rag, trace)     rag.attribution(trace, confirm=True, sentences=False)
           (one verify call per kept chunk of an answered question; refusals,
            direct replies and unverified answers cost nothing)
         -> EvalRow.attributed_claims    supported claims (None: not measured)
                   .single_chunk_claims  of them, lost without exactly one chunk
                   .superseded_claims    of them, lost without a superseded document's chunk
                   .attribution_calls    verify calls the ablations made
    report.summary  -> attribution_summary(rows) per variant x category:
                       single_chunk_share, superseded_share (of the attributed
                       claims), attribution_calls; absent when nothing was measured

Off by default because it costs model calls: with a real model, one verify
call per kept chunk of every verified answer (sentence ablations are left
out here). The evaluation is the confirmation, so no per-question cost check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from selfrag_nb.attribution import Attribution
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.trace import Trace

__all__ = ["attribution_fields", "attribution_summary"]


async def attribution_fields(rag: Any, trace: Trace) -> dict[str, Any]:
    """The attribution columns of one answered question (see the module doc)."""
    from selfrag_nb.attribution_run import aattribute

    a = await aattribute(trace, rag, confirm=True, sentences=False)
    assert isinstance(a, Attribution)
    return {
        "attributed_claims": len(a.supported_claims),
        "single_chunk_claims": len(a.single_chunk_claims),
        "superseded_claims": len(a.superseded_claims),
        "attribution_calls": len(a.calls),
    }


def attribution_summary(rows: Sequence[EvalRow]) -> dict[str, Any]:
    """Shares over the rows' attributed claims ({} when none was measured)."""
    measured = [r for r in rows if r.attributed_claims is not None]
    if not measured:
        return {}
    claims = sum(r.attributed_claims or 0 for r in measured)
    return {
        "single_chunk_share": sum(r.single_chunk_claims for r in measured) / claims if claims else None,
        "superseded_share": sum(r.superseded_claims for r in measured) / claims if claims else None,
        "attribution_calls": sum(r.attribution_calls for r in measured),
    }
