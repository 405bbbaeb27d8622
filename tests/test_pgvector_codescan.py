"""The scanner's SQL similarity call sites: whose groups psycopg, asyncpg and SQLAlchemy bind."""

from __future__ import annotations

import pytest

from ragdiag.codescan.python_sql import security_placeholder, value_origin
from ragdiag.codescan.scan import scan_path

PSYCOPG = '''
from flask import request, session
SQL = "select id from chunks where allowed_groups && %(groups)s::text[] order by embedding <=> %(e)s limit 30"
def search(cur, e):
    cur.execute(SQL, {"e": e, "groups": GROUPS})
'''
ASYNCPG = '''
async def search(conn, request, e):
    rows = await conn.fetch(
        "select id from chunks where valid_to is null and allowed_groups && $2::text[] "
        "order by embedding <-> $1 limit 30", e, GROUPS)
    return rows
'''
SQLALCHEMY = '''
from sqlalchemy import text
def search(session, payload, e):
    q = text("select id from chunks where allowed_groups && :groups order by embedding <=> :e limit 30")
    return session.execute(q, {"groups": GROUPS, "e": e}).all()
'''
POSITIONAL = '''
def search(cur, user, body, e):
    cur.execute("select id from chunks where valid_to is null and allowed_groups && %s::text[] "
                "order by embedding <=> %s limit 30", (GROUPS, e))
'''


CASES = [  # driver, source, groups from the request, groups from the login
    ("psycopg", PSYCOPG, 'request.get_json()["groups"]', 'session["user"]["groups"]'),
    ("asyncpg", ASYNCPG, "request.json['groups']", "request.state.user.groups"),
    ("sqlalchemy", SQLALCHEMY, 'payload["groups"]', "current_user.groups"),
    ("positional", POSITIONAL, 'body["groups"]', "current_user.groups"),
]


@pytest.mark.parametrize("driver, source, from_request, from_login", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("origin", ["request", "session"])
def test_groups_origin_per_driver(tmp_path, driver, source, from_request, from_login, origin):
    (tmp_path / "app.py").write_text(source.replace("GROUPS", from_request if origin == "request" else from_login))
    scan = scan_path(tmp_path)
    sites = [a for a in scan.acl_sites if a.mechanism == "sql_where"]
    assert len(sites) == 1 and sites[0].detail.endswith(f"({origin})"), sites
    fail_open = [f for f in scan.fail_open if f.kind == "ids_from_request"]
    assert bool(fail_open) == (origin == "request")


def test_groups_followed_through_a_parameter_to_the_caller(tmp_path):
    (tmp_path / "app.py").write_text('''
from flask import request
SQL = "select id from chunks where allowed_groups && %(g)s::text[] order by embedding <=> %(e)s limit 5"
def retrieve(cur, e, groups):
    cur.execute(SQL, {"e": e, "g": groups})
def ask(cur):
    body = request.get_json()
    groups = body["groups"]
    return retrieve(cur, body["e"], groups)
''')
    assert [f.kind for f in scan_path(tmp_path).fail_open] == ["ids_from_request"]


def test_a_query_without_a_security_clause_is_no_acl_site(tmp_path):
    (tmp_path / "app.py").write_text('def s(cur, e):\n    cur.execute("select id from t where lang = %s '
                                     'order by embedding <=> %s limit 5", ("en", e))\n')
    assert not [a for a in scan_path(tmp_path).acl_sites if a.mechanism == "sql_where"]


def test_placeholders_and_origins():
    assert security_placeholder("select 1 from t where a = $1 and groups && $2 order by e <=> $3") == \
        ("groups && $2", "", 1)
    assert security_placeholder("select 1 from t where a = %s and acl && %s order by e <=> %s") == \
        ("acl && %s", "", 1)
    assert security_placeholder("select 1 from t where x = 1 order by e <=> :e") is None
    assert value_origin(["request.json['groups']"]) == "request"
    assert value_origin(["current_user.groups"]) == "session"
    assert value_origin(["groups"]) == "unknown"
