"""Evidence attribution: which chunk each claim of an answer stands on.

    trace.attribution(rag=None, *, estimate=False, confirm=False, sentences=None)
    rag.attribution(trace, ...)   rag.attribution_plan(trace)   step.attribution(...)
      -> attribution_run.attribute / plan (leave-one-out, as ContextCite's ablations)
      = Attribution                 (or AttributionPlan with estimate=True)
          chunks   the kept chunks the answer was verified against, [n] order, named
          claims   one row per claim of the verified answer:
                     verdict   with every chunk (the trace's own verification, reused)
                     cells     one per chunk: the verdict with that chunk left out
                               and its effect (EFFECTS)
                     sentences one per evidence sentence the claim quoted, left out alone
          calls    the verify calls the ablations made (none for the full context)
          plan     what was planned: calls, identical ones made once, estimated tokens
          reason   why nothing was attributed ("" when something was)

Records are frozen pydantic models with an exact JSON round trip
(``to_json`` / ``from_json``), built on the same bases as the trace's (_records.py:
``_Frozen``, ``_Displayable``: notebook faces, one-line repr, and ``_Saved``: one JSON file), so a record
of either module behaves the same in a notebook. Their notebook faces (a one
line text, a static claims x chunks matrix) are registered by
``selfrag_nb.display.attribution_view``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selfrag_nb._records import _Displayable, _Frozen, _Saved
from selfrag_nb.errors import InputError, NotFoundError
from selfrag_nb.store.types import ChunkRef
from selfrag_nb.trace import ClaimEvidence, ModelCall, Totals

__all__ = [
    "CONFIRM_CALLS",
    "CONFIRM_TOKENS",
    "EFFECTS",
    "Attribution",
    "AttributionChunk",
    "AttributionCostError",
    "AttributionPlan",
    "Cell",
    "ClaimAttribution",
    "Effect",
    "SentenceCell",
    "effect_of",
]

Verdict = Literal["supported", "partial", "unsupported"]
#: What leaving a chunk (or a sentence) out did to a claim's verdict:
#:   decisive      supported or partial -> unsupported: the claim is lost without it
#:   weakened      supported -> partial
#:   unaffected    the same verdict (or unsupported either way)
#:   strengthened  a better verdict without it (the chunk worked against the claim:
#:                 a contradicting or superseded passage)
#:   unknown       the ablated call failed, or its verdicts did not name this claim
Effect = Literal["decisive", "weakened", "unaffected", "strengthened", "unknown"]
EFFECTS: tuple[Effect, ...] = ("decisive", "weakened", "unaffected", "strengthened", "unknown")

#: With a model that is not the offline one, attribution runs without
#: ``confirm=True`` only while its plan stays within both of these (model
#: calls, estimated input tokens); above either it raises AttributionCostError
#: stating the plan. The offline model is free and never asks.
CONFIRM_CALLS = 10
CONFIRM_TOKENS = 50_000

_RANK: dict[str, int] = {"unsupported": 0, "partial": 1, "supported": 2}


def effect_of(before: str, after: str | None) -> Effect:
    """The effect of an ablation on a claim judged ``before`` with every chunk
    and ``after`` without the one left out (None: not known)."""
    if after is None:
        return "unknown"
    b, a = _RANK[before], _RANK[after]
    if b > 0 and a == 0:
        return "decisive"
    if b == 2 and a == 1:
        return "weakened"
    if a > b:
        return "strengthened"
    return "unaffected"


class AttributionChunk(_Frozen):
    """A kept chunk: the [n] it had in the answer's evidence, and its document."""

    chunk_id: str
    index: int
    #: What views call it: the document's title, else its file name, else the chunk id.
    name: str = ""
    ref: ChunkRef

    @classmethod
    def of(cls, chunk_id: str, index: int, ref: ChunkRef) -> AttributionChunk:
        name = ref.title or ref.source.rstrip("/").rsplit("/", 1)[-1] or chunk_id
        return cls(chunk_id=chunk_id, index=index, name=name, ref=ref)

    @property
    def superseded(self) -> bool:
        """The chunk's document says it is superseded (status or superseded_by)."""
        status = self.ref.doc.get("status", "").strip().lower()
        return status == "superseded" or (bool(self.ref.doc.get("superseded_by")) and not status)


class Cell(_Frozen):
    """One claim x one chunk: the claim's verdict with the chunk left out."""

    chunk_id: str
    verdict: Verdict | None = None
    effect: Effect = "unknown"


class SentenceCell(_Frozen):
    """One evidence sentence the claim quoted, left out of its chunk alone."""

    chunk_id: str
    span: str
    verdict: Verdict | None = None
    effect: Effect = "unknown"


