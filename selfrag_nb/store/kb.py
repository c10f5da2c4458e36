"""KnowledgeBase: an embedded LanceDB table of chunks, searched with an ACL prefilter.

    kb.py       KnowledgeBase(Writes, Search): open(), sample()
    writes.py   ingest, remove, restore, versions, reindex, optimize (all or nothing)
    vindex.py   the vector index: built past index_policy.min_rows, kept fresh, ANN leg
    search.py   search, chunks, sources
    kb_core.py  the table handle, damage -> KnowledgeBaseError, write lock, schema

    KnowledgeBase.open(path | file:// | s3:// gs:// az:// | db://, embedder, storage_options)
      storage_options (str -> str) -> lancedb.connect: credentials / endpoint / region
        for object stores, api_key / region for db://; refused for folders; secret
        values registered with kb_core.scrub so no message, repr or describe shows them
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
         (FTS past 2,000 unindexed rows; vector index per index_policy, vindex.py)
      -> object storage only (no lock there): re-read the chunk ids of the written
         sources; one stored twice = a concurrent writer -> KnowledgeBaseError
      -> IngestReport (added / updated / unchanged / removed / skipped, version)

    search(query, k, mode, user, where)
      ACL where-clause (acl.py) AND caller's where -> LanceDB prefilter
      vector  cosine kNN over the embedder's vectors: exact below index_policy.min_rows,
              then ANN (IVF_PQ + exact re-ranking) with the ACL still a prefilter and
              k allowed hits guaranteed (fewer from the index -> exact over allowed rows)
      fts     LanceDB full-text index (ICU tokenizer: English words + Chinese words),
              queried with a MatchQuery: the question is words, never query syntax,
              plus the other ways they are written ("licence" -> license, "RFC 3339"
              -> rfc3339: kb_core._with_spellings)
      hybrid  both, fused by LanceDB's RRFReranker
      -> Hits (Hit.text = original chunk text; Hit.context = title > heading path)
      failure -> named by trying each suspect alone: the where (ValueError), the
                 rows (damaged data: restore / rebuild), else an index (kb.reindex())

    ingest / remove / restore: all or nothing. Write -> log -> index refresh; when
      any step fails the chunk table is restored to its version before the call
      and the KnowledgeBaseError names the step and the fix, so a retry applies once.
      (Exception: on object storage a failed first write leaves the new table.)

    reindex()
      read every row -> drop + recreate each index (FTS on search_text, ICU)
      -> an unreadable ingest_log is recreated with a note (chunks untouched)

Why one merge_insert per ingest: the embeddings are computed before the table is
touched, and the single transaction either lands (a new table version) or does
not, so a failed ingest (embedder error, crash) never leaves a source half
replaced. Why a file lock as well: concurrent merge_inserts on the same keys
can both insert (lance#4585), so writers take turns and re-read the stored
hashes inside the lock. On object storage there is no file to lock: measured
against moto, two processes ingesting the same new sources into an existing
table both land and every chunk is stored twice, so an ingest there checks
its sources for duplicate chunk ids afterwards and fails loudly (one writer
at a time is the rule, docs/scaling.md). Two first writes race differently:
the loser of create_table opens the winner's table and merges its rows in
like any later write (store/firstwrite.py), index commits that conflict are
retried, and on object storage the undo never drops the table: it may be
the other writer's.

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

import hashlib
import json
import os
import shutil
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from selfrag_nb.errors import (
    InputError,
    InputTypeError,
    KnowledgeBaseError,
    MissingDependencyError,
    PathNotFoundError,
)
from selfrag_nb.store.acl import DEFAULT_ACCESS
from selfrag_nb.store.chunking import DEFAULT_MAX_CHARS
from selfrag_nb.store.kb_core import (
    LOCK_FILE,
    LOG_TABLE,
    META_KEY,
    STAGING_PREFIX,
    TABLE,
    _cause,
    register_secrets,
    scrub,
)
from selfrag_nb.store.prepare import FORMAT
from selfrag_nb.store.search import Search
from selfrag_nb.store.types import IndexPolicy
from selfrag_nb.store.writes import Writes

if TYPE_CHECKING:
    from selfrag_nb.store.embedders import Embedder


__all__ = ["LOCK_FILE", "TABLE", "KnowledgeBase"]


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


#: Object stores whose credentials, endpoint and region go through ``storage_options``.
#: The sample's embedder: its documents and questions are in two languages.
SAMPLE_EMBEDDER = "e5-small-multilingual"
OBJECT_SCHEMES = ("s3", "s3+ddb", "gs", "gcs", "az", "abfs", "abfss")


def _check_storage_options(uri: str, local: Path | None, options: Any) -> dict[str, str] | None:
    """None, or a copy of ``options`` checked to be str -> str and fit for ``uri``."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise InputTypeError(f"storage_options must be a dict of str -> str, got {type(options).__name__}")
    for key, value in options.items():
        if not isinstance(key, str) or not key.strip():
            raise InputTypeError(f"storage_options keys must be non-blank strings, got {key!r}")
        if not isinstance(value, str):
            # the value itself is never shown: it may be a secret
            raise InputTypeError(
                f"storage_options[{key!r}] must be a str, got {type(value).__name__} (write numbers and flags as text, e.g. 'true')"
            )
    if local is not None:
        raise InputError(
            f"storage_options apply to object storage (s3://, gs://, az://) and LanceDB Cloud (db://), "
            f"not to the local folder {local}; drop storage_options"
        )
    scheme = uri.split("://", 1)[0].lower()
    if scheme == "db":
        unknown = sorted(set(options) - {"api_key", "region", "host_override"})
        if unknown:
            raise InputError(
                f"storage_options for a db:// URI (LanceDB Cloud) take api_key, region and host_override, "
                f"not {', '.join(repr(k) for k in unknown)}"
            )
    elif scheme not in OBJECT_SCHEMES:
        raise InputError(
            f"storage_options are not supported for {scheme}:// URIs (use s3://, gs://, az:// or db://)"
        )
    return dict(options)


