"""`import selfrag_nb` stays light: no heavy module is imported until used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "litellm",
    "lancedb",
    "torch",
    "plotly",
    "pandas",
    "sentence_transformers",
    "pyarrow",
    "numpy",
    "opentelemetry",
    "openinference",
    "ray",
)


def _modules_after(code: str) -> list[str]:
    probe = f"import sys; {code}; import json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_does_not_pull_heavy_modules() -> None:
    loaded = set(_modules_after("import selfrag_nb"))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_public_names_resolve_lazily() -> None:
    import selfrag_nb as sr

    for name in sr.__all__:
        assert getattr(sr, name) is not None, name
    assert "KnowledgeBase" in dir(sr)


def test_unknown_attribute_is_a_clear_error() -> None:
    import pytest

    import selfrag_nb as sr

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = sr.Nope  # type: ignore[attr-defined]  # deliberately missing


def test_user_and_settings_need_no_heavy_modules() -> None:
    loaded = set(
        _modules_after("import selfrag_nb as sr; sr.User('ana', roles=['staff']); sr.Settings(); sr.Trace")
    )
    assert not loaded & {"litellm", "lancedb", "torch", "plotly", "pandas"}, sorted(loaded & set(HEAVY))


def test_every_public_name_is_typed_for_ide_users() -> None:
    # runtime resolves names lazily (__getattr__); type checkers and IDEs see
    # only the TYPE_CHECKING block, so each public name must be imported there
    import ast

    import selfrag_nb

    source = Path(selfrag_nb.__file__).read_text(encoding="utf-8")
    block = next(
        n
        for n in ast.parse(source).body
        if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    typed = {a.asname or a.name for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    lazy = set(selfrag_nb._LAZY)
    assert lazy - typed == set()
    for name in ("Model", "Embedder", "Reranker", "register_model", "register_embedder", "register_reranker"):
        assert name in selfrag_nb.__all__
        assert getattr(selfrag_nb, name) is not None
