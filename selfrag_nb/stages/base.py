"""What every stage shares: the context of one question and the Stage shape.

    SelfRAG / Stepper
      -> StageContext(kb, runner, settings, user, history, reranker, deadline,
                      decision cache, overrides, dropped chunks)
         question and history bounded for models (query, bound_history; decide
         records the cut as a Fallback)
      -> Stage.run(trace, ctx) -> one record (or None when the stage is skipped)
         each Stage subclass registers under its flow step name (STAGE_CLASSES)
         reads earlier records from the Trace; never renders, never mutates them

Helpers here are the ones several stages share: the evidence list the
later stages show to the model (``[n]`` numbering is shared by generate and
verify; its text is clean, ``selfrag_nb.cleantext``), the [n] markers an answer cites, and the question chunks are judged
against (a follow-up completed by rewrite).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from selfrag_nb.cleantext import clean_text
from selfrag_nb.errors import InputTypeError
from selfrag_nb.flow import STAGES
from selfrag_nb.llm.schemas import Evidence, Message
from selfrag_nb.text import markers_in

if TYPE_CHECKING:
    from selfrag_nb.config import Settings
    from selfrag_nb.llm.runner import ModelRunner
    from selfrag_nb.rerankers import Reranker
    from selfrag_nb.stages.decide import DecisionCache
    from selfrag_nb.store.kb import KnowledgeBase
    from selfrag_nb.store.types import Hit, User
    from selfrag_nb.trace import Citation, Record, Trace

__all__ = [
    "FOLLOW_UP_REASON",
    "MAX_MODEL_HISTORY_CHARS",
    "MAX_MODEL_HISTORY_TURNS",
    "MAX_MODEL_QUESTION_CHARS",
    "STAGE_CLASSES",
    "Stage",
    "StageContext",
    "bound_history",
    "evidence_hits",
    "parse_citations",
    "resolved_question",
    "to_evidence",
]

#: A question longer than this is truncated for model calls and searches
#: (the Trace keeps the full text; a Fallback records the cut).
MAX_MODEL_QUESTION_CHARS = 4000
#: The conversation models see: the most recent turns, each cut to
#: MAX_MODEL_QUESTION_CHARS, within these bounds (the Trace keeps it all; a
#: Fallback records the cut). Unbounded, a long chat is sent whole with
#: every call and a megabyte of history takes the offline model minutes.
MAX_MODEL_HISTORY_TURNS = 20
MAX_MODEL_HISTORY_CHARS = 16000


def bound_history(history: list[Message]) -> tuple[list[Message], str]:
    """(the recent part of ``history`` models see, what was cut or "")."""
    kept: list[Message] = []
    used = 0
    cut_turns = 0
    for m in reversed(history[-MAX_MODEL_HISTORY_TURNS:]):
        content = m.content[:MAX_MODEL_QUESTION_CHARS]
        if kept and used + len(content) > MAX_MODEL_HISTORY_CHARS:
            break
        cut_turns += len(content) < len(m.content)
        kept.append(m if len(content) == len(m.content) else Message(role=m.role, content=content))
        used += len(content)
    kept.reverse()
    dropped = len(history) - len(kept)
    if not dropped and not cut_turns:
        return history, ""
    parts = [f"{dropped} older turn(s) of {len(history)} left out"] if dropped else []
    if cut_turns:
        parts.append(f"{cut_turns} long turn(s) cut to {MAX_MODEL_QUESTION_CHARS} characters")
    return kept, "; ".join(parts) + " for model calls"


@dataclass
class StageContext:
    """The per-question state shared by the stages of one run."""

    question: str
    kb: KnowledgeBase
    runner: ModelRunner
    settings: Settings
    user: User
    reranker: Reranker
    reranker_name: str
    decision_cache: DecisionCache
    #: The question as models and searches see it (truncated when huge).
    query: str = ""
    #: What ``bound_history`` cut from the history models see ("" when nothing).
    history_cut: str = ""
    language: str = "en"
    history: list[Message] = field(default_factory=list)
    #: Absolute ``time.monotonic()`` by which the question must be finished.
    deadline: float | None = None
    #: Stepper "what if": stage -> field overrides (e.g. {"decide": {"retrieve": True}}).
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Stepper "what if": chunk ids removed from grading onwards.
    dropped: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.query:
            self.query = self.question[:MAX_MODEL_QUESTION_CHARS]
        self.history, cut = bound_history(self.history)
        self.history_cut = self.history_cut or cut

    @property
    def truncated(self) -> bool:
        return len(self.query) < len(self.question)

    def remaining(self) -> float:
        """Seconds left before the deadline (infinite without one)."""
        if self.deadline is None:
            return float("inf")
        return self.deadline - time.monotonic()

    def call_timeout(self) -> float:
        """Per-call timeout: the setting, cut to the remaining budget."""
        return max(0.001, min(self.settings.timeout, self.remaining()))


#: name -> Stage class, filled as the stage modules are imported; the order
#: the stages run in is selfrag_nb.flow.FLOW, not this.
STAGE_CLASSES: dict[str, type[Stage]] = {}


class Stage(ABC):
    """One stage: one class, one main method, one record. A subclass names
    its step of the flow (selfrag_nb.flow) and is registered under it."""

    name: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name not in STAGES:
            raise InputTypeError(f"{cls.__name__}.name {cls.name!r} is not a step of selfrag_nb.flow.FLOW")
        if cls.name in STAGE_CLASSES:
            raise InputTypeError(
                f"two stage classes for {cls.name!r}: {STAGE_CLASSES[cls.name].__name__}, {cls.__name__}"
            )
        STAGE_CLASSES[cls.name] = cls

    @abstractmethod
    async def run(self, trace: Trace, ctx: StageContext) -> Record | None:
        """Read earlier records, do the stage's work, return its record (the
        caller appends it) or None when the stage does not apply."""


def evidence_hits(trace: Trace, ctx: StageContext) -> list[Hit]:
    """The chunks the answer may use, in the order shown to the model: the
    reranked top when rerank ran, else the top graded chunks (same budget,
    ``rerank_keep``, so ablations compare like with like); with grading
    switched off, the top retrieved chunks (plain RAG)."""
    retrieval = trace.retrieval
    grades = trace.grades
    if retrieval is None or (grades is None and ctx.settings.grade):
        return []
    by_id = {h.chunk_id: h for h in retrieval.hits}
    rerank = trace.rerank
    if rerank is not None:
        ids = rerank.after
    elif grades is not None:
        ids = grades.kept[: ctx.settings.rerank_keep]
    else:
        ids = [h.chunk_id for h in retrieval.hits if h.chunk_id not in ctx.dropped][
            : ctx.settings.rerank_keep
        ]
    return [by_id[c] for c in ids if c in by_id and c not in ctx.dropped]


def to_evidence(hits: list[Hit], trace: Trace) -> list[Evidence]:
    """Hits as numbered Evidence (``index`` is the [n] marker, 1-based). The
    text, title and heading are clean (``selfrag_nb.cleantext``): no markup,
    no hard line breaks; ``Hit.text`` keeps the original."""
    grades = trace.grades
    by_id = {g.chunk_id: g for g in grades.items} if grades else {}
    out = []
    for i, h in enumerate(hits, start=1):
        g = by_id.get(h.chunk_id)
        out.append(
            Evidence(
                index=i,
                chunk_id=h.chunk_id,
                source=h.source,
                title=clean_text(h.title),
                heading=clean_text(h.heading),
                text=clean_text(h.text),
                relevance=g.score if g else None,
                key_info=g.key_info if g else "",
                gaps=g.gaps if g else "",
                metadata={k: v for k, v in h.metadata.items() if isinstance(v, (str, int, float, bool))},
            )
        )
    return out


#: Rewrite's reason for completing a follow-up from the history; later stages
#: judge chunks against that completed question.
FOLLOW_UP_REASON = "follow-up question refers to the conversation: completing it from the history"


def resolved_question(trace: Trace, ctx: StageContext) -> str:
    """The question chunks are judged against: for a follow-up that the
    rewrite stage completed from the history ("How long is a key valid
    before that happens?"), its first accepted rewrite; otherwise the
    original. The answer still answers the original question."""
    rw = trace.rewrite
    if rw is not None and rw.reason == FOLLOW_UP_REASON and len(rw.queries) > 1:
        return rw.queries[1]
    return ctx.query


def parse_citations(answer: str, evidence: list[str]) -> list[Citation]:
    """Every distinct [n] marker in ``answer``, in order of first use; a
    marker outside 1..len(evidence) is kept with ``valid=False``."""
    from selfrag_nb.trace import Citation

    return [
        Citation(
            marker=n,
            chunk_id=evidence[n - 1] if 1 <= n <= len(evidence) else "",
            valid=1 <= n <= len(evidence),
        )
        for n in markers_in(answer)
    ]
