"""Rerankers: score (query, passage) pairs on Azure's semantic ranker scale, 0..4.

4 = highly relevant, 2 = somewhat relevant, 0 = irrelevant.

* :class:`BiEncoderReranker` (the offline default): cosine of MiniLM embeddings mapped
  linearly onto 0..4; *not* a cross-encoder, and named so.
* :class:`CrossEncoderReranker`: a real sequence-classification cross-encoder from a local
  folder; refuses a model whose classification head is missing (see `checkpoint.py`),
  because a randomly initialised head scores noise.
* :func:`load_reranker` picks one from a config value.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ragdiag.encoders import offline
from ragdiag.encoders.checkpoint import Checkpoint, params_missing_from, transformer_folder
from ragdiag.encoders.embedder import EmbedderLike, _check_texts, default_embedder
from ragdiag.errors import ModelError


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


#: Cross-encoder logits and scores are rounded to multiples of this (2^-20, about 1e-6): far
#: above the float64 model's differences between machines (~1e-15), far below any score
#: difference that matters.
LOGIT_GRID = 2.0 ** -20


class CrossEncoderReranker:
    """A sequence-classification cross-encoder from a local folder, scores mapped to 0..4.

    Mapping: ``score = 4 * sigmoid((logit - center) / scale)`` where ``logit`` is the raw
    model output (one-label models) or ``logit[1] - logit[0]`` (two-label models: the
    log-odds of "relevant"). With the defaults ``center=0, scale=1`` a logit of 0 (the model
    is undecided) maps to 2 ("somewhat relevant"), +3 to 3.81 and -3 to 0.19; MS MARCO style
    cross-encoders emit roughly -11..+11, so clear answers land near 4 and clear misses near
    0. Any activation stored in the model's config is ignored: the mapping above is the only
    one applied.

    The model runs in float64 and the logits are rounded to multiples of `LOGIT_GRID` before
    the mapping, which is computed value by value with the C library's ``tanh`` (not numpy's
    vectorised one, whose last bit depends on the instruction set): the scores do not depend
    on the CPU, instruction set or thread count (see `ragdiag.encoders.numerics`).

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
        ckpt = Checkpoint(self._hf_dir)

        st = offline.import_sentence_transformers()
        import torch

        try:
            model = st.CrossEncoder(str(self.path), device=device, local_files_only=True,
                                    activation_fn=torch.nn.Identity())
        except Exception as exc:
            raise ModelError(
                f"could not load {self.path} as a cross-encoder offline: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        missing = params_missing_from(model.model, ckpt)
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
        model.to(torch.float64)  # machine-independent logits (ragdiag.encoders.numerics)
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
        self._hf_dir, modules = transformer_folder(self.path)
        config = offline.read_json(self._hf_dir / "config.json")
        if not isinstance(config, dict):
            raise ModelError(f"{self._hf_dir} has no config.json, so it is no transformers model. {fix}")
        archs = [str(a) for a in config.get("architectures") or []]
        kinds = offline.module_kinds(modules)
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
        x = np.rint(x / LOGIT_GRID) * LOGIT_GRID
        z = ((x - self.center) / self.scale).reshape(-1)
        # 4 * sigmoid(z) = 2 * (1 + tanh(z / 2)), overflow-free, one libm call per value
        out = np.array([2.0 * (1.0 + math.tanh(0.5 * float(v))) for v in z], dtype=np.float64)
        return (np.rint(out / LOGIT_GRID) * LOGIT_GRID).reshape(x.shape)

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
