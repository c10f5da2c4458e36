"""The Ray engine of ingest: chunk and embed on a Ray cluster, write from the driver.

    kb.ingest(path, engine="ray", workers=N)             store/writes.py
      load_tree -> prepare -> content hashes -> todo     on the driver, as in-process
      -> embed_rows_ray(todo, embedder, schema, ...)     this module
           ray.data.from_items(one row per source: its pickled Prepared.rows)
           -> map_batches(_chunk)                        tasks: the same rows() the
                                                         in-process engine iterates
           -> map_batches(_EmbedActor, ActorPool(N),     one actor per worker: the
                          batch_size=64)                 embedder is built once each,
                                                         its threads = the actor's CPUs;
                                                         batches.embed_into_arrow makes
                                                         the Arrow rows of the schema
                                                         (embed(): the passage path)
           -> iter_batches on the driver                 streamed back, progress counted
      -> {source: pa.Table}                              the in-process engine's shape
      -> [lock] ONE merge_insert -> log -> FTS           store/writes.py, unchanged

    ensure_ray()   ray.init() already called (ray.init(address=...)): that cluster;
                   else a local one (ray.init(include_dashboard=False))

Why only chunk + embed move: what is stored (ids, ACL, hashes), which sources
change and the one all-or-nothing commit are decided by the same code as the
in-process engine, so the two engines cannot drift apart. The files are read
on the driver, where they are: their hashes decide what needs work before any
worker is asked.

Why the driver writes (and not lance-ray's distributed writer): an ingest is
one merge_insert that inserts new chunks and deletes the replaced sources'
old ones, taken under the write lock, followed by the log entry and the
full-text index refresh, all undone together on failure. lance-ray writes
fragments from the workers and commits an append or an overwrite: no
merge_insert, no lock, no undo. The driver holds the new rows in Arrow
(~1 KiB of vector per chunk plus its text) exactly as the in-process engine
does; embedding, not writing, is what costs time.

A worker that dies (OOM kill, a crash in native code) is restarted by Ray and
its batch retried up to ``RETRIES`` times; a batch that kills every attempt
fails the dataset, and the ingest raises before anything is written: the
table stays at its previous version. Ray Data's own default is to retry for
ever, which would hang an ingest on one poisonous document.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import KnowledgeBaseError, MissingDependencyError

if TYPE_CHECKING:
    import pyarrow as pa

    from selfrag_nb.store.embedders import Embedder
    from selfrag_nb.store.prepare import Prepared

__all__ = ["RAY_PIP", "RETRIES", "check_rebuilt", "embed_rows_ray", "ensure_ray", "import_ray"]

RAY_PIP = "pip install 'selfrag-nb[ray]'"
#: Restarts of a dead actor and retries of its batch before the ingest fails.
RETRIES = 2
#: Chunks per embedder call: the in-process engine's batch (kb_core._EMBED_BATCH).
EMBED_BATCH = 64
_SEQ = "_selfrag_seq"  # (source index << 32) | row index: puts rows back in order on the driver


def import_ray() -> Any:
    """The ``ray`` module, or MissingDependencyError naming the extra."""
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependencyError(
            f"engine='ray' needs Ray (ray[data]): {RAY_PIP}  (Colab: !{RAY_PIP})"
        ) from exc
    return ray


def ensure_ray(num_cpus: int | None = None) -> Any:
    """The cluster the caller connected to (``ray.init(address=...)``), else a
    local one started here. Returns the ``ray`` module."""
    ray = import_ray()
    if not ray.is_initialized():
        # RAY_ADDRESS in the environment makes ray.init() join that cluster instead
        ray.init(num_cpus=num_cpus, include_dashboard=False, ignore_reinit_error=True)
    return ray


def portable_embedder(embedder: Embedder) -> Any:
    """What the actors rebuild the embedder from: the object itself when it
    pickles (its options travel with it), else its registry name (MiniLM holds
    a lock and loads its weights once per actor)."""
    try:
        pickle.dumps(embedder)
    except (TypeError, AttributeError, pickle.PicklingError):
        return embedder.name
    return embedder


def _row_schema(schema: pa.Schema) -> pa.Schema:
    """The chunk rows between the two steps: the schema's columns but the
    vector and ingested_at, plus the order key."""
    import pyarrow as pa

    fields = [f for f in schema if f.name not in ("vector", "ingested_at")]
    return pa.schema([*fields, pa.field(_SEQ, pa.int64())])


def _chunk(batch: dict[str, Any], schema: pa.Schema) -> pa.Table:
    """A batch of sources -> their chunk rows, in the order rows() yields them.
    Typed by ``schema``: an empty ACL list stays a list of strings, so every
    block has the same Arrow schema."""
    import pyarrow as pa
    from ray import cloudpickle

    out: list[dict[str, Any]] = []
    for index, blob in zip(batch["index"], batch["rows"], strict=True):
        rows: Callable[[], Iterator[dict[str, Any]]] = cloudpickle.loads(blob)
        for n, row in enumerate(rows()):
            row[_SEQ] = (int(index) << 32) | n
            out.append(row)
    return pa.Table.from_pylist(out, schema=schema)


def fit_threads(embedder: Any, cpus: float) -> Any:
    """``embedder`` with its thread pool sized to ``cpus`` (the CPUs Ray gave
    the actor) when it would otherwise size it to the machine: MiniLM on
    onnxruntime takes one thread per core by default, so two actors on two
    cores ran four spinning threads and ingested at 0.60x the in-process rate
    (benchmarks/README.md, Ray engines). An explicit ``threads`` is kept."""
    if getattr(embedder, "threads", 0) is None:
        embedder.threads = max(1, int(cpus))
    return embedder


def actor_cpus() -> float:
    """CPUs Ray assigned to the calling actor (1 when it says none)."""
    import ray

    assigned: dict[str, float] = ray.get_runtime_context().get_assigned_resources()  # type: ignore[no-untyped-call]  # ray ships it unannotated
    return float(assigned.get("CPU", 1) or 1)


def check_rebuilt(embedder: Embedder, schema: pa.Schema) -> Embedder:
    """``embedder`` as an actor has it, refused unless its name and its
    question/passage scheme are the ones ``schema`` records: an embedder
    rebuilt from its registry name (``portable_embedder``) has lost the
    driver's options, and passages embedded another way would be stored
    beside the others without anything else noticing."""
    import json

    from selfrag_nb.errors import EmbedderError
    from selfrag_nb.store.embedders import embedder_scheme
    from selfrag_nb.store.kb_core import META_KEY

    meta = json.loads((schema.metadata or {}).get(META_KEY, b"{}"))
    got = (embedder.name, embedder_scheme(embedder))
    want = (meta.get("embedder", got[0]), meta.get("scheme", got[1]))
    if got != want:
        raise EmbedderError(
            f"a Ray worker built embedder {got[0]!r} with scheme {got[1]!r}, but the knowledge base "
            f"stores {want[0]!r} with scheme {want[1]!r}: make the embedder picklable so its options "
            "reach the workers, or register a name that builds it with them"
        )
    return embedder


class _EmbedActor:
    """One per worker: builds the embedder once, embeds batches into the
    Arrow rows of the knowledge base's schema (batches.embed_into_arrow:
    ``embed``, the passage path)."""

    def __init__(self, embedder: Any, schema: pa.Schema, now: str) -> None:
        from selfrag_nb.store.embedders import get_embedder

        built = get_embedder(embedder) if isinstance(embedder, str) else embedder
        self.embedder = fit_threads(check_rebuilt(built, schema), actor_cpus())
        self.schema = schema
        self.now = now

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa

        from selfrag_nb.store.batches import embed_into_arrow

        rows = batch.to_pylist()
        table = embed_into_arrow(self.embedder, rows, self.schema, self.now, batch=len(rows))
        return table.append_column(_SEQ, pa.array([int(r[_SEQ]) for r in rows], type=pa.int64()))


def embed_rows_ray(
    todo: list[Prepared],
    embedder: Embedder,
    schema: pa.Schema,
    now: str,
    *,
    workers: int | None = None,
    batch_size: int = EMBED_BATCH,
    on_chars: Callable[[int], None] | None = None,
) -> dict[str, pa.Table]:
    """Chunk and embed ``todo`` on Ray: an Arrow table of ``schema`` per
    source, rows in the order the in-process engine makes them.
    ``workers`` embedder actors (default: the cluster's CPUs);
    ``on_chars(n)`` is told the characters each returned batch embedded."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not todo:
        return {}
    ray = ensure_ray()
    from ray import cloudpickle

    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    dumps: Callable[[Any], bytes] = cloudpickle.dumps  # cloudpickle has no annotations
    items = [{"index": i, "rows": dumps(p.rows)} for i, p in enumerate(todo)]
    with warnings.catch_warnings():
        # Ray 2.60 takes the retry bounds only as ray_remote_args, deprecated for
        # Ray 2.64 (the extra pins ray below it): no named parameter exists yet.
        warnings.filterwarnings("ignore", message=r".*ray_remote_args.*deprecated")
        ds = (
            ray.data.from_items(items, override_num_blocks=min(len(items), max(workers * 4, 1)))
            .map_batches(
                _chunk,
                fn_kwargs={"schema": _row_schema(schema)},
                batch_size=1,
                batch_format="numpy",
                # no CPU reserved: the embedder actors hold one each, and a task
                # waiting for a CPU they hold would wait for ever (chunking is cheap)
                num_cpus=0,
                compute=ray.data.TaskPoolStrategy(size=workers),
                max_retries=RETRIES,
            )
            .map_batches(
                _EmbedActor,
                fn_constructor_kwargs={"embedder": portable_embedder(embedder), "schema": schema, "now": now},
                batch_size=batch_size,
                batch_format="pyarrow",
                compute=ray.data.ActorPoolStrategy(size=workers),
                max_restarts=RETRIES,
                max_task_retries=RETRIES,
            )
        )
    parts: list[pa.Table] = []
    try:
        for part in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            parts.append(part)
            if on_chars is not None:
                on_chars(sum(len(t) for t in part["text"].to_pylist()))
    except Exception as exc:
        raise KnowledgeBaseError(
            f"the Ray ingest failed before anything was written ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); the knowledge base is unchanged, "
            "fix the cause and run the ingest again"
        ) from exc
    if not parts:
        return {p.source: schema.empty_table() for p in todo}
    table = pa.concat_tables(parts).combine_chunks()
    table = table.take(pc.sort_indices(table[_SEQ]))
    seq = table[_SEQ].to_numpy()
    table = table.drop_columns([_SEQ]).cast(schema)
    out: dict[str, pa.Table] = {}
    owner = seq >> 32  # sorted: each source's rows are one slice
    for i, p in enumerate(todo):
        lo = int(np.searchsorted(owner, i, side="left"))
        hi = int(np.searchsorted(owner, i, side="right"))
        out[p.source] = table.slice(lo, hi - lo)
    return out
