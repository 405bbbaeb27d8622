"""The code checks report what the scanner sees in real applications, each idiom both ways.

Every test writes a small fixture of our own (the idioms of benchmarks/realapps.md, rewritten from
scratch), runs the checks on it as a code-only audit (no target, no profiles) and asserts the
finding: the faulty form in the status, headline, evidence and locations, the sound form passing
or not flagged. "Nothing found" is never a pass.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.base import localize
from ragdiag.engine.context import AuditContext
from ragdiag.inputs.checklist import load_checklist
from tests.evidence_helpers import english_left

FIXTURES = Path(__file__).parent / "fixtures" / "codescan"


@pytest.fixture(scope="module")
def specs():
    return load_checklist()


def app(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if name.endswith(".ipynb") else textwrap.dedent(content), encoding="utf-8")
    return tmp_path


def run(specs, check_id: str, client_code: Path):
    ctx = AuditContext(config=None, target=None, runner=None, client_code=client_code)
    assert not ctx.has("target") and not ctx.has("profiles")
    spec = specs[check_id]
    return run_check(resolve(spec), ctx, spec)


def rows(f, key):
    ev = f.evidence_table(key)
    return ev.records() if ev is not None else []


def cell_ids(f, key, column):
    """The message names of a column's computed cells (what they mean, whatever the language)."""
    ev = f.evidence_table(key)
    j = ev.column_keys.index(column)
    return [m.id.split(".", 1)[1] for _, c, m in ev.cell_msgs if c == j]


def locs(f):
    return {(loc.file, loc.line, loc.level) for loc in f.locations}


# ---- permission trimming: every fail-open path --------------------------------------------------------

RETRY = """
    from azure.core.exceptions import HttpResponseError
    from azure.search.documents import SearchClient

    def search(client: SearchClient, q, token):
        try:
            return list(client.search(q, top=5, x_ms_query_source_authorization=token))
        except HttpResponseError:
            return list(client.search(q, top=5{retry}))
    """


def test_fail_open_retry_without_the_permission_header_is_a_fail(specs, tmp_path):
    faulty = run(specs, "acl_trimming", app(tmp_path / "f", {"app.py": RETRY.format(retry="")}))
    assert faulty.status == "fail"
    assert faulty.headline.startswith("fail-open at app.py:9: a retry after a failed search drops the permission "
                                      "header or the security filter")
    assert cell_ids(faulty, "fail_open", "kind") == ["fo_retry_without_trimming"]
    assert ("app.py", 9, "error") in locs(faulty)
    assert any(r.startswith("at app.py:9 (search): retry with the same permission header") for r in
               faulty.recommendations)
    assert faulty.evidence_table("acl_mechanisms").records()[0]["enabled_by"] == ""
    sound = run(specs, "acl_trimming", app(tmp_path / "s", {
        "app.py": RETRY.format(retry=", x_ms_query_source_authorization=token")}))
    # the user's token on every path, but a code-only audit cannot verify it: skipped, never failed or passed
    assert sound.status == "skipped", sound.headline
    assert "fail_open" not in [e.key for e in sound.evidence]
    assert sound.skipped_reason.startswith("a security mechanism was found (the permission header at app.py:7) but "
                                           "could not be verified")


def test_swallowed_token_error_fails_and_a_raised_one_does_not(specs, tmp_path):
    body = """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, cred, q, user_assertion):
            try:
                token = cred.acquire_token_on_behalf_of(user_assertion).token
            except Exception{handler}
            return client.search(q, x_ms_query_source_authorization=token)
        """
    faulty = run(specs, "acl_trimming", app(tmp_path / "f", {"app.py": body.format(
        handler=":\n                token = None")}))
    assert faulty.status == "fail"
    assert "fail-open at app.py:7: an error getting the user's token is swallowed" in faulty.headline
    sound = run(specs, "acl_trimming", app(tmp_path / "s", {"app.py": body.format(
        handler=" as exc:\n                raise PermissionError('no user token') from exc")}))
    assert sound.status == "skipped" and "fail_open" not in [e.key for e in sound.evidence]


