"""The error tree (selfrag_nb/errors.py): one root, the old built-in bases kept,
every class exported, and what the public API raises for bad input is in it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import selfrag_nb as sr
from selfrag_nb import errors

CLASSES = [n for n in errors.__all__ if isinstance(getattr(errors, n), type)]

COMPAT = {
    "InputError": ValueError,
    "InputTypeError": TypeError,
    "NotFoundError": KeyError,
    "PathNotFoundError": FileNotFoundError,
    "MissingDependencyError": ImportError,
    "QuestionSetError": ValueError,
    "TemplateError": ValueError,
    "KnowledgeBaseError": RuntimeError,
    "EmbedderError": RuntimeError,
    "ModelError": RuntimeError,
    "ProviderError": RuntimeError,
    "ParseError": ValueError,
    "RerankProtocolError": ValueError,
}

#: Where each class used to be defined: the old import path must give the same class.
OLD_HOMES = {
    "KnowledgeBaseError": "selfrag_nb.store.kb",
    "EmbedderError": "selfrag_nb.store.embedders",
    "ModelError": "selfrag_nb.llm.base",
    "ProviderError": "selfrag_nb.llm.litellm_model",
    "ParseError": "selfrag_nb.llm.parsing",
    "RerankProtocolError": "selfrag_nb.stages.rerank",
    "QuestionSetError": "selfrag_nb.eval.questions",
    "TemplateError": "selfrag_nb.promptlab",
}


def test_one_root_and_the_old_bases() -> None:
    assert len(CLASSES) == 16
    for name in CLASSES:
        cls = getattr(errors, name)
        assert issubclass(cls, sr.SelfRAGError), name
        assert getattr(sr, name) is cls, f"sr.{name} is not exported"
    for name, base in COMPAT.items():
        assert issubclass(getattr(errors, name), base), (name, base)


def test_old_import_paths_give_the_same_class() -> None:
    import importlib

    for name, module in OLD_HOMES.items():
        assert getattr(importlib.import_module(module), name) is getattr(errors, name), (module, name)


def test_the_docstring_tree_names_every_class() -> None:
    drawn = set(re.findall(r"[├└]── (\w+)", errors.__doc__ or "")) | {"SelfRAGError"}
    assert drawn == set(CLASSES)


def test_not_found_reads_as_a_message() -> None:
    assert str(errors.NotFoundError("no question with id 'x'")) == "no question with id 'x'"


def bad_calls(tmp_path: Path) -> list[tuple[str, Any]]:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    rag = sr.SelfRAG(kb)
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n', encoding="utf-8")
    return [
        ("ask blank", lambda: rag.ask("   ")),
        ("ask non-str", lambda: rag.ask(5)),
        ("deadline str", lambda: sr.SelfRAG(kb, deadline="5")),
        ("timeout bool", lambda: sr.SelfRAG(kb, timeout=True)),
        ("user roles str", lambda: sr.User("a", roles="finance")),
        ("settings unknown", lambda: rag.with_settings(no_such_setting=1)),
        ("settings type", lambda: sr.Settings(timeout=True)),
        ("user surrogate", lambda: sr.User("a\ud800")),
        ("search k", lambda: kb.search("x", k=0)),
        ("search mode", lambda: kb.search("x", mode="semantic")),
        ("search where", lambda: kb.search("x", where="1=1) OR (1=1")),
        ("remove unknown", lambda: kb.remove("nope.md")),
        ("open a file", lambda: sr.KnowledgeBase.open(tmp_path / "bad.jsonl")),
        ("ingest missing", lambda: kb.ingest(tmp_path / "missing")),
        ("ingest None", lambda: kb.ingest(None)),
        ("question set line", lambda: sr.questions(tmp_path / "bad.jsonl")),
        ("question id", lambda: sr.questions("sample").get("no-such-id")),
        ("ingest acl", lambda: kb.ingest(tmp_path, acl={"Roles": ["x"]})),
        ("ingest metadata", lambda: kb.ingest(tmp_path, metadata={"roles": ["x"]})),
        ("ingest prefix", lambda: kb.ingest(tmp_path, prefix="/abs")),
    ]


def test_bad_input_raises_inside_the_tree(tmp_path: Path) -> None:
    """Written from the promise (sr.SelfRAGError is the root of every error
    the package raises), not from the code: each call is a mistake a user makes."""
    escaped = []
    for what, call in bad_calls(tmp_path):
        try:
            call()
        except sr.SelfRAGError:
            continue
        except Exception as exc:
            escaped.append(f"{what}: {type(exc).__name__}: {exc}")
        else:
            escaped.append(f"{what}: no error")
    assert escaped == []


def test_budgets_given_next_to_settings_win_and_none_keeps_them(tmp_path: Path) -> None:
    """timeout/deadline default to None (the Settings' values); a number given
    wins, also when it equals the old defaults (30 / 120)."""
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    base = sr.Settings(timeout=5, deadline=50)
    assert sr.SelfRAG(kb, settings=base).settings.timeout == 5
    assert sr.SelfRAG(kb, settings=base, timeout=30).settings.timeout == 30
    assert sr.SelfRAG(kb, settings=base, deadline=120).settings.deadline == 120
    assert sr.SelfRAG(kb).settings.timeout == sr.Settings().timeout


def test_no_bare_builtin_raises_left() -> None:
    """Every raise of ValueError / TypeError / KeyError / FileNotFoundError /
    ImportError in the package goes through the tree (the offline model's
    arithmetic parser raises ValueError as internal control flow, caught
    where it is raised, and is the one exception)."""
    import ast

    root = Path(sr.__file__).parent
    bare = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "phrases.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                if isinstance(func, ast.Name) and func.id in {
                    "ValueError",
                    "TypeError",
                    "KeyError",
                    "FileNotFoundError",
                    "ImportError",
                }:
                    bare.append(f"{path.relative_to(root)}:{node.lineno} {func.id}")
    assert bare == []
