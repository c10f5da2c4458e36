"""Answer quality on text nobody on the project wrote: package READMEs.

    benchmarks/thirdparty/docs/public/      READMEs of installed packages (ingested public)
    benchmarks/thirdparty/docs/restricted/  about 20 more, ingested with acl roles ["finance"]
    benchmarks/thirdparty/questions_{tune,heldout}.jsonl   labelled questions, split by a
                                            seeded hash of the id (split.py)
    benchmarks/thirdparty/questions_tune2.jsonl  a second tune set (ids t2-...), written
                                            after the first tune half was used up; never
                                            part of the split nor of --half both
    benchmarks/thirdparty/questions_{tune3,heldout2}.jsonl  a third round (ids r3-...) on
                                            READMEs no earlier set asks about, split by
                                            split.ROUND3_SEED; heldout2 is run and judged by
                                            a second reader only; neither is part of --half both
    benchmarks/thirdparty/questions_tune4.jsonl  a fourth tune set (ids t4-...), mostly
                                            answerable questions of varied forms; not split,
                                            never part of --half both
    benchmarks/thirdparty/questions_tune5.jsonl  a fifth tune set (ids t5-...) on READMEs no
                                            earlier set asks about, answerable questions in
                                            the forms analysts use; not split, never part of
                                            --half both
    benchmarks/thirdparty/questions_tune6.jsonl  a sixth tune set (ids t6-...), written like the
                                            fifth from READMEs no earlier set asks about; not
                                            split, never part of --half both
    benchmarks/thirdparty/questions_tune7.jsonl  a seventh tune set (ids t7-...), written like the
                                            sixth from READMEs no held-out set asks about; not
                                            split, never part of --half both
    benchmarks/thirdparty/questions_tune8.jsonl  an eighth tune set (ids t8-...), new facts of
                                            READMEs no held-out set asks about; not split,
                                            never part of --half both
    benchmarks/thirdparty/questions_tune9.jsonl  a ninth tune set (ids t9-...), written like the
                                            eighth; not split, never part of --half both
    benchmarks/thirdparty/questions_tune10.jsonl  a tenth tune set (ids t10-...), written like the
                                            ninth; not split, never part of --half both
    benchmarks/thirdparty/questions_tune11.jsonl  an eleventh tune set (ids t11-...), written like
                                            the tenth; not split, never part of --half both
    benchmarks/thirdparty/questions_tune12.jsonl  a twelfth tune set (ids t12-...), written like
                                            the eleventh; not split, never part of --half both
    benchmarks/thirdparty/questions_tune13.jsonl  a thirteenth tune set (ids t13-...), written like
                                            the twelfth; not split, never part of --half both
    benchmarks/thirdparty/questions_tune14.jsonl  a fourteenth tune set (ids t14-...), written like
                                            the thirteenth; not split, never part of --half both
    benchmarks/thirdparty/judgments.jsonl   a person's verdict per (id, sha of the exact answer)

    KnowledgeBase.open(--dir, embedder=--embedder) <- ingest public, ingest restricted (finance)
    for each half, each variant: sr.evaluate(SelfRAG(kb) [offline model], questions, variants)
      -> figures, each with its denominator:
         retrieval      answerable questions with a relevant source in the top 5 hits; MRR
         answered       answerable questions ending answered / disclaimed / regenerated
         must_include   answerable questions whose answer holds every must_include string
         correct        answerable questions whose answer a person judged correct
         wrong accepted answers given (any category) judged wrong or missing a must_include
         unanswerable   refused or clarify
         restricted     refused or clarify; secrets leaked anywhere in the trace (must be 0)
      answers nobody judged yet are counted "unjudged" (never correct) and written to
      benchmarks/thirdparty/unjudged.jsonl for a person to judge
    where answers are lost, per set (counts only, so a second reader can report them
    without reading an answer):
      in_evidence  answerable questions with must_include whose every string is in the
                   heading path + clean text of the top 5 / top 10 hits for the question
                   as asked: what an answer quoting those hits could get right at most
      paired       with --variants plain_rag: per answerable question, Self-RAG's result
                   beside plain RAG's (correct / wrong / declined / unjudged), counted
      by_check     with --variants plain_rag: per question, the check that had Self-RAG's
                   last word (a given answer's usefulness verdict, a declined one's
                   reason_kind) beside what came of it: a given answer judged correct or
                   wrong, a declined answerable question by plain RAG's result on it
    --json also records the commit the package came from and whether the package or
    benchmarks differ from it ("code": null outside a git checkout)

    .venv/bin/python benchmarks/bench_thirdparty.py --half both [--variants default]
        --half tune | heldout | tune2 | tune3 | heldout2 | tune4 | heldout3 | tune5 | tune6 | tune7 | tune8 | tune9 | tune10 | tune11 | tune12 | tune13 | tune14 | both
                                      (both = tune and heldout; the others only by name)
        [--dir KB] [--embedder minilm] [--write-answers answers.jsonl] [--json figures.json]

--dir defaults to <cache>/thirdparty_kb_<embedder> ($SELFRAG_NB_CACHE moves it): the
first run builds it (3,171 chunks; about 95 s with MiniLM on 2 cores), later runs
only hash the files. A variant name other than "default" is passed to sr.evaluate as a preset name
(e.g. "plain_rag" once it exists); an unknown preset is reported and skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import selfrag_nb
from selfrag_nb.cleantext import clean_text
from selfrag_nb.errors import InputError
from selfrag_nb.eval.metrics import EvalRow, reciprocal_rank, source_matches
from selfrag_nb.eval.questions import QuestionSet, questions
from selfrag_nb.eval.runner import evaluate
from selfrag_nb.pipeline import SelfRAG
from selfrag_nb.resources import cache_dir
from selfrag_nb.store.kb import KnowledgeBase

HERE = Path(__file__).resolve().parent / "thirdparty"
DOCS = HERE / "docs"
HALVES = ("tune", "heldout")
#: Question sets run only when named: the fresh sets are not part of "both",
#: so the figures of the first split's halves keep their meaning.
EXTRA_SETS = (
    "tune2",
    "tune3",
    "heldout2",
    "tune4",
    "heldout3",
    "tune5",
    "tune6",
    "tune7",
    "tune8",
    "tune9",
    "tune10",
    "tune11",
    "tune12",
    "tune13",
    "tune14",
)
GIVEN = frozenset({"answered", "disclaimed", "regenerated", "direct"})
ANSWERED = frozenset({"answered", "disclaimed", "regenerated"})
DECLINED = frozenset({"refused", "clarify"})
TOP = 5


def _norm(text: str) -> str:
    """As sr.evaluate matches must_include strings: NFKC, case folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def answer_sha(answer: str | None) -> str:
    """First 16 hex digits of sha256 of the exact final answer text."""
    return hashlib.sha256((answer or "").encode("utf-8")).hexdigest()[:16]


