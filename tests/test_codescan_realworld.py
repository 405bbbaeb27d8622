"""Idioms of real RAG applications, each in a small fixture of our own, flagged both ways.

Every test writes a faulty and a sound form of one idiom (the forms seen in
the applications of benchmarks/realapps.md, rewritten from scratch) and
checks that the scanner reports the faulty one and not the sound one.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ragdiag.codescan import CodeScan, scan_path
from ragdiag.codescan.core import LanguageScanner, scanner_for, scanners

FIXTURES = Path(__file__).parent / "fixtures" / "codescan"


def scan(tmp_path: Path, files: dict[str, str]) -> CodeScan:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")
    return scan_path(tmp_path)


def kinds(items) -> list[str]:
    return sorted(i.kind for i in items)


# ---- permission trimming -----------------------------------------------------------------------

QSA_FAULTY = """
    from azure.search.documents import SearchClient

    def search(client: SearchClient, q, token):
        return client.search(q, top=5)
    """
QSA_SOUND = """
    from azure.search.documents import SearchClient

    def search(client: SearchClient, q, token):
        return client.search(q, top=5, x_ms_query_source_authorization=token)
    """


def test_query_source_authorization_parameter(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": QSA_FAULTY})
    sound = scan(tmp_path / "s", {"app.py": QSA_SOUND})
    assert faulty.acl()["mechanisms"] == []
    assert sound.acl()["mechanisms"] == ["query_source_authorization"]
    site = sound.search_calls[0]
    assert site.param("query_source_authorization").expression == "token"
    assert sound.acl_sites[0].site == site.location and sound.acl_sites[0].enabled_by == ""


def test_query_source_authorization_header_rest_python_and_js(tmp_path):
    faulty = scan(tmp_path / "f", {
        "r.py": """
            import requests

            def search(endpoint, body, token):
                return requests.post(f"{endpoint}/indexes/kb/docs/search", json=body, headers={"api-key": "k"})
            """,
        "r.ts": """
            export async function search(endpoint: string, body: object, token: string) {
              return fetch(`${endpoint}/indexes/kb/docs/search`, { method: "POST", body: JSON.stringify(body) });
            }
            """})
    sound = scan(tmp_path / "s", {
        "r.py": """
            import requests

            def search(endpoint, body, token):
                headers = {"api-key": "k", "x-ms-query-source-authorization": token}
                return requests.post(f"{endpoint}/indexes/kb/docs/search", json=body, headers=headers)
            """,
        "r.ts": """
            export async function search(endpoint: string, body: object, token: string) {
              return fetch(`${endpoint}/indexes/kb/docs/search`, {
                method: "POST", body: JSON.stringify(body),
                headers: { "x-ms-query-source-authorization": token },
              });
            }
            """})
    assert faulty.acl_sites == ()
    assert sorted((a.file, a.mechanism) for a in sound.acl_sites) == [
        ("r.py", "query_source_authorization"), ("r.ts", "query_source_authorization")]


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
        kwargs = {{}}
        if settings.enforce_access_control:
            kwargs["filter"] = f"group_ids/any(g: search.in(g, '{{groups}}'))"
        return client.search(q, top=5, **kwargs)
    """


def test_trimming_switched_by_a_setting_that_is_off_by_default(tmp_path):
    faulty = scan(tmp_path / "f", {"pkg/__init__.py": "", "pkg/settings.py": SETTINGS.format(default="False"),
                                   "pkg/app.py": TOGGLED.format()})
    sound = scan(tmp_path / "s", {"pkg/__init__.py": "", "pkg/settings.py": SETTINGS.format(default="True"),
                                  "pkg/app.py": TOGGLED.format()})
    for s in (faulty, sound):
        acl = [a for a in s.acl_sites if a.mechanism == "odata_filter"]
        # a pydantic-settings field: the environment switches it
        assert acl and acl[0].enabled_by == "env:ENFORCE_ACCESS_CONTROL", s.acl_sites
    assert [f.kind for f in faulty.fail_open if f.kind == "off_by_default"] == ["off_by_default"]
    assert "pkg/settings.py:5" in next(f for f in faulty.fail_open if f.kind == "off_by_default").evidence
    assert not [f for f in sound.fail_open if f.kind == "off_by_default"]


def test_trimming_switched_by_an_environment_variable(tmp_path):
    s = scan(tmp_path, {"app.py": """
        import os
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, token):
            if os.getenv("AZURE_ENFORCE_ACCESS_CONTROL", "false") == "true":
                return client.search(q, x_ms_query_source_authorization=token)
            return client.search(q)
        """})
    acl = only_one(s.acl_sites)
    assert acl.mechanism == "query_source_authorization" and acl.enabled_by.startswith("env:")