def test_client_controlled_trimming_fails(specs, tmp_path):
    faulty = run(specs, "acl_trimming", app(tmp_path / "f", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, overrides, identity):
            flt = None
            if overrides.get("use_oid_security_filter", True):
                flt = f"oids/any(o: o eq '{odata_escape(identity.oid)}')"
            return client.search(q, filter=flt)
        """}))
    assert faulty.status == "fail"
    assert "the request can switch trimming off or replace the filter" in faulty.headline
    sound = run(specs, "acl_trimming", app(tmp_path / "s", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, identity):
            flt = f"oids/any(o: o eq '{odata_escape(identity.oid)}')"
            return client.search(q, filter=flt)
        """}))
    assert sound.status == "pass", sound.headline
    assert sound.observed == {"escaped_code_filters": 1}


def test_security_ids_from_the_model_fail(specs, tmp_path):
    f = run(specs, "acl_trimming", app(tmp_path, {"app.py": """
        import json
        from azure.search.documents import SearchClient

        def search(client: SearchClient, tool_call, q):
            args = json.loads(tool_call.function.arguments)
            groups = args["groups"]
            return client.search(q, filter=f"group_ids/any(g: search.in(g, '{groups}'))")
        """}))
    assert f.status == "fail"
    assert "fo_ids_from_llm" in cell_ids(f, "fail_open", "kind")
    assert any(m.id == "acl_trimming.fail_open_ids_from_llm" for m in f.headline_msgs)


SETTINGS = """
    from pydantic_settings import BaseSettings

    class Settings(BaseSettings):
        enforce_access_control: bool = {default}
    """
TOGGLED = """
    from azure.search.documents import SearchClient
    from .settings import Settings

    settings = Settings()

    def search(client: SearchClient, q, groups):
        kwargs = {}
        if settings.enforce_access_control:
            kwargs["filter"] = f"group_ids/any(g: search.in(g, '{odata_escape(groups)}'))"
        return client.search(q, top=5, **kwargs)
    """


def test_trimming_off_by_default_warns_and_names_the_setting(specs, tmp_path):
    faulty = run(specs, "acl_trimming", app(tmp_path / "f", {
        "pkg/__init__.py": "", "pkg/settings.py": SETTINGS.format(default="False"), "pkg/app.py": TOGGLED}))
    assert faulty.status == "warn"
    assert "is off by default" in faulty.headline and "pkg/settings.py:5" in faulty.headline
    assert cell_ids(faulty, "fail_open", "kind") == ["fo_off_by_default"]
    on = run(specs, "acl_trimming", app(tmp_path / "s", {
        "pkg/__init__.py": "", "pkg/settings.py": SETTINGS.format(default="True"), "pkg/app.py": TOGGLED}))
    # on by default, but still switchable by the environment: a warning naming the condition, never a pass
    assert on.status == "warn" and "applies only when env:ENFORCE_ACCESS_CONTROL" in on.headline
    assert "fail_open" not in [e.key for e in on.evidence]


