"""The first write on object storage, where no lock keeps two first writers apart.

    create_shared(db, data, schema, options, open_table) -> (table, landed)
      ensure_log_table(db)                        ingest_log first (see below)
      create_table(chunks, data) -> version 1           -> (table, True): the first writer
                                 -> "already exists"    -> (their table, False): merge ours in
                                 -> version v > 1       -> restore v-1 -> (table, False)
    the caller (Writes._write) merges the rows of a (table, False) like any
    later write's: a chunk id the other writer already stored is matched, not
    inserted again, so both writers' rows end up stored once.

Why the third case, measured against moto with two first ingests started
together: both passed LanceDB's existence check, the other writer's create
committed version 1 first, and Lance retried ours as an Overwrite on top of
it, the other writer's rows gone from the latest version. Our create held
only our rows, which are merged again next: restoring the version just before
ours brings theirs back and loses nothing.

Why ingest_log first: created by ``_log`` a moment after each writer's rows,
two creates of it collided the same way, and the first writer's log entry
(an append) then conflicted with the second's Overwrite. Created before the
chunk table, a doubled create replaces an empty table with an empty one (no
writer has a row to log yet), and a writer that finds the chunk table finds
the log table too.

A table listed but without a version yet (another writer's create between its
data files and its manifest) is waited for by ``open_table`` (Core._open_table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from selfrag_nb.store.kb_core import LOG_TABLE, TABLE, _is_commit_conflict

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["create_shared", "ensure_log_table"]

#: Restores tried when the other writer keeps committing in between.
_RESTORE_TRIES = 5


def create_shared(
    db: Any, data: pa.Table, schema: pa.Schema, options: dict[str, str], open_table: Callable[[], Any]
) -> tuple[Any, bool]:
    """Create the chunk table holding ``data``, or find the one another writer
    created at the same moment: (table, whether ``data`` is in it)."""
    ensure_log_table(db, options)
    try:
        # options merge with the connection's: its credentials are kept
        table = db.create_table(TABLE, data, schema=schema, storage_options=dict(options))
    except Exception:
        if TABLE not in set(db.list_tables().tables):
            raise  # not a concurrent create: a real failure
        return open_table(), False
    created = int(table.version)
    if created == 1:
        return table, True
    for attempt in range(_RESTORE_TRIES):
        try:
            table.restore(created - 1)
            break
        except Exception as exc:
            if attempt == _RESTORE_TRIES - 1 or not _is_commit_conflict(exc):
                raise
            table.checkout_latest()  # the other writer committed meanwhile: restore again
    return table, False


def ensure_log_table(db: Any, options: dict[str, str]) -> None:
    """The empty ``ingest_log`` table, unless it exists (the columns ``Writes._log`` writes)."""
    import pyarrow as pa

    if LOG_TABLE in set(db.list_tables().tables):
        return
    schema = pa.schema(
        [("version", pa.int64()), ("op", pa.string()), ("at", pa.string()), ("details", pa.string())]
    )
    try:
        db.create_table(LOG_TABLE, schema=schema, exist_ok=True, storage_options=dict(options))
    except Exception:
        if LOG_TABLE not in set(db.list_tables().tables):
            raise  # not the other writer's create: a real failure
