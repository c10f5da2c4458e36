"""Reading the knowledge base: search (vector / fts / hybrid), chunks, sources.

    search(query, k, mode, user, where, nprobes, refine_factor, ef)
      access_filter(user) AND where -> LanceDB prefilter -> legs -> RRF (hybrid) -> Hits
                                       (each hit keeps its per-leg scores and ranks)
      vector leg: ANN when the table has a vector index (vindex.py: k allowed hits
      guaranteed, knobs default to kb.index_policy), else exact
    chunks(source) / sources()       what is stored (no ACL: for the owner, not for users)

kb.py's docstring draws the flow in full.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from selfrag_nb.errors import InputError, InputTypeError, KnowledgeBaseError
from selfrag_nb.store.acl import access_filter, combine_filters, validate_acl_name
from selfrag_nb.store.kb_core import (
    _RESULT_COLUMNS,
    MAX_K,
    MODES,
    Core,
    _cause,
    _damaged,
    _index_damaged,
)
from selfrag_nb.store.types import Hit, Hits, User

if TYPE_CHECKING:
    import pyarrow as pa


__all__ = ["Search"]


class Search(Core):
    """Search, chunks and sources of a KnowledgeBase."""

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
        *,
        nprobes: int | None = None,
        refine_factor: int | None = None,
        ef: int | None = None,
        exact: bool = False,
    ) -> Hits:
        """The ``k`` best chunks ``user`` may read (anonymous: public only).

        The ACL is a LanceDB prefilter, so unreadable chunks never leave the
        store; ``where`` (SQL over the chunk columns, e.g. ``"source = 'a.md'"``)
        is ANDed with it.

        ``nprobes`` (IVF partitions probed; None: every one), ``refine_factor`` (k times
        this many candidates re-ranked by exact distance) and ``ef`` (HNSW
        candidates) tune the vector index once the table has one (None: the
        knowledge base's ``index_policy``); without an index they change nothing.
        ``exact=True`` skips the vector index (exact kNN: the reference for recall).
        A filtered search returns k allowed hits whenever k exist, index or not."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("search query must be a non-blank string")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InputError(f"k must be an int between 1 and {MAX_K}, got {k!r}")
        if mode not in MODES:
            raise InputError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if user is not None and not isinstance(user, User):
            raise InputTypeError(f"user must be a selfrag_nb.User or None, got {type(user).__name__}")
        from selfrag_nb.store.vindex import resolve_knobs

        knobs = resolve_knobs(self._index_policy, nprobes, refine_factor, ef)
        if not isinstance(exact, bool):
            raise InputTypeError(f"exact must be True or False, got {exact!r}")
        flt = combine_filters(access_filter(user), where)
        t = self._tbl()
        hits: list[Hit] = []
        if t is not None:
            hits = self._query(t, query, k, mode, flt, where=where, knobs=None if exact else knobs)
        return Hits(hits=hits, query=query, mode=mode, k=k, access_filter=flt, user=user)

    def _query(
        self, t: Any, query: str, k: int, mode: str, flt: str, *, where: str | None, knobs: Any
    ) -> list[Hit]:
        """Run one mode. Hybrid runs the two legs itself (each with its score column
        named, which keeps Lance's projection warnings away) and fuses them with
        LanceDB's RRFReranker, then puts each leg's own score back on every hit."""
        vec = self._embedder.embed([query])[0] if mode != "fts" else None
        vec_rows = fts_rows = None
        try:
            if vec is not None:
                vec_rows = self._leg_vector(t, vec, k, flt, knobs)
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
        # Each leg's own order: RRF values (~1/60) mean little to a reader,
        # "3rd by vector, 1st by keywords" does.
        leg_rank = {"vector": _order(distance, high_first=False), "fts": _order(bm25, high_first=True)}
        hits = []
        for rank, r in enumerate(fused.to_pylist(), start=1):
            scores: dict[str, float] = {}
            rid = r["_rowid"]
            ranks = {leg: pos[rid] for leg, pos in leg_rank.items() if rid in pos}
            if rid in distance:
                scores["vector_distance"] = distance[rid]
                scores["vector"] = 1.0 - distance[rid]
            if rid in bm25:
                scores["fts"] = bm25[rid]
            if r.get("_relevance_score") is not None:
                scores["hybrid"] = float(r["_relevance_score"])
            hits.append(_hit(r, score=scores.get(mode, 0.0), scores=scores, rank=rank, ranks=ranks))
        return hits

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


def _by_rowid(table: pa.Table | None, column: str) -> dict[int, float]:
    if table is None or table.num_rows == 0:
        return {}
    return dict(zip(table["_rowid"].to_pylist(), map(float, table[column].to_pylist()), strict=True))


def _order(values: dict[int, float], *, high_first: bool) -> dict[int, int]:
    """1-based rank of each row id in one leg (ties keep the leg's order)."""
    ids = sorted(values, key=lambda rid: -values[rid] if high_first else values[rid])
    return {rid: i for i, rid in enumerate(ids, start=1)}


def _hit(
    r: dict[str, Any],
    *,
    score: float,
    scores: dict[str, float],
    rank: int,
    ranks: dict[str, int] | None = None,
) -> Hit:
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
        ranks=ranks or {},
        metadata=json.loads(r["metadata"]) if r.get("metadata") else {},
    )
