"""Split labelled questions into a tuning half and a held-out half.

    python benchmarks/thirdparty/split.py QUESTIONS.jsonl
      each question -> half_of(id): sha256(SEED + ":" + id), first byte < 128 -> "tune", else "heldout"
      -> questions_tune.jsonl, questions_heldout.jsonl next to this file (input order kept)

    python benchmarks/thirdparty/split.py --round3 questions_round3.jsonl
      the same with ROUND3_SEED (a fresh set written later, ids r3-...)
      -> questions_tune3.jsonl, questions_heldout2.jsonl

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
#: The same rule for the third round of questions (questions_round3.jsonl): the
#: first of selfrag-thirdparty-r3-1, -2, ... with 40 % of every category in each
#: half, picked on the category counts alone; -1 already did.
ROUND3_SEED = "selfrag-thirdparty-r3-1"
#: Output file names per half: the first split, and the third round's.
OUTPUTS = {SEED: ("tune", "heldout"), ROUND3_SEED: ("tune3", "heldout2")}


def half_of(qid: str, seed: str = SEED) -> str:
    """ "tune" or "heldout", from a seeded hash of the question id."""
    return "tune" if hashlib.sha256(f"{seed}:{qid}".encode()).digest()[0] < 128 else "heldout"


def main() -> None:
    args = sys.argv[1:]
    seed = SEED
    if args[:1] == ["--round3"]:
        seed, args = ROUND3_SEED, args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    lines = [ln for ln in Path(args[0]).read_text(encoding="utf-8").splitlines() if ln.strip()]
    halves: dict[str, list[str]] = {"tune": [], "heldout": []}
    for ln in lines:
        halves[half_of(json.loads(ln)["id"], seed)].append(ln)
    for name, rows in zip(OUTPUTS[seed], halves.values(), strict=True):
        (HERE / f"questions_{name}.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        cats: dict[str, int] = {}
        for r in rows:
            c = json.loads(r)["category"]
            cats[c] = cats.get(c, 0) + 1
        print(name, len(rows), cats)


if __name__ == "__main__":
    main()
