"""Reading the knowledge base: search (vector / fts / hybrid), chunks, sources.

    search(query, k, mode, user, where, nprobes, refine_factor, ef)
      access_filter(user) AND where -> LanceDB prefilter -> legs -> RRF (hybrid) -> Hits
                                       (each hit keeps its per-leg scores and ranks)
      every leg's rows (ACL columns fetched with them) -> acl.visible(row, user):
        the second lock; a row it refuses is dropped before fusion, logged at
        ERROR (chunk ids, never text), counted (kb.access_drops) and warned
        about (AccessCheckWarning): the prefilter let through what it must not
      a bad where -> InputError naming the caller's where and the problem
        (planned alone: the access clause never appears in a message)
      vector leg: ANN when the table has a vector index (vindex.py: k allowed hits
      guaranteed, knobs default to kb.index_policy), else exact
      by_language (default: on for a multilingual embedder, e5):
        languages stored (lang column, read once per table version)
        -> per language: the legs with prefilter (access AND where) AND lang = '..'
           (each leg's rows through the second lock, as above)
        -> hybrid: RRF of that language's two legs
        -> the per-language lists merged by rank (RRF: 1/(60 + rank in its
           language); at equal rank the question's language first)
        one language stored, or no lang column (a table made without it): one leg as above
    chunks(source) / sources()       what is stored (no ACL: for the owner, not for users)

kb.py's docstring draws the flow in full.
"""

from __future__ import annotations

import json
import logging
import warnings
from typing import TYPE_CHECKING, Any, Literal

from selfrag_nb.errors import AccessCheckWarning, InputError, InputTypeError, KnowledgeBaseError
from selfrag_nb.store.acl import access_filter, combine_filters, validate_acl_name, visible
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
from selfrag_nb.text import validate_unicode

if TYPE_CHECKING:
    import pyarrow as pa


__all__ = ["Search"]

_log = logging.getLogger(__name__)

#: What the second lock reads: fetched with every row a search returns.
_ACL_COLUMNS = ["acl_roles", "acl_users", "tenant"]
_ROW_COLUMNS = [*_RESULT_COLUMNS, *_ACL_COLUMNS]


