"""Searches the database runs (`ragdiag.codescan.db_rpc`, `ragdiag.codescan.sql_catalog`).

A Supabase app calls `supabase.rpc('match_sections', {...}).limit(5)`; what that searches, how it cuts
and whether it trims by the caller is in the tree's SQL. Each mechanism both ways: row-level security
keyed on `auth.uid()` with the caller's token forwarded is trimming; the same tables read with the
service key, or through a `security definer` function, bypass it (a fail-open); a function whose SQL
is not in the tree is a gap, not "no trimming".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiag.codescan import scan_path
from ragdiag.codescan.sql_catalog import SqlCatalog, read_sql
from tests.codescan_trees import run_on_code, tree

MATCH = """
create or replace function match_sections(query_embedding vector(384), match_threshold float, match_count int)
returns setof sections
language plpgsql {definer}
as $$
begin
  return query
  select * from sections
  where sections.embedding <#> query_embedding < -match_threshold
  order by sections.embedding <#> query_embedding
  limit match_count;
end;
$$;
"""
SCHEMA = """
create table sections (id bigint primary key, owner uuid not null default auth.uid(), content text,
                       embedding vector(384));
alter table sections enable row level security;
create policy "own sections" on sections for select to authenticated using (owner = auth.uid());
"""
EDGE = """
import {{ createClient }} from '@supabase/supabase-js';

Deno.serve(async (req) => {{
  const authorization = req.headers.get('Authorization');
  const supabase = createClient(Deno.env.get('SUPABASE_URL'), {key}, {{
    global: {{ headers: {{ authorization }} }},
  }});
  const {{ query_embedding }} = await req.json();
  const {{ data: sections }} = await supabase
    .rpc('match_sections', {{ query_embedding, match_threshold: 0.78, match_count: 10 }})
    .select('content')
    .limit(5);
  return new Response(JSON.stringify(sections));
}});
"""


def supabase_app(tmp_path: Path, *, key: str = "Deno.env.get('SUPABASE_ANON_KEY')", definer: str = "",
                 sql: bool = True) -> Path:
    files = {"supabase/functions/chat/index.ts": EDGE.format(key=key)}
    if sql:
        files["supabase/migrations/001_schema.sql"] = SCHEMA
        files["supabase/migrations/002_match.sql"] = MATCH.format(definer=definer)
    return tree(tmp_path, files)


def test_the_sql_catalog_reads_searching_functions_and_identity_policies():
    cat = SqlCatalog()
    read_sql("m.sql", MATCH.format(definer="") + SCHEMA, cat)
    fn = cat.functions["match_sections"]
    assert (fn.operator, fn.threshold_param, fn.threshold_measure, fn.threshold_reversed) == (
        "<#>", "match_threshold", "score", False)
    assert (fn.limit_param, fn.tables, fn.security_definer) == ("match_count", ("sections",), False)
    assert list(cat.rls_tables) == ["sections"]
    (pol,) = cat.policies
    assert (pol.table, pol.command, pol.identity) == ("sections", "select", "auth.uid()")
    # a cosine distance kept below the threshold is a sound distance cut; kept above, it is reversed
    cat2 = SqlCatalog()
    read_sql("d.sql", """create function near(q vector, max_distance float) returns setof t language sql as $$
        select * from t where t.embedding <=> q < max_distance $$;
        create function far(q vector, min_distance float) returns setof t language sql as $$
        select * from t where t.embedding <=> q > min_distance $$;""", cat2)
    assert (cat2.functions["near"].threshold_measure, cat2.functions["near"].threshold_reversed) == ("distance", False)
    assert cat2.functions["far"].threshold_reversed is True


def test_a_supabase_rpc_is_a_pgvector_site_with_its_limit_and_a_cut_before_it(tmp_path):
    scan = scan_path(supabase_app(tmp_path))
    (site,) = scan.search_calls
    assert (site.kind, site.site_class, site.value("k"), site.value("score_threshold")) == (
        "sql_similarity", "request", 5, 0.78)
    (cut,) = scan.thresholds
    assert (cut.measure, cut.keeps, cut.reversed, cut.after_top) == ("score", "above", False, False)


def test_row_level_security_with_the_callers_token_is_trimming(specs, tmp_path):
    root = supabase_app(tmp_path)
    scan = scan_path(root)
    (acl,) = scan.acl_sites
    assert acl.mechanism == "row_level_security" and "the caller's token" in acl.detail
    assert not scan.fail_open
    f = run_on_code(specs, "acl_trimming", root)
    # found, not verified without a target: never "no trimming"
    assert f.status == "skipped" and "row-level security" in f.headline.lower()


@pytest.mark.parametrize("key, definer, why", [
    ("Deno.env.get('SUPABASE_SERVICE_ROLE_KEY')", "", "service key"),
    ("Deno.env.get('SUPABASE_ANON_KEY')", "security definer", "security definer"),
])
def test_the_service_key_or_a_security_definer_function_bypasses_row_level_security(specs, tmp_path, key, definer,
                                                                                     why):
    root = supabase_app(tmp_path, key=key, definer=definer)
    (fo,) = scan_path(root).fail_open
    assert fo.kind == "rls_bypassed" and why in fo.evidence
    f = run_on_code(specs, "acl_trimming", root)
    assert f.status == "fail" and "row-level security" in f.headline


def test_a_database_function_whose_sql_is_not_in_the_tree_is_a_gap(specs, tmp_path):
    root = supabase_app(tmp_path, sql=False)
    scan = scan_path(root)
    (site,) = scan.search_calls
    assert site.kind == "sql_similarity" and site.value("k") == 5
    (gap,) = scan.gaps
    assert gap.kind == "sql_function_missing" and "match_sections" in gap.detail
    f = run_on_code(specs, "acl_trimming", root)
    assert f.status == "skipped" and "cannot say there is none" in f.headline


def test_supabase_py_rpc_with_the_service_key(tmp_path):
    root = tree(tmp_path, {"app.py": """
        import os
        from fastapi import FastAPI
        from supabase import create_client

        app = FastAPI()
        supabase = create_client(os.environ["SUPABASE_URL"], os.environ["SUPABASE_SERVICE_ROLE_KEY"])


        @app.get("/ask")
        def ask(q: str):
            return supabase.rpc("match_sections", {"query_embedding": embed(q), "match_threshold": 0.8,
                                                   "match_count": 6}).execute().data
        """, "db/schema.sql": SCHEMA, "db/match.sql": MATCH.format(definer="")})
    scan = scan_path(root)
    (site,) = scan.search_calls
    assert (site.kind, site.value("k")) == ("sql_similarity", 6)
    assert [f.kind for f in scan.fail_open] == ["rls_bypassed"]
