"""What every part of the KnowledgeBase shares: the table handle, damage
handling, the write lock, the schema and the stored hashes.

    kb.py KnowledgeBase(Writes, Search)      open(), sample()
      writes.py Writes(Core)                 ingest, remove, restore, versions, reindex
      search.py Search(Core)                 search, chunks, sources
        kb_core.py Core                      _tbl, _reading (LanceDB errors -> KnowledgeBaseError),
                                             _write_lock, _schema, _stored, content_id, index helpers
                                             (_recover_indexes: what a killed ingest left out;
                                             a commit that lost to another writer's looks again)
        vindex.py                            the vector index: build / refresh / retrain, ANN leg
        register_secrets / scrub / _cause    storage_options secret values never reach a message

The flow of each operation is drawn in kb.py's docstring.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from selfrag_nb.errors import KnowledgeBaseError
from selfrag_nb.store.prepare import FORMAT
from selfrag_nb.store.types import IndexPolicy
from selfrag_nb.text import american, tokenize

if TYPE_CHECKING:
    import pyarrow as pa

    from selfrag_nb.store.embedders import Embedder


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
#: Seconds a table listed on object storage may have no version yet (another
#: writer's first ingest between its data files and its manifest) before it
#: counts as damaged.
_CREATE_IN_FLIGHT_S = 10.0
#: optimize() must never delete old versions: they are what restore() needs.
_KEEP_VERSIONS = timedelta(days=365 * 100)
_EMBED_BATCH = 64

__all__ = ["Core"]

_log = logging.getLogger(__name__)

_Self = TypeVar("_Self", bound="Core")

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


#: Option keys whose values are secrets: never shown in a message, repr or log.
_SECRET_WORDS = ("key", "secret", "token", "password", "credential", "sas")
#: Secret values of every storage_options this process opened with (scrubbed by _cause).
_SECRETS: set[str] = set()


def is_secret_option(key: str) -> bool:
    return any(w in key.lower() for w in _SECRET_WORDS)


#: A URL password or parameter value shorter than this is not replaced on its
#: own (it would blank ordinary words); inside its URL scrub_urls still hides it.
_MIN_URL_SECRET = 4


def register_secrets(options: dict[str, str] | None) -> None:
    """Remember the secret values of ``options`` so that messages never show
    them: values of secret-named options, and the password and secret query
    parameters of any option that is a URL (``aws_endpoint``:
    ``http://key:SECRET@host``), since LanceDB quotes URLs in its errors."""
    from selfrag_nb.llm.redact import url_secrets

    for key, value in (options or {}).items():
        if not value:
            continue
        if is_secret_option(key):
            _SECRETS.add(value)
        _SECRETS.update(s for s in url_secrets(value) if len(s) >= _MIN_URL_SECRET)


def scrub(text: str) -> str:
    """``text`` with every registered secret value replaced by ***, and every
    URL in it shown with its password and secret parameters as *** (the one
    URL scrubber, selfrag_nb.llm.redact.scrub_urls)."""
    from selfrag_nb.llm.redact import scrub_urls

    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "***")
    return scrub_urls(text)


def _cause(exc: BaseException) -> str:
    """LanceDB's message without the Rust source location it appends, secrets scrubbed."""
    return scrub(re.sub(r",\s*/\S+\.rs:\d+:\d+", "", str(exc)).strip())


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


#: What Lance says when another writer's commit landed first (no lock on object storage).
_CONFLICT = re.compile(r"commit conflict|incompatible transaction|concurrent transaction", re.IGNORECASE)


def _is_commit_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is Lance refusing a commit because another writer's landed first."""
    return bool(_CONFLICT.search(str(exc)))


def _fts_works(t: Any) -> bool:
    """Whether the full-text index answers a query (False: missing or damaged)."""
    if not any(i.index_type == "FTS" for i in t.list_indices()):
        return False
    try:
        Core._leg_fts(t, "index probe", 1, "true")
    except Exception:  # noqa: BLE001 - any failure here is the index's (the caller just wrote the rows)
        return False
    return True


_T = TypeVar("_T")


