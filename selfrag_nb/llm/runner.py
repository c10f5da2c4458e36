"""The one entry point stages use to call a model.

    stage --acall(role, inputs)--> ModelRunner
      model_for(role)                    per-role override, else the default model
                                         (a name -> llm/registry.py: "offline" -> OfflineModel,
                                          a registered name -> its factory, else LiteLLMModel;
                                          wrapped by CachedModel / CassetteModel when asked)
      prompts.render(role, inputs)       system + user messages, template hash
      injection flags                    over the untrusted parts of the inputs
      deadline left? ── no ──> conservative default, status "error", "deadline exceeded"
      await model.acomplete(request)     the backend enforces timeout + deadline (and the
                                         provider limit PROVIDER_CONCURRENCY, which the
                                         pipeline sets per stage from Settings);
                                         the runner cuts an overrunning one at the deadline
        Completion.error ──────────────> conservative default, status "error"
      parsing.parse(role, raw) ── ok ──> output, status "ok"
        failed: ONE repair call (previous output + error shown to the model)
          parse ── ok ─────────────────> output, status "repaired"
          failed ──────────────────────> conservative default, status "unparsed" (raw kept)
      -> CallResult(output, ModelCall)   tokens, cost and latency summed over both attempts;
                                         secrets scrubbed from messages, raw and errors

    start_up()   before a question's clock: each backend's warm_up() (LiteLLM's import
                 and first-call loading), timed apart so no call's latency holds it

``call`` is the synchronous twin: the same flow, driven without an event
loop through each backend's sync ``complete``, so a notebook cell can call it
while Jupyter's loop is running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from selfrag_nb.errors import InputError, InputTypeError, ModelError
from selfrag_nb.llm.base import PROVIDER_CONCURRENCY, Completion, Model, ModelRequest
from selfrag_nb.llm.injection import find_injection
from selfrag_nb.llm.parsing import parse
from selfrag_nb.llm.prompts import Prompts, template_key
from selfrag_nb.llm.redact import environment_secrets, redact
from selfrag_nb.llm.schemas import (
    CONSERVATIVE_DEFAULTS,
    INPUTS,
    OUTPUTS,
    ROLES,
    AssessInputs,
    DecideInputs,
    GenerateInputs,
    GradeInputs,
    Message,
    RerankInputs,
    RewriteInputs,
    Role,
    VerifyInputs,
)
from selfrag_nb.trace import ModelCall

__all__ = ["CallResult", "ModelRunner", "untrusted_parts"]

#: Extra time a backend gets past its own timeout before the runner cuts the
#: call: backends (LiteLLMModel) enforce the timeout themselves and report a
#: better error; this only guards against one that does not.
_GRACE_S = 0.5
#: Without a deadline, a backend that ignores its own per-call timeout is cut
#: after this many timeouts (room for the backend's own retries and backoff).
_SAFETY_FACTOR = 4.0


@dataclass(frozen=True)
class CallResult:
    """A model call's outcome: the parsed output (or the role's conservative
    default) and the record of the call for the trace."""

    output: BaseModel
    call: ModelCall

    @property
    def ok(self) -> bool:
        """True when the output was parsed (first try or after the repair)."""
        return self.call.parse_status in ("ok", "repaired")


@dataclass
class _Attempt:
    completion: Completion
    latency_ms: float


class ModelRunner:
    """Resolves a model per role and runs every model call of a pipeline:
    prompt, call, parse, one repair, conservative default, record."""

    prompts: Prompts

    def __init__(
        self,
        model: Model | str | None = None,
        *,
        models: Mapping[str, Model | str] | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        prompts: Prompts | str | None = None,
        cache: bool | str | Path = False,
        cassette: str | Path | None = None,
        record: bool = False,
    ) -> None:
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            raise InputError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if record and cassette is None:
            raise InputError("record=True needs a cassette path to record into (cassette='calls.jsonl')")
        self.api_base = api_base
        self._api_key = api_key
        self.timeout = float(timeout)
        if isinstance(prompts, Prompts):
            self.prompts = prompts
        elif prompts is None or isinstance(prompts, str):
            self.prompts = Prompts(prompts or "en")
        else:
            raise InputTypeError(
                f'prompts must be a Prompts instance, "en" or "zh", got {type(prompts).__name__}'
            )

        base = self._resolve(model, "model")
        raw: dict[str, Model] = dict.fromkeys(ROLES, base)
        for role, spec in (models or {}).items():
            if role not in ROLES:
                raise InputError(f"models: unknown role {role!r}; roles are: {', '.join(ROLES)}")
            raw[role] = self._resolve(spec, f"models[{role!r}]")
        self._names = {role: m.name for role, m in raw.items()}
        secrets: list[str] = [api_key] if api_key else []
        for m in raw.values():
            # Backends may expose their credentials as api_key / secrets.
            secrets.extend(
                s for s in [getattr(m, "api_key", None), *getattr(m, "secrets", ())] if isinstance(s, str)
            )
        self._secrets = [s for s in dict.fromkeys(secrets) if s]
        self._models = self._wrap(raw, cache, cassette, record, self._secrets)
        # The backends themselves, for start_up: a replayed cassette never
        # reaches them, so there is nothing to start.
        self._raw = (
            [] if cassette is not None and not record else list({id(m): m for m in raw.values()}.values())
        )

    def __repr__(self) -> str:
        models = sorted(set(self._names.values()))
        return f"ModelRunner(models={models}, prompts={self.prompts.lang!r}, timeout={self.timeout})"

    # -- models -----------------------------------------------------------
    def _resolve(self, spec: Model | str | None, what: str) -> Model:
        if spec is None:
            spec = "offline"
        if isinstance(spec, str):
            from selfrag_nb.llm.registry import ModelOptions, resolve_model

            return resolve_model(spec, ModelOptions(self.api_base, self._api_key, self.timeout), what)
        if isinstance(spec, Model):
            return spec
        raise InputTypeError(
            f"{what}: expected None, a registered model name ('offline', ...), a LiteLLM model string "
            f"or a Model (name, offline, complete, acomplete), got {type(spec).__name__}"
        )

    @staticmethod
    def _wrap(
        raw: dict[str, Model],
        cache: bool | str | Path,
        cassette: str | Path | None,
        record: bool,
        secrets: list[str],
    ) -> dict[str, Model]:
        if cache is False and cassette is None:
            return dict(raw)
        response_cache: Any = None
        if cache is not False and cache is not None:
            from selfrag_nb.llm.cache import ResponseCache

            response_cache = ResponseCache() if cache is True else ResponseCache(path=Path(cache))
        tape: Any = None
        if cassette is not None:
            from selfrag_nb.llm.cassette import Cassette

            tape = Cassette(Path(cassette), mode="record" if record else "replay")
        # Wrap each distinct model once; the cassette is outermost so that
        # recording sees every call (a disk-cache hit would otherwise leave a
        # hole that a later replay trips over).
        wrapped: dict[int, Model] = {}
        for m in raw.values():
            if id(m) in wrapped:
                continue
            w: Model = m
            if response_cache is not None:
                from selfrag_nb.llm.cache import CachedModel

                w = CachedModel(w, response_cache)
            if tape is not None:
                from selfrag_nb.llm.cassette import CassetteModel

                w = CassetteModel(w, tape, secrets=secrets)
            wrapped[id(m)] = w
        return {role: wrapped[id(m)] for role, m in raw.items()}

    def model_for(self, role: Role) -> Model:
        """The model (with its cache / cassette wrappers) answering ``role``."""
        if role not in self._models:
            raise InputError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
        return self._models[role]

    def start_up(self) -> dict[str, float]:
        """One-time start-up of the backends (LiteLLM: importing it and its
        call path), done before a question's clock starts so no call's
        latency and no deadline pays for it: what -> ms, {} when all is warm.
        A backend opts in with ``warm_up() -> str`` (what it did, "" if nothing)."""
        done: dict[str, float] = {}
        for m in self._raw:
            warm_up = getattr(m, "warm_up", None)
            if not callable(warm_up):
                continue
            t0 = time.perf_counter()
            what = warm_up()
            if isinstance(what, str) and what:
                done[what] = done.get(what, 0.0) + (time.perf_counter() - t0) * 1000
        return done

    def models_by_role(self) -> dict[str, str]:
        """role -> model name, for the trace's config snapshot."""
        return dict(self._names)

    # -- calls ------------------------------------------------------------
    def call(
        self, role: Role, inputs: BaseModel, *, timeout: float | None = None, deadline: float | None = None
    ) -> CallResult:
        """Synchronous ``acall``, through the backends' own sync ``complete``.
        Needs no event loop, so it works inside a running one (Jupyter,
        marimo) and keeps each backend on the loop it manages itself
        (LiteLLMModel's clients stay bound to its background loop)."""
        flow = self._flow(role, inputs, timeout=timeout, deadline=deadline, sync=True)
        # In sync mode the flow never suspends: one send() runs it to the end.
        try:
            flow.send(None)
        except StopIteration as done:
            result: CallResult = done.value
            return result
        flow.close()  # pragma: no cover - would be a bug in _flow's sync path
        raise RuntimeError("ModelRunner.call: the synchronous flow suspended")  # pragma: no cover

    async def acall(
        self, role: Role, inputs: BaseModel, *, timeout: float | None = None, deadline: float | None = None
    ) -> CallResult:
        """Render, call, parse (one repair), default, record. Never raises for
        model faults (they are recorded); raises ``ModelError`` for
        configuration faults and ``TypeError``/``ValueError`` for bad input."""
        return await self._flow(role, inputs, timeout=timeout, deadline=deadline, sync=False)

    async def _flow(
        self, role: Role, inputs: BaseModel, *, timeout: float | None, deadline: float | None, sync: bool
    ) -> CallResult:
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
        expected = INPUTS[role]
        if not isinstance(inputs, expected):
            raise InputTypeError(f"role {role!r} expects {expected.__name__}, got {type(inputs).__name__}")
        if timeout is not None and timeout <= 0:
            raise InputError(f"timeout must be positive, got {timeout}")
        model = self._models[role]
        key = template_key(role, inputs)
        prompt_hash = self.prompts.hash(key)
        messages = self.prompts.render(role, inputs)
        flags = [
            f"{where}: {flag}" for where, text in untrusted_parts(inputs) for flag in find_injection(text)
        ]
        record: dict[str, Any] = {
            "role": role,
            "model": self._names[role],
            "offline": bool(getattr(model, "offline", False)),
            "prompt_hash": prompt_hash,
            "injection_flags": list(dict.fromkeys(flags)),
        }
        default = CONSERVATIVE_DEFAULTS[role]
        attempts: list[_Attempt] = []

        first = await self._attempt(
            model,
            role,
            inputs,
            messages,
            prompt_hash=prompt_hash,
            timeout=timeout,
            deadline=deadline,
            repair=False,
            sync=sync,
        )
        if first is None:
            return self._result(
                default, record, attempts, messages, raw="", status="error", error="deadline exceeded"
            )
        attempts.append(first)
        comp = first.completion
        if comp.error is not None:
            return self._result(
                default, record, attempts, messages, raw=comp.raw, status="error", error=comp.error
            )
        output, err = parse(role, comp.raw)
        if output is not None:
            return self._result(output, record, attempts, messages, raw=comp.raw, status="ok")

        repair_messages = self.prompts.render_repair(role, messages, comp.raw, err or "invalid output")
        second = await self._attempt(
            model,
            role,
            inputs,
            repair_messages,
            prompt_hash=prompt_hash,
            timeout=timeout,
            deadline=deadline,
            repair=True,
            sync=sync,
        )
        if second is None:
            return self._result(
                default,
                record,
                attempts,
                messages,
                raw=comp.raw,
                status="unparsed",
                parse_error=err,
                error="deadline exceeded before the repair call",
            )
        attempts.append(second)
        comp2 = second.completion
        if comp2.error is not None:
            return self._result(
                default,
                record,
                attempts,
                repair_messages,
                raw=comp.raw,
                status="unparsed",
                parse_error=err,
                error=f"repair call failed: {comp2.error}",
            )
        output2, err2 = parse(role, comp2.raw)
        if output2 is not None:
            return self._result(
                output2, record, attempts, repair_messages, raw=comp2.raw, status="repaired", parse_error=err
            )
        return self._result(
            default, record, attempts, repair_messages, raw=comp2.raw, status="unparsed", parse_error=err2
        )

    async def _attempt(
        self,
        model: Model,
        role: Role,
        inputs: BaseModel,
        messages: list[Message],
        *,
        prompt_hash: str,
        timeout: float | None,
        deadline: float | None,
        repair: bool,
        sync: bool,
    ) -> _Attempt | None:
        """One model call; None when no time is left to make it.

        The request carries the per-call timeout (stable: LiteLLM caches its
        HTTP clients per timeout value) and the deadline; backends enforce
        both, per attempt of their own retries. The runner only guards
        against a backend that overruns: it cuts the call at the deadline, or
        at ``_SAFETY_FACTOR`` x the timeout when there is no deadline."""
        per_call = self.timeout if timeout is None else timeout
        guard = per_call * _SAFETY_FACTOR
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            guard = min(guard, left)
        request = ModelRequest(
            role=role,
            messages=messages,
            output_schema=OUTPUTS[role],
            inputs=inputs,
            prompt_hash=prompt_hash,
            timeout=per_call,
            deadline=deadline,
            repair=repair,
            provider_concurrency=PROVIDER_CONCURRENCY.get(),
        )
        started = time.perf_counter()
        try:
            if sync:
                completion = model.complete(request)
            else:
                completion = await asyncio.wait_for(model.acomplete(request), timeout=guard + _GRACE_S)
        except ModelError:
            raise
        except (asyncio.TimeoutError, TimeoutError):
            why = (
                "deadline exceeded"
                if deadline is not None and guard < per_call * _SAFETY_FACTOR
                else "overran"
            )
            completion = Completion(
                raw="", model=self._names[role], error=f"timed out: no answer within {guard:.2f}s ({why})"
            )
        except Exception as exc:  # noqa: BLE001 - a backend that raises instead of reporting must not sink the question; the error is recorded
            completion = Completion(raw="", model=self._names[role], error=f"{type(exc).__name__}: {exc}")
        return _Attempt(completion, (time.perf_counter() - started) * 1000)

    def _result(
        self,
        output: BaseModel,
        record: dict[str, Any],
        attempts: list[_Attempt],
        messages: list[Message],
        *,
        raw: str,
        status: str,
        parse_error: str | None = None,
        error: str | None = None,
    ) -> CallResult:
        secrets = self._secrets

        def scrub(text: str | None) -> str | None:
            return None if text is None else redact(text, secrets)

        comps = [a.completion for a in attempts]
        tokens_in = [c.tokens_in for c in comps if c.tokens_in is not None]
        tokens_out = [c.tokens_out for c in comps if c.tokens_out is not None]
        costs = [c.cost for c in comps]
        fallbacks = [c.fallback for c in comps if c.fallback]
        call = ModelCall(
            **record,
            messages=[{"role": m.role, "content": redact(m.content, secrets)} for m in messages],
            raw=redact(raw, secrets),
            parsed_ok=status in ("ok", "repaired"),
            parse_status=status,
            parse_error=scrub(parse_error),
            tokens_in=sum(tokens_in) if tokens_in else None,
            tokens_out=sum(tokens_out) if tokens_out else None,
            # Unknown for any attempt -> unknown in total (never understate a cost).
            cost=None if not comps or any(c is None for c in costs) else float(sum(c or 0.0 for c in costs)),
            latency_ms=sum(a.latency_ms for a in attempts),
            retries=sum(c.retries for c in comps),
            cached=bool(comps) and all(c.cached for c in comps),
            fallback=scrub("; ".join(fallbacks)) if fallbacks else None,
            error=scrub(error),
        )
        return CallResult(output=_scrub_output(output, secrets), call=call)


