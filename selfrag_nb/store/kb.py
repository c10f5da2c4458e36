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
      fts     LanceDB full-text index (ICU tokenizer: English words + Chinese words)
      hybrid  both, fused by LanceDB's RRFReranker
      -> Hits (Hit.text = original chunk text; Hit.context = title > heading path)

Why one merge_insert per ingest: the embeddings are computed before the table is
touched, and the single transaction either lands (a new table version) or does
not, so a failed ingest (embedder error, crash) never leaves a source half
replaced. Why a file lock as well: concurrent merge_inserts on the same keys
can both insert (lance#4585), so writers take turns and re-read the stored
hashes inside the lock.

Damage (a deleted or truncated data, index or manifest file, a table folder
that is not a table, unreadable metadata) surfaces as a KnowledgeBaseError
naming the knowledge base, at open or at the first read that touches it:
open() does not read every data file, which would cost a full scan.

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

from selfrag_nb.store.acl import access_filter, combine_filters, validate_acl_name
from selfrag_nb.store.chunking import DEFAULT_MAX_CHARS, context_header, iter_chunks
from selfrag_nb.store.types import PUBLIC_ROLE, Hit, Hits, IngestReport, User

if TYPE_CHECKING:
    import pyarrow as pa

    from selfrag_nb.store.embedders import Embedder
    from selfrag_nb.store.loaders import Document

__all__ = ["KnowledgeBase", "KnowledgeBaseError"]

TABLE = "chunks"
LOG_TABLE = "ingest_log"
LOCK_FILE = ".selfrag_nb.lock"
#: The first write builds the table here, then renames it into place.
STAGING_PREFIX = f".{TABLE}.staging-"
META_KEY = b"selfrag_nb"
FORMAT = 1
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


class KnowledgeBaseError(RuntimeError):
    """The folder is not a usable knowledge base (foreign, damaged, wrong embedder)."""


def _cause(exc: BaseException) -> str:
    """LanceDB's message without the Rust source location it appends."""
    return re.sub(r",\s*/\S+\.rs:\d+:\d+", "", str(exc)).strip()


def _damaged(uri: str, doing: str, exc: BaseException) -> KnowledgeBaseError:
    return KnowledgeBaseError(
        f"knowledge base {uri} is damaged: {doing} failed, a file is missing or truncated ({_cause(exc)}). "
        "Restore an earlier version (kb.versions(), kb.restore(n)) if its files are intact, "
        "or rebuild it in a new folder."
    )


def _sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\x1f")
    return h.hexdigest()


def _sql_in(column: str, values: list[str]) -> str:
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def _resolve_uri(path: str | os.PathLike[str]) -> tuple[str, Path | None]:
    """(uri for lancedb, local folder or None for object stores)."""
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"knowledge base path must be a non-blank path or URI, got {path!r}")
    if "://" in text:
        parsed = urlparse(text)
        if parsed.scheme == "file":
            if parsed.netloc not in ("", "localhost"):
                raise ValueError(f"file:// URI must name a local path, got host {parsed.netloc!r}")
            local = Path(unquote(parsed.path))
            return str(local), local
        return text, None
    local = Path(text).expanduser()
    return str(local), local


