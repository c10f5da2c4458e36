"""all-MiniLM-L6-v2 on onnxruntime: an ONNX graph built from the verified weights.

    onnx_available()                     onnxruntime and onnx both importable?
    build_graph(weights) -> bytes        safetensors arrays -> ONNX model (no torch)
    quantize_graph(fp32) -> bytes        fp32 graph -> int8 weights (the opt-in "minilm:int8")
    OnnxMiniLM(weights, sha256,          graph from the cache or built once, then a session
               precision="fp32")
        .forward(ids, mask) -> pooled    (b, t) int64 ids + 0/1 mask -> (b, 384) mean-pooled

The graph (opset 17 plus onnxruntime's ``com.microsoft`` fused ops):

    ids -> Gather(word) + position[:t] + token_type[0] -> LayerNormalization
        -> 6 x [ Attention(qkv packed, 12 heads, 2D mask) -> MatMul -> SkipLayerNormalization
                 -> MatMul -> BiasGelu (exact, erf) -> MatMul -> SkipLayerNormalization ]
        -> masked mean over tokens -> pooled

The fused ops (all ``com.microsoft``, in every onnxruntime CPU build) are
written directly: onnxruntime's optimizer did not fuse the plain-op form of
this graph (measured: it left 37 Adds, 13 LayerNormalizations and the Erf
chains in place), and the fused form is what makes it faster than torch.
Attention replaces the reshape/transpose/softmax chain with one kernel;
SkipLayerNormalization folds residual + bias + LayerNorm; BiasGelu is the
exact (erf) GELU with its bias. The serialized graph
is cached under ``cache_dir()/models`` keyed by the weights' sha256 (which the
caller has already checked) and this builder's version, written atomically;
a cache file that fails to load is rebuilt.

The int8 graph is the fp32 one through onnxruntime's dynamic quantization:
weights int8 per output channel, activations quantized per call (per batch:
a text's int8 vector depends slightly on what it is batched with); the
feed-forward output MatMuls of layers 0-3 (their GELU inputs have the widest
range) and the whole first layer stay fp32, which is what kept every sample
document within cosine 0.99 of fp32. What each choice gave is in benchmarks/store.md.

Both packages are the ``fast`` extra (``pip install 'selfrag-nb[fast]'``); the
numpy forward pass in ``embedders.py`` is the fallback when they are absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from selfrag_nb.errors import EmbedderError, MissingDependencyError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "GRAPH_VERSION",
    "PRECISIONS",
    "OnnxMiniLM",
    "build_graph",
    "graph_cache_path",
    "onnx_available",
    "quantize_graph",
]

#: Bumped whenever build_graph changes what it emits (old cache files are then ignored).
GRAPH_VERSION = 2
_LAYERS = 6
_HEADS = 12
_DIM = 384
_EPS = 1e-12
#: the graphs OnnxMiniLM can run
PRECISIONS = ("fp32", "int8")
#: nodes the int8 graph keeps in fp32: the feed-forward outputs (``l*_ff``) of
#: layers 0-3 and the whole first layer. Quantizing layer 4's and 5's kept every
#: bar (one more, layer 3's, took a greeting from 0.985 to 0.981), and those
#: products were 39 % of the int8 graph's time while fp32 (benchmarks/store.md).
_INT8_FP32_NODES = [*(f"l{layer}_ff" for layer in range(4)), "l0_ctx", "l0_in", "l0_ao"]


def onnx_available() -> bool:
    """True when both onnxruntime (to run) and onnx (to build the graph) are importable."""
    return (
        importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
    )


def _require() -> None:
    if not onnx_available():
        raise MissingDependencyError(
            "the onnxruntime MiniLM path needs onnxruntime and onnx: pip install 'selfrag-nb[fast]'"
        )


def graph_cache_path(sha256: str, precision: str = "fp32") -> Path:
    """Where the graph of ``precision`` built from weights with digest ``sha256`` is cached."""
    from selfrag_nb.resources import cache_dir

    # the int8 file name also carries its recipe, so changing what stays fp32 rebuilds it
    recipe = hashlib.sha256(",".join(_INT8_FP32_NODES).encode()).hexdigest()[:8]
    suffix = "" if precision == "fp32" else f"-{precision}-{recipe}"
    return cache_dir() / "models" / f"minilm-{sha256[:32]}-g{GRAPH_VERSION}{suffix}.onnx"


def build_graph(weights: dict[str, NDArray[np.float32]]) -> bytes:
    """The serialized ONNX model for all-MiniLM-L6-v2.

    ``weights`` are the safetensors arrays with every encoder linear weight
    already transposed to ``(in, out)`` (as ``MiniLMEmbedder`` keeps them)."""
    _require()
    from onnx import TensorProto, helper, numpy_helper

    inits: list[Any] = []
    nodes: list[Any] = []

    def init(name: str, arr: NDArray[Any]) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], out: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], name=out, domain=domain, **attrs))
        return out

    w = weights
    # embeddings: the token-type row 0 is folded into the position table
    word = init("word", w["embeddings.word_embeddings.weight"])
    pos = init(
        "pos", w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    )
    zero = init("zero", np.array([0], dtype=np.int64))
    one = init("one", np.array([1], dtype=np.int64))
    axis1 = init("axis1", np.array([1], dtype=np.int64))
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    pos_t = node("Slice", [pos, zero, seq, zero, one], "pos_t")
    tok = node("Gather", [word, "input_ids"], "tok")
    emb = node("Add", [tok, pos_t], "emb")
    x = node(
        "LayerNormalization",
        [
            emb,
            init("emb_ln_w", w["embeddings.LayerNorm.weight"]),
            init("emb_ln_b", w["embeddings.LayerNorm.bias"]),
        ],
        "x0",
        axis=-1,
        epsilon=_EPS,
    )

    def dense_norm(
        inp: str, skip: str, key: str, a: str, tags: tuple[str, str, str], *, weight: str = ""
    ) -> str:
        """``inp`` @ ``key``.dense, then SkipLayerNormalization = LayerNorm(product
        + ``skip`` + dense bias) with ``key``.LayerNorm; ``tags`` name the
        product, the norm's weights and the output (``weight`` the dense's
        initializers, when not named like the product)."""
        mm, ln, out = tags
        wname = weight or mm
        product = node("MatMul", [inp, init(a + wname + "_w", w[key + ".dense.weight"])], a + mm)
        return node(
            "SkipLayerNormalization",
            [
                product,
                skip,
                init(a + ln + "_w", w[key + ".LayerNorm.weight"]),
                init(a + ln + "_b", w[key + ".LayerNorm.bias"]),
                init(a + wname + "_b", w[key + ".dense.bias"]),
            ],
            a + out,
            domain="com.microsoft",
            epsilon=_EPS,
        )

    mask_i32 = node("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)
    one_f = init("one_f", np.array(1.0, dtype=np.float32))
    for layer in range(_LAYERS):
        p = f"encoder.layer.{layer}."
        a = f"l{layer}_"
        qkv_w = np.concatenate(
            [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], axis=1
        )
        qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
        ctx = node(
            "Attention",
            [x, init(a + "qkv_w", qkv_w), init(a + "qkv_b", qkv_b), mask_i32],
            a + "ctx",
            domain="com.microsoft",
            num_heads=_HEADS,
        )
        x = dense_norm(ctx, x, p + "attention.output", a, ("ao", "ln1", "x1"))
        h = node("MatMul", [x, init(a + "in_w", w[p + "intermediate.dense.weight"])], a + "in")
        # BiasGelu = exact GELU(input + bias)
        g = node(
            "BiasGelu",
            [h, init(a + "in_b", w[p + "intermediate.dense.bias"])],
            a + "gelu",
            domain="com.microsoft",
        )
        x = dense_norm(g, x, p + "output", a, ("ff", "ln2", "x2"), weight="out")
    # mean over real tokens (the caller L2-normalises)
    mask_f = node(
        "Unsqueeze",
        [
            node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT),
            init("axis2", np.array([2], dtype=np.int64)),
        ],
        "mask3",
    )
    summed = node("ReduceSum", [node("Mul", [x, mask_f], "masked"), axis1], "summed", keepdims=0)
    count = node("ReduceSum", [mask_f, axis1], "count", keepdims=0)
    count = node("Max", [count, one_f], "count_min1")
    node("Div", [summed, count], "pooled")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", _DIM])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="selfrag_nb",
    )
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """onnxruntime's quantizer logs advice ("consider pre-processing") on the
    root logger; in a notebook that lands in the user's cell output. A filter
    on the root logger for the duration drops records from that one module."""
    import logging

    def drop(record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname

    root = logging.getLogger()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)


def quantize_graph(fp32: bytes) -> bytes:
    """The int8 form of a graph from :func:`build_graph`.

    Dynamic quantization: MatMul and Attention weights become int8 with one
    scale per output channel (one scale per matrix lost more), activations are
    quantized on each call. Left in fp32, measured on the sample corpus and
    questions (min cosine to fp32): keeping only the feed-forward outputs
    ``l*_ff`` gave 0.985, keeping them and layer 0 gives 0.992, and then
    quantizing layers 4 and 5's feed-forward outputs again still 0.992; the
    exploration is written up in benchmarks/store.md."""
    _require()
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="selfrag-int8-") as tmp, _quiet_root_logger():
        out = Path(tmp) / "int8.onnx"
        quantize_dynamic(
            onnx.load_from_string(fp32),
            out,
            op_types_to_quantize=["MatMul", "Attention"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=_INT8_FP32_NODES,
            # the com.microsoft ops have no shape inference to type their outputs
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        return out.read_bytes()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class OnnxMiniLM:
    """An onnxruntime session over the MiniLM graph for weights with digest ``sha256``.

    ``threads`` sets onnxruntime's intra-op threads (None: its default, one per
    core); ``precision`` is ``"fp32"`` or ``"int8"`` (:func:`quantize_graph`)."""

    def __init__(
        self,
        weights: dict[str, NDArray[np.float32]],
        sha256: str,
        *,
        threads: int | None = None,
        precision: str = "fp32",
    ) -> None:
        _require()
        if precision not in PRECISIONS:
            raise EmbedderError(f"MiniLM precision must be one of {PRECISIONS}, got {precision!r}")
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            opts.intra_op_num_threads = threads
        opts.log_severity_level = 3  # warnings about unused initializers are noise here
        path = graph_cache_path(sha256, precision)
        session = None
        if path.is_file():
            try:
                session = ort.InferenceSession(path.read_bytes(), opts, providers=["CPUExecutionProvider"])
            except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt below
                session = None
        if session is None:
            data = build_graph(weights)
            try:
                if precision == "int8":
                    data = quantize_graph(data)
                session = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime raises its own classes
                raise EmbedderError(f"onnxruntime could not load the MiniLM graph: {exc}") from exc
            with contextlib.suppress(OSError):  # a read-only cache only costs the rebuild next time
                _write_atomic(path, data)
        self._session = session

    def forward(self, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> NDArray[np.float32]:
        out = self._session.run(["pooled"], {"input_ids": ids, "attention_mask": mask})[0]
        pooled: NDArray[np.float32] = np.asarray(out, dtype=np.float32)
        return pooled