def _connect(uri: str, options: dict[str, str] | None) -> Any:
    import lancedb

    interval = timedelta(seconds=1)
    if options is None:
        return lancedb.connect(uri, read_consistency_interval=interval)
    if uri.split("://", 1)[0].lower() == "db":
        return lancedb.connect(
            uri,
            read_consistency_interval=interval,
            api_key=options.get("api_key"),
            region=options.get("region", "us-east-1"),
            host_override=options.get("host_override"),
        )
    return lancedb.connect(uri, read_consistency_interval=interval, storage_options=options)


def _check_scheme(uri: str, stored: dict[str, Any], emb: Embedder) -> None:
    """Refuse ``emb`` when the table records another question/passage scheme.

    Same name, other scheme (a provider's input types changed, say): the
    stored passages and the new questions would be written differently and
    searching would quietly rank worse. No scheme stored: a table made before
    schemes were recorded, when every question was embedded like a passage;
    it opens as before."""
    from selfrag_nb.store.embedders import embedder_scheme

    want = stored.get("scheme")
    if want is None:
        return
    if not isinstance(want, str):
        raise KnowledgeBaseError(
            f"{scrub(uri)}: the stored embedder scheme is unreadable ({want!r}, expected a str)"
        )
    have = embedder_scheme(emb)
    if have != want:
        raise KnowledgeBaseError(
            f"{scrub(uri)} was built with embedder {stored['embedder']!r} embedding questions and passages by scheme "
            f"{want!r}; this {emb.name!r} embedder uses scheme {have!r}, whose vectors would not match. "
            "Open it with the options it was built with, or rebuild it in a new folder."
        )


def _cache_root() -> Path:
    from selfrag_nb.resources import cache_dir

    return cache_dir()