def _cache_root() -> Path:
    env = os.environ.get("SELFRAG_NB_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "selfrag_nb"


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
                    raise FileNotFoundError(f"no knowledge base at {local} (pass create=True to make one)")
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
            raise FileNotFoundError(f"no knowledge base at {local} (pass create=True to make one)")

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
            raise ValueError(f"max_chars must be at least 50, got {max_chars}")
        return cls(uri=uri, local_dir=local, db=db, table=table, embedder=emb, max_chars=max_chars)

    @classmethod
    def sample(
        cls, embedder: str = "minilm", *, docs: str | os.PathLike[str] | None = None, rebuild: bool = False
    ) -> KnowledgeBase:
        """The bundled bilingual sample knowledge base, built once and cached.

        Cached under ``$SELFRAG_NB_CACHE`` (default ``~/.cache/selfrag_nb``) in a
        folder keyed by a hash of the documents and the embedder name, so editing
        sample_data rebuilds it. ``docs`` points at another folder (tests)."""
        import selfrag_nb

        folder = (
            Path(docs) if docs is not None else Path(selfrag_nb.__file__).parents[1] / "sample_data" / "docs"
        )
        if not folder.is_dir():
            raise FileNotFoundError(f"sample documents not found at {folder}")
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
                kb = cls.open(tmp, embedder=embedder)
                try:
                    kb.ingest(folder)
                finally:
                    kb.close()
                (tmp / "READY").write_text(datetime.now(timezone.utc).isoformat())
                if target.exists():
                    shutil.rmtree(target)
                tmp.rename(target)
        return cls.open(target, embedder=embedder, create=False)

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
                ("vector", pa.list_(pa.float32(), self._embedder.dim)),
            ],
            metadata={META_KEY: json.dumps(meta).encode()},
        )

    def _stored_hashes(self) -> dict[str, str]:
        t = self._tbl()
        if t is None:
            return {}
        with self._reading("reading the stored sources", value_errors=True):
            t.checkout_latest()
            data = t.search().select(["source", "content_hash"]).limit(None).to_arrow()
        return dict(zip(data["source"].to_pylist(), data["content_hash"].to_pylist(), strict=True))

    def _ensure_fts(self, t: Any) -> None:
        from lancedb.index import FTS

        fts = [i for i in t.list_indices() if i.index_type == "FTS"]
        if not fts:
            t.create_index(
                "search_text",
                config=FTS(base_tokenizer="icu", stem=False, remove_stop_words=False, ascii_folding=True),
            )
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

    # ------------------------------------------------------------------ ingest

    def ingest(
        self,
        path: str | os.PathLike[str],
        acl: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        progress: Progress | bool | None = None,
        *,
        prune: bool = False,
    ) -> IngestReport:
        """Add a file or folder (walked recursively). Unchanged sources are left
        alone, changed ones replaced; ``prune=True`` also removes stored sources
        that are no longer in the folder.

        ``acl={"roles": [...], "users": [...], "tenant": "..."}`` overrides each
        document's own ACL; ``metadata`` is merged into every chunk's metadata.
        ``progress`` is a callable ``(done, total, message)`` or True for a bar."""
        from selfrag_nb.store.loaders import load_tree

        started = time.perf_counter()
        override = _check_acl(acl)
        if metadata is not None and not isinstance(metadata, dict):
            raise TypeError(f"metadata must be a dict, got {type(metadata).__name__}")
        extra = dict(metadata or {})
        try:
            json.dumps(extra)
        except TypeError as exc:
            raise ValueError(f"metadata must be JSON-serialisable: {exc}") from exc

        with _progress_reporter(progress) as report:
            docs, skipped = load_tree(path)
            prepared = [_prepare(d, override, extra, self._max_chars) for d in docs]
            snapshot = self._stored_hashes()
            todo = [p for p in prepared if snapshot.get(p.source) != p.content_hash]
            rows = self._embed_rows(todo, report)

            with self._write_lock():
                fresh = self._stored_hashes()
                added: list[str] = []
                updated: list[str] = []
                unchanged: list[str] = []
                new_rows: list[pa.Table] = []
                for p in prepared:
                    old = fresh.get(p.source)
                    if old == p.content_hash:
                        unchanged.append(p.source)
                        continue
                    if p.source not in rows:  # another writer changed it after our snapshot
                        rows.update(self._embed_rows([p], None))
                    (updated if old is not None else added).append(p.source)
                    new_rows.append(rows[p.source])
                loaded = {p.source for p in prepared}
                removed = sorted(s for s in fresh if s not in loaded) if prune else []
                version, n_add, n_del = self._write(new_rows, updated + removed)
                t = self._tbl()
                if t is not None and (new_rows or removed):
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

    def _embed_rows(self, todo: list[_Prepared], report: Progress | None) -> dict[str, pa.Table]:
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
        Returns the number of chunks removed; an unknown source is a KeyError."""
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"source must be a non-blank string, got {source!r}")
        with self._write_lock():
            stored = self._stored_hashes()
            targets = sorted(s for s in stored if s == source or s.startswith(source + "#"))
            if not targets:
                known = ", ".join(sorted(stored)[:5]) or "none"
                raise KeyError(f"no source {source!r} in {self._uri} (e.g. {known})")
            version, _, removed = self._write([], targets)
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
        with self._reading(f"reading the '{LOG_TABLE}' table", value_errors=True):
            if LOG_TABLE in set(self._db.list_tables().tables):
                for r in self._db.open_table(LOG_TABLE).to_arrow().to_pylist():
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
            raise TypeError(f"version must be an int, got {version!r}")
        known = [int(v["version"]) for v in t.list_versions()]
        if version not in known:
            raise ValueError(f"no version {version} in {self._uri}; versions are {known[0]}..{known[-1]}")
        with self._write_lock():
            t.checkout_latest()
            t.restore(version)
            new = int(t.version)
            self._log("restore", new, restored=version)
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
            raise ValueError("search query must be a non-blank string")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an int between 1 and {MAX_K}, got {k!r}")
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if user is not None and not isinstance(user, User):
            raise TypeError(f"user must be a selfrag_nb.User or None, got {type(user).__name__}")
        flt = combine_filters(access_filter(user), where)
        t = self._tbl()
        hits: list[Hit] = []
        if t is not None:
            hits = self._query(t, query, k, mode, flt)
        return Hits(hits=hits, query=query, mode=mode, k=k, access_filter=flt, user=user)

    def _query(self, t: Any, query: str, k: int, mode: str, flt: str) -> list[Hit]:
        """Run one mode. Hybrid runs the two legs itself (each with its score column
        named, which keeps Lance's projection warnings away) and fuses them with
        LanceDB's RRFReranker, then puts each leg's own score back on every hit."""
        vec = self._embedder.embed([query])[0] if mode != "fts" else None
        try:
            with self._reading(f"a {mode} search"):
                vec_rows = self._leg_vector(t, vec, k, flt) if vec is not None else None
                fts_rows = self._leg_fts(t, query, k, flt) if mode != "vector" else None
        except KnowledgeBaseError:
            raise
        except Exception as exc:
            raise ValueError(f"search failed for filter {flt!r}: {exc}") from exc
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

    @staticmethod
    def _leg_fts(t: Any, query: str, k: int, flt: str) -> pa.Table:
        q = t.search(query, query_type="fts", fts_columns="search_text")
        return (
            q.where(flt, prefilter=True)
            .select([*_RESULT_COLUMNS, "_score"])
            .with_row_id(True)
            .limit(k)
            .to_arrow()
        )


def _by_rowid(table: pa.Table | None, column: str) -> dict[int, float]:
    if table is None or table.num_rows == 0:
        return {}
    return dict(zip(table["_rowid"].to_pylist(), map(float, table[column].to_pylist()), strict=True))


# ---------------------------------------------------------------------- helpers


class _Prepared:
    """A Document's content hash and its chunk rows (without vectors).

    ``rows()`` chunks the document anew on each call, one row at a time:
    unchanged sources are never chunked, and a big one never sits in memory
    as a list of row dicts (store/batches.py turns them into Arrow as they come)."""

    __slots__ = ("content_hash", "rows", "size", "source")

    def __init__(
        self, source: str, content_hash: str, rows: Callable[[], Iterator[dict[str, Any]]], size: int
    ) -> None:
        self.source = source
        self.content_hash = content_hash
        self.rows = rows
        self.size = size  # characters of text: what embedding progress counts


def _check_acl(acl: dict[str, Any] | None) -> dict[str, Any]:
    if acl is None:
        return {}
    if not isinstance(acl, dict):
        raise TypeError(f"acl must be a dict with roles/users/tenant, got {type(acl).__name__}")
    unknown = set(acl) - {"roles", "users", "tenant"}
    if unknown:
        raise ValueError(f"acl accepts only 'roles', 'users', 'tenant'; got {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key in ("roles", "users"):
        if key in acl:
            vals = [acl[key]] if isinstance(acl[key], str) else list(acl[key])
            out[key] = tuple(validate_acl_name(v, f"acl {key[:-1]}") for v in vals)
    if "tenant" in acl:
        out["tenant"] = "" if acl["tenant"] in (None, "") else validate_acl_name(acl["tenant"], "acl tenant")
    return out


def _prepare(doc: Document, override: dict[str, Any], extra: dict[str, Any], max_chars: int) -> _Prepared:
    from selfrag_nb.text import detect_language

    roles = override.get("roles", doc.roles if doc.roles is not None else (PUBLIC_ROLE,))
    users = override.get("users", doc.users if doc.users is not None else ())
    tenant = override.get("tenant", doc.tenant or "")
    for r in (*roles, *users):
        validate_acl_name(r, f"ACL name in {doc.source}")
    meta = {**doc.metadata, **extra}
    meta_json = json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str)
    # the hash covers what ends up stored, so a new ACL or metadata re-writes the source
    content_hash = _sha(
        doc.raw_hash,
        json.dumps([sorted(roles), sorted(users), tenant]),
        meta_json,
        str(max_chars),
        str(FORMAT),
    )
    doc_id = _sha("doc", doc.source)[:16]

    def rows() -> Iterator[dict[str, Any]]:
        # the repeat count of each text keeps chunk ids unique; hashed, so a
        # big file's texts are not all kept alive here as dict keys
        seen: dict[str, int] = {}
        for c in iter_chunks(doc.text, headings=doc.has_headings, max_chars=max_chars):
            text_key = hashlib.sha256(c.text.encode()).hexdigest()
            n = seen.get(text_key, 0)
            seen[text_key] = n + 1
            context = context_header(doc.title, c.heading)
            yield {
                "chunk_id": _sha("chunk", doc.source, c.text, str(n))[:24],
                "doc_id": doc_id,
                "source": doc.source,
                "title": doc.title,
                "heading": c.heading,
                "text": c.text,
                "context": context,
                "search_text": f"{context}\n{c.text}" if context else c.text,
                "ordinal": c.ordinal,
                "content_hash": content_hash,
                "acl_roles": list(roles),
                "acl_users": list(users),
                "tenant": tenant,
                "lang": detect_language(c.text),
                "metadata": meta_json,
            }

    return _Prepared(doc.source, content_hash, rows, len(doc.text))


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
