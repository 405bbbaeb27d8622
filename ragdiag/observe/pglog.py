"""The statements an application sent to Postgres: the server log, or `pg_stat_statements`.

**Server log** (what the embedded pgserver has: its PostgreSQL 16.2 ships no
``pg_stat_statements``): with ``log_min_duration_statement = 0`` (or ``log_statement = 'all'``)
the server logs every statement, and for the extended protocol (psycopg, asyncpg, JDBC) the
bound parameters on the following ``DETAIL:  Parameters: $1 = '...'`` line. Read with the
default ``log_line_prefix`` (``'%m [%p] '``) or any prefix that ends before the level
(``LOG:``, ``DETAIL:``); multi-line statements continue on tab-indented lines. For a client's
server the DBA sets the option in ``postgresql.conf`` (or ``ALTER SYSTEM``) for the recording
window; `enable_statement_log` does it for ragdiag's own embedded server only.

**pg_stat_statements** (where a client's server has the extension): normalised statements
(constants as ``$1``) with their call counts, read by one SELECT; no parameters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import InputDataError, TargetError
from ragdiag.inputs import limits

MAX_LOG_BYTES = 4 << 30
_RECORD = re.compile(r"^(?P<prefix>.*?)(?P<level>LOG|DETAIL|ERROR|WARNING|STATEMENT|HINT|CONTEXT|FATAL|PANIC|"
                     r"NOTICE|INFO|DEBUG\d?):  (?P<msg>.*)$")
_TS = re.compile(r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?: ?[A-Z]{2,5}|[+-]\d\d(?::?\d\d)?)?)")
_PID = re.compile(r"\[(\d+)\]")
_STATEMENT = re.compile(r"^(?:duration: (?P<ms>[\d.]+) ms  )?(?:statement: |execute (?P<name>[^:]*): )(?P<sql>.*)$",
                        re.S)
_PARAM = re.compile(r"\$(\d+) = (NULL|'(?:[^']|'')*')")


@dataclass(frozen=True)
class Statement:
    """One statement as the server received it, with its bound parameters where the log has them."""

    sql: str
    params: tuple[str | None, ...] = ()
    duration_ms: float | None = None
    ts: str | None = None
    pid: int | None = None
    calls: int = 1
    source: str = "log"
    line: int | None = field(default=None, compare=False)

    @property
    def normalized(self) -> str:
        """Whitespace collapsed (the shape statements are grouped by)."""
        return " ".join(self.sql.split())


def parse_log(text: str, *, path: str | None = None) -> list[Statement]:
    """Statements (``statement:`` and ``execute``) of a server log, parameters attached."""
    out: list[Statement] = []
    current: dict[str, Any] | None = None

    def close() -> None:
        nonlocal current
        if current is None:
            return
        m = _STATEMENT.match(current["msg"].strip("\n"))
        if current["level"] == "LOG" and m:
            out.append(Statement(sql=m.group("sql").strip(), duration_ms=float(m.group("ms")) if m.group("ms") else None,
                                 ts=current["ts"], pid=current["pid"], line=current["line"]))
        elif current["level"] == "DETAIL" and out and current["msg"].lower().startswith("parameters: ") \
                and current["pid"] == out[-1].pid and current["after_statement"]:
            params = tuple(None if v == "NULL" else v[1:-1].replace("''", "'")
                           for _, v in sorted(((int(n), v) for n, v in _PARAM.findall(current["msg"])),
                                              key=lambda p: p[0]))
            last = out[-1]
            out[-1] = Statement(last.sql, params, last.duration_ms, last.ts, last.pid, line=last.line)
        current = None

    last_was_statement = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if raw.startswith("\t") and current is not None:
            current["msg"] += "\n" + raw[1:]
            continue
        m = _RECORD.match(raw)
        if not m:
            continue
        close()
        prefix = m.group("prefix")
        ts = _TS.search(prefix)
        pid = _PID.search(prefix)
        level, msg = m.group("level"), m.group("msg")
        current = {"level": level, "msg": msg, "ts": ts.group(1) if ts else None,
                   "pid": int(pid.group(1)) if pid else None, "line": lineno,
                   "after_statement": last_was_statement}
        last_was_statement = level == "LOG" and bool(_STATEMENT.match(msg))
    close()
    return out


def load_statements(*paths: str | os.PathLike[str]) -> list[Statement]:
    """Statements of Postgres server logs."""
    out: list[Statement] = []
    for path in paths:
        text = limits.read_text(path, what="Postgres log", max_bytes=MAX_LOG_BYTES)
        found = parse_log(text, path=str(path))
        if not found and text.strip():
            raise InputDataError("no statement found in this Postgres log: set log_min_duration_statement = 0 "
                                 "(or log_statement = 'all') for the recording window, so that every statement "
                                 "is logged as 'LOG:  duration: ... ms  statement: ...'", path=str(path))
        out.extend(found)
    return out


def read_pg_stat_statements(uri: str, *, limit: int = 5000) -> list[Statement]:
    """The normalised statements and their call counts from ``pg_stat_statements`` (one SELECT)."""
    import psycopg

    try:
        with psycopg.connect(uri, autocommit=True) as conn:
            rows = conn.execute("SELECT query, calls, mean_exec_time FROM pg_stat_statements "
                                "ORDER BY calls DESC LIMIT %s", (limit,)).fetchall()
    except psycopg.errors.UndefinedTable as exc:
        raise TargetError("this server has no pg_stat_statements view: create the extension (shared_preload_"
                          "libraries = 'pg_stat_statements'), or record the server log with "
                          "log_min_duration_statement = 0") from exc
    return [Statement(sql=q, calls=int(c), duration_ms=float(t) if t is not None else None,
                      source="pg_stat_statements") for q, c, t in rows]


def enable_statement_log(uri: str) -> None:
    """``log_min_duration_statement = 0`` on ragdiag's *own* embedded server (never a client's)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET log_min_duration_statement = 0")
        conn.execute("SELECT pg_reload_conf()")


def iter_similarity(statements: list[Statement]) -> Iterator[Statement]:
    """The statements that rank by vector distance or full-text rank (the searches)."""
    for s in statements:
        low = s.sql.lower()
        if any(op in low for op in ("<=>", "<->", "<#>", "ts_rank", "@@")) and low.lstrip().startswith(("select", "with")):
            yield s


__all__ = ["Statement", "enable_statement_log", "iter_similarity", "load_statements", "parse_log",
           "read_pg_stat_statements"]
