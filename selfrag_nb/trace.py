"""The Trace and its stage records: plain, frozen, JSON round-trip exact
(for valid Unicode: a lone surrogate, which only a model response can bring
in since inputs holding one are refused, is written as U+FFFD so that
``to_json`` never fails).

    Trace
      question, user, history, config (ConfigSnapshot)
      records: [Decision, Rewrite, Retrieval, Grades, Rerank, Assessment,
                Generation, Support, Usefulness,
                (Generation, Support, Usefulness)*, Outcome]
      -> .decision .rewrite ... (latest record of each stage, None if it did not run)
      -> .answer .outcome .model_calls .totals
      -> to_json / save / load / to_pandas / diff / attribution (attribution_run.py)

Each record carries its stage name, latency, the model calls it made and the
fallbacks it took. A record that names chunks (grade, rerank, assess,
generate, verify) also carries ``refs``: chunk id -> ChunkRef (source, title,
heading, rank, document status), filled by ``Trace.append`` and on load from
the retrieval, so a record shown on its own still names its documents. Records never hold widgets: they derive
from ``selfrag_nb._records`` (frozen, one-line repr, JSON files) and ``selfrag_nb._displayable.Displayable`` (to_html, to_text, _repr_mimebundle_,
_display_), whose faces ``selfrag_nb.display`` registers per record type.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticSerializationError

from selfrag_nb._records import _Displayable, _Frozen, _Saved
from selfrag_nb.flow import STAGES
from selfrag_nb.store.types import ChunkRef, Hit, User

if TYPE_CHECKING:  # pandas is heavy
    import pandas as pd

    from selfrag_nb.attribution import Attribution, AttributionPlan

__all__ = [
    "USEFULNESS_WORDS",
    "Assessment",
    "Citation",
    "Claim",
    "ClaimEvidence",
    "ConfigSnapshot",
    "Decision",
    "Fallback",
    "Generation",
    "Grade",
    "Grades",
    "ModelCall",
    "Outcome",
    "ProtectedSpan",
    "QueryHits",
    "ReasonKind",
    "Record",
    "RefusalKind",
    "RejectedRewrite",
    "Rerank",
    "Retrieval",
    "Rewrite",
    "Support",
    "Trace",
    "Usefulness",
]

OutcomeName = Literal["answered", "disclaimed", "regenerated", "direct", "clarify", "refused"]
#: Why an outcome is what it is, as data (``Outcome.reason_kind``):
#:   retrieval_not_needed  direct: the decision (rule, cache, model) needed no documents
#:   retrieval_off         direct: retrieval was turned off (stepper override, settings.retrieval
#:                         "never"); the answer is not grounded in documents
#:   no_evidence           no passage of the documents the user may read answers the question
#:   no_access             nothing at all visible to this user matched (the search returned
#:                         no chunk the user may read); never says whether hidden ones exist
#:   unsupported           documents were found but the verifier did not find the answer in them
#:   conflict              authorised documents disagree and none says which applies
#:   unverified            an answer was written but could not be checked
#:   no_answer             the model gave no usable answer
#:   deadline              the question's time budget ran out
#:   not_answered          documents were found and an answer written, but the usefulness
#:                         check judged that it does not answer the question asked
#:   model_error           model calls the outcome depended on failed at the provider (HTTP
#:                         error, timeout, no connection), or the grade / assess calls that
#:                         judge the evidence gave no output that parsed; the reason names
#:                         the role, the error and how many calls failed. Says nothing about
#:                         the documents: the check was never made
#:   ""                    an accepted answer, a clarifying question, or a trace written before
#:                         this field existed
#: The reasons a question is refused (also what a refusal message says: stages/generate.py).
RefusalKind = Literal[
    "no_evidence",
    "no_access",
    "unsupported",
    "conflict",
    "unverified",
    "no_answer",
    "deadline",
    "not_answered",
    "model_error",
]
ReasonKind = Literal["", "retrieval_not_needed", "retrieval_off", RefusalKind]


class ModelCall(_Frozen):
    """One model call as it happened. API keys and auth headers never enter it."""

    role: str
    model: str
    offline: bool = False
    prompt_hash: str = ""
    messages: list[dict[str, str]] = Field(default_factory=list)
    raw: str = ""
    parsed_ok: bool = False
    #: "ok", "repaired" (second attempt parsed), "unparsed" (default applied),
    #: "error" (the call failed; default applied).
    parse_status: Literal["ok", "repaired", "unparsed", "error"] = "ok"
    parse_error: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    #: US dollars; None when the price of the model is unknown.
    cost: float | None = None
    latency_ms: float = 0.0
    retries: int = 0
    cached: bool = False
    fallback: str | None = None
    error: str | None = None
    #: Suspected prompt-injection markers found in untrusted text of this call.
    injection_flags: list[str] = Field(default_factory=list)


class Fallback(_Frozen):
    """Something a stage did instead of the normal path, and why."""

    what: str
    reason: str


class _Record(_Displayable):
    latency_ms: float = 0.0
    calls: list[ModelCall] = Field(default_factory=list)
    fallbacks: list[Fallback] = Field(default_factory=list)


class _NamesChunks(_Record):
    """A record that mentions chunks by id, with what names them (see module doc)."""

    #: chunk id -> the chunk's document, for every chunk this record names.
    refs: dict[str, ChunkRef] = Field(default_factory=dict)

    def chunk_ids(self) -> list[str]:
        """Every chunk id this record names, in order of first mention
        (each subclass says where its ids are)."""
        return []


class Decision(_Record):
    stage: Literal["decide"] = "decide"
    retrieve: bool
    reason: str
    source: Literal["rule", "cache", "model", "setting", "override"]
    rule: str | None = None
    summary: str = ""
    cache_key: str = ""

    @property
    def forced(self) -> bool:
        """The choice was imposed (a stepper override or ``settings.retrieval``
        "always"/"never"), not judged from the question."""
        return self.source in {"override", "setting"}


class ProtectedSpan(_Frozen):
    text: str
    kind: str  # identifier | order | version | date | amount | quoted | negation | number


class RejectedRewrite(_Frozen):
    text: str
    reason: str
    missing: list[str] = Field(default_factory=list)


class Rewrite(_Record):
    stage: Literal["rewrite"] = "rewrite"
    #: The original question first, then each accepted rewrite.
    queries: list[str]
    rejected: list[RejectedRewrite] = Field(default_factory=list)
    protected: list[ProtectedSpan] = Field(default_factory=list)
    #: Why rewriting was (not) attempted.
    reason: str = ""
    attempted: bool = False


class QueryHits(_Frozen):
    query: str
    chunk_ids: list[str]


class Retrieval(_Record):
    stage: Literal["retrieve"] = "retrieve"
    hits: list[Hit]
    per_query: list[QueryHits] = Field(default_factory=list)
    mode: str = "hybrid"
    access_filter: str = ""
    per_query_k: int = 10
    total_cap: int = 30
    duplicates_removed: int = 0
    kb_version: int | None = None


class Grade(_Frozen):
    chunk_id: str
    source: str = ""
    score: int
    relevant: bool
    band: Literal["high", "partial", "irrelevant"]
    key_info: str = ""
    gaps: str = ""
    parse_status: str = "ok"
    latency_ms: float = 0.0


class Grades(_NamesChunks):
    stage: Literal["grade"] = "grade"
    #: In retrieval order, one per graded chunk.
    items: list[Grade]
    #: chunk_ids of the relevant chunks, sorted by score (highest first).
    kept: list[str] = Field(default_factory=list)
    relevance_cutoff: int = 50
    high_relevance: int = 80
    concurrency: int = 8
    #: The question the chunks were judged against: the original, or for a
    #: follow-up the rewrite that completed it from the history.
    question: str = ""

    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys([*(g.chunk_id for g in self.items), *self.kept]))


class Rerank(_NamesChunks):
    stage: Literal["rerank"] = "rerank"
    before: list[str]
    after: list[str]
    scores: dict[str, float] = Field(default_factory=dict)
    reranker: str = ""
    keep: int = 5
    #: Set when the previous order was kept: the reason (protocol violation, error).
    fallback: str | None = None
    #: chunk id -> why the reranker placed it there, when the reranker says.
    reasons: dict[str, str] = Field(default_factory=dict)

    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys([*self.before, *self.after]))


class Assessment(_NamesChunks):
    stage: Literal["assess"] = "assess"
    action: Literal["answer", "clarify", "refuse", "answer_without_evidence"]
    reason: str
    options: list[str] = Field(default_factory=list)
    conflict: str = ""
    applies: str = ""
    evidence: list[str] = Field(default_factory=list)

    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys(self.evidence))


class Citation(_Frozen):
    marker: int
    chunk_id: str
    valid: bool = True


class Generation(_NamesChunks):
    stage: Literal["generate"] = "generate"
    answer: str
    mode: Literal["grounded", "strict", "direct", "clarify", "refuse"] = "grounded"
    citations: list[Citation] = Field(default_factory=list)
    #: chunk_ids in [n] order as shown to the model.
    evidence: list[str] = Field(default_factory=list)
    attempt: int = 1

    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys([*self.evidence, *(c.chunk_id for c in self.citations if c.chunk_id)]))


class ClaimEvidence(_Frozen):
    chunk_id: str
    span: str
    start: int = -1
    end: int = -1


class Claim(_Frozen):
    text: str
    verdict: Literal["supported", "partial", "unsupported"]
    evidence: list[ClaimEvidence] = Field(default_factory=list)
    cited: list[str] = Field(default_factory=list)
    #: Set when a cited chunk does not support the claim (or the marker is unknown).
    citation_error: str | None = None
    #: Character offsets of the claim inside the answer, with the citation
    #: markers and closing punctuation that follow it (-1 when not found).
    start: int = -1
    end: int = -1


class Support(_NamesChunks):
    stage: Literal["verify"] = "verify"
    claims: list[Claim]
    overall_confidence: int = 0
    recommendation: Literal["ACCEPT", "ADD_DISCLAIMER", "REGENERATE"] = "REGENERATE"
    is_fully_supported: bool = False
    attempt: int = 1

    def chunk_ids(self) -> list[str]:
        return list(
            dict.fromkeys(x for c in self.claims for x in (*c.cited, *(e.chunk_id for e in c.evidence)))
        )


#: What each usefulness verdict says, in the words every view uses.
USEFULNESS_WORDS: dict[str, str] = {
    "yes": "answers the question",
    "partly": "answers in part",
    "no": "does not answer",
}


class Usefulness(_Record):
    """Does the answer answer the question that was asked? The third check
    of the RAG triad (Self-RAG's ISUSE token): grade judges the chunks,
    verify the answer against the chunks, this the answer against the question."""

    stage: Literal["usefulness"] = "usefulness"
    #: yes: it answers the question; partly: some of it; no: it does not.
    verdict: Literal["yes", "partly", "no"]
    #: 0-100, the same scale as grades.
    score: int = Field(ge=0, le=100)
    #: What the question asks that the answer does not give ("" when nothing).
    missing: str = ""
    reason: str = ""
    #: The generation attempt it judged (Generation.attempt).
    attempt: int = 1


class Outcome(_Record):
    stage: Literal["finish"] = "finish"
    outcome: OutcomeName
    answer: str
    reason: str = ""
    #: The reason as a type (``ReasonKind``); ``reason`` says it in words.
    reason_kind: ReasonKind = ""
    disclaimer: str = ""
    dropped_claims: list[str] = Field(default_factory=list)
    #: Stages skipped because the deadline ran out.
    skipped: list[str] = Field(default_factory=list)
    deadline_exceeded: bool = False


Record = Annotated[
    Decision
    | Rewrite
    | Retrieval
    | Grades
    | Rerank
    | Assessment
    | Generation
    | Support
    | Usefulness
    | Outcome,
    Field(discriminator="stage"),
]

R = TypeVar("R", bound=_Record)


class ConfigSnapshot(_Frozen):
    """Everything that shaped a trace besides the question."""

    models: dict[str, str] = Field(default_factory=dict)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    kb_version: int | None = None
    kb_path: str = ""
    embedder: str = ""
    reranker: str = ""
    library_version: str = ""


class Totals(_Frozen):
    wall_ms: float = 0.0
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    #: None when any call's cost is unknown.
    cost: float | None = 0.0


class Trace(_Saved):
    """The ordered records of one question. Append-only: stages add records,
    the stepper may truncate after a stage to re-run it."""

    model_config = ConfigDict(frozen=False, extra="forbid")

    question: str
    user: User = Field(default_factory=User)
    history: list[dict[str, str]] = Field(default_factory=list)
    records: list[Record] = Field(default_factory=list)
    config: ConfigSnapshot = Field(default_factory=ConfigSnapshot)
    started_at: float = Field(default_factory=time.time)
    wall_ms: float = 0.0
    #: One-time start-up done before this question's clock started (importing
    #: LiteLLM, loading the embedder, ...): what -> ms; empty when all was warm.
    #: Never part of a record's ``latency_ms``, ``wall_ms`` or the deadline.
    startup: dict[str, float] = Field(default_factory=dict)

    # -- access by stage -------------------------------------------------
    def _latest(self, cls: type[R]) -> R | None:
        for rec in reversed(self.records):
            if isinstance(rec, cls):
                return rec
        return None

    def _all(self, cls: type[R]) -> list[R]:
        return [r for r in self.records if isinstance(r, cls)]

    @property
    def decision(self) -> Decision | None:
        return self._latest(Decision)

    @property
    def rewrite(self) -> Rewrite | None:
        return self._latest(Rewrite)

    @property
    def retrieval(self) -> Retrieval | None:
        return self._latest(Retrieval)

    @property
    def grades(self) -> Grades | None:
        return self._latest(Grades)

    @property
    def rerank(self) -> Rerank | None:
        return self._latest(Rerank)

    @property
    def assessment(self) -> Assessment | None:
        return self._latest(Assessment)

    @property
    def generation(self) -> Generation | None:
        return self._latest(Generation)

    @property
    def generations(self) -> list[Generation]:
        return self._all(Generation)

    @property
    def support(self) -> Support | None:
        return self._latest(Support)

    @property
    def supports(self) -> list[Support]:
        return self._all(Support)

    @property
    def usefulness(self) -> Usefulness | None:
        """The usefulness check of the latest judged answer (None: not judged)."""
        return self._latest(Usefulness)

    @property
    def finish(self) -> Outcome | None:
        return self._latest(Outcome)

    @property
    def outcome(self) -> str | None:
        o = self.finish
        return o.outcome if o else None

    @property
    def answer(self) -> str | None:
        o = self.finish
        if o is not None:
            return o.answer
        g = self.generation
        return g.answer if g else None

    @property
    def model_calls(self) -> list[ModelCall]:
        return [c for r in self.records for c in r.calls]

    @property
    def offline(self) -> bool:
        """True when every model call was made by the offline model."""
        calls = self.model_calls
        return bool(calls) and all(c.offline for c in calls)

    @property
    def totals(self) -> Totals:
        calls = self.model_calls
        costs = [c.cost for c in calls]
        return Totals(
            wall_ms=self.wall_ms,
            model_calls=len(calls),
            tokens_in=sum(c.tokens_in or 0 for c in calls),
            tokens_out=sum(c.tokens_out or 0 for c in calls),
            cost=None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs)),
        )

    # -- mutation (pipeline and stepper only) ----------------------------
    @model_validator(mode="after")
    def _name_chunks(self) -> Trace:
        # Traces saved before records carried refs get them on load.
        for i, rec in enumerate(self.records):
            self.records[i] = self._with_refs(rec, i)
        return self

    def _with_refs(self, record: Record, upto: int) -> Record:
        """``record`` with a ChunkRef for each chunk it names that the
        retrieval before position ``upto`` found and the record lacks."""
        if not isinstance(record, _NamesChunks):
            return record
        missing = [c for c in record.chunk_ids() if c not in record.refs]
        if not missing:
            return record
        found: dict[str, Hit] = {}
        for rec in self.records[:upto]:
            if isinstance(rec, Retrieval):
                found.update((h.chunk_id, h) for h in rec.hits)
        new = {c: ChunkRef.from_hit(found[c]) for c in missing if c in found}
        if not new:
            return record
        return record.model_copy(update={"refs": {**record.refs, **new}})

    def append(self, record: Record) -> None:
        self.records.append(self._with_refs(record, len(self.records)))

    def truncate_before(self, stage: str) -> None:
        """Drop the first record of ``stage`` and everything after it."""
        for i, rec in enumerate(self.records):
            if rec.stage == stage:
                del self.records[i:]
                return

    # -- persistence -----------------------------------------------------
    def to_json(self, indent: int | None = 2) -> str:
        try:
            return self.model_dump_json(indent=indent)
        except PydanticSerializationError:
            # A model's JSON can decode to a lone surrogate (from a \ud800 escape),
            # which no encoder accepts; keep the rest of the trace, mark the bad character.
            data = self.model_dump(mode="json")
            clean = _without_surrogates(data)
            if clean == data:
                raise
            separators = (",", ":") if indent is None else (",", ": ")
            return json.dumps(clean, indent=indent, ensure_ascii=False, separators=separators)

    # -- analysis --------------------------------------------------------
    def attribution(self, rag: Any = None, **options: Any) -> Attribution | AttributionPlan:
        """Which chunk each claim stands on (leave-one-out): docs/attribution.md."""
        from selfrag_nb.attribution_run import attribute

        return attribute(self, rag, **options)

    def stage_table(self) -> list[dict[str, Any]]:
        """One row per record: stage, latency, calls, tokens, cost, fallbacks."""
        rows = []
        for r in self.records:
            costs = [c.cost for c in r.calls]
            rows.append(
                {
                    "stage": r.stage,
                    "latency_ms": r.latency_ms,
                    "model_calls": len(r.calls),
                    "tokens_in": sum(c.tokens_in or 0 for c in r.calls),
                    "tokens_out": sum(c.tokens_out or 0 for c in r.calls),
                    "cost": None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
                    "fallbacks": "; ".join(f"{f.what}: {f.reason}" for f in r.fallbacks),
                }
            )
        return rows

    def to_pandas(self) -> dict[str, pd.DataFrame]:
        """Tables: ``stages``, ``hits``, ``grades``, ``claims``, ``calls``."""
        import pandas as pd

        ret = self.retrieval
        grades = self.grades
        support = self.support
        return {
            "stages": pd.DataFrame(self.stage_table()),
            "hits": pd.DataFrame(
                [
                    h.model_dump(exclude={"metadata", "scores"})
                    | {f"score_{k}": v for k, v in h.scores.items()}
                    for h in (ret.hits if ret else [])
                ]
            ),
            "grades": pd.DataFrame([g.model_dump() for g in (grades.items if grades else [])]),
            "claims": pd.DataFrame(
                [
                    {
                        "text": c.text,
                        "verdict": c.verdict,
                        "cited": ", ".join(c.cited),
                        "evidence": ", ".join(e.chunk_id for e in c.evidence),
                        "citation_error": c.citation_error,
                    }
                    for c in (support.claims if support else [])
                ]
            ),
            "calls": pd.DataFrame([c.model_dump(exclude={"messages", "raw"}) for c in self.model_calls]),
        }

    def diff(self, other: Trace) -> list[dict[str, Any]]:
        """What changed between two traces, stage by stage: one row per stage
        whose record differs (ignoring latencies), with the changed fields."""
        out: list[dict[str, Any]] = []
        if self.config != other.config:
            a, b = self.config.model_dump(), other.config.model_dump()
            out.append({"stage": "config", "changes": {k: (a[k], b[k]) for k in a if a[k] != b[k]}})
        for stage in STAGES:
            ra = next((r for r in reversed(self.records) if r.stage == stage), None)
            rb = next((r for r in reversed(other.records) if r.stage == stage), None)
            da = _comparable(ra)
            db = _comparable(rb)
            if da == db:
                continue
            if da is None or db is None:
                out.append({"stage": stage, "changes": {"ran": (da is not None, db is not None)}})
                continue
            keys = sorted(set(da) | set(db))
            out.append(
                {
                    "stage": stage,
                    "changes": {k: (da.get(k), db.get(k)) for k in keys if da.get(k) != db.get(k)},
                }
            )
        return out


def _comparable(rec: _Record | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    d = rec.model_dump(exclude={"latency_ms", "calls"})
    # JSON round trip: tuples become lists, so equal records compare equal.
    out: dict[str, Any] = json.loads(json.dumps(d, default=str))
    return out


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """``value`` (JSON-like) with every lone surrogate in keys and strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value
