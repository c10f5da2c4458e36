"""Fixtures for the pipeline tests: a small real LanceDB knowledge base
(hashing embedder) in a tmp folder, and a ScriptedModel-backed SelfRAG."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DOCS = {
    "refunds.md": (
        "---\ntitle: Refund policy\n---\n# Refund policy\n\n"
        "Customers can request a full refund within 30 days of purchase. "
        "Refunds are paid back to the original payment method within 5 business days.\n"
    ),
    "plans.md": (
        "---\ntitle: Plans\n---\n# Plans\n\n"
        "The Free plan allows 3 projects. The Pro plan costs $12 per user per month and allows "
        "unlimited projects. The Enterprise plan adds SSO and a 99.9% uptime SLA.\n"
    ),
    "export.md": (
        "---\ntitle: Export formats\n---\n# Export formats\n\n"
        "Version 2.3 exports CSV, JSON and PDF. Excel files (XLSX) are not supported for export.\n"
    ),
    "shipping.md": (
        "---\ntitle: Shipping\n---\n# Shipping\n\n"
        "Orders ship within 2 business days. Tracking numbers are emailed when the order leaves the warehouse.\n"
    ),
    "secret.md": (
        "---\ntitle: Merger plan\nroles: [board]\n---\n# Merger plan\n\n"
        "Project Bluefin: the refund budget will be cut to 10 days after the merger with Zentrix.\n"
    ),
}
SECRET = "Bluefin"


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

    return ScriptedModel()


@pytest.fixture
def make_rag(kb: Any, scripted: Any) -> Callable[..., Any]:
    from selfrag_nb.pipeline import SelfRAG

    def make(**kw: Any) -> Any:
        kw.setdefault("model", scripted)
        return SelfRAG(kb, **kw)

    return make
