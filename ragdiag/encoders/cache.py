"""An on-disk embedding cache: one sqlite3 row per (model_id, sha256(text)) -> float32 vector.

The cache is shared by every notebook, CLI run and worker process on the machine, so:

* the database runs in WAL mode (readers never block the writer) with a generous busy
  timeout, and every write is one short ``BEGIN IMMEDIATE`` transaction, which makes it safe
  to open the same file from several processes at once;
* a connection is never reused across ``fork()``: a child process opens its own;
* lookups are batched ``IN (...)`` queries, so fetching 100k vectors costs a few hundred
  statements, not 100k.

Vectors are stored as little-endian float32 blobs together with their dimension; a row
whose blob length does not match its dimension is reported as a miss (and is overwritten by
the next ``put_many``). Texts are keyed by the SHA-256 of their UTF-8 bytes, so the database
never contains the texts themselves.

WAL needs a local file system; do not put the cache on NFS/SMB.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = ["EmbeddingCache", "text_key", "DEFAULT_DB_NAME"]

DEFAULT_DB_NAME = "embeddings.sqlite3"
_DB_SUFFIXES = frozenset({".sqlite", ".sqlite3", ".db"})
# Stay far below SQLITE_MAX_VARIABLE_NUMBER (999 on old builds, 32766 on new ones).
_IN_CHUNK = 500
_BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id    TEXT    NOT NULL,
    text_sha256 BLOB    NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB    NOT NULL,
    PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""


def text_key(text: str) -> bytes:
    """The cache key of one text: the raw 32-byte SHA-256 of its UTF-8 encoding."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """A process-safe sqlite3 cache of L2-normalised float32 embeddings.

    ``path`` is either the database file (a name ending in ``.sqlite``, ``.sqlite3`` or
    ``.db``) or a folder, in which case the database is ``<folder>/embeddings.sqlite3``.
    Missing folders are created.
    """

    def __init__(self, path: Path | str) -> None:
        path = Path(path).expanduser()
        if path.suffix.lower() in _DB_SUFFIXES and not path.is_dir():
            db_path = path
        else:
            db_path = path / DEFAULT_DB_NAME
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path: Path = db_path
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._connect()

    # -- connection handling -------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            str(self.path),
            timeout=_BUSY_TIMEOUT_S,
            isolation_level=None,  # autocommit; writes use explicit BEGIN IMMEDIATE
            check_same_thread=False,  # guarded by self._lock
        )
        conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        mode = _wal_mode(conn)
        if str(mode).lower() != "wal":  # pragma: no cover - only on exotic file systems
            conn.close()
            raise OSError(
                f"embedding cache {self.path}: sqlite refused WAL mode (got {mode!r}); "
                "put the cache on a local file system (set RAGDIAG_CACHE)"
            )
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(_SCHEMA)
        self._conn = conn
        self._pid = os.getpid()
        return conn

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            # Never touch a connection inherited through fork(); open a fresh one.
            self._conn = None
            return self._connect()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    # -- reads ---------------------------------------------------------------------------

    def get_many(self, model_id: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """Cached vectors for ``texts`` in order; ``None`` where a text is not cached.

        Returned arrays are read-only float32 views of the stored blobs.
        """
        keys = [text_key(t) for t in texts]
        found = self._get_by_keys(model_id, keys)
        return [found.get(k) for k in keys]

    def _get_by_keys(self, model_id: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        unique = list(dict.fromkeys(keys))
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(unique), _IN_CHUNK):
                chunk = unique[start:start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    "SELECT text_sha256, dim, vector FROM embeddings "
                    f"WHERE model_id = ? AND text_sha256 IN ({marks})",
                    (model_id, *chunk),
                ).fetchall()
                for key, dim, blob in rows:
                    if dim <= 0 or len(blob) != 4 * dim:
                        continue  # damaged row: treat as a miss, put_many overwrites it
                    found[bytes(key)] = np.frombuffer(blob, dtype="<f4")
        return found

    def count(self, model_id: str | None = None) -> int:
        """Number of cached vectors (of one model, or in total)."""
        with self._lock:
            conn = self._connection()
            if model_id is None:
                return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            return int(conn.execute(
                "SELECT COUNT(*) FROM embeddings WHERE model_id = ?", (model_id,)
            ).fetchone()[0])

    def __len__(self) -> int:
        return self.count()

    # -- writes --------------------------------------------------------------------------

    def put_many(self, model_id: str, texts: Sequence[str],
                 vectors: np.ndarray | Iterable[np.ndarray]) -> None:
        """Store one vector per text (replacing what was stored for that model and text)."""
        texts = list(texts)
        if isinstance(vectors, np.ndarray):
            matrix = vectors
        else:
            vecs = list(vectors)
            matrix = np.stack(vecs) if vecs else np.zeros((0, 0), dtype=np.float32)
        if matrix.ndim == 1 and len(texts) == 1:
            matrix = matrix[None, :]
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ValueError(
                f"put_many needs one vector per text: got {len(texts)} texts and vectors "
                f"of shape {matrix.shape}"
            )
        if not texts:
            return
        matrix = np.ascontiguousarray(matrix, dtype="<f4")
        dim = int(matrix.shape[1])
        if dim == 0:
            raise ValueError("put_many: vectors have dimension 0")
        rows = [(model_id, text_key(t), dim, matrix[i].tobytes()) for i, t in enumerate(texts)]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (model_id, text_sha256, dim, vector) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def delete_model(self, model_id: str) -> int:
        """Drop every vector of one model; returns how many rows were removed."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute("DELETE FROM embeddings WHERE model_id = ?", (model_id,))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return int(cur.rowcount)


def _wal_mode(conn: sqlite3.Connection) -> str:
    """Switch the file to WAL (persistent, so usually it already is) and return the mode.

    Switching needs an exclusive lock, and sqlite reports a concurrent opener's lock at once
    ("database is locked") instead of waiting for the busy timeout: two processes opening a new
    cache together made one of them fail. Retry until the busy timeout has passed.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    delay = 0.01
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() == "wal":
                return str(mode)
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
