"""Search at scale: the vector index against exact search on the same table.

    python benchmarks/bench_scale.py [--sizes 10000,100000] [--index-type IVF_PQ]
                                     [--queries 40] [--dir /tmp/x] [--keep] [--reuse]
                                     [--refine-factor 30] [--min-rows N] [--knobs nprobes=40]
                                     [--subjects N]

For each size N: a table of N chunks (hashing embedder, 256-d; each chunk is
about one of S subjects, S = max(100, N / 1,000) unless --subjects says: a
corpus ten times larger covers more subjects, not ten times as many chunks
per subject; with 100 subjects at 1M the IVF partitions degenerate, see
docs/scaling.md: 90 % English text of 30 words from its subject's
60 plus 10 from a 6,000-word vocabulary, 10 % Chinese text of 45 characters
from its subject's 40 plus 15 of 3,000; ACL columns like a company's folders: 10 % public, the
rest one or two of 40 roles, 30 % of those also one named user, a quarter
of the rows in one of three tenants) is written in batches of 20,000 rows,
then ``kb.optimize()`` builds the full-text index and, past
``IndexPolicy.min_rows``, the vector index. Every query (six words or
characters of one subject) runs as a user of tenant t1 with two roles (about 14 % of the rows are visible to them), k=10:

- vector search p50/p95, indexed vs exact (``exact=True``) on the same table,
  interleaved query by query; the ratio is indexed p50 / exact p50
- recall@10 of the indexed search against the exact one with the same filter
  (and with ties counted: a hit exactly as close as the exact 10th counts)
- hybrid p50/p95 (indexed), full-text p50
- build time (writing the rows, then optimize) and disk size; RSS after the searches

The rows are written with the knowledge base's own schema and embedder but
without the file loaders (ingesting a million generated files would measure
the loaders, not search); kb.optimize() is the same call an ingest makes past
the thresholds.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from selfrag_nb.store.kb import KnowledgeBase  # noqa: E402 - after sys.path set-up
from selfrag_nb.store.types import IndexPolicy, User  # noqa: E402 - after sys.path set-up

BATCH = 20_000
USER = User("u7", roles=["r3", "r11"], tenant="t1")


def _vocab(n: int = 6000) -> list[str]:
    rng = random.Random(7)
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))))
    return sorted(words)


VOCAB = _vocab()
HANZI = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
MAX_SUBJECTS = 10_000
_trng = random.Random(5)
#: every subject has its own words (and characters): documents cluster by
#: subject, as real ones do (drawn in a fixed order, so the first 100 subjects
#: are the same whatever the count)
TOPIC_WORDS: list[list[str]] = []
TOPIC_HANZI: list[list[str]] = []
for _ in range(MAX_SUBJECTS):
    TOPIC_WORDS.append(_trng.sample(VOCAB, 60))
    TOPIC_HANZI.append(_trng.sample(HANZI, 40))


def subjects_for(n: int) -> int:
    """Subjects in a corpus of ``n`` chunks (about 1,000 chunks each, at least 100)."""
    return max(100, min(MAX_SUBJECTS, n // 1000))


def _text(rng: random.Random, i: int, subjects: int) -> str:
    topic = rng.randrange(subjects)
    if i % 10 == 0:
        chars = [rng.choice(TOPIC_HANZI[topic]) for _ in range(45)] + [rng.choice(HANZI) for _ in range(15)]
        rng.shuffle(chars)
        return "".join(chars)
    words = [rng.choice(TOPIC_WORDS[topic]) for _ in range(30)] + [rng.choice(VOCAB) for _ in range(10)]
    rng.shuffle(words)
    return " ".join(words)


def _batches(kb: KnowledgeBase, n: int, subjects: int) -> Iterator[Any]:
    """Arrow tables of the knowledge base's schema, BATCH rows each."""
    import pyarrow as pa

    rng = random.Random(1)
    schema = kb._schema()
    now = "2026-01-01T00:00:00+00:00"
    for start in range(0, n, BATCH):
        ids = range(start, min(n, start + BATCH))
        texts = [_text(rng, i, subjects) for i in ids]
        roles, users, tenants = [], [], []
        for i in ids:
            if rng.random() < 0.1:
                roles.append(["public"])
                users.append([])
            else:
                roles.append([f"r{rng.randrange(40)}" for _ in range(rng.randint(1, 2))])
                users.append([f"u{rng.randrange(500)}"] if rng.random() < 0.3 else [])
            tenants.append("" if i % 4 else f"t{i % 3}")
        vecs = kb.embedder.embed(texts)
        m = len(texts)
        cols = {
            "chunk_id": [f"c{i}" for i in ids],
            "doc_id": [f"d{i}" for i in ids],
            "source": [f"gen.jsonl#{i}" for i in ids],
            "title": [""] * m,
            "heading": [""] * m,
            "text": texts,
            "context": [""] * m,
            "search_text": texts,
            "ordinal": [0] * m,
            "content_hash": [f"h{i}" for i in ids],
            "acl_roles": roles,
            "acl_users": users,
            "tenant": tenants,
            "lang": ["zh" if i % 10 == 0 else "en" for i in ids],
            "metadata": ["{}"] * m,
            "ingested_at": [now] * m,
            "origin": [""] * m,
        }
        arrays = [pa.array(cols[f.name], type=f.type) for f in schema if f.name != "vector"]
        arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), kb.embedder.dim))
        yield pa.Table.from_arrays(arrays, schema=schema)


