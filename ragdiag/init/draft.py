"""What every init route produces: an audit folder in memory, before it is written.

A route (BEIR, TREC, documents, records, Azure) reads its source and fills a `Draft`: the
index definition, the records (none for a live index), the goldset cases or a template, the
policy text and the notes a user must read. `ragdiag.init.writer` turns it into files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragdiag.model.schema import (
    STRING,
    VECTOR,
    Field,
    IndexSchema,
    SemanticConfiguration,
    VectorSearchProfile,
)

EMBED_DIMENSIONS = 384  # the bundled all-MiniLM-L6-v2 (`ragdiag.init.embedder` re-dimensions for another)
VECTOR_FIELD = "content_vector"
VECTOR_PROFILE = "hnsw"
ANALYZERS = {"en": "en.lucene", "de": "de.lucene"}


@dataclass
class Draft:
    """One audit folder to write. `records` is None for a live index (nothing is copied)."""

    route: str  # beir | trec | documents | records | azure
    source: str  # what was read, for the README ("BEIR folder /data/scifact")
    schema: IndexSchema
    language: str
    language_note: str
    policy: str  # profiles.toml text
    records: list[dict[str, Any]] | None = None
    vector_sources: Mapping[str, list[str]] = field(default_factory=dict)
    cases: list[dict[str, Any]] = field(default_factory=list)  # goldset.yaml
    template: list[dict[str, Any]] = field(default_factory=list)  # goldset.template.yaml
    target: Mapping[str, Any] | None = None  # [target] of a live index (no records)
    identities: Mapping[str, list[str]] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> field, inferred
    # roles the chunk analysis's name detection misses: written to [target] fields
    field_roles: Mapping[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the user must know or edit
    counts: dict[str, int] = field(default_factory=dict)  # what was read, for the README
    #: what was skipped and not refused (empty or duplicate documents and records, judgments of
    #: them), by reason: written to the README and to audit.toml's [init], which the audit's meta repeats
    skipped: dict[str, int] = field(default_factory=dict)
    #: [target] embedding_model of a local index (None: the bundled English MiniLM)
    embedding_model: str | None = None
    embedder_note: str = ""  # which embedder and why, for the README


def text_field(name: str, language: str, *, searchable: bool = True) -> Field:
    """A searchable string field analysed in the corpus language (Azure's per-field analyzer)."""
    return Field(name, STRING, searchable=searchable, analyzer=ANALYZERS.get(language) if searchable else None)


def vector_field(name: str = VECTOR_FIELD) -> Field:
    return Field(name, VECTOR, searchable=True, dimensions=EMBED_DIMENSIONS, vector_profile=VECTOR_PROFILE,
                 retrievable=False)


def hnsw_profile() -> VectorSearchProfile:
    return VectorSearchProfile(name=VECTOR_PROFILE, algorithm="hnsw-1", kind="hnsw", metric="cosine",
                               m=16, ef_construction=200, ef_search=128)


def local_schema(name: str, fields: list[Field], *, title: str | None, content: str) -> IndexSchema:
    """An index definition with one MiniLM vector field over title + content and a semantic
    configuration reading the same text (so the two embed the same strings once)."""
    return IndexSchema(
        name=name, fields=(*fields, vector_field()),
        semantic_configurations=(SemanticConfiguration("default", title, (content,)),),
        default_semantic_configuration="default", vector_profiles=(hnsw_profile(),))


def index_name(stem: str) -> str:
    """An Azure index name from a folder or file name: lower-case letters, digits and dashes."""
    name = re.sub(r"[^a-z0-9-]+", "-", stem.lower()).strip("-")
    return (name or "audit")[:100]