def build_kb(path: Path, embedder: str) -> tuple[KnowledgeBase, dict[str, Any]]:
    """Open (or create) the knowledge base and ingest both folders; unchanged
    files are left alone, so a second run costs a hash per file."""
    t0 = time.perf_counter()
    kb = KnowledgeBase.open(str(path), embedder=embedder)
    pub = kb.ingest(DOCS / "public")
    res = kb.ingest(DOCS / "restricted", acl={"roles": ["finance"]})
    info: dict[str, Any] = {
        "dir": str(path),
        "embedder": embedder,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    for name, rep in (("public", pub), ("restricted", res)):
        info[name] = {k: len(getattr(rep, k)) for k in ("added", "updated", "unchanged", "skipped")}
        if rep.skipped:
            info[name]["skipped_files"] = [list(s) for s in rep.skipped]
    return kb, info


def load_judgments(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if path.is_file():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                j = json.loads(line)
                if not isinstance(j.get("correct"), bool):
                    raise SystemExit(f"{path}:{n}: 'correct' must be true or false")
                out[(j["id"], j["answer_sha"])] = j
    return out


def run_variant(
    rag: SelfRAG, qs: QuestionSet, variant: str, *, concurrency: int, out: Path
) -> list[EvalRow] | str:
    """Rows of one variant, or the reason it could not run."""
    try:
        report = evaluate(
            rag,
            qs,
            None if variant == "default" else variant,
            concurrency=concurrency,
            out=out,
            progress=False,
            k=TOP,
        )
    except InputError as exc:
        return f"sr.evaluate does not accept variants={variant!r}: {exc}"
    return list(report.rows)


def _frac(n: int, d: int) -> dict[str, Any]:
    return {"n": n, "of": d, "rate": round(n / d, 3) if d else None}


def figures(
    rows: Sequence[EvalRow], qs: QuestionSet, judged: dict[tuple[str, str], dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The figures of one half under one variant (rows may hold several
    variants of a preset: call once per variant), and the answers nobody judged."""
    by_id = {q.id: q for q in qs}
    ans = [r for r in rows if r.category == "answerable"]
    una = [r for r in rows if r.category == "unanswerable"]
    res = [r for r in rows if r.category == "restricted"]
    unjudged: list[dict[str, Any]] = []

    def verdict(r: EvalRow) -> bool | None:
        """True/False from judgments.jsonl; None when not judged."""
        j = judged.get((r.id, answer_sha(r.answer)))
        if j is None:
            q = by_id[r.id]
            unjudged.append(
                {
                    "id": r.id,
                    "answer_sha": answer_sha(r.answer),
                    "answer": r.answer,
                    "correct": None,
                    "note": "",
                    "question": r.question,
                    "outcome": r.outcome,
                    "must_include": q.must_include,
                    "relevant": q.relevant,
                    "top_source": r.retrieved[0] if r.retrieved else None,
                }
            )
            return None
        return bool(j["correct"])

    def include_ok(r: EvalRow) -> bool:
        return len(r.must_include_hits) == r.must_include_total

    in_top = sum(1 for r in ans if any(source_matches(s, r.relevant) for s in r.retrieved[:TOP]))
    mrr = sum(reciprocal_rank(r.retrieved, r.relevant) or 0.0 for r in ans)
    given = [r for r in rows if r.outcome in GIVEN]
    verdicts = {r.id: verdict(r) for r in given}
    correct = sum(1 for r in ans if r.outcome in ANSWERED and verdicts.get(r.id) is True)
    ans_unjudged = sum(1 for r in ans if r.outcome in ANSWERED and verdicts.get(r.id) is None)
    wrong = [r for r in given if verdicts[r.id] is False or (r.must_include_total and not include_ok(r))]
    wrong_unjudged = sum(1 for r in given if r not in wrong and verdicts[r.id] is None)
    fig = {
        "questions": {"answerable": len(ans), "unanswerable": len(una), "restricted": len(res)},
        "retrieval_top5": _frac(in_top, len(ans)),
        "retrieval_mrr": round(mrr / len(ans), 3) if ans else None,
        "answered": _frac(sum(1 for r in ans if r.outcome in ANSWERED), len(ans)),
        "must_include": _frac(sum(1 for r in ans if r.outcome in ANSWERED and include_ok(r)), len(ans)),
        "correct_judged": _frac(correct, len(ans)),
        "answerable_unjudged": ans_unjudged,
        "wrong_accepted": _frac(len(wrong), len(given)),
        "wrong_accepted_unjudged": wrong_unjudged,
        "unanswerable_declined": _frac(sum(1 for r in una if r.outcome in DECLINED), len(una)),
        "restricted_declined": _frac(sum(1 for r in res if r.outcome in DECLINED), len(res)),
        "restricted_leaks": sum(1 for r in res if r.secret_leaks),
        "leaks_any_question": sum(r.secret_leaks for r in rows),
        "errors": sum(1 for r in rows if r.error),
        "outcomes": {
            o: sum(1 for r in rows if r.outcome == o) for o in sorted({str(r.outcome) for r in rows})
        },
    }
    return fig, unjudged


def in_evidence(kb: KnowledgeBase, qs: QuestionSet, ks: Sequence[int] = (TOP, 10)) -> dict[str, Any]:
    """Answerable questions whose every must_include string is in what a model
    reads of the top k hits for the question as asked (heading path + clean
    text, the asking user's access): the most an answer quoting those hits
    could get right. Plain RAG generates from the top 5; Self-RAG's grade and
    rerank choose from the top 10. Questions without must_include are not counted."""
    labelled = [q for q in qs if q.category == "answerable" and q.must_include]
    found = dict.fromkeys(ks, 0)
    for q in labelled:
        hits = kb.search(q.question, k=max(ks), user=q.make_user())
        for k in ks:
            read = _norm(" ".join(f"{h.heading}\n{clean_text(h.text)}" for h in hits[:k]))
            found[k] += all(_norm(s) in read for s in q.must_include)
    return {f"top{k}": _frac(n, len(labelled)) for k, n in found.items()}


def _state(r: EvalRow, judged: dict[tuple[str, str], dict[str, Any]]) -> str:
    """correct / wrong (a person's judgment), declined (refused or clarify),
    unjudged, or other (a direct reply, an error)."""
    if r.outcome in DECLINED:
        return "declined"
    if r.outcome not in ANSWERED:
        return "other"
    j = judged.get((r.id, answer_sha(r.answer)))
    if j is None:
        return "unjudged"
    return "correct" if j["correct"] else "wrong"


def paired(
    rows: Sequence[EvalRow], judged: dict[tuple[str, str], dict[str, Any]], a: str, b: str
) -> dict[str, int]:
    """Per answerable question, variant ``a``'s result beside ``b``'s: each
    is correct or wrong (a person's judgment, as the correct figure counts),
    declined (refused or clarify), unjudged, or other (a direct reply, an
    error); the count of each pair that occurs, as "a correct / b declined"."""
    by: dict[str, dict[str, EvalRow]] = {}
    for r in rows:
        if r.category == "answerable":
            by.setdefault(r.id, {})[r.variant] = r
    pairs = Counter(
        f"{a} {_state(v[a], judged)} / {b} {_state(v[b], judged)}" for v in by.values() if a in v and b in v
    )
    return dict(sorted(pairs.items()))


def by_check(
    rows: Sequence[EvalRow], judged: dict[tuple[str, str], dict[str, Any]], a: str, b: str
) -> dict[str, int]:
    """Per question variant ``a`` ran, the check that had the last word and
    what came of it, counted as "<category> · <check> · <result>". A given
    answer is counted by its usefulness verdict ("usefulness yes" / "usefulness
    partly"; "usefulness unchecked" when that check is off) and its judgment;
    a declined one by its ``reason_kind`` ("no_evidence": assess found no
    passage covering the question, or the generator quoted nothing;
    "not_answered": the usefulness check said no; "unsupported": verify; "clarify"
    for a question sent back) and, for an answerable question, by ``b``'s result
    on it ("b correct": a right answer this check turned down)."""
    other = {r.id: r for r in rows if r.variant == b}
    counts: Counter[str] = Counter()
    for r in rows:
        if r.variant != a:
            continue
        state = _state(r, judged)
        if state == "declined":
            check = "clarify" if r.outcome == "clarify" else (r.reason_kind or "refused")
            theirs = other.get(r.id)
            if r.category == "answerable" and theirs is not None:
                state = f"{b} {_state(theirs, judged)}"
        elif r.outcome in ANSWERED:
            check = f"usefulness {r.usefulness or 'unchecked'}"
        else:
            check = r.outcome or "error"
        counts[f"{r.category} · {check} · {state}"] += 1
    return dict(sorted(counts.items()))


def _fmt(f: dict[str, Any]) -> str:
    return f"{f['n']}/{f['of']}" + (f" = {f['rate']:.3f}" if f["rate"] is not None else "")


def print_table(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    lines = [
        ("relevant source in top 5 / answerable", "retrieval_top5"),
        ("MRR over answerable", "retrieval_mrr"),
        ("answered / answerable", "answered"),
        ("must_include all present / answerable", "must_include"),
        ("correct (human judgment) / answerable", "correct_judged"),
        ("  answerable answers not judged yet", "answerable_unjudged"),
        ("wrong answers accepted / answers given", "wrong_accepted"),
        ("  answers given not judged yet", "wrong_accepted_unjudged"),
        ("refused or clarify / unanswerable", "unanswerable_declined"),
        ("refused or clarify / restricted", "restricted_declined"),
        ("restricted questions leaking a secret", "restricted_leaks"),
        ("errors", "errors"),
    ]
    cols = [(h, v) for h in results for v in results[h]]
    print("| figure | " + " | ".join(f"{h} / {v}" for h, v in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for label, key in lines:
        cells = []
        for h, v in cols:
            x = results[h][v][key]
            cells.append(_fmt(x) if isinstance(x, dict) else str(x))
        print(f"| {label} | " + " | ".join(cells) + " |")


def code_version() -> dict[str, Any]:
    """The commit the measured code came from, and whether its package or
    benchmarks differ from that commit (null outside a git checkout, e.g. a
    copy on PYTHONPATH): a figure says which code produced it."""
    root = Path(selfrag_nb.__file__).resolve().parents[1]

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    if not commit:
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(git("status", "--porcelain", "--", "selfrag_nb", "benchmarks"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--half", choices=(*HALVES, *EXTRA_SETS, "both"), default="both")
    ap.add_argument(
        "--variants", default="default", help="comma-separated: default, or sr.evaluate preset names"
    )
    ap.add_argument(
        "--dir", type=Path, default=None, help="knowledge base folder (built, or reused when there)"
    )
    ap.add_argument("--embedder", default="minilm", help="embedder name (the project's default: minilm)")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--judgments", type=Path, default=HERE / "judgments.jsonl")
    ap.add_argument("--unjudged", type=Path, default=HERE / "unjudged.jsonl")
    ap.add_argument("--write-answers", type=Path, default=None, help="dump every answer for reading")
    ap.add_argument("--json", type=Path, default=None, help="write the figures as JSON")
    a = ap.parse_args()

    kb_dir = a.dir or cache_dir() / f"thirdparty_kb_{a.embedder.replace(':', '_')}"
    kb, info = build_kb(kb_dir, a.embedder)
    print(f"knowledge base: {json.dumps(info)}", file=sys.stderr)
    rag = SelfRAG(kb)
    judged = load_judgments(a.judgments)
    halves = HALVES if a.half == "both" else (a.half,)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    unjudged: list[dict[str, Any]] = []
    dump: list[dict[str, Any]] = []
    problems: list[str] = []
    ceilings: dict[str, dict[str, Any]] = {}
    versus: dict[str, dict[str, int]] = {}
    checks: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_thirdparty_") as tmp:
        for half in halves:
            qs = questions(HERE / f"questions_{half}.jsonl")
            results[half] = {}
            ceilings[half] = in_evidence(kb, qs)
            for variant in [v.strip() for v in a.variants.split(",") if v.strip()]:
                t0 = time.perf_counter()
                got = run_variant(rag, qs, variant, concurrency=a.concurrency, out=Path(tmp) / half / variant)
                if isinstance(got, str):
                    problems.append(f"{half} / {variant}: {got}")
                    print(f"SKIPPED {half} / {variant}: {got}", file=sys.stderr)
                    continue
                secs = time.perf_counter() - t0
                if {"self_rag", "plain_rag"} <= {r.variant for r in got}:
                    versus[half] = paired(got, judged, "self_rag", "plain_rag")
                    checks[half] = by_check(got, judged, "self_rag", "plain_rag")
                for name in dict.fromkeys(r.variant for r in got):  # a preset may hold several
                    rows = [r for r in got if r.variant == name]
                    fig, missing = figures(rows, qs, judged)
                    fig["seconds"] = round(secs, 1)
                    results[half][name] = fig
                    unjudged.extend(missing)
                    by_id = {q.id: q for q in qs}
                    dump.extend(
                        {
                            "half": half,
                            "variant": name,
                            "id": r.id,
                            "category": r.category,
                            "question": r.question,
                            "outcome": r.outcome,
                            "answer": r.answer,
                            "answer_sha": answer_sha(r.answer),
                            "must_include": by_id[r.id].must_include,
                            "must_include_hits": r.must_include_hits,
                            "relevant": r.relevant,
                            "top_source": r.retrieved[0] if r.retrieved else None,
                            "reciprocal_rank": reciprocal_rank(r.retrieved, r.relevant),
                            "judged": (judged.get((r.id, answer_sha(r.answer))) or {}).get("correct"),
                        }
                        for r in rows
                    )
    print_table(results)
    for half, c in ceilings.items():
        print(
            f"{half}: every must_include in what a model reads of the top hits for the question"
            f" as asked / answerable with must_include: top 5 {_fmt(c['top5'])}, top 10 {_fmt(c['top10'])}"
        )
    for half, pairs in versus.items():
        print(f"{half}, per answerable question: " + "; ".join(f"{k}: {n}" for k, n in pairs.items()))
    for half, by in checks.items():
        print(f"{half}, Self-RAG's last check per question: " + "; ".join(f"{k}: {n}" for k, n in by.items()))
    for p in problems:
        print(f"not run: {p}")
    fresh = list({(u["id"], u["answer_sha"]): u for u in unjudged}.values())
    if fresh:
        a.unjudged.write_text(
            "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in fresh), encoding="utf-8"
        )
        print(f"{len(fresh)} answer(s) not judged yet -> {a.unjudged} (judge them into {a.judgments})")
    else:
        a.unjudged.unlink(missing_ok=True)  # a list from an earlier run would be stale
        print("every answer has a judgment")
    if a.write_answers:
        a.write_answers.write_text(
            "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dump), encoding="utf-8"
        )
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "code": code_version(),
                    "kb": info,
                    "results": results,
                    "in_evidence": ceilings,
                    "paired": versus,
                    "by_check": checks,
                    "not_run": problems,
                },
                indent=1,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