def only_one(items):
    items = list(items)
    assert len(items) == 1, items
    return items[0]


def test_token_error_swallowed_then_search_sent(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, cred, q, user_assertion):
            try:
                token = cred.acquire_token_on_behalf_of(user_assertion).token
            except Exception:
                token = None
            return client.search(q, x_ms_query_source_authorization=token)
        """})
    sound = scan(tmp_path / "s", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, cred, q, user_assertion):
            try:
                token = cred.acquire_token_on_behalf_of(user_assertion).token
            except Exception as exc:
                raise PermissionError("no user token") from exc
            return client.search(q, x_ms_query_source_authorization=token)
        """})
    assert [f.kind for f in faulty.fail_open] == ["token_error_swallowed"]
    assert faulty.fail_open[0].line == 7
    assert sound.fail_open == ()


def test_retry_without_the_permission_header(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": """
        from azure.core.exceptions import HttpResponseError
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, token):
            try:
                return list(client.search(q, top=5, x_ms_query_source_authorization=token))
            except HttpResponseError:
                return list(client.search(q, top=5))
        """})
    sound = scan(tmp_path / "s", {"app.py": """
        from azure.core.exceptions import HttpResponseError
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, token):
            try:
                return list(client.search(q, top=5, x_ms_query_source_authorization=token))
            except HttpResponseError:
                return list(client.search(q, top=5, x_ms_query_source_authorization=token))
        """})
    assert [(f.kind, f.line) for f in faulty.fail_open] == [("retry_without_trimming", 9)]
    assert sound.fail_open == ()


def test_security_ids_from_an_llm_tool_call_argument(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": """
        import json
        from azure.search.documents import SearchClient

        def search(client: SearchClient, tool_call, q):
            args = json.loads(tool_call.function.arguments)
            groups = args["groups"]
            return client.search(q, filter=f"group_ids/any(g: search.in(g, '{groups}'))")
        """})
    sound = scan(tmp_path / "s", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, identity, q):
            groups = ",".join(identity.group_ids)
            return client.search(q, filter=f"group_ids/any(g: search.in(g, '{odata_escape(groups)}'))")
        """})
    assert "ids_from_llm" in kinds(faulty.fail_open)
    assert faulty.security_filters[0].from_llm is True
    assert sound.fail_open == () and sound.security_filters[0].from_llm is False


def test_client_can_switch_trimming_off_or_supply_the_filter(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, overrides, identity):
            flt = None
            if overrides.get("use_oid_security_filter", True):
                flt = f"oids/any(o: o eq '{odata_escape(identity.oid)}')"
            return client.search(q, filter=flt)

        def search_any(client: SearchClient, request_json):
            flt = request_json["filter"]
            return client.search(request_json["q"], filter=flt)
        """})
    sound = scan(tmp_path / "s", {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, identity):
            flt = f"oids/any(o: o eq '{odata_escape(identity.oid)}')"
            return client.search(q, filter=flt)
        """})
    assert kinds(faulty.fail_open) == ["client_can_disable", "client_can_disable"]
    assert sound.fail_open == ()


@pytest.mark.parametrize("flt, security", [
    ("security_group eq '{g}'", True),
    ("entra_groups/any(x: search.in(x, '{g}'))", True),
    ("doc_acl/any(x: x eq '{g}')", True),
    ("allowed_principals/any(x: x eq '{g}')", True),
    ("category eq '{g}'", False),
    ("tags/any(t: t eq '{g}')", False),
])
def test_security_fields_outside_the_fixed_list(tmp_path, flt, security):
    s = scan(tmp_path, {"app.py": f"""
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, g):
            return client.search(q, filter=f"{flt}")
        """})
    assert bool(s.security_filters) is security
    assert bool(s.acl()["mechanisms"]) is security


def test_security_field_name_held_in_a_variable(tmp_path):
    s = scan(tmp_path, {"app.py": """
        import os
        GROUPS_COLUMN = os.environ.get("PERMITTED_GROUPS_COLUMN")

        def groups_filter(group_ids):
            return f"{GROUPS_COLUMN}/any(g: search.in(g, '{group_ids}'))"

        def other_filter(value):
            return f"{value}/any(g: search.in(g, 'x'))"
        """})
    f = only_one(s.security_filters)
    assert f.function == "groups_filter" and f.fields == ("{GROUPS_COLUMN}",)


# ---- delegated retrieval ---------------------------------------------------------------------------

