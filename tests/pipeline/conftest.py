"""Fixtures for the pipeline tests: a small real LanceDB knowledge base
(hashing embedder) in a tmp folder, and a ScriptedModel-backed SelfRAG."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers_pipeline import DOCS

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="session")
def kb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from selfrag_nb.store.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("pipeline_kb")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs)
    return root / "kb"


@pytest.fixture(scope="session")
def kb(kb_dir: Path) -> Any:
    from selfrag_nb.store.kb import KnowledgeBase

    return KnowledgeBase.open(kb_dir, embedder="hashing")


@pytest.fixture
def scripted() -> Any:
    from selfrag_nb.testing import ScriptedModel

    model = ScriptedModel()
    # These tests script the other roles; the usefulness judge agrees unless a test says otherwise.
    model.default(
        "usefulness", {"verdict": "yes", "score": 90, "missing": "", "reason": "scripted: answers it"}
    )
    return model


@pytest.fixture
def make_rag(kb: Any, scripted: Any) -> Callable[..., Any]:
    from selfrag_nb.pipeline import SelfRAG

    def make(**kw: Any) -> Any:
        kw.setdefault("model", scripted)
        return SelfRAG(kb, **kw)

    return make