def test_no_trimming_on_the_request_path_is_skipped_with_the_sites_named(specs, tmp_path):
    f = run(specs, "acl_trimming", app(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q):
            return client.search(q, top=5)
        """, "scripts/admin.py": """
        from azure.search.documents import SearchClient

        def purge(client: SearchClient, name):
            return client.search("*", filter=f"group_ids/any(g: g eq '{name}')", top=1000)
        """}))
    # the admin script's unescaped security filter is listed, but it is not the request path
    assert f.status == "skipped"
    assert f.skipped_reason.startswith("no permission trimming on the request path: none of its 1 search call site")
    assert [r["site_class"] for r in rows(f, "code_filters")] == ["admin"]


# ---- agent loops ----------------------------------------------------------------------------------------------

def test_agent_loop_faulty_fails_acl_and_warns_call_sites(specs):
    acl = run(specs, "acl_trimming", FIXTURES / "agentic_faulty")
    assert acl.status == "fail"
    assert "fail-open in the agent loop at graph.py:55: search node(s) broad search without the identity's " \
           "security clause" in acl.headline
    assert any(m.id == "acl_trimming.agent_rewrite_drops" for m in acl.headline_msgs) or \
        "keep the security clause out of what rewrite node(s) rewrite may change" in " ".join(acl.recommendations)
    assert ("graph.py", 55, "error") in locs(acl)
    cs = run(specs, "call_sites", FIXTURES / "agentic_faulty")
    agent = rows(cs, "agent_graphs")[0]
    assert agent["unsecured_search_nodes"] == ("broad",) and agent["loop_limit_effective"] is False
    warned = {m.id for m in cs.headline_msgs} | {m.id for m in cs.recommendation_msgs}
    assert {"call_sites.rec_agent_limit", "call_sites.rec_agent_filters", "call_sites.rec_agent_log_filter"} <= warned
    assert cs.status == "fail"  # and the security clause drifts between the two search nodes


def test_agent_loop_sound_is_not_flagged(specs):
    acl = run(specs, "acl_trimming", FIXTURES / "agentic_sound")
    assert not any(m.id.startswith("acl_trimming.agent_") for m in acl.headline_msgs)
    cs = run(specs, "call_sites", FIXTURES / "agentic_sound")
    assert cs.status == "pass", cs.headline
    assert cs.observed == {"call_sites_compared": 1, "agent_graphs_examined": 1}
    assert not any(m.id.startswith("call_sites.rec_agent") for m in cs.recommendation_msgs)


# ---- delegated retrieval ----------------------------------------------------------------------------------------

OYD = """
    from openai import AzureOpenAI

    client = AzureOpenAI()

    def answer(messages):
        return client.chat.completions.create(
            model="gpt-4o", messages=messages,
            extra_body={"data_sources": [{"type": "azure_search", "parameters": {
                "index_name": "kb", "top_n_documents": 8, "query_type": "vector_semantic_hybrid"}}]})
    """


def test_delegated_app_reports_its_settings_and_is_not_skipped(specs, tmp_path):
    f = run(specs, "call_sites", app(tmp_path, {"app.py": OYD}))
    assert f.status == "warn"
    assert f.headline.startswith("retrieval is delegated, the service or framework builds the search itself: "
                                 "Azure OpenAI On your data (azure_openai) at app.py:7 with top_n_documents=8, "
                                 "strictness=3 (library default), in_scope=")
    settings = {r["setting"]: (r["value"], r["source"]) for r in rows(f, "delegated")}
    assert settings["top_n_documents"] == (8, "literal")
    assert settings["strictness"] == (3, "library_default:azure_openai")
    assert f.observed["delegated_retrievals"] == 1
    assert ("app.py", 7, "note") in locs(f)
    budgets = run(specs, "context_budgets", app(tmp_path, {"app.py": OYD}))
    assert budgets.status != "pass"
    assert rows(budgets, "delegated_context")[0]["value"] == 8


def test_langchain_defaults_are_the_delegated_settings(specs, tmp_path):
    f = run(specs, "call_sites", app(tmp_path, {"app.py": """
        from langchain_community.vectorstores import FAISS

        def chain(texts, embeddings):
            store = FAISS.from_texts(texts, embeddings)
            return store.as_retriever()
        """}))
    assert f.status == "warn" and "k=4 (library default)" in f.headline
    site = {r["parameter"]: r for r in rows(f, "site_params")}["k"]
    assert site["value"] == 4 and site["source"] == "library_default:langchain"


def test_own_search_code_is_not_reported_as_delegated(specs, tmp_path):
    f = run(specs, "call_sites", app(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q):
            return client.search(q, top=5)
        """}))
    assert f.status == "pass" and "delegated" not in [e.key for e in f.evidence]


# ---- the request path: admin, tests and notebooks never change a verdict ------------------------------------------

REQUEST = """
    from azure.search.documents import SearchClient
    from fastapi import FastAPI

    app = FastAPI()
    client = SearchClient("e", "kb", cred)

    @app.post("/chat")
    def chat(q: str, identity):
        return retrieve(q, identity)

    def retrieve(q, identity):
        return client.search(q, top=5, filter=f"group_ids/any(g: search.in(g, '{odata_escape(identity.groups)}'))")
    """
