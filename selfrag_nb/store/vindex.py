"""The vector index: when it is built, kept fresh and retrained, and how a
vector search uses it. Callers hold the write lock; ingest and restore call
``refresh`` inside their all-or-nothing unit, so a failed build puts the
table back with the rest of the write.

    refresh(t, policy)                                   after every ingest / restore
      rows < policy.min_rows, no index             -> nothing: exact search is fast enough
      rows >= min_rows, no index                   -> train one (policy.index_type) on every row
      rows > retrain_growth x trained rows         -> train again (partitions fit the new size)
      unindexed rows > max_unindexed_share x rows  -> fold them in (LanceDB optimize: new rows
                                                      are assigned to the existing centroids)
    optimize(t, policy)                                  kb.optimize()
      refresh, then compaction + every index brought up to date (LanceDB optimize,
      which also settles a fresh index: a second call has nothing left to do)

    Measured caveat (benchmarks/scale.md, runs 4-5): LanceDB 0.40's optimize
    also re-joins IVF partitions smaller than its own target size (~8k rows),
    so the sqrt(rows) partitions trained below do not survive it: 316 became 4
    at 100k, 1,000 became 81 at 1M. With no probe cap a filtered search then
    reads every PQ code (at 1M it did so on a fresh index too): 13 ms p50 at
    100k, 34-37 ms at 1M (run 7, tables in Lance format 2.1).

    index name "vector_idx_n<rows>": the row count it was trained on travels
    with the index, so restore() to an older version brings back the matching
    count (nothing else to keep in step)

    ann_vector(t, vec, k, flt, knobs)                     search's vector leg
      index present -> ANN: nprobes None = every partition (maximum_nprobes 0),
        else exactly nprobes partitions (LanceDB 0.40 always probes up to the
        maximum: measured, minimum 20 / maximum 40 searched 40, maximum 0 all 316),
        refine_factor (re-rank candidates by their exact vectors), ef (HNSW)
      fewer than k hits from the index -> the exact search over the allowed rows
        (bypass_vector_index): a selective ACL never shortens the list
      no index -> the exact search
    the ACL columns get scalar indexes (LabelList roles / users, Bitmap tenant)
      with the vector index: the prefilter is then read from them, not from every row

Why IVF_PQ with a refine factor by default, and the thresholds: measured in
benchmarks/bench_scale.py, written up in docs/scaling.md.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import InputError
from selfrag_nb.store.types import IndexPolicy

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "VECTOR_COLUMN",
    "Knobs",
    "ann_vector",
    "build",
    "optimize",
    "refresh",
    "resolve_knobs",
    "vector_index",
]

VECTOR_COLUMN = "vector"
INDEX_PREFIX = "vector_idx_n"
_VECTOR_KINDS = ("IvfPq", "IvfFlat", "IvfSq", "IvfRq", "IvfHnswPq", "IvfHnswSq", "IvfHnswFlat")

#: (nprobes or None = every partition, refine_factor or None, ef) of one search
Knobs = tuple[int | None, int | None, int]


def resolve_knobs(policy: IndexPolicy, nprobes: Any, refine_factor: Any, ef: Any) -> Knobs:
    """The knobs of one search: each given one checked, the policy's default for the rest."""

    def check(name: str, value: Any, default: Any, top: int) -> Any:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise InputError(f"{name} must be an int between 1 and {top}, got {value!r}")
        return value

    return (
        check("nprobes", nprobes, policy.nprobes, 10_000),
        check("refine_factor", refine_factor, policy.refine_factor, 1000),
        check("ef", ef, policy.ef, 100_000),
    )


def vector_index(t: Any) -> Any | None:
    """LanceDB's IndexConfig of the index on the vector column, or None."""
    for i in t.list_indices():
        if i.index_type in _VECTOR_KINDS and list(i.columns) == [VECTOR_COLUMN]:
            return i
    return None


def trained_rows(index: Any) -> int | None:
    """Rows the index was trained on (None: not built by this module)."""
    m = re.fullmatch(rf"{INDEX_PREFIX}(\d+)", index.name)
    return int(m.group(1)) if m else None