OYD = """
    from openai import AzureOpenAI

    client = AzureOpenAI()

    def answer(messages, group_filter):
        return client.chat.completions.create(
            model="gpt-4o", messages=messages, max_tokens=800,
            extra_body={"data_sources": [{"type": "azure_search", "parameters": {
                "index_name": "kb", "top_n_documents": 8, "strictness": 4, "in_scope": True,
                "query_type": "vector_semantic_hybrid", "filter": group_filter}}]})
    """


def test_on_your_data_reports_the_delegated_settings(tmp_path):
    s = scan(tmp_path / "oyd", {"app.py": OYD})
    d = only_one(s.delegated)
    assert (d.kind, d.framework, d.store) == ("on_your_data", "azure_openai", "azure_search")
    assert {k: d.value(k) for k in ("top_n_documents", "strictness", "in_scope", "query_type")} == {
        "top_n_documents": 8, "strictness": 4, "in_scope": True, "query_type": "vector_semantic_hybrid"}
    site = only_one(s.search_calls)
    assert site.kind == "on_your_data" and site.value("top") == 8
    # the service builds the search from the data source the app sends: the module is no search builder
    assert s.centralisation()["verdict"] == "delegated" and s.retrieval_delegated() and not s.builders()
    plain = scan(tmp_path / "plain", {"app.py": """
        from openai import AzureOpenAI
        client = AzureOpenAI()

        def answer(messages):
            return client.chat.completions.create(model="gpt-4o", messages=messages)
        """})
    assert plain.delegated == () and plain.search_calls == () and plain.centralisation()["verdict"] == "none"


def test_on_your_data_defaults_and_settings_class(tmp_path):
    s = scan(tmp_path, {
        "settings.py": """
            from pydantic import Field
            from pydantic_settings import BaseSettings, SettingsConfigDict

            class AzureSearchSettings(BaseSettings):
                model_config = SettingsConfigDict(env_prefix="AZURE_SEARCH_")
                top_k: int = Field(default=5, serialization_alias="top_n_documents")
                strictness: int = 3
                enable_in_domain: bool = Field(default=True, serialization_alias="in_scope")
            """,
        "app.py": """
            def prepare(messages, datasource):
                args = {"messages": messages}
                args["extra_body"] = {"data_sources": [datasource.payload()]}
                return args
            """})
    by_file = {d.file: d for d in s.delegated}
    assert by_file["app.py"].kind == "on_your_data" and by_file["app.py"].value("top_n_documents") == 5
    cfg = by_file["settings.py"]
    assert cfg.value("top_n_documents") == 5 and cfg.value("in_scope") is True and cfg.value("strictness") == 3
    top = cfg.settings["top_n_documents"]
    assert top.override == "env:AZURE_SEARCH_TOP_K" and top.provenance == "settings.py:7"


def test_agentic_retrieval_is_delegated_and_llamaindex_retrieve_is_not(tmp_path):
    s = scan(tmp_path, {
        "agent.py": """
            from azure.search.documents.agent import KnowledgeAgentRetrievalClient
            from azure.search.documents.agent.models import KnowledgeAgentRetrievalRequest

            agent_client = KnowledgeAgentRetrievalClient(endpoint="e", agent_name="a", credential=c)

            def ask(messages, token):
                return agent_client.retrieve(KnowledgeAgentRetrievalRequest(messages=messages),
                                             x_ms_query_source_authorization=token)
            """,
        "li.py": """
            def ask(retriever, q):
                return retriever.retrieve(q)
            """})
    d = only_one(s.delegated)
    assert d.kind == "agentic_retrieval" and d.file == "agent.py"
    assert sorted((c.file, c.kind) for c in s.search_calls) == [("agent.py", "agentic_retrieval"),
                                                                ("li.py", "llamaindex")]
    assert s.acl()["mechanisms"] == ["query_source_authorization"]


def test_langchain_faiss_and_azuresearch_defaults(tmp_path):
    s = scan(tmp_path, {"lc.py": """
        from langchain_community.vectorstores import FAISS
        from langchain_community.vectorstores.azuresearch import AzureSearch

        db = FAISS.from_texts(texts, embeddings)
        store = AzureSearch(azure_search_endpoint="e", index_name="kb", embedding_function=f)

        def a(q):
            return db.similarity_search(q)

        def b(q):
            return db.similarity_search(q, k=10, filter={"source": "hr"})

        def c(q):
            return store.as_retriever().invoke(q)

        def d(q):
            return store.as_retriever(search_kwargs={"k": 12}).invoke(q)
        """})
    stores = {d.store: d for d in s.delegated}
    assert stores["faiss"].defaults == {"k": 4, "fetch_k": 20} and stores["azure_search"].value("k") == 4
    sites = {c.function: c for c in s.search_calls}
    assert sites["a"].value("k") == 4 and sites["a"].param("k").source == "library_default:langchain"
    assert sites["b"].value("k") == 10 and sites["b"].value("fetch_k") == 20
    assert sites["c"].value("k") == 4 and sites["d"].value("k") == 12
    assert sites["d"].param("k").source != "library_default:langchain"


