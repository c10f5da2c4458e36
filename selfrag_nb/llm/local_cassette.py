"""SmolLM2's recorded answers: what a classroom without the local-llm extra replays.

    CASSETTE = selfrag_nb/llm/cassettes/smollm2.jsonl   (shipped in the package)
      recorded by record() from the real server (sr.LocalModel()) over the sample
      knowledge base (sr.KnowledgeBase.sample()), keys independent of timeouts:
        rag.ask of each question of the grade role's default subset (default prompts)
        Prompt Lab "grade"  RECORDED_IDS["grade"]:  default prompt vs edited_template("grade")
        lab.apply("grade")  (the default grade prompt keeps no chunk: nothing reaches verify)
        Prompt Lab "verify" RECORDED_IDS["verify"]: default prompt vs edited_template("verify")

    replay(path=None) -> CassetteModel(None, Cassette(path, "replay"), name="openai/smollm2")
      sr.SelfRAG(kb, model=sr.LocalModel.replay())        no server, no key, no extra
      a call that was not recorded -> ModelError naming the role, the question,
      what the recording holds and how to get the live model

    edited_template(role) -> the packaged English template with EDITED[role] added
      to its instructions: the Prompt Lab's candidate in the recording

A changed default prompt, output schema or sample document changes the
calls' keys, and replay misses: re-record (``python -m
selfrag_nb.llm.local_cassette``; about 210 calls, half an hour on two busy cores).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from selfrag_nb.errors import ModelError, NotFoundError
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.cassette import Cassette, CassetteModel

__all__ = ["CASSETTE", "EDITED", "RECORDED_IDS", "ROLES", "edited_template", "record", "replay"]

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "smollm2.jsonl"
#: The Prompt Lab roles recorded, each with the default prompt and one edit.
ROLES = ("grade", "verify")
#: What the edited prompt adds to the default instructions, per role: a
#: stricter rule, so some verdicts flip between the two prompts.
EDITED = {
    # The default asks for "relevanceScore": 0-100 and SmolLM2 copies the 0:
    # every chunk is irrelevant and nothing is ever answered. Naming the
    # numbers to use is the edit that changes its verdicts.
    "grade": (
        "Write relevanceScore as one whole number: 90 when the document states the answer to the "
        "question, 60 when it is about the question's topic, 10 when it is about something else. "
        "Never write 0."
    ),
    "verify": (
        "Be strict: recommend ACCEPT only when every claim is supported word for word by a "
        "document; if any claim is partial or unsupported, recommend REGENERATE."
    ),
}
#: The sample questions recorded per role (both prompts). The verify run is
#: recorded with the edited grade prompt applied (``lab.apply("grade")``):
#: with the default one SmolLM2 keeps no chunk, so nothing reaches verify.
RECORDED_IDS: dict[str, tuple[str, ...]] = {
    "grade": ("id-04", "neg-01", "ver-03"),
    "verify": ("id-04", "neg-01", "ver-03"),
}
_SPLIT = "\n=== user ==="


def edited_template(role: str) -> str:
    """The packaged English template of ``role`` with ``EDITED[role]`` as the
    last line of its instructions (before the user message)."""
    if role not in EDITED:
        raise NotFoundError(
            f"no recorded edit for role {role!r}; recorded roles: {', '.join(ROLES)}", key=role
        )
    from selfrag_nb.llm.prompts import Prompts

    text = Prompts("en")[role]
    head, sep, tail = text.partition(_SPLIT)
    return (
        f"{head.rstrip()}\n{EDITED[role]}\n{sep.lstrip()}{tail}"
        if sep
        else f"{text.rstrip()}\n{EDITED[role]}\n"
    )


class _Replay(CassetteModel):
    """A replay-only CassetteModel whose miss says what the recording holds."""

    def _miss(self, request: ModelRequest) -> ModelError:
        base = super()._miss(request)
        return ModelError(
            f"{base}. This recording holds SmolLM2's answers for the Prompt Lab's grade and verify runs "
            f"of RECORDED_IDS (default and edited prompts, the sample knowledge base, selfrag_nb/llm/"
            f"local_cassette.py); for anything else run the model itself: sr.LocalModel() "
            f"(pip install 'selfrag-nb[local-llm]')",
            model=self.name,
        )


def replay(path: str | Path | None = None) -> CassetteModel:
    """SmolLM2's recorded calls as a Model (no server, no key, no extra)."""
    from selfrag_nb.llm.local_model import MODEL_STRING

    return _Replay(None, Cassette(CASSETTE if path is None else Path(path)), name=MODEL_STRING)


def record(path: str | Path = CASSETTE, *, local: Any = None, threads: int | None = 1) -> dict[str, Any]:
    """Record the cassette from the real server, as shipped: asking each
    question of the grade role's default subset, then the Prompt Lab's
    grade run (default vs edited) and, with the edited grade prompt applied,
    its verify run (default vs edited) over ``RECORDED_IDS``. ``path`` is
    replaced. ``local``: a running LocalModel (default: start one with
    ``threads``; one thread is the fastest on a busy machine).
    Returns what was recorded (calls, errors, seconds, verdicts per run)."""
    import time

    from selfrag_nb.config import Settings
    from selfrag_nb.eval.questions import questions
    from selfrag_nb.llm.local_model import LocalModel
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.promptlab import PromptLab
    from selfrag_nb.store.kb import KnowledgeBase

    target = Path(path)
    fresh = target.with_name(target.name + ".recording")
    fresh.unlink(missing_ok=True)
    own = local is None
    server = LocalModel(threads=threads) if own else local
    started = time.monotonic()
    verdicts: dict[str, list[tuple[str, str, str]]] = {}
    try:
        # "auto": a call already recorded (the runs share their retrieval
        # calls) is replayed, not asked again. The timeout and deadline are
        # only lifted so a slow machine records answers, not timeouts; neither
        # is part of a call's key, so the default settings replay the same calls.
        tape = CassetteModel(server, Cassette(fresh, mode="auto"))
        kb = KnowledgeBase.sample(progress=False)
        rag = SelfRAG(kb, model=tape, settings=Settings(timeout=300, deadline=3600))
        lab = PromptLab(rag, questions("sample"), roles=ROLES, concurrency=1, cache=False)
        sample = questions("sample")
        for qid in lab.default_ids("grade"):  # asked with the default prompts
            q = sample.get(qid)
            rag.ask(q.question, user=q.make_user(), history=q.history)
        for role in ROLES:
            lab.set_template(role, edited_template(role), note="recorded edit")
            run = lab.run(role, ids=RECORDED_IDS[role])
            verdicts[role] = [(row.id, row.old.verdict, row.new.verdict) for row in run.rows]
            if role == "grade":
                lab.apply("grade")  # verify is reached only with chunks kept
    finally:
        if own:
            server.stop()
    entries = Cassette(fresh).entries()
    fresh.replace(target)
    return {
        "path": str(target),
        "calls": len(entries),
        "errors": sum(1 for e in entries if e.completion.error),
        "seconds": round(time.monotonic() - started, 1),
        "verdicts": verdicts,
    }


if __name__ == "__main__":
    print(record(sys.argv[1] if len(sys.argv) > 1 else CASSETTE))  # noqa: T201 - the command's output
