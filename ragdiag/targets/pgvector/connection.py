"""Read-only access to the client's database: every query in a READ ONLY transaction with a timeout.

The DSN is read from the environment variable the config names and never leaves this module:
connection errors are re-raised with the DSN, its password and its host removed.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.errors import ConfigError, TargetError

__all__ = ["ReadOnlyConnection", "redact"]


def redact(message: str, dsn: str) -> str:
    """`message` without the DSN, its password, user or host (connection errors quote them)."""
    out = message.replace(dsn, "<dsn>") if dsn else message
    for pat in (r"password=\S+", r"://[^@/\s]*@", r"(?<=host=)\S+", r"(?<=server at \")[^\"]+"):
        out = re.sub(pat, lambda m: "://<redacted>@" if m.group(0).startswith("://") else "<redacted>", out)
    try:
        from psycopg.conninfo import conninfo_to_dict

        for k, v in conninfo_to_dict(dsn).items():
            if k in ("password", "user", "host", "hostaddr") and v and len(str(v)) > 2:
                out = out.replace(str(v), "<redacted>")
    except Exception:  # noqa: BLE001 - an unparsable DSN: the patterns above did what they could
        pass
    return out


class ReadOnlyConnection:
    """One connection; `query()` runs a statement in a READ ONLY transaction with `statement_timeout`."""

    def __init__(self, dsn: str, *, timeout_ms: int = 10000, source: str = "the DSN") -> None:
        import psycopg

        self._dsn = dsn
        self.timeout_ms = int(timeout_ms)
        # one round trip opens every transaction read-only with the timeout (no parameters: two statements)
        self._setup = f"SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {self.timeout_ms}"
        self._lock = threading.Lock()
        try:
            self._conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise TargetError(f"cannot connect to PostgreSQL with {source}: "
                              f"{redact(str(exc).strip(), dsn)}") from None

    @classmethod
    def from_env(cls, var: str, *, timeout_ms: int = 10000) -> ReadOnlyConnection:
        dsn = os.environ.get(var, "")
        if not dsn.strip():
            raise ConfigError(f"environment variable {var} is not set: it must hold the PostgreSQL DSN "
                              f"(e.g. export {var}='postgresql://reader@db/rag'); never write it into a file")
        return cls(dsn, timeout_ms=timeout_ms, source=f"${var}")

    def query(self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of `sql` (psycopg placeholders), read-only, within the statement timeout."""
        import psycopg

        with self._lock:
            try:
                with self._conn.transaction():
                    self._conn.execute(self._setup)
                    cur = self._conn.execute(sql, params)  # type: ignore[arg-type]
                    return list(cur.fetchall()) if cur.description is not None else []
            except psycopg.errors.QueryCanceled as exc:
                raise TargetError(f"query cancelled after the statement timeout of {self.timeout_ms} ms: "
                                  f"{str(exc).strip()[:200]}") from None
            except psycopg.Error as exc:
                raise TargetError(f"PostgreSQL refused the query: {redact(str(exc).strip(), self._dsn)[:400]}") \
                    from None

    def column_names(self, sql: str, params: Mapping[str, Any] | None = None) -> tuple[str, ...]:
        """The result column names of `sql` (run with LIMIT 0 semantics by the caller)."""
        with self._lock, self._conn.transaction():
            self._conn.execute(self._setup)
            cur = self._conn.execute(sql, params)  # type: ignore[arg-type]
            return tuple(d.name for d in cur.description or ())

    def close(self) -> None:
        self._conn.close()

    def __repr__(self) -> str:  # never the DSN
        return f"ReadOnlyConnection(timeout_ms={self.timeout_ms})"
