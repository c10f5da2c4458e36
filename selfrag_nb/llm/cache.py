"""Response cache: the same request to the same model is answered once.

    CachedModel.complete(request)
      key = request_key(model name, request)     sha256 of model, messages,
                                                 output schema name + JSON schema
      memory (LRU, max_entries) --hit--> Completion(cached=True, cost=0.0, latency ~0)
        | miss
      disk (sqlite3, optional)  --hit--> promote to memory, same as above
        | miss
      inner.complete(request) --> store unless it is an error --> Completion

A cache hit costs nothing, so its ``cost`` is 0.0 (a known zero, not None);
tokens are those of the original answer. Errors (timeouts, HTTP faults) are
never cached: the next call tries the provider again.

Why not LiteLLM's own cache: in LiteLLM 1.110 the disk backend was removed
and the in-memory cache crashes on its first hit (BerriAI/litellm#42195), and
it could not see our structured requests anyway. This one is stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.llm.base import Completion, Model, ModelRequest

__all__ = ["CachedModel", "ResponseCache", "request_key"]


def request_key(model_name: str, request: ModelRequest) -> str:
    """The identity of a call: sha256 (hex) of the model name, the messages,
    and the output schema's name and JSON schema. Timeouts, deadlines and the
    structured inputs are not part of it (they do not change the answer a
    model gives to the same prompt). Shared by the cache and the cassette."""
    payload = {
        "model": model_name,
        "messages": [m.model_dump() for m in request.messages],
        "schema_name": request.output_schema.__name__,
        "schema": request.output_schema.model_json_schema(),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """An LRU of ``key -> Completion`` in memory (at most ``max_entries``),
    optionally backed by a sqlite3 file at ``path`` that survives restarts
    (also trimmed to ``max_entries``, least recently used first). Thread-safe.
    """

    def __init__(self, max_entries: int = 10_000, path: str | Path | None = None) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise InputError(f"max_entries must be an integer >= 1, got {max_entries!r}")
        self.max_entries = max_entries
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        self._memory: OrderedDict[str, Completion] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = self._open(self.path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        if path.exists() and path.is_dir():
            raise InputError(
                f"cache path {path} is a directory; give a file path such as {path / 'cache.sqlite'}"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # One connection shared under self._lock (calls come from several threads).
            db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS completions ("
                " key TEXT PRIMARY KEY, completion TEXT NOT NULL, used INTEGER NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS completions_used ON completions (used)")
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cache file {path} is not a usable sqlite3 database: {exc}") from exc
        return db

    # ---------------------------------------------------------------- api

    def get(self, key: str) -> Completion | None:
        """The stored Completion for ``key`` (as it was stored), or None."""
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
            elif self._db is not None:
                row = self._db.execute("SELECT completion FROM completions WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    found = Completion.model_validate_json(row[0])
                    self._remember(key, found)
            if found is not None and self._db is not None:
                # The disk keeps its own recency so its trim matches the LRU.
                self._db.execute("UPDATE completions SET used = ? WHERE key = ?", (time.time_ns(), key))
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

    def put(self, key: str, completion: Completion) -> bool:
        """Store ``completion`` unless it is an error; True when stored."""
        if completion.error is not None:
            return False
        with self._lock:
            self._remember(key, completion)
            if self._db is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO completions (key, completion, used) VALUES (?, ?, ?)",
                    (key, completion.model_dump_json(), time.time_ns()),
                )
                self._db.execute(
                    "DELETE FROM completions WHERE key IN ("
                    " SELECT key FROM completions ORDER BY used DESC LIMIT -1 OFFSET ?)",
                    (self.max_entries,),
                )
        return True

    def clear(self) -> None:
        """Forget everything, on disk too."""
        with self._lock:
            self._memory.clear()
            if self._db is not None:
                self._db.execute("DELETE FROM completions")

    def close(self) -> None:
        """Close the disk file (the memory part stays usable)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __len__(self) -> int:
        with self._lock:
            if self._db is not None:
                return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
            return len(self._memory)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            if key in self._memory:
                return True
            if self._db is not None and isinstance(key, str):
                return (
                    self._db.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone() is not None
                )
            return False

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"ResponseCache(max_entries={self.max_entries}{where}, hits={self.hits}, misses={self.misses})"

    def _remember(self, key: str, completion: Completion) -> None:
        self._memory[key] = completion
        self._memory.move_to_end(key)
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)


class CachedModel:
    """A Model that answers repeated requests from a ``ResponseCache``.

    A hit returns the stored Completion with ``cached=True``, ``cost=0.0``
    (a cached answer costs nothing), ``retries=0`` and the lookup time as
    latency. Misses call ``inner`` and store its answer unless it is an error.
    """

    def __init__(self, inner: Model, cache: ResponseCache | None = None) -> None:
        if not isinstance(inner, Model):
            raise InputTypeError(f"inner must implement the Model protocol, got {type(inner).__name__}")
        self.inner = inner
        self.cache = cache if cache is not None else ResponseCache()
        self.name = inner.name
        self.offline = inner.offline

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, {self.cache!r})"

    def _hit(self, request: ModelRequest) -> tuple[str, Completion | None]:
        started = time.perf_counter()
        key = request_key(self.name, request)
        found = self.cache.get(key)
        if found is None:
            return key, None
        return key, found.model_copy(
            update={
                "cached": True,
                "cost": 0.0,
                "retries": 0,
                "latency_ms": (time.perf_counter() - started) * 1000.0,
            }
        )

    def complete(self, request: ModelRequest) -> Completion:
        key, hit = self._hit(request)
        if hit is not None:
            return hit
        answer = self.inner.complete(request)
        self.cache.put(key, answer)
        return answer

    async def acomplete(self, request: ModelRequest) -> Completion:
        key, hit = self._hit(request)
        if hit is not None:
            return hit
        answer = await self.inner.acomplete(request)
        self.cache.put(key, answer)
        return answer