def _config(policy: IndexPolicy, rows: int, dim: int) -> Any:
    from lancedb.index import HnswSq, IvfPq

    # About sqrt(rows) partitions: a probe reads ~sqrt(rows) vectors, and the
    # default 20 probes stay a small share of the table from 10k rows up.
    partitions = max(1, min(4096, round(math.sqrt(rows))))
    if policy.index_type == "IVF_HNSW_SQ":
        # HNSW graphs per partition: fewer, larger partitions than IVF_PQ needs
        return HnswSq(distance_type="cosine", num_partitions=max(1, partitions // 8))
    # dim/8 sub-vectors (32 bytes a 256-d vector) when it divides; the refine
    # step re-ranks with the exact vectors anyway
    sub = dim // 8 if dim % 8 == 0 and dim >= 16 else None
    return IvfPq(distance_type="cosine", num_partitions=partitions, num_sub_vectors=sub)


def describe(t: Any) -> dict[str, Any] | None:
    """The vector index as plain facts (None: there is none)."""
    idx = vector_index(t)
    if idx is None:
        return None
    return {
        "name": idx.name,
        "type": idx.index_type,
        "trained_rows": trained_rows(idx),
        "unindexed_rows": int(idx.num_unindexed_rows or 0),
    }


def _acl_indexes(t: Any) -> list[str]:
    """Scalar indexes on the ACL columns, where missing: with them LanceDB
    evaluates the access prefilter from the indexes instead of reading the
    list columns of every row (at 100k rows that read cost more than the ANN
    search itself; docs/scaling.md)."""
    from lancedb.index import Bitmap, LabelList

    have = {tuple(i.columns) for i in t.list_indices()}
    done = []
    for column, config in (("acl_roles", LabelList()), ("acl_users", LabelList()), ("tenant", Bitmap())):
        if (column,) not in have:
            t.create_index(column, config=config, replace=True)
            done.append(f"indexed {column} ({type(config).__name__})")
    return done


def build(t: Any, policy: IndexPolicy, dim: int) -> str:
    """Train the vector index on every row now in ``t`` (replacing an older one),
    and index the ACL columns."""
    _acl_indexes(t)
    rows = int(t.count_rows())
    old = vector_index(t)
    name = f"{INDEX_PREFIX}{rows}"
    if old is not None:
        # one vector index per column: the new one replaces it (searches in
        # between are exact, never wrong)
        t.drop_index(old.name)
    t.create_index(VECTOR_COLUMN, config=_config(policy, rows, dim), name=name, replace=True)
    return f"trained {policy.index_type} vector index on {rows} rows"


def refresh(t: Any, policy: IndexPolicy, dim: int) -> list[str]:
    """Build, retrain or update the vector index as the policy says (see the module docstring)."""
    rows = int(t.count_rows())
    idx = vector_index(t)
    if idx is None:
        return [build(t, policy, dim)] if rows >= policy.min_rows else []
    trained = trained_rows(idx)
    if trained is not None and rows > policy.retrain_growth * trained:
        return [build(t, policy, dim)]
    done = _acl_indexes(t)  # dropped by hand, or a table from before they existed
    unindexed = int(idx.num_unindexed_rows or 0)
    if unindexed > policy.max_unindexed_share * rows:
        from selfrag_nb.store.kb_core import _KEEP_VERSIONS

        t.optimize(cleanup_older_than=_KEEP_VERSIONS)
        done.append(f"added {unindexed} new rows to the vector index")
    return done


def optimize(t: Any, policy: IndexPolicy, dim: int) -> list[str]:
    """The vector index built or retrained if due, then compaction and every
    index updated (in this order: LanceDB's optimize also settles a freshly
    built index, so a second call finds nothing left to do)."""
    from selfrag_nb.store.kb_core import _KEEP_VERSIONS

    lag = {i.name: int(i.num_unindexed_rows or 0) for i in t.list_indices()}
    done = refresh(t, policy, dim)
    before = int(t.version)
    fragments = int(t.stats()["fragment_stats"]["num_fragments"])
    t.optimize(cleanup_older_than=_KEEP_VERSIONS)
    if int(t.version) != before:
        now = {i.name for i in t.list_indices()}
        done.extend(
            f"added {n} new rows to index {name}" for name, n in sorted(lag.items()) if n and name in now
        )
        after = int(t.stats()["fragment_stats"]["num_fragments"])
        if after < fragments:
            done.append(f"compacted {fragments} data fragments into {after}")
        if not done:
            done.append(f"LanceDB optimize rewrote index files (version {int(t.version)})")
    return done


def ann_vector(t: Any, vec: Any, k: int, flt: str, *, columns: list[str], knobs: Knobs | None) -> pa.Table:
    """The ``k`` nearest allowed rows; ``knobs`` None means there is no index (exact search)."""

    def query(exact: bool) -> pa.Table:
        q = t.search(vec, query_type="vector", vector_column_name=VECTOR_COLUMN).distance_type("cosine")
        if exact:
            q = q.bypass_vector_index()
        else:
            assert knobs is not None
            nprobes, refine, ef = knobs
            # LanceDB refuses an HNSW search whose ef is below the candidates it must return
            ef = max(ef, k * (refine or 1))
            # LanceDB searches up to maximum_nprobes whatever it found on the way,
            # and a maximum of 0 means every partition
            q = q.minimum_nprobes(nprobes or 1).maximum_nprobes(nprobes or 0).ef(ef)
            if refine is not None:
                q = q.refine_factor(refine)
        return q.where(flt, prefilter=True).select(columns).with_row_id(True).limit(k).to_arrow()

    if knobs is None:
        return query(exact=True)
    rows = query(exact=False)
    if rows.num_rows < k:
        # the index found fewer allowed rows than asked for (a selective ACL, an
        # HNSW graph cut off by the filter): the exact search over the allowed
        # rows returns every one there is
        rows = query(exact=True)
    return rows
