"""An embedded PostgreSQL 16 with pgvector for the sample and the tests, started and stopped by ragdiag.

The PyPI wheel `pgserver` bundles a PostgreSQL server and the `vector` extension and runs
offline (as root too). Its data directory lives under ragdiag's cache dir; the server listens
on a Unix socket in that directory only (no TCP port), so nothing outside this machine reaches
it. `start()` returns a handle whose `uri` is passed to psycopg and never printed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import TargetError

__all__ = ["EmbeddedPostgres", "start", "default_data_dir"]

_LOCK = threading.Lock()
_RUNNING: dict[Path, EmbeddedPostgres] = {}


@dataclass
class EmbeddedPostgres:
    """A running embedded server: its data directory and the (secret-free, local) connection URI."""

    data_dir: Path
    handle: Any

    @property
    def uri(self) -> str:
        return str(self.handle.get_uri())

    def stop(self) -> None:
        """Stop the server (the data directory stays for the next start)."""
        with _LOCK:
            _RUNNING.pop(self.data_dir, None)
            try:
                self.handle.cleanup()
            except Exception as exc:  # noqa: BLE001 - stopping must not mask the caller's error
                raise TargetError(f"could not stop the embedded PostgreSQL in {self.data_dir}: {exc}") from exc


def default_data_dir(name: str = "sample") -> Path:
    """`<cache>/pgvector/<name>`: where the sample's embedded database lives."""
    from ragdiag.sample.system import cache_dir

    path = cache_dir() / "pgvector"
    path.mkdir(parents=True, exist_ok=True)
    return path / name


def start(data_dir: Path | None = None) -> EmbeddedPostgres:
    """Start (or reuse, within this process) the embedded server on `data_dir` with pgvector created."""
    import pgserver
    import psycopg

    data_dir = Path(data_dir or default_data_dir()).resolve()
    with _LOCK:
        if data_dir in _RUNNING:
            return _RUNNING[data_dir]
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = pgserver.get_server(data_dir, cleanup_mode="stop")
        except Exception as exc:  # noqa: BLE001 - the wheel raises plain exceptions
            raise TargetError(f"could not start the embedded PostgreSQL in {data_dir}: "
                              f"{type(exc).__name__}: {exc}; delete the directory to start afresh") from exc
        srv = EmbeddedPostgres(data_dir, handle)
        with psycopg.connect(srv.uri, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        _RUNNING[data_dir] = srv
        return srv
