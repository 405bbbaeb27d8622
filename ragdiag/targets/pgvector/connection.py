"""Read-only access to the client's database: every query in a READ ONLY transaction with a timeout.

The DSN is read from the environment variable the config names and never leaves this module:
connection errors are re-raised with the DSN, its password and its host removed. A server
that cannot be reached is `TargetUnavailableError` (exit 3: the service); refused credentials
or a missing database are `TargetError` (exit 2: the input). A statement cancelled by the
timeout is `TargetUnavailableError` (kind ``timeout``), which the runner's circuit breaker
counts: a database too slow for every statement does not cost every remaining probe its
whole timeout.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.errors import ConfigError, TargetError, TargetUnavailableError

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


#: what a server says when it is reachable but refuses this login: the input's fault, not an outage
_LOGIN_REFUSED = ("authentication failed", "no pg_hba.conf entry", "does not exist", "password",
                  "permission denied", "invalid connection option", "invalid dsn", "missing \"=\"",
                  "invalid integer value", "invalid sslmode")


def _refused_login(message: str) -> bool:
    low = message.lower()
    return any(s in low for s in _LOGIN_REFUSED)


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
            text = redact(str(exc).strip(), dsn)
            error = TargetError if _refused_login(text) else TargetUnavailableError
            raise error(f"cannot connect to PostgreSQL with {source}: {text}") from None

    @classmethod
    def from_env(cls, var: str, *, timeout_ms: int = 10000) -> ReadOnlyConnection:
        dsn = os.environ.get(var, "")
        if not dsn.strip():
            raise ConfigError(f"environment variable {var} is not set: it must hold the PostgreSQL DSN "
                              f"(e.g. export {var}='postgresql://reader@db/rag'); never write it into a file")
        return cls(dsn, timeout_ms=timeout_ms, source=f"${var}")

    def query(self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of `sql` (psycopg placeholders), read-only, within the statement timeout."""
        return self._run(sql, params, lambda cur: list(cur.fetchall()) if cur.description is not None else [])

    def column_names(self, sql: str, params: Mapping[str, Any] | None = None) -> tuple[str, ...]:
        """The result column names of `sql` (run with LIMIT 0 semantics by the caller)."""
        return self._run(sql, params, lambda cur: tuple(d.name for d in cur.description or ()))

    def _run(self, sql: str, params: Any, read: Any) -> Any:
        import psycopg

        with self._lock:
            try:
                with self._conn.transaction():
                    self._conn.execute(self._setup)
                    return read(self._conn.execute(sql, params))  # type: ignore[arg-type]
            except psycopg.errors.QueryCanceled as exc:
                raise TargetUnavailableError(f"query cancelled after the statement timeout of {self.timeout_ms} "
                                             f"ms: {str(exc).strip()[:200]}", kind="timeout") from None
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:  # the server went away
                if not self._conn.closed and not isinstance(exc, psycopg.InterfaceError):
                    raise TargetError(f"PostgreSQL refused the query: "
                                      f"{redact(str(exc).strip(), self._dsn)[:400]}") from None
                raise TargetUnavailableError(f"PostgreSQL stopped answering: "
                                             f"{redact(str(exc).strip(), self._dsn)[:400]}") from None
            except psycopg.Error as exc:
                raise TargetError(f"PostgreSQL refused the query: {redact(str(exc).strip(), self._dsn)[:400]}") \
                    from None

    def close(self) -> None:
        self._conn.close()

    def __repr__(self) -> str:  # never the DSN
        return f"ReadOnlyConnection(timeout_ms={self.timeout_ms})"
