"""all-MiniLM-L6-v2 on onnxruntime: an ONNX graph built from the verified weights.

    onnx_available()                     onnxruntime and onnx both importable?
    build_graph(weights) -> bytes        safetensors arrays -> ONNX model (no torch)
    quantize_graph(fp32) -> bytes        fp32 graph -> int8 weights (the opt-in "minilm:int8")
    dynamic_int8(model, op_types)        onnxruntime's dynamic quantization (also e5's int8)
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
weights int8 per output channel, activations quantized per call with one
scale per tensor (per batch: a text's int8 vector depends slightly on what it
is batched with). A few activation channels of this model are 4-5x wider than
the rest and would set that scale; they are multiplied apart in fp32 (the
fused Attention is split into its QKV MatMul and MultiHeadAttention for that),
and padded positions are zeroed where they would widen a batch's range. Apart
from those narrow side products every matrix product is int8; every sample
paragraph and question stays within cosine 0.993 of fp32 both on AVX2, whose
int8 products saturate in 16 bits, and on AVX-512 VNNI, whose products are
exact. What each choice gave is in benchmarks/store.md.

Both packages are the ``fast`` extra (``pip install 'selfrag-nb[fast]'``); the
numpy forward pass in ``embedders.py`` is the fallback when they are absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterator, Sequence
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
    "dynamic_int8",
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
#: The int8 recipe (quantize_graph; what each choice gave: benchmarks/store.md).
#: Dynamic quantization gives each activation tensor one scale, and a few
#: channels of this model would set it: the residual stream (the LayerNorm
#: outputs that feed each layer's QKV projection and first feed-forward
#: MatMul) reaches 28-30 in channel 99 and 15-17 in channel 223 against about
#: 6 in the others, and the GELU output feeding the feed-forward output MatMul
#: of layers 0-3 has one or two channels at 14-25 against 6-7. The same
#: channels were the largest on the sample texts, on the benchmark's
#: synthetic texts and on random token ids. Those channels are multiplied in
#: fp32 beside the int8 product of the others.
_RESIDUAL_OUTLIERS: tuple[int, ...] = (63, 99, 223)
_GELU_OUTLIERS: dict[int, tuple[int, ...]] = {0: (856,), 1: (607,), 2: (218, 1004), 3: (358,)}
#: nodes the int8 graph keeps wholly in fp32 (none: with the outlier channels
#: apart every matrix product holds the cosine bars in int8)
_INT8_FP32_NODES: list[str] = []
#: bumped when quantize_graph changes in a way the tables above do not show
_INT8_RECIPE_VERSION = 2


def _int8_recipe() -> str:
    """A digest of everything quantize_graph does: it names the int8 cache file."""
    parts = [
        f"v{_INT8_RECIPE_VERSION}",
        "fp32:" + ",".join(_INT8_FP32_NODES),
        "residual:" + ",".join(map(str, _RESIDUAL_OUTLIERS)),
        *(f"gelu{layer}:{','.join(map(str, ch))}" for layer, ch in sorted(_GELU_OUTLIERS.items())),
    ]
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:8]


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

    # the int8 file name also carries its recipe, so changing the recipe rebuilds it
    suffix = "" if precision == "fp32" else f"-{precision}-{_int8_recipe()}"
    return cache_dir() / "models" / f"minilm-{sha256[:32]}-g{GRAPH_VERSION}{suffix}.onnx"


def build_graph(weights: dict[str, NDArray[np.float32]], *, layers: int = _LAYERS) -> bytes:
    """The serialized ONNX model for all-MiniLM-L6-v2.

    ``weights`` are the safetensors arrays with every encoder linear weight
    already transposed to ``(in, out)`` (as ``MiniLMEmbedder`` keeps them).
    ``layers``: the encoder depth; another BERT-style encoder of the same
    width and heads (multilingual-e5-small, 12 layers: store/e5_onnx.py)
    builds with the same code."""
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
    for layer in range(layers):
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


def _attention_as_matmul(model: Any) -> None:
    """Rewrite, in place, each fused ``Attention`` as its QKV projection
    (``MatMul`` named ``l<i>_qkv``), a ``Split`` and a ``MultiHeadAttention``
    (which keeps the name ``l<i>_ctx``): the same arithmetic, but the
    projection is now a MatMul that can take an fp32 side product
    (:func:`_split_outlier_channels`); inside ``Attention`` it cannot."""
    from onnx import helper, numpy_helper

    graph = model.graph
    graph.initializer.append(numpy_helper.from_array(np.array([_DIM] * 3, dtype=np.int64), "int8_qkv_sizes"))
    nodes: list[Any] = []
    for n in graph.node:
        if n.op_type != "Attention":
            nodes.append(n)
            continue
        x, w, b, mask = n.input
        a = n.name.removesuffix("ctx")
        nodes += [
            helper.make_node("MatMul", [x, w], [a + "qkv"], name=a + "qkv"),
            helper.make_node("Split", [a + "qkv", "int8_qkv_sizes"], [a + "q", a + "k", a + "v"], axis=2),
            helper.make_node(
                "MultiHeadAttention",
                [a + "q", a + "k", a + "v", b, mask],
                [n.output[0]],
                name=n.name,
                domain="com.microsoft",
                num_heads=_HEADS,
            ),
        ]
    del graph.node[:]
    graph.node.extend(nodes)


def _split_outlier_channels(model: Any) -> list[str]:
    """Rewrite, in place, the MatMuls whose inputs carry the outlier channels
    ``c`` (``_RESIDUAL_OUTLIERS`` for ``l*_qkv`` and ``l*_in``,
    ``_GELU_OUTLIERS`` for ``l*_ff``) as

        x @ W  =  (x * keep) @ W  +  x[..., c] @ W[c, :]

    with ``keep`` 1 but 0 on ``c``. The first product keeps the node's name
    and is quantized; the second (``<name>_outliers``, returned) stays fp32.
    On the residual-stream inputs ``keep`` is also 0 on padded positions (and
    so are the outlier columns): their hidden states never reach the pooled
    vector but do enter a batch's per-tensor range, so a short text batched
    with long ones would otherwise get a coarser step."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    residual = np.ones(_DIM, dtype=np.float32)
    residual[list(_RESIDUAL_OUTLIERS)] = 0.0
    new_inits = [
        numpy_helper.from_array(np.array([2], dtype=np.int64), "int8_axis2"),
        numpy_helper.from_array(residual, "int8_residual_keep"),
    ]
    nodes: list[Any] = [
        helper.make_node("Cast", ["attention_mask"], ["int8_pad_f"], name="int8_pad_f", to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["int8_pad_f", "int8_axis2"], ["int8_pad"], name="int8_pad"),
        helper.make_node("Mul", ["int8_pad", "int8_residual_keep"], ["int8_keep_pad"], name="int8_keep_pad"),
    ]
    plan = {f"l{layer}_{m}": _RESIDUAL_OUTLIERS for layer in range(_LAYERS) for m in ("qkv", "in")}
    plan.update({f"l{layer}_ff": ch for layer, ch in _GELU_OUTLIERS.items()})
    fp32: list[str] = []
    for n in graph.node:
        if n.op_type != "MatMul" or n.name not in plan:
            nodes.append(n)
            continue
        name, (x, w_name), out = n.name, n.input, n.output[0]
        channels = list(plan[name])
        w = numpy_helper.to_array(inits[w_name])
        new_inits += [
            numpy_helper.from_array(np.array(channels, dtype=np.int64), name + "_oc"),
            numpy_helper.from_array(np.ascontiguousarray(w[channels]), name + "_ow"),
        ]
        nodes.append(helper.make_node("Gather", [x, name + "_oc"], [name + "_xo"], name=name + "_xo", axis=2))
        if plan[name] == _RESIDUAL_OUTLIERS:
            keep, x_out = "int8_keep_pad", name + "_xop"
            nodes.append(helper.make_node("Mul", [name + "_xo", "int8_pad"], [x_out], name=x_out))
        else:
            keep, x_out = name + "_keep", name + "_xo"
            mask = np.ones(w.shape[0], dtype=np.float32)
            mask[channels] = 0.0
            new_inits.append(numpy_helper.from_array(mask, keep))
        nodes += [
            helper.make_node("Mul", [x, keep], [name + "_xk"], name=name + "_xk"),
            helper.make_node("MatMul", [name + "_xk", w_name], [name + "_q"], name=name),
            helper.make_node("MatMul", [x_out, name + "_ow"], [name + "_o"], name=name + "_outliers"),
            helper.make_node("Add", [name + "_q", name + "_o"], [out], name=name + "_sum"),
        ]
        fp32.append(name + "_outliers")
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_inits)
    return fp32


