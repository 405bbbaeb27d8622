"""Tests of ragdiag.codescan on small Python snippets: every call-site kind, resolution, LLM budgets,
citations, prompts, security filters and skipped files."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ragdiag.codescan import CodeScan, scan_path
from ragdiag.errors import InputDataError


def scan(tmp_path: Path, files: dict[str, str | bytes]) -> CodeScan:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
    return scan_path(tmp_path)


def only(items, **match):
    hits = [i for i in items if all(getattr(i, k) == v for k, v in match.items())]
    assert len(hits) == 1, (match, items)
    return hits[0]


# ---- call-site kinds ---------------------------------------------------------------------


def test_sdk_search_sync_with_vector_queries(tmp_path):
    s = scan(tmp_path, {"app.py": """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizedQuery, VectorizableTextQuery

        client = SearchClient("https://x.search.windows.net", "muster", cred)

        def find(question, vec):
            return client.search(
                search_text=question,
                vector_queries=[VectorizableTextQuery(text=question, k_nearest_neighbors=50, fields="content_vector"),
                                VectorizedQuery(vector=vec, k_nearest_neighbors=50, fields="title_vector",
                                                exhaustive=True)],
                query_type="semantic", semantic_configuration_name="default", scoring_profile="quality_boost",
                vector_filter_mode="preFilter", select=["id", "content"], top=7, filter="level eq 'evidence'")
        """})
    site = only(s.search_calls, kind="azure_search")
    assert site.location == "app.py:8"
    assert site.function == "find" and site.module == "app" and site.language == "python"
    assert site.value("top") == 7
    assert site.value("query_type") == "semantic"
    assert site.value("semantic_configuration") == "default"
    assert site.value("scoring_profile") == "quality_boost"
    assert site.value("vector_filter_mode") == "preFilter"
    assert site.value("select") == ["id", "content"]
    assert site.value("filter") == "level eq 'evidence'"
    assert site.value("k") == 50                       # same k on both vector queries
    assert site.param("exhaustive").value == [False, True]   # unset on the first = false
    assert site.value("vector_fields") == ["content_vector", "title_vector"]
    assert site.param("k").source.startswith("vector_query@app.py:10")
    assert site.channel_vars == {"search_text": "question", "vector_text": "question", "vector": "vec"}
    assert site.shared_text is True
    assert not site.is_async
    assert [v.location for v in s.vector_queries] == ["app.py:10", "app.py:11"]
    text_q, vec_q = s.vector_queries
    assert text_q.kind == "azure_vector_query" and text_q.channel_vars == {"vector_text": "question"}
    assert vec_q.value("exhaustive") is True and vec_q.value("vector_fields") == "title_vector"


def test_sdk_search_aio_is_async(tmp_path):
    s = scan(tmp_path, {"agent.py": """
        from azure.search.documents.aio import SearchClient

        class Agent:
            def __init__(self, cred):
                self.client = SearchClient("https://x", "muster", cred)

            async def tool(self, q):
                results = await self.client.search(q, top=10)
                return [r async for r in results]
        """})
    site = only(s.search_calls, kind="azure_search")
    assert site.is_async and site.function == "Agent.tool" and site.call == "self.client.search"
    assert site.channel_vars == {"search_text": "q"} and site.value("top") == 10


def test_search_client_recognised_by_type_without_sdk_kwargs(tmp_path):
    s = scan(tmp_path, {"a.py": """
        from azure.search.documents import SearchClient
        sc = SearchClient("e", "i", c)
        def f(q):
            return sc.search(q)
        def g(text):
            import re
            return re.search("x", text)
        """})
    assert [c.location for c in s.search_calls] == ["a.py:5"]


def test_rest_via_requests_and_httpx(tmp_path):
    s = scan(tmp_path, {"rest.py": """
        import httpx
        import requests

        ENDPOINT = "https://muster.search.windows.net"
        URL = f"{ENDPOINT}/indexes/muster/docs/search?api-version=2025-09-01"

        def with_requests(q):
            body = {"search": q, "top": 5, "filter": "doc_type eq 'contract'", "queryType": "semantic",
                    "semanticConfiguration": "default",
                    "vectorQueries": [{"kind": "text", "text": q, "k": 30, "fields": "content_vector"}]}
            return requests.post(URL, json=body, timeout=10).json()

        async def with_httpx(client: httpx.AsyncClient, q):
            resp = await client.post(f"{ENDPOINT}/indexes/muster/docs/search", json={"search": q, "top": 3})
            return resp.json()

        def not_search(q):
            return requests.post(f"{ENDPOINT}/indexes/muster/docs/index", json={"value": []})
        """})
    assert [c.location for c in s.search_calls] == ["rest.py:12", "rest.py:15"]
    a, b = s.search_calls
    assert a.kind == b.kind == "rest_search"
    assert a.value("top") == 5 and a.value("k") == 30 and a.value("vector_fields") == "content_vector"
    assert a.value("filter") == "doc_type eq 'contract'" and a.value("semantic_configuration") == "default"
    assert a.param("k").source == "rest_body"
    assert a.channel_vars == {"search_text": "q", "vector_text": "q"} and a.shared_text
    assert b.is_async and b.value("top") == 3 and b.call == "client.post"


def test_faiss_search(tmp_path):
    s = scan(tmp_path, {"f.py": """
        import faiss

        index = faiss.read_index("chunks.faiss")
        TOP = 12

        def nearest(query_vector):
            distances, ids = index.search(query_vector, TOP)
            return ids

        def other(vecs):
            flat_index = build()
            return flat_index.search(vecs, k=4)
        """})
    a, b = s.search_calls
    assert a.kind == b.kind == "faiss_search"
    assert a.value("k") == 12 and a.param("k").source == "constant:TOP"
    assert a.channel_vars == {"vector": "query_vector"}
    assert b.value("k") == 4


def test_langchain_sites(tmp_path):
    s = scan(tmp_path, {"lc.py": """
        from langchain_community.vectorstores.azuresearch import AzureSearch
        from langchain_community.retrievers import AzureAISearchRetriever

        store = AzureSearch(azure_search_endpoint="e", azure_search_key="k", index_name="muster",
                            embedding_function=emb)

        def a(question):
            return store.similarity_search(question, k=6, filters="level eq 'evidence'")

        def b(question):
            return store.hybrid_search(question, 8)

        def c():
            return store.as_retriever(search_type="similarity", search_kwargs={"k": 9})

        def d():
            return AzureAISearchRetriever(content_key="content", top_k=4, index_name="muster")
        """})
    kinds = [(c.location, c.kind) for c in s.search_calls]
    assert kinds == [("lc.py:9", "langchain"), ("lc.py:12", "langchain"), ("lc.py:15", "langchain"),
                     ("lc.py:18", "langchain")]
    a, b, c, d = s.search_calls
    assert a.value("k") == 6 and a.value("filter") == "level eq 'evidence'"
    assert a.channel_vars == {"search_text": "question"}
    assert b.value("k") == 8
    assert c.value("k") == 9 and c.value("query_type") == "similarity"
    assert d.value("top") == 4


def test_llamaindex_sites(tmp_path):
    s = scan(tmp_path, {"li.py": """
        from llama_index.core import VectorStoreIndex
        from llama_index.vector_stores.azureaisearch import AzureAISearchVectorStore

        store = AzureAISearchVectorStore(search_or_index_client=client, index_name="muster")
        index = VectorStoreIndex.from_vector_store(store)

        def retriever():
            return index.as_retriever(similarity_top_k=7)
        """})
    # the store is configuration (delegated retrieval with LlamaIndex defaults); the retriever is the site
    assert [(c.location, c.kind) for c in s.search_calls] == [("li.py:9", "llamaindex")]
    assert s.search_calls[0].value("k") == 7
    store = only(s.delegated, kind="vector_store")
    assert store.location == "li.py:5" and store.framework == "llamaindex" and store.value("similarity_top_k") == 2


def test_sql_similarity(tmp_path):
    s = scan(tmp_path, {"pg.py": """
        NEAREST = "SELECT id, content FROM chunks ORDER BY embedding <=> %s LIMIT 10"

        def nearest(cur, vec, k):
            cur.execute(NEAREST, (vec,))
            cur.execute(f"SELECT id FROM chunks ORDER BY embedding <-> %s LIMIT {k}", (vec,))
            return session.scalars(select(Item).order_by(Item.embedding.cosine_distance(vec)).limit(5))

        NOT_SQL = "a <-> b in a diagram"
        """})
    sites = [(c.location, c.kind) for c in s.search_calls]
    assert sites == [("pg.py:2", "sql_similarity"), ("pg.py:6", "sql_similarity"), ("pg.py:7", "sql_similarity")]
    assert s.search_calls[0].value("k") == 10
    assert not s.search_calls[1].param("k").resolved


# ---- parameter resolution ------------------------------------------------------------------


def test_resolution_literal_constant_import_local_fstring(tmp_path):
    s = scan(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/settings.py": """
            TOP_K = 8
            MIN_CONFIDENCE = 0.85
            SEMANTIC = "def" + "ault"
            """,
        "pkg/search.py": """
            from azure.search.documents import SearchClient
            from . import settings
            from .settings import TOP_K, MIN_CONFIDENCE as MIN_CONF

            PROFILE = "quality_boost"

            def run(client: SearchClient, q, request):
                top = 3
                level = "evidence"
                flt = f"level eq '{level}' and confidence_score ge {MIN_CONF}"
                client.search(q, top=TOP_K, filter=flt, scoring_profile=PROFILE,
                              semantic_configuration_name=settings.SEMANTIC)
                client.search(q, top=top, filter=f"group_ids/any(g: g eq '{request.group}')")
                client.search(q, top=top * 2 + 1, filter="a eq 1 " + "and b eq 2")
            """})
    a, b, c = s.search_calls
    assert a.param("top").value == 8 and a.param("top").resolved
    assert a.param("top").source == "import:pkg.settings.TOP_K"
    assert a.param("top").expression == "TOP_K"
    f = a.param("filter")
    assert f.resolved and f.value == "level eq 'evidence' and confidence_score ge 0.85"
    assert f.from_fstring and f.fstring_vars == ("level", "MIN_CONF")
    assert a.param("scoring_profile").source == "constant:PROFILE" and a.value("scoring_profile") == "quality_boost"
    assert a.value("semantic_configuration") == "default"
    assert b.param("top").source == "local:top" and b.value("top") == 3
    g = b.param("filter")
    assert not g.resolved and g.from_fstring and g.fstring_vars == ("request.group",)
    assert g.value == "group_ids/any(g: g eq '{request.group}')"
    assert c.value("top") == 7
    assert c.value("filter") == "a eq 1 and b eq 2" and not c.param("filter").from_fstring


def test_unresolvable_values_stay_unresolved(tmp_path):
    s = scan(tmp_path, {"u.py": """
        from azure.search.documents import SearchClient

        def run(client: SearchClient, q, top, cfg):
            flt = "a eq 1"
            if q:
                flt = "b eq 2"
            client.search(q, top=top, filter=flt, select=cfg.fields)
        """})
    site = s.search_calls[0]
    assert site.param("top").source == "parameter:top" and not site.param("top").resolved
    assert not site.param("filter").resolved and site.param("filter").source == "local:flt (conditional)"
    assert not site.param("select").resolved and site.param("select").expression == "cfg.fields"


def test_kwargs_dict_and_builder_helper(tmp_path):
    s = scan(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/builder.py": """
            from azure.search.documents.models import VectorizableTextQuery

            def request_for(question, keywords, top=5):
                return {"search_text": keywords, "semantic_query": question, "top": top,
                        "vector_queries": [VectorizableTextQuery(text=question, k_nearest_neighbors=50,
                                                                 fields="content_vector")]}
            """,
        "pkg/use.py": """
            from azure.search.documents import SearchClient
            from .builder import request_for

            def via_helper(client: SearchClient, question, keywords):
                req = request_for(question, keywords, top=9)
                return client.search(**req)

            def via_dict(client: SearchClient, q):
                params = {"search_text": q, "top": 4}
                params["filter"] = "level eq 'section'"
                return client.search(**params)
            """})
    helper, local = [c for c in s.search_calls]
    assert helper.builder == "pkg.builder:request_for"
    assert helper.value("top") == 9
    assert helper.value("k") == 50
    assert helper.channel_vars == {"search_text": "keywords", "semantic_query": "question",
                                   "vector_text": "question"}
    assert helper.shared_text is False
    assert local.builder is None and local.value("top") == 4 and local.value("filter") == "level eq 'section'"
    assert {b.module for b in s.builders()} == {"pkg.builder", "pkg.use"}
    b = {b.module: b for b in s.builders()}["pkg.builder"]
    assert b.functions == ("request_for",) and b.sites == ("pkg/builder.py:6", "pkg/use.py:7")


def test_shared_text_variable(tmp_path):
    s = scan(tmp_path, {"s.py": """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizedQuery

        def one(client: SearchClient, query):
            vq = VectorizedQuery(vector=embed(query), k_nearest_neighbors=50, fields="content_vector")
            return client.search(search_text=query, vector_queries=[vq])

        def keyword_and_semantic(client: SearchClient, query):
            return client.search(search_text=query, semantic_query=query, query_type="semantic")

        def split(client: SearchClient, keywords, question):
            return client.search(search_text=keywords, semantic_query=question, query_type="semantic")
        """})
    a, b, c = s.search_calls
    assert a.channel_vars == {"search_text": "query", "vector": "query"} and a.shared_text
    assert b.shared_text
    assert not c.shared_text
    assert [x.location for x in s.shared_text_sites()] == [a.location, b.location]


# ---- LLM calls and budgets -----------------------------------------------------------------------


LLM_APP = """
    from openai import AzureOpenAI, OpenAI
    from langchain_openai import AzureChatOpenAI

    MAX_CONTEXT_TOKENS = 4000
    MAX_SOURCES = 5
    CONTEXT_BUDGET_CHARS = 12000
    RETRIES = 3
    client = AzureOpenAI(azure_endpoint="e", api_version="2024-10-21")
    oai = OpenAI()
    chat_model = AzureChatOpenAI(azure_deployment="gpt-4o")

    def unbounded(question, hits):
        context = "\\n".join(h["content"] for h in hits)
        return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
                                              "content": f"{context}\\n{question}"}], max_tokens=500)

    def sliced(question, hits):
        context = "\\n".join(h["content"] for h in hits[:MAX_SOURCES])
        return oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": context}])

    def compared(question, chunks):
        parts, used = [], 0
        for c in chunks:
            if used + len(c) > CONTEXT_BUDGET_CHARS:
                break
            parts.append(c)
            used += len(c)
        return oai.responses.create(model="gpt-4o", input="\\n".join(parts) + question)

    def helper_truncates(question, docs):
        return chat_model.invoke(build_prompt(question, docs))

    def build_prompt(question, docs):
        return question + "".join(d[:2000] for d in docs)

    def no_context(question):
        return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    """


def test_llm_calls_bounded_and_unbounded(tmp_path):
    s = scan(tmp_path, {"llm.py": LLM_APP})
    calls = {c.function: c for c in s.llm_calls}
    assert set(calls) == {"unbounded", "sliced", "compared", "helper_truncates", "no_context"}
    u = calls["unbounded"]
    assert u.kind == "azure_openai_chat" and not u.context_bounded and u.retrieved_context
    assert u.context_vars == ("context", "question", "hits")
    assert "hits[:MAX_SOURCES]" in calls["sliced"].bound_evidence
    assert calls["sliced"].kind == "openai_chat" and calls["sliced"].context_bounded
    assert "CONTEXT_BUDGET_CHARS" in calls["compared"].bound_evidence and calls["compared"].retrieved_context
    h = calls["helper_truncates"]
    assert h.kind == "langchain_chat" and h.context_bounded and "in build_prompt(): d[:2000]" in h.bound_evidence
    n = calls["no_context"]
    assert not n.retrieved_context
    assert [c.location for c in s.unbounded_llm_calls()] == [u.location]


def test_budget_constants(tmp_path):
    s = scan(tmp_path, {"llm.py": LLM_APP})
    assert [(b.name, b.value, b.line) for b in s.budget_constants] == [
        ("MAX_CONTEXT_TOKENS", 4000, 5), ("MAX_SOURCES", 5, 6), ("CONTEXT_BUDGET_CHARS", 12000, 7)]


# ---- citations -------------------------------------------------------------------------------------


def test_citation_validation(tmp_path):
    s = scan(tmp_path, {"cite.py": """
        import re

        def extract_citations(answer):
            return re.findall(r"\\[(\\w+)\\]", answer)

        def checked_citations(answer, retrieved_ids):
            cited = extract_citations(answer)
            return [c for c in cited if c in set(retrieved_ids)]

        def sources_subset(answer, hits):
            return set(extract_citations(answer)).issubset({h["id"] for h in hits})

        def format_sources(cited, titles):
            return [titles.get(c, c) for c in cited]

        def unrelated(x):
            return x
        """})
    checks = {c.function: c for c in s.citation_checks}
    assert set(checks) == {"extract_citations", "checked_citations", "sources_subset", "format_sources"}
    assert checks["checked_citations"].validated and "in set(retrieved_ids)" in checks["checked_citations"].evidence
    assert checks["sources_subset"].validated and "issubset" in checks["sources_subset"].evidence
    assert not checks["extract_citations"].validated and not checks["format_sources"].validated
    assert s.citations_validated() is True


# ---- prompts -------------------------------------------------------------------------------------------


def test_prompt_rules_and_contradictions(tmp_path):
    s = scan(tmp_path, {
        "prompts/writer.txt": "Write a query.\nThe query text you write is the SOLE input to ALL THREE stages.\n"
                              "Write 5 to 12 words.\n",
        "prompts/chat.md": "Use between 2 and 7 words when you search again.\n",
        "prompts/x.jinja": "Keep it to 5-12 words.\n",
        "README.md": "The writer says 3 to 4 words; this is documentation, not a prompt.\n",
        "app.py": '''
            SYSTEM_PROMPT = """You answer questions.
            Use the same query for every stage: keyword, vector and semantic.
            At most eight words."""
            OTHER = "2 to 7 words"
            ''',
    })
    rules = [(r.location, r.kind, r.min_words, r.max_words) for r in s.prompt_rules]
    assert rules == [
        ("app.py:3", "sole_input", None, None),
        ("app.py:4", "length", None, 8),
        ("prompts/chat.md:1", "length", 2, 7),
        ("prompts/writer.txt:2", "sole_input", None, None),
        ("prompts/writer.txt:3", "length", 5, 12),
        ("prompts/x.jinja:1", "length", 5, 12),
    ]
    pairs = {(a.location, b.location) for a, b in s.contradictions()}
    assert ("prompts/chat.md:1", "prompts/writer.txt:3") in pairs
    assert ("prompts/writer.txt:3", "prompts/x.jinja:1") not in pairs    # same range: no contradiction
    assert len(pairs) == 5
    assert [r.location for r in s.sole_input_rules()] == ["app.py:3", "prompts/writer.txt:2"]


# ---- security filters --------------------------------------------------------------------------------------


def test_security_filters(tmp_path):
    s = scan(tmp_path, {"sec.py": """
        def from_request(request):
            return f"group_ids/any(g: g eq '{request.user_group}')"

        def concatenated(req):
            return "acl/any(a: a eq '" + req.body["group"] + "')"

        def escaped(identity):
            groups = ",".join(escape_odata(g) for g in identity.group_ids)
            return f"group_ids/any(g: search.in(g, '{groups}', ','))"

        def replaced(identity):
            oid = identity.oid.replace("'", "''")
            return f"allowed_users/any(u: u eq '{oid}')"

        def helper(identity):
            return search_in_any("group_ids", identity.groups)

        STATIC = "group_ids/any(g: g eq 'public')"

        def composed(acl):
            return f"{acl} and level eq 'evidence'"
        """})
    sites = {x.function: x for x in s.security_filters}
    assert set(sites) == {"from_request", "concatenated", "escaped", "replaced", "helper", "<module>"}
    r = sites["from_request"]
    assert r.fstring and not r.escaped and r.from_request and r.from_identity is False and not r.uses_search_in
    assert r.fields == ("group_ids",) and r.injection_risk
    c = sites["concatenated"]
    assert c.fstring and not c.escaped and c.from_request and c.fields == ("acl",)
    e = sites["escaped"]
    assert e.uses_search_in and e.escaped and e.from_identity and e.from_request is False and not e.injection_risk
    assert sites["replaced"].escaped and sites["replaced"].from_identity
    h = sites["helper"]
    assert h.uses_search_in and h.escaped and h.from_identity and not h.fstring
    static = sites["<module>"]
    assert not static.fstring and static.escaped and static.from_request is None
    assert {x.function for x in s.injection_risks()} == {"from_request", "concatenated"}


# ---- drift -------------------------------------------------------------------------------------------------------


def test_drift_on_filter_clause_security_and_params(tmp_path):
    s = scan(tmp_path, {"d.py": """
        from azure.search.documents import SearchClient
        from azure.search.documents.models import VectorizableTextQuery

        def a(client: SearchClient, q, acl_filter):
            return client.search(q, filter=f"{acl_filter} and confidence_score ge 0.85", top=5,
                                 vector_queries=[VectorizableTextQuery(text=q, k_nearest_neighbors=50,
                                                                       fields="v", exhaustive=True)])

        def b(client: SearchClient, q, acl_filter):
            return client.search(q, filter=acl_filter, top=5,
                                 vector_queries=[VectorizableTextQuery(text=q, k_nearest_neighbors=50, fields="v")])

        def c(client: SearchClient, q):
            return client.search(q, filter="level eq 'evidence'", top=10)
        """})
    drift = {d.param: d for d in s.drift()}
    conf = drift["filter: confidence_score ge 0.85"]
    assert conf.kind == "filter_clause" and conf.role == "quality"
    assert conf.values == {"present": ("d.py:6",), "absent": ("d.py:15",)}   # d.py:11 is unknown
    sec = drift["security filter"]
    assert sec.values == {"present": ("d.py:6", "d.py:11"), "absent": ("d.py:15",)}
    assert drift["top"].values == {"10": ("d.py:15",), "5": ("d.py:6", "d.py:11")}
    assert drift["exhaustive"].values == {"false": ("d.py:12",), "true": ("d.py:7",)}
    assert "k" not in drift
    assert json.loads(json.dumps([d.to_dict() for d in s.drift()]))


# ---- skipped files --------------------------------------------------------------------------------------------------


def test_skipped_files(tmp_path):
    s = scan(tmp_path, {
        "bad.py": "def broken(:\n    return client.search('x')\n",
        "irrelevant.py": "def broken(:\n    pass\n",
        "latin1.py": "x = 'caf\xe9'\n".encode("latin-1"),
        "blob.py": b"\x00\x01\x02binary",
        "prompt.txt": b"\xff\xfe\x00w\x00o",
        "big.py": "x = 1\n" * 200_000,
        "Main.java": "class Main {}",
        "node_modules/lib/index.py": "def broken(:",
        "ok.py": "from azure.search.documents import SearchClient\nc = SearchClient('e', 'i', k)\nc.search('x')\n",
    })
    reasons = {x.file: x.reason for x in s.skipped}
    assert set(reasons) == {"bad.py", "latin1.py", "blob.py", "prompt.txt", "big.py", "Main.java"}
    assert reasons["bad.py"].startswith("syntax error at line 1")
    assert reasons["latin1.py"].startswith("not UTF-8")
    assert reasons["blob.py"] == reasons["prompt.txt"] == "binary file"
    assert reasons["big.py"].startswith("larger than 1,000,000 bytes")
    assert reasons["Main.java"].startswith("unsupported language")
    assert s.files_scanned == 2 and len(s.search_calls) == 1
    # a file with nothing the scanner looks for is not parsed unless asked
    strict = scan_path(tmp_path, check_syntax=True)
    assert {x.file for x in strict.skipped} == set(reasons) | {"irrelevant.py"}


def test_max_file_bytes_and_single_file_and_missing_root(tmp_path):
    path = tmp_path / "one.py"
    path.write_text("from azure.search.documents import SearchClient\nc = SearchClient('e', 'i', k)\n"
                    "c.search('x', top=3)\n")
    assert scan_path(path).search_calls[0].value("top") == 3
    assert scan_path(tmp_path, max_file_bytes=10).skipped[0].reason.startswith("larger than 10 bytes")
    with pytest.raises(InputDataError):
        scan_path(tmp_path / "nope")


def test_workers_give_the_same_result(tmp_path):
    files = {f"m{i}.py": f"from azure.search.documents import SearchClient\n"
                         f"c = SearchClient('e', 'i', k)\nc.search('q{i}', top={i})\n" for i in range(12)}
    files["bad.py"] = "def (:\n    client.search('x')\n"
    single = scan(tmp_path, files)
    multi = scan_path(tmp_path, workers=2)
    assert single.to_dict() == multi.to_dict()
    assert len(multi.search_calls) == 12 and len(multi.skipped) == 1


def test_to_dict_is_json_safe_and_deterministic(tmp_path):
    s = scan(tmp_path, {"llm.py": LLM_APP, "prompts/a.txt": "Write 2 to 7 words."})
    d = s.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert scan_path(tmp_path).to_dict() == d
    summary = s.summary()
    assert json.loads(json.dumps(summary)) == summary and summary["llm_calls"] == 5
    assert "CodeScan(" in repr(s) and "<table>" in s._repr_html_()


def test_trigger_prefilter_keeps_budget_only_and_imported_url_files(tmp_path):
    s = scan(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/limits.py": "MAX_CONTEXT_TOKENS = 4000\nPAGE = 3\n",
        "pkg/urls.py": "SEARCH_URL = 'https://x.search.windows.net/indexes/muster/docs/search'\n",
        "pkg/client.py": """
            import requests
            from .urls import SEARCH_URL

            def go(q):
                return requests.post(SEARCH_URL, json={"search": q, "top": 4}).json()
            """,
    })
    assert [(b.name, b.value) for b in s.budget_constants] == [("MAX_CONTEXT_TOKENS", 4000)]
    (site,) = s.search_calls
    assert (site.location, site.kind, site.value("top")) == ("pkg/client.py:6", "rest_search", 4)


def test_filter_clause_splitting_never_raises():
    import random

    from ragdiag.codescan._common import filter_clauses

    rng = random.Random(3)
    alphabet = ["a", "b", " and ", " or ", "(", ")", "'", "{x}", "${y}", "eq", " ", "1", "/any(g: ", "search.in("]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        clauses, complete = filter_clauses(text)
        assert isinstance(complete, bool) and all(c.text for c in clauses)


def test_an_sdk_search_without_top_gets_the_services_default_50_and_only_when_every_argument_is_listed(tmp_path):
    src = (
        "from azure.search.documents import SearchClient\n\nclient = SearchClient('e', 'i', None)\n\n\n"
        "def a(q):\n    return client.search(search_text=q, filter=\"kind eq 'x'\", query_type='semantic')\n\n\n"
        "def b(q):\n    return client.search(search_text=q, top=5)\n\n\n"
        "def c(q, opts):\n    return client.search(search_text=q, **opts)\n"
    )
    got = {s.function: s.params.get("top") for s in scan(tmp_path, {"app.py": src}).search_calls}
    assert (got["a"].value, got["a"].outcome, got["a"].override) == (50, "library_default", "parameter")
    assert (got["b"].value, got["b"].outcome) == (5, "resolved")
    assert got["c"] is None or got["c"].outcome == "unresolved"  # `**opts` may hold a top: no default claimed


def test_native_vector_database_clients_are_search_sites(tmp_path):
    s = scan(tmp_path, {"app.py": """
        from qdrant_client import QdrantClient

        client = QdrantClient(url="http://q")


        def qdrant_hits(vector):
            return client.query_points(collection_name="docs", query=vector, limit=7)


        def qdrant_default(vector):
            return client.query_points(collection_name="docs", query=vector)


        def chroma_hits(collection, question):
            return collection.query(query_texts=[question], n_results=3, where={"tenant_id": "t1"})


        def weaviate_hits(collection, question):
            return collection.query.near_text(question, limit=4)


        def not_a_search(session, Model):
            return session.query(Model).filter(Model.id == 1).all()
        """})
    got = {x.function: (x.kind, x.params["k"].value, x.params["k"].source) for x in s.search_calls}
    assert got == {"qdrant_hits": ("vector_db", 7, "literal"),
                   "qdrant_default": ("vector_db", 10, "library_default:qdrant"),
                   "chroma_hits": ("vector_db", 3, "literal"),
                   "weaviate_hits": ("vector_db", 4, "literal")}
    chroma = next(x for x in s.search_calls if x.function == "chroma_hits")
    assert chroma.params["filter"].value == {"tenant_id": "t1"}
def test_trigger_lines_skip_only_keywords_known_absent():
    from ragdiag.codescan.python_scan import _first_keyword, _interesting_lines, _triggered

    src = "import os\nr = requests.post(url)\nx = 1\n\nprompt = 'Answer'\nclient.get(q)\n"
    low = src.lower()
    first = _first_keyword(low)
    assert _triggered(src) and first > 0  # `requests` is the first keyword found: those before it are absent
    assert _interesting_lines(src) == [2, 5, 6]
    assert _interesting_lines(src, low, None, first) == [2, 5, 6]
    # a character lower-cased to two ("İ" -> "i̇") shifts offsets: every word is then searched as before
    odd = "İ\nİİ\nresult = requests.get(u)\n"
    assert _interesting_lines(odd, odd.lower(), None, _first_keyword(odd.lower())) == _interesting_lines(odd)
    assert not _triggered("x = 1\n") and _interesting_lines("x = 1\n") == []
