"""Settings: thresholds, budgets and policies of the pipeline.

Where the two design sources disagree (docs/architecture.md), the choice is a setting and the
trace's config snapshot records which was used:

- ``no_evidence``: the Self-RAG design answers without documents plus a
  disclaimer when every chunk is irrelevant ("answer_with_disclaimer"); the
  evidence-quality design refuses when the material does not cover the question
  ("refuse", the default).
- ``rewrite``: the Self-RAG design never rewrites; the evidence-quality design
  adds controlled rewrites. ``rewrite=False`` is the Self-RAG design's pipeline.
- ``rerank``: likewise only in the evidence-quality design.

``grade``, ``assess``, ``verify`` and ``usefulness`` switch off a check, so the
pipeline Self-RAG claims to improve can be measured with the same code: all
four off, ``retrieval="always"``, no rewrite, no rerank and no regeneration
is plain RAG (retrieve, then generate from the top chunks; the evaluation
preset ``"plain_rag"``).

Every number has its design source's value as its default. Numbers must be given
as numbers: a bool (``timeout=True``) or a string (``deadline="5"``) is
refused with a ValueError naming the setting, not silently converted (a bool
is an int to Python, and "5" would hide a caller passing text through).
"""

from __future__ import annotations

import numbers
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from selfrag_nb.errors import InputError, input_error

__all__ = ["NUMERIC_SETTINGS", "OPTIONAL_NUMBERS", "Settings"]

#: Settings that hold a number (int or float): only real numbers are accepted.
#: Those in ``OPTIONAL_NUMBERS`` also take None (see the field's comment).
NUMERIC_SETTINGS: tuple[str, ...] = (
    "decision_cache_size",
    "decision_cache_ttl",
    "max_rewrites",
    "per_query_k",
    "total_cap",
    "high_relevance",
    "relevance_cutoff",
    "grade_concurrency",
    "provider_concurrency",
    "rerank_keep",
    "rerank_max_candidates",
    "max_regenerations",
    "accept_confidence",
    "disclaimer_confidence",
    "timeout",
    "deadline",
)
OPTIONAL_NUMBERS: frozenset[str] = frozenset({"grade_concurrency", "provider_concurrency"})


class Settings(BaseModel):
    """All knobs of a SelfRAG pipeline. Immutable: use ``with_(**changes)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- decide (rules -> cache -> model: greetings never pay for a model call)
    #: Self-RAG's three retrieval modes: "adaptive" (decide), "always", "never".
    retrieval: Literal["adaptive", "always", "never"] = "adaptive"
    decision_rules: bool = True
    decision_cache_size: int = Field(default=10_000, ge=0)
    decision_cache_ttl: float = Field(default=3600.0, ge=0)

    # -- rewrite (controlled: original first, bounded, protected spans kept)
    rewrite: bool = True
    max_rewrites: int = Field(default=2, ge=0, le=10)

    # -- retrieve
    search_mode: Literal["vector", "fts", "hybrid"] = "hybrid"
    per_query_k: int = Field(default=10, ge=1, le=1000)
    total_cap: int = Field(default=30, ge=1, le=1000)

    # -- grade (relevance bands: 80+ high, 50-79 partial, <50 irrelevant).
    #: False: no grading; the top ``rerank_keep`` retrieved chunks are the evidence.
    grade: bool = True
    high_relevance: int = Field(default=80, ge=0, le=100)
    relevance_cutoff: int = Field(default=50, ge=0, le=100)
    #: Grade calls in flight per question. None (default): every chunk that
    #: reaches grading at once (at most ``total_cap``), so grading costs one
    #: call's latency; a number bounds it. Providers are protected by
    #: ``provider_concurrency``, which holds across questions.
    grade_concurrency: int | None = Field(default=None, ge=1, le=1000)

    # -- providers: at most this many calls in flight to one model endpoint
    # (LiteLLM model string + api_base), shared by every question and pipeline
    # in the process (a batch evaluation stays under a rate limit). None
    # (default): the model's own limit; LiteLLMModel's is 1 for a server on
    # this machine (api_base on 127.0.0.1 / localhost / ::1: llama.cpp and
    # Ollama answer one request at a time unless started otherwise), 16 for
    # any other. A number here wins for every model. The offline and
    # in-process models are not limited.
    provider_concurrency: int | None = Field(default=None, ge=1, le=1024)

    # -- rerank (validated protocol: keep >= 1, at most 50 candidates)
    rerank: bool = True
    rerank_keep: int = Field(default=5, ge=1, le=50)
    rerank_max_candidates: int = Field(default=50, ge=1, le=50)
    rerank_full_coverage: bool = False

    # -- assess (False: always answer from whatever evidence there is)
    assess: bool = True
    no_evidence: Literal["refuse", "answer_with_disclaimer"] = "refuse"
    clarify: bool = True

    # -- generate / verify / usefulness / finish
    #: False: the answer's claims are not checked against the evidence.
    verify: bool = True
    #: False: nobody asks whether the answer answers the question.
    usefulness: bool = True
    max_regenerations: int = Field(default=1, ge=0, le=5)
    drop_unsupported: bool = True
    #: Support recommendation threshold used by the offline verifier and by
    #: calibration: overall confidence below this -> not ACCEPT.
    accept_confidence: int = Field(default=80, ge=0, le=100)
    disclaimer_confidence: int = Field(default=50, ge=0, le=100)

    # -- budgets (finite: an infinite timeout breaks HTTP clients, an infinite
    # deadline lets a stalled provider hang the notebook)
    timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    deadline: float = Field(default=120.0, gt=0, allow_inf_nan=False)

    # -- prompts
    prompts: Literal["en", "zh"] = "en"

    @field_validator(*NUMERIC_SETTINGS, mode="before")
    @classmethod
    def _a_number(cls, v: Any, info: ValidationInfo) -> Any:
        # Pydantic's lax mode turns True into 1 and "5" into 5; both are
        # caller mistakes here. numbers.Real keeps numpy scalars working.
        if v is None and info.field_name in OPTIONAL_NUMBERS:
            return v
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InputError(f"{info.field_name} must be a number, got {type(v).__name__} {v!r}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.relevance_cutoff > self.high_relevance:
            raise InputError(
                f"relevance_cutoff ({self.relevance_cutoff}) must not exceed "
                f"high_relevance ({self.high_relevance})"
            )
        if self.disclaimer_confidence > self.accept_confidence:
            raise InputError(
                f"disclaimer_confidence ({self.disclaimer_confidence}) must not exceed "
                f"accept_confidence ({self.accept_confidence})"
            )
        return self

    def __init__(self, **data: Any) -> None:
        # Bad settings are the caller's input: an InputError (a ValueError)
        # naming each field, not pydantic's ValidationError.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise input_error(exc, what="Settings") from None

    def with_(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied and validated (unknown names raise)."""
        return Settings(**{**self.model_dump(), **changes})
