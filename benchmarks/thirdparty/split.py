"""Split labelled questions into a tuning half and a held-out half.

    python benchmarks/thirdparty/split.py QUESTIONS.jsonl
      each question -> half_of(id): sha256(SEED + ":" + id), first byte < 128 -> "tune", else "heldout"
      -> questions_tune.jsonl, questions_heldout.jsonl next to this file (input order kept)

The half depends on the id alone, never on the text or on how the pipeline
does on the question: nobody picks which questions are held out. Tune rules on
questions_tune.jsonl only; report the held-out half as aggregate figures.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The first of selfrag-thirdparty-1, -2, ... under which every category has at
#: least 40 % of its questions in each half; picked on the category counts alone,
#: before the pipeline had answered any question.
SEED = "selfrag-thirdparty-3"


def half_of(qid: str) -> str:
    """ "tune" or "heldout", from a seeded hash of the question id."""
    return "tune" if hashlib.sha256(f"{SEED}:{qid}".encode()).digest()[0] < 128 else "heldout"


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lines = [ln for ln in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines() if ln.strip()]
    halves: dict[str, list[str]] = {"tune": [], "heldout": []}
    for ln in lines:
        halves[half_of(json.loads(ln)["id"])].append(ln)
    for name, rows in halves.items():
        (HERE / f"questions_{name}.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        cats: dict[str, int] = {}
        for r in rows:
            c = json.loads(r)["category"]
            cats[c] = cats.get(c, 0) + 1
        print(name, len(rows), cats)


if __name__ == "__main__":
    main()
