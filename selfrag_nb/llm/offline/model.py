"""The deterministic offline model: every role answered by rules, no network.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                                                             ^^^^^
    here: the top layer, dispatch only (role -> rule); re-exported by ``offline/__init__``.

    ModelRequest(role, inputs, ...)          the prompt text is never read
      -> OfflineModel.complete
           role      reads            rule (module)
           decide    DecideInputs     small talk / arithmetic -> NO_RETRIEVE, else RETRIEVE  (question)
           rewrite   RewriteInputs    resolve "it"/"它" from history, keep protected spans   (question)
           grade     GradeInputs      weighted term coverage + exact IDs/versions/numbers    (relevance)
           rerank    RerankInputs     BM25 over the candidate set + exact matches            (relevance)
           assess    AssessInputs     ANSWER / CLARIFY (qualifiers) / REFUSE (no cover, conflict) (assess)
           generate  GenerateInputs   extractive sentences cited [n]; direct small talk, arithmetic (generate)
           verify    VerifyInputs     claim x evidence-sentence overlap + number/ID agreement (verify)
           usefulness UsefulnessInputs form, answer type, the question's subject in the answer (usefulness)
      -> Completion(raw = JSON of schemas.OUTPUTS[role], tokens estimated, cost 0.0)

It is the default model when nothing is configured, and a credible baseline:
the heuristics (stopwords, weights, saturation, caps, verdict thresholds) are
documented in one place, ``docs/offline_model.md``. Same inputs -> same raw
output, byte for byte (only ``latency_ms`` varies). Token counts are an
estimate: ``selfrag_nb.text.tokenize`` tokens of the inputs' and the output's
text, not any provider's tokenizer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from selfrag_nb.errors import InputTypeError
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import decide, rewrite
from selfrag_nb.llm.offline.relevance import grade, rerank
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import INPUTS
from selfrag_nb.text import tokenize

__all__ = ["OfflineModel"]


class OfflineModel:
    """A ``Model`` that answers from the stage's structured inputs with
    deterministic rules. Free (cost 0.0), offline, no key."""

    name = "offline"
    offline = True

    def complete(self, request: ModelRequest) -> Completion:
        """Answer one request; ``raw`` is the JSON of the role's output schema."""
        start = time.perf_counter()
        expected = INPUTS[request.role]
        if not isinstance(request.inputs, expected):
            raise InputTypeError(
                f"offline model: role {request.role!r} needs {expected.__name__} inputs, "
                f"got {type(request.inputs).__name__}"
            )
        out = _ROLES[request.role](request.inputs)
        raw = out.model_dump_json()
        return Completion(
            raw=raw,
            model=self.name,
            tokens_in=_count_tokens(request.inputs.model_dump()),
            tokens_out=_count_tokens(out.model_dump()),
            cost=0.0,
            latency_ms=(time.perf_counter() - start) * 1000.0,
            offline=True,
        )

    async def acomplete(self, request: ModelRequest) -> Completion:
        """Same as ``complete``: the rules are CPU-bound and take milliseconds,
        so there is nothing to await."""
        return self.complete(request)

    def __repr__(self) -> str:
        return "OfflineModel()"


def _count_tokens(value: Any) -> int:
    """Estimated tokens: tokenize() tokens of every string (and number) inside."""
    if isinstance(value, str):
        return len(tokenize(value))
    if isinstance(value, dict):
        return sum(_count_tokens(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_count_tokens(v) for v in value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return 1
    return 0


_ROLES: dict[str, Callable[[Any], BaseModel]] = {
    "decide": decide,
    "rewrite": rewrite,
    "grade": grade,
    "rerank": rerank,
    "assess": assess,
    "generate": generate,
    "verify": verify,
    "usefulness": usefulness,
}