def quantize_graph(fp32: bytes) -> bytes:
    """The int8 form of a graph from :func:`build_graph`.

    Dynamic quantization of every matrix product: weights int8 with one scale
    per output channel (one scale per matrix lost more), activations quantized
    on each call with one scale per tensor, except the outlier channels, which
    are multiplied apart in fp32 (:func:`_attention_as_matmul`, then
    :func:`_split_outlier_channels`). Min cosine to fp32 over every sample
    paragraph and retrieving question / the greetings: 0.9955 / 0.9957 on a
    CPU with AVX-512 VNNI, where int8 products are exact. The first recipe
    (layer 0 and the feed-forward outputs of layers 0-3 kept fp32, nothing
    split) measured 0.9920 / 0.9853 on the AVX2 CPU it was tuned on and
    0.9923 / 0.978 on the VNNI one, because AVX2's int8 products saturate in
    16 bits and so differ; benchmarks/store.md has both CPUs for this one."""
    _require()
    import onnx

    model = onnx.load_from_string(fp32)
    _attention_as_matmul(model)
    outlier_products = _split_outlier_channels(model)
    return dynamic_int8(model, ["MatMul"], exclude=[*_INT8_FP32_NODES, *outlier_products])


def dynamic_int8(model: Any, op_types: list[str], *, exclude: Sequence[str] = ()) -> bytes:
    """onnxruntime's dynamic quantization of ``model`` (an ``onnx.ModelProto``):
    the ``op_types`` nodes but ``exclude`` get int8 weights with one scale per
    output channel and activations quantized on each call; the serialized
    result. Shared by MiniLM's recipe and e5_onnx's."""
    _require()
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="selfrag-int8-") as tmp, _quiet_root_logger():
        out = Path(tmp) / "int8.onnx"
        quantize_dynamic(
            model,
            out,
            op_types_to_quantize=op_types,
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=list(exclude),
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