class KnowledgeBase(Writes, Search):
    """Chunks of documents in an embedded LanceDB table: ingest, search, versions.

    Build one with :meth:`open` or :meth:`sample`. Writing lives in
    store/writes.py, reading in store/search.py, shared internals in
    store/kb_core.py."""

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        embedder: str | Embedder | None = None,
        create: bool = True,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        storage_options: dict[str, str] | None = None,
        index_policy: IndexPolicy | None = None,
        default_access: Literal["public", "private"] | None = None,
        **embedder_options: Any,
    ) -> KnowledgeBase:
        """Open (or create) the knowledge base at ``path``: a folder, ``file://...``,
        or an object-store URI such as ``s3://bucket/kb`` (passed to LanceDB).

        ``storage_options`` (str -> str) go to LanceDB for object storage:
        credentials, endpoint, region (``{"aws_region": ..., "aws_access_key_id":
        ...}``; docs/scaling.md); for ``db://`` (LanceDB Cloud) ``api_key`` and
        ``region``. Refused for a local folder. Secret values never appear in
        repr, describe() or error messages.

        ``index_policy`` (:class:`~selfrag_nb.store.types.IndexPolicy`) says past
        how many chunks a vector index is built, when it is refreshed or
        retrained, and the default search knobs (``nprobes``, ``refine_factor``,
        ``ef``); it is a property of this handle, not stored with the table.

        ``default_access`` is what a document that declares no access gets:
        "public" (readable by everyone) or "private" (readable by nobody until
        it is given roles, users or ``acl=``; recommended for company folders).
        A new knowledge base stores it, and ``None`` uses the stored one
        ("public" for a knowledge base made before it was stored). Naming the
        other one applies to this handle's ingests; an ingest through it still
        refuses to make a stored document more visible (``allow_widen``).

        ``embedder=None`` uses the embedder the knowledge base was built with
        ("minilm" for a new one); naming a different one than stored is an error,
        and so is one that embeds questions by another scheme than the one
        stored (``embedder.scheme``: say, other ``input_types``). A knowledge
        base made before schemes were stored has none and opens as before."""
        from selfrag_nb.store.embedders import get_embedder

        uri, local = _resolve_uri(path)
        options = _check_storage_options(uri, local, storage_options)
        register_secrets(options)
        if local is not None:
            if local.exists() and not local.is_dir():
                raise KnowledgeBaseError(f"{local} is a file, not a knowledge base folder")
            if not local.exists():
                if not create:
                    raise PathNotFoundError(
                        f"no knowledge base at {local} (pass create=True to make one)", path=local
                    )
                try:
                    # Another process may create it between the check and here.
                    local.mkdir(parents=True, exist_ok=True)
                except FileExistsError:
                    raise KnowledgeBaseError(f"{local} is a file, not a knowledge base folder") from None
        try:
            db = _connect(uri, options)
            names = set(db.list_tables().tables)
            if TABLE not in names and local is not None and (local / f"{TABLE}.lance").exists():
                # Another process's first ingest renames its finished table into
                # place (writes._create_table) and may have done so after the
                # listing: the rename is atomic, so a second listing sees it whole.
                names = set(db.list_tables().tables)
        except Exception as exc:  # noqa: BLE001 - re-raised below, without LanceDB's text unscrubbed in the chain
            # from None: LanceDB's own exception text may quote an option; _cause scrubs secrets
            raise KnowledgeBaseError(
                f"{scrub(uri)} cannot be read as a LanceDB database: {_cause(exc)}"
            ) from None
        table = None
        stored: dict[str, Any] | None = None
        if TABLE in names:
            try:
                table = db.open_table(TABLE)
                schema = table.schema
            except Exception as exc:
                raise KnowledgeBaseError(
                    f"{scrub(uri)}: the '{TABLE}' table is damaged: {_cause(exc)}"
                ) from exc
            raw = (schema.metadata or {}).get(META_KEY)
            if raw is None:
                raise KnowledgeBaseError(
                    f"{scrub(uri)} holds a LanceDB table '{TABLE}' that selfrag_nb did not create (no {META_KEY.decode()} metadata)"
                )
            try:
                stored = json.loads(raw)
            except ValueError:
                stored = None
            if not isinstance(stored, dict) or not isinstance(stored.get("embedder"), str):
                raise KnowledgeBaseError(
                    f"{scrub(uri)}: the '{TABLE}' table's {META_KEY.decode()} metadata is unreadable "
                    f"(expected a JSON object naming the embedder, got {raw[:60]!r})"
                )
        elif local is not None and (local / f"{TABLE}.lance").exists():
            raise KnowledgeBaseError(
                f"knowledge base {scrub(uri)} is damaged: {local / f'{TABLE}.lance'} is not a LanceDB table "
                "(restore the folder from a backup or rebuild it in a new folder)"
            )
        elif names - {LOG_TABLE}:
            raise KnowledgeBaseError(
                f"{scrub(uri)} is a LanceDB database of other tables ({', '.join(sorted(names))}), not a knowledge base"
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
            raise PathNotFoundError(
                f"no knowledge base at {local} (pass create=True to make one)", path=local
            )

        if stored is not None:
            want = stored["embedder"]
            if embedder is None:
                embedder = want
            emb = get_embedder(embedder, **embedder_options)
            if emb.name != want:
                raise KnowledgeBaseError(
                    f"{scrub(uri)} was built with embedder {want!r} (dim {stored.get('dim')}); "
                    f"it cannot be searched with {emb.name!r}. Open it with embedder={want!r} or use a new folder."
                )
            _check_scheme(uri, stored, emb)
            max_chars = int(stored.get("max_chars", max_chars))
        else:
            emb = get_embedder("minilm" if embedder is None else embedder, **embedder_options)
        if index_policy is not None and not isinstance(index_policy, IndexPolicy):
            raise InputTypeError(
                f"index_policy must be a selfrag_nb.store.types.IndexPolicy or None, got {type(index_policy).__name__}"
            )
        if max_chars < 50:
            raise InputError(f"max_chars must be at least 50, got {max_chars}")
        if default_access is None:
            default_access = stored.get("default_access", "public") if stored is not None else "public"
        if default_access not in DEFAULT_ACCESS:
            raise InputError(f"default_access must be 'public' or 'private', got {default_access!r}")
        kb = cls(
            uri=uri,
            local_dir=local,
            db=db,
            table=table,
            embedder=emb,
            max_chars=max_chars,
            index_policy=index_policy,
            default_access=default_access,
        )
        kb._storage_options = options
        return kb

    @classmethod
    def sample(
        cls,
        embedder: str = SAMPLE_EMBEDDER,
        *,
        docs: str | os.PathLike[str] | None = None,
        rebuild: bool = False,
        progress: bool = True,
    ) -> KnowledgeBase:
        """The bundled bilingual sample knowledge base, built once and cached.

        Embedded with ``e5-small-multilingual`` (the ``multilingual`` extra):
        the sample's documents are in English and Chinese, and its questions
        include English questions about Chinese-only documents and the
        reverse, which an English-only embedder does not find. ``embedder``
        picks another one (``"minilm"``, the default of
        :meth:`KnowledgeBase.open`; ``"hashing"`` in tests).

        The documents ship inside the package (``selfrag_nb/_data/sample_data``;
        a clone reads its ``sample_data/``: :func:`selfrag_nb.resources.bundled`).
        Cached in the user's cache folder (``$SELFRAG_NB_CACHE``, else
        :func:`selfrag_nb.resources.cache_dir`), never inside the package, in a
        folder keyed by a hash of the documents and the embedder name, so editing
        sample_data rebuilds it. ``docs`` points at another folder (tests).
        The first build embeds every sample chunk (a minute or two): a bar
        with a note saying so counts the files and chunk batches unless
        ``progress=False``."""
        from selfrag_nb.resources import bundled
        from selfrag_nb.store.embedders import get_embedder

        # built first: a missing model fails before any hashing or cache folder
        try:
            emb = get_embedder(embedder)
        except MissingDependencyError as exc:
            if embedder != SAMPLE_EMBEDDER:
                raise
            raise MissingDependencyError(
                f"{exc} (the sample is bilingual, so it is embedded with {SAMPLE_EMBEDDER}; "
                'KnowledgeBase.sample("minilm") builds it with the English-only default embedder instead)'
            ) from exc
        folder = Path(docs) if docs is not None else bundled("sample_data") / "docs"
        if not folder.is_dir():
            raise PathNotFoundError(f"sample documents not found at {folder}", path=folder)
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
                    if progress:
                        from selfrag_nb.progress import ProgressBar
                        from selfrag_nb.store.loaders import count_files

                        n = count_files(folder)
                        note = (
                            f"First run: embedding the {n} sample documents with {embedder} "
                            f"(a minute or two; later runs load them from {root})"
                        )
                        with ProgressBar("sample knowledge base", note=note) as bar:
                            kb.ingest(folder, progress=bar.callback())
                    else:
                        kb.ingest(folder, progress=False)
                finally:
                    kb.close()
                (tmp / "READY").write_text(datetime.now(timezone.utc).isoformat())
                if target.exists():
                    shutil.rmtree(target)
                tmp.rename(target)
        return cls.open(target, embedder=emb, create=False)
