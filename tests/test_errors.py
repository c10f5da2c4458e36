"""The error tree (selfrag_nb/errors.py): one root, the old built-in bases kept,
every class exported, and what the public API raises for bad input is in it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb import errors

CLASSES = [
    n
    for n in errors.__all__
    if isinstance(getattr(errors, n), type)
    and issubclass(getattr(errors, n), BaseException)
    and not issubclass(getattr(errors, n), Warning)
]

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
def test_the_warning_is_no_error() -> None:
    """AccessCheckWarning reports a fault the library survived: a warning,
    outside the error tree, so ``except SelfRAGError`` never swallows it."""
    assert issubclass(errors.AccessCheckWarning, RuntimeWarning)
    assert not issubclass(errors.AccessCheckWarning, errors.SelfRAGError)


def test_one_root_and_the_old_bases() -> None:
    assert len(CLASSES) == 17  # LabelsError joined (sr.Labels)
    for name in CLASSES:
        cls = getattr(errors, name)
        assert issubclass(cls, sr.SelfRAGError), name
        assert getattr(sr, name) is cls, f"sr.{name} is not exported"
    for name, base in COMPAT.items():
        assert issubclass(getattr(errors, name), base), (name, base)


def test_no_module_re_exports_an_error() -> None:
    # one home per class: a second name for it in another module's __all__ is
    # an alias nobody released, and a second place to keep in step
    import ast

    pkg = Path(errors.__file__).parent
    offenders = []
    for path in sorted(pkg.rglob("*.py")):
        if path.name == "errors.py" or path == pkg / "__init__.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                names = {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
                offenders += [f"{path.relative_to(pkg)}: {n}" for n in sorted(names & set(CLASSES))]
    assert offenders == []


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
        ("search surrogate vector", lambda: kb.search("\ud800", mode="vector")),
        ("search surrogate fts", lambda: kb.search("\ud800", mode="fts")),
        ("search surrogate hybrid", lambda: kb.search("a\ud800b")),
        ("search where surrogate", lambda: kb.search("x", where="source = '\ud800'")),
        ("otel endpoint", lambda: sr.export_otel([], endpoint="http://[::1")),
        ("model reranker output", lambda: _failing_model_reranker().rank("q", ["a", "b"])),
        ("model reranker runner", lambda: sr.rerankers.ModelReranker(None).rank("q", ["a"])),
    ]


def _failing_model_reranker() -> Any:
    """The model reranker over a model whose rerank output never parses."""
    from selfrag_nb.llm.runner import ModelRunner
    from selfrag_nb.rerankers import ModelReranker
    from selfrag_nb.testing import ScriptedModel

    model = ScriptedModel().default("rerank", "not json at all")
    return ModelReranker(ModelRunner(model))


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


def _kb_with_docs(tmp_path: Path) -> Any:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe refund window is thirty days.\n", encoding="utf-8")
    (docs / "b.md").write_text("---\nroles: [finance]\n---\n# B\n\nBudget.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def test_a_bad_where_names_the_callers_where_not_our_sql(tmp_path: Path) -> None:
    """The message names the caller's where and what is wrong with it; the
    access clause (array_has_any, acl_roles, tenant = ...) is internal."""
    kb = _kb_with_docs(tmp_path)
    for where, problem in [
        ("no_such_column = 1", "no_such_column"),
        ("source = 1", "source = 1"),
        ("source = ", "source = "),
    ]:
        for mode in ("vector", "fts", "hybrid"):
            with pytest.raises(sr.InputError) as info:
                kb.search("refund", mode=mode, where=where, user=sr.User("ana", roles=["staff"]))
            text = str(info.value)
            assert repr(where) in text, text
            assert problem in text, text
            for internal in ("array_has", "acl_roles", "acl_users", "tenant =", "'staff'", "SELECT"):
                assert internal not in text, f"{internal!r} in {text!r}"


def test_surrogate_query_is_an_input_error_not_damage(tmp_path: Path) -> None:
    kb = _kb_with_docs(tmp_path)
    for mode in ("vector", "fts", "hybrid"):
        with pytest.raises(sr.InputError) as info:
            kb.search("refund \ud800", mode=mode)
        assert "surrogate" in str(info.value), str(info.value)
        assert "reindex" not in str(info.value), str(info.value)


def test_errors_carry_data() -> None:
    """As httpx's errors do: the path, the key, the model and the HTTP status
    are fields, not only words in the message; the old one-argument form works."""
    e = errors.PathNotFoundError("no knowledge base at /x", path=Path("/x"))
    assert e.path == Path("/x")
    assert str(e) == "no knowledge base at /x"
    assert errors.PathNotFoundError("no file").path is None
    nf = errors.NotFoundError("no source 'a.md'", key="a.md")
    assert nf.key == "a.md"
    assert str(nf) == "no source 'a.md'"
    assert errors.NotFoundError("x").key is None
    m = errors.ProviderError("rerank failed", model="cohere/rerank-v3.5", status_code=503)
    assert (m.model, m.status_code) == ("cohere/rerank-v3.5", 503)
    assert isinstance(m, errors.ModelError)
    assert str(m) == "rerank failed"
    plain = errors.ModelError("no key")
    assert (plain.model, plain.status_code) == (None, None)

    class UpstreamError(Exception):
        status_code = 429

    def call() -> None:
        try:
            raise UpstreamError("rate limited")
        except UpstreamError:
            raise errors.ProviderError("rerank: rate limited") from None

    with pytest.raises(errors.ProviderError) as info:
        call()
    # the status is read from the provider exception it was raised during
    assert info.value.status_code == 429


def test_provider_reranker_errors_name_the_model(loopback: Any) -> None:
    """A provider rerank that fails is a ProviderError (never a RuntimeError)
    with the reranker's model and the provider's HTTP status."""
    from selfrag_nb.rerankers import ProviderReranker, RerankerOptions

    loopback.fail("500", times=10)
    reranker = ProviderReranker(
        "cohere/rerank-v3.5", RerankerOptions(api_base=loopback.base_url, api_key="k-123456", timeout=5)
    )
    with pytest.raises(errors.ProviderError) as info:
        reranker.rank("refund", ["a", "b"])
    assert info.value.model == "cohere/rerank-v3.5"
    assert info.value.status_code == 500


def test_budgets_given_next_to_settings_win_and_none_keeps_them(tmp_path: Path) -> None:
    """timeout/deadline default to None (the Settings' values); a number given
    wins, also when it equals the old defaults (30 / 120)."""
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    base = sr.Settings(timeout=5, deadline=50)
    assert sr.SelfRAG(kb, settings=base).settings.timeout == 5
    assert sr.SelfRAG(kb, settings=base, timeout=30).settings.timeout == 30
    assert sr.SelfRAG(kb, settings=base, deadline=120).settings.deadline == 120
    assert sr.SelfRAG(kb).settings.timeout == sr.Settings().timeout


#: Where a built-in exception is created on purpose, and why it is not a
#: user-visible error outside the tree: (path under selfrag_nb, name) -> reason.
EXEMPT = {
    ("__init__.py", "AttributeError"): "module __getattr__ must raise AttributeError (PEP 562)",
    ("eval/cli.py", "SystemExit"): "the exit status of `python -m selfrag_nb.eval.cli`",
    ("llm/local_server.py", "SystemExit"): "the exit status of the llama.cpp launcher process (bad usage)",
    ("cli.py", "ValueError"): "handed to the CLI's own error printer, never raised",
    ("llm/runner.py", "RuntimeError"): "an unreachable internal invariant (pragma: no cover)",
    ("_sync.py", "RuntimeError"): (
        "run_sync called from its own loop's thread: a programming error of the caller "
        "(awaiting is the fix); kept as the built-in asyncio itself raises for it"
    ),
    ("testing/loopback.py", "RuntimeError"): "a test helper used before start(): test-author misuse",
    ("llm/offline/phrases.py", "ValueError"): "the offline arithmetic parser's control flow, caught in place",
    ("llm/offline/phrases.py", "ZeroDivisionError"): "the same parser: caught in place",
    ("llm/json_extract.py", "class _MalformedError"): "control flow of extract_json, caught in place",
    ("llm/litellm_loop.py", "class NoSlotError"): "a slot wait that timed out, turned into Completion.error",
    ("store/batches.py", "class EmbedderShapeError"): "caught by the writer and raised as EmbedderError",
    ("store/loaders.py", "class SkipFile"): "a loader's skip signal, recorded in IngestReport.skipped",
}


def builtin_exception_uses(root: Path) -> list[tuple[str, str, int]]:
    """(path, name, line) of every place the package makes a built-in exception
    its own: ``raise X(...)``, ``raise X``, ``return X(...)`` or any other call
    of a built-in exception class, and a class deriving from one. Found by
    walking the AST of every module, so no spelling hides it."""
    import ast
    import builtins

    names = {
        n
        for n in dir(builtins)
        if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
    }
    tree_classes = {"SelfRAGError", *CLASSES}
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = (
                    func.id
                    if isinstance(func, ast.Name)
                    else func.attr
                    if isinstance(func, ast.Attribute)
                    else ""
                )
                if name in names and not (isinstance(func, ast.Attribute) and not _is_builtins(func.value)):
                    found.append((rel, name, node.lineno))
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name) and node.exc.id in names:
                found.append((rel, node.exc.id, node.lineno))
            elif isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & names and not bases & tree_classes and node.name not in tree_classes:
                    if rel == "errors.py" and issubclass(getattr(errors, node.name), Warning):
                        continue  # a warning, not an error
                    found.append((rel, f"class {node.name}", node.lineno))
    return found


def _is_builtins(node: Any) -> bool:
    import ast

    return isinstance(node, ast.Name) and node.id == "builtins"


def test_no_builtin_exception_outside_the_tree() -> None:
    """Every error the package makes is a SelfRAGError subclass: no raise or
    return of ValueError / TypeError / KeyError / RuntimeError / ... (nor a
    class deriving from one outside the tree), except the documented EXEMPT
    places, each with its reason."""
    root = Path(sr.__file__).parent
    uses = builtin_exception_uses(root)
    outside = [f"{p}:{line} {name}" for p, name, line in uses if (p, name) not in EXEMPT]
    assert outside == []
    # an exemption that no longer matches anything is stale: drop it
    assert set(EXEMPT) <= {(p, name) for p, name, _ in uses}


def test_the_guard_sees_every_spelling(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import builtins\n"
        "def f(x):\n"
        "    if x: raise RuntimeError('a')\n"
        "    if x > 1: raise KeyError\n"
        "    if x > 2: return ValueError('returned, raised by the caller')\n"
        "    err = TypeError('kept')\n"
        "    raise builtins.LookupError('b')\n"
        "class Mine(ValueError):\n"
        "    pass\n",
        encoding="utf-8",
    )
    got = {(name, line) for _, name, line in builtin_exception_uses(tmp_path)}
    assert got == {
        ("RuntimeError", 3),
        ("KeyError", 4),
        ("ValueError", 5),
        ("TypeError", 6),
        ("LookupError", 7),
        ("class Mine", 8),
    }