def test_rest_search_through_httpx_and_aiohttp(tmp_path):
    s = scan(tmp_path, {"r.py": """
        import aiohttp
        import httpx

        async def a(endpoint, q):
            async with aiohttp.ClientSession() as session:
                async with session.post(f"{endpoint}/indexes/kb/docs/search?api-version=2024-07-01",
                                        json={"search": q, "top": 7}) as resp:
                    return await resp.json()

        def b(endpoint, q):
            return httpx.post(endpoint + "/indexes/kb/docs/search", json={"search": q, "top": 9})

        def not_search(endpoint, doc):
            return httpx.post(endpoint + "/indexes/kb/docs/index", json={"value": [doc]})
        """})
    assert sorted((c.function, c.kind, c.value("top")) for c in s.search_calls) == [
        ("a", "rest_search", 7), ("b", "rest_search", 9)]


def test_sql_similarity_search_and_its_text_pool(tmp_path):
    s = scan(tmp_path, {"pg.py": """
        from sqlalchemy import text

        async def search(session, vector, q):
            vec = "SELECT id FROM items ORDER BY embedding <=> :v LIMIT 40"
            fts = "SELECT id FROM items WHERE to_tsvector(body) @@ plainto_tsquery(:q) LIMIT 25"
            return await session.execute(text(vec), {"v": vector})

        async def plain(conn):
            return await conn.fetch("SELECT id FROM items ORDER BY created LIMIT 10")
        """})
    site = only_one(s.search_calls)
    assert site.kind == "sql_similarity" and site.value("k") == 40 and site.value("text_k") == 25


# ---- values that are not literals ---------------------------------------------------------------------

def test_values_from_settings_env_dataclass_parameters_self_and_other_modules(tmp_path):
    s = scan(tmp_path, {
        "app/__init__.py": "",
        "app/config.py": """
            import os
            from dataclasses import dataclass
            from pydantic import Field
            from pydantic_settings import BaseSettings

            TOP = 6

            class Settings(BaseSettings):
                top_k: int = Field(default=5)

            @dataclass
            class Retrieval:
                k: int = 30

            settings = Settings()
            K_ENV = int(os.getenv("SEARCH_K", "40"))
            """,
        "app/search.py": """
            from azure.search.documents import SearchClient
            from azure.search.documents.models import VectorizedQuery
            from .config import TOP, K_ENV, Retrieval, settings

            class Searcher:
                def __init__(self, client: SearchClient, top: int = 8):
                    self.client = client
                    self.top = top

                def by_self(self, q):
                    return self.client.search(q, top=self.top)

            def by_settings(client: SearchClient, q):
                return client.search(q, top=settings.top_k)

            def by_env(client: SearchClient, q, v):
                return client.search(q, top=TOP, vector_queries=[VectorizedQuery(vector=v, k_nearest_neighbors=K_ENV)])

            def by_dataclass(client: SearchClient, q, v, cfg: Retrieval):
                return client.search(q, vector_queries=[VectorizedQuery(vector=v, k_nearest_neighbors=cfg.k)])

            def by_parameter(client: SearchClient, q, top=4):
                return client.search(q, top=top)

            def unknown(client: SearchClient, q, top):
                return client.search(q, top=top)
            """})
    sites = {c.function.rsplit(".", 1)[-1]: c for c in s.search_calls}
    top = sites["by_settings"].param("top")
    assert (top.value, top.source, top.provenance, top.override) == (5, "settings:Settings.top_k",
                                                                     "app/config.py:10", "env:TOP_K")
    assert sites["by_env"].value("top") == 6 and sites["by_env"].param("top").provenance == "app/config.py:7"
    k = sites["by_env"].param("k")
    assert k.value == 40 and k.override == "env:SEARCH_K"
    assert sites["by_dataclass"].value("k") == 30
    assert sites["by_dataclass"].param("k").override == "constructor:Retrieval.k"
    p = sites["by_parameter"].param("top")
    assert p.value == 4 and p.override == "parameter:top" and p.provenance == "app/search.py:23"
    assert sites["by_self"].value("top") == 8 and sites["by_self"].param("top").source == "attribute:self.top"
    assert not sites["unknown"].param("top").resolved


