"""The SQL template parser: named parameters, top-level WHERE clauses, LIMIT, probe variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiag.errors import ConfigError
from ragdiag.targets.pgvector.sqltemplate import SqlTemplate

SEED = """
-- :embedding = embedding of the question, $2 from the login
select c.id, c.document_id, c.content
from chunks c
join documents d on d.id = c.document_id
where d.allowed_groups && :groups::text[]
  and d.valid_from <= :now::timestamptz
  and (d.valid_to is null or d.valid_to > :now::timestamptz)
order by c.embedding <=> :embedding
limit 30;  -- wider selection for reranking
"""


def test_seed_template_clauses_limit_and_parameters():
    t = SqlTemplate(SEED)
    assert [c.text for c in t.clauses] == ["d.allowed_groups && :groups::text[]", "d.valid_from <= :now::timestamptz",
                                           "(d.valid_to is null or d.valid_to > :now::timestamptz)"]
    assert t.limit == 30
    assert t.parameters == ("groups", "now", "embedding")  # the comment's :embedding is not counted twice
    assert t.clause_for("allowed_groups").index == 0
    assert t.clause_for("valid_to").index == 2


def test_variants_change_only_their_part():
    t = SqlTemplate(SEED)
    dropped = t.without(0)
    assert "allowed_groups" not in dropped and "where d.valid_from" in dropped.lower()
    assert SqlTemplate(dropped).limit == 30 and len(SqlTemplate(dropped).clauses) == 2
    none_left = SqlTemplate(t.without(0, 1, 2))
    assert none_left.clauses == () and "where" not in none_left.sql.lower()
    assert SqlTemplate(t.with_limit(5)).limit == 5
    count = t.count_matching()
    assert count.startswith("SELECT count(*) FROM (") and "order by" not in count.lower() and "limit" not in \
        count.lower().split("--")[-1]


def test_quotes_comments_between_and_or():
    t = SqlTemplate("select id from t where note = 'this and that' /* and x */ and a between 1 and 2 "
                    "and \"odd and name\" = 1 order by e <-> :embedding limit :limit")
    assert [c.text for c in t.clauses] == ["note = 'this and that' /* and x */", "a between 1 and 2",
                                           "\"odd and name\" = 1"]
    assert t.limit == ":limit"
    assert len(SqlTemplate("select id from t where a = 1 or b = 2 and c = 3 order by e <=> :embedding").clauses) == 1
    sub = SqlTemplate("select id from t where id in (select id from u where x and y) and z order by e <=> :embedding")
    assert [c.text for c in sub.clauses] == ["id in (select id from u where x and y)", "z"]


def test_psycopg_placeholders_keep_casts_and_percent():
    sql = SqlTemplate.to_psycopg("select 1 where g && :groups::text[] and n like 'a%' and e <=> :embedding")
    assert sql == "select 1 where g && %(groups)s::text[] and n like 'a%%' and e <=> %(embedding)s"


@pytest.mark.parametrize("sql, error", [
    ("delete from t where e <=> :embedding", "must be a SELECT"),
    ("select 1; select e <=> :embedding", "more than one statement"),
    ("select id from t order by e <=> :vec", "unknown parameter"),
    ("select id from t where x = 'open", "unterminated"),
    ("select id from t limit 5", "neither :embedding nor :query_text"),
    ("select id from t where (a order by e <=> :embedding", "unbalanced"),
    ("select id from t where g && $2::text[] order by e <=> $1", "positional parameter '\\$2'"),
])
def test_refuses_what_it_cannot_probe(sql, error):
    with pytest.raises(ConfigError, match=error):
        SqlTemplate(sql)


# ---- templates that could write are refused at load, sound ones pass ----------------------------
@pytest.mark.parametrize("sql, error", [
    ("insert into chunks (id) select id from chunks where embedding <=> :embedding < 1", "it starts with 'insert'"),
    ("with gone as (delete from chunks returning id) select id from gone order by :embedding::vector <=> e",
     r"holds a statement that writes \(DELETE at line 1"),
    ("with x as (\n  select 1\n), y as (update chunks set content = 'x' returning id)\nselect id from y "
     "order by e <=> :embedding", r"writes \(UPDATE at line 3"),
    ("with m as (merge into t using s on t.id = s.id when matched then delete returning t.id) "
     "select id from m order by e <=> :embedding", r"writes \(MERGE"),
    ("select id into copy_of_chunks from chunks order by embedding <=> :embedding", "selects INTO a table"),
    ("select id from chunks order by embedding <=> :embedding limit 5 for update", "locks rows"),
    ("select id from chunks order by embedding <=> :embedding for no key update", "locks rows"),
    ("select pg_terminate_backend(pid), id from chunks order by embedding <=> :embedding",
     r"calls pg_terminate_backend\(\)"),
    ("select id, nextval('s') from chunks order by embedding <=> :embedding", r"calls nextval\(\)"),
    ("select id from chunks order by embedding <=> :embedding; delete from chunks", "more than one statement"),
])
def test_a_template_that_could_write_is_refused_at_load(sql, error):
    with pytest.raises(ConfigError, match=error):
        SqlTemplate(sql)


@pytest.mark.parametrize("sql", [
    "select id, last_update, updated_at from chunks order by embedding <=> :embedding",  # names, not statements
    "select id from chunks where note <> 'delete from x; insert into y' order by embedding <=> :embedding",
    "select id from chunks /* update t set a = 1 */ order by embedding <=> :embedding",
    "select c.id from chunks c where c.cоntent is not null order by c.embedding <=> :embedding",  # U+043E
    "select id from chunks c join lateral (select 1) x on true order by embedding <=> :embedding for you",
])
def test_sound_templates_are_accepted(sql):
    SqlTemplate(sql)  # no write hidden anywhere; a Cyrillic letter is an identifier, not an assertion


def test_the_sql_file_is_read_through_the_limits(tmp_path):
    from ragdiag.inputs.config import load_config

    base = (Path(__file__).resolve().parents[1] / "ragdiag" / "sample" / "data" / "audit-pgvector.toml").read_text()
    folder = tmp_path / "folder.sql"
    folder.mkdir()
    utf16 = tmp_path / "u16.sql"
    utf16.write_bytes(SEED.encode("utf-16"))
    for sql, message in ((folder, "is a folder; the SQL template must be a regular file"),
                         (utf16, "the SQL template is UTF-16 text")):
        cfg = tmp_path / "audit.toml"
        cfg.write_text(base.replace('sql = "pgvector/retrieval.sql"', f'sql = "{sql}"').split("[inputs]")[0])
        with pytest.raises(ConfigError, match=message) as err:
            load_config(cfg)
        assert err.value.line == 14 and "audit.toml" in str(err.value)  # the config's sql = line
