"""KnowledgeBase: an embedded LanceDB table of chunks, searched with an ACL prefilter.

    KnowledgeBase.open(path | file:// | s3://, embedder)
      folder/chunks.lance        one row per chunk (text, context, ACL, metadata, vector)
      folder/ingest_log.lance    one row per write: which sources changed, chunk counts
      folder/.selfrag_nb.lock    serialises writers across processes (local folders only)
      folder/.chunks.staging-*   the first write's table, renamed to chunks.lance when complete

    ingest(path)
      load_tree -> Documents -> effective ACL + metadata -> content_hash per source
      -> compare with stored hashes -> chunk + embed only new/changed sources
         (lazily: 64 chunks at a time straight into Arrow batches, store/batches.py)
      -> [lock] re-read hashes -> ONE merge_insert (insert new chunks, delete the
         old chunks of changed / pruned sources) -> log -> keep indexes fresh
      -> IngestReport (added / updated / unchanged / removed / skipped, version)

    search(query, k, mode, user, where)
      ACL where-clause (acl.py) AND caller's where -> LanceDB prefilter
      vector  cosine kNN over the embedder's vectors
      fts     LanceDB full-text index (ICU tokenizer: English words + Chinese words),
              queried with a MatchQuery: the question is words, never query syntax
      hybrid  both, fused by LanceDB's RRFReranker
      -> Hits (Hit.text = original chunk text; Hit.context = title > heading path)
      failure -> named by trying each suspect alone: the where (ValueError), the
                 rows (damaged data: restore / rebuild), else an index (kb.reindex())

    ingest / remove / restore: all or nothing. Write -> log -> index refresh; when
      any step fails the chunk table is restored to its version before the call
      and the KnowledgeBaseError names the step and the fix, so a retry applies once.

    reindex()
      read every row -> drop + recreate each index (FTS on search_text, ICU)
      -> an unreadable ingest_log is recreated with a note (chunks untouched)

Why one merge_insert per ingest: the embeddings are computed before the table is
touched, and the single transaction either lands (a new table version) or does
not, so a failed ingest (embedder error, crash) never leaves a source half
replaced. Why a file lock as well: concurrent merge_inserts on the same keys
can both insert (lance#4585), so writers take turns and re-read the stored
hashes inside the lock.

Damage (a deleted or truncated data, index or manifest file, a table folder
that is not a table, unreadable metadata) surfaces as a KnowledgeBaseError
naming the knowledge base, at open or at the first read that touches it:
open() does not read every data file, which would cost a full scan. Damage in
an index or the ingest log names kb.reindex(); damage in the chunk data names
kb.restore(n) or a rebuild. restore() rebuilds the full-text index when the
restored version's index no longer answers.

Why the ICU tokenizer for full-text search: measured offline on mixed text,
"simple" finds no Chinese at all, "ngram" finds Chinese but matches English
trigrams inside unrelated words ("refund" ~ "secret"), ICU segments both
languages into words. Stemming and stop words are off so Chinese and
identifiers are left as written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from selfrag_nb.errors import InputError, InputTypeError, KnowledgeBaseError, NotFoundError, PathNotFoundError
from selfrag_nb.store.acl import access_filter, combine_filters, validate_acl_name
from selfrag_nb.store.chunking import DEFAULT_MAX_CHARS
from selfrag_nb.store.prepare import FORMAT, Prepared
from selfrag_nb.store.types import Hit, Hits, IngestReport, User

if TYPE_CHECKING:
    import pyarrow as pa

    from selfrag_nb.store.embedders import Embedder

__all__ = ["KnowledgeBase", "KnowledgeBaseError"]

TABLE = "chunks"
LOG_TABLE = "ingest_log"
LOCK_FILE = ".selfrag_nb.lock"
#: The first write builds the table here, then renames it into place.
STAGING_PREFIX = f".{TABLE}.staging-"
META_KEY = b"selfrag_nb"
MODES = ("vector", "fts", "hybrid")
MAX_K = 1000
#: Rows an FTS index may lag behind before an ingest folds them in (search
#: still sees unindexed rows, only slower).
UNINDEXED_LIMIT = 2000
#: optimize() must never delete old versions: they are what restore() needs.
_KEEP_VERSIONS = timedelta(days=365 * 100)
_EMBED_BATCH = 64

Progress = Callable[[int, int, str], None]

_RESULT_COLUMNS = [
    "chunk_id",
    "doc_id",
    "source",
    "title",
    "heading",
    "text",
    "context",
    "ordinal",
    "metadata",
]


def _cause(exc: BaseException) -> str:
    """LanceDB's message without the Rust source location it appends."""
    return re.sub(r",\s*/\S+\.rs:\d+:\d+", "", str(exc)).strip()


def _damaged(uri: str, doing: str, exc: BaseException) -> KnowledgeBaseError:
    """Damage in the chunk data itself: only another version or a rebuild has the rows."""
    return KnowledgeBaseError(
        f"knowledge base {uri} is damaged: {doing} failed, a data file is missing or truncated "
        f"({_cause(exc)}). Restore an earlier version (kb.versions(), kb.restore(n)) if its files "
        "are intact, or rebuild it in a new folder."
    )


def _index_damaged(uri: str, doing: str, exc: BaseException) -> KnowledgeBaseError:
    """Damage in an index while the rows read fine: the index can be rebuilt from them."""
    return KnowledgeBaseError(
        f"knowledge base {uri}: {doing} failed because an index is damaged ({_cause(exc)}); "
        "the chunk data is intact. Rebuild the indexes with kb.reindex()."
    )