class Search(Core):
    """Search, chunks and sources of a KnowledgeBase."""

    #: Rows the SQL prefilter returned that the Python access check refused
    #: (kb.access_drops); anything but 0 is a fault in the prefilter.
    _access_drops = 0
    #: (table version, languages stored in it): read once per version
    _langs_at: tuple[int, list[str | None]] | None = None

    @property
    def access_drops(self) -> int:
        """How many rows searches on this handle dropped because the access
        rule, checked again in Python, refused them. 0 unless the SQL
        prefilter is broken: each drop is also logged at ERROR and warned
        about (AccessCheckWarning)."""
        return self._access_drops

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
        by_language: bool | None = None,
    ) -> Hits:
        """The ``k`` best chunks ``user`` may read (anonymous: public only).

        The ACL is a LanceDB prefilter, so unreadable chunks never leave the
        store; ``where`` (SQL over the chunk columns, e.g. ``"source = 'a.md'"``)
        is ANDed with it. Every returned row is checked against the rule again
        in Python (the second lock): one it refuses is dropped, logged at ERROR,
        counted in ``access_drops`` and warned about (AccessCheckWarning).
        A ``where`` that is not a valid condition is an InputError naming it.

        ``nprobes`` (IVF partitions probed; None: every one), ``refine_factor`` (k times
        this many candidates re-ranked by exact distance) and ``ef`` (HNSW
        candidates) tune the vector index once the table has one (None: the
        knowledge base's ``index_policy``); without an index they change nothing.
        ``exact=True`` skips the vector index (exact kNN: the reference for recall).
        A filtered search returns k allowed hits whenever k exist, index or not.

        ``by_language=True`` runs the vector leg once per chunk language stored
        (the ``lang`` column, ANDed with the access filter) and merges those
        lists by rank (RRF), so a question finds the best chunks of every
        language, not only of its own; None (the default) turns it on for a
        multilingual embedder (one whose ``multilingual`` attribute is True,
        e.g. ``e5-small-multilingual``). See docs/multilingual.md."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("search query must be a non-blank string")
        validate_unicode("search query", query)
        if isinstance(where, str):
            validate_unicode("where", where)
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
        if by_language is not None and not isinstance(by_language, bool):
            raise InputTypeError(f"by_language must be True, False or None, got {by_language!r}")
        if by_language is None:
            by_language = getattr(self._embedder, "multilingual", False) is True
        flt = combine_filters(access_filter(user), where)
        t = self._tbl()
        hits: list[Hit] = []
        if t is not None:
            hits = self._query(
                t,
                query,
                k,
                mode,
                flt,
                user=user,
                where=where,
                knobs=None if exact else knobs,
                by_language=by_language,
            )
        return Hits(hits=hits, query=query, mode=mode, k=k, access_filter=flt, user=user)

    def _query(
        self,
        t: Any,
        query: str,
        k: int,
        mode: str,
        flt: str,
        *,
        user: User | None,
        where: str | None,
        knobs: Any,
        by_language: bool = False,
    ) -> list[Hit]:
        """Run one mode. Hybrid runs the two legs itself (each with its score column
        named, which keeps Lance's projection warnings away) and fuses them with
        LanceDB's RRFReranker, then puts each leg's own score back on every hit.
        Each leg's rows pass the second lock (``_second_lock``) before anything
        else reads them."""
        from selfrag_nb.store.embedders import embed_queries

        # the question path: an instruction-tuned embedder writes a question
        # differently from the passages it was stored as (embedders.embed_queries)
        vec = embed_queries(self._embedder, [query])[0] if mode != "fts" else None
        vec_rows = fts_rows = None
        # by language: each stored language's (vector, fts) legs, fused per language
        per_lang: list[tuple[str | None, pa.Table, pa.Table | None]] = []
        refused: list[str] = []
        try:
            langs = self._languages(t) if vec is not None and by_language else []
            if len(langs) > 1:
                # A multilingual model ranks chunks in the question's own language
                # first whatever they say: each language's best are found among
                # their own, then the lists are merged by rank. The access filter
                # stays whole; the language only narrows it.
                for lang in langs:
                    lflt = f"({flt}) AND ({_lang_clause(lang)})"
                    v = _second_lock(
                        self._leg_vector(t, vec, k, lflt, knobs, columns=_ROW_COLUMNS), user, refused
                    )
                    f = None
                    if mode == "hybrid":
                        f = _second_lock(
                            self._leg_fts(t, query, k, lflt, columns=_ROW_COLUMNS), user, refused
                        )
                    per_lang.append((lang, v, f))
            else:
                if vec is not None:
                    vec_rows = _second_lock(
                        self._leg_vector(t, vec, k, flt, knobs, columns=_ROW_COLUMNS), user, refused
                    )
                if mode != "vector":
                    fts_rows = _second_lock(
                        self._leg_fts(t, query, k, flt, columns=_ROW_COLUMNS), user, refused
                    )
        except KnowledgeBaseError:
            raise
        except Exception as exc:
            raise self._search_failure(t, f"a {mode} search", flt, where, exc) from exc
        if refused:
            self._report_refused(list(dict.fromkeys(refused)), mode, user)
        if per_lang:
            from selfrag_nb.text import detect_language

            # at equal rank the question's own language goes first (the same script rule as the chunks')
            own = [lang == detect_language(query) for lang, _, _ in per_lang]
            vec_rows = _merge_by_rank([v for _, v, _ in per_lang], own, "_distance", high_first=False)
            if mode == "vector":
                fused = vec_rows.slice(0, k)
            else:
                import pyarrow as pa

                fts_rows = pa.concat_tables([f for _, _, f in per_lang if f is not None])
                # hybrid as without languages, within each language; the
                # per-language fused lists are then merged by rank like the vector legs
                kept = [(o, v, f) for o, (_, v, f) in zip(own, per_lang, strict=True) if f is not None]
                lists = [(o, _rrf(query, v, f)) for o, v, f in kept if v.num_rows or f.num_rows]
                if not lists:
                    return []
                fused = _merge_by_rank(
                    [tb for _, tb in lists],
                    [o for o, _ in lists],
                    "_relevance_score",
                    high_first=True,
                    rescore=True,
                ).slice(0, k)
        elif mode == "vector":
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
            fused = _rrf(query, vec_rows, fts_rows).slice(0, k)
        distance = _by_rowid(vec_rows, "_distance")
        bm25 = _by_rowid(fts_rows, "_score")
        # Each leg's own order: RRF values (~1/60) mean little to a reader,
        # "3rd by vector, 1st by keywords" does. Per language, the vector
        # leg's order is the merged one (its distances are not comparable across languages).
        leg_rank = {
            "vector": _row_order(vec_rows) if per_lang else _order(distance, high_first=False),
            "fts": _order(bm25, high_first=True),
        }
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

    def _languages(self, t: Any) -> list[str | None]:
        """The chunk languages stored (None: rows without one), read once per
        table version; [] for a table without the ``lang`` column (made by hand
        or by another tool), which is then searched with one vector leg as before."""
        if "lang" not in t.schema.names:
            return []
        version = int(t.version)
        if self._langs_at is None or self._langs_at[0] != version:
            import pyarrow.compute as pc

            with self._reading("reading the chunk languages", value_errors=True):
                column = t.search().select(["lang"]).limit(None).to_arrow()["lang"]
            found = pc.unique(column).to_pylist()
            self._langs_at = (version, sorted(found, key=lambda v: (v is None, v or "")))
        return list(self._langs_at[1])

    def _report_refused(self, chunk_ids: list[str], mode: str, user: User | None) -> None:
        """The SQL prefilter should have kept these rows in the store: an
        internal fault, logged at ERROR (ids, never chunk text), counted on
        the handle and warned about. The search goes on without them."""
        self._access_drops += len(chunk_ids)
        who = user.id if user is not None else "anonymous"
        _log.error(
            "access check: the SQL prefilter of a %s search on %s returned %d chunk(s) user %r may not "
            "read; dropped before use (chunk ids %s). The prefilter is faulty: report it.",
            mode,
            self._uri,
            len(chunk_ids),
            who,
            chunk_ids,
        )
        warnings.warn(
            AccessCheckWarning(
                f"{len(chunk_ids)} search result(s) the access rule refuses were returned by the "
                "store's prefilter and dropped (an internal fault, logged at ERROR; "
                "kb.access_drops counts them)"
            ),
            stacklevel=4,
        )

    def _search_failure(self, t: Any, doing: str, flt: str, where: str | None, exc: Exception) -> Exception:
        """Name what made a search fail. LanceDB raises the same ValueError or
        RuntimeError for a bad filter, a damaged data file and a damaged index,
        so each suspect is tried on its own: the caller's where is planned
        alone (so the message names it, never the access clause), then the
        whole filter, without reading data, then every row is read without an
        index."""
        if where is not None and where.strip():
            try:
                t.search().where(where, prefilter=True).select(["chunk_id"]).limit(1).explain_plan()
            except Exception as bad:  # noqa: BLE001 - planning fails with ValueError, RuntimeError or a Rust panic
                return InputError(
                    f"search failed: where {where!r} is not a valid condition on the chunk columns "
                    f"({_where_cause(bad, where, flt)})"
                )
        try:
            t.search().where(flt, prefilter=True).select(["chunk_id"]).limit(1).explain_plan()
        except Exception as bad:  # noqa: BLE001 - planning fails with ValueError, RuntimeError or a Rust panic
            # The caller's where plans alone, so the access clause is at fault: ours,
            # and never shown (it would tell a reader how access is decided).
            _log.error("search: the access filter cannot be planned: %s", _cause(bad))
            return KnowledgeBaseError(
                f"knowledge base {self._uri}: {doing} failed because the access filter could not be "
                "applied (an internal fault, logged at ERROR); no rows were returned"
            )
        try:
            for _ in t.search().limit(None).to_batches():
                pass
        except Exception as bad:  # noqa: BLE001 - any failure to read the rows is damage in the data
            return _without_filter(_damaged(self._uri, doing, bad), flt)
        return _without_filter(_index_damaged(self._uri, doing, exc), flt)


def _without_filter(err: KnowledgeBaseError, flt: str) -> KnowledgeBaseError:
    """``err`` without the access clause LanceDB may quote in its cause."""
    text = str(err)
    return err if flt not in text else KnowledgeBaseError(text.replace(flt, "<the access filter>"))


def _where_cause(exc: BaseException, where: str, flt: str) -> str:
    """LanceDB's reason a where failed, without the SQL it wraps around it:
    "unknown column no_such_column", not the statement it planned."""
    import re

    text = _cause(exc).replace(flt, "...")
    missing = re.search(r"No field named (\S+?)\.? Valid fields", text)
    if missing:
        return f"unknown column {missing.group(1)}"
    text = re.sub(r"Error parsing statement: SELECT 1 FROM t WHERE .*? \(", "(", text)
    return text.replace(f"({where})", repr(where))


def _second_lock(rows: pa.Table, user: User | None, refused: list[str]) -> pa.Table:
    """``rows`` without those the access rule refuses ``user``, checked in
    Python (acl.visible) on the ACL columns fetched with them; the chunk ids
    of the refused rows are appended to ``refused``."""
    import pyarrow as pa

    if rows.num_rows == 0:
        return rows
    keep = [
        visible(roles or (), users or (), tenant or "", user)
        for roles, users, tenant in zip(
            rows["acl_roles"].to_pylist(),
            rows["acl_users"].to_pylist(),
            rows["tenant"].to_pylist(),
            strict=True,
        )
    ]
    if all(keep):
        return rows
    refused.extend(cid for cid, ok in zip(rows["chunk_id"].to_pylist(), keep, strict=True) if not ok)
    return rows.filter(pa.array(keep, type=pa.bool_()))


#: RRF's constant (Cormack et al.; LanceDB's RRFReranker uses the same)
_RRF_K = 60


def _lang_clause(lang: str | None) -> str:
    """The prefilter of one language's vector leg (values are data: quoted)."""
    if lang is None:
        return "lang IS NULL"
    return "lang = '" + lang.replace("'", "''") + "'"


def _rrf(query: str, vec_rows: pa.Table, fts_rows: pa.Table) -> pa.Table:
    """The two legs fused by LanceDB's RRFReranker, best first (``_relevance_score``)."""
    from lancedb.rerankers import RRFReranker

    return RRFReranker(return_score="relevance").rerank_hybrid(query, vec_rows, fts_rows)


def _merge_by_rank(
    tables: list[pa.Table], own: list[bool], tie: str, *, high_first: bool, rescore: bool = False
) -> pa.Table:
    """Every row of per-language result lists (each best first), fused by RRF:
    a row's score is 1 / (60 + its rank in its own language's list). The
    lists share no row, so this interleaves them by rank; at equal rank the
    lists ``own`` marks (the question's language) go first, then rows go by
    their ``tie`` column (cosine distance, or the hybrid score within their
    language). ``rescore``: ``_relevance_score`` becomes that fused score."""
    import pyarrow as pa

    merged = pa.concat_tables(tables, promote_options="default")
    keys: list[tuple[float, int, float, int]] = []
    offset = 0
    for tb, first in zip(tables, own, strict=True):
        for rank, value in enumerate(tb[tie].to_pylist(), start=1):
            rrf = -1.0 / (_RRF_K + rank)
            keys.append(
                (rrf, 0 if first else 1, -float(value) if high_first else float(value), offset + rank - 1)
            )
        offset += tb.num_rows
    keys.sort()
    out = merged.take(pa.array([key[-1] for key in keys], type=pa.int64()))
    if rescore:
        column = out.schema.get_field_index("_relevance_score")
        score = pa.array([-key[0] for key in keys], type=pa.float32())
        out = out.set_column(column, "_relevance_score", score)
    return out


def _row_order(table: pa.Table | None) -> dict[int, int]:
    """1-based position of each row id in ``table`` (a fused list's own order)."""
    if table is None:
        return {}
    return {rid: i for i, rid in enumerate(table["_rowid"].to_pylist(), start=1)}


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
