"""Small hand-made stand-ins for tests whose numbers must be checkable by hand."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from ragdiag.model.schema import (
    BOOLEAN,
    DATETIME,
    DOUBLE,
    INT32,
    STRING,
    STRING_COLLECTION,
    VECTOR,
    Field,
    IndexSchema,
    ScoringFunction,
    ScoringProfile,
    SemanticConfiguration,
    VectorSearchProfile,
)


class FakeEmbedder:
    """Maps known texts to fixed vectors; unknown texts to a vector seeded by a stable digest.

    Not Python's ``hash()``: it is salted per process (PYTHONHASHSEED), so a test would draw
    different vectors on every run and pass or fail by chance.
    """

    model_id = "fake-embedder"

    def __init__(self, table: Mapping[str, Sequence[float]] | None = None, dim: int = 3) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in (table or {}).items()}
        self.dim = dim
        self.calls = 0

    def _vec(self, text: str) -> np.ndarray:
        if text in self.table:
            v = self.table[text]
        else:
            rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
            v = rng.normal(size=self.dim).astype(np.float32)
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed(self, texts: Sequence[str], *, progress: bool = False, batch_size: int = 64) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])

    def embed_one(self, text: str) -> np.ndarray:
        return self._vec(text)


class KeyReranker:
    """Scores each passage by a fixed table of record key -> score (passages carry the key)."""

    name = "key-table reranker (test)"
    kind = "test"

    def __init__(self, by_text: Mapping[str, float]) -> None:
        self.by_text = dict(by_text)
        self.calls = 0

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = []
        for p in passages:
            out.append(next((s for k, s in self.by_text.items() if k in p.split()), 0.0))
        return np.asarray(out, dtype=np.float32)


def tiny_schema(name: str = "tiny") -> IndexSchema:
    """A six-field index with one vector field of 3 dimensions."""
    return IndexSchema(
        name=name,
        fields=(
            Field("key", STRING, key=True, filterable=True),
            Field("title", STRING, searchable=True),
            Field("content", STRING, searchable=True),
            Field("category", STRING, filterable=True),
            Field("confidence_score", DOUBLE, filterable=True),
            Field("page", INT32, filterable=True),
            Field("last_updated", DATETIME, filterable=True),
            Field("is_table", BOOLEAN, filterable=True),
            Field("entity_keys", STRING_COLLECTION, filterable=True),
            Field("group_ids", STRING_COLLECTION, filterable=True, retrievable=False),
            Field("vec", VECTOR, dimensions=3, vector_profile="hnsw"),
        ),
        semantic_configurations=(SemanticConfiguration("default", "key", ("content",)),),
        default_semantic_configuration="default",
        scoring_profiles=(
            ScoringProfile("conf", functions=(ScoringFunction(
                "magnitude", "confidence_score", boost=2.0,
                boosting_range_start=0.0, boosting_range_end=1.0),)),
            ScoringProfile("title3", text_weights={"title": 3.0}),
        ),
        vector_profiles=(VectorSearchProfile("hnsw", "hnsw-1", m=8),),
    )