OTHERS = {
    "scripts/reindex.py": """
        from azure.search.documents import SearchClient
        client = SearchClient("e", "kb", cred)

        def delete_by_file(name):
            for d in client.search("*", filter=f"sourcefile eq '{name}'", top=1000):
                client.delete_documents([d])
        """,
    "tests/test_search.py": """
        from azure.search.documents import SearchClient

        def test_search(client: SearchClient):
            assert list(client.search("hello", top=50))
        """,
}


def test_admin_and_test_sites_do_not_change_the_drift_verdict(specs, tmp_path):
    f = run(specs, "call_sites", app(tmp_path / "a", {"app/main.py": REQUEST, **OTHERS}))
    assert f.status == "pass", f.headline
    assert f.observed == {"call_sites_compared": 1}
    assert "2 search call site(s) outside the request path are listed, not judged (1 admin, 1 test)" in f.headline
    classes = {r["site"]: r["site_class"] for r in rows(f, "call_sites")}
    assert classes == {"app/main.py:13": "request path", "scripts/reindex.py:6": "admin",
                       "tests/test_search.py:5": "test"}
    # the same missing clause on the request path is drift
    drift = app(tmp_path / "b", {"app/main.py": REQUEST + """
    @app.post("/search")
    def plain(q: str):
        return client.search(q, top=5)
    """})
    g = run(specs, "call_sites", drift)
    assert g.status == "fail" and "the security filter is missing at 1 of 2" in g.headline
    acl = run(specs, "acl_trimming", drift)
    assert acl.status == "fail" and "the security clause is missing at 1 of 2 request-path" in acl.headline


