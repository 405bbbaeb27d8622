"""Python retrieval that is delegated: the app configures a service or a framework and never sends `search` itself.

* Azure OpenAI "On your data": `chat.completions.create(..., extra_body={"data_sources": [...]})`
  (`top_n_documents`, `strictness`, `in_scope`, `filter`, `query_type`...);
* agentic retrieval: a knowledge agent / knowledge base `retrieve(...)` call;
* framework vector stores: LangChain `AzureSearch`, `FAISS`, `Chroma`, `PGVector`; LlamaIndex
  `AzureAISearchVectorStore` / `VectorStoreIndex`; Semantic Kernel `AzureAISearchCollection` /
  `AzureAISearchStore`; Haystack `AzureAISearchDocumentStore` and its retrievers;
* the frameworks' documented defaults where the code passes nothing (LangChain `k=4`, MMR and a
  FAISS metadata filter `fetch_k=20`, LlamaIndex `similarity_top_k=2`, Haystack `top_k=10`).

A mixin of the Python file scanner; every delegated retrieval is also a `SearchCallSite` (kinds
``on_your_data``, ``agentic_retrieval``, ``haystack``) so that "no call sites" never reads as
"nothing retrieves".
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan.core import Ctx
from ragdiag.codescan.model import DelegatedRetrieval
from ragdiag.codescan.python_index import dotted, unparse, walk_body
from ragdiag.codescan.values import Val, export, lit

#: Store constructors (last name part) -> (framework, store, documented defaults of their searches).
STORE_CTORS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "AzureSearch": ("langchain", "azure_search", {"k": 4, "search_type": "hybrid"}),
    "AzureAISearchVectorStore": ("llamaindex", "azure_search", {"similarity_top_k": 2}),
    "AzureCosmosDBNoSqlVectorSearch": ("langchain", "cosmos_db", {"k": 4}),
    "FAISS": ("langchain", "faiss", {"k": 4, "fetch_k": 20}),
    "Chroma": ("langchain", "chroma", {"k": 4}),
    "PGVector": ("langchain", "pgvector", {"k": 4}),
    "AzureAISearchCollection": ("semantic_kernel", "azure_search", {"top": 3}),
    "AzureAISearchStore": ("semantic_kernel", "azure_search", {"top": 3}),
    "AzureCognitiveSearchMemoryStore": ("semantic_kernel", "azure_search", {"limit": 1}),
    "AzureAISearchDocumentStore": ("haystack", "azure_search", {"top_k": 10}),
    "PGVectorStore": ("llamaindex", "pgvector", {"similarity_top_k": 2}),
}
STORE_FACTORIES = frozenset({"from_documents", "from_texts", "from_embeddings", "load_local", "from_vector_store",
                             "afrom_documents", "afrom_texts", "from_existing_index", "from_params",
                             "from_connection_string"})
HAYSTACK_RETRIEVERS = frozenset({"AzureAISearchEmbeddingRetriever", "AzureAISearchBM25Retriever",
                                 "AzureAISearchHybridRetriever"})
AGENT_CLIENTS = re.compile(r"KnowledgeAgentRetrievalClient|KnowledgeBaseRetrievalClient|agent_client|"
                           r"knowledge_?(agent|base)|kb_client|retrieval_client", re.I)
#: "On your data" parameters (Azure OpenAI) and their documented defaults.
OYD_DEFAULTS = {"top_n_documents": 5, "strictness": 3, "in_scope": True, "query_type": "simple"}
OYD_KEYS = ("top_n_documents", "strictness", "in_scope", "filter", "query_type", "semantic_configuration",
            "index_name", "role_information", "max_search_queries", "allow_partial_result", "include_contexts",
            "topNDocuments", "inScope", "queryType", "semanticConfiguration", "indexName")
_CAMEL = {"topNDocuments": "top_n_documents", "inScope": "in_scope", "queryType": "query_type",
          "semanticConfiguration": "semantic_configuration", "indexName": "index_name"}
#: LangChain / LlamaIndex search methods -> documented defaults when not passed.
LIBRARY_DEFAULTS: dict[str, dict[str, int]] = {
    "similarity_search": {"k": 4}, "similarity_search_with_score": {"k": 4},
    "similarity_search_with_relevance_scores": {"k": 4}, "similarity_search_by_vector": {"k": 4},
    "asimilarity_search": {"k": 4}, "asimilarity_search_with_score": {"k": 4},
    "max_marginal_relevance_search": {"k": 4, "fetch_k": 20}, "amax_marginal_relevance_search": {"k": 4, "fetch_k": 20},
    "hybrid_search": {"k": 4}, "hybrid_search_with_score": {"k": 4}, "semantic_hybrid_search": {"k": 4},
    "semantic_hybrid_search_with_score": {"k": 4}, "semantic_hybrid_search_with_score_and_rerank": {"k": 4},
    "as_retriever": {"k": 4}, "llamaindex.as_retriever": {"k": 2},
}


#: a retrieval call on a store somewhere in the file: the store built there is searched, not only filled
RETRIEVES_RE = re.compile(r"\.(as_retriever|similarity_search\w*|max_marginal_relevance_search\w*|as_query_engine|"
                          r"as_chat_engine|retrieve|aretrieve|hybrid_search\w*|semantic_hybrid_search\w*|"
                          r"vector_search\w*|query)\(|RetrievalQA|create_retrieval_chain|ConversationalRetrievalChain|"
                          r"VectorStoreIndex|retriever\b")


_FILLS_RE = re.compile(r"\.a?(add_documents|add_texts|add_embeddings|upsert|index_documents)\(")


_STORE_NAMES = tuple(STORE_CTORS)


class DelegatedSites:
    """Delegated retrieval and framework defaults (mixed into `PyFileScan`)."""

    def _delegated_call(self, call: ast.Call, qual: str, ctx: Ctx, name: str, receiver: str | None, last: str,
                        is_async: bool) -> bool:
        """Record delegated retrieval at `call`; True when the call needs no further analysis."""
        kwnames = {k.arg for k in call.keywords}
        if None in kwnames and name.endswith(("completions.create", "responses.create")):
            for k in call.keywords:
                if k.arg is None:
                    d = self.r.resolve(k.value, ctx)
                    if d.kind == "dict" and (d.get("extra_body") is not None or d.get("data_sources") is not None):
                        call = ast.Call(func=call.func, args=[], keywords=[
                            *[kw for kw in call.keywords if kw.arg], ast.keyword("extra_body", k.value)])
                        ast.copy_location(call, k.value)
                        kwnames.add("extra_body")
        if ("extra_body" in kwnames or "data_sources" in kwnames or "dataSources" in kwnames) \
                and name.endswith(("completions.create", "responses.create", "completions.acreate", "create",
                                   "stream")):
            self._on_your_data(call, qual, ctx, name, is_async)
            return False
        if last in ("retrieve", "aretrieve") and receiver is not None:
            return self._retrieve(call, qual, ctx, name, receiver, is_async)
        base = last
        if last in STORE_FACTORIES and isinstance(call.func, ast.Attribute):
            base = (dotted(call.func.value) or "").rsplit(".", 1)[-1]
        if base not in STORE_CTORS and (base == last or last in STORE_FACTORIES) and base[:1].isupper():
            base = self._store_base(base, ctx) or base  # the tree's own subclass of a library store
        if base in STORE_CTORS and (base == last or last in STORE_FACTORIES or last not in STORE_CTORS):
            self._store(call, qual, ctx, name, base)
            return True
        if last in HAYSTACK_RETRIEVERS:
            settings = {k.arg: self.r.resolve(k.value, ctx) for k in call.keywords if k.arg}
            params: dict[str, Val] = {}
            if "top_k" in settings:
                params["top"] = settings["top_k"]
            else:
                params["top"] = _default(10, "haystack")
            if "filters" in settings:
                params["filter"] = settings["filters"]
            self.out.search_calls.append(self.site("haystack", call, qual, params, {}, None, name))
            self.out.delegated.append(self._delegated(call, qual, "retriever", "haystack", "azure_search",
                                                      settings, {"top_k": 10}, name))
            return True
        return False

    def _retrieved_elsewhere(self, qual: str) -> bool:
        """A store built by a factory function that a retrieving module of the tree calls (`get_vector_store()`)."""
        name = qual.rsplit(".", 1)[-1] if qual else ""
        if not name or _FILLS_RE.search(self.source):
            return False
        cache = self.project.cache.setdefault("retrieving_py_texts", None)
        if cache is None:
            cache = []
            for rel in self.project.files:
                if rel.endswith(".py") and rel != self.rel:
                    text = self.project.read_text(rel)
                    if text and RETRIEVES_RE.search(text):
                        cache.append(text)
            self.project.cache["retrieving_py_texts"] = cache
        return any(f"{name}(" in text for text in cache)

    def _store_base(self, name: str, ctx: Ctx) -> str | None:
        """The library store a class of the scanned tree subclasses (`class CustomPGVectorStore(PGVectorStore)`)."""
        hit = self.r._class_by_text(name, ctx, _STORE_NAMES)
        if hit is None:
            return None
        mod, cls = hit
        for b in mod.class_bases.get(cls, []):
            if b.rsplit(".", 1)[-1] in STORE_CTORS:
                return b.rsplit(".", 1)[-1]
        return None

    def _delegated(self, call: ast.AST, qual: str, kind: str, framework: str, store: str,
                   settings: dict[str, Val], defaults: dict[str, Any], name: str) -> DelegatedRetrieval:
        return DelegatedRetrieval(
            file=self.rel, line=call.lineno, function=qual or "<module>", kind=kind, framework=framework,
            store=store, settings={k: export(v) for k, v in settings.items()},
            defaults={k: v for k, v in defaults.items() if k not in settings}, call=name, language="python")

    def _on_your_data(self, call: ast.Call, qual: str, ctx: Ctx, name: str, is_async: bool) -> None:
        sources: Val | None = None
        for kw in call.keywords:
            if kw.arg in ("data_sources", "dataSources"):
                sources = self.r.resolve(kw.value, ctx)
            elif kw.arg == "extra_body":
                body = self.r.resolve(kw.value, ctx)
                sources = body.get("data_sources") or body.get("dataSources") if body.kind == "dict" else None
        entries = sources.elems if sources is not None and sources.kind == "list" and sources.elems else []
        if not entries:
            entries = [sources] if sources is not None else [Val("unknown", None, False, "extra_body")]
        for entry in entries:
            store = entry.get("type") if entry.kind == "dict" else None
            store_name = str(store.value) if store is not None and store.resolved else "unknown"
            parameters = entry.get("parameters") if entry.kind == "dict" else None
            settings: dict[str, Val] = {}
            if parameters is not None and parameters.kind == "dict":
                for key in OYD_KEYS:
                    v = parameters.get(key)
                    if v is not None:
                        settings[_CAMEL.get(key, key)] = v
                auth = parameters.get("authentication")
                if auth is not None:
                    settings["authentication"] = auth.get("type") or auth if auth.kind == "dict" else auth
            params: dict[str, Val] = {"top": settings.get("top_n_documents", _default(5, "on_your_data"))}
            for k in ("filter", "query_type", "semantic_configuration", "strictness", "in_scope"):
                if k in settings:
                    params[k] = settings[k]
            self.out.search_calls.append(self.site("on_your_data", call, qual, params, {}, None, name, is_async))
            self.out.delegated.append(self._delegated(call, qual, "on_your_data", "azure_openai", store_name,
                                                      settings, OYD_DEFAULTS, name))

    def _retrieve(self, call: ast.Call, qual: str, ctx: Ctx, name: str, receiver: str, is_async: bool) -> bool:
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in (
            "retrieval_request", "request", "retrieve_request")), None)
        arg_name = dotted(arg.func) if isinstance(arg, ast.Call) else ""
        is_agent = bool(AGENT_CLIENTS.search(receiver) or self.type_of(receiver) == "AgentClient"
                        or (arg_name or "").endswith(("RetrievalRequest", "RetrieveRequest")))
        if not is_agent:
            if re.search(r"retriever$", receiver, re.I):  # LlamaIndex retriever.retrieve(query)
                params = dict(self._llama_defaults(receiver))
                self.out.search_calls.append(self.site("llamaindex", call, qual, params,
                                                       {"search_text": self.ref(self.r.resolve(call.args[0], ctx))}
                                                       if call.args else {}, None, name, is_async))
                return True
            return False
        settings: dict[str, Val] = {}
        if isinstance(arg, ast.Call):
            for kw in arg.keywords:
                v = self.r.resolve(kw.value, ctx)
                if kw.arg in ("target_index_params", "knowledge_source_params") and v.kind == "list" and v.elems:
                    first = v.elems[0]
                    for key in ("reranker_threshold", "filter_add_on", "include_reference_source_data",
                                "max_docs_for_reranker", "index_name", "knowledge_source_name"):
                        got = first.get(key)
                        if got is not None:
                            settings[key] = got
                elif kw.arg not in ("messages", "intents"):
                    settings[str(kw.arg)] = v
        for kw in call.keywords:
            if kw.arg == "x_ms_query_source_authorization":
                settings["query_source_authorization"] = self.r.resolve(kw.value, ctx)
        params: dict[str, Val] = {}
        if "filter_add_on" in settings:
            params["filter"] = settings["filter_add_on"]
        if "query_source_authorization" in settings:
            params["query_source_authorization"] = settings["query_source_authorization"]
        self.out.search_calls.append(self.site("agentic_retrieval", call, qual, params, {}, None, name, is_async))
        self.out.delegated.append(self._delegated(call, qual, "agentic_retrieval", "azure_search_knowledge_agent",
                                                  "azure_search", settings, {"reranker_threshold": None}, name))
        return True

    def _store(self, call: ast.Call, qual: str, ctx: Ctx, name: str, base: str) -> None:
        if not RETRIEVES_RE.search(self.source) and not self._retrieved_elsewhere(qual):
            return  # a store the file only fills or logs to (a conversation log index) is not retrieval
        framework, store, defaults = STORE_CTORS[base]
        settings = {k.arg: self.r.resolve(k.value, ctx) for k in call.keywords if k.arg and k.arg not in (
            "embedding", "embedding_function", "embeddings", "azure_search_key", "credential", "documents",
            "texts", "azure_search_endpoint", "api_key")}
        self.out.delegated.append(self._delegated(call, qual, "vector_store", framework, store, settings, defaults,
                                                  name))

    def _delegated_pass(self) -> None:
        """`data_sources` payloads built apart from the call, and settings classes declaring On-your-data knobs."""
        low = self.low
        if "data_sources" in low or "datasources" in low:
            covered = [(d.line, d.line + 40) for d in self.out.delegated if d.kind == "on_your_data"]
            for qual, node, func, cls in self._dicts_with(("data_sources", "dataSources")):
                if any(a <= node.lineno <= b for a, b in covered):
                    continue
                self._cur = (func, cls, node)
                value = next(v for k, v in zip(node.keys, node.values, strict=True)
                             if isinstance(k, ast.Constant) and k.value in ("data_sources", "dataSources"))
                fake = ast.Call(func=ast.Name("create"), args=[], keywords=[ast.keyword("data_sources", value)])
                ast.copy_location(fake, node)
                self._on_your_data(fake, qual, self.ctx(func, cls), "data_sources payload", False)
                covered.append((node.lineno, node.lineno + 40))
        if not any(w in low for w in ("top_n_documents", "in_scope", "strictness")):
            return
        for cls, fields in self.mod.class_fields.items():
            settings: dict[str, Val] = {}
            for field, (value, _line) in fields.items():
                alias = None
                if isinstance(value, ast.Call):
                    alias = next((k.value.value for k in value.keywords if k.arg in ("serialization_alias", "alias")
                                  and isinstance(k.value, ast.Constant)), None)
                key = alias or field
                if key in OYD_DEFAULTS or key in ("filter", "semantic_configuration", "top_n_documents"):
                    node = ast.Attribute(value=ast.Name("self"), attr=field)
                    ast.copy_location(node, value)
                    settings[key] = self.r.class_field(self.mod, cls, field, None, None, node, Ctx(self.mod))
            if "top_n_documents" in settings or len(settings) >= 2:
                cnode = self.mod.classes[cls]
                self.out.delegated.append(DelegatedRetrieval(
                    file=self.rel, line=cnode.lineno, function=cls, kind="on_your_data", framework="azure_openai",
                    store=_store_name(cls), settings={k: export(v) for k, v in
                                                                                       settings.items()},
                    defaults={k: v for k, v in OYD_DEFAULTS.items() if k not in settings},
                    call=f"settings class {cls}", language="python"))

    def _dicts_with(self, keys: tuple[str, ...]):
        """(function qualname, dict node, function, class) of dict literals holding one of `keys`."""
        for qual, fn, cls in [("", None, None), *self.functions]:
            body = [s for s in self.mod.tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.ClassDef))] if fn is None else fn.body
            for n in walk_body(body):
                if isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in keys for k in n.keys):
                    yield qual, n, fn, cls

    def _library_defaults(self, params: dict[str, Val], name: str, call: ast.Call) -> None:
        """Documented framework defaults for the parameters a search call does not pass."""
        last = name.rsplit(".", 1)[-1] if not name.startswith("llamaindex.") else name
        defaults = LIBRARY_DEFAULTS.get(last, {})
        framework = "llamaindex" if last.startswith("llamaindex") else "langchain"
        for key, value in defaults.items():
            if key not in params:
                params[key] = _default(value, framework)
        if "filter" in params and "fetch_k" not in params and self._store_of(call) == "faiss":
            params["fetch_k"] = _default(20, "langchain FAISS: filter applied in Python after fetch_k")

    def _llama_defaults(self, receiver: str) -> dict[str, Val]:
        return {"k": _default(2, "llamaindex")}

    def _store_of(self, call: ast.Call) -> str | None:
        """The store behind a search call's receiver, when it was built in this file."""
        if not isinstance(call.func, ast.Attribute):
            return None
        receiver = dotted(call.func.value) or ""
        tail = receiver.rsplit(".", 1)[-1]
        for d in self.out.delegated:
            if d.kind == "vector_store" and (d.store == "faiss") and ("faiss" in tail.lower() or "db" in tail.lower()
                                                                     or "store" in tail.lower()):
                return d.store
        return "faiss" if "faiss" in tail.lower() or "FAISS" in self.source else None

    def _calls_own_search(self, receiver_node: ast.AST | None, ctx: Ctx) -> bool:
        """Is `receiver.search(...)` a method of a class of the scanned tree (the app's own wrapper)?"""
        if receiver_node is None:
            return False
        hit = self.r.class_of(receiver_node, ctx)
        if hit is None:
            return False
        mod, cls, _ = hit
        return f"{cls}.search" in mod.functions or f"{cls}.asearch" in mod.functions


def _default(value: Any, framework: str) -> Val:
    return lit(value, f"library_default:{framework}").copy(override="parameter", prov=f"{framework} default")


__all__ = ["DelegatedSites", "LIBRARY_DEFAULTS", "STORE_CTORS", "unparse"]


def _store_name(cls: str) -> str:
    """The data source a settings class configures, from its name."""
    low = cls.lower()
    for pattern, store in (("elastic", "elasticsearch"), ("cosmos", "cosmos_db"), ("mongo", "mongo_db"),
                           ("pinecone", "pinecone"), ("azureml", "azure_ml_index"), ("search", "azure_search")):
        if pattern in low:
            return store
    return ""