def test_request_overridable_defaults(tmp_path):
    s = scan(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient

        def search(client: SearchClient, q, overrides, request_json):
            top = overrides.get("top") or 3
            k = request_json["k"] if request_json.get("k") else 10
            return client.search(q, top=top, filter=None), client.search(q, top=k)
        """})
    a, b = s.search_calls
    assert a.value("top") == 3 and a.param("top").override.startswith("request:")
    assert b.value("top") == 10 and b.param("top").override.startswith("request:")


def test_frontend_default_sent_with_every_request(tmp_path):
    s = scan(tmp_path, {
        "web/Chat.tsx": """
            import { useState } from "react";
            export function Chat() {
              const [retrieveCount, setRetrieveCount] = useState<number>(5);
              const [minRerankerScore, setMinRerankerScore] = useState<number>(1.5);
              const [isOpen, setIsOpen] = useState<boolean>(false);
              const send = (q: string) => fetch("/chat", { method: "POST", body: JSON.stringify({
                question: q, overrides: { top: retrieveCount, minimum_reranker_score: minRerankerScore } }) });
              return null;
            }
            """})
    got = {f.name: (f.value.value, f.sent_as) for f in s.frontend_defaults}
    assert got == {"retrieveCount": (5, "top"), "minRerankerScore": (1.5, "minimum_reranker_score")}
    assert s.frontend_defaults[0].value.provenance.startswith("web/Chat.tsx:")


# ---- request path versus the rest ----------------------------------------------------------------------

APP = """
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


def test_admin_and_test_sites_do_not_change_the_drift_verdict(tmp_path):
    s = scan(tmp_path, {
        "app/main.py": APP,
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
        "notebooks/explore.ipynb": json.dumps({"cells": [
            {"cell_type": "code", "source": ["from azure.search.documents import SearchClient\n",
                                             "client = SearchClient('e', 'kb', cred)\n",
                                             "r = client.search('x', top=20)"]}]}),
    })
    classes = {c.file: (c.site_class, c.class_reason) for c in s.search_calls}
    assert classes["app/main.py"][0] == "request" and "reachable from" in classes["app/main.py"][1]
    assert classes["scripts/reindex.py"][0] == "admin"
    assert classes["tests/test_search.py"][0] == "test"
    assert classes["notebooks/explore.ipynb"][0] == "script"
    assert s.drift() == [] and s.centralisation()["verdict"] == "central"
    assert {d.param for d in s.drift("all")} >= {"security filter", "top"}
    assert s.centralisation("all")["verdict"] == "scattered"
    assert s.acl()["mechanisms"] == ["odata_filter"]
    assert s.summary()["search_calls_by_class"] == {"admin": 1, "request": 1, "script": 1, "test": 1}


def test_ingestion_and_evaluation_paths(tmp_path):
    s = scan(tmp_path, {
        "ingest/load.py": """
            from azure.search.documents import SearchClient
            def check(client: SearchClient):
                return client.search("manual", top=1)
            """,
        "evals/run_eval.py": """
            from azure.search.documents import SearchClient
            def run(client: SearchClient, q):
                return client.search(q, top=10)
            """})
    assert {c.file: c.site_class for c in s.search_calls} == {"ingest/load.py": "ingestion",
                                                               "evals/run_eval.py": "evaluation"}
    assert s.request_sites() == ()


# ---- what is done with the hits ------------------------------------------------------------------------

def test_reranker_threshold_after_top_and_a_reversed_distance(tmp_path):
    s = scan(tmp_path, {
        "az.py": """
            from azure.search.documents import SearchClient

            def search(client: SearchClient, q, minimum=2.0):
                hits = client.search(q, top=5, query_type="semantic")
                return [h for h in hits if h["@search.reranker_score"] >= minimum]
            """,
        "fa.py": """
            from langchain_community.vectorstores import FAISS
            db = FAISS.load_local("idx", emb)

            def wrong(q, cutoff=0.8):
                return [d for d, score in db.similarity_search_with_score(q) if score > cutoff]

            def right(q, cutoff=0.8):
                return [d for d, score in db.similarity_search_with_score(q) if score < cutoff]
            """})
    by = {(t.file, t.function): t for t in s.thresholds}
    az = by[("az.py", "search")]
    assert (az.measure, az.keeps, az.reversed, az.after_top, az.value.value) == ("reranker_score", "above", False,
                                                                                True, 2.0)
    assert by[("fa.py", "wrong")].measure == "distance" and by[("fa.py", "wrong")].reversed
    assert by[("fa.py", "right")].measure == "distance" and not by[("fa.py", "right")].reversed


def test_relevance_threshold_given_a_distance(tmp_path):
    s = scan(tmp_path, {"lc.py": """
        MAX_DISTANCE = 0.35

        def retriever(store):
            return store.as_retriever(search_type="similarity_score_threshold",
                                      search_kwargs={"score_threshold": MAX_DISTANCE, "k": 8})

        def fine(store):
            return store.as_retriever(search_type="similarity_score_threshold",
                                      search_kwargs={"score_threshold": 0.7, "k": 8})
        """})
    by = {t.function: t for t in s.thresholds}
    assert by["retriever"].reversed and not by["fine"].reversed


def test_budget_units_and_output_only_caps(tmp_path):
    faulty = scan(tmp_path / "f", {"app.py": """
        from openai import AzureOpenAI
        client = AzureOpenAI()
        MAX_PROMPT_TOKENS = 4000

        def answer(question, results):
            room = MAX_PROMPT_TOKENS - len(question)
            context = "\\n".join(r["content"] for r in results)
            return client.chat.completions.create(model="m", max_tokens=500, messages=[
                {"role": "user", "content": context + question}]), room
        """})
    sound = scan(tmp_path / "s", {"app.py": """
        from openai import AzureOpenAI
        client = AzureOpenAI()
        MAX_PROMPT_TOKENS = 4000

        def answer(question, results):
            room = MAX_PROMPT_TOKENS - count_tokens(question)
            context = truncate_to_tokens("\\n".join(r["content"] for r in results), room)
            return client.chat.completions.create(model="m", max_tokens=500, messages=[
                {"role": "user", "content": context + question}])
        """})
    assert kinds(faulty.budget_units) == ["chars_from_tokens", "output_only"]
    assert faulty.llm_calls[0].output_cap.value == 500
    assert sound.budget_units == ()


# ---- goldsets ---------------------------------------------------------------------------------------------

def test_goldsets_in_the_wild(tmp_path):
    rows = {
        "evals/ground_truth.jsonl": [{"question": "q", "truth": "It does [manual.pdf#page=7]."}],
        "evals/golden.jsonl": [{"question": "q", "ground_truth": "an answer"}],
        "evals/qrels_goldset.jsonl": [{"query": "q", "relevant_docs": ["d1", "d2"]}],
        "evals/data.jsonl": [{"question": "q", "customerId": "4"}],
        "evals/results/ground_truth_eval_results.jsonl": [{"question": "q", "gpt_groundedness": 5}],
    }
    for rel, recs in rows.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/evaluations.yaml").write_text("jobs:\n  eval:\n    steps: []\n")
    s = scan_path(tmp_path)
    assert {g.path: g.kind for g in s.goldset_files} == {
        "evals/ground_truth.jsonl": "inline_sources", "evals/golden.jsonl": "no_source_ids",
        "evals/qrels_goldset.jsonl": "goldset", "evals/data.jsonl": "questions_only"}
    assert [g.path for g in s.eval_result_files] == ["evals/results/ground_truth_eval_results.jsonl"]


# ---- notebooks ---------------------------------------------------------------------------------------------

def test_notebook_code_cells_are_scanned(tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# Search"]},
        {"cell_type": "code", "source": ["%pip install azure-search-documents\n", "!ls\n",
                                         "from azure.search.documents import SearchClient\n",
                                         "client = SearchClient('e', 'kb', cred)"]},
        {"cell_type": "code", "source": "def broken(:\n    pass"},
        {"cell_type": "code", "source": ["hits = client.search('manual', top=4,\n",
                                         "                      filter=\"security_group eq 'x'\")"]},
        {"cell_type": "code", "source": ["r = await client.search('async', top=2)"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "demo.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    s = scan_path(tmp_path)
    assert [(c.cell, c.value("top"), c.site_class) for c in s.search_calls] == [("3:1", 4, "script"),
                                                                               ("4:1", 2, "script")]
    assert s.security_filters[0].cell == "3:2"
    assert [x.reason for x in s.skipped] == ["cell 2: syntax error at line 1: cell not scanned"]


# ---- agentic loops (seed 004) -------------------------------------------------------------------------------

def test_agentic_loop_faulty_and_sound():
    faulty = scan_path(FIXTURES / "agentic_faulty")
    sound = scan_path(FIXTURES / "agentic_sound")
    g = only_one(faulty.agent_graphs)
    assert g.has_cycle and g.search_nodes == ("search", "broad") and g.unsecured_search_nodes == ("broad",)
    assert g.rewrite_nodes_touching_filters == ("rewrite",)
    assert g.loop_limit_effective is False and "never advanced inside the loop" in g.loop_limit
    assert not g.filter_logged
    assert "unescaped_interpolation" in kinds(faulty.fail_open)
    ok = only_one(sound.agent_graphs)
    assert ok.unsecured_search_nodes == () and ok.rewrite_nodes_touching_filters == ()
    assert ok.loop_limit_effective is True and ok.filter_logged
    assert sound.fail_open == ()


def test_agentic_loop_without_any_bound(tmp_path):
    s = scan(tmp_path, {"g.py": """
        from langgraph.graph import StateGraph

        def search(state):
            return {"docs": client.search(state["q"], top=3)}

        def route(state):
            return "search" if not state["docs"] else "end"

        g = StateGraph(dict)
        g.add_node("search", search)
        g.add_conditional_edges("search", route, {"search": "search", "end": "end"})
        """})
    g = only_one(s.agent_graphs)
    assert g.has_cycle and g.loop_limit == "" and g.loop_limit_effective is None


# ---- the language scanner contract ---------------------------------------------------------------------------

def test_language_scanners_share_one_contract():
    names = {s.name for s in scanners()}
    assert names >= {"python", "js", "notebook"}
    assert all(isinstance(s, LanguageScanner) for s in scanners())
    assert scanner_for("a/b.py").name == "python" and scanner_for("x.tsx").name == "js"
    assert scanner_for("n.ipynb").name == "notebook" and scanner_for("x.java") is None


def test_callers_filling_a_wrapper_parameter_from_the_request(tmp_path):
    files = {
        "svc/search_text.py": """
            from azure.search.documents import SearchClient

            class SearchText:
                def __init__(self, client: SearchClient):
                    self.client = client

                def search(self, query, filter=None):
                    return self.client.search(query, filter=filter, top=10)
            """,
        "svc/app.py": """
            def route(request_json, searcher):
                flt = request_json["filter"] if request_json.get("filter") else None
                return searcher.search(query=request_json["q"], filter=flt)
            """}
    faulty = scan(tmp_path / "f", files)
    sound = scan(tmp_path / "s", {**files, "svc/app.py": """
        def route(request_json, searcher, identity):
            return searcher.search(query=request_json["q"], filter=acl_filter(identity))
        """})
    f = only_one(faulty.fail_open)
    assert f.kind == "client_can_disable" and f.file == "svc/search_text.py" and "svc/app.py:4" in f.evidence
    assert sound.fail_open == ()


def test_js_on_your_data_and_agentic_retrieval_over_rest(tmp_path):
    s = scan(tmp_path, {"chat.ts": """
        export async function answer(endpoint: string, messages: object[], token: string) {
          const body = { messages, data_sources: [{ type: "azure_search", parameters: {
            index_name: "kb", top_n_documents: 6, strictness: 2, in_scope: false } }] };
          return fetch(`${endpoint}/openai/deployments/gpt/chat/completions?api-version=2024-10-21`, {
            method: "POST", body: JSON.stringify(body) });
        }

        export async function retrieve(endpoint: string, messages: object[], token: string) {
          return fetch(`${endpoint}/agents/kb-agent/retrieve?api-version=2025-05-01-preview`, {
            method: "POST", headers: { "x-ms-query-source-authorization": token },
            body: JSON.stringify({ messages, targetIndexParams: [{ indexName: "kb", rerankerThreshold: 2.5 }] }) });
        }

        export async function plain(endpoint: string, messages: object[]) {
          return fetch(`${endpoint}/openai/deployments/gpt/chat/completions`, { method: "POST",
            body: JSON.stringify({ messages }) });
        }
        """})
    by = {d.kind: d for d in s.delegated}
    assert by["on_your_data"].settings["top_n_documents"].value == 6
    assert by["on_your_data"].settings["in_scope"].value is False
    assert by["agentic_retrieval"].settings["rerankerThreshold"].value == 2.5
    assert sorted(c.kind for c in s.search_calls) == ["agentic_retrieval", "on_your_data"]
    assert s.acl()["mechanisms"] == ["query_source_authorization"]


def test_sql_filter_interpolated_into_the_query(tmp_path):
    s = scan(tmp_path, {"pg.py": """
        def search(session, vector, filter_clause):
            return session.execute(f"SELECT id FROM items {filter_clause} ORDER BY embedding <=> :v LIMIT 20")

        def safe(session, vector):
            return session.execute("SELECT id FROM items WHERE price < :p ORDER BY embedding <=> :v LIMIT 20")
        """})
    a, b = s.search_calls
    assert a.param("filter").from_fstring and a.param("filter").fstring_vars == ("filter_clause",)
    assert not b.param("filter").from_fstring and b.param("filter").value == "price < :p"


def test_js_reranker_threshold_and_budget_units(tmp_path):
    s = scan(tmp_path, {"search.ts": """
        import { SearchClient } from "@azure/search-documents";
        const MAX_PROMPT_TOKENS = 3000;

        export async function search(client: SearchClient<any>, q: string, minScore = 2) {
          const res = await client.search(q, { top: 5, queryType: "semantic" });
          const kept = [];
          for await (const r of res.results) {
            if (r.rerankerScore >= minScore) kept.push(r);
          }
          const room = MAX_PROMPT_TOKENS - q.length;
          return { kept, room };
        }

        export function keepClose(hits: any[], maxDistance: number) {
          return hits.filter((h) => h["distance"] > maxDistance);
        }
        """})
    by = {t.function: t for t in s.thresholds}
    t = by["search"]
    assert (t.field, t.measure, t.keeps, t.reversed, t.after_top, t.value.value) == (
        "rerankerScore", "reranker_score", "above", False, True, 2)
    assert by["keepClose"].measure == "distance" and by["keepClose"].reversed
    assert [b.kind for b in s.budget_units] == ["chars_from_tokens"]


# ---- found on the phase-2 held-out applications (fixed after their first pass) --------------------------------

ENV_HELPER = """
    import os


    class EnvHelper:
        def __init__(self):
            self.TOP_K = self.get_env_var_int("SEARCH_TOP_K", 5)
            self.FILTER = os.getenv("SEARCH_FILTER", "")

        def get_env_var_int(self, var_name: str, default: int):
            return int(os.getenv(var_name, default))
    """
HANDLERS = """
    from azure.search.documents import SearchClient
    from .env_helper import EnvHelper


    class Base:
        def __init__(self, env_helper: EnvHelper):
            self.env_helper = env_helper
            self.search_client = SearchClient("e", "i", None)


    class Filtered(Base):
        def query(self, q):
            return self.search_client.search(q, top=self.env_helper.TOP_K, filter=self.env_helper.FILTER)


    class Other(Base):
        def query(self, q):
            return self.search_client.search(q, top=self.env_helper.TOP_K{other})
    """


def test_a_settings_helpers_attributes_resolve_through_a_base_class(tmp_path):
    s = scan(tmp_path, {"pkg/__init__.py": "", "pkg/env_helper.py": ENV_HELPER,
                        "pkg/handlers.py": HANDLERS.format(other=", filter=self.env_helper.FILTER")})
    top = s.search_calls[0].param("top")
    assert (top.value, top.source, top.override) == (5, "env:SEARCH_TOP_K", "env:SEARCH_TOP_K")
    assert s.drift() == []


def test_a_configured_filter_passed_on_one_path_only_drifts(tmp_path):
    s = scan(tmp_path, {"pkg/__init__.py": "", "pkg/env_helper.py": ENV_HELPER,
                        "pkg/handlers.py": HANDLERS.format(other="")})
    d = only_one(s.drift())
    assert d.param == "filter: self.env_helper.FILTER" and d.kind == "filter_clause"
    assert d.values == {"present": ("pkg/handlers.py:14",), "absent": ("pkg/handlers.py:19",)}


def test_a_store_the_file_only_fills_is_not_delegated_retrieval(tmp_path):
    s = scan(tmp_path, {
        "log.py": """
            from langchain_community.vectorstores.azuresearch import AzureSearch

            def conversation_log(f):
                return AzureSearch(azure_search_endpoint="e", index_name="logs", embedding_function=f)
            """,
        "rag.py": """
            from langchain_community.vectorstores.azuresearch import AzureSearch

            store = AzureSearch(azure_search_endpoint="e", index_name="kb", embedding_function=f)

            def ask(q):
                return store.as_retriever().invoke(q)
            """})
    assert [d.file for d in s.delegated] == ["rag.py"]


def test_langchain_js_vector_stores_are_delegated_where_the_file_retrieves(tmp_path):
    s = scan(tmp_path, {
        "chat.ts": """
            import { FaissStore } from '@langchain/community/vectorstores/faiss';
            import { AzureCosmosDBNoSQLVectorStore } from '@langchain/azure-cosmosdb';

            export async function chat(q: string, embeddings: any, local: boolean) {
              const store = local ? await FaissStore.load('.faiss', embeddings)
                                  : new AzureCosmosDBNoSQLVectorStore(embeddings, {});
              return store.asRetriever(3).invoke(q);
            }
            """,
        "upload.ts": """
            import { FaissStore } from '@langchain/community/vectorstores/faiss';

            export async function upload(docs: any[], embeddings: any) {
              const store = await FaissStore.fromDocuments(docs, embeddings, {});
              await store.save('.faiss');
            }
            """})
    assert sorted((d.file, d.store, d.kind, d.defaults["k"]) for d in s.delegated) == [
        ("chat.ts", "AzureCosmosDBNoSQLVectorStore", "vector_store", 4), ("chat.ts", "FaissStore", "vector_store", 4)]
    assert only_one(s.search_calls).value("k") == 3