def build(path: Path, n: int, policy: IndexPolicy, subjects: int) -> tuple[KnowledgeBase, float, float]:
    kb = KnowledgeBase.open(path, embedder="hashing", index_policy=policy)
    t0 = time.perf_counter()
    with kb._write_lock():
        for table in _batches(kb, n, subjects):
            t = kb._tbl()
            if t is None:
                kb._table = kb._create_table(table)
            else:
                t.add(table)
            print(f"  wrote {len(kb)} rows, {time.perf_counter() - t0:.0f} s", flush=True)
    t1 = time.perf_counter()
    report = kb.optimize()
    t2 = time.perf_counter()
    print(f"  optimize: {report}", flush=True)
    return kb, t1 - t0, t2 - t1


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def _queries(n: int, subjects: int) -> list[str]:
    rng = random.Random(11)
    out = []
    for i in range(n):
        topic = rng.randrange(subjects)
        if i % 5 == 4:
            out.append("".join(rng.sample(TOPIC_HANZI[topic], 6)))
        else:
            out.append(" ".join(rng.sample(TOPIC_WORDS[topic], 6)))
    return out


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def measure(kb: KnowledgeBase, queries: list[str], knobs: dict[str, Any]) -> dict[str, float]:
    for q in queries[:3]:  # warm the caches of both paths
        kb.search(q, mode="vector", user=USER, **knobs)
        kb.search(q, mode="vector", user=USER, exact=True)
        kb.search(q, mode="hybrid", user=USER, **knobs)
    idx: list[float] = []
    ex: list[float] = []
    recall: list[float] = []
    close: list[float] = []
    for q in queries:
        # interleaved, so both paths see the same machine load
        t = time.perf_counter()
        got = kb.search(q, k=10, mode="vector", user=USER, **knobs)
        idx.append(time.perf_counter() - t)
        t = time.perf_counter()
        want = kb.search(q, k=10, mode="vector", user=USER, exact=True)
        ex.append(time.perf_counter() - t)
        truth = {h.chunk_id for h in want.hits}
        recall.append(len(truth & {h.chunk_id for h in got.hits}) / max(1, len(truth)))
        # ties: a hit as close as the exact k-th is as good as it (the refine
        # step makes the indexed distances exact, so they compare)
        kth = max(h.scores["vector_distance"] for h in want.hits)
        close.append(sum(h.scores["vector_distance"] <= kth + 1e-6 for h in got.hits) / max(1, len(truth)))
    hyb: list[float] = []
    fts: list[float] = []
    for q in queries:
        t = time.perf_counter()
        kb.search(q, k=10, mode="hybrid", user=USER, **knobs)
        hyb.append(time.perf_counter() - t)
        t = time.perf_counter()
        kb.search(q, k=10, mode="fts", user=USER)
        fts.append(time.perf_counter() - t)
    return {
        "vec_p50": _pct(idx, 0.5) * 1e3,
        "vec_p95": _pct(idx, 0.95) * 1e3,
        "exact_p50": _pct(ex, 0.5) * 1e3,
        "exact_p95": _pct(ex, 0.95) * 1e3,
        "ratio": _pct(idx, 0.5) / _pct(ex, 0.5),
        "recall": statistics.mean(recall),
        "recall_ties": statistics.mean(close),
        "hyb_p50": _pct(hyb, 0.5) * 1e3,
        "hyb_p95": _pct(hyb, 0.95) * 1e3,
        "fts_p50": _pct(fts, 0.5) * 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="comma list of chunk counts")
    ap.add_argument("--index-type", default=IndexPolicy().index_type, choices=["IVF_PQ", "IVF_HNSW_SQ"])
    ap.add_argument("--min-rows", type=int, default=None, help="IndexPolicy.min_rows (default: the policy's)")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument(
        "--subjects", type=int, default=None, help="subjects per table (default: max(100, N/1000))"
    )
    ap.add_argument("--knobs", default="", help="e.g. nprobes=30,refine_factor=5,ef=100 (search kwargs)")
    ap.add_argument("--dir", default=None, help="parent folder for the tables (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the tables")
    ap.add_argument(
        "--refine-factor", type=int, default=None, help="IndexPolicy.refine_factor (default: the policy's)"
    )
    ap.add_argument(
        "--reuse", action="store_true", help="measure the tables --keep left in --dir instead of building"
    )
    args = ap.parse_args()
    knobs = {k: int(v) for k, v in (kv.split("=") for kv in args.knobs.split(",") if kv)}
    policy_args: dict[str, Any] = {"index_type": args.index_type}
    if args.min_rows is not None:
        policy_args["min_rows"] = args.min_rows
    if args.refine_factor is not None:
        policy_args["refine_factor"] = args.refine_factor
    policy = IndexPolicy(**policy_args)
    print(f"policy: {policy!r}; knobs: {knobs or 'policy defaults'}")
    parent = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_scale_"))
    parent.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            path = parent / f"kb_{n}"
            subjects = args.subjects or subjects_for(n)
            queries = _queries(args.queries, subjects)
            print(f"\n## {n} chunks, {subjects} subjects")
            if args.reuse and path.exists():
                kb, t_write, t_opt = KnowledgeBase.open(path, index_policy=policy), float("nan"), float("nan")
            else:
                shutil.rmtree(path, ignore_errors=True)
                kb, t_write, t_opt = build(path, n, policy, subjects)
            visible = kb._tbl().count_rows(kb.search("x", user=USER, mode="fts").access_filter)
            index = kb.describe()["indexes"]
            print(
                f"  write {t_write:.1f} s, optimize (indexes) {t_opt:.1f} s; visible to the user: {visible} rows"
            )
            print(f"  indexes: {index}")
            r = measure(kb, queries, knobs)
            r.update(
                n=n, subjects=subjects, write_s=t_write, index_s=t_opt, disk_mb=_du_mb(path), rss_mb=_rss_mb()
            )
            r["indexed"] = any("vector" in i and not i.startswith("FTS") for i in index)
            rows.append(r)
            print(
                "  vector p50 {vec_p50:.1f} ms p95 {vec_p95:.1f} | exact p50 {exact_p50:.1f} p95 {exact_p95:.1f}"
                " | ratio {ratio:.2f}x | recall@10 {recall:.3f} (ties counted {recall_ties:.3f}) | hybrid p50 {hyb_p50:.1f} p95 {hyb_p95:.1f}"
                " | fts p50 {fts_p50:.1f} | disk {disk_mb:.0f} MB | RSS {rss_mb:.0f} MB".format(**r)
            )
            kb.close()
            if not args.keep:
                shutil.rmtree(path, ignore_errors=True)
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(parent, ignore_errors=True)
    print(
        "\n| chunks | subjects | vector index | vector p50 / p95 | exact p50 / p95 | ratio | recall@10 "
        "| hybrid p50 / p95 | fts p50 | write + index build | disk | RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['subjects']:,} | {policy.index_type if r['indexed'] else 'none (exact)'} "
            f"| {r['vec_p50']:.1f} / {r['vec_p95']:.1f} ms | {r['exact_p50']:.1f} / {r['exact_p95']:.1f} ms "
            f"| {r['ratio']:.2f}x | {r['recall']:.3f} ({r['recall_ties']:.3f}) | {r['hyb_p50']:.1f} / {r['hyb_p95']:.1f} ms "
            f"| {r['fts_p50']:.1f} ms | {r['write_s']:.0f} s + {r['index_s']:.0f} s | {r['disk_mb']:.0f} MB "
            f"| {r['rss_mb']:.0f} MB |"
        )


if __name__ == "__main__":
    main()
