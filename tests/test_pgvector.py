"""The pgvector target against a real PostgreSQL 16 + pgvector (ragdiag's embedded server), never a mock.

One server per session (`pg` fixture, data under the session's tmp dir). A hand-made table of
five chunks whose groups and validity dates make every probe's result checkable by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

from ragdiag.errors import ConfigError, TargetError
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.odata import search_in_any

NOW = "2026-06-30T00:00:00Z"
# key, content, 3-d embedding, groups, valid_from, valid_to
ROWS = [
    ("a", "The payment terms are 45 days net.", [1, 0, 0], ["sales"], "2020-01-01", None),
    ("b", "The salary table of the warehouse lead.", [0.9, 0.1, 0], ["hr"], "2020-01-01", None),
    ("c", "The old contract ran until 2015.", [0.8, 0.2, 0], ["sales"], "2010-01-01", "2015-01-01"),
    ("d", "The SN-7102 needs maintenance every 12 months.", [0, 1, 0], ["support", "sales"], "2020-01-01", None),
    ("e", "A future price list.", [0.7, 0.3, 0], ["sales"], "2030-01-01", None),
]
SQL = textwrap.dedent("""\
    -- :groups from the login, never from the question
    select id, content
    from docs
    where allowed_groups && :groups::text[]
      and valid_from <= :now::timestamptz
      and (valid_to is null or valid_to > :now::timestamptz)
    order by embedding <=> :embedding
    limit 3;""")


@pytest.fixture(scope="session")
def pg():
    """The embedded server with two tables: `docs` (3-d vectors) and `docs384` (MiniLM embeddings)."""
    import psycopg

    from ragdiag.sample.system import sample_embedder
    from ragdiag.targets.pgvector.server import start

    # outside pytest's 0700 tree: as root without user namespaces the server runs as nobody, who must reach it
    root = Path(tempfile.mkdtemp(prefix="ragdiag-pg-"))
    os.chmod(root, 0o755)  # (mkdtemp's 0700) so that the nobody way works where no user namespace is allowed
    srv = start(root / "data")
    vecs = sample_embedder().embed([r[1] for r in ROWS], progress=False)
    with psycopg.connect(srv.uri, autocommit=True) as conn:
        for table, dims in (("docs", 3), ("docs384", vecs.shape[1])):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"CREATE TABLE {table} (id text PRIMARY KEY, content text, embedding vector({dims}), "
                         "allowed_groups text[], valid_from timestamptz, valid_to timestamptz)")
        for i, (key, content, vec, groups, vf, vt) in enumerate(ROWS):
            for table, v in (("docs", vec), ("docs384", [float(x) for x in vecs[i]])):
                conn.execute(f"INSERT INTO {table} VALUES (%s, %s, %s::vector, %s, %s, %s)",
                             (key, content, str(list(v)), groups, vf, vt))
    yield srv
    srv.stop()
    shutil.rmtree(root, ignore_errors=True)


class ThreeD:
    """Questions as fixed 3-d vectors: the first axis is 'contracts', the second 'maintenance'."""

    model_id = "three-d"

    def embed(self, texts, progress=False):
        import numpy as np

        return np.asarray([[1.0, 0.0, 0.0] if "pay" in t else [0.0, 1.0, 0.0] for t in texts], dtype=np.float32)


@pytest.fixture(scope="session")
def target(pg):
    from ragdiag.targets.pgvector.connection import ReadOnlyConnection
    from ragdiag.targets.pgvector.mapping import TableMapping
    from ragdiag.targets.pgvector.sqltemplate import SqlTemplate
    from ragdiag.targets.pgvector.target import PgvectorTarget

    mapping = TableMapping("docs", "id", "content", "embedding", "allowed_groups", "valid_from", "valid_to")
    return PgvectorTarget(ReadOnlyConnection(pg.uri, timeout_ms=2000), mapping, SqlTemplate(SQL),
                          embedder=ThreeD(), now=NOW)


def ask(groups, question="payment terms?", top=5):
    return SearchRequest(vector_queries=(VectorQuery(fields=("embedding",), text=question, k=30),),
                         filter=search_in_any("allowed_groups", groups), top=top)


def test_search_runs_the_client_sql_with_the_identity_groups(target):
    t = target.search(ask(["sales"]))
    assert list(t.pool.keys) == ["a", "d"]          # c expired, e not yet valid, b is hr's
    assert t.hits[0].vector_similarities["embedding"] == pytest.approx(1.0)
    assert list(target.search(ask(["hr"])).keys) == ["b"]
    assert list(target.search(ask([])).keys) == []  # no groups: nothing (the identity clause is `false`)
    assert target.server_version.startswith("PostgreSQL 16")


def test_probes_are_sql_variants(target):
    req = ask(["sales"])
    assert list(target.probe(req, drop=(0,)).keys) == ["a", "b", "d"]  # without the groups clause hr's b leaks
    assert list(target.probe(req, drop=(1,)).keys) == ["a", "e", "d"]  # without valid_from the future e is in
    assert list(target.probe(req, drop=(2,)).keys) == ["a", "c", "d"]  # without valid_to the expired c is in
    assert list(target.probe(req, drop=(0, 1, 2), limit=2).keys) == ["a", "b"]
    assert list(target.probe(req, limit=1).keys) == ["a"]
    counts = [n for _label, n in target.stage_counts(req)]
    assert counts == [5, 4, 3, 2]  # no WHERE, after groups (a c d e), after valid_from (a c d), after valid_to


def test_documents_and_security_values(target):
    assert target.count() == 5
    assert target.count("allowed_groups/any(g: g eq 'sales')") == 4
    assert target.security_values(["d", "zz"], "allowed_groups") == {"d": ("support", "sales"), "zz": None}
    assert target.get_document("c")["valid_to"] == "2015-01-01T00:00:00Z"
    schema = target.schema()
    assert [f.name for f in schema.security_fields] == ["allowed_groups"]
    assert not schema.field("allowed_groups").retrievable  # the SELECT does not return it


def test_other_request_filters_are_refused(target):
    with pytest.raises(TargetError, match="client's SQL"):
        target.search(ask(["sales"]).replace(filter="allowed_groups/any(g: g eq 'sales') and id eq 'a'"))


def test_read_only_and_timeout(pg):
    from ragdiag.targets.pgvector.connection import ReadOnlyConnection

    conn = ReadOnlyConnection(pg.uri, timeout_ms=100)
    with pytest.raises(TargetError, match="read-only"):
        conn.query("CREATE TABLE written_by_ragdiag (i int)")
    with pytest.raises(TargetError, match="statement timeout of 100 ms"):
        conn.query("SELECT pg_sleep(2)")
    assert conn.query("SELECT 1") == [(1,)]  # the connection survives both


def test_dsn_never_in_errors(monkeypatch):
    from ragdiag.targets.pgvector.connection import ReadOnlyConnection

    dsn = "postgresql://auditor:s3cret-pw@127.0.0.1:1/ragdb"
    monkeypatch.setenv("RAGDIAG_TEST_DSN", dsn)
    with pytest.raises(TargetError) as exc:
        ReadOnlyConnection.from_env("RAGDIAG_TEST_DSN")
    assert "s3cret-pw" not in str(exc.value) and dsn not in str(exc.value) and "$RAGDIAG_TEST_DSN" in str(exc.value)
    monkeypatch.delenv("RAGDIAG_TEST_DSN")
    with pytest.raises(ConfigError, match="RAGDIAG_TEST_DSN is not set"):
        ReadOnlyConnection.from_env("RAGDIAG_TEST_DSN")


# ---- the four numbers through a config (kind pgvector, dsn_env) ------------------------------
GOLDSET = """\
- id: c1
  question: What are the payment terms?
  as_user: anna
  expect_sources: [a]
  expect_answer_contains: [45 days]
