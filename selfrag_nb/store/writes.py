"""Writing to the knowledge base: ingest, remove, restore, versions, reindex.

    ingest(path) -> load_tree -> prepare (store/prepare.py) -> embed (store/batches.py)
      -> [lock] one merge_insert -> log -> FTS refresh      all or nothing (_all_or_nothing)
      -> object storage: duplicate chunk ids of the written sources? -> KnowledgeBaseError (_check_no_race)
    first write, local folder     -> table built in a staging folder, renamed into place (_create_table)
    first write, object storage   -> ingest_log, then create_table; lost to another first writer
                                     ("already exists" / committed over theirs -> restored) -> merge
                                     into theirs like any later write (firstwrite.py)
    after the write               -> indexes a killed ingest left out are built (Core._recover_indexes)
    remove(source) / restore(version)                       all or nothing
    versions()                                              table versions + the ingest log
    reindex()                                               every index rebuilt (a missing vector
                                                            index built), log repaired
    optimize()                                              compaction, indexes updated, vector
                                                            index built / retrained when due (vindex.py)

kb.py's docstring draws each flow in full and says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from selfrag_nb.errors import InputError, InputTypeError, KnowledgeBaseError, NotFoundError
from selfrag_nb.progress import reporter
from selfrag_nb.store.kb_core import (
    _EMBED_BATCH,
    LOG_TABLE,
    STAGING_PREFIX,
    TABLE,
    Core,
    Progress,
    _cause,
    _create_fts,
    _fts_works,
    _index_config,
    _sql_in,
)
from selfrag_nb.store.prepare import Prepared
from selfrag_nb.store.types import IngestReport, OptimizeReport

if TYPE_CHECKING:
    import pyarrow as pa


__all__ = ["NEW_TABLE_OPTIONS", "Writes"]

#: Lance file format of the tables this package creates: 2.1, not LanceDB
#: 0.40's default 2.2. Measured on a 1M-chunk table (benchmarks/scale.md, run
#: 7): fetching the nine result columns of the 10 hits took 15.7 ms from 2.2
#: files and 2.8 ms from 2.1, which took a filtered vector search from 52 to
#: 39 ms p50 and full-text search from 20 to 9 ms. A table keeps the format it
#: was created with. Passed as a copy: LanceDB may add to the options it is given.
NEW_TABLE_OPTIONS = {"new_table_data_storage_version": "2.1"}


class Writes(Core):
    """Ingest, remove, restore, versions and reindex of a KnowledgeBase."""

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
            self._db.create_table(LOG_TABLE, table, storage_options=dict(NEW_TABLE_OPTIONS))

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
                if self._local_dir is None:
                    # on object storage another writer may have created the same table
                    # at the same moment: dropping it could delete that writer's files
                    return "left as is: on object storage the new table is never dropped"
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
        from selfrag_nb.store import vindex

        for name, _, _ in existing:
            t.drop_index(name)
        for _, kind, columns in existing:
            if kind == "FTS":
                continue  # recreated below with our settings, whatever the old ones were
            if columns == [vindex.VECTOR_COLUMN] and kind != "FTS" and kind in vindex._VECTOR_KINDS:
                # the policy's type, trained on today's rows (its name records how many)
                vindex.build(t, self._index_policy, self._embedder.dim)
                done.append(f"rebuilt {self._index_policy.index_type}({vindex.VECTOR_COLUMN})")
                continue
            t.create_index(columns[0], config=_index_config(kind), replace=True)
            done.append(f"rebuilt {kind}({', '.join(columns)})")
        _create_fts(t)
        done.append("rebuilt FTS(search_text)")
        if vindex.vector_index(t) is None and int(t.count_rows()) >= self._index_policy.min_rows:
            # the policy asks for one and there is none: its build was killed
            # after the rows were committed (or never ran)
            vindex.build(t, self._index_policy, self._embedder.dim)
            done.append(f"built the missing {self._index_policy.index_type}({vindex.VECTOR_COLUMN}) index")
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
        engine: Literal["local", "ray"] = "local",
        workers: int | None = None,
        allow_widen: bool = False,
        metadata_keys: Iterable[str] | None = None,
    ) -> IngestReport:
        """Add a file or folder (walked recursively). Unchanged sources are left
        alone, changed ones replaced; ``prune=True`` also removes stored sources
        of this folder that are no longer in it.

        ``acl={"roles": [...], "users": [...], "tenant": "..."}`` overrides each
        document's own ACL (roles and users together, tenant on its own; see
        docs/access-control.md); ``metadata`` is merged into every chunk's metadata.
        A document's ACL changing is reported in ``IngestReport.acl_changes``;
        a change that would let anyone read a stored document who could not
        before raises AccessWideningError naming the documents, and nothing is
        written, unless ``allow_widen=True``. Documents that declare no access
        get the knowledge base's ``default_access`` (see ``open``).
        ``metadata_keys=["title", "status", ...]`` is strict mode: a file or
        record with any other front-matter / JSONL key (besides title, roles,
        users, tenant) is skipped with the key named.
        ``prefix="colA/"`` is put before every source name. A source already
        stored from another folder (two folders both holding ``report.md``) is
        skipped with the fix in its reason, or replaced with ``on_conflict="replace"``.
        ``progress`` is a callable ``(done, total, message)``, True for a bar,
        False for nothing; the default (None) shows a bar where a person
        watches (a Jupyter kernel, or a terminal on stderr). It counts files
        (the total is known before the first is read) and is told as each file
        is read and chunked and after each embedding batch.

        ``engine="ray"`` chunks and embeds on Ray (the cluster ``ray.init``
        connected to, else a local one) with ``workers`` embedder actors
        (default: the cluster's CPUs); what is stored and the one commit are
        the same as in-process (store/ray_ingest.py, docs/distributed.md)."""
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
        from selfrag_nb.store.visibility import acl_changes, name_warnings, refuse_widening, stored_acls

        started = time.perf_counter()
        override = check_acl(acl)
        extra = check_metadata(metadata)
        prefix = check_prefix(prefix)
        check_policy(on_conflict)
        if not isinstance(allow_widen, bool):
            raise InputTypeError(f"allow_widen must be True or False, got {allow_widen!r}")
        if engine not in ("local", "ray"):
            raise InputError(f"engine must be 'local' or 'ray', got {engine!r}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise InputError(f"workers must be a positive int or None, got {workers!r}")
        if engine == "ray":
            from selfrag_nb.store.ray_ingest import import_ray

            import_ray()  # a missing extra fails before any file is read

        with reporter(progress) as report:
            docs, skipped = load_tree(
                path,
                metadata_keys=metadata_keys,
                on_file=lambda i, n, source: report(i, n, f"reading {prefix + source}"),
            )
            origin = origin_of(path)
            prepared: list[Prepared] = []
            for i, d in enumerate(docs):
                report(i, len(docs), f"chunking {prefix + d.source}")
                try:
                    prepared.append(
                        prepare(
                            d,
                            override,
                            extra,
                            self._max_chars,
                            prefix=prefix,
                            origin=origin,
                            default_access=self._default_access,
                        )
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
            # Refused before anything is embedded (no model cost); checked
            # again under the lock against what is stored then.
            with self._reading("reading the stored access", value_errors=True):
                stored = stored_acls(self._tbl(), [p.source for p in todo if p.source in snapshot])
            refuse_widening(acl_changes(todo, stored), allow_widen)
            rows = self._embed_rows(
                todo, report, len(prepared) - len(todo), len(prepared), engine=engine, workers=workers
            )

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
                written = [p for p in prepared if p.source in set(updated)]
                with self._reading("reading the stored access", value_errors=True):
                    before = stored_acls(self._tbl(), updated)
                changes = acl_changes(written, before)
                refuse_widening(changes, allow_widen)
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
                        step("building or refreshing the vector index")
                        self._ensure_vector_index(t)
                self._recover_indexes()  # rows a killed ingest committed without their indexes
                if self._local_dir is None and new_rows:
                    self._check_no_race([*added, *updated])
                report(
                    len(prepared),
                    len(prepared),
                    f"done · {len(added)} added, {len(updated)} updated, {len(unchanged)} unchanged, "
                    f"{n_add:,} chunks written",
                )
        return IngestReport(
            added=added,
            updated=updated,
            unchanged=unchanged,
            removed=removed,
            skipped=skipped,
            acl_changes=changes,
            warnings=name_warnings(prepared, before),
            chunks_added=n_add,
            chunks_removed=n_del,
            version=self.version,
            seconds=round(time.perf_counter() - started, 4),
        )

    def _check_no_race(self, sources: list[str]) -> None:
        """On object storage no lock keeps writers apart: two concurrent
        merge_inserts of the same new chunks can both insert (lance#4585).
        After a write, read the chunk ids of the sources it wrote (a filtered
        read of one column) and fail loudly if any is stored twice."""
        from collections import Counter

        t = self._tbl()
        with self._reading("checking the written chunks", value_errors=True):
            t.checkout_latest()
            ids = (
                t.search()
                .where(_sql_in("source", sources))
                .select(["chunk_id", "source"])
                .limit(None)
                .to_arrow()
            )
        counts = Counter(ids["chunk_id"].to_pylist())
        twice = {cid for cid, n in counts.items() if n > 1}
        if not twice:
            return
        hit = sorted(
            {
                s
                for cid, s in zip(ids["chunk_id"].to_pylist(), ids["source"].to_pylist(), strict=True)
                if cid in twice
            }
        )
        raise KnowledgeBaseError(
            f"knowledge base {self._uri}: another process wrote the same sources at the same time "
            f"(no lock exists on object storage) and {len(twice)} chunk(s) of {', '.join(hit[:5])}"
            f"{' ...' if len(hit) > 5 else ''} are now stored twice. Run one writer at a time; to repair, "
            "kb.remove(source) each of them and ingest again (or kb.restore(n) to a version before the race)."
        )

    def _embed_rows(
        self,
        todo: list[Prepared],
        report: Progress | None,
        files_before: int = 0,
        files: int | None = None,
        *,
        engine: str = "local",
        workers: int | None = None,
    ) -> dict[str, pa.Table]:
        """Embed every chunk of ``todo`` (all before any write) -> an Arrow table
        per source. Batches span sources, as few embedder calls as before.
        Progress counts files (``files_before`` already done of ``files``) and
        is told after every chunk batch: the number of chunks is only known
        once a document is chunked, which happens as it is embedded.
        ``engine="ray"``: the same rows, chunked and embedded on Ray."""
        from selfrag_nb.store.batches import EmbedderShapeError, embed_into_arrow

        total = files_before + len(todo) if files is None else files
        counts: dict[str, int] = {}
        at = [0, 0, 0]  # source being chunked, batches, chunks

        def step(chars: int) -> None:
            at[1] += 1
            if report is not None and todo:
                src = todo[min(at[0], len(todo) - 1)].source
                report(
                    files_before + at[0],
                    total,
                    f"embedding · batch {at[1]} · {sum(counts.values()):,} chunks · {src}",
                )

        def every_row() -> Iterator[dict[str, Any]]:
            for i, p in enumerate(todo):
                at[0] = i
                counts[p.source] = 0
                for row in p.rows():
                    counts[p.source] += 1
                    yield row
            at[0] = len(todo)

        now = datetime.now(timezone.utc).isoformat()
        if engine == "ray":
            from selfrag_nb.store.ray_ingest import embed_rows_ray

            by_source = embed_rows_ray(
                todo, self._embedder, self._schema(), now, workers=workers, on_chars=step
            )
            if report is not None and total:
                report(total, total, "embedding")
            return by_source
        try:
            table = embed_into_arrow(
                self._embedder, every_row(), self._schema(), now, batch=_EMBED_BATCH, on_batch=step
            )
        except EmbedderShapeError as exc:
            raise KnowledgeBaseError(f"embedder {self.embedder_name!r} {exc}") from exc
        if report is not None and todo:
            report(
                files_before + len(todo),
                total,
                f"embedded · {sum(counts.values()):,} chunks in {at[1]} batches",
            )
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
        if t is not None and data is not None and "lang" not in t.schema.names:
            # A table made without the chunk language: its old rows get none (NULL),
            # searched by language as a group of their own (search.py _languages)
            t.add_columns({"lang": "CAST(NULL AS STRING)"})
        if t is None:
            if data is None:
                return 0, 0, 0
            if self._local_dir is not None:
                self._table = self._create_table(data)
                return int(self._table.version), data.num_rows, 0
            t, landed = self._create_shared_table(data)
            self._table = t
            if landed:
                return int(t.version), data.num_rows, 0
            # another writer created the table at the same moment: our rows go
            # in as any later write's (below), next to theirs
        if data is None:
            before = t.count_rows()
            t.delete(_sql_in("source", replaced))
            return int(t.version), 0, before - t.count_rows()
        builder = t.merge_insert("chunk_id").when_matched_update_all().when_not_matched_insert_all()
        if replaced:
            builder = builder.when_not_matched_by_source_delete(_sql_in("source", replaced))
        res = builder.execute(data)
        return int(res.version), int(res.num_inserted_rows), int(res.num_deleted_rows)

    def _create_shared_table(self, data: pa.Table) -> tuple[Any, bool]:
        """The first write on object storage: (table, whether ``data`` is in it);
        another first writer at the same moment is handled there (firstwrite.py)."""
        from selfrag_nb.store.firstwrite import create_shared

        return create_shared(self._db, data, self._schema(), dict(NEW_TABLE_OPTIONS), self._open_table)

    def _create_table(self, data: pa.Table) -> Any:
        """The first write into a local folder: the table is built in a staging
        folder and renamed into place: a crash inside LanceDB's create (data
        files written, no manifest yet) would otherwise leave a chunks.lance
        that no one can open or replace. Callers hold the write lock. (On
        object storage _write calls _create_shared_table, which may leave the
        rows still to merge.)"""
        assert self._local_dir is not None, "object storage creates through _create_shared_table"
        import lancedb

        for leftover in self._local_dir.glob(f"{STAGING_PREFIX}*"):  # from a killed first ingest
            shutil.rmtree(leftover, ignore_errors=True)
        staging = self._local_dir / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
        lancedb.connect(str(staging)).create_table(
            TABLE, data, schema=self._schema(), storage_options=dict(NEW_TABLE_OPTIONS)
        )
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
                raise NotFoundError(f"no source {source!r} in {self._uri} (e.g. {known})", key=source)
            with self._all_or_nothing(f"removing {source!r}") as step:
                step("deleting the chunks")
                version, _, removed = self._write([], targets)
                step(f"recording the removal in the '{LOG_TABLE}' table")
                self._log("remove", version, removed=targets, chunks_removed=removed)
        return removed

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
            step("building or refreshing the vector index")
            self._ensure_vector_index(t)
        return self.version

    def optimize(self) -> OptimizeReport:
        """Compact the data files, bring every index up to date with the rows
        added since it was built, and build or retrain the vector index when
        ``index_policy`` says it is due (docs/scaling.md). Old versions are kept
        (``restore`` still works). Idempotent: a second call finds nothing to do
        and reports no actions. Runs under the write lock, all or nothing."""
        from selfrag_nb.store import vindex

        started = time.perf_counter()
        with self._write_lock():
            t = self._tbl()
            if t is None:
                return OptimizeReport(seconds=round(time.perf_counter() - started, 4))
            with self._all_or_nothing("optimize") as step:
                before = int(t.version)
                step("checking the full-text index")
                had_fts = any(i.index_type == "FTS" for i in t.list_indices())
                self._ensure_fts(t)
                actions = [] if had_fts else ["built the full-text index on search_text"]
                step("optimizing the table and its indexes")
                actions += vindex.optimize(t, self._index_policy, self._embedder.dim)
                idx = vindex.vector_index(t)
                lag = {i.name: int(i.num_unindexed_rows or 0) for i in t.list_indices()}
                return OptimizeReport(
                    actions=actions,
                    rows=int(t.count_rows()),
                    vector_index=None if idx is None else idx.index_type,
                    unindexed_rows=lag,
                    version_before=before,
                    version_after=int(t.version),
                    seconds=round(time.perf_counter() - started, 4),
                )


def _fix_for(step: str) -> str:
    """What to do after a write that failed at ``step`` was undone."""
    if LOG_TABLE in step or "index" in step:
        return "Run kb.reindex() to rebuild the indexes and repair the ingest log, then retry."
    return (
        "If the chunk data is damaged, restore an earlier version (kb.versions(), kb.restore(n)) "
        "or rebuild the knowledge base in a new folder; then retry."
    )
