"""Python search call sites: Azure SDK (`client.search`, vector queries), REST `/docs/search`, LangChain,
LlamaIndex, FAISS and SQL similarity methods. A mixin of the Python file scanner."""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx
from ragdiag.codescan.model import Gap
from ragdiag.codescan.python_index import callee_name, dotted, unparse
from ragdiag.codescan.python_resolve import VECTOR_CTORS
from ragdiag.codescan.python_retrieval import LIBRARY_DEFAULTS, STORE_CTORS
from ragdiag.codescan.request_shape import header
from ragdiag.codescan.values import Val, lit, unknown
from ragdiag.codescan.vector_db import (
    COUNT_KEYS,
    DEFAULTS,
    FILTER_KEYS,
    TEXT_KEYS,
    VECTOR_KEYS,
    query_api,
)

SDK_SEARCH_KW = frozenset({"search_text", "vector_queries", "query_type", "semantic_configuration_name",
                           "filter", "top", "select", "include_total_count", "scoring_profile",
                           "semantic_query", "search_fields", "vector_filter_mode", "query_caption",
                           "query_answer", "skip", "order_by", "facets", "search_mode",
                           "scoring_parameters"})
#: Every keyword the SDK's `search` takes (old betas included): other keywords mean another `search`.
SDK_ALL_KW = SDK_SEARCH_KW | frozenset({
    "vector", "vectors", "vector_fields", "top_k", "query_language", "highlight_pre_tag", "highlight_post_tag",
    "highlight_fields", "headers", "x_ms_query_source_authorization", "query_rewrites", "debug",
    "semantic_error_mode", "semantic_max_wait_in_milliseconds", "query_speller", "minimum_coverage", "session_id",
    "timeout", "semantic_fields", "query_caption_highlight_enabled", "query_answer_count",
    "query_answer_threshold", "query_rewrites_count", "hybrid_search", "scoring_statistics"})
LC_SEARCH_METHODS = frozenset({"similarity_search", "similarity_search_with_score",
                               "similarity_search_with_relevance_scores", "similarity_search_by_vector",
                               "asimilarity_search", "asimilarity_search_with_score",
                               "max_marginal_relevance_search", "amax_marginal_relevance_search",
                               "hybrid_search", "hybrid_search_with_score", "semantic_hybrid_search",
                               "semantic_hybrid_search_with_score",
                               "semantic_hybrid_search_with_score_and_rerank"})
SQL_METHODS = frozenset({"cosine_distance", "l2_distance", "max_inner_product", "l1_distance"})
HTTP_METHODS = frozenset({"post", "get", "put", "request", "urlopen", "Request"})
#: Store classes whose instances (or factories' results) are the library's.
STORE_CLASSES = frozenset(STORE_CTORS) | {"VectorStoreIndex", "PGVectorStore", "PineconeVectorStore", "ElasticsearchStore",
                                          "MongoDBAtlasVectorSearch", "Qdrant", "QdrantVectorStore", "Weaviate",
                                          "WeaviateVectorStore", "Milvus", "LanceDB", "Redis", "OpenSearchVectorSearch",
                                          "SupabaseVectorStore", "DocArrayInMemorySearch", "InMemoryVectorStore",
                                          "AzureSearch", "AzureCosmosDBVectorSearch", "Pinecone", "PineconeStore"}
_LIBRARY_TYPES = re.compile(r"\b(VectorStore|VectorStoreIndex|BaseRetriever|VectorStoreRetriever|BaseIndex|"
                            r"langchain\w*\.|llama_index\.)")
_LIBRARY_IMPORT = re.compile(r"^\s*from\s+(langchain\w*|llama_index)[\w.]*\s+import\s+[^\n]*"
                             r"(VectorStore|FAISS|Chroma|AzureSearch|PGVector|Pinecone|Qdrant|Elasticsearch|Weaviate|"
                             r"Milvus|Redis|VectorStoreIndex|load_index_from_storage)", re.M)