class ClaimAttribution(_Frozen):
    """One claim of the verified answer and what its support depends on."""

    text: str
    #: The verdict with every chunk: the trace's own verification.
    verdict: Verdict
    #: Offsets of the claim in the answer (-1 when the verifier's words are not found there).
    start: int = -1
    end: int = -1
    evidence: list[ClaimEvidence] = Field(default_factory=list)
    cited: list[str] = Field(default_factory=list)
    #: One per chunk of ``Attribution.chunks``, in that order.
    cells: list[Cell] = Field(default_factory=list)
    sentences: list[SentenceCell] = Field(default_factory=list)

    @property
    def decisive(self) -> list[str]:
        """Chunk ids without which the claim is lost."""
        return [c.chunk_id for c in self.cells if c.effect == "decisive"]

    @property
    def weakened_by(self) -> list[str]:
        """Chunk ids without which the claim is only partly supported."""
        return [c.chunk_id for c in self.cells if c.effect == "weakened"]

    @property
    def rests_on_single_chunk(self) -> bool:
        """Supported (in full or in part) and lost without exactly one chunk."""
        return self.verdict != "unsupported" and len(self.decisive) == 1


class AttributionPlan(_Displayable):
    """What an attribution will cost, stated before it runs."""

    question: str = ""
    model: str = ""
    offline: bool = False
    #: Why there is nothing to attribute ("" when there is).
    reason: str = ""
    chunks: int = 0
    claims: int = 0
    chunk_ablations: int = 0
    sentence_ablations: int = 0
    #: Distinct verify calls to make (identical ablations are made once).
    calls: int = 0
    #: Ablations that repeat another one's call exactly (made once).
    collapsed: int = 0
    #: Calls taken from the trace instead of being made: its full-context verification.
    reused: int = 0
    #: Estimates from the trace's own verify call (its tokens per prompt character).
    tokens_in: int = 0
    tokens_out: int = 0
    #: US dollars; None when the trace's verify call had no known price.
    cost: float | None = 0.0
    #: Calls in flight at once.
    concurrency: int = 1
    #: True when a real model's plan exceeds CONFIRM_CALLS or CONFIRM_TOKENS.
    needs_confirmation: bool = False


class Attribution(_Saved):
    """Which chunk each claim of one answer stands on (see the module doc)."""

    question: str = ""
    answer: str = ""
    #: The verify model the ablations were judged by (the trace's).
    model: str = ""
    offline: bool = False
    #: The generation attempt whose verification was ablated.
    attempt: int = 0
    #: Why nothing was attributed ("" when something was).
    reason: str = ""
    chunks: list[AttributionChunk] = Field(default_factory=list)
    claims: list[ClaimAttribution] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    plan: AttributionPlan = Field(default_factory=AttributionPlan)
    wall_ms: float = 0.0

    @property
    def empty(self) -> bool:
        return not self.claims

    @property
    def decisive_cells(self) -> int:
        return sum(c.effect == "decisive" for row in self.claims for c in row.cells)

    @property
    def supported_claims(self) -> list[ClaimAttribution]:
        """Claims the verifier supported, in full or in part."""
        return [c for c in self.claims if c.verdict != "unsupported"]

    @property
    def single_chunk_claims(self) -> list[ClaimAttribution]:
        """Supported claims lost without exactly one chunk."""
        return [c for c in self.claims if c.rests_on_single_chunk]

    @property
    def superseded_claims(self) -> list[ClaimAttribution]:
        """Supported claims lost without a chunk of a superseded document."""
        stale = {c.chunk_id for c in self.chunks if c.superseded}
        return [c for c in self.supported_claims if stale & set(c.decisive)]

    def chunk(self, chunk_id: str) -> AttributionChunk:
        for c in self.chunks:
            if c.chunk_id == chunk_id:
                return c
        raise NotFoundError(f"chunk {chunk_id!r} is not among the attributed chunks", key=chunk_id)

    @property
    def totals(self) -> Totals:
        """The ablation calls' count, tokens, cost (None when any price is unknown) and wall time."""
        costs = [c.cost for c in self.calls]
        return Totals(
            wall_ms=self.wall_ms,
            model_calls=len(self.calls),
            tokens_in=sum(c.tokens_in or 0 for c in self.calls),
            tokens_out=sum(c.tokens_out or 0 for c in self.calls),
            cost=None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs)),
        )


class AttributionCostError(InputError):
    """A real model's attribution plan above CONFIRM_CALLS / CONFIRM_TOKENS was
    not confirmed. ``plan`` is the AttributionPlan; run again with ``confirm=True``."""

    def __init__(self, message: str, *, plan: AttributionPlan) -> None:
        super().__init__(message)
        self.plan = plan
