"""The Muster AG corpus in an embedded PostgreSQL + pgvector: seed 002's system, for the pgvector sample.

Two tables as seed 002 writes them: ``documents`` (allowed groups and validity dates per
document) and ``chunks`` (content and embedding per chunk; every record of the structured
sample index, documents and sections included), and a view ``chunk_view`` joining them for
the target's column mapping. Embeddings are the sample's own (MiniLM over each record's
content, read from ragdiag's embedding cache, so nothing is embedded twice). The load is
skipped when the tables already hold this corpus (a hash in ``ragdiag_sample``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["open_sample_database", "load_corpus", "SAMPLE_TABLE"]

SAMPLE_TABLE = "chunk_view"
# 2: the embeddings as the embedder makes them (unit vectors on the grid of
#    ragdiag.encoders.numerics), written exactly: pgvector's float sums of them are exact
LOAD_VERSION = "2"

_DDL = """
DROP VIEW IF EXISTS chunk_view;
DROP TABLE IF EXISTS chunks;
DROP TABLE IF EXISTS documents;
DROP TABLE IF EXISTS ragdiag_sample;
CREATE TABLE documents (
    id text PRIMARY KEY,
    title text,
    doc_type text,
    allowed_groups text[] NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to timestamptz
);
CREATE TABLE chunks (
    id text PRIMARY KEY,
    document_id text NOT NULL REFERENCES documents(id),
    level text,
    section_title text,
    content text NOT NULL,
    embedding vector({dims}) NOT NULL
);
CREATE VIEW chunk_view AS
    SELECT c.id, c.document_id, c.level, c.section_title, c.content, c.embedding,
           d.title, d.doc_type, d.allowed_groups, d.valid_from, d.valid_to
    FROM chunks c JOIN documents d ON d.id = c.document_id;
CREATE TABLE ragdiag_sample (corpus_hash text NOT NULL);
"""


def _records() -> tuple[list[dict[str, Any]], str]:
    from ragdiag.sample.system import sample_dir

    path = Path(sample_dir()) / "index" / "structured.jsonl"
    blob = path.read_bytes()
    recs = [json.loads(line) for line in blob.decode("utf-8").splitlines() if line.strip()]
    return recs, hashlib.sha256(blob + LOAD_VERSION.encode()).hexdigest()[:24]


def load_corpus(uri: str, *, embedder: Any = None, progress: bool = False,
                log: Callable[[str], None] | None = None) -> int:
    """Load the structured sample into the database at `uri` (skipped when loaded); returns the chunk count."""
    import numpy as np
    import psycopg

    recs, digest = _records()
    with psycopg.connect(uri, autocommit=True) as conn:
        try:
            row = conn.execute("SELECT corpus_hash FROM ragdiag_sample").fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
        if row is not None and row[0] == digest:
            return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])  # type: ignore[index]
        if embedder is None:
            from ragdiag.sample.system import sample_embedder

            embedder = sample_embedder()
        if log:
            log(f"loading the sample corpus ({len(recs)} records) into the embedded PostgreSQL")
        from ragdiag.encoders.numerics import to_grid

        vecs = to_grid(np.asarray(embedder.embed([r["content"] for r in recs], progress=progress)))
        with conn.transaction():
            for stmt in _DDL.format(dims=vecs.shape[1]).split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            docs: dict[str, dict[str, Any]] = {}
            for r in recs:
                docs.setdefault(r["doc_id"], r)
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO documents (id, title, doc_type, allowed_groups, valid_from, valid_to) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [(d, r.get("title"), r.get("doc_type"), list(r.get("group_ids") or []), r.get("valid_from"),
                      r.get("valid_to")) for d, r in docs.items()])
                cur.executemany(
                    "INSERT INTO chunks (id, document_id, level, section_title, content, embedding) "
                    "VALUES (%s, %s, %s, %s, %s, %s::vector)",
                    [(r["key"], r["doc_id"], r.get("level"), r.get("section_title"), r["content"],
                      "[" + ",".join(repr(float(x)) for x in v) + "]") for r, v in zip(recs, vecs, strict=True)])
            conn.execute("INSERT INTO ragdiag_sample VALUES (%s)", (digest,))
    return len(recs)


def open_sample_database(*, data_dir: Path | None = None, log: Callable[[str], None] | None = None,
                         progress: bool = False) -> Any:
    """Start the embedded server (cache dir) and load the sample corpus: the running `EmbeddedPostgres`."""
    from ragdiag.targets.pgvector.server import start

    srv = start(data_dir)
    load_corpus(srv.uri, progress=progress, log=log)
    return srv
