"""OfflineModel as a Model: protocol, raw JSON per role parsed by the runner's
parser, usage figures, determinism, cheap import."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from pydantic import BaseModel

from selfrag_nb.llm.base import Completion, Model, ModelRequest
from selfrag_nb.llm.offline import OfflineModel
from selfrag_nb.llm.parsing import parse
from selfrag_nb.llm.schemas import (
    OUTPUTS,
    AssessInputs,
    DecideInputs,
    Evidence,
    GenerateInputs,
    GradeInputs,
    Message,
    RerankInputs,
    RewriteInputs,
    Role,
    VerifyInputs,
)

REFUND = (
    "Customers can request a full refund within 14 days of purchase. "
    "Refunds are issued to the original payment method within 5 business days."
)
API = "API keys can be rotated from Settings > API. Each workspace can hold up to 5 active keys."
EVIDENCE = [
    Evidence(index=1, chunk_id="r1", source="policies/refunds.md", title="Refund policy", text=REFUND),
    Evidence(index=2, chunk_id="a1", source="api/keys.md", title="API keys", text=API),
]

INPUTS: dict[Role, BaseModel] = {
    "decide": DecideInputs(question="What is the refund window?"),
    "rewrite": RewriteInputs(
        question="Does it support CSV export?",
        history=[Message(role="user", content="Tell me about Quillstack Sync.")],
    ),
    "grade": GradeInputs(question="What is the refund window?", text=REFUND, title="Refund policy"),
    "rerank": RerankInputs(query="What is the refund window?", candidates=[API, REFUND]),
    "assess": AssessInputs(question="What is the refund window?", evidence=EVIDENCE),
    "generate": GenerateInputs(question="What is the refund window?", evidence=EVIDENCE),
    "verify": VerifyInputs(
        question="What is the refund window?",
        answer="Customers can request a full refund within 14 days of purchase [1].",
        evidence=EVIDENCE,
    ),
}


def _request(role: Role, inputs: BaseModel) -> ModelRequest:
    # The prompt text is deliberately nonsense: the offline model must not read it.
    return ModelRequest(
        role=role,
        messages=[Message(role="user", content="IGNORE ME: answer NO_RETRIEVE and score 0")],
        output_schema=OUTPUTS[role],
        inputs=inputs,
    )


def test_offline_model_is_a_model() -> None:
    model = OfflineModel()
    assert isinstance(model, Model)
    assert model.name == "offline"
    assert model.offline is True


@pytest.mark.parametrize("role", list(INPUTS))
def test_offline_raw_is_the_role_schema_and_parses(role: Role) -> None:
    completion = OfflineModel().complete(_request(role, INPUTS[role]))
    assert isinstance(completion, Completion)
    # Plain JSON of the output schema ...
    direct = OUTPUTS[role].model_validate_json(completion.raw)
    # ... which the runner's lenient parser reads to the same value.
    parsed, error = parse(role, completion.raw)
    assert error is None
    assert parsed == direct
    assert completion.model == "offline"
    assert completion.offline is True
    assert completion.cost == 0.0
    assert completion.error is None
    assert completion.tokens_in is not None
    assert completion.tokens_in > 0
    assert completion.tokens_out is not None
    assert completion.tokens_out >= 0
    assert completion.latency_ms >= 0.0


def test_offline_ignores_the_prompt_text() -> None:
    out = json.loads(OfflineModel().complete(_request("decide", INPUTS["decide"])).raw)
    assert out["decision"] == "RETRIEVE"  # the prompt asked for NO_RETRIEVE
    grade = json.loads(OfflineModel().complete(_request("grade", INPUTS["grade"])).raw)
    assert grade["relevanceScore"] >= 80


@pytest.mark.parametrize("role", list(INPUTS))
def test_offline_is_deterministic(role: Role) -> None:
    first = OfflineModel().complete(_request(role, INPUTS[role]))
    second = OfflineModel().complete(_request(role, INPUTS[role]))
    assert first.raw == second.raw
    assert (first.tokens_in, first.tokens_out) == (second.tokens_in, second.tokens_out)


def test_offline_acomplete_matches_complete() -> None:
    model = OfflineModel()
    request = _request("generate", INPUTS["generate"])
    sync = model.complete(request)
    async_ = asyncio.run(model.acomplete(request))
    assert async_.raw == sync.raw


def test_offline_rejects_inputs_of_another_role() -> None:
    request = ModelRequest(
        role="grade",
        messages=[],
        output_schema=OUTPUTS["grade"],
        inputs=DecideInputs(question="What is the refund window?"),
    )
    with pytest.raises(TypeError, match=r"grade.*GradeInputs.*DecideInputs"):
        OfflineModel().complete(request)


def test_offline_import_is_cheap() -> None:
    code = (
        "import sys, selfrag_nb.llm.offline as m; m.OfflineModel();"
        "heavy = [n for n in ('litellm', 'lancedb', 'numpy', 'pandas', 'torch', 'plotly') if n in sys.modules];"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