- id: c2
  question: How often does the SN-7102 need maintenance?
  as_user: sam
  expect_sources: [d]
  expect_answer_contains: [12 months]
- id: c3
  question: How much does the warehouse lead earn?
  as_user: anna
  expect: refused
- id: c4
  question: What is in the salary table?
  as_user: hanna
  expect_sources: [b]
  expect_answer_contains: [salary]
- id: c5
  question: Until when did the old contract run?
  as_user: anna
  expect_sources: [c]
  expect_answer_contains: ["2015"]
"""
ANSWERS = [
    {"id": "c1", "answer": "45 days net", "citations": ["a"], "refused": False},          # right
    {"id": "c2", "answer": "every 12 months", "citations": ["a"], "refused": False},      # a: not retrieved by sam
    {"id": "c3", "answer": "", "citations": [], "refused": True},                          # right refusal
    {"id": "c4", "answer": "The salary table", "citations": ["b"], "refused": False},     # right
    {"id": "c5", "answer": "", "citations": [], "refused": True},                          # c is expired: refused
]


def _audit(tmp_path, monkeypatch, pg, *, sql=SQL, top=2, answers=True, code=None,
           checks=("goldset", "acl_trimming"), target_extra="", goldset=True):
    from ragdiag.audit import run_audit

    monkeypatch.setenv("RAGDIAG_TEST_PG", pg.uri)
    (tmp_path / "retrieval.sql").write_text(sql.replace("from docs", "from docs384"))
    (tmp_path / "goldset.yaml").write_text(GOLDSET)
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    (tmp_path / "profiles.toml").write_text(textwrap.dedent(f"""\
        [policy]
        name = "p"
        security_field = "allowed_groups"
        [routes]
        default = "answer"
        [defaults]
        query_type = "simple"
        keyword_text = "none"
        top = {top}
        [profiles.answer]
          [[profiles.answer.vector_queries]]
          fields = ["embedding"]
          k = 30
        """))
    inputs = 'profiles = "profiles.toml"\n' + ('goldset = "goldset.yaml"\n' if goldset else "")
    inputs += 'answers = "answers.jsonl"\n' if answers else ""
    inputs += f'client_code = "{code}"\n' if code else ""
    (tmp_path / "audit.toml").write_text(textwrap.dedent(f"""\
        [target]
        kind = "pgvector"
        dsn_env = "RAGDIAG_TEST_PG"
        sql = "retrieval.sql"
        table = "docs384"
        key = "id"
        content = "content"
        embedding = "embedding"
        groups = "allowed_groups"
        valid_from = "valid_from"
        valid_to = "valid_to"
        now = "{NOW}"
        {target_extra}
        [inputs]
        """) + inputs + textwrap.dedent("""\
        [identities]
        anna = ["sales"]
        sam = ["support"]
        hanna = ["hr"]
        """))
    return run_audit(tmp_path / "audit.toml", checks=list(checks), progress=False)


def _finding(result, check):
    return next(f for f in result.findings if f.check_id == check)


def test_four_numbers_by_hand(tmp_path, monkeypatch, pg):
    result = _audit(tmp_path, monkeypatch, pg)
    m = _finding(result, "goldset").metrics
    # retrieval: c1 (a), c2 (d), c4 (b) found; c5's c is expired -> 3 of 4 answerable
    assert (m["retrieval_hit_rate"], m["retrieval_hit_rate_n"]) == (0.75, 4)
    # answer: c1 and c4 right; c2 cites a chunk sam never got (invalid), c5 refused -> 2 of 4
    assert (m["answer_accuracy"], m["answer_accuracy_n"]) == (0.5, 4)
    # refusal: c1, c3, c4 right; c2 (invalid citation = refused) and c5 refused where an answer exists -> 3 of 5
    assert (m["refusal_accuracy"], m["refusal_accuracy_n"]) == (0.6, 5)
    # permissions: c2 cites a, a chunk of sales that sam may not see (the SQL itself trims right)
    assert (m["permission_leaks"], m["permission_leaks_n"]) == (1, 5)
    assert m["invalid_citations"] == 1
    assert [r[:2] for r in next(e for e in _finding(result, "goldset").evidence
                                if e.key == "permission_leaks").rows] == [("c2", "sam")]
    meta = result.meta["target_info"]
    assert meta["kind"] == "pgvector" and meta["server_version"].startswith("PostgreSQL 16.")
    blob = result.to_json()
    import jsonschema

    import ragdiag.model

    schema = json.loads((Path(ragdiag.model.__file__).parent / "findings.schema.json").read_text())
    jsonschema.validate(json.loads(blob), schema)
    assert pg.uri not in blob and "RAGDIAG_TEST_PG" in blob  # the variable's name, never its value


def test_without_answers_the_answer_numbers_are_skipped(tmp_path, monkeypatch, pg):
    g = _finding(_audit(tmp_path, monkeypatch, pg, answers=False), "goldset")
    assert g.metrics["answer_accuracy"] is None and g.metrics["refusal_accuracy"] is None
    assert g.metrics["retrieval_hit_rate"] == 0.75
    rows = {r[0]: r[1] for r in next(e for e in g.evidence if e.key == "four_numbers").rows}
    assert str(rows["answer_accuracy"]).startswith("skipped")


def test_sql_without_the_groups_clause_leaks(tmp_path, monkeypatch, pg):
    leaky = SQL.replace("where allowed_groups && :groups::text[]\n  and", "where").replace("limit 3", "limit 5")
    result = _audit(tmp_path, monkeypatch, pg, sql=leaky, top=5)
    g = _finding(result, "goldset")
    # every identity gets all four valid chunks (a b d ... ) of which some are outside its groups
    assert (g.metrics["permission_leaks"], g.metrics["permission_leaks_n"]) == (5, 5)
    assert g.status == "fail"


CLIENT = '''\
from flask import request, session


SQL = """select id, content from docs where allowed_groups && %(groups)s::text[]
order by embedding <=> %(embedding)s limit 3"""


def retrieve(conn, question, groups):
    return conn.execute(SQL, {"embedding": question, "groups": groups}).fetchall()


def ask(conn):
    body = request.get_json()
    groups = {origin}
    return retrieve(conn, body["question"], groups)
'''


@pytest.mark.parametrize("origin, status", [('session["user"]["groups"]', "pass"), ('body["groups"]', "fail")])
def test_acl_trimming_groups_from_session_pass_from_request_fail(tmp_path, monkeypatch, pg, origin, status):
    code = tmp_path / "app"
    code.mkdir()
    (code / "retrieval.py").write_text(CLIENT.replace("{origin}", origin))
    acl = _finding(_audit(tmp_path, monkeypatch, pg, code="app"), "acl_trimming")
    assert acl.status == status, acl.headline
    if status == "fail":
        assert "security ids come from the request" in acl.headline
    else:
        assert acl.observed.get("leak_probe_requests", 0) > 0


def test_prerank_filters_measures_each_sql_clause(tmp_path, monkeypatch, pg):
    f = _finding(_audit(tmp_path, monkeypatch, pg, checks=("prerank_filters",)), "prerank_filters")
    tables = {e.key: e for e in f.evidence}
    assert [r[2] for r in tables["sql_clauses"].rows] == ["access", "recency", "recency"]
    assert {r[0]: r[1:] for r in tables["sql_stage_counts"].rows}["anna"] == (5, 4, 3, 2)
    ablation = {r[0]: r for r in tables["sql_ablation"].rows}
    assert set(ablation) == {2, 3}  # the access clause is acl_trimming's, not dropped here
    # valid_to: c5 expects the expired c, which only the template without the clause reaches: 1 of 4
    assert ablation[3][3:7] == (4, 1, 4, 0.25)
    # valid_from: only the future e comes in, which nobody expects; c stays out (valid_to): 3 reachable
    assert ablation[2][3:7] == (4, 0, 3, 0.0)
    assert f.status == "warn" and "keeps 25% of the goldset's reachable expected sources" in f.headline


def test_prerank_filters_without_goldset_warns_on_unmeasured_clauses_and_passes_access_only(
        tmp_path, monkeypatch, pg):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    dated = _finding(_audit(tmp_path / "a", monkeypatch, pg, checks=("prerank_filters",), answers=False,
                            goldset=False), "prerank_filters")
    assert dated.status == "warn", dated.headline
    assert "2 SQL clause(s) on a non-relevance field filter before ranking and were not measured" in dated.headline
    access_only = SQL.replace("  and valid_from <= :now::timestamptz\n", "").replace(
        "  and (valid_to is null or valid_to > :now::timestamptz)\n", "")
    assert access_only.count("and ") == 0
    sound = _finding(_audit(tmp_path / "b", monkeypatch, pg, sql=access_only, checks=("prerank_filters",),
                            answers=False, goldset=False), "prerank_filters")
    assert sound.status == "pass", sound.headline


@pytest.mark.parametrize("extra, status", [("", "skipped"), ("rerank_depth = 50", "fail"),
                                           ("rerank_depth = 3", "pass")])
def test_pool_size_limit_against_rerank_depth(tmp_path, monkeypatch, pg, extra, status):
    f = _finding(_audit(tmp_path, monkeypatch, pg, checks=("pool_size",), target_extra=extra), "pool_size")
    assert f.status == status, f.headline
    if status == "skipped":
        assert "no semantic ranker" in f.skipped_reason and "LIMIT 3" in f.skipped_reason
    if status == "fail":
        assert "LIMIT 3 is below the 50 candidates" in f.headline


def test_full_text_leg_binds_query_text(target):
    from ragdiag.targets.pgvector.sqltemplate import SqlTemplate
    from ragdiag.targets.pgvector.target import PgvectorTarget

    text_sql = SqlTemplate("select id from docs where allowed_groups && :groups::text[] "
                           "and to_tsvector('english', content) @@ plainto_tsquery('english', :query_text) "
                           "order by ts_rank(to_tsvector('english', content), plainto_tsquery('english', :query_text)) "
                           "desc limit 5")
    t = PgvectorTarget(target.conn, target.mapping, text_sql, embedder=None, now=NOW)
    req = SearchRequest(search="maintenance months", filter=search_in_any("allowed_groups", ["sales"]), top=5)
    assert list(t.search(req).keys) == ["d"]  # no embedding needed; the keyword text is bound
    assert list(t.probe(req, drop=(0,)).keys) == ["d"]


def test_report_appendix_names_the_server(tmp_path, monkeypatch, pg):
    from ragdiag.report.render import _meta_rows

    result = _audit(tmp_path, monkeypatch, pg, checks=("pool_size",))
    rows = dict(_meta_rows(result, "en", client="", system="", name="", source="", generated=None))
    assert rows["target"].startswith("pgvector:docs384 (pgvector); PostgreSQL 16.2")


def test_vector_only_probe_silences_the_full_text_leg(target):
    from ragdiag.targets.pgvector.sqltemplate import SqlTemplate
    from ragdiag.targets.pgvector.target import PgvectorTarget

    hybrid = SqlTemplate("""
        with v as (select id, row_number() over (order by embedding <=> :embedding) as r from docs
                   where allowed_groups && :groups::text[] order by embedding <=> :embedding limit 1),
             t as (select id, row_number() over (order by id) as r from docs
                   where allowed_groups && :groups::text[]
                     and to_tsvector('english', content) @@ plainto_tsquery('english', :query_text) limit 1)
        select id from (select id, 1.0 / (60 + r) as s from v union all select id, 1.0 / (60 + r) from t) x
        group by id order by sum(s) desc, id limit 5""")
    t = PgvectorTarget(target.conn, target.mapping, hybrid, embedder=ThreeD(), now=NOW)
    req = ask(["sales"], question="payment").replace(search="maintenance")
    assert sorted(t.search(req).keys) == ["a", "d"]             # a from the vector leg, d from the text leg
    assert list(t.probe(req, leg="vector").keys) == ["a"]
    with pytest.raises(TargetError, match="no 'text'-only probe"):
        t.probe(req, leg="text")


def test_plan_counts_the_sql_probes(tmp_path, monkeypatch, pg):
    from ragdiag.audit import open_audit
    from ragdiag.plan import plan_audit

    _audit(tmp_path, monkeypatch, pg, checks=("pool_size",))  # writes the config
    rows, _summary = plan_audit(open_audit(tmp_path / "audit.toml", progress=False), checks=["prerank_filters"])
    by = {r.check_id: r for r in rows}
    assert list(by) == ["ablation", "loss_funnel", "prerank_filters"]
    # the measurements run the 5 goldset questions first (the ablation; nothing of a profile the
    # client's SQL reads differs from its default here); the funnel asks each WHERE clause on its
    # own per identity (no WHERE + each of 3 clauses)
    assert by["ablation"].searches + by["loss_funnel"].searches == 5
    # the answerable cases ask as anna, sam and hanna: 3 identities x 4 queries
    assert by["loss_funnel"].other == 3 * 4
    # then the 4 answerable ones without each of the 2 validity clauses;
    # 3 identities x (no WHERE + after each of 3 clauses) counts
    row = by["prerank_filters"]
    assert (row.searches, row.other) == (2 * 4, 3 * 4)


def test_answers_file_errors_and_mismatches(tmp_path):
    from ragdiag.errors import InputDataError
    from ragdiag.inputs.answers import Answer, checked_citations, load_answers

    p = tmp_path / "answers.jsonl"
    p.write_text('{"id": "c1", "answer": "x", "citations": ["a"], "refused": false}\n{"id": "c1"}\n')
    with pytest.raises(InputDataError, match="answered twice") as exc:
        load_answers(p)
    assert exc.value.line == 2
    p.write_text('{"id": "c1", "citations": "a"}\n')
    with pytest.raises(InputDataError, match="list of chunk keys"):
        load_answers(p)
    # seed 002's check: citations required, and only chunks this identity retrieved
    assert checked_citations(Answer("c", "x", ("a",)), {"a", "b"})
    assert not checked_citations(Answer("c", "x", ("a", "z")), {"a", "b"})
    assert not checked_citations(Answer("c", "x", ()), {"a"})


def test_statement_timeouts_open_the_breaker_after_a_few_statements(pg):
    """A database too slow for every statement: each probe used to wait out the whole timeout
    (975 cancelled statements in 237 s in the issue); now the breaker opens after five."""
    from ragdiag.engine.runner import Failure, Runner
    from ragdiag.targets.pgvector.connection import ReadOnlyConnection
    from ragdiag.targets.pgvector.mapping import TableMapping
    from ragdiag.targets.pgvector.sqltemplate import SqlTemplate
    from ragdiag.targets.pgvector.target import PgvectorTarget

    slow = SQL.replace("from docs", "from docs, pg_sleep(0.5) as s")
    mapping = TableMapping("docs", "id", "content", "embedding", "allowed_groups", "valid_from", "valid_to")
    conn = ReadOnlyConnection(pg.uri, timeout_ms=100)
    t = PgvectorTarget(conn, mapping, SqlTemplate(slow), embedder=ThreeD(), now=NOW)
    before = t.stats["sql_queries"]
    r = Runner(t, max_consecutive_failures=5)
    out = r.run([ask(["sales"], question=f"payment terms {i}?") for i in range(60)])
    assert all(isinstance(o, Failure) for o in out)
    assert "statement timeout of 100 ms" in out[0].reason
    assert r.breaker.is_open and "5 consecutive statement timeouts" in r.breaker.reason
    assert r.stats.failed == 5 and r.stats.not_sent == 55
    assert t.stats["sql_queries"] - before <= 5
    fast = PgvectorTarget(conn, mapping, SqlTemplate(SQL), embedder=ThreeD(), now=NOW)  # the same database
    assert not isinstance(Runner(fast).run([ask(["sales"])])[0], Failure)
def test_the_loss_funnel_asks_each_where_clause_on_its_own(tmp_path, monkeypatch, pg):
    result = _audit(tmp_path, monkeypatch, pg, checks=("prerank_filters",))
    lf = result.loss_funnel
    assert lf["status"] == "measured" and lf["method"] == "sql"
    fates = {(s["case"], s["key"]): (s["stage"], s["detail"]) for s in lf["sources"]}
    # c is the contract that expired in 2015: only the valid_to clause keeps it out; the others
    # reach the top (2) of what each identity may read
    valid_to = next(c for c in lf["totals"] if c["stage"] == "filter")["detail"]
    assert "valid_to" in valid_to
    assert fates == {("c1", "a"): ("top", None), ("c2", "d"): ("top", None), ("c4", "b"): ("top", None),
                     ("c5", "c"): ("filter", valid_to)}
    assert any("rerank_depth" in n for n in lf["not_derived"])


def test_clause_admission_on_the_table(target):
    req = ask(["sales"])
    in_from, per_clause = target.clause_admission(req, ["a", "b", "c", "e", "zz"])
    assert in_from == {"a", "b", "c", "e"}  # zz is no row
    # groups (sales: not b), valid_from (not the future e), valid_to (not the expired c)
    assert per_clause == [{"a", "c", "e"}, {"a", "b", "c"}, {"a", "b", "e"}]