def test_notebook_cells_feed_the_checks(specs, tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# Explore"]},
        {"cell_type": "code", "source": ["from azure.search.documents import SearchClient\n",
                                         "from openai import AzureOpenAI\n",
                                         "client = SearchClient('e', 'kb', cred)\n",
                                         "llm = AzureOpenAI()"]},
        {"cell_type": "code", "source": ["hits = client.search('manual', top=4, query_type='semantic')\n",
                                         "ctx = '\\n'.join(h['content'] for h in hits)\n",
                                         "r = llm.chat.completions.create(model='m', messages=[\n",
                                         "    {'role': 'user', 'content': ctx}])"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    root = app(tmp_path, {"demo.ipynb": json.dumps(nb)})
    cs = run(specs, "call_sites", root)
    assert [(r["site"], r["site_class"]) for r in rows(cs, "call_sites")] == [("demo.ipynb#cell2:1", "script or sample")]
    # a notebook is a script: listed, never the request path
    assert cs.status == "skipped" and cs.skipped_reason.startswith("no search call site on the request path")
    cb = run(specs, "context_budgets", root)
    assert [(r["site"], r["site_class"]) for r in rows(cb, "llm_calls")] == [("demo.ipynb#cell2:3", "script or sample")]
    assert cb.status == "skipped" and cb.skipped_reason.startswith("no LLM call on the request path")
    pool = run(specs, "pool_size", root)
    assert rows(pool, "code_pools")[0]["site"] == "demo.ipynb#cell2:1"


# ---- pools ------------------------------------------------------------------------------------------------------

POOL = """
    from azure.search.documents import SearchClient
    from azure.search.documents.models import VectorizedQuery

    def search(client: SearchClient, q, vec):
        return client.search(search_text={text}, top=5, query_type="semantic",
                             vector_queries=[VectorizedQuery(vector=vec, k_nearest_neighbors={k}, fields="v")])
    """


def test_semantic_pure_vector_search_below_the_window_fails(specs, tmp_path):
    faulty = run(specs, "pool_size", app(tmp_path / "f", {"app.py": POOL.format(text="None", k=10)}))
    assert faulty.status == "fail"
    assert faulty.headline.startswith("the search at app.py:6 ranks semantically (always) but can put only 10 "
                                      "candidates into fusion (text recall 0 + k 10), below 50")
    row = rows(faulty, "code_pools")[0]
    assert (row["keyword_leg"], row["text_recall"], row["vector_k"], row["pool"]) == (False, 0, 10, 10)
    assert ("app.py", 6, "error") in locs(faulty)
    sound = run(specs, "pool_size", app(tmp_path / "s", {"app.py": POOL.format(text="None", k=50)}))
    assert sound.status == "pass", sound.headline
    hybrid = run(specs, "pool_size", app(tmp_path / "h", {"app.py": POOL.format(text="q", k=3)}))
    assert hybrid.status == "pass" and rows(hybrid, "code_pools")[0]["pool"] == 1003


def test_no_semantic_ranking_is_skipped_not_passed(specs, tmp_path):
    f = run(specs, "pool_size", app(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q):
            return client.search(q, top=5)
        """}))
    assert f.status == "skipped" and f.skipped_reason.startswith("no request-path search call site uses semantic")



def test_a_simple_default_that_a_payload_value_replaces_is_semantic_under_a_condition_not_no(specs, tmp_path):
    # the request's payload may carry query_type="semantic": no evidence the ranker is off, so it is judged
    payload = """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizedQuery

        def search(client: SearchClient, q, vec, payload):
            return client.search(search_text=None, top=5, query_type=payload.get("query_type", "simple"),
                                 vector_queries=[VectorizedQuery(vector=vec, k_nearest_neighbors=10, fields="v")])
        """
    f = run(specs, "pool_size", app(tmp_path / "p", {"app.py": payload}))
    assert f.status == "fail" and "ranks semantically (under a condition)" in f.headline
    assert rows(f, "code_pools")[0]["semantic"] == "under a condition"
    # sound variant: a literal "simple" is no semantic ranking: skipped, as before
    literal = payload.replace('payload.get("query_type", "simple")', '"simple"')
    f = run(specs, "pool_size", app(tmp_path / "l", {"app.py": literal}))
    assert f.status == "skipped" and f.skipped_reason.startswith("no request-path search call site uses semantic")

# ---- client-side thresholds -----------------------------------------------------------------------------------------

def test_reversed_distance_threshold_fails_and_the_sound_one_passes(specs, tmp_path):
    body = """
        from langchain_community.vectorstores import FAISS
        db = FAISS.load_local("idx", emb)

        def search(q, cutoff=0.8):
            return [d for d, score in db.similarity_search_with_score(q, k=20) if score {op} cutoff]
        """
    faulty = run(specs, "reranker_scores", app(tmp_path / "f", {"app.py": body.format(op=">")}))
    assert faulty.status == "fail"
    assert "keeps the worse side of distance (lower is better)" in faulty.headline
    assert rows(faulty, "code_thresholds")[0]["reversed"] is True
    sound = run(specs, "reranker_scores", app(tmp_path / "s", {"app.py": body.format(op="<")}))
    assert sound.status in ("pass", "warn")
    assert rows(sound, "code_thresholds")[0]["reversed"] is False


def test_reranker_threshold_after_top_warns(specs, tmp_path):
    f = run(specs, "reranker_scores", app(tmp_path / "f", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, minimum=2.0):
            hits = client.search(q, top=5, query_type="semantic")
            return [h for h in hits if h["@search.reranker_score"] >= minimum]
        """}))
    assert f.status == "warn"
    assert "applies after top capped the search: the pool shrinks silently" in f.headline
    none = run(specs, "reranker_scores", app(tmp_path / "n", {"app.py": "x = 1\n"}))
    assert none.status == "skipped" and not none.observed


# ---- budgets ------------------------------------------------------------------------------------------------------

BUDGET_FAULTY = """
    from openai import AzureOpenAI
    client = AzureOpenAI()
    MAX_PROMPT_TOKENS = 4000

    def answer(question, results):
        room = MAX_PROMPT_TOKENS - len(question)
        context = "\\n".join(r["content"] for r in results)
        return client.chat.completions.create(model="m", max_tokens=500, messages=[
            {"role": "user", "content": context + question}]), room
    """
BUDGET_SOUND = """
    from openai import AzureOpenAI
    client = AzureOpenAI()
    MAX_PROMPT_TOKENS = 4000

    def answer(question, results):
        room = MAX_PROMPT_TOKENS - count_tokens(question)
        context = truncate_to_tokens("\\n".join(r["content"] for r in results), room)
        return client.chat.completions.create(model="m", max_tokens=500, messages=[
            {"role": "user", "content": context + question}])
    """


def test_budget_units_and_output_only_caps_warn(specs, tmp_path):
    faulty = run(specs, "context_budgets", app(tmp_path / "f", {"app.py": BUDGET_FAULTY}))
    assert faulty.status == "warn"
    ids = [m.id for m in faulty.headline_msgs]
    assert {"context_budgets.unbounded_calls", "context_budgets.chars_from_tokens",
            "context_budgets.output_only"} <= set(ids)
    assert "MAX_PROMPT_TOKENS - len(question)" in faulty.headline
    assert cell_ids(faulty, "budget_units", "kind") == ["unit_chars_from_tokens", "unit_output_only"]
    assert rows(faulty, "llm_calls")[0]["output_cap"] == 500
    sound = run(specs, "context_budgets", app(tmp_path / "s", {"app.py": BUDGET_SOUND}))
    assert sound.status == "pass", sound.headline
    assert "budget_units" not in [e.key for e in sound.evidence]


def test_an_evaluation_scripts_unbounded_call_does_not_warn(specs, tmp_path):
    f = run(specs, "context_budgets", app(tmp_path, {"evals/generate.py": BUDGET_FAULTY}))
    assert f.status == "skipped"
    assert f.skipped_reason.startswith("no LLM call on the request path: the 1 LLM call(s) recognised")
    assert rows(f, "llm_calls")[0]["site_class"] == "evaluation"


# ---- shared query text -------------------------------------------------------------------------------------------------

def test_one_variable_for_keyword_and_vector_text_warns(specs, tmp_path):
    body = """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizableTextQuery

        def search(client: SearchClient, q, keywords):
            return client.search(search_text={kw}, top=5,
                                 vector_queries=[VectorizableTextQuery(text=q, k_nearest_neighbors=50, fields="v")])
        """
    faulty = run(specs, "shared_query_text", app(tmp_path / "f", {"app.py": body.format(kw="q")}))
    assert faulty.status == "warn" and "(app.py:6)" in faulty.headline
    sound = run(specs, "shared_query_text", app(tmp_path / "s", {"app.py": body.format(kw="keywords")}))
    assert sound.status == "pass", sound.headline
    assert sound.observed == {"code_sites_compared": 1}


def test_an_embedding_under_another_name_is_no_evidence_of_separate_texts(specs, tmp_path):
    f = run(specs, "shared_query_text", app(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizedQuery

        def search(client: SearchClient, q, response_data):
            vec = response_data.get("data")
            return client.search(q, top=5, vector_queries=[VectorizedQuery(vector=vec, k_nearest_neighbors=50,
                                                                           fields="v")])
        """}))
    assert f.status == "skipped" and not f.observed


# ---- German -------------------------------------------------------------------------------------------------------------

def test_the_new_code_findings_render_in_german(specs, tmp_path):
    root = app(tmp_path, {"app.py": RETRY.format(retry=""), "b.py": BUDGET_FAULTY, "oyd.py": OYD})
    for cid in ("acl_trimming", "context_budgets", "call_sites"):
        f = run(specs, cid, root)
        de = localize(f, "de", specs)
        assert english_left(de, cid) == [], cid
    de = localize(run(specs, "acl_trimming", root), "de", specs)
    assert de.headline.startswith("Fail-open an app.py:9: eine Wiederholung nach einer fehlgeschlagenen Suche")
    assert de.evidence_table("fail_open").rows[0][3] == "Wiederholung ohne Trimmung"


def test_a_retrievers_k_replaces_the_stores_default_in_the_headline(specs, tmp_path):
    f = run(specs, "call_sites", app(tmp_path, {"chat.ts": """
        import { FaissStore } from '@langchain/community/vectorstores/faiss';

        export async function chat(q: string, embeddings: any) {
          const store = await FaissStore.load('.faiss', embeddings);
          return store.asRetriever(3).invoke(q);
        }
        """}))
    assert f.status == "warn"
    assert "a framework vector store (langchain) at chat.ts:5 with k=3 (passed at chat.ts:6)" in f.headline
