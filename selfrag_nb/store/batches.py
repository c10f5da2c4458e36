"""Chunk rows -> embedded Arrow tables, one batch of Python rows alive at a time.

    embed_into_arrow(embedder, rows (an iterator), schema, now, batch, on_batch)
      for each next ``batch`` rows:
        embedder.embed(search_text)         (n, dim) float32, shape checked
        -> pa.RecordBatch                   string columns + one FixedSizeList vector
                                            column over the float32 buffer
      -> pa.Table (the batches, not copied) for KnowledgeBase._write's one commit

Why: a 50 MB text file was held as a list of every chunk's row dict, again
as dicts with their vectors (a numpy view each), then copied by
pa.Table.from_pylist: the peak grew by about 700-830 MB. Fed by a lazy
chunker (chunking.iter_chunks), only the file's text and the Arrow columns
(text, search text, 1 KiB of float32 per ~800-character chunk: about 3.8x
the file) stay; the rest of the peak is LanceDB's write and index.

The batches' buffers come from the system allocator, not pyarrow's default
pool: the memory the chunk strings give back to malloc is then reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

    from selfrag_nb.store.embedders import Embedder

__all__ = ["EmbedderShapeError", "embed_into_arrow"]


class EmbedderShapeError(ValueError):
    """The embedder returned vectors of the wrong shape for a batch."""


def _record_batch(
    schema: pa.Schema, rows: list[dict[str, Any]], vectors: np.ndarray, now: str
) -> pa.RecordBatch:
    import pyarrow as pa

    pool = pa.system_memory_pool()
    arrays = []
    for f in schema:
        if f.name == "vector":
            flat = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)
            arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, memory_pool=pool), type=f.type))
        elif f.name == "ingested_at":
            arrays.append(pa.array([now] * len(rows), type=f.type, memory_pool=pool))
        else:
            arrays.append(pa.array([r[f.name] for r in rows], type=f.type, memory_pool=pool))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def embed_into_arrow(
    embedder: Embedder,
    rows: Iterable[dict[str, Any]],
    schema: pa.Schema,
    now: str,
    *,
    batch: int,
    on_batch: Callable[[int], None] | None = None,
) -> pa.Table:
    """Embed ``rows`` (dicts of the schema's columns but ``vector`` and
    ``ingested_at``) ``batch`` at a time into one Arrow table of ``schema``.

    Only one batch of dicts is alive at a time when ``rows`` is an iterator.
    ``on_batch(chars)`` is told the characters of text each batch embedded.
    Raises EmbedderShapeError when a batch of vectors does not have the shape
    ``(len(batch), embedder.dim)``."""
    import pyarrow as pa

    batches = []
    it = iter(rows)
    while part := list(islice(it, batch)):
        vecs = embedder.embed([r["search_text"] for r in part])
        if getattr(vecs, "shape", None) != (len(part), embedder.dim):
            raise EmbedderShapeError(
                f"returned shape {getattr(vecs, 'shape', type(vecs).__name__)}, "
                f"expected ({len(part)}, {embedder.dim})"
            )
        batches.append(_record_batch(schema, part, vecs, now))
        if on_batch is not None:
            on_batch(sum(len(r["text"]) for r in part))
    return pa.Table.from_batches(batches, schema=schema)