def _retry_on_conflict(t: Any, build: Callable[[], _T]) -> _T:
    """``build()`` (an index build or refresh), run again on the latest version
    when another writer's commit landed first. On object storage nothing keeps
    two writers apart, and two first ingests both build the full-text index;
    each build looks at the indexes again, so the second finds the first's
    and has nothing left to do. A local folder's lock makes this a no-op."""
    for _ in range(2):
        try:
            return build()
        except Exception as exc:
            if not _is_commit_conflict(exc):
                raise
            t.checkout_latest()
    return build()  # the third try: its failure is the caller's


class Core:
    """The state and internals of one open knowledge base (see KnowledgeBase)."""

    def __init__(
        self,
        *,
        uri: str,
        local_dir: Path | None,
        db: Any,
        table: Any,
        embedder: Embedder,
        max_chars: int,
        index_policy: IndexPolicy | None = None,
        default_access: str = "public",
    ) -> None:
        self._uri = uri
        #: what a document that declares no access gets (store/acl.py effective_acl)
        self._default_access = default_access
        self._local_dir = local_dir
        self._db = db
        self._table = table
        self._embedder = embedder
        self._max_chars = max_chars
        self._index_policy = index_policy if index_policy is not None else IndexPolicy()
        #: (table version, whether it has a vector index): looked up once per version
        self._indexed_at: tuple[int, bool] | None = None
        self._closed = False
        #: what open() was given: the Ray engines hand it to workers (never shown)
        self._storage_options: dict[str, str] | None = None

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
    def index_policy(self) -> IndexPolicy:
        """When the vector index is built and refreshed, and the default search knobs."""
        return self._index_policy

    @property
    def default_access(self) -> str:
        """ "public" or "private": what a document that declares no access gets
        (stored with a new knowledge base; see docs/access-control.md)."""
        return self._default_access

    @property
    def version(self) -> int:
        """The current LanceDB table version (0 before the first ingest)."""
        t = self._tbl()
        return 0 if t is None else int(t.version)

    @property
    def content_id(self) -> str:
        """Which rows this handle reads: ``"<version>-<16 hex>"``, the version plus
        a digest of when that version was committed and when the table was
        created ("0-empty" before the first ingest).

        The version number alone repeats: a knowledge base deleted and rebuilt
        at the same path reaches version 3 again with other rows and other
        ACLs. The commit timestamps (microseconds, written by Lance into each
        version's manifest) do not repeat, while a byte-for-byte copy of the
        folder (a backup brought back) keeps them, rightly: its rows are the
        same. Caches of anything computed from the rows key on this."""
        import hashlib

        t = self._tbl()
        if t is None:
            return "0-empty"
        version = int(t.version)
        with self._reading("listing versions", value_errors=True):
            listed = t.list_versions()
        stamps = {int(v["version"]): str(v["timestamp"]) for v in listed}
        created = stamps[min(stamps)] if stamps else ""
        blob = f"{created}|{version}|{stamps.get(version, '')}"
        return f"{version}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    def __len__(self) -> int:
        t = self._tbl()
        return 0 if t is None else int(t.count_rows())

    def __repr__(self) -> str:
        # scrub: a URI may carry a password or a signed query (shown as ***)
        return f"KnowledgeBase({scrub(self._uri)!r}, embedder={self.embedder_name!r}, chunks={len(self)}, version={self.version})"

    def describe(self) -> dict[str, Any]:
        """Plain facts: path, embedder, dimension, chunk/source counts, version,
        indexes, and the vector index (type, rows trained on, rows not yet in it)."""
        from selfrag_nb.store import vindex

        t = self._tbl()
        indexes = [] if t is None else [f"{i.index_type}({', '.join(i.columns)})" for i in t.list_indices()]
        return {
            "path": self._uri,
            "embedder": self.embedder_name,
            "dim": self._embedder.dim,
            "chunks": len(self),
            "sources": len(self._stored_hashes()),
            "version": self.version,
            "max_chars": self._max_chars,
            "default_access": self._default_access,
            "indexes": indexes,
            "vector_index": None if t is None else vindex.describe(t),
        }

    def close(self) -> None:
        """Drop the table handles (the data stays on disk)."""
        self._table = None
        self._db = None
        self._closed = True

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tbl(self) -> Any:
        if self._closed:
            raise KnowledgeBaseError(f"knowledge base {self._uri} is closed")
        if self._table is None and TABLE in set(self._db.list_tables().tables):
            with self._reading(f"opening the '{TABLE}' table", value_errors=True):
                self._table = self._open_table()
        return self._table

    def _open_table(self) -> Any:
        """``open_table``, waiting on object storage for a create in flight.

        There a table is listed as soon as another writer's first ingest has
        written its data files, and has no version until that writer's
        manifest lands a moment later (measured against moto: two first
        ingests started together hit it about one run in ten, and the one in
        between was told the table was damaged). A table with no version is
        waited for up to ``_CREATE_IN_FLIGHT_S``; one that stays so is damaged."""
        deadline = time.monotonic() + (_CREATE_IN_FLIGHT_S if self._local_dir is None else 0.0)
        while True:
            try:
                return self._db.open_table(TABLE)
            except Exception as exc:
                if time.monotonic() >= deadline or "not found" not in str(exc).lower():
                    raise
            time.sleep(0.1)

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
            # protocol is all that serialises writers there, and it lets two
            # merge_inserts of the same new chunks both land: ingest checks
            # for that afterwards (Writes._check_no_race).
            yield
            return
        from filelock import FileLock

        with FileLock(str(self._local_dir / LOCK_FILE), timeout=600):
            yield

    def _schema(self) -> pa.Schema:
        import pyarrow as pa

        from selfrag_nb.store.embedders import embedder_scheme

        meta = {"embedder": self._embedder.name, "dim": self._embedder.dim, "format": FORMAT}
        # how questions differ from passages: KnowledgeBase.open refuses another scheme
        meta["scheme"] = embedder_scheme(self._embedder)
        meta["max_chars"] = self._max_chars
        # Stored so every later handle that does not name one keeps it.
        meta["default_access"] = self._default_access
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
        def once() -> None:
            fts = [i for i in t.list_indices() if i.index_type == "FTS"]
            if not fts:
                _create_fts(t)
                return
            if int(fts[0].num_unindexed_rows or 0) > UNINDEXED_LIMIT:
                t.optimize(cleanup_older_than=_KEEP_VERSIONS)

        _retry_on_conflict(t, once)

    def _ensure_vector_index(self, t: Any) -> list[str]:
        from selfrag_nb.store import vindex

        return _retry_on_conflict(t, lambda: vindex.refresh(t, self._index_policy, self._embedder.dim))

    def _has_vector_index(self, t: Any) -> bool:
        from selfrag_nb.store import vindex

        version = int(t.version)
        if self._indexed_at is None or self._indexed_at[0] != version:
            self._indexed_at = (version, vindex.vector_index(t) is not None)
            if not self._indexed_at[1]:
                self._warn_if_index_missing(t)
        return self._indexed_at[1]

    def _warn_if_index_missing(self, t: Any) -> None:
        """Searching stays read-only: a table past ``min_rows`` without its
        vector index (an index build killed after the rows were committed) is
        searched exactly, which is correct but slow, and the log says which
        call builds the index. Once per table version (the row count is
        manifest metadata: no data file is read)."""
        rows = int(t.count_rows())
        if rows >= self._index_policy.min_rows:
            _log.warning(
                "knowledge base %s has %d chunks but no vector index (index_policy.min_rows is %d; "
                "was an index build interrupted?): searches are exact and slower until kb.reindex(), "
                "kb.optimize() or the next kb.ingest() builds it",
                scrub(self._uri),
                rows,
                self._index_policy.min_rows,
            )

    def _recover_indexes(self) -> list[str]:
        """Build the indexes the rows should have and do not; returns what was done.

        An ingest commits its rows first and builds the indexes after: a
        process killed in between (SIGKILL, OOM, a pod evicted) never runs the
        undo, so the rows stay without the full-text index or the vector index
        ``index_policy`` asks for, and an ingest with nothing new to write never
        reaches the index refresh. Ingest calls this after its write, so a
        re-run of the killed ingest builds them. Cheap when nothing is missing
        (the index list and the row count). Callers hold the write lock."""
        from selfrag_nb.store import vindex

        t = self._tbl()
        if t is None:
            return []
        done: list[str] = []

        def once() -> None:
            if int(t.count_rows()) and not any(i.index_type == "FTS" for i in t.list_indices()):
                _create_fts(t)
                done.append("built the missing full-text index on search_text")
            done.extend(vindex.refresh(t, self._index_policy, self._embedder.dim))

        try:
            t.checkout_latest()
            _retry_on_conflict(t, once)
        except KnowledgeBaseError:
            raise
        except Exception as exc:
            raise KnowledgeBaseError(
                f"knowledge base {self._uri}: building a missing index failed ({_cause(exc)}); the chunk data "
                "is intact and searches still work (exact, slower). Run kb.reindex() to rebuild every index."
            ) from exc
        if done:
            _log.warning("knowledge base %s: %s", scrub(self._uri), "; ".join(done))
        return done

    def _leg_vector(
        self, t: Any, vec: Any, k: int, flt: str, knobs: Any, *, columns: list[str] = _RESULT_COLUMNS
    ) -> pa.Table:
        """Nearest chunks under ``flt``; ``columns`` (search adds the ACL
        columns its second lock reads) plus ``_distance``."""
        from selfrag_nb.store import vindex

        knobs = knobs if knobs is not None and self._has_vector_index(t) else None
        return _settle_ties(
            lambda n: vindex.ann_vector(t, vec, n, flt, columns=[*columns, "_distance"], knobs=knobs),
            k,
            "_distance",
            high_first=False,
        )

    @staticmethod
    def _leg_fts(t: Any, query: str, k: int, flt: str, *, columns: list[str] = _RESULT_COLUMNS) -> pa.Table:
        """Best full-text matches under ``flt``: ``columns`` plus ``_score``."""
        from lancedb.query import FullTextOperator, MatchQuery

        # A MatchQuery is never parsed: quotes, AND/OR/NOT, field:value, ~, ^ and
        # parentheses in a question are words to the ICU tokenizer, not syntax
        # (a plain string goes through tantivy's query parser, where '"' starts a
        # phrase query that this index, built without positions, cannot answer).
        # exact words (no fuzziness), any of them: the ranking a plain question had
        match = MatchQuery(
            _with_spellings(query),
            "search_text",
            boost=1.0,
            fuzziness=0,
            max_expansions=50,
            operator=FullTextOperator.OR,
            prefix_length=0,
            document_granularity=None,
        )
        q = t.search(match, query_type="fts").where(flt, prefilter=True).select([*columns, "_score"])
        return _settle_ties(lambda n: q.with_row_id(True).limit(n).to_arrow(), k, "_score", high_first=True)