class SearchSites:
    """Finds and records search call sites (mixed into `PyFileScan`)."""

    def _call(self, call: ast.Call, qual: str, func: Any, cls: str | None, want_llm: bool) -> None:
        f = call.func
        last = callee_name(call)
        if last is None:
            return
        name = dotted(f) or last
        receiver = dotted(f.value) if isinstance(f, ast.Attribute) else None
        ctx = self.ctx(func, cls)
        is_async = id(call) in self.awaited
        self._cur = (func, cls, call)
        if last == "rpc" and receiver is not None and call.args:
            self._rpc(call, qual, ctx, name)
            return
        if self._delegated_call(call, qual, ctx, name, receiver, last, is_async):
            return
        api = query_api(last, receiver, {k.arg for k in call.keywords if k.arg}, self.type_of(receiver)) \
            if receiver is not None else None
        if api is not None:
            self._vector_db(call, qual, ctx, name, api, is_async)
        elif last in VECTOR_CTORS:
            self._vector_query(call, qual, ctx, name)
        elif last == "search" and receiver is not None:
            self._search_method(call, qual, ctx, name, receiver, is_async)
        elif last in LC_SEARCH_METHODS and receiver is not None:
            self._langchain_search(call, qual, ctx, name, is_async)
        elif last in ("as_retriever", "as_query_engine", "as_chat_engine"):
            self._as_retriever(call, qual, ctx, name, receiver, last)
        elif last in ("AzureAISearchRetriever", "AzureCognitiveSearchRetriever"):
            params = self._kw_params(call, ctx, {"top_k": "top", "filter": "filter", "index_name": "index_name"})
            self.out.search_calls.append(self.site("langchain", call, qual, params, {}, None, name))
        elif last in ("AzureAISearchVectorStore", "VectorIndexRetriever"):
            params = self._kw_params(call, ctx, {"similarity_top_k": "k", "index_name": "index_name",
                                                 "filters": "filter"})
            self.out.search_calls.append(self.site("llamaindex", call, qual, params, {}, None, name))
        elif last in SQL_METHODS and receiver is not None:
            self.out.search_calls.append(self.site("sql_similarity", call, qual, {}, {}, None, name))
        elif want_llm and self._llm_kind(call, name, receiver, last):
            self._llm(call, qual, func, cls, self._llm_kind(call, name, receiver, last) or "other", name)
        elif _APP_LLM.match(last) or _APP_LLM_VERB.match(last) or (receiver is not None and not last[:1].isupper()
                                      and _APP_LLM_RECEIVER.search(receiver.rsplit(".", 1)[-1])):
            # possibly a call of the app's own model client: kept once the tree shows a wrapper of that name
            self._llm(call, qual, func, cls, "app_client", name, via=last)
        elif last in HTTP_METHODS and self.has_http and (
                last != "get" or re.search(r"requests|httpx|session|client|http|aiohttp|api", receiver or "", re.I)):
            self._rest(call, qual, ctx, name, last, is_async)
        if "search_in" in last.lower() and call.args and isinstance(call.args[0], ast.Constant) \
                and isinstance(call.args[0].value, str) and C.SECURITY_FIELD_RE.match(call.args[0].value):
            self._search_in_helper(call, qual, func, cls)

    def _rpc(self, call: ast.Call, qual: str, ctx: Ctx, name: str) -> None:
        """`supabase.rpc("match_documents", {...}).execute()`: a search the database runs (see `db_rpc`)."""
        from ragdiag.codescan.db_rpc import RpcCall, looks_like_search_rpc, record_rpc

        fname = self.r.resolve(call.args[0], ctx)
        if not (fname.is_str and fname.resolved):
            return
        args = self.r.resolve(call.args[1], ctx) if len(call.args) > 1 else None
        if not looks_like_search_rpc(self.project, fname.value, args):
            return
        client = self.r.resolve(call.func.value, ctx) if isinstance(call.func, ast.Attribute) else None
        client_text = unparse(client.node, 200) if client is not None and client.kind == "call" and \
            client.node is not None else (client.expr if client is not None else "")
        if client is not None and client.kind != "call" and isinstance(call.func, ast.Attribute) \
                and isinstance(call.func.value, ast.Name) and ctx.func is not None:
            assigns, _ = self.mod.locals_of(ctx.func)
            last = next((e.value for e in reversed(assigns.get(call.func.value.id, ())) if e.value is not None), None)
            client_text = unparse(last, 200) if last is not None else client_text
        user = bool(re.search(r"postgrest\.auth\(|set_session\(|access_token|jwt", self.fn_low(ctx.func)
                              if ctx.func is not None else "", re.I))
        record_rpc(self.project, RpcCall(self.rel, call.lineno, qual or "<module>", self.mod.dotted, "python",
                                         fname.value, args, None, client_text or "", user, name), self.out)

    def _kw_params(self, call: ast.Call, ctx: Ctx, mapping: dict[str, str]) -> dict[str, Val]:
        out: dict[str, Val] = {}
        for kw in call.keywords:
            if kw.arg in mapping:
                out[mapping[kw.arg]] = self.r.resolve(kw.value, ctx)
        return out

    def _vector_query(self, call: ast.Call, qual: str, ctx: Ctx, name: str) -> None:
        kw = {k.arg: self.r.resolve(k.value, ctx) for k in call.keywords if k.arg}
        params: dict[str, Val] = {}
        for key, pname in (("k_nearest_neighbors", "k"), ("k", "k"), ("exhaustive", "exhaustive"),
                           ("fields", "vector_fields"), ("weight", "weight"),
                           ("filter_override", "filter"), ("oversampling", "oversampling")):
            if key in kw:
                params[pname] = kw[key]
        channels: dict[str, str | None] = {}
        if "text" in kw:
            channels["vector_text"] = self.ref(kw["text"])
        if "vector" in kw:
            channels["vector"] = self.ref(kw["vector"], vector=True)
        self.out.vector_queries.append(self.site("azure_vector_query", call, qual, params, channels, None, name))

    def _vector_db(self, call: ast.Call, qual: str, ctx: Ctx, name: str, api: str, is_async: bool) -> None:
        """A native vector-database client's query (`vector_db`): its result count, filter and query channels."""
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        params: dict[str, Val] = {}
        count = next((kw[k] for k in COUNT_KEYS if k in kw), None)
        if count is not None:
            params["k"] = self.r.resolve(count, ctx)
        elif None in {k.arg for k in call.keywords}:
            params["k"] = unknown("unresolved:spread keywords not resolved", unparse(call, 120))
        elif DEFAULTS.get(api) is not None:
            params["k"] = lit(DEFAULTS[api], f"library_default:{api}").copy(override="parameter",
                                                                             prov=f"{api} default")
        else:
            params["k"] = unknown(f"unresolved:{api}'s server-side default applies", unparse(call, 120))
        flt = next((kw[k] for k in FILTER_KEYS if k in kw), None)
        if flt is not None:
            params["filter"] = self.r.resolve(flt, ctx)
        channels: dict[str, str | None] = {}
        text = next((kw[k] for k in TEXT_KEYS if k in kw), None)
        if api == "weaviate" and call.args and name.rsplit(".", 1)[-1] in ("near_text", "hybrid", "bm25"):
            text = call.args[0]
        if text is not None and api != "qdrant":
            channels["search_text"] = self.ref(self.r.resolve(text, ctx))
        vec = next((kw[k] for k in VECTOR_KEYS if k in kw), None) or (kw.get("query") if api == "qdrant" else None)
        if vec is not None:
            channels["vector"] = self.ref(self.r.resolve(vec, ctx), vector=True)
        self.out.search_calls.append(self.site("vector_db", call, qual, params, channels, None, name, is_async))

    def _search_method(self, call: ast.Call, qual: str, ctx: Ctx, name: str, receiver: str,
                       is_async: bool) -> None:
        low = receiver.lower()
        if low in ("re", "regex") or low.endswith(("pattern", "_re", "regex", "rx")):
            return
        tag = self.type_of(receiver)
        kwnames = {k.arg for k in call.keywords}
        sdk = (bool(kwnames & SDK_SEARCH_KW) and not (kwnames - SDK_ALL_KW - {None})) or None in kwnames
        tail = low.rsplit(".", 1)[-1]
        if tag == "faiss" or (tag is None and "index" in tail and not sdk
                              and (len(call.args) >= 2 or "k" in kwnames)):
            params: dict[str, Val] = {}
            if len(call.args) >= 2:
                params["k"] = self.r.resolve(call.args[1], ctx)
            for kw in call.keywords:
                if kw.arg == "k":
                    params["k"] = self.r.resolve(kw.value, ctx)
            channels = {"vector": self.ref(self.r.resolve(call.args[0], ctx), vector=True)} if call.args else {}
            self.out.search_calls.append(self.site("faiss_search", call, qual, params, channels, None, name,
                                                   is_async))
            return
        local_method = tag is None and self._calls_own_search(
            call.func.value if isinstance(call.func, ast.Attribute) else None, ctx)
        if tag == "SearchClient" or sdk or (re.search(r"search_?client", tail) and not local_method) \
                or (re.search(r"searcher", tail) and self.imports_azure_search and not local_method) \
                or (self.imports_azure_search and "client" in tail and not local_method):
            self._azure_search(call, qual, ctx, name, is_async)

    def _azure_search(self, call: ast.Call, qual: str, ctx: Ctx, name: str, is_async: bool) -> None:
        kw: dict[str, Val] = {}
        builder: str | None = None
        opaque = any(isinstance(a, ast.Starred) for a in call.args)  # arguments the scan cannot list
        if call.args and not isinstance(call.args[0], ast.Starred):
            kw["search_text"] = self.r.resolve(call.args[0], ctx)
        for k in call.keywords:
            if k.arg is None:
                d = self.r.resolve(k.value, ctx)
                if d.kind == "dict":
                    kw.update(d.items or {})
                opaque = opaque or d.kind != "dict" or d.items is None or bool(getattr(d, "open", False))
                builder = builder or d.builder
            else:
                kw[k.arg] = self.r.resolve(k.value, ctx)
        params = {C.SDK_PARAMS[k]: v for k, v in kw.items() if k in C.SDK_PARAMS}
        if "top" not in kw and not opaque and set(kw) - {"search_text"} and set(kw) <= SDK_ALL_KW:
            # the SDK's search with every argument listed and no `top`: the service returns its default 50
            params["top"] = lit(50, "library_default:azure_search").copy(override="parameter",
                                                                         prov="Azure AI Search default")
        if "top_k" in kw and ("vector" in kw or "vectors" in kw):  # 11.4 betas: vector=..., top_k=...
            params["k"] = kw["top_k"]
            if "vector_fields" in kw:
                params["vector_fields"] = kw["vector_fields"]
        if "search_text" in kw:
            params["search_text"] = kw["search_text"]
        qsa = kw.get("x_ms_query_source_authorization")
        if qsa is None and kw.get("headers") is not None:
            qsa = header(kw["headers"], "x-ms-query-source-authorization")
        if qsa is not None:
            params["query_source_authorization"] = qsa
        channels: dict[str, str | None] = {}
        if "search_text" in kw:
            channels["search_text"] = self.ref(kw["search_text"])
        if "semantic_query" in kw:
            channels["semantic_query"] = self.ref(kw["semantic_query"])
        vqs = kw.get("vector_queries")
        if vqs is not None:
            self._fold_vector_queries(vqs, params, channels)
        self.out.search_calls.append(self.site("azure_search", call, qual, params, channels, builder, name,
                                               is_async))

    def _fold_vector_queries(self, vqs: Val, params: dict[str, Val], channels: dict[str, str | None]) -> None:
        elems = vqs.elems if vqs.kind == "list" and vqs.elems is not None else [vqs]
        calls = [e for e in elems if e.kind == "call" and e.call in VECTOR_CTORS and e.kwargs is not None]
        if not calls:
            return
        first = calls[0]
        where = f"{first.ctx.mod.rel}:{first.node.lineno}" if isinstance(first.ctx, Ctx) and first.node is not None \
            else self.rel
        for pname, keys in (("k", ("k_nearest_neighbors", "k")), ("exhaustive", ("exhaustive",)),
                            ("vector_fields", ("fields",)), ("weight", ("weight",))):
            found = [next((c.kwargs[k] for k in keys if k in c.kwargs), None) for c in calls]  # type: ignore[index]
            if pname == "exhaustive" and any(v is not None for v in found):
                found = [v if v is not None else lit(False, "default") for v in found]
            present = [v for v in found if v is not None]
            if present:
                params[pname] = C.combine(present, f"vector_query@{where}")
        n_text = n_vec = 0
        for c in calls:
            if "text" in c.kwargs:  # type: ignore[operator]
                n_text += 1
                channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = self.ref(c.kwargs["text"])  # type: ignore[index]
            if "vector" in c.kwargs:  # type: ignore[operator]
                n_vec += 1
                channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = self.ref(c.kwargs["vector"], vector=True)  # type: ignore[index]

    def _langchain_search(self, call: ast.Call, qual: str, ctx: Ctx, name: str, is_async: bool) -> None:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if self._own_method(receiver, ctx, name.rsplit(".", 1)[-1]):
            return  # the app's own wrapper: its body holds the real call, with the app's own parameters
        params: dict[str, Val] = {}
        if len(call.args) >= 2:
            params["k"] = self.r.resolve(call.args[1], ctx)
        opaque = self._spread_kwargs(call, ctx, {"k": "k", "filter": "filter", "filters": "filter",
                                                  "fetch_k": "fetch_k", "score_threshold": "score_threshold"}, params)
        for kw in call.keywords:
            if kw.arg == "k":
                params["k"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("filter", "filters"):
                params["filter"] = self.r.resolve(kw.value, ctx)
            elif kw.arg == "search_type":
                params["query_type"] = self.r.resolve(kw.value, ctx)
        for kw in call.keywords:
            if kw.arg in ("fetch_k", "score_threshold", "lambda_mult"):
                params[kw.arg] = self.r.resolve(kw.value, ctx)
        channels: dict[str, str | None] = {}
        if call.args:
            key = "vector" if "by_vector" in name else "search_text"
            channels[key] = self.ref(self.r.resolve(call.args[0], ctx), vector=key == "vector")
        self._defaults_if_library(params, name, call, receiver, ctx, opaque)
        self.out.search_calls.append(self.site("langchain", call, qual, params, channels, None, name, is_async))

    def _as_retriever(self, call: ast.Call, qual: str, ctx: Ctx, name: str, receiver: str | None,
                      last: str) -> None:
        receiver_node = call.func.value if isinstance(call.func, ast.Attribute) else None
        if self._own_method(receiver_node, ctx, last):
            return  # the app's own `as_retriever`: not the library's, whatever its name
        params: dict[str, Val] = {}
        opaque = self._spread_kwargs(call, ctx, {"similarity_top_k": "k", "filters": "filter", "filter": "filter",
                                                  "search_type": "query_type", "vector_store_query_mode": "query_type"},
                                     params)
        kwnames = {k.arg for k in call.keywords} | ({"similarity_top_k"} if "k" in params else set())
        llama = last != "as_retriever" or "similarity_top_k" in kwnames \
            or self.type_of(receiver) == "LlamaIndex" or "llama_index" in self.source
        for kw in call.keywords:
            if kw.arg == "similarity_top_k":
                params["k"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("filters", "filter"):
                params["filter"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("search_type", "vector_store_query_mode"):
                params["query_type"] = self.r.resolve(kw.value, ctx)
            elif kw.arg == "search_kwargs":
                sk = self.r.resolve(kw.value, ctx)
                if sk.kind == "dict":
                    for key, pname in (("k", "k"), ("filter", "filter"), ("fetch_k", "fetch_k"),
                                       ("score_threshold", "score_threshold")):
                        if sk.items and key in sk.items:
                            params[pname] = sk.items[key]
                    if sk.override:  # a configuration's dict (empty by default): what it adds replaces defaults
                        kw_override = f"{sk.override} (search_kwargs)"
                        self.__dict__["_search_kwargs_override"] = kw_override
                else:
                    params["k"] = unknown("search_kwargs", sk.expr)
        self._defaults_if_library(params, "llamaindex.as_retriever" if llama else name, call, receiver_node, ctx,
                                  opaque)
        override = self.__dict__.pop("_search_kwargs_override", "")
        if override:
            for key, val in list(params.items()):
                if val.source.startswith("library_default"):
                    params[key] = val.copy(override=override)
        self.out.search_calls.append(self.site("llamaindex" if llama else "langchain", call, qual, params, {},
                                               None, name))

    # -- receivers and spread keywords: a library default only where the library really is called ----------
    def _spread_kwargs(self, call: ast.Call, ctx: Ctx, mapping: dict[str, str], params: dict[str, Val]) -> bool:
        """Fold `**kwargs` into `params` when it resolves to a dict; True when some `**` part stays unknown."""
        opaque = False
        for kw in call.keywords:
            if kw.arg is not None:
                continue
            d = self.r.resolve(kw.value, ctx)
            if d.kind != "dict":
                opaque = True
                continue
            opaque = opaque or d.open
            for key, value in (d.items or {}).items():
                if key in mapping:
                    params[mapping[key]] = value
        return opaque

    def _own_method(self, receiver: ast.AST | None, ctx: Ctx, method: str) -> bool:
        """Is `receiver.method(...)` a method of a class of the scanned tree (the app's own wrapper)?"""
        if receiver is None:
            return False
        hit = self.r.class_of(receiver, ctx)
        if hit is None:
            return False
        mod, cls, _ = hit
        return f"{cls}.{method}" in mod.functions

    def _library_receiver(self, receiver: ast.AST | None, ctx: Ctx) -> bool:
        """Is the receiver known to be a LangChain / LlamaIndex object (built, annotated or typed as one)?"""
        if receiver is None:
            return False
        if self.type_of(dotted(receiver)) in ("LCStore", "LlamaIndex", "faiss"):
            return True
        node = receiver
        if isinstance(node, ast.Name) and ctx.func is not None:
            assigns, _ = ctx.mod.locals_of(ctx.func)
            entries = [e for e in assigns.get(node.id, ()) if e.kind == "assign"]
            if entries:
                node = entries[-1].value
            else:
                for prm in ctx.mod.params_of(ctx.func):
                    if prm.name == node.id and prm.annotation:
                        return bool(_LIBRARY_TYPES.search(prm.annotation))
        elif isinstance(node, ast.Name) and node.id in ctx.mod.constants:
            node = ctx.mod.constants[node.id][0]
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Call):
            callee = dotted(node.func) or ""
            base = callee.rsplit(".", 2)[-2] if callee.count(".") >= 1 else callee
            if callee.rsplit(".", 1)[-1] in STORE_CLASSES or base in STORE_CLASSES or _LIBRARY_TYPES.search(callee):
                return True
        return False

    def _defaults_if_library(self, params: dict[str, Val], name: str, call: ast.Call, receiver: ast.AST | None,
                             ctx: Ctx, opaque: bool) -> None:
        """The library's defaults for what the call does not pass, only when the receiver is the library's.

        Else (spread keywords that stay unknown, a receiver of unknown type) the absent parameter is
        unresolved, with the expression shown: never a guess that feeds a verdict."""
        if not opaque and (self._library_receiver(receiver, ctx) or self._library_file()):
            self._library_defaults(params, name, call)
            return
        last = name.rsplit(".", 1)[-1] if not name.startswith("llamaindex.") else name
        why = "spread keywords not resolved" if opaque else "receiver's type not known to be the library's"
        for key in LIBRARY_DEFAULTS.get(last, {}):
            if key not in params:
                params[key] = unknown(f"unresolved:{why}", unparse(call, 120)).copy(
                    override=f"library default only if {unparse(receiver, 60) if receiver is not None else '?'} "
                             f"is the library's")

    def _library_file(self) -> bool:
        """The file builds its stores from the library itself (no class of its own stands in between)."""
        cached = self.__dict__.get("_library_file_cached")
        if cached is None:  # one pattern search over the whole file, asked once per search call
            cached = self._library_file_cached = bool(_LIBRARY_IMPORT.search(self.source)) and not self.mod.classes
        return cached

    def _rest(self, call: ast.Call, qual: str, ctx: Ctx, name: str, last: str, is_async: bool) -> None:
        url_node = None
        for kw in call.keywords:
            if kw.arg == "url":
                url_node = kw.value
        if url_node is None and call.args:
            url_node = call.args[1] if last == "request" and len(call.args) > 1 else call.args[0]
        if url_node is None:
            return
        func, cls = self._cur[0], self._cur[1]
        url = self.r.resolve(url_node, ctx)
        variants: list[tuple[Ctx, str, str]] = [(ctx, "", "")]
        wrapper = func is not None and (_from_parameter(url) or any(
            _from_parameter(self.r.resolve(kw.value, ctx)) for kw in call.keywords
            if kw.arg in ("json", "data", "content", "body", "headers")))
        if wrapper:
            # the app's own wrapper: its URL, body and headers are what its callers hand it
            callers = [c for c in self.caller_contexts(func, cls)
                       if "docs/search" in C.text_of(self.r.resolve(url_node, c[0]), "python")[0]]
            if callers:
                variants = callers
        text, _ = C.text_of(self.r.resolve(url_node, variants[0][0]), "python")
        if _MODEL_ENDPOINT.search(text):
            self._llm(call, qual, func, cls, "http_model", name)  # a model called over plain HTTP
            return
        if "docs/search" not in text:
            if not url.resolved and _looks_like_retrieval(qual, text):
                self.out.gaps.append(Gap(
                    file=self.rel, line=call.lineno, kind="http_wrapper", function=qual or "<module>",
                    detail=f"{name}({unparse(url_node, 80)}): the URL is {url.source or 'unresolved'}; "
                           f"what it sends cannot be read", language="python"))
            return
        shapes = []
        for vctx, caller, where in variants:
            shapes.append((*self._rest_shape(call, vctx, last), caller, where))
        if len(shapes) == 1 and not shapes[0][3]:
            params, channels, builder = shapes[0][0], shapes[0][1], shapes[0][2]
        else:
            from ragdiag.codescan.python_callers import merge_variants

            params = merge_variants([(p, c, w) for p, _ch, _b, c, w in shapes])
            channels, builder = shapes[0][1], shapes[0][2] or f"{self.mod.dotted}:{qual}"
        self.out.search_calls.append(self.site("rest_search", call, qual, params, channels, builder, name,
                                               is_async))

    def _rest_shape(self, call: ast.Call, ctx: Ctx, last: str) -> tuple[dict[str, Val], dict[str, str | None], Any]:
        """(parameters, channels, builder) of a REST search call as resolved in `ctx`."""
        body: Val | None = None
        query: Val | None = None
        headers: Val | None = None
        for kw in call.keywords:
            if kw.arg in ("json", "data", "content", "body"):
                body = self.r.resolve(kw.value, ctx)
            elif kw.arg == "params":
                query = self.r.resolve(kw.value, ctx)
            elif kw.arg == "headers":
                headers = self.r.resolve(kw.value, ctx)
        if body is None and len(call.args) >= 2 and last in ("post", "put"):
            body = self.r.resolve(call.args[1], ctx)
        params, channels, builder = C.rest_request((query, body), self.ref)
        if body is not None and body.kind != "dict":
            # the body is not readable here: what it carries (top, filter, vector k) is unknown, not absent
            params["body"] = body.copy() if not body.resolved else unknown("rest_body", body.expr)
        elif body is not None and body.open:
            params.setdefault("body", unknown("rest_body (keys added elsewhere)", body.expr))
        qsa = header(headers, "x-ms-query-source-authorization") if headers is not None else None
        if qsa is not None:
            params["query_source_authorization"] = qsa
        return params, channels, builder


def _from_parameter(v: Val) -> bool:
    """Is the value (or its unknown part) one of the enclosing function's parameters?"""
    return not v.resolved and (v.source.startswith("parameter:") or v.override.startswith("parameter:"))


#: Model endpoints called over plain HTTP (OpenAI / Azure OpenAI chat and responses, Anthropic, Gemini).
_MODEL_ENDPOINT = re.compile(r"/chat/completions|/v1/responses|/openai/responses|/v1/messages|:generateContent|"
                             r"/v1/completions", re.I)
#: Method names, or receivers, of what may be the app's own model client (`llm_helper.get_chat_completion`).
_APP_LLM = re.compile(r"^a?(get_)?(chat|chat_completions?|completion|complete|generate|generate_answer|ask|ask_llm|"
                      r"call_llm|llm_call|run_llm|query_llm|invoke_llm|get_answer|get_completion|"
                      r"get_chat_completion\w*|chat_with_\w+|answer|respond)$")
_APP_LLM_RECEIVER = re.compile(r"llm|openai|aoai|gpt|chat_?client|model_?client|completion", re.I)
#: Any verb + model word (`call_chat_model`, `invoke_llm`): only a candidate, kept when a wrapper of that name exists.
_APP_LLM_VERB = re.compile(r"^a?(call|invoke|run|ask|query|send|get|do)_\w*(chat|llm|model|completion|gpt)\w*$", re.I)
_URL_RETRIEVAL = re.compile(r"/(?:search|query|retrieve|ask|rag|knowledge\w*|indexes|vector\w*)\b", re.I)
_FN_RETRIEVAL = re.compile(r"search|retriev|vector|knowledge|semantic|similar|\brag\b", re.I)


def _looks_like_retrieval(qual: str, url_text: str) -> bool:
    """Does an HTTP call whose URL is not fully known look like retrieval: a search-like path in the part
    that is known, or no known part at all in a function named for retrieval?"""
    if _URL_RETRIEVAL.search(url_text or ""):
        return True
    literal = C.PLACEHOLDER_RE.sub("", url_text or "").strip()
    return not literal and bool(_FN_RETRIEVAL.search((qual or "").rsplit(".", 1)[-1]))
