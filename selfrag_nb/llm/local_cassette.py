"""SmolLM2's recorded answers: what a classroom without the local-llm extra replays.

    CASSETTE = selfrag_nb/llm/cassettes/smollm2.jsonl   (shipped in the package)
      recorded by record() from the real server (sr.LocalModel()), over the sample
      knowledge base (sr.KnowledgeBase.sample()) with the default Settings:
        Prompt Lab "grade"  default subset, default prompt vs EDITED["grade"]
        Prompt Lab "verify" default subset, default prompt vs EDITED["verify"]
      which covers asking each of those questions with the default prompts
      (every call of the flow up to verify and usefulness)

    replay(path=None) -> CassetteModel(None, Cassette(path, "replay"), name="openai/smollm2")
      sr.SelfRAG(kb, model=sr.LocalModel.replay())        no server, no key, no extra
      a call that was not recorded -> ModelError naming the role, the question and
      how to get a live model

    edited_template(role) -> the packaged English template with EDITED[role] added
      to its instructions: the Prompt Lab's candidate in the recording, so
      lab.set_template(role, edited_template(role)); lab.run(role) replays too

A changed default prompt, output schema or sample document changes the
calls' keys, and replay misses: re-record (``python -m
selfrag_nb.llm.local_cassette``, about half an hour on two cores).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from selfrag_nb.errors import NotFoundError
from selfrag_nb.llm.base import ModelError, ModelRequest
from selfrag_nb.llm.cassette import Cassette, CassetteModel

__all__ = ["CASSETTE", "EDITED", "ROLES", "edited_template", "record", "replay"]

CASSETTE = Path(__file__).resolve().parent / "cassettes" / "smollm2.jsonl"
#: The Prompt Lab roles recorded, each with the default prompt and one edit.
ROLES = ("grade", "verify")
#: What the edited prompt adds to the default instructions, per role: a
#: stricter rule, so some verdicts flip between the two prompts.
EDITED = {
    "grade": (
        "Be strict: set isRelevant to true only when the document itself states the specific "
        "answer to the question; a document that is only on the same topic is not relevant "
        "(isRelevant false, relevanceScore below 50)."
    ),
    "verify": (
        "Be strict: recommend ACCEPT only when every claim is supported word for word by a "
        "document; if any claim is partial or unsupported, recommend REGENERATE."
    ),
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
            f"{base}. This recording holds SmolLM2's answers for the sample questions of the Prompt Lab's "
            f"{' and '.join(ROLES)} runs (default and edited prompts, default settings, the sample "
            f"knowledge base); for anything else run the model itself: sr.LocalModel() "
            f"(pip install 'selfrag-nb[local-llm]')",
            model=self.name,
        )


def replay(path: str | Path | None = None) -> CassetteModel:
    """SmolLM2's recorded calls as a Model (no server, no key, no extra)."""
    from selfrag_nb.llm.local_model import MODEL_STRING

    return _Replay(None, Cassette(CASSETTE if path is None else Path(path)), name=MODEL_STRING)


def record(path: str | Path = CASSETTE, *, local: Any = None, threads: int | None = 1) -> dict[str, Any]:
    """Record the cassette from the real server: the Prompt Lab's grade and
    verify runs over the sample questions, default vs edited prompt. ``path``
    is replaced. ``local``: a running LocalModel (default: start one with
    ``threads``; one thread is the fastest on a busy machine).
    Returns what was recorded (calls, errors, seconds, the runs' flips)."""
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
    try:
        # "auto": a call already recorded (the verify run repeats the grade run's
        # retrieval calls) is replayed, not asked again. The timeout and deadline
        # are only lifted so a slow machine records answers, not timeouts; neither
        # is part of a call's key, so the default settings replay the same calls.
        tape = CassetteModel(server, Cassette(fresh, mode="auto"))
        kb = KnowledgeBase.sample(progress=False)
        rag = SelfRAG(kb, model=tape, settings=Settings(timeout=120, deadline=1800))
        lab = PromptLab(rag, questions("sample"), roles=ROLES, concurrency=1, cache=False)
        flips: dict[str, int] = {}
        for role in ROLES:
            lab.set_template(role, edited_template(role), note="stricter (recorded)")
            run = lab.run(role)
            flips[role] = sum(1 for row in run.rows if row.old.verdict != row.new.verdict)
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
        "flips": flips,
    }


if __name__ == "__main__":
    print(record(sys.argv[1] if len(sys.argv) > 1 else CASSETTE))  # noqa: T201 - the command's output
