"""Fixtures of the store tests (documents come from tests/support/store_docs.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_docs import write_docs

from selfrag_nb.store.kb import KnowledgeBase


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "docs")


@pytest.fixture
def kb(tmp_path: Path, docs_dir: Path) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs_dir)
    yield kb
    kb.close()
