"""How the Prompt Lab runs the sides of a run: variants, one question, the bounded pool.

    schedule(rag, role, texts, questions, sides, concurrency, emit, stopped)
      variant per version   = rag copy whose runner has its own Prompts with prompts[role] = text
                              (the model reranker rebuilt on that runner)
      pool of `concurrency` threads; questions enter one at a time, only while not stopped():
        ask(variant, role, version, question)
          stepper up to STOP_AT[role] (the role's own verdict, nothing later paid for)
          -> score_side (promptlab_runs.py)  |  an exception -> LabSide(verdict="error")
        each finished side -> sides[(version, id)], yielded to the caller (it caches),
        then emit(question) (a row once both sides are in)
      a stop lets the sides in flight finish; no new question starts

Why questions are fed one by one instead of all submitted at once: a cancel
must stop the spending, and a pool's queue would run everything already
submitted. Why variants are copies: see promptlab.py.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from selfrag_nb.eval.questions import Question
from selfrag_nb.promptlab_runs import LabSide, score_side
from selfrag_nb.rerankers import ModelReranker

if TYPE_CHECKING:
    from selfrag_nb.pipeline import SelfRAG

__all__ = ["STOP_AT", "ask", "schedule", "variant"]

#: The stage a role's verdict needs: running further would spend tokens on
#: stages the template cannot influence before its own verdict. Rewrite is
#: judged by what its queries retrieve, so it runs through retrieve.
STOP_AT = {
    "decide": "decide",
    "rewrite": "retrieve",
    "grade": "grade",
    "rerank": "rerank",
    "assess": "assess",
    "generate": "generate",
    "verify": "finish",
    "usefulness": "usefulness",
}


def variant(rag: SelfRAG, role: str, text: str) -> SelfRAG:
    """``rag`` with ``text`` as ``role``'s template; ``rag`` itself is untouched."""
    prompts = rag.prompts.copy()
    prompts[role] = text
    runner = copy.copy(rag.runner)
    runner.prompts = prompts
    out = rag.with_settings()  # same kb/models/reranker, its own decision cache
    out.runner = runner
    if isinstance(out.reranker, ModelReranker):
        out.reranker = ModelReranker(runner)  # else it would send the pipeline's own template
    return out


def ask(rag: SelfRAG, role: str, version: str, q: Question) -> LabSide:
    """Run ``q`` up to ``role``'s stage and score it; an exception is an error side."""
    t0 = time.perf_counter()
    try:
        step = rag.stepper(q.question, user=q.make_user(), history=q.history)
        stop = STOP_AT[role]
        if stop == "finish":
            step.run()
        else:
            getattr(step, stop)()
        trace = step.trace
    except Exception as exc:  # noqa: BLE001 - one failing question is a visible row, not a lost run
        wall = (time.perf_counter() - t0) * 1000
        return LabSide(
            version=version,
            verdict="error",
            error=f"{type(exc).__name__}: {exc}",
            wall_ms=wall,
            prompt_use="not used",  # no verdict to score: whatever was sent, nothing counts
            prompt_note="the question failed before a verdict",
            judged=[],
        )
    return score_side(role, version, q, trace, (time.perf_counter() - t0) * 1000)


def schedule(
    rag: SelfRAG,
    role: str,
    texts: dict[str, str],
    questions: list[Question],
    sides: dict[tuple[str, str], LabSide],
    *,
    concurrency: int,
    emit: Callable[[Question], None],
    stopped: Callable[[], bool],
) -> Iterator[tuple[tuple[str, str], LabSide]]:
    """Run the sides of ``questions`` missing from ``sides`` (one per version
    in ``texts``), yielding each as it finishes. Stops starting questions once
    ``stopped()`` is true."""
    variants = {v: variant(rag, role, t) for v, t in texts.items()}
    todo = iter(questions)
    workers = max(1, min(concurrency, len(questions) * len(texts)))
    flight: dict[Future[LabSide], tuple[str, Question]] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="selfrag-lab") as pool:

        def fill() -> None:
            while len(flight) < workers and not stopped():
                q = next(todo, None)
                if q is None:
                    return
                for v in texts:
                    if (v, q.id) not in sides:
                        flight[pool.submit(ask, variants[v], role, v, q)] = (v, q)

        fill()
        while flight:
            done, _ = wait(list(flight), return_when=FIRST_COMPLETED)
            for fut in done:
                v, q = flight.pop(fut)
                side = fut.result()
                sides[(v, q.id)] = side
                yield (v, q.id), side
                emit(q)
            fill()
