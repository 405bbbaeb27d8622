"""Postgres statements: from the server log (log_min_duration_statement = 0), with bound parameters."""

from __future__ import annotations

import time

import pytest

from ragdiag.errors import InputDataError
from ragdiag.observe.pglog import iter_similarity, load_statements, parse_log

LOG = """\
2026-12-02 07:49:28.623 UTC [4242] LOG:  duration: 0.412 ms  statement: SELECT 1
2026-12-02 07:49:28.700 UTC [4242] LOG:  duration: 0.051 ms  parse <unnamed>: SELECT id FROM chunks WHERE acl && $1
2026-12-02 07:49:28.701 UTC [4242] LOG:  duration: 0.020 ms  bind <unnamed>: SELECT id FROM chunks WHERE acl && $1
2026-12-02 07:49:28.701 UTC [4242] DETAIL:  Parameters: $1 = '{sales}'
2026-12-02 07:49:28.702 UTC [4242] LOG:  duration: 1.234 ms  execute <unnamed>: SELECT id, content
\tFROM chunks
\tWHERE acl && $2 ORDER BY embedding <=> $1 LIMIT 20
2026-12-02 07:49:28.702 UTC [4242] DETAIL:  Parameters: $1 = '[0.1,0.2]', $2 = '{it''s,all}'
2026-12-02 07:49:28.800 UTC [4243] ERROR:  relation "nope" does not exist
2026-12-02 07:49:28.800 UTC [4243] STATEMENT:  SELECT * FROM nope
2026-12-02 07:49:29.000 UTC [4243] LOG:  duration: 0.300 ms  execute S_1: SELECT id FROM chunks ORDER BY embedding <-> $1 LIMIT $2
2026-12-02 07:49:29.000 UTC [4243] DETAIL:  parameters: $1 = '[1,0]', $2 = NULL
"""


def test_statements_and_parameters_from_a_server_log():
    stmts = parse_log(LOG)
    assert [s.normalized for s in stmts] == [
        "SELECT 1",
        "SELECT id, content FROM chunks WHERE acl && $2 ORDER BY embedding <=> $1 LIMIT 20",
        "SELECT id FROM chunks ORDER BY embedding <-> $1 LIMIT $2"]
    assert stmts[0].params == () and stmts[0].duration_ms == 0.412 and stmts[0].pid == 4242
    assert stmts[1].params == ("[0.1,0.2]", "{it's,all}") and stmts[1].line == 5
    assert stmts[2].params == ("[1,0]", None)
    assert stmts[1].ts.startswith("2026-12-02 07:49:28.702")
    assert [s.normalized[:9] for s in iter_similarity(stmts)] == ["SELECT id", "SELECT id"]


def test_a_log_without_statements_says_how_to_log_them(tmp_path):
    path = tmp_path / "pg.log"
    path.write_text("2026-12-02 07:00:00 UTC [1] LOG:  database system is ready to accept connections\n")
    with pytest.raises(InputDataError, match="log_min_duration_statement = 0"):
        load_statements(path)


@pytest.mark.slow
def test_the_embedded_server_logs_what_psycopg_sent(tmp_path):
    pgserver = pytest.importorskip("pgserver")
    psycopg = pytest.importorskip("psycopg")
    from ragdiag.observe.pglog import enable_statement_log

    srv = pgserver.get_server(tmp_path / "pg", cleanup_mode="delete")
    try:
        uri = srv.get_uri()
        enable_statement_log(uri)
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE TABLE chunks (id text, acl text[])")
            conn.execute("INSERT INTO chunks VALUES ('a', '{sales}'), ('b', '{hr}')")
            rows = conn.execute("SELECT id FROM chunks WHERE acl && %s::text[] ORDER BY id LIMIT %s",
                                (["sales"], 5)).fetchall()
        assert rows == [("a",)]
        deadline = time.time() + 10
        found = []
        while time.time() < deadline and not found:
            found = [s for s in load_statements(tmp_path / "pg" / "log") if "acl &&" in s.sql]
            time.sleep(0.2)
        assert found, (tmp_path / "pg" / "log").read_text()[-2000:]
        assert found[-1].params == ("{sales}", "5")
        assert "LIMIT $2" in found[-1].sql
    finally:
        srv.cleanup()
