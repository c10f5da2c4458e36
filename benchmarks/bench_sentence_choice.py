"""Would meaning from the embedding model choose a better answer sentence?

The offline generator quotes the evidence sentence its lexical score ranks
first (``offline/generate._candidates``). This measures, on the third-party
tune sets, whether the default embedder's similarity between the question and
each candidate sentence (all-MiniLM-L6-v2, the vectors retrieval already uses)
would lead with a sentence holding the answer more often.

    questions_<set>.jsonl (answerable, with must_include)
      -> SelfRAG(kb, models={"generate": Recording()})   the offline model, which
         also keeps the first grounded generate call's inputs
      -> the generator's candidates for that call, best lexical score first
      -> lead sentence chosen by each rule; counted when it holds every
         must_include string (NFKC, case folded, as sr.evaluate matches)

    rules      lexical        the generator's own first candidate
               similarity     highest cosine(question, sentence) alone
               within <f>     highest cosine among candidates scoring >= f x the best
               sum w=<w>      lexical score / best + w x cosine
    denominator  answerable questions whose candidates hold a sentence with every
                 must_include string (a question declined before generation, or
                 whose answer no single quotable sentence holds, is counted apart)

    .venv/bin/python benchmarks/bench_sentence_choice.py --half tune13 [--half tune12 ...]
        [--dir KB]   (the knowledge base bench_thirdparty.py builds; the same default)

A must_include hit is a proxy for a right lead sentence, not a judged answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from selfrag_nb import KnowledgeBase, SelfRAG
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.offline import OfflineModel
from selfrag_nb.llm.offline.generate import _candidates
from selfrag_nb.llm.offline.question import (
    effective_question,
    without_examples,
    without_excluded,
    without_idioms,
)
from selfrag_nb.llm.schemas import GenerateInputs
from selfrag_nb.resources import cache_dir
from selfrag_nb.store.embedders import get_embedder
from selfrag_nb.store.types import User

HERE = Path(__file__).resolve().parent / "thirdparty"
WITHIN = (0.9, 0.8, 0.7)
WEIGHTS = (0.25, 0.5, 1.0)


class Recording(OfflineModel):
    """The offline model, keeping every grounded or strict generate call's inputs."""

    def __init__(self) -> None:
        self.calls: list[GenerateInputs] = []

    def complete(self, request: ModelRequest) -> Completion:
        if isinstance(request.inputs, GenerateInputs) and request.inputs.mode != "direct":
            self.calls.append(request.inputs)
        return super().complete(request)


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _unit(vectors: Any) -> Any:
    v = np.asarray(vectors, dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def measure(kb: KnowledgeBase, path: Path, embedder: str = "minilm") -> dict[str, int]:
    """Counts over the answerable questions of one question file (see the module doc)."""
    rec = Recording()
    rag = SelfRAG(kb, models={"generate": rec})
    embed = get_embedder(embedder)
    counts: dict[str, int] = {"answerable with must_include": 0, "no generate call": 0}
    counts["no candidate holds the answer"] = counts["a candidate holds it"] = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        q = json.loads(line) if line.strip() else None
        if not q or q["category"] != "answerable" or not q.get("must_include"):
            continue
        counts["answerable with must_include"] += 1
        rec.calls.clear()
        rag.ask(q["question"], user=User(**q["user"]))
        if not rec.calls:
            counts["no generate call"] += 1
            continue
        inputs = rec.calls[0]
        # the question as the generator reads it (generate.generate does the same)
        question = without_excluded(
            without_examples(without_idioms(effective_question(inputs.question, inputs.history)))
        )
        cands = _candidates(inputs, question)
        holds = [all(_norm(m) in _norm(c.text) for m in q["must_include"]) for c in cands]
        if not any(holds):
            counts["no candidate holds the answer"] += 1
            continue
        counts["a candidate holds it"] += 1
        vectors = _unit(embed.embed([question, *(c.text for c in cands)]))
        sim = vectors[1:] @ vectors[0]
        lex = np.array([c.score for c in cands]) / max(cands[0].score, 1e-9)
        picks = {"lexical": 0, "similarity": int(np.argmax(sim))}
        for f in WITHIN:
            picks[f"within {f}"] = int(np.argmax(np.where(lex >= f, sim, -np.inf)))
        for w in WEIGHTS:
            picks[f"sum w={w}"] = int(np.argmax(lex + w * sim))
        for rule, i in picks.items():
            counts[f"lead holds it: {rule}"] = counts.get(f"lead holds it: {rule}", 0) + holds[i]
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", action="append", required=True, help="a question set, e.g. tune13 (repeatable)")
    ap.add_argument("--dir", type=Path, default=None, help="knowledge base (bench_thirdparty.py's default)")
    a = ap.parse_args()
    kb_dir = a.dir or cache_dir() / "thirdparty_kb_minilm"
    if not kb_dir.exists():
        sys.exit(f"{kb_dir}: no knowledge base; run benchmarks/bench_thirdparty.py once to build it")
    kb = KnowledgeBase.open(str(kb_dir), embedder="minilm")
    total: dict[str, int] = {}
    for half in a.half:
        for k, v in measure(kb, HERE / f"questions_{half}.jsonl").items():
            total[k] = total.get(k, 0) + v
    base = total["a candidate holds it"]
    print(f"sets: {', '.join(a.half)}")
    for k, v in total.items():
        print(f"{k:38s} {v}" + (f"/{base}" if k.startswith("lead") else ""))


if __name__ == "__main__":
    main()