def _with_spellings(query: str) -> str:
    """``query`` plus the other ways its words are written, any of which may
    match (the index holds each document's own): the American spelling of a
    British word ("Which licence ...?" finds "license"), and a name written
    apart joined ("RFC 3339" finds "RFC3339", "Sorted Containers"
    "sortedcontainers"): two words in a row, each capitalised or a number."""
    said = tokenize(query)
    extra = [american(w) for w in said if w.isascii() and w.isalpha()]
    extra += [f"{a}{b}".lower() for a, b in _NAME_PAIR_RE.findall(query)]
    extra = [w for w in dict.fromkeys(extra) if w not in said]
    return f"{query} {' '.join(extra)}" if extra else query


#: Two words of a name in a row, each capitalised ("Sorted", "RFC") or a
#: number ("3339"); a lookahead, so "RFC 3339 Validator" gives both pairs.
_NAME_PAIR_RE = re.compile(r"(?=\b([A-Z][A-Za-z0-9]*|[0-9]+)\s+([A-Z][A-Za-z0-9]*|[0-9]+)\b)")


#: Rows past ``k`` one leg may read to find every row tied with its k-th
#: (identical boilerplate can tie by the thousand; past this the cut is LanceDB's).
_TIE_READ = 256


def _settle_ties(fetch: Callable[[int], pa.Table], k: int, column: str, *, high_first: bool) -> pa.Table:
    """The best ``k`` rows of one leg, equal scores in ``chunk_id`` order.

    LanceDB returns rows of equal score (two chunks of one boilerplate text,
    two equally short matches of one word) in no fixed order, and which of
    them a limit keeps changes from one search to the next once a table has
    several fragments; rank fusion then turns a swapped tie into swapped
    hits. So one more row than asked is read: while it ties with the k-th,
    more are read (up to ``_TIE_READ`` past ``k``), and the rows are ordered
    by score, then chunk id, before the cut."""
    n = k + 1
    while True:
        rows = fetch(n)
        score = rows[column].to_pylist()
        if len(score) < n or score[k - 1] != score[-1] or n >= k + _TIE_READ:
            break
        n = min(2 * n, k + _TIE_READ)
    order = "descending" if high_first else "ascending"
    return rows.sort_by([(column, order), ("chunk_id", "ascending")]).slice(0, k)
