"""Any provider LiteLLM speaks, behind the ``Model`` protocol.

    LiteLLMModel.acomplete(request)
      preflight   provider known? key present?          -> ModelError (configuration)
      loop:
        slot      a provider slot: at most request.provider_concurrency (else the
                  model's: 1 for a server on this machine, 16 otherwise) calls in
                  flight per (model, api_base), process-wide; waiting for one is
                  bounded by the deadline, a slot is not held while backing off
        attempt   litellm.acompletion(..., num_retries=0, response_format: the role's
                  JSON schema in the server's form (llm/response_format.py))  bounded by
                  min(per-call timeout, time left before request.deadline)
        ok        -> Completion(raw, tokens, cost, latency, retries)
        401/403/404, missing key                         -> ModelError (configuration)
        400 (request refused)                            -> Completion.error, no retry
        429 / 5xx / timeout / connection / bad body      -> wait, try again:
                  Retry-After on 429, else exponential backoff with jitter;
                  never waiting past the deadline
      budget gone -> Completion(raw="", error="deadline exceeded after N attempts: ...")
      retries out -> Completion(raw="", error="failed after N attempts: ...")

    complete(request)  the same, from synchronous code: _sync.run_sync on the
                       background loop (works inside Jupyter's running loop)
    every LiteLLM call runs on one background event loop, whatever loop the
    caller is on, and the provider limit lives there too (llm/litellm_loop.py)

    arerank / rerank   Cohere/Jina-style /rerank endpoints -> [(index, score)]
    aembed / embed     /embeddings -> list of vectors
    LiteLLMReranker    rank(query, texts) for SelfRAG(reranker=...)

``litellm`` is imported on first use only (it takes seconds and, without
LITELLM_LOCAL_MODEL_COST_MAP, fetches its price map from the network). We do
the retrying ourselves (``num_retries=0``) so the question's deadline is
respected and each retry is counted on the trace. API keys are redacted
from every message we produce (``selfrag_nb.llm.redact``).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from selfrag_nb._sync import run_sync
from selfrag_nb.errors import InputError, InputTypeError, ModelError, ProviderError
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.litellm_import import load_litellm, warm_up_litellm
from selfrag_nb.llm.litellm_loop import (
    DEFAULT_PROVIDER_CONCURRENCY,
    NoSlotError,
    default_concurrency,
    on_litellm_loop,
    provider_slots,
)
from selfrag_nb.llm.litellm_loop import background_loop as _background_loop  # bench_llm.py uses it
from selfrag_nb.llm.pricing import cost_of
from selfrag_nb.llm.redact import redact, scrub_url
from selfrag_nb.llm.response_format import ResponseFormat, check_response_format, response_format_for

__all__ = [
    "DEFAULT_PROVIDER_CONCURRENCY",
    "LiteLLMModel",
    "LiteLLMReranker",
    "aembed",
    "arerank",
    "embed",
    "load_litellm",
    "rerank",
]

T = TypeVar("T")

#: HTTP statuses worth another attempt (the provider may recover).
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
#: HTTP statuses that mean "fix your configuration", not "try later".
CONFIG_STATUS = frozenset({401, 403, 404})

# Provider prefix -> the environment variable its key is read from, for when
# LiteLLM's validate_environment cannot tell (e.g. the provider raised first).
_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "cohere": "COHERE_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "jina_ai": "JINA_AI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "xai": "XAI_API_KEY",
}

# ------------------------------------------------------------------ helpers


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``Retry-After``: seconds or an
    HTTP date; ``retry-after-ms``), from the exception's response headers."""
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        headers = getattr(exc, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass  # malformed: fall through to Retry-After
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass  # not seconds: an HTTP date
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _is_missing_credentials(message: str) -> bool:
    lowered = message.lower()
    return "missing credentials" in lowered or "api_key client option must be set" in lowered


def _describe(exc: BaseException, secrets: Sequence[str | None]) -> str:
    status = _status(exc)
    kind = type(exc).__name__
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + "..."
    prefix = f"{kind} (HTTP {status})" if status else kind
    return redact(f"{prefix}: {text}", secrets)


class LiteLLMModel:
    """A model reached through LiteLLM: ``"openai/gpt-4o-mini"``,
    ``"anthropic/claude-..."``, ``"ollama/llama3"``, or ``"openai/<name>"``
    with ``api_base`` for any OpenAI-compatible server.

    ``response_format``: None = decide from LiteLLM's model info (JSON schema
    where supported, else JSON mode where supported, else none: the prompt
    asks for JSON), True or "json_schema" = always send the JSON schema,
    "json_object_schema" = the schema in llama.cpp's form, "json_object" =
    JSON mode, False = never (llm/response_format.py).
    ``extra`` is passed to ``litellm.acompletion`` (temperature, seed, ...).
    ``provider_concurrency``: calls in flight to this model + api_base, shared
    process-wide, when the request does not carry the pipeline's setting;
    None: 1 for a server on this machine (api_base on 127.0.0.1, localhost,
    ::1; a local llama.cpp or Ollama server answers one request at a time
    unless started with more slots), 16 for any other.
    """

    offline = False

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        response_format: ResponseFormat = None,
        extra: dict[str, Any] | None = None,
        provider_concurrency: int | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InputError("model must be a LiteLLM model string such as 'openai/gpt-4o-mini'")
        if timeout <= 0:
            raise InputError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise InputError(f"max_retries must be >= 0, got {max_retries}")
        if provider_concurrency is None:
            provider_concurrency = default_concurrency(model, api_base)
        if (
            isinstance(provider_concurrency, bool)
            or not isinstance(provider_concurrency, int)
            or provider_concurrency < 1
        ):
            raise InputError(f"provider_concurrency must be an int >= 1, got {provider_concurrency!r}")
        if backoff < 0 or max_backoff < 0:
            raise InputError(f"backoff and max_backoff must be >= 0, got {backoff} and {max_backoff}")
        self.name = model
        self.api_base = api_base
        self._api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.response_format = check_response_format(response_format)
        self.extra = dict(extra or {})
        self.provider_concurrency = provider_concurrency
        self._checked = False

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never be stored or shown (the API key), for
        wrappers that redact what they record. Not part of repr or str."""
        return (self._api_key,) if self._api_key else ()

    def __repr__(self) -> str:
        # Never the key: only whether one was given.
        key = "set" if self._api_key else "unset"
        return (
            f"LiteLLMModel({self.name!r}, api_base={scrub_url(self.api_base or '') or None!r}, api_key={key}, "
            f"timeout={self.timeout}, max_retries={self.max_retries})"
        )

    # ------------------------------------------------------------ public

    def warm_up(self) -> str:
        """One-time start-up before the first call (importing LiteLLM and its
        call path, no request sent): what was done, "" when already warm."""
        return warm_up_litellm(self.name)

    def complete(self, request: ModelRequest) -> Completion:
        """Synchronous ``acomplete`` (runs on a shared background loop)."""
        return run_sync(self.acomplete(request), loop=_background_loop())

    async def acomplete(self, request: ModelRequest) -> Completion:
        """Call the model; provider faults come back in ``Completion.error``,
        configuration problems raise ``ModelError``."""
        litellm = load_litellm()
        self._preflight(litellm)
        kwargs = self._kwargs(litellm, request)
        per_call = float(request.timeout or self.timeout)
        limit = request.provider_concurrency or self.provider_concurrency
        started = time.perf_counter()
        attempts = 0
        last_error = ""
        while True:
            remaining = None if request.deadline is None else request.deadline - time.monotonic()
            if remaining is not None and remaining <= 0.01:
                return self._gave_up(
                    f"deadline exceeded after {attempts} attempts: {last_error or 'no time left'}",
                    attempts,
                    started,
                    kwargs,
                )
            attempts += 1
            budget = [per_call]
            try:
                response = await on_litellm_loop(self._attempt(litellm, kwargs, request, per_call, budget))
            except NoSlotError:
                return self._gave_up(
                    f"deadline exceeded after {attempts - 1} attempts: waited for a provider slot "
                    f"({limit} calls in flight to {self.name}); {last_error or 'no answer yet'}",
                    attempts - 1,
                    started,
                    kwargs,
                )
            except asyncio.TimeoutError:
                last_error = f"Timeout: no answer within {budget[0]:.2f} s"
                retryable, wait = True, None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider fault becomes Completion.error
                self._raise_if_configuration(exc, litellm)
                last_error = _describe(exc, [self._api_key])
                retryable, wait = self._retry_policy(exc)
            else:
                return self._completion(litellm, response, attempts, started, kwargs)
            if not retryable:
                return self._gave_up(
                    f"failed after {attempts} attempts: {last_error}", attempts, started, kwargs
                )
            if attempts > self.max_retries:
                return self._gave_up(
                    f"failed after {attempts} attempts (retries exhausted): {last_error}",
                    attempts,
                    started,
                    kwargs,
                )
            if wait is None:
                # Exponential backoff with jitter: spread retries of parallel
                # graders so they do not hit the provider in lockstep.
                wait = min(self.max_backoff, self.backoff * 2 ** (attempts - 1)) * random.uniform(0.5, 1.0)
            if request.deadline is not None and time.monotonic() + wait >= request.deadline:
                return self._gave_up(
                    f"deadline exceeded after {attempts} attempts (next retry in {wait:.2f} s "
                    f"would pass it): {last_error}",
                    attempts,
                    started,
                    kwargs,
                )
            await asyncio.sleep(wait)

    # ----------------------------------------------------------- internals

    async def _attempt(
        self, litellm: Any, kw: dict[str, Any], req: ModelRequest, per_call: float, budget: list[float]
    ) -> Any:
        """One HTTP call, on the LiteLLM loop, inside a provider slot: the wait
        for the slot is bounded by the deadline (else ``NoSlotError``), the
        call by min(per-call timeout, time left), written to ``budget[0]``."""
        slots = provider_slots(self.name, self.api_base)
        wait = None if req.deadline is None else max(0.0, req.deadline - time.monotonic())
        try:
            await asyncio.wait_for(slots.acquire(req.provider_concurrency or self.provider_concurrency), wait)
        except asyncio.TimeoutError:
            raise NoSlotError from None
        try:
            remaining = None if req.deadline is None else req.deadline - time.monotonic()
            if remaining is not None and remaining <= 0.01:
                raise NoSlotError
            budget[0] = per_call if remaining is None else min(per_call, remaining)
            # LiteLLM gets the stable per-call timeout (its HTTP clients are
            # cached per timeout value); the deadline is enforced here.
            return await asyncio.wait_for(
                litellm.acompletion(timeout=per_call, **kw),
                timeout=budget[0] + (0.05 if budget[0] == per_call else 0.0),
            )
        finally:
            slots.release()

    def _preflight(self, litellm: Any) -> None:
        """Configuration problems are found before the first request: an
        unknown provider, or a provider whose API key is nowhere."""
        if self._checked:
            return
        try:
            _model, provider, _key, _base = litellm.get_llm_provider(self.name, api_base=self.api_base)
        except Exception as exc:  # noqa: BLE001 - LiteLLM raises BadRequestError or ValueError here
            raise ModelError(
                f"model {self.name!r}: LiteLLM does not know this provider. Use 'provider/model', e.g. "
                f"'openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest', 'ollama/llama3', or "
                f"'openai/<name>' with api_base= for an OpenAI-compatible server "
                f"({redact(type(exc).__name__, [self._api_key])})",
                model=self.name,
            ) from None
        if not self._api_key:
            try:
                report = litellm.validate_environment(self.name, api_base=self.api_base)
            except Exception:  # noqa: BLE001 - unknown to the validator: the call itself will tell
                report = {"missing_keys": []}
            missing = [k for k in report.get("missing_keys", []) if str(k).endswith("_API_KEY")]
            if missing:
                raise ModelError(
                    f"model {self.name!r} ({provider}): no API key. Set the environment variable "
                    f"{' or '.join(missing)} or pass api_key=...",
                    model=self.name,
                )
        self._checked = True

    def _key_env(self, litellm: Any) -> str:
        try:
            missing = litellm.validate_environment(self.name)["missing_keys"]
        except Exception:  # noqa: BLE001 - fall back to our own provider table
            missing = []
        names = [k for k in missing if str(k).endswith("_KEY")]
        if names:
            return " or ".join(names)
        provider = self.name.split("/", 1)[0] if "/" in self.name else "openai"
        return _KEY_ENV.get(provider, f"{provider.upper()}_API_KEY")

    def _raise_if_configuration(self, exc: BaseException, litellm: Any) -> None:
        status = _status(exc)
        message = str(exc)
        auth = isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError)
        if auth or status in {401, 403} or _is_missing_credentials(message):
            raise ModelError(
                f"model {self.name!r}: the provider rejected the credentials "
                f"({type(exc).__name__}, HTTP {status}). Check the environment variable "
                f"{self._key_env(litellm)} or the api_key= you passed.",
                model=self.name,
                status_code=status,
            ) from None
        if isinstance(exc, litellm.NotFoundError) or status == 404:
            raise ModelError(
                f"model {self.name!r}: the provider does not know this model or endpoint "
                f"(HTTP 404; api_base={scrub_url(self.api_base or '') or None!r}): {_describe(exc, [self._api_key])}",
                model=self.name,
                status_code=status or 404,
            ) from None

    def _retry_policy(self, exc: BaseException) -> tuple[bool, float | None]:
        """(retry?, seconds to wait or None for backoff)."""
        litellm = load_litellm()
        status = _status(exc)
        if isinstance(exc, litellm.RateLimitError) or status == 429:
            return True, _retry_after(exc)
        if isinstance(exc, litellm.Timeout | litellm.APIConnectionError):
            return True, None
        if status in RETRYABLE_STATUS:
            return True, _retry_after(exc)
        if status is not None and 400 <= status < 500:
            return False, None  # the request itself was refused: the same request fails again
        # Unclassified (truncated or unparsable body surfaced as an APIError):
        # transient more often than not.
        return True, None

    def _kwargs(self, litellm: Any, request: ModelRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(self.extra)
        kwargs.update(
            model=self.name,
            messages=[m.model_dump() for m in request.messages],
            num_retries=0,  # we retry ourselves, within the deadline
            max_retries=0,  # nor may the OpenAI SDK underneath
        )
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        fmt = self._response_format(litellm, request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        return kwargs

    def _response_format(self, litellm: Any, request: ModelRequest) -> dict[str, Any] | None:
        return response_format_for(litellm, self.name, self.api_base, self.response_format, request)

    def _cost(
        self, litellm: Any, response: Any, tokens_in: int | None, tokens_out: int | None
    ) -> float | None:
        own = cost_of(self.name, tokens_in, tokens_out)
        if own is not None:
            return own
        # LiteLLM prices every response it returns (None when the model is
        # not in its map); asking completion_cost again costs milliseconds.
        hidden = getattr(response, "_hidden_params", None)
        value = hidden.get("response_cost") if isinstance(hidden, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(hidden, dict) and "response_cost" in hidden:
            return None  # LiteLLM looked and does not know this model's price
        try:
            value = litellm.completion_cost(completion_response=response, model=self.name)
        except Exception:  # noqa: BLE001 - not in the price map: unknown, which is None, not 0
            return None
        return float(value) if isinstance(value, int | float) else None

    def _completion(
        self, litellm: Any, response: Any, attempts: int, started: float, kwargs: dict[str, Any]
    ) -> Completion:
        latency = (time.perf_counter() - started) * 1000.0
        usage = getattr(response, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", None)
        tokens_out = getattr(usage, "completion_tokens", None)
        choices = getattr(response, "choices", None) or []
        content = None
        finish = None
        if choices:
            message = getattr(choices[0], "message", None)
            content = getattr(message, "content", None)
            finish = getattr(choices[0], "finish_reason", None)
        extra = {"response_format": (kwargs.get("response_format") or {}).get("type"), "attempts": attempts}
        if finish is not None:
            extra["finish_reason"] = str(finish)
        if not isinstance(content, str):
            return Completion(
                raw="",
                model=self.name,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                latency_ms=latency,
                retries=attempts - 1,
                error="provider answered without message content",
                fallback="empty answer: the role's conservative default applies",
                extra=extra,
            )
        return Completion(
            # A provider echoing the key back must not put it in a trace.
            raw=redact(content, [self._api_key], patterns=False),
            model=self.name,
            tokens_in=tokens_in if isinstance(tokens_in, int) else None,
            tokens_out=tokens_out if isinstance(tokens_out, int) else None,
            cost=self._cost(litellm, response, tokens_in, tokens_out),
            latency_ms=latency,
            retries=attempts - 1,
            extra=extra,
        )

    def _gave_up(self, error: str, attempts: int, started: float, kwargs: dict[str, Any]) -> Completion:
        return Completion(
            raw="",
            model=self.name,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            retries=max(0, attempts - 1),
            error=redact(error, [self._api_key]),
            fallback="no answer from the provider: the role's conservative default applies",
            extra={
                "response_format": (kwargs.get("response_format") or {}).get("type"),
                "attempts": attempts,
            },
        )


# ------------------------------------------------------------------ rerank / embed


async def arerank(
    query: str,
    documents: Sequence[str],
    *,
    model: str,
    top_n: int | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 30.0,
) -> list[tuple[int, float]]:
    """Rank ``documents`` for ``query`` with a provider's rerank API
    (``"cohere/rerank-v3.5"``, ``"jina_ai/..."``, any Cohere-style ``/rerank``
    endpoint via ``api_base``): ``[(index, relevance score)]``, best first.
    Raises ``ModelError`` for configuration problems, ``ProviderError`` for
    provider faults."""
    if not isinstance(query, str):
        raise InputTypeError(f"query must be a string, got {type(query).__name__}")
    docs = list(documents)
    if not all(isinstance(d, str) for d in docs):
        raise InputTypeError("documents must be strings")
    if not docs:
        return []
    litellm = load_litellm()
    kwargs: dict[str, Any] = {"model": model, "query": query, "documents": docs, "timeout": timeout}
    if top_n is not None:
        kwargs["top_n"] = top_n
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    try:
        response = await on_litellm_loop(asyncio.wait_for(litellm.arerank(**kwargs), timeout=timeout + 0.05))
    except asyncio.TimeoutError:
        raise ProviderError(f"rerank {model!r}: no answer within {timeout} s", model=model) from None
    except Exception as exc:  # noqa: BLE001 - classified below; keys redacted
        _raise_for(exc, f"rerank {model!r}", api_key, model)
    results = getattr(response, "results", None) or []
    ranked: list[tuple[int, float]] = []
    for item in results:
        index, score = item.get("index"), item.get("relevance_score")
        if not isinstance(index, int) or not 0 <= index < len(docs) or not isinstance(score, int | float):
            raise ProviderError(f"rerank {model!r}: malformed result {item!r}", model=model)
        ranked.append((index, float(score)))
    ranked.sort(key=lambda p: (-p[1], p[0]))
    return ranked


def rerank(
    query: str,
    documents: Sequence[str],
    *,
    model: str,
    top_n: int | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 30.0,
) -> list[tuple[int, float]]:
    """Synchronous ``arerank``."""
    return run_sync(
        arerank(
            query, documents, model=model, top_n=top_n, api_base=api_base, api_key=api_key, timeout=timeout
        ),
        loop=_background_loop(),
    )


async def aembed(
    texts: Sequence[str],
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float = 60.0,
) -> list[list[float]]:
    """Embed ``texts`` with a provider's embedding API, one vector per text,
    in order. Raises ``ModelError`` / ``ProviderError`` like ``arerank``."""
    items = list(texts)
    if not all(isinstance(t, str) for t in items):
        raise InputTypeError("texts must be strings")
    if not items:
        return []
    litellm = load_litellm()
    kwargs: dict[str, Any] = {"model": model, "input": items, "timeout": timeout}
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    try:
        response = await on_litellm_loop(
            asyncio.wait_for(litellm.aembedding(**kwargs), timeout=timeout + 0.05)
        )
    except asyncio.TimeoutError:
        raise ProviderError(f"embedding {model!r}: no answer within {timeout} s", model=model) from None
    except Exception as exc:  # noqa: BLE001 - classified below; keys redacted
        _raise_for(exc, f"embedding {model!r}", api_key, model)
    data = sorted(getattr(response, "data", None) or [], key=lambda d: int(d["index"]))
    vectors = [[float(x) for x in d["embedding"]] for d in data]
    if len(vectors) != len(items):
        raise ProviderError(
            f"embedding {model!r}: {len(vectors)} vectors for {len(items)} texts", model=model
        )
    return vectors


def embed(
    texts: Sequence[str],
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float = 60.0,
) -> list[list[float]]:
    """Synchronous ``aembed``."""
    return run_sync(aembed(texts, model, api_base, api_key, timeout=timeout), loop=_background_loop())


def _raise_for(exc: BaseException, what: str, api_key: str | None, model: str) -> Any:
    status = _status(exc)
    text = _describe(exc, [api_key])
    if status in CONFIG_STATUS or _is_missing_credentials(str(exc)) or status == 400:
        raise ModelError(f"{what}: configuration problem: {text}", model=model, status_code=status) from None
    raise ProviderError(f"{what}: {text}", model=model, status_code=status) from None


class LiteLLMReranker:
    """A reranker for ``SelfRAG(reranker=...)`` backed by a rerank API:
    ``rank(query, texts) -> [(index, score)]``."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        top_n: int | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.timeout = timeout
        self.top_n = top_n

    def __repr__(self) -> str:
        return f"LiteLLMReranker({self.model!r}, api_base={scrub_url(self.api_base or '') or None!r})"

    def rank(self, query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
        return rerank(
            query,
            texts,
            model=self.model,
            top_n=self.top_n,
            api_base=self.api_base,
            api_key=self._api_key,
            timeout=self.timeout,
        )