def _scrub_output(output: BaseModel, secrets: list[str]) -> BaseModel:
    """A parsed output with any configured secret removed (a model echoing the
    key must not smuggle it into a record through the answer text)."""
    known = [s for s in [*secrets, *environment_secrets()] if len(s) >= 6]
    if not known:
        return output
    dumped = output.model_dump_json()
    if not any(s in dumped for s in known):
        return output
    cleaned = dumped
    for s in sorted(known, key=len, reverse=True):
        cleaned = cleaned.replace(s, "[REDACTED]")
    return type(output).model_validate_json(cleaned)


def untrusted_parts(inputs: BaseModel) -> list[tuple[str, str]]:
    """(where, text) for every piece of user- or document-supplied text in a
    role's inputs: what injection flags are computed over."""
    parts: list[tuple[str, str]] = []
    question = getattr(inputs, "question", None)
    if isinstance(question, str):
        parts.append(("question", question))
    if isinstance(inputs, RerankInputs):
        parts.append(("query", inputs.query))
        parts.extend((f"candidate {i}", t) for i, t in enumerate(inputs.candidates))
    if isinstance(inputs, DecideInputs) and inputs.summary:
        parts.append(("summary", inputs.summary))
    if isinstance(inputs, DecideInputs | RewriteInputs | AssessInputs | GenerateInputs):
        parts.extend((f"history[{i}]", m.content) for i, m in enumerate(inputs.history))
    if isinstance(inputs, GradeInputs):
        where = f"document ({inputs.source})" if inputs.source else "document"
        parts.extend((where, t) for t in (inputs.title, inputs.heading, inputs.text) if t)
    if isinstance(inputs, AssessInputs | GenerateInputs | VerifyInputs):
        for ev in inputs.evidence:
            where = f"document {ev.index} ({ev.source})"
            parts.extend((where, t) for t in (ev.title, ev.heading, ev.text) if t)
    if isinstance(inputs, VerifyInputs):
        parts.append(("answer", inputs.answer))
    return parts
