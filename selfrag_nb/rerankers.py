"""Rerankers: anything with ``rank(query, texts) -> [(index, score)]``.

    SelfRAG(reranker=...)
      None | "model"            -> ModelReranker       listwise, runner role "rerank"
      "lexical"                 -> LexicalReranker     BM25 over the candidates, no model
      "litellm:<model>"         -> ProviderReranker    selfrag_nb.llm.litellm_model.arerank
      "cross-encoder:<name>"    -> CrossEncoderReranker  sentence-transformers (extra "torch")
      "<your name>[:<arg>]"     -> register_reranker("<your name>", factory)
      object with .rank()       -> used as is
          |
          v
      RerankStage validates every response (the rerank protocol, stages/rerank.py):
      indices in range, no duplicates, finite scores, higher is better, subset allowed.

Built-ins register themselves exactly like an outside reranker would. A
reranker may also offer ``async arank(query, texts, *, deadline=None)``
returning a ``RankResponse`` (ranking + the model calls it made); the stage
prefers it, and runs a plain ``rank`` in a worker thread otherwise.
Only authorised chunks ever reach a reranker: candidates come from the
ACL-filtered retrieval.

A built-in ``rank`` that cannot answer raises inside the error tree: ModelError
(the model reranker's unusable output, a cross-encoder that cannot load or
score) or ProviderError (a provider rerank call that failed), with ``.model``
naming the reranker's model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from selfrag_nb._sync import run_sync
from selfrag_nb.errors import (
    InputError,
    InputTypeError,
    MissingDependencyError,
    ModelError,
    ProviderError,
)
from selfrag_nb.text import tokenize
from selfrag_nb.trace import ModelCall

if TYPE_CHECKING:
    from selfrag_nb.llm.runner import ModelRunner

__all__ = [
    "CrossEncoderReranker",
    "LexicalReranker",
    "ModelReranker",
    "ProviderReranker",
    "RankResponse",
    "Reranker",
    "RerankerOptions",
    "available_rerankers",
    "register_reranker",
    "reranker_name",
    "resolve_reranker",
]


@runtime_checkable
class Reranker(Protocol):
    """The contract: ``rank`` returns ``(index, score)`` pairs (or objects /
    dicts with ``index`` and ``score``), higher score = more relevant; a subset
    of the candidates is allowed."""

    def rank(self, query: str, texts: list[str]) -> Sequence[Any] | None: ...


@dataclass(frozen=True)
class RankResponse:
    """What an async reranker answers: the raw ranking (validated by the
    stage), the model calls it made, and an error instead of raising."""

    ranking: Sequence[Any] | None
    calls: list[ModelCall] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class RerankerOptions:
    """What a factory may use. ``api_key`` is passed to the provider only;
    it never enters a record."""

    runner: ModelRunner | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 30.0

    def __repr__(self) -> str:
        # api_base as scrub_url shows it: a password or ?api_key= in it stays out
        from selfrag_nb.llm.redact import scrub_url

        base = scrub_url(self.api_base) if self.api_base else None
        key = "set" if self.api_key else "unset"
        return f"RerankerOptions(runner={self.runner!r}, api_base={base!r}, api_key={key}, timeout={self.timeout})"


RerankerFactory = Callable[[str, RerankerOptions], Reranker]

_REGISTRY: dict[str, RerankerFactory] = {}


def register_reranker(name: str, factory: RerankerFactory, *, replace: bool = False) -> None:
    """Make ``reranker="name"`` (or ``"name:argument"``) resolve to
    ``factory(argument, options)``."""
    if not name or ":" in name or not name.strip():
        raise InputError(f"reranker name must be non-blank and contain no ':', got {name!r}")
    if name in _REGISTRY and not replace:
        raise InputError(f"reranker {name!r} is already registered (pass replace=True to override)")
    _REGISTRY[name] = factory


def available_rerankers() -> list[str]:
    """Registered reranker names."""
    return sorted(_REGISTRY)


def reranker_name(reranker: object) -> str:
    """The name a trace shows for a reranker object."""
    name = getattr(reranker, "name", None)
    return name if isinstance(name, str) and name else type(reranker).__name__


def resolve_reranker(spec: object, options: RerankerOptions) -> tuple[Reranker, str]:
    """Turn ``SelfRAG(reranker=...)`` into a reranker object and its name."""
    if spec is None:
        spec = "model"
    if isinstance(spec, str):
        name, _, argument = spec.partition(":")
        factory = _REGISTRY.get(name)
        if factory is None:
            raise InputError(
                f"unknown reranker {spec!r}: registered names are {available_rerankers()} "
                "(or pass an object with rank(query, texts))"
            )
        return factory(argument, options), spec
    if callable(getattr(spec, "rank", None)) or callable(getattr(spec, "arank", None)):
        return spec, reranker_name(spec)  # type: ignore[return-value]  # duck-typed: rank or arank
    raise InputTypeError(
        f"reranker must be None, a registered name or an object with rank(query, texts); got {type(spec).__name__}"
    )


# --------------------------------------------------------------- built-ins


class ModelReranker:
    """Listwise reranking by the pipeline's model (runner role "rerank").
    The offline model ranks lexically; a LiteLLM model reads the prompt."""

    name = "model"

    def __init__(self, runner: ModelRunner | None) -> None:
        self._runner = runner

    def rank(self, query: str, texts: list[str]) -> Sequence[Any] | None:
        resp = run_sync(self.arank(query, texts))
        if resp.error:
            raise ModelError(resp.error, model=self._model_name())
        return resp.ranking

    def _model_name(self) -> str | None:
        if self._runner is None:
            return None
        return self._runner.models_by_role().get("rerank")

    async def arank(self, query: str, texts: list[str], *, deadline: float | None = None) -> RankResponse:
        from selfrag_nb.llm.schemas import RerankInputs, RerankOut

        if self._runner is None:
            # no model: without a runner there is no model to name (the runner maps roles to models)
            raise ModelError("the model reranker needs the pipeline's ModelRunner")
        result = await self._runner.acall(
            "rerank", RerankInputs(query=query, candidates=texts), deadline=deadline
        )
        if not result.ok:
            return RankResponse(
                None, [result.call], f"rerank model output {result.call.parse_status}: previous order kept"
            )
        out = result.output
        assert isinstance(out, RerankOut)
        # Dict items carry the model's per-item reason to the stage (ranking_reasons).
        ranking = [
            {"index": item.index, "score": item.score, "reason": item.reason}
            if item.reason
            else (item.index, item.score)
            for item in out.ranking
        ]
        return RankResponse(ranking, [result.call])


class LexicalReranker:
    """BM25 over the candidates themselves (idf from the candidate set): no
    model, no dependency; a baseline for ablations and a cheap default."""

    name = "lexical"

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def rank(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
        docs = [tokenize(t) for t in texts]
        n = len(docs)
        if n == 0:
            return []
        avg = sum(len(d) for d in docs) / n or 1.0
        df: Counter[str] = Counter()
        for d in docs:
            df.update(set(d))
        q_terms = list(dict.fromkeys(tokenize(query)))
        out: list[tuple[int, float]] = []
        for i, d in enumerate(docs):
            tf = Counter(d)
            score = 0.0
            for term in q_terms:
                f = tf.get(term, 0)
                if not f:
                    continue
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * len(d) / avg))
            out.append((i, round(score, 6)))
        out.sort(key=lambda p: (-p[1], p[0]))
        return out


class ProviderReranker:
    """A provider rerank endpoint through LiteLLM (Cohere, Jina, Voyage, ...)."""

    def __init__(self, model: str, options: RerankerOptions) -> None:
        if not model:
            raise InputError('reranker "litellm:<model>" needs a model, e.g. "litellm:cohere/rerank-v3.5"')
        self.model = model
        self.name = f"litellm:{model}"
        self._options = options

    def rank(self, query: str, texts: list[str]) -> Sequence[Any] | None:
        resp = run_sync(self.arank(query, texts))
        if resp.error:
            raise ProviderError(resp.error, model=self.model)
        return resp.ranking

    async def arank(self, query: str, texts: list[str], *, deadline: float | None = None) -> RankResponse:
        from selfrag_nb.llm.litellm_model import arerank

        try:
            ranking = await arerank(
                query,
                texts,
                model=self.model,
                api_base=self._options.api_base,
                api_key=self._options.api_key,
                timeout=self._options.timeout,
            )
        except ModelError as exc:
            # the provider layer knows the text, this reranker knows the model
            if exc.model is None:
                exc.model = self.model
            raise
        return RankResponse(ranking)


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (Hugging Face name or local path),
    scoring each (query, text) pair. Loaded on first use."""

    def __init__(self, model: str) -> None:
        if not model:
            raise InputError('reranker "cross-encoder:<name>" needs a model name or path')
        try:
            import sentence_transformers  # noqa: F401 - probe only: fail early with the extra's name
        except ImportError as exc:
            raise MissingDependencyError(
                'the cross-encoder reranker needs sentence-transformers: pip install "selfrag-nb[torch]"'
            ) from exc
        self.model_name = model
        self.name = f"cross-encoder:{model}"
        self._model: Any = None

    def rank(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
        if self._model is None:
            from sentence_transformers import CrossEncoder

            try:
                self._model = CrossEncoder(self.model_name)
            except Exception as exc:  # OSError, ValueError, HTTP errors: all "cannot load"
                raise ModelError(
                    f"cross-encoder {self.model_name!r} cannot be loaded: {_why(exc)}", model=self.model_name
                ) from exc
        try:
            scores = self._model.predict([(query, t) for t in texts])
        except Exception as exc:  # whatever the model raises, the caller gets one type
            raise ModelError(
                f"cross-encoder {self.model_name!r} could not score the candidates: {_why(exc)}",
                model=self.model_name,
            ) from exc
        return [(i, float(s)) for i, s in enumerate(scores)]


def _why(exc: BaseException) -> str:
    """A library's exception as a short, scrubbed reason (a Hugging Face error
    may quote a URL with a token, or a whole response body)."""
    from selfrag_nb.llm.redact import redact, shorten

    return shorten(redact(f"{type(exc).__name__}: {exc}"))


register_reranker("model", lambda arg, opts: ModelReranker(opts.runner))
register_reranker("lexical", lambda arg, opts: LexicalReranker())
register_reranker("litellm", ProviderReranker)
register_reranker("cross-encoder", lambda arg, opts: CrossEncoderReranker(arg))
