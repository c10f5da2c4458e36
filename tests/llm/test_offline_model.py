"""OfflineModel as a Model: protocol, raw JSON per role parsed by the runner's
parser, usage figures, determinism, cheap import, the package's layering."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

import selfrag_nb.llm.offline as offline_pkg
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


#: The offline package's layers, bottom first: a module may import only modules
#: of lower layers (never its own layer, never a higher one).
LAYERS: list[tuple[str, ...]] = [
    ("lexical",),
    ("abbrev", "phrases", "quotable", "surface"),
    ("question",),
    ("relevance",),
    ("evidence", "subject"),
    ("answer_kind",),
    ("assess", "generate"),
    ("usefulness", "verify"),
    ("model",),
    ("__init__",),
]
PACKAGE = "selfrag_nb.llm.offline"
PACKAGE_DIR = Path(offline_pkg.__file__).parent


def _offline_imports(path: Path) -> set[str]:
    """Modules of the offline package that ``path`` imports, anywhere in it
    (lazy imports inside functions included); the package itself is "__init__"."""

    def module_of(name: str) -> str | None:
        if name == PACKAGE:
            return "__init__"
        if name.startswith(PACKAGE + "."):
            return name[len(PACKAGE) + 1 :].partition(".")[0]
        return None

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {m for alias in node.names if (m := module_of(alias.name))}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the package
                parent = PACKAGE.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                # "from pkg import submodule" imports the submodule, else the module itself
                sub = f"{base}.{alias.name}"
                target = module_of(sub) if (PACKAGE_DIR / f"{alias.name}.py").is_file() else None
                m = target if base == PACKAGE and target else module_of(base)
                if m:
                    found.add(m)
    return found


def test_offline_package_imports_point_down_only() -> None:
    layer_of = {module: i for i, layer in enumerate(LAYERS) for module in layer}
    modules = sorted(p.stem for p in PACKAGE_DIR.glob("*.py"))
    assert sorted(layer_of) == modules, "every module of the package has a layer in LAYERS"
    for module in modules:
        for imported in _offline_imports(PACKAGE_DIR / f"{module}.py"):
            assert layer_of[imported] < layer_of[module], (
                f"{module} imports {imported} (same or higher layer)"
            )
    # The modules the package replaced are gone, so nothing can import them.
    assert not list(PACKAGE_DIR.parent.glob("offline_*.py"))


def test_offline_modules_stay_small() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE_DIR.glob("*.py")}
    assert max(sizes.values()) <= 700, sizes
