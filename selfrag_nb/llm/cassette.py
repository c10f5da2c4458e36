"""Record model calls once, replay them anywhere (no network, no key).

    CassetteModel.complete(request)
      key = request_key(model, request)             (shared with the cache)
      mode "replay": cassette[key] --> Completion(extra.replayed=True)
                     missing       --> ModelError (role, model, user message, path)
      mode "record": inner.complete(request) --> append one JSON line --> Completion
      mode "auto":   replay when recorded (and not an error), else record

    cassette file (JSON Lines, one call per line, appended, later lines win):
      {"v": 1, "key": ..., "role": ..., "model": ..., "schema": ...,
       "messages": [...], "completion": {...}, "recorded_at": ...}

Everything written is passed through ``redact`` first (explicit secrets, the
inner model's key, secret-named environment values, key-shaped tokens), so a
cassette can be committed. The key is computed from the request before
redaction, so replay still finds it.

Failed calls (``Completion.error``) are recorded so a replay reproduces the
same trace, fallbacks included; "auto" mode calls the model again for them.
Appends are whole lines written in one ``write`` under a lock, so parallel
graders recording at once never interleave.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from selfrag_nb.errors import InputError, InputTypeError, ModelError
from selfrag_nb.llm.base import Completion, Model, ModelRequest
from selfrag_nb.llm.cache import request_key
from selfrag_nb.llm.redact import redact

__all__ = ["Cassette", "CassetteEntry", "CassetteMode", "CassetteModel"]

CassetteMode = Literal["replay", "record", "auto"]
_MODES = ("replay", "record", "auto")
_FORMAT_VERSION = 1


def _redact_tree(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _redact_tree(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_tree(v, secrets) for v in value]
    return value


class CassetteEntry:
    """One recorded call: its key, what was asked (for people reading the
    file) and the Completion."""

    __slots__ = ("completion", "key", "messages", "model", "role", "schema")

    def __init__(
        self,
        key: str,
        completion: Completion,
        *,
        role: str = "",
        model: str = "",
        schema: str = "",
        messages: list[dict[str, str]] | None = None,
    ) -> None:
        self.key = key
        self.completion = completion
        self.role = role
        self.model = model
        self.schema = schema
        self.messages = messages or []

    def __repr__(self) -> str:
        return f"CassetteEntry(role={self.role!r}, model={self.model!r}, key={self.key[:12]}...)"


class Cassette:
    """A JSON Lines file of recorded calls. ``mode``: "replay" (default;
    the file must exist), "record" (calls the model, appends every call) or
    "auto" (replays what is recorded, records the rest)."""

    def __init__(self, path: str | Path, mode: CassetteMode = "replay") -> None:
        if mode not in _MODES:
            raise InputError(f"cassette mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self.path = Path(path)
        self.mode: CassetteMode = mode
        self._lock = threading.Lock()
        self._entries: dict[str, CassetteEntry] = {}
        if self.path.is_dir():
            raise InputError(
                f"cassette path {self.path} is a directory; give a file such as {self.path / 'calls.jsonl'}"
            )
        if self.path.exists():
            self._load()
        elif mode == "replay":
            # no model: a cassette is opened before any model is named (one file serves several)
            raise ModelError(
                f"cassette {self.path} does not exist: record it first with Cassette(path, mode='record') "
                f"or mode='auto'"
            )

    def _load(self) -> None:
        with self.path.open("r", encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    entry = CassetteEntry(
                        str(data["key"]),
                        Completion.model_validate(data["completion"]),
                        role=str(data.get("role", "")),
                        model=str(data.get("model", "")),
                        schema=str(data.get("schema", "")),
                        messages=list(data.get("messages") or []),
                    )
                except (ValueError, KeyError, TypeError) as exc:
                    raise InputError(
                        f"cassette {self.path} line {number} is not a recorded call: {exc}"
                    ) from exc
                self._entries[entry.key] = entry  # later lines win (re-recordings)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r}, entries={len(self)})"

    def get(self, key: str) -> CassetteEntry | None:
        with self._lock:
            return self._entries.get(key)

    def models(self) -> list[str]:
        """The model names recorded in this cassette, in first-seen order."""
        with self._lock:
            return list(dict.fromkeys(e.model for e in self._entries.values() if e.model))

    def entries(self) -> list[CassetteEntry]:
        with self._lock:
            return list(self._entries.values())

    def record(
        self,
        key: str,
        request: ModelRequest,
        completion: Completion,
        *,
        model: str,
        secrets: list[str] | None = None,
    ) -> CassetteEntry:
        """Append one call (redacted) and remember it."""
        secret_list = [s for s in (secrets or []) if s]
        messages = [_redact_tree(m.model_dump(), secret_list) for m in request.messages]
        dumped = completion.model_dump(mode="json")
        # The answer keeps key-shaped prose (replay must return what was said);
        # only exact secrets are removed from it.
        raw = redact(completion.raw, secret_list, patterns=False)
        stored = Completion.model_validate({**_redact_tree(dumped, secret_list), "raw": raw})
        entry = CassetteEntry(
            key,
            stored,
            role=request.role,
            model=model,
            schema=request.output_schema.__name__,
            messages=messages,
        )
        line = json.dumps(
            {
                "v": _FORMAT_VERSION,
                "key": key,
                "role": entry.role,
                "model": model,
                "schema": entry.schema,
                "messages": messages,
                "completion": stored.model_dump(mode="json"),
                "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            },
            ensure_ascii=False,
        )
        data = (line + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_APPEND + one write per line: whole lines, even with other writers.
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self._entries[key] = entry
        return entry


class CassetteModel:
    """A Model that records ``inner``'s calls to a cassette or replays them.

    In replay mode ``inner`` may be None: no network, no key, no provider.
    ``name`` defaults to the inner model's name, else the single model
    recorded in the cassette. A replayed Completion has ``cached=False`` and
    ``extra["replayed"] = True``; its tokens, cost and latency are those
    recorded. ``secrets`` are extra strings to redact from what is recorded
    (the inner model's own key, when it exposes ``secrets``, is added).
    """

    def __init__(
        self,
        inner: Model | None,
        cassette: Cassette,
        *,
        name: str | None = None,
        secrets: list[str] | None = None,
    ) -> None:
        if inner is not None and not isinstance(inner, Model):
            raise InputTypeError(
                f"inner must implement the Model protocol or be None, got {type(inner).__name__}"
            )
        if inner is None and cassette.mode != "replay":
            raise InputError(f"cassette mode {cassette.mode!r} needs an inner model to record from")
        self.inner = inner
        self.cassette = cassette
        recorded = cassette.models()
        self.name = name or (
            inner.name if inner is not None else (recorded[0] if len(recorded) == 1 else "replay")
        )
        self.offline = inner.offline if inner is not None else False
        self._secrets = [*(secrets or []), *getattr(inner, "secrets", ())]

    def __repr__(self) -> str:
        return f"CassetteModel({self.inner!r}, {self.cassette!r})"

    def _lookup(self, request: ModelRequest) -> tuple[str, CassetteEntry | None]:
        key = request_key(self.name, request)
        entry = self.cassette.get(key)
        if entry is None and self.inner is None:
            # Replay-only with per-role models: the call may have been recorded
            # under another of the cassette's model names.
            for model in self.cassette.models():
                entry = self.cassette.get(request_key(model, request))
                if entry is not None:
                    break
        return key, entry

    def _replayed(self, entry: CassetteEntry) -> Completion:
        return entry.completion.model_copy(
            update={"cached": False, "extra": {**entry.completion.extra, "replayed": True}}
        )

    def _miss(self, request: ModelRequest) -> ModelError:
        user = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        snippet = " ".join(user.split())[:80]
        return ModelError(
            f"cassette {self.cassette.path} has no recorded call for role {request.role!r}, "
            f"model {self.name!r}, user message {snippet!r}; re-record with mode='record' or 'auto' "
            f"(the prompt, the model or the output schema changed since recording)",
            model=self.name,
        )

    def _decide(self, request: ModelRequest) -> tuple[str, Completion | None]:
        key, entry = self._lookup(request)
        mode = self.cassette.mode
        if mode == "replay":
            if entry is None:
                raise self._miss(request)
            return key, self._replayed(entry)
        if mode == "auto" and entry is not None and entry.completion.error is None:
            return key, self._replayed(entry)
        return key, None

    def complete(self, request: ModelRequest) -> Completion:
        key, replayed = self._decide(request)
        if replayed is not None:
            return replayed
        assert self.inner is not None  # record/auto modes require one (checked in __init__)
        answer = self.inner.complete(request)
        self.cassette.record(key, request, answer, model=self.name, secrets=self._secrets)
        return answer

    async def acomplete(self, request: ModelRequest) -> Completion:
        key, replayed = self._decide(request)
        if replayed is not None:
            return replayed
        assert self.inner is not None  # record/auto modes require one (checked in __init__)
        answer = await self.inner.acomplete(request)
        self.cassette.record(key, request, answer, model=self.name, secrets=self._secrets)
        return answer
