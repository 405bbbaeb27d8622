"""The SQL template parser: named parameters, top-level WHERE clauses, LIMIT, probe variants."""

from __future__ import annotations

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
