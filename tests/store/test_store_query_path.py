"""The question path beside the passage path (Embedder.embed_query) and the
embedder's scheme stored with a table.

Rules under test: search embeds its question with ``embed_query`` and ingest
embeds chunks with ``embed``; an embedder without ``embed_query`` embeds
questions with ``embed``; a table records its embedder's scheme and
``KnowledgeBase.open`` refuses an embedder of the same name with another
scheme; a table made before schemes were recorded opens, searches and
ingests as before; the ``litellm:`` embedder sends the provider's
``input_type`` per path; a Ray worker's rebuilt embedder with another scheme
is refused."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from selfrag_nb.errors import EmbedderError, KnowledgeBaseError
from selfrag_nb.store.embedders import (
    SAME_SCHEME,
    HashingEmbedder,
    embed_queries,
    embedder_scheme,
    get_embedder,
    register_embedder,
)
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.kb_core import META_KEY

DOCS = {
    "refunds.md": "# Refunds\n\nA refund is paid within 30 days of the purchase.\n",
    "shipping.md": "# Shipping\n\nParcels travel by truck and arrive within five business days.\n",
}


class Asymmetric(HashingEmbedder):
    """A hashing embedder whose questions are rewritten before hashing, the
    way E5 prefixes ``query: ``: ``money back`` becomes ``refund``. Records
    which path embedded what."""

    def __init__(self, scheme: str = "rewrite:v1") -> None:
        super().__init__(64)
        self.name = "asym-test"
        self.scheme = scheme
        self.calls: list[tuple[str, list[str]]] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls.append(("passage", list(texts)))
        return super().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> Any:
        self.calls.append(("query", list(texts)))
        return super().embed([t.replace("money back", "refund") for t in texts])


class PassagesOnly:
    """A user's own embedder from before the question path: name, dim, embed."""

    name = "passages-only-test"
    dim = 64

    def __init__(self) -> None:
        self._inner = HashingEmbedder(64)

    def embed(self, texts: Sequence[str]) -> Any:
        return self._inner.embed(texts)


register_embedder("asym-test", lambda arg, **kw: Asymmetric(**kw), replace=True)


def _docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _embedding_bodies(server: Any) -> list[dict[str, Any]]:
    """The embedding requests' bodies, less the dimension probe that building
    a LiteLLM embedder without ``dim=`` sends."""
    return [
        r.body
        for r in server.requests
        if r.path.endswith("/embeddings") and r.body and r.body.get("input") != ["dimension probe"]
    ]


def _stored_meta(kb: KnowledgeBase) -> dict[str, Any]:
    t = kb._tbl()
    assert t is not None
    meta: dict[str, Any] = json.loads(t.schema.metadata[META_KEY])
    return meta


def test_search_embeds_the_question_with_embed_query_and_ingest_with_embed(tmp_path: Path) -> None:
    emb = Asymmetric()
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=emb)
    kb.ingest(_docs(tmp_path))
    ingested = [texts for path, texts in emb.calls]
    assert {path for path, _ in emb.calls} == {"passage"}
    assert any("refund is paid" in t for texts in ingested for t in texts)
    emb.calls.clear()
    hits = kb.search("money back", k=2, mode="vector")
    assert emb.calls == [("query", ["money back"])]
    # only the question path turns "money back" into words the refund passage has
    assert hits.hits[0].source.endswith("refunds.md")
    kb.close()


def test_an_embedder_without_embed_query_embeds_questions_like_passages(tmp_path: Path) -> None:
    emb = PassagesOnly()
    assert embedder_scheme(emb) == SAME_SCHEME  # type: ignore[arg-type]
    np.testing.assert_array_equal(embed_queries(emb, ["refund"]), emb.embed(["refund"]))  # type: ignore[arg-type]
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=emb)  # type: ignore[arg-type]
    kb.ingest(_docs(tmp_path))
    assert kb.search("refund", k=1, mode="vector").hits[0].source.endswith("refunds.md")
    assert _stored_meta(kb)["scheme"] == SAME_SCHEME
    kb.close()
    with pytest.raises(TypeError, match="list of texts"):
        embed_queries(HashingEmbedder(), "one str")  # type: ignore[arg-type]


def test_builtin_embedders_name_their_scheme() -> None:
    h = get_embedder("hashing")
    assert embedder_scheme(h) == SAME_SCHEME
    np.testing.assert_array_equal(embed_queries(h, ["refund policy"]), h.embed(["refund policy"]))