def _sql_in(column: str, values: list[str]) -> str:
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def _resolve_uri(path: str | os.PathLike[str]) -> tuple[str, Path | None]:
    """(uri for lancedb, local folder or None for object stores)."""
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"knowledge base path must be a non-blank path or URI, got {path!r}")
    if "://" in text:
        parsed = urlparse(text)
        if parsed.scheme == "file":
            if parsed.netloc not in ("", "localhost"):
                raise InputError(f"file:// URI must name a local path, got host {parsed.netloc!r}")
            local = Path(unquote(parsed.path))
            return str(local), local
        return text, None
    local = Path(text).expanduser()
    return str(local), local


def _cache_root() -> Path:
    from selfrag_nb.resources import cache_dir

    return cache_dir()


class KnowledgeBase:
    """Chunks of documents in an embedded LanceDB table: ingest, search, versions.

    Build one with :meth:`open` or :meth:`sample`."""

    def __init__(
        self,
        *,
        uri: str,
        local_dir: Path | None,
        db: Any,
        table: Any,
        embedder: Embedder,
        max_chars: int,
    ) -> None:
        self._uri = uri
        self._local_dir = local_dir
        self._db = db
        self._table = table
        self._embedder = embedder
        self._max_chars = max_chars
        self._closed = False

    # ------------------------------------------------------------------ open

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        embedder: str | Embedder | None = None,
        create: bool = True,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        **embedder_options: Any,
    ) -> KnowledgeBase:
        """Open (or create) the knowledge base at ``path``: a folder, ``file://...``,
        or an object-store URI such as ``s3://bucket/kb`` (passed to LanceDB).

        ``embedder=None`` uses the embedder the knowledge base was built with
        ("minilm" for a new one); naming a different one than stored is an error."""
        import lancedb

        from selfrag_nb.store.embedders import get_embedder

        uri, local = _resolve_uri(path)
        if local is not None:
            if local.exists() and not local.is_dir():
                raise KnowledgeBaseError(f"{local} is a file, not a knowledge base folder")
            if not local.exists():
                if not create:
                    raise PathNotFoundError(f"no knowledge base at {local} (pass create=True to make one)")
                local.mkdir(parents=True)
        db = lancedb.connect(uri, read_consistency_interval=timedelta(seconds=1))
        try:
            names = set(db.list_tables().tables)
        except Exception as exc:
            raise KnowledgeBaseError(f"{uri} cannot be read as a LanceDB database: {exc}") from exc
        table = None
        stored: dict[str, Any] | None = None
        if TABLE in names:
            try:
                table = db.open_table(TABLE)
                schema = table.schema
            except Exception as exc:
                raise KnowledgeBaseError(f"{uri}: the '{TABLE}' table is damaged: {_cause(exc)}") from exc
            raw = (schema.metadata or {}).get(META_KEY)
            if raw is None:
                raise KnowledgeBaseError(
                    f"{uri} holds a LanceDB table '{TABLE}' that selfrag_nb did not create (no {META_KEY.decode()} metadata)"
                )
            try:
                stored = json.loads(raw)
            except ValueError:
                stored = None
            if not isinstance(stored, dict) or not isinstance(stored.get("embedder"), str):
                raise KnowledgeBaseError(
                    f"{uri}: the '{TABLE}' table's {META_KEY.decode()} metadata is unreadable "
                    f"(expected a JSON object naming the embedder, got {raw[:60]!r})"
                )
        elif local is not None and (local / f"{TABLE}.lance").exists():
            raise KnowledgeBaseError(
                f"knowledge base {uri} is damaged: {local / f'{TABLE}.lance'} is not a LanceDB table "
                "(restore the folder from a backup or rebuild it in a new folder)"
            )
        elif names - {LOG_TABLE}:
            raise KnowledgeBaseError(
                f"{uri} is a LanceDB database of other tables ({', '.join(sorted(names))}), not a knowledge base"
            )
        elif local is not None and not names:
            strays = [
                p.name
                for p in local.iterdir()
                if p.name != LOCK_FILE and not p.name.startswith(STAGING_PREFIX)
            ]
            if strays:
                raise KnowledgeBaseError(
                    f"{local} is not a knowledge base: it holds {', '.join(sorted(strays)[:5])} but no '{TABLE}' table "
                    "(point --kb / open() at an empty or new folder)"
                )
        if local is not None and not names and not create:
            raise PathNotFoundError(f"no knowledge base at {local} (pass create=True to make one)")

        if stored is not None:
            want = stored["embedder"]
            if embedder is None:
                embedder = want
            emb = get_embedder(embedder, **embedder_options)
            if emb.name != want:
                raise KnowledgeBaseError(
                    f"{uri} was built with embedder {want!r} (dim {stored.get('dim')}); "
                    f"it cannot be searched with {emb.name!r}. Open it with embedder={want!r} or use a new folder."
                )
            max_chars = int(stored.get("max_chars", max_chars))
        else:
            emb = get_embedder("minilm" if embedder is None else embedder, **embedder_options)
        if max_chars < 50:
            raise InputError(f"max_chars must be at least 50, got {max_chars}")
        return cls(uri=uri, local_dir=local, db=db, table=table, embedder=emb, max_chars=max_chars)

    @classmethod
    def sample(
        cls, embedder: str = "minilm", *, docs: str | os.PathLike[str] | None = None, rebuild: bool = False
    ) -> KnowledgeBase:
        """The bundled bilingual sample knowledge base, built once and cached.

        The documents ship inside the package (``selfrag_nb/_data/sample_data``;
        a clone reads its ``sample_data/``: :func:`selfrag_nb.resources.bundled`).
        Cached in the user's cache folder (``$SELFRAG_NB_CACHE``, else
        :func:`selfrag_nb.resources.cache_dir`), never inside the package, in a
        folder keyed by a hash of the documents and the embedder name, so editing
        sample_data rebuilds it. ``docs`` points at another folder (tests)."""
        from selfrag_nb.resources import bundled
        from selfrag_nb.store.embedders import get_embedder

        # built first: a missing model (MiniLM weights) fails before any hashing or cache folder
        emb = get_embedder(embedder)
        folder = Path(docs) if docs is not None else bundled("sample_data") / "docs"
        if not folder.is_dir():
            raise PathNotFoundError(f"sample documents not found at {folder}")
        h = hashlib.sha256(f"{embedder}\x1f{FORMAT}".encode())
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                h.update(p.relative_to(folder).as_posix().encode() + b"\x1f" + p.read_bytes() + b"\x1e")
        root = _cache_root()
        root.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() else "_" for c in embedder)
        target = root / f"sample-{safe}-{h.hexdigest()[:16]}"
        from filelock import FileLock

        with FileLock(str(root / f".{target.name}.lock")):
            if rebuild and target.exists():
                shutil.rmtree(target)
            if not (target / "READY").exists():
                # build beside the target and rename: a crash never leaves a half-built cache
                tmp = root / f".{target.name}.{uuid.uuid4().hex[:8]}"
                kb = cls.open(tmp, embedder=emb)
                try:
                    kb.ingest(folder)
                finally:
                    kb.close()
                (tmp / "READY").write_text(datetime.now(timezone.utc).isoformat())
                if target.exists():
                    shutil.rmtree(target)
                tmp.rename(target)
        return cls.open(target, embedder=emb, create=False)

    # ------------------------------------------------------------------ properties

    @property
    def path(self) -> str:
        """The folder or URI of this knowledge base."""
        return self._uri

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def max_chars(self) -> int:
        return self._max_chars

    @property
    def version(self) -> int:
        """The current LanceDB table version (0 before the first ingest)."""
        t = self._tbl()
        return 0 if t is None else int(t.version)

    def __len__(self) -> int:
        t = self._tbl()
        return 0 if t is None else int(t.count_rows())

    def __repr__(self) -> str:
        return f"KnowledgeBase({self._uri!r}, embedder={self.embedder_name!r}, chunks={len(self)}, version={self.version})"

    def describe(self) -> dict[str, Any]:
        """Plain facts: path, embedder, dimension, chunk/source counts, version, indexes."""
        t = self._tbl()
        indexes = [] if t is None else [f"{i.index_type}({', '.join(i.columns)})" for i in t.list_indices()]
        return {
            "path": self._uri,
            "embedder": self.embedder_name,
            "dim": self._embedder.dim,
            "chunks": len(self),
            "sources": len(self.sources()),
            "version": self.version,
            "max_chars": self._max_chars,
            "indexes": indexes,
        }

    def close(self) -> None:
        """Drop the table handles (the data stays on disk)."""
        self._table = None
        self._db = None
        self._closed = True

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _tbl(self) -> Any:
        if self._closed:
            raise KnowledgeBaseError(f"knowledge base {self._uri} is closed")
        if self._table is None and TABLE in set(self._db.list_tables().tables):
            with self._reading(f"opening the '{TABLE}' table", value_errors=True):
                self._table = self._db.open_table(TABLE)
        return self._table

    @contextlib.contextmanager
    def _reading(self, doing: str, *, value_errors: bool = False) -> Iterator[None]:
        """Turn LanceDB's I/O errors (a deleted or truncated file) into a
        KnowledgeBaseError naming this knowledge base. LanceDB raises
        RuntimeError/OSError for those; ValueError means bad input (a caller's
        filter) except where ``value_errors`` says only damage can cause it."""
        try:
            yield
        except KnowledgeBaseError:
            raise
        except (RuntimeError, OSError) as exc:
            raise _damaged(self._uri, doing, exc) from exc
        except ValueError as exc:
            if not value_errors:
                raise
            raise _damaged(self._uri, doing, exc) from exc

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        if self._local_dir is None:
            # Object stores have no shared file to lock; LanceDB's own commit
            # protocol is all that serialises writers there.
            yield
            return
        from filelock import FileLock

        with FileLock(str(self._local_dir / LOCK_FILE), timeout=600):
            yield

    def _schema(self) -> pa.Schema:
        import pyarrow as pa

        meta = {"embedder": self._embedder.name, "dim": self._embedder.dim, "format": FORMAT}
        meta["max_chars"] = self._max_chars
        return pa.schema(
            [
                ("chunk_id", pa.string()),
                ("doc_id", pa.string()),
                ("source", pa.string()),
                ("title", pa.string()),
                ("heading", pa.string()),
                ("text", pa.string()),
                ("context", pa.string()),
                ("search_text", pa.string()),
                ("ordinal", pa.int32()),
                ("content_hash", pa.string()),
                ("acl_roles", pa.list_(pa.string())),
                ("acl_users", pa.list_(pa.string())),
                ("tenant", pa.string()),
                ("lang", pa.string()),
                ("metadata", pa.string()),
                ("ingested_at", pa.string()),
                ("origin", pa.string()),
                ("vector", pa.list_(pa.float32(), self._embedder.dim)),
            ],
            metadata={META_KEY: json.dumps(meta).encode()},
        )

    def _stored_hashes(self) -> dict[str, str]:
        return {source: h for source, (h, _) in self._stored().items()}

    def _stored(self) -> dict[str, tuple[str, str]]:
        """source -> (content hash, origin folder; "" before origins were stored)."""
        t = self._tbl()
        if t is None:
            return {}
        with self._reading("reading the stored sources", value_errors=True):
            t.checkout_latest()
            columns = ["source", "content_hash", *(["origin"] if "origin" in t.schema.names else [])]
            data = t.search().select(columns).limit(None).to_arrow()
        origins = data["origin"].to_pylist() if "origin" in columns else [""] * data.num_rows
        return {
            s: (h, o or "")
            for s, h, o in zip(
                data["source"].to_pylist(), data["content_hash"].to_pylist(), origins, strict=True
            )
        }

    def _ensure_fts(self, t: Any) -> None:
        fts = [i for i in t.list_indices() if i.index_type == "FTS"]
        if not fts:
            _create_fts(t)
            return
        stats = t.index_stats(fts[0].name)
        if stats is not None and stats.num_unindexed_rows > UNINDEXED_LIMIT:
            t.optimize(cleanup_older_than=_KEEP_VERSIONS)

    def _log(self, op: str, data_version: int, **fields: Any) -> None:
        import pyarrow as pa

        row = {
            "version": data_version,
            "op": op,
            "at": datetime.now(timezone.utc).isoformat(),
            "details": json.dumps(fields, ensure_ascii=False),
        }
        schema = pa.schema(
            [("version", pa.int64()), ("op", pa.string()), ("at", pa.string()), ("details", pa.string())]
        )
        table = pa.Table.from_pylist([row], schema=schema)
        if LOG_TABLE in set(self._db.list_tables().tables):
            self._db.open_table(LOG_TABLE).add(table)
        else:
            self._db.create_table(LOG_TABLE, table)

    @contextlib.contextmanager
    def _all_or_nothing(self, doing: str) -> Iterator[Callable[[str], None]]:
        """Run the table change, log entry and index refresh of one call as a
        unit: when any step fails the chunk table goes back to the version it
        had before the call (``restore`` writes a new version holding the old
        rows), so a retry applies the change once. Yields ``step(name)`` for
        the caller to say what it is doing, which the error then names.
        Callers hold the write lock."""
        t = self._tbl()
        if t is not None:
            t.checkout_latest()  # the handle may lag another process's write by up to a second
        before = None if t is None else int(t.version)
        current = ["starting"]

        def step(name: str) -> None:
            current[0] = name

        try:
            yield step
        except BaseException as exc:
            undone = self._undo(before)
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: undone, then re-raised
                raise
            raise KnowledgeBaseError(
                f"knowledge base {self._uri}: {doing} was undone ({undone}) because {current[0]} failed: "
                f"{_cause(exc)}. {_fix_for(current[0])}"
            ) from exc

    def _undo(self, before: int | None) -> str:
        """Put the chunk table back to version ``before`` (None: no table)."""
        t = self._tbl()
        try:
            if t is None:
                return "nothing had been written"
            if before is None:
                # the first write of this call created the table: the state before was no table
                self._table = None
                self._db.drop_table(TABLE)
                return "the table it created was dropped"
            t.checkout_latest()
            if int(t.version) == before:
                return f"the chunks are still at version {before}"
            t.restore(before)
            return f"the chunks are back as in version {before}, now version {int(t.version)}"
        except Exception as undo_exc:
            raise KnowledgeBaseError(
                f"knowledge base {self._uri}: a failed write could not be undone ({_cause(undo_exc)}); "
                f"bring the chunks back by hand with kb.restore({before}) (kb.versions() lists them)"
            ) from undo_exc

    def reindex(self) -> list[str]:
        """Rebuild every index from the rows and repair a damaged ingest log.

        Drops and recreates the full-text index on ``search_text`` (same ICU
        settings) and any other index the table has; an ``ingest_log`` that
        cannot be read is recreated with one entry saying so (the chunks are
        untouched, only the per-version notes of :meth:`versions` are lost).
        Damaged chunk data cannot be rebuilt from itself: that is a
        KnowledgeBaseError naming restore. Returns what was done."""
        done: list[str] = []
        with self._write_lock():
            t = self._tbl()
            if t is not None:
                t.checkout_latest()
                with self._reading("reading every chunk before reindexing", value_errors=True):
                    for _ in t.search().limit(None).to_batches():
                        pass
                done.extend(self._rebuild_indexes(t))
            done.extend(self._repair_log())
        return done

    def _rebuild_indexes(self, t: Any) -> list[str]:
        done = []
        with self._reading("listing the indexes", value_errors=True):
            existing = [(i.name, i.index_type, list(i.columns)) for i in t.list_indices()]
        for name, _, _ in existing:
            t.drop_index(name)
        for _, kind, columns in existing:
            if kind == "FTS":
                continue  # recreated below with our settings, whatever the old ones were
            t.create_index(columns[0], config=_index_config(kind), replace=True)
            done.append(f"rebuilt {kind}({', '.join(columns)})")
        _create_fts(t)
        done.append("rebuilt FTS(search_text)")
        return done

    def _repair_log(self) -> list[str]:
        if LOG_TABLE not in set(self._db.list_tables().tables):
            return []
        try:
            self._db.open_table(LOG_TABLE).to_arrow()
            return []
        except Exception as exc:  # noqa: BLE001 - any failure to read it means the log is damaged
            cause = _cause(exc)
        try:
            self._db.drop_table(LOG_TABLE)
        except Exception:  # noqa: BLE001 - a table without manifests cannot be dropped by LanceDB
            if self._local_dir is None:
                raise KnowledgeBaseError(
                    f"knowledge base {self._uri}: the damaged '{LOG_TABLE}' table cannot be dropped; "
                    f"delete {self._uri}/{LOG_TABLE}.lance by hand and run kb.reindex() again"
                ) from None
        if self._local_dir is not None:
            shutil.rmtree(self._local_dir / f"{LOG_TABLE}.lance", ignore_errors=True)
        self._log("reindex", self.version, note=f"the ingest log was damaged ({cause}) and recreated empty")
        return [f"recreated the damaged '{LOG_TABLE}' table (its earlier entries were unreadable)"]

    # ------------------------------------------------------------------ ingest

    def ingest(
        self,
        path: str | os.PathLike[str],
        acl: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        progress: Progress | bool | None = None,
        *,
        prune: bool = False,
        prefix: str = "",
        on_conflict: Literal["skip", "replace"] = "skip",
    ) -> IngestReport:
        """Add a file or folder (walked recursively). Unchanged sources are left
        alone, changed ones replaced; ``prune=True`` also removes stored sources
        of this folder that are no longer in it.

        ``acl={"roles": [...], "users": [...], "tenant": "..."}`` overrides each
        document's own ACL (roles and users together, tenant on its own; see
        docs/access-control.md); ``metadata`` is merged into every chunk's metadata.
        ``prefix="colA/"`` is put before every source name. A source already
        stored from another folder (two folders both holding ``report.md``) is
        skipped with the fix in its reason, or replaced with ``on_conflict="replace"``.
        ``progress`` is a callable ``(done, total, message)`` or True for a bar."""
        from selfrag_nb.store.loaders import load_tree
        from selfrag_nb.store.prepare import (
            check_acl,
            check_metadata,
            check_policy,
            check_prefix,
            conflict,
            origin_of,
            prepare,
        )

        started = time.perf_counter()
        override = check_acl(acl)
        extra = check_metadata(metadata)
        prefix = check_prefix(prefix)
        check_policy(on_conflict)

        with _progress_reporter(progress) as report:
            docs, skipped = load_tree(path)
            origin = origin_of(path)
            prepared: list[Prepared] = []
            for d in docs:
                try:
                    prepared.append(
                        prepare(d, override, extra, self._max_chars, prefix=prefix, origin=origin)
                    )
                except ValueError as exc:
                    skipped.append((prefix + d.source, str(exc)))

            def clash(p: Prepared, stored: dict[str, tuple[str, str]]) -> str | None:
                if on_conflict == "replace" or p.source not in stored:
                    return None
                return conflict(p.source, stored[p.source][1], origin, prefix)

            snapshot = self._stored()
            todo = [
                p
                for p in prepared
                if snapshot.get(p.source, ("", ""))[0] != p.content_hash and clash(p, snapshot) is None
            ]
            rows = self._embed_rows(todo, report)

            with self._write_lock():
                fresh = self._stored()
                added: list[str] = []
                updated: list[str] = []
                unchanged: list[str] = []
                new_rows: list[pa.Table] = []
                for p in prepared:
                    reason = clash(p, fresh)
                    if reason is not None:
                        skipped.append((p.source, reason))
                        continue
                    old = fresh.get(p.source, (None, ""))[0]
                    if old == p.content_hash:
                        unchanged.append(p.source)
                        continue
                    if p.source not in rows:  # another writer changed it after our snapshot
                        rows.update(self._embed_rows([p], None))
                    (updated if old is not None else added).append(p.source)
                    new_rows.append(rows[p.source])
                loaded = {p.source for p in prepared}
                # Only this folder's sources: pruning must not delete what
                # another folder (another origin) stored.
                removed = (
                    sorted(s for s, (_, o) in fresh.items() if s not in loaded and o == origin)
                    if prune
                    else []
                )
                with self._all_or_nothing("the ingest") as step:
                    step("writing the chunks")
                    version, n_add, n_del = self._write(new_rows, updated + removed)
                    t = self._tbl()
                    if t is not None and (new_rows or removed):
                        step(f"recording the write in the '{LOG_TABLE}' table")
                        self._log(
                            "ingest",
                            version,
                            root=str(path),
                            added=added,
                            updated=updated,
                            removed=removed,
                            chunks_added=n_add,
                            chunks_removed=n_del,
                        )
                        step("refreshing the full-text index")
                        self._ensure_fts(t)
                report(1, 1, "done")
        return IngestReport(
            added=added,
            updated=updated,
            unchanged=unchanged,
            removed=removed,
            skipped=skipped,
            chunks_added=n_add,
            chunks_removed=n_del,
            version=self.version,
            seconds=round(time.perf_counter() - started, 4),
        )

    def _embed_rows(self, todo: list[Prepared], report: Progress | None) -> dict[str, pa.Table]:
        """Embed every chunk of ``todo`` (all before any write) -> an Arrow table
        per source. Batches span sources, as few embedder calls as before.
        Progress counts characters: the number of chunks is only known once a
        document is chunked, which now happens as it is embedded."""
        from selfrag_nb.store.batches import EmbedderShapeError, embed_into_arrow

        total = sum(p.size for p in todo)
        done = 0
        counts: dict[str, int] = {}

        def step(chars: int) -> None:
            nonlocal done
            done = min(done + chars, total)
            if report is not None:
                report(done, total, "embedding")

        def every_row() -> Iterator[dict[str, Any]]:
            for p in todo:
                counts[p.source] = 0
                for row in p.rows():
                    counts[p.source] += 1
                    yield row

        now = datetime.now(timezone.utc).isoformat()
        try:
            table = embed_into_arrow(
                self._embedder, every_row(), self._schema(), now, batch=_EMBED_BATCH, on_batch=step
            )
        except EmbedderShapeError as exc:
            raise KnowledgeBaseError(f"embedder {self.embedder_name!r} {exc}") from exc
        if report is not None and total:
            report(total, total, "embedding")
        out: dict[str, pa.Table] = {}
        offset = 0
        for p in todo:  # rows came source by source: each is one slice (no copy)
            out[p.source] = table.slice(offset, counts[p.source])
            offset += counts[p.source]
        return out

    def _write(self, tables: list[pa.Table], replaced: list[str]) -> tuple[int, int, int]:
        """One table operation: insert the rows of ``tables``, delete the other
        old chunks of ``replaced`` sources. Returns (version, chunks added, chunks removed)."""
        import pyarrow as pa

        t = self._tbl()
        # concat_tables only lists the tables' batches: no copy of the rows
        data = pa.concat_tables(tables) if any(tb.num_rows for tb in tables) else None
        if data is None and not replaced:
            return self.version, 0, 0
        if t is not None and data is not None and "origin" not in t.schema.names:
            # A table from before origins were stored (format 1): add the column
            # empty ("" = origin unknown) so the new rows fit.
            t.add_columns({"origin": "CAST('' AS STRING)"})
        if t is None:
            if data is None:
                return 0, 0, 0
            self._table = self._create_table(data)
            return int(self._table.version), data.num_rows, 0
        if data is None:
            before = t.count_rows()
            t.delete(_sql_in("source", replaced))
            return int(t.version), 0, before - t.count_rows()
        builder = t.merge_insert("chunk_id").when_matched_update_all().when_not_matched_insert_all()
        if replaced:
            builder = builder.when_not_matched_by_source_delete(_sql_in("source", replaced))
        res = builder.execute(data)
        return int(res.version), int(res.num_inserted_rows), int(res.num_deleted_rows)

    def _create_table(self, data: pa.Table) -> Any:
        """The first write. In a local folder the table is built in a staging
        folder and renamed into place: a crash inside LanceDB's create (data
        files written, no manifest yet) would otherwise leave a chunks.lance
        that no one can open or replace. Callers hold the write lock."""
        if self._local_dir is None:
            return self._db.create_table(TABLE, data, schema=self._schema())
        import lancedb

        for leftover in self._local_dir.glob(f"{STAGING_PREFIX}*"):  # from a killed first ingest
            shutil.rmtree(leftover, ignore_errors=True)
        staging = self._local_dir / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
        lancedb.connect(str(staging)).create_table(TABLE, data, schema=self._schema())
        os.rename(staging / f"{TABLE}.lance", self._local_dir / f"{TABLE}.lance")
        shutil.rmtree(staging, ignore_errors=True)
        return self._db.open_table(TABLE)

    def remove(self, source: str) -> int:
        """Delete every chunk of ``source`` (for a .jsonl file: all its records).
        Returns the number of chunks removed; an unknown source is a KeyError.

        A stored source removes exactly itself: a record ``recs.jsonl#a`` leaves
        ``recs.jsonl#a#b`` alone (record ids may contain "#"). Only a whole file,
        whose name has no "#", stands for its records ``file#<id>``."""
        if not isinstance(source, str) or not source.strip():
            raise InputError(f"source must be a non-blank string, got {source!r}")
        with self._write_lock():
            stored = self._stored_hashes()
            if source in stored:
                targets = [source]
            elif "#" in source.rsplit("/", 1)[-1]:
                targets = []  # a record source that is gone: never a prefix of other records
            else:
                targets = sorted(s for s in stored if s.startswith(source + "#"))
            if not targets:
                known = ", ".join(sorted(stored)[:5]) or "none"
                raise NotFoundError(f"no source {source!r} in {self._uri} (e.g. {known})")
            with self._all_or_nothing(f"removing {source!r}") as step:
                step("deleting the chunks")
                version, _, removed = self._write([], targets)
                step(f"recording the removal in the '{LOG_TABLE}' table")
                self._log("remove", version, removed=targets, chunks_removed=removed)
        return removed

    # ------------------------------------------------------------------ versions

    def versions(self) -> list[dict[str, Any]]:
        """Every table version, oldest first: ``version``, ``timestamp``, ``chunks``
        and, for versions made by this class, ``op`` plus what changed."""
        t = self._tbl()
        if t is None:
            return []
        log: dict[int, dict[str, Any]] = {}
        if LOG_TABLE in set(self._db.list_tables().tables):
            try:
                rows = self._db.open_table(LOG_TABLE).to_arrow().to_pylist()
            except Exception as exc:
                raise KnowledgeBaseError(
                    f"knowledge base {self._uri}: the '{LOG_TABLE}' table is damaged ({_cause(exc)}); "
                    "the chunks are not affected. Run kb.reindex() to recreate the log."
                ) from exc
            for r in rows:
                log[int(r["version"])] = {"op": r["op"], **json.loads(r["details"])}
        with self._reading("listing versions", value_errors=True):
            listed = t.list_versions()
        out = []
        for v in listed:
            meta = v.get("metadata") or {}
            entry: dict[str, Any] = {
                "version": int(v["version"]),
                "timestamp": v["timestamp"],
                "chunks": int(meta["total_rows"]) if "total_rows" in meta else None,
            }
            entry.update(log.get(entry["version"], {"op": "index" if entry["version"] > 1 else "create"}))
            out.append(entry)
        return out

    def restore(self, version: int) -> int:
        """Bring back the chunks of ``version`` as a new latest version (older
        versions stay restorable). Returns the new version number."""
        t = self._tbl()
        if t is None:
            raise KnowledgeBaseError(f"{self._uri} has no versions yet (nothing ingested)")
        if isinstance(version, bool) or not isinstance(version, int):
            raise InputTypeError(f"version must be an int, got {version!r}")
        known = [int(v["version"]) for v in t.list_versions()]
        if version not in known:
            raise InputError(f"no version {version} in {self._uri}; versions are {known[0]}..{known[-1]}")
        with self._write_lock(), self._all_or_nothing(f"restoring version {version}") as step:
            t.checkout_latest()
            step(f"restoring version {version}")
            t.restore(version)
            new = int(t.version)
            step(f"recording the restore in the '{LOG_TABLE}' table")
            self._log("restore", new, restored=version)
            step("checking the full-text index")
            if not _fts_works(t):
                # that version's index files are gone or damaged: the rows are what count
                step("rebuilding the full-text index")
                self._rebuild_indexes(t)
            self._ensure_fts(t)
        return self.version

    # ------------------------------------------------------------------ reading

    def sources(self) -> list[str]:
        """Sorted sources currently stored."""
        return sorted(self._stored_hashes())

    def chunks(self, source: str | None = None) -> list[Hit]:
        """Stored chunks (score 0), in source then document order."""
        t = self._tbl()
        if t is None:
            return []
        q = t.search().select(_RESULT_COLUMNS).limit(None)
        if source is not None:
            q = q.where(f"source = '{validate_acl_name(source, 'source').replace(chr(39), chr(39) * 2)}'")
        with self._reading("reading chunks", value_errors=True):
            rows = q.to_arrow().to_pylist()
        rows.sort(key=lambda r: (r["source"], r["ordinal"]))
        return [_hit(r, score=0.0, scores={}, rank=i) for i, r in enumerate(rows, start=1)]

    def search(
        self,
        query: str,
        k: int = 10,
        mode: Literal["vector", "fts", "hybrid"] | str = "hybrid",
        user: User | None = None,
        where: str | None = None,
    ) -> Hits:
        """The ``k`` best chunks ``user`` may read (anonymous: public only).

        The ACL is a LanceDB prefilter, so unreadable chunks never leave the
        store; ``where`` (SQL over the chunk columns, e.g. ``"source = 'a.md'"``)
        is ANDed with it."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("search query must be a non-blank string")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InputError(f"k must be an int between 1 and {MAX_K}, got {k!r}")
        if mode not in MODES:
            raise InputError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if user is not None and not isinstance(user, User):
            raise InputTypeError(f"user must be a selfrag_nb.User or None, got {type(user).__name__}")
        flt = combine_filters(access_filter(user), where)
        t = self._tbl()
        hits: list[Hit] = []
        if t is not None:
            hits = self._query(t, query, k, mode, flt, where=where)
        return Hits(hits=hits, query=query, mode=mode, k=k, access_filter=flt, user=user)

    def _query(self, t: Any, query: str, k: int, mode: str, flt: str, *, where: str | None) -> list[Hit]:
        """Run one mode. Hybrid runs the two legs itself (each with its score column
        named, which keeps Lance's projection warnings away) and fuses them with
        LanceDB's RRFReranker, then puts each leg's own score back on every hit."""
        vec = self._embedder.embed([query])[0] if mode != "fts" else None
        vec_rows = fts_rows = None
        try:
            if vec is not None:
                vec_rows = self._leg_vector(t, vec, k, flt)
            if mode != "vector":
                fts_rows = self._leg_fts(t, query, k, flt)
        except KnowledgeBaseError:
            raise
        except Exception as exc:
            raise self._search_failure(t, f"a {mode} search", flt, where, exc) from exc
        if mode == "vector":
            assert vec_rows is not None
            fused = vec_rows
        elif mode == "fts":
            assert fts_rows is not None
            fused = fts_rows
        else:
            assert vec_rows is not None
            assert fts_rows is not None
            if vec_rows.num_rows == 0 and fts_rows.num_rows == 0:
                return []
            from lancedb.rerankers import RRFReranker

            fused = RRFReranker(return_score="relevance").rerank_hybrid(query, vec_rows, fts_rows).slice(0, k)
        distance = _by_rowid(vec_rows, "_distance")
        bm25 = _by_rowid(fts_rows, "_score")
        hits = []
        for rank, r in enumerate(fused.to_pylist(), start=1):
            scores: dict[str, float] = {}
            rid = r["_rowid"]
            if rid in distance:
                scores["vector_distance"] = distance[rid]
                scores["vector"] = 1.0 - distance[rid]
            if rid in bm25:
                scores["fts"] = bm25[rid]
            if r.get("_relevance_score") is not None:
                scores["hybrid"] = float(r["_relevance_score"])
            hits.append(_hit(r, score=scores.get(mode, 0.0), scores=scores, rank=rank))
        return hits

    @staticmethod
    def _leg_vector(t: Any, vec: Any, k: int, flt: str) -> pa.Table:
        q = t.search(vec, query_type="vector", vector_column_name="vector").distance_type("cosine")
        return (
            q.where(flt, prefilter=True)
            .select([*_RESULT_COLUMNS, "_distance"])
            .with_row_id(True)
            .limit(k)
            .to_arrow()
        )

    def _search_failure(self, t: Any, doing: str, flt: str, where: str | None, exc: Exception) -> Exception:
        """Name what made a search fail. LanceDB raises the same ValueError or
        RuntimeError for a bad filter, a damaged data file and a damaged index,
        so each suspect is tried on its own: the filter is planned without
        reading data, then every row is read without an index."""
        try:
            t.search().where(flt, prefilter=True).select(["chunk_id"]).limit(1).explain_plan()
        except Exception as bad:  # noqa: BLE001 - planning fails with ValueError, RuntimeError or a Rust panic
            if where is not None:
                return ValueError(
                    f"search failed: where {where!r} is not a valid condition on the chunk columns ({_cause(bad)})"
                )
            return ValueError(f"search failed for filter {flt!r}: {_cause(bad)}")
        try:
            for _ in t.search().limit(None).to_batches():
                pass
        except Exception as bad:  # noqa: BLE001 - any failure to read the rows is damage in the data
            return _damaged(self._uri, doing, bad)
        return _index_damaged(self._uri, doing, exc)

    @staticmethod
    def _leg_fts(t: Any, query: str, k: int, flt: str) -> pa.Table:
        from lancedb.query import FullTextOperator, MatchQuery

        # A MatchQuery is never parsed: quotes, AND/OR/NOT, field:value, ~, ^ and
        # parentheses in a question are words to the ICU tokenizer, not syntax
        # (a plain string goes through tantivy's query parser, where '"' starts a
        # phrase query that this index, built without positions, cannot answer).
        # exact words (no fuzziness), any of them: the ranking a plain question had
        match = MatchQuery(
            query,
            "search_text",
            boost=1.0,
            fuzziness=0,
            max_expansions=50,
            operator=FullTextOperator.OR,
            prefix_length=0,
            document_granularity=None,
        )
        q = t.search(match, query_type="fts")
        return (
            q.where(flt, prefilter=True)
            .select([*_RESULT_COLUMNS, "_score"])
            .with_row_id(True)
            .limit(k)
            .to_arrow()
        )


def _create_fts(t: Any) -> None:
    from lancedb.index import FTS

    t.create_index(
        "search_text",
        config=FTS(base_tokenizer="icu", stem=False, remove_stop_words=False, ascii_folding=True),
        replace=True,
    )


def _index_config(kind: str) -> Any:
    """A fresh config for an index LanceDB lists as ``kind`` (its default
    parameters; vector indexes with the cosine distance this class searches by)."""
    from lancedb import index

    scalar = {"BTree": index.BTree, "Bitmap": index.Bitmap, "LabelList": index.LabelList}
    vector = {
        "IvfPq": index.IvfPq,
        "IvfFlat": index.IvfFlat,
        "IvfSq": index.IvfSq,
        "IvfRq": index.IvfRq,
        "IvfHnswPq": index.HnswPq,
        "IvfHnswSq": index.HnswSq,
        "IvfHnswFlat": index.HnswFlat,
    }
    if kind in scalar:
        return scalar[kind]()
    if kind in vector:
        return vector[kind](distance_type="cosine")
    raise KnowledgeBaseError(
        f"kb.reindex() does not know how to rebuild a {kind!r} index; drop it (table.drop_index) "
        "and create it again by hand"
    )


def _fts_works(t: Any) -> bool:
    """Whether the full-text index answers a query (False: missing or damaged)."""
    if not any(i.index_type == "FTS" for i in t.list_indices()):
        return False
    try:
        KnowledgeBase._leg_fts(t, "index probe", 1, "true")
    except Exception:  # noqa: BLE001 - any failure here is the index's (the caller just wrote the rows)
        return False
    return True


def _fix_for(step: str) -> str:
    """What to do after a write that failed at ``step`` was undone."""
    if LOG_TABLE in step or "index" in step:
        return "Run kb.reindex() to rebuild the indexes and repair the ingest log, then retry."
    return (
        "If the chunk data is damaged, restore an earlier version (kb.versions(), kb.restore(n)) "
        "or rebuild the knowledge base in a new folder; then retry."
    )


def _by_rowid(table: pa.Table | None, column: str) -> dict[int, float]:
    if table is None or table.num_rows == 0:
        return {}
    return dict(zip(table["_rowid"].to_pylist(), map(float, table[column].to_pylist()), strict=True))


# ---------------------------------------------------------------------- helpers


def _hit(r: dict[str, Any], *, score: float, scores: dict[str, float], rank: int) -> Hit:
    return Hit(
        source=r["source"],
        doc_id=r["doc_id"],
        chunk_id=r["chunk_id"],
        title=r["title"] or "",
        heading=r["heading"] or "",
        text=r["text"],
        context=r["context"] or "",
        score=score,
        scores=scores,
        rank=rank,
        metadata=json.loads(r["metadata"]) if r.get("metadata") else {},
    )


@contextlib.contextmanager
def _progress_reporter(progress: Progress | bool | None) -> Iterator[Progress]:
    """A ``(done, total, message)`` callback: the caller's, a rich bar, or a no-op."""
    if progress is None or progress is False:
        yield lambda done, total, message: None
        return
    if callable(progress):
        yield progress
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=False,
    ) as bar:
        task = bar.add_task("ingest", total=None)

        def update(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, description=message)

        yield update
