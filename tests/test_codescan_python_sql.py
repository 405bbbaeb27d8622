"""Permission trimming inside the application's SQL (`ragdiag.codescan.python_sql`) and trimming that is only
applied when a value is present (`ragdiag.codescan.python_acl`).

Both ways each: a JOIN on an ACL table bound to the logged-in user's groups is trimming; the same
clause appended only `if groups:` with `groups=None` by default is a fail-open; row-level security
policies in the tree's SQL with the caller set on the connection are trimming; a permission header
sent only when a token is present, where the token function returns None on failure, fails open,
and one that refuses to search without a token does not.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.codescan import scan_path
from tests.codescan_trees import run_on_code, tree


def acl(specs, root: Path):
    return run_on_code(specs, "acl_trimming", root)


JOINED = """
    from fastapi import Depends, FastAPI
    from .auth import current_user

    app = FastAPI()


    @app.get("/ask")
    def ask(q: str, user=Depends(current_user)):
        return search(conn, user, embed(q))


    def search(conn, user, embedding):
        sql = '''SELECT c.id, c.content FROM chunks c
                 JOIN document_acl a ON a.document_id = c.document_id
                 WHERE a.principal_id = ANY(%(principals)s)
                 ORDER BY c.embedding <=> %(q)s LIMIT 5'''
        return conn.execute(sql, {"principals": user.group_ids, "q": embedding}).fetchall()
    """

APPENDED = """
    from fastapi import FastAPI

    app = FastAPI()


    @app.get("/ask")
    def ask(q: str):
        return search(conn, embed(q))


    def search(conn, embedding, groups{default}):
        sql = "SELECT id, content FROM chunks WHERE true"
        params = []
        if groups:
            sql += " AND allowed_groups && %s"
            params.append(groups)
        sql += " ORDER BY embedding <=> %s LIMIT 5"
        params.append(embedding)
        return conn.execute(sql, params).fetchall()
    """


def test_a_join_on_an_acl_table_bound_to_the_users_groups_is_trimming(specs, tmp_path):
    scan = scan_path(tree(tmp_path, {"app.py": JOINED}))
    (a,) = scan.acl_sites
    assert a.mechanism == "sql_where" and "a.principal_id = ANY" in a.detail and "(session)" in a.detail
    assert not scan.fail_open


def test_a_clause_appended_only_when_an_optional_argument_is_given_fails_open(specs, tmp_path):
    faulty = tree(tmp_path / "f", {"app.py": APPENDED.format(default="=None")})
    scan = scan_path(faulty)
    assert [a.mechanism for a in scan.acl_sites] == ["sql_where"]
    (fo,) = scan.fail_open
    assert fo.kind == "dropped_when_absent" and "groups defaults to None" in fo.evidence
    f = acl(specs, faulty)
    assert f.status == "fail" and "added only when a value is present" in f.headline
    # the identity as a required argument: the same builder, no fail-open by default
    sound = scan_path(tree(tmp_path / "s", {"app.py": APPENDED.format(default="")}))
    assert [fo.kind for fo in sound.fail_open] == ["dropped_when_absent"]  # still conditional in the code ...
    assert "defaults to" not in sound.fail_open[0].evidence               # ... but not by a default


def test_row_level_security_with_the_caller_on_the_connection(tmp_path):
    files = {"app.py": """
        from fastapi import Depends, FastAPI
        from .auth import current_user

        app = FastAPI()


        @app.get("/ask")
        def ask(q: str, user=Depends(current_user)):
            with pool.connection() as conn:
                conn.execute("SELECT set_config('app.user_id', %s, true)", (user.id,))
                return conn.execute("SELECT id, content FROM chunks ORDER BY embedding <=> %s LIMIT 5",
                                    (embed(q),)).fetchall()
        """, "db/schema.sql": """
        create table chunks (id bigint primary key, owner_id uuid not null, content text, embedding vector(384));
        alter table chunks enable row level security;
        create policy chunks_owner on chunks for select using (owner_id = current_setting('app.user_id')::uuid);
        """}
    scan = scan_path(tree(tmp_path / "rls", files))
    (a,) = scan.acl_sites
    assert a.mechanism == "row_level_security" and "sets the caller" in a.detail
    # without the policies in the tree: no trimming is seen (and none is invented)
    del files["db/schema.sql"]
    assert not scan_path(tree(tmp_path / "none", files)).acl_sites


HEADER = """
    import aiohttp
    from fastapi import FastAPI

    app = FastAPI()


    class Retriever:
        async def _user_search_token(self) -> str | None:
            token = await exchange_on_behalf_of(self.request_token)
            if token:
                return token
            {on_failure}

        async def send(self, body: dict, *, search_user_token: str | None = None) -> dict:
            headers = {{"Content-Type": "application/json"}}
            if search_user_token:
                headers["x-ms-query-source-authorization"] = search_user_token
            async with aiohttp.ClientSession() as s:
                async with s.post("https://x.search.windows.net/indexes/i/docs/search", headers=headers,
                                  json=body) as r:
                    return await r.json()

        async def find(self, q: str) -> dict:
            token = await self._user_search_token()
            return await self.send({{"search": q, "top": 5}}, search_user_token=token)


    @app.get("/ask")
    async def ask(q: str):
        return await Retriever().find(q)
    """


def test_a_header_sent_only_when_a_token_is_present_fails_open_when_the_token_can_be_none(specs, tmp_path):
    faulty = tree(tmp_path / "f", {"app.py": HEADER.format(on_failure="return None  # anonymous")})
    scan = scan_path(faulty)
    assert [a.mechanism for a in scan.acl_sites] == ["query_source_authorization"]
    kinds = {fo.kind: fo for fo in scan.fail_open}
    assert set(kinds) == {"dropped_when_absent", "token_error_swallowed"}
    assert "search_user_token defaults to None" in kinds["dropped_when_absent"].evidence
    assert "_user_search_token() returns None" in kinds["token_error_swallowed"].evidence
    assert acl(specs, faulty).status == "fail"
    # refusing to search without the user's token: the header is still optional in `send`, but no path hands
    # it a None token
    sound = scan_path(tree(tmp_path / "s", {"app.py": HEADER.format(
        on_failure='raise PermissionError("no user token: refusing to search untrimmed")')}))
    assert [fo.kind for fo in sound.fail_open] == ["dropped_when_absent"]


# ---- where an SQL similarity query is sent (wave 6) -------------------------------------------------------

SENT_AND_UNSENT = """
    import streamlit as st
    from fastapi import FastAPI

    app = FastAPI()


    @app.post("/ask")
    async def ask(q: str):
        draft = '''SELECT id FROM chunks ORDER BY embedding <=> $1::vector LIMIT 9'''
        query = '''
            SELECT id, content
            FROM chunks
            ORDER BY embedding <=> $1::vector
            LIMIT 4
        '''
        async with pool.acquire() as conn:
            rows = await conn.fetch(query, embed(q))
        return answer(rows)


    st.code("SELECT id FROM chunks ORDER BY embedding <=> query_vector LIMIT 3", language="sql")
    """


def test_an_sql_string_is_a_site_where_it_is_executed_and_no_site_when_never_sent(tmp_path):
    scan = scan_path(tree(tmp_path, {"app.py": SENT_AND_UNSENT}))
    sites = [s for s in scan.search_calls if s.kind == "sql_similarity"]
    # the executed query is the fetch call (line 18), with its LIMIT; the unused draft and the SQL only shown
    # on the page are no sites
    assert [(s.line, s.params["k"].value) for s in sites] == [(18, 4)]
    # sound variant: the same draft, once executed, is a site too
    sent = SENT_AND_UNSENT.replace("rows = await conn.fetch(query, embed(q))",
                                   "rows = await conn.fetch(query, embed(q)) + await conn.fetch(draft, embed(q))")
    scan = scan_path(tree(tmp_path / "sent", {"app.py": sent}))
    assert sorted(s.params["k"].value for s in scan.search_calls if s.kind == "sql_similarity") == [4, 9]


ROLES = """
    import json
    from typing import List, Optional
    from fastapi import Depends, FastAPI, Header

    app = FastAPI()


    async def caller_roles(x_user_roles: Optional[str] = Header(default='["reader"]')) -> List[str]:
        return json.loads(x_user_roles)


    @app.post("/ask")
    async def ask(q: str, roles: List[str] = Depends(caller_roles)):
        roles_json = json.dumps(roles)
        sql = '''SELECT id, content FROM docs
                 WHERE allowed_roles ?| ARRAY(SELECT jsonb_array_elements_text($2::jsonb))
                 ORDER BY embedding <=> $1::vector LIMIT 3'''
        async with pool.acquire() as conn:
            return await conn.fetch(sql, embed(q), roles_json)
    """


def test_roles_from_an_unverified_request_header_are_ids_from_the_request(specs, tmp_path):
    scan = scan_path(tree(tmp_path, {"app.py": ROLES}))
    (site,) = scan.acl_sites
    # `?|` is the JSONB operator: the clause binds $2 (the roles), not $1 (the embedding)
    assert site.mechanism == "sql_where" and "x_user_roles" in site.detail and "(request)" in site.detail
    assert [f.kind for f in scan.fail_open] == ["ids_from_request"]
    assert acl(specs, tmp_path).status == "fail"


def test_roles_from_a_dependency_that_verifies_a_token_are_the_login(specs, tmp_path):
    verified = ROLES.replace("return json.loads(x_user_roles)",
                             "return jwt.decode(x_user_roles, KEY, algorithms=['RS256'])['roles']")
    scan = scan_path(tree(tmp_path, {"app.py": verified}))
    (site,) = scan.acl_sites
    assert site.mechanism == "sql_where" and "(request)" not in site.detail
    assert scan.fail_open == ()
