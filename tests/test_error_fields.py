"""Errors carry their data at every raise site (selfrag_nb/errors.py): a
PathNotFoundError its ``path``, a NotFoundError its ``key``, a ModelError or
ProviderError its ``model`` (and ``status_code`` when an HTTP status is known).

    guard      AST walk over selfrag_nb: every such call passes the field, or
               says why it cannot in a "# no path: / # no key: / # no model:" comment
    behaviour  user-facing calls whose error holds the field's value"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb import errors
from selfrag_nb.testing import LoopbackServer

#: class -> (the keyword it must pass, the comment that excuses a call without it)
FIELDS = {
    "PathNotFoundError": ("path", "# no path:"),
    "NotFoundError": ("key", "# no key:"),
    "ModelError": ("model", "# no model:"),
    "ProviderError": ("model", "# no model:"),
}

#: Calls in code another change owns, to be fixed there: (path under selfrag_nb,
#: class, enclosing function) -> reason. Each must still exist (stale: drop it).
PENDING: dict[tuple[str, str, str], str] = {}


def calls_without_field(root: Path) -> list[tuple[str, str, str, int]]:
    """(path, class, enclosing function, line) of every call of a FIELDS class
    that neither passes its keyword nor carries the excusing comment (with a
    reason after the colon) on the line before the call or any line of it."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = str(path.relative_to(root))
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for func_name, node in _calls(ast.parse(text)):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name not in FIELDS:
                continue
            keyword, excuse = FIELDS[name]
            if any(k.arg == keyword for k in node.keywords):
                continue
            end = node.end_lineno or node.lineno
            span = lines[max(node.lineno - 2, 0) : end]
            if any(_reason_after(line, excuse) for line in span):
                continue
            found.append((rel, name, func_name, node.lineno))
    return found


def _reason_after(line: str, excuse: str) -> bool:
    at = line.find(excuse)
    return at >= 0 and bool(line[at + len(excuse) :].strip())


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    """Every call with the name of the function (or "<module>") it is in."""
    out: list[tuple[str, ast.Call]] = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call):
                out.append((owner, child))
            visit(child, owner)

    visit(tree, "<module>")
    return out


def test_every_raise_site_passes_its_field() -> None:
    """Written from the rule: the path, key or model is a field, not only
    words in the message, wherever the raise site knows it."""
    root = Path(sr.__file__).parent
    missing = calls_without_field(root)
    outside = [f"{p}:{line} {cls} in {fn}()" for p, cls, fn, line in missing if (p, cls, fn) not in PENDING]
    assert outside == []
    assert set(PENDING) <= {(p, cls, fn) for p, cls, fn, _ in missing}, "a PENDING entry is fixed: drop it"


def test_the_field_guard_sees_every_spelling(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "from selfrag_nb import errors\n"
        "def f(x, p, k, m):\n"
        "    if x: raise PathNotFoundError('a')\n"
        "    if x > 1: raise errors.NotFoundError('b')\n"
        "    if x > 2: return ModelError('returned', status_code=500)\n"
        "    err = ProviderError(\n"
        "        'kept'\n"
        "    )\n"
        "    # no model:\n"
        "    raise ModelError('a bare excuse is no reason')\n"
        "    raise PathNotFoundError('a', path=p)\n"
        "    raise NotFoundError('b', key=k)\n"
        "    raise ProviderError('c', model=m)\n"
        "    # no model: none is named yet\n"
        "    raise ModelError('excused above')\n"
        "    raise ModelError(  # no model: excused on its line\n"
        "        'x'\n"
        "    )\n",
        encoding="utf-8",
    )
    got = {(cls, fn, line) for _, cls, fn, line in calls_without_field(tmp_path)}
    assert got == {
        ("PathNotFoundError", "f", 3),
        ("NotFoundError", "f", 4),
        ("ModelError", "f", 5),
        ("ProviderError", "f", 6),
        ("ModelError", "f", 10),
    }


# ---------------------------------------------------------------- behaviour


def test_missing_paths_are_named(tmp_path: Path) -> None:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    missing = tmp_path / "missing"
    with pytest.raises(sr.PathNotFoundError) as info:
        kb.ingest(missing)
    assert info.value.path == missing
    with pytest.raises(sr.PathNotFoundError) as info:
        sr.KnowledgeBase.sample(embedder="hashing", docs=missing, progress=False)
    assert info.value.path == missing

    from selfrag_nb.eval.regression import read_failures

    with pytest.raises(sr.PathNotFoundError) as info:
        read_failures(tmp_path)  # a folder without failures.parquet
    assert info.value.path == tmp_path / "failures.parquet"


def test_missing_names_are_the_key(tmp_path: Path) -> None:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(sr.NotFoundError) as info:
        kb.remove("no-such-source")
    assert info.value.key == "no-such-source"

    qs = sr.questions("sample")
    with pytest.raises(sr.NotFoundError) as info:
        qs.get("no-such-id")
    assert info.value.key == "no-such-id"
    with pytest.raises(sr.NotFoundError) as info:
        qs.filter(category="no-such-category")
    assert info.value.key == "no-such-category"
    # several missing names: all of them, as the message lists them
    with pytest.raises(sr.NotFoundError) as info:
        qs.filter(category=["zz", "aa"])
    assert info.value.key == ("aa", "zz")

    from selfrag_nb.llm.prompts import Prompts

    with pytest.raises(sr.NotFoundError) as info:
        Prompts()["no_such_template"]
    assert info.value.key == "no_such_template"


def test_a_model_the_provider_does_not_know_is_named_with_404(loopback: LoopbackServer) -> None:
    """The loopback server speaks the OpenAI routes only: an Ollama model
    pointed at it gets HTTP 404 for /api/generate, as a provider answers for
    a model or endpoint it does not know."""
    from selfrag_nb.llm.litellm_model import LiteLLMModel

    model = LiteLLMModel("ollama/no-such-model", api_base=loopback.base_url, max_retries=0)
    with pytest.raises(sr.ModelError) as info:
        model.complete(_decide_request())
    assert info.value.model == "ollama/no-such-model"
    assert info.value.status_code == 404
    assert [r.path for r in loopback.requests] == ["/api/generate"]


def test_a_provider_error_of_an_embedding_call_names_the_model(loopback: LoopbackServer) -> None:
    from selfrag_nb.llm.litellm_model import embed

    loopback.fail("503", times=10)
    with pytest.raises(sr.ProviderError) as info:
        embed(["x"], "openai/text-embedding-3-small", api_base=loopback.url, api_key="k-123456", timeout=5)
    assert info.value.model == "openai/text-embedding-3-small"
    assert info.value.status_code == 503


def test_a_scripted_model_out_of_answers_names_itself() -> None:
    from selfrag_nb.testing import ScriptedModel

    model: Any = ScriptedModel(name="scripted-a")
    with pytest.raises(errors.ModelError) as info:
        model.complete(_decide_request())
    assert info.value.model == "scripted-a"


def _decide_request() -> Any:
    from selfrag_nb.llm.base import ModelRequest
    from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, Message

    question = "What is the refund window?"
    return ModelRequest(
        role="decide",
        messages=[Message(role="user", content=question)],
        output_schema=DecisionOut,
        inputs=DecideInputs(question=question),
    )