def test_the_scheme_is_stored_and_another_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kb"
    kb = KnowledgeBase.open(path, embedder="asym-test")
    kb.ingest(_docs(tmp_path))
    assert _stored_meta(kb)["scheme"] == "rewrite:v1"
    kb.close()
    with pytest.raises(KnowledgeBaseError, match=r"scheme 'rewrite:v1'.*scheme 'rewrite:v2'") as err:
        KnowledgeBase.open(path, embedder="asym-test", scheme="rewrite:v2")
    assert "asym-test" in str(err.value)
    again = KnowledgeBase.open(path)  # the stored name builds the stored scheme
    assert again.search("money back", k=1, mode="vector").hits[0].source.endswith("refunds.md")
    again.close()


def test_a_scheme_that_is_not_a_string_is_an_error() -> None:
    emb = Asymmetric(scheme="  ")
    with pytest.raises(EmbedderError, match="scheme"):
        embedder_scheme(emb)


class _LegacyKB(KnowledgeBase):
    """Writes the table metadata as selfrag_nb did before schemes were stored."""

    def _schema(self) -> pa.Schema:
        schema = super()._schema()
        meta = json.loads(schema.metadata[META_KEY])
        del meta["scheme"]
        return schema.with_metadata({META_KEY: json.dumps(meta).encode()})


def test_a_table_from_before_schemes_opens_searches_and_ingests(tmp_path: Path) -> None:
    path = tmp_path / "kb"
    legacy = _LegacyKB.open(path, embedder="asym-test")
    legacy.ingest(_docs(tmp_path))
    assert "scheme" not in _stored_meta(legacy)
    legacy.close()
    for scheme in ("rewrite:v1", "rewrite:v2"):
        kb = KnowledgeBase.open(path, embedder="asym-test", scheme=scheme)
        assert kb.search("refund", k=1, mode="vector").hits[0].source.endswith("refunds.md")
        kb.close()
    kb = KnowledgeBase.open(path)
    more = tmp_path / "more"
    more.mkdir()
    (more / "returns.md").write_text("# Returns\n\nReturned parcels are checked within a week.\n")
    report = kb.ingest(more)
    assert report.version >= 2
    assert len(kb) >= 3
    kb.close()


def test_litellm_sends_the_providers_input_type_per_path() -> None:
    from selfrag_nb.testing import LoopbackServer

    with LoopbackServer() as server:
        e = get_embedder("litellm:nvidia_nim/nv-embedqa-e5-v5", api_base=server.url, api_key="sk-test")
        assert e.scheme == "input_type:query/passage"  # type: ignore[attr-defined]
        passages = e.embed(["alpha", "beta"])
        questions = embed_queries(e, ["alpha"])
        assert passages.shape == (2, questions.shape[1])
        bodies = _embedding_bodies(server)
        assert [(b["input"], b.get("input_type")) for b in bodies] == [
            (["alpha", "beta"], "passage"),
            (["alpha"], "query"),
        ]
        server.clear()
        plain = get_embedder("litellm:openai/text-embedding-3-small", api_base=server.url, api_key="sk-test")
        assert embedder_scheme(plain) == SAME_SCHEME
        plain.embed(["alpha"])
        embed_queries(plain, ["alpha"])
        bodies = _embedding_bodies(server)
        assert len(bodies) == 2
        assert all("input_type" not in b for b in bodies)
        server.clear()
        fixed = get_embedder(
            "litellm:nvidia_nim/nv-embedqa-e5-v5", api_base=server.url, api_key="sk-test", input_type="query"
        )
        assert embedder_scheme(fixed) == SAME_SCHEME  # one value for both paths, as before
        chosen = get_embedder(
            "litellm:openai/x", api_base=server.url, api_key="sk-test", input_types=("q", "d")
        )
        assert embedder_scheme(chosen) == "input_type:q/d"
    with pytest.raises(ValueError, match="input_types"):
        get_embedder("litellm:openai/x", input_types=("q",))
    with pytest.raises(ValueError, match="not both"):
        get_embedder("litellm:openai/x", input_types=("q", "d"), input_type="q")


def test_a_ray_worker_embedder_with_another_scheme_is_refused(tmp_path: Path) -> None:
    from selfrag_nb.store.ray_ingest import check_rebuilt

    kb = KnowledgeBase.open(tmp_path / "kb", embedder=Asymmetric())
    schema = kb._schema()
    assert check_rebuilt(Asymmetric(), schema).name == "asym-test"
    with pytest.raises(EmbedderError, match=r"scheme 'rewrite:v2'.*scheme 'rewrite:v1'"):
        check_rebuilt(Asymmetric(scheme="rewrite:v2"), schema)
    with pytest.raises(EmbedderError, match="'hashing:64'"):
        check_rebuilt(HashingEmbedder(64), schema)
    kb.close()
