"""JS/TS search call sites: REST `/docs/search` (fetch, axios, ky/got, `client.post`), the Azure JS SDK
`searchClient.search(text, options)`, LangChain.js / LlamaIndex.TS retrievers, FAISS-node and pgvector SQL
helpers. A mixin of the JS file scanner."""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx
from ragdiag.codescan.js_index import args_of, field, line, text
from ragdiag.codescan.js_llm import COMPLETION_CALLS, language
from ragdiag.codescan.model import AclSite, DelegatedRetrieval
from ragdiag.codescan.request_shape import header
from ragdiag.codescan.values import Val, export
from ragdiag.codescan.vector_db import COUNT_KEYS, DEFAULTS, FILTER_KEYS, query_api

HTTP_FUNCS = frozenset({"fetch", "$fetch", "ofetch", "ky", "got", "axios", "request"})
HTTP_METHODS = frozenset({"post", "get", "put", "patch", "request"})
LC_METHODS = frozenset({"similaritySearch", "similaritySearchWithScore", "similaritySearchVectorWithScore",
                        "maxMarginalRelevanceSearch", "hybridSearch", "semanticHybridSearch"})
SQL_FUNCS = frozenset({"cosineDistance", "l2Distance", "innerProduct", "cosine_distance"})
#: LangChain.js store factories: `FaissStore.load(...)`, `X.fromDocuments(...)`...
#: Method names of the native vector-database clients' query APIs (ragdiag.codescan.vector_db decides which).
_VDB_METHODS = frozenset({"search", "query", "nearText", "nearVector", "nearObject", "hybrid", "bm25", "fetchObjects"})
JS_STORE_FACTORIES = frozenset({"load", "fromDocuments", "fromTexts", "fromExistingIndex", "fromExistingCollection"})


#: Model endpoints called over plain HTTP (OpenAI / Azure OpenAI chat and responses, Anthropic, Gemini).
_MODEL_ENDPOINT = re.compile(r"/chat/completions|/v1/responses|/openai/responses|/v1/messages|:generateContent", re.I)
#: Method names, or receivers, of what may be the app's own model client (`llmService.getChatCompletion`).
_APP_LLM = re.compile(r"^(get)?(chat|chatCompletions?|completion|complete|generate|generateAnswer|ask|askLlm|"
                      r"callLlm|invokeLlm|getAnswer|getCompletion|getChatCompletion\w*|answer|respond)$")
_APP_LLM_RECEIVER = re.compile(r"llm|openai|aoai|gpt|chatClient|chat_client|modelClient|completion", re.I)
#: Any verb + model word (`callChatModel`, `invokeLLM`, `runCompletion`): only a candidate, kept when the tree holds a
#: wrapper of that name (a function whose model call's prompt is its parameter), so a wide net costs no verdict.
_APP_LLM_VERB = re.compile(r"^(call|invoke|run|ask|query|send|get|do)[A-Z_]?\w*(chat|llm|model|completion|gpt)\w*$",
                           re.I)
_URL_RETRIEVAL = re.compile(r"/(?:search|query|retrieve|ask|rag|knowledge\w*|vector\w*)\b", re.I)
_FN_RETRIEVAL = re.compile(r"search|retriev|vector|knowledge|semantic|similar|\brag\b", re.I)


def _looks_like_retrieval(qual: str, url_text: str) -> bool:
    """An HTTP call whose URL is not fully known, on a search-like path or in a function named for retrieval."""
    if _URL_RETRIEVAL.search(url_text or ""):
        return True
    literal = C.PLACEHOLDER_RE.sub("", url_text or "").strip()
    return not literal and bool(_FN_RETRIEVAL.search((qual or "").rsplit(".", 1)[-1]))


class SearchSites:
    """Finds and records search call sites (mixed into `JSFileScan`)."""

    def _call(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        ctx = self.ctx(funcs, cls)
        if node.type == "new_expression":
            ctor = text(field(node, "constructor"))
            last = ctor.rsplit(".", 1)[-1]
            if last in ("AzureAISearchVectorStore", "AzureAISearchRetriever", "VectorIndexRetriever"):
                kind = "llamaindex" if self.llamaindex and not self.langchain else "langchain"
                self.out.search_calls.append(self.site(kind, node, qual, {}, {}, None, f"new {ctor}"))
            if self._js_store_name(last) and self._js_retrieves():
                self._js_store(node, qual, last, f"new {ctor}")
            return
        fn = field(node, "function")
        if fn is None:
            return
        name = text(fn)
        is_async = node.parent is not None and node.parent.type == "await_expression"
        args = args_of(node)
        if fn.type == "identifier":
            last, receiver = name, None
        elif fn.type == "member_expression":
            last = text(field(fn, "property"))
            receiver = text(field(fn, "object"))
        else:
            return
        if receiver is not None and last in JS_STORE_FACTORIES and self._js_store_name(receiver.rsplit(".", 1)[-1]) \
                and self._js_retrieves():
            self._js_store(node, qual, receiver.rsplit(".", 1)[-1], name)
            return
        if receiver is not None and last in _VDB_METHODS:
            opts = [v for v in (self.r.resolve(a, ctx) for a in args[:2]) if v.kind == "dict"]
            api = query_api(last, receiver, set(opts[0].items or {}) if opts else set(), self.type_of(receiver))
            if api is not None:
                self._js_vector_db(node, qual, ctx, name, api, args, opts[0] if opts else None, is_async)
                return
        if last == "rpc" and receiver is not None and args:
            self._rpc(node, qual, ctx, name, fn, args)
            return
        if (fn.type == "identifier" and last in HTTP_FUNCS) or (receiver is not None and last in HTTP_METHODS):
            self._rest(node, qual, ctx, name, last, receiver, args, is_async)
        elif last == "search" and receiver is not None:
            self._search(node, qual, ctx, name, receiver, args, is_async)
        elif last in LC_METHODS:
            params: dict[str, Val] = {}
            if len(args) >= 2:
                params["k"] = self.r.resolve(args[1], ctx)
            if len(args) >= 3:
                params["filter"] = self.r.resolve(args[2], ctx)
            key = "vector" if "Vector" in last else "search_text"
            channels = {key: self.ref(self.r.resolve(args[0], ctx), key == "vector")} if args else {}
            self.out.search_calls.append(self.site("langchain", node, qual, params, channels, None, name, is_async))
        elif last in ("asRetriever", "asQueryEngine", "asChatEngine"):
            params = {}
            opts = self.r.resolve(args[0], ctx) if args else None
            llama = last != "asRetriever" or self.llamaindex and not self.langchain
            if opts is not None and opts.kind == "dict" and opts.items:
                if "similarityTopK" in opts.items:
                    llama = True
                    params["k"] = opts.items["similarityTopK"]
                if "k" in opts.items:
                    params["k"] = opts.items["k"]
                if "filter" in opts.items:
                    params["filter"] = opts.items["filter"]
                if "searchType" in opts.items:
                    params["query_type"] = opts.items["searchType"]
            elif opts is not None and opts.kind == "scalar":
                params["k"] = opts
            if "k" not in params:
                # the library's default only when the receiver is the library's store (built by it here)
                store = self.r.resolve(field(fn, "object"), ctx)
                built = store.kind == "call" and self._js_store_name((store.call or "").split(".")[0])
                if built and (opts is None or (opts.kind == "dict" and not opts.open)):
                    params["k"] = C.lit(2 if llama else 4, "library_default:llamaindex" if llama
                                        else "library_default:langchain").copy(
                        override="parameter", prov=f"{'llamaindex' if llama else 'langchain'} default")
                else:
                    params["k"] = C.unknown("unresolved:receiver's type not known to be the library's",
                                            text(node)[:120])
            self.out.search_calls.append(self.site("llamaindex" if llama else "langchain", node, qual, params, {},
                                                   None, name))
            self._js_acl(self.out.search_calls[-1], node, qual)
            if not any(d.file == self.rel for d in self.out.delegated):
                # a retriever or query engine the framework runs over an index built elsewhere: the framework
                # builds the search (delegated), with the settings this call passes
                framework = "llamaindex" if llama else "langchain"
                self.out.delegated.append(DelegatedRetrieval(
                    file=self.rel, line=line(node), function=qual or "<module>", kind="vector_store",
                    framework=framework, store="", settings={k: export(v) for k, v in params.items()},
                    defaults={"similarity_top_k": 2} if llama else {"k": 4}, call=name, language=language(self.rel)))
        elif last in SQL_FUNCS:
            self.out.search_calls.append(self.site("sql_similarity", node, qual, {}, {}, None, name))
        else:
            kind = self._llm_kind(name, receiver, last)
            if kind and args and name.endswith(COMPLETION_CALLS):
                body = self.r.resolve(args[0], ctx)  # the SDK's request object: On your data sits in it
                extra = body.get("extra_body") if body.kind == "dict" else None
                if body.kind == "dict" and (body.get("data_sources") or body.get("dataSources")):
                    self._js_delegated(node, qual, "", body, None, name, is_async)
                elif extra is not None and extra.kind == "dict":
                    self._js_delegated(node, qual, "", extra, None, name, is_async)
            if kind:
                self._llm(node, qual, funcs, cls, kind, name, args)
            elif _APP_LLM.match(last) or _APP_LLM_VERB.match(last) or (receiver is not None and not last[:1].isupper()
                                          and _APP_LLM_RECEIVER.search(receiver.rsplit(".", 1)[-1])):
                self._llm(node, qual, funcs, cls, "app_client", name, args, via=last)  # kept if a wrapper has the name

    def _rest(self, node: Any, qual: str, ctx: Ctx, name: str, last: str, receiver: str | None,
              args: list[Any], is_async: bool) -> None:
        if not args:
            return
        first = self.r.resolve(args[0], ctx)
        url_val = first
        body: Val | None = None
        query: Val | None = None
        headers: Val | None = None
        if first.kind == "dict":  # axios(config) / client.request(config)
            url_val = first.items.get("url") if first.items else None
            body = first.get("data") or first.get("body") or first.get("json")
            query = first.get("params")
            headers = first.get("headers")
        if url_val is None:
            return
        text, _ = C.text_of(url_val, "js")
        if not url_val.resolved and (url_val.source.startswith("parameter:") or url_val.override.startswith(
                "parameter:")) and ctx.funcs and "docs/search" not in text:
            # the app's own REST wrapper: the URL and body are what its callers in this module hand it
            for cctx in self._caller_contexts(ctx.funcs[0], ctx.cls):
                got = self.r.resolve(args[0], cctx)
                if "docs/search" in C.text_of(got, "js")[0]:
                    ctx, first, url_val = cctx, self.r.resolve(args[0], cctx), got
                    text = C.text_of(got, "js")[0]
                    break
        handled = "docs/search" in text or "/retrieve" in text or _MODEL_ENDPOINT.search(text)
        if not url_val.resolved and not handled and _looks_like_retrieval(qual, text):
            from ragdiag.codescan.model import Gap

            self.out.gaps.append(Gap(file=self.rel, line=line(node), kind="http_wrapper", function=qual or "<module>",
                                     detail=f"{name}({text[:80]}): the URL is {url_val.source or 'unresolved'}; "
                                            f"what it sends cannot be read", language=language(self.rel)))
            return
        if _MODEL_ENDPOINT.search(text) and not re.search(r"data_?[sS]ources", self.source):
            # a model called over plain HTTP (fetch to /chat/completions, /responses): an LLM call
            self._llm(node, qual, ctx.funcs, ctx.cls, "openai_chat", name, args[1:] or args)
            return
        if "docs/search" not in text and "/retrieve" not in text and "/chat/completions" not in text:
            return
        if body is None and len(args) >= 2:
            second = self.r.resolve(args[1], ctx)
            if second.kind == "dict" and second.items is not None and (
                    set(second.items) & {"method", "headers", "body", "json", "data", "params"}) \
                    and not (set(second.items) & {"search", "vectorQueries", "top", "filter"}):
                body = second.items.get("body") or second.items.get("json") or second.items.get("data")
                query = second.items.get("params")
                headers = second.items.get("headers")
            else:
                body = second
        if len(args) >= 3 and headers is None:
            third = self.r.resolve(args[2], ctx)
            headers = third.get("headers") if third.kind == "dict" else None
        if "docs/search" not in text:
            self._js_delegated(node, qual, text, body, headers, name, is_async)
            return
        params, channels, builder = C.rest_request((query, body), self.ref)
        qsa = header(headers, "x-ms-query-source-authorization")
        if qsa is not None:
            params["query_source_authorization"] = qsa
        self.out.search_calls.append(self.site("rest_search", node, qual, params, channels, builder, name,
                                               is_async))
        self._js_acl(self.out.search_calls[-1], node, qual)

    def _rpc(self, node: Any, qual: str, ctx: Ctx, name: str, fn: Any, args: list[Any]) -> None:
        """`supabase.rpc('match_documents', {...}).limit(5)`: a search the database runs (see `db_rpc`)."""
        from ragdiag.codescan.db_rpc import RpcCall, looks_like_search_rpc, record_rpc

        fname = self.r.resolve(args[0], ctx)
        if not (fname.is_str and fname.resolved):
            return
        rpc_args = self.r.resolve(args[1], ctx) if len(args) > 1 else None
        if not looks_like_search_rpc(self.project, fname.value, rpc_args):
            return
        limit = None
        up = node
        while up.parent is not None and up.parent.type == "member_expression" and up.parent.parent is not None \
                and up.parent.parent.type == "call_expression":
            call = up.parent.parent
            if text(field(up.parent, "property")) == "limit" and args_of(call):
                limit = self.r.resolve(args_of(call)[0], ctx)
            up = call
        client = self.r.resolve(field(fn, "object"), ctx)
        built = client.node if client.kind == "call" and client.node is not None else None
        client_text = text(built) if built is not None else client.expr or ""
        from_request = False
        if built is not None:  # the caller's own token handed to the client (`headers: { authorization }`)
            for ident in re.findall(r"\b(authorization|Authorization|[A-Za-z_$]*[Tt]oken|jwt)\b", client_text):
                if re.search(r"req(uest)?\.headers|headers\.get|getSession|session|auth\.",
                             self._local_text(ident, ctx)):
                    from_request = True
        record_rpc(self.project, RpcCall(self.rel, line(node), qual or "<module>", self.mod.dotted,
                                         language(self.rel), fname.value, rpc_args, limit, client_text,
                                         from_request, name), self.out)

    def _local_text(self, name: str, ctx: Ctx) -> str:
        """The text a local of the enclosing functions was last assigned (empty when none)."""
        for func in ctx.funcs:
            entries = [e for e in ctx.mod.locals_of(func)[0].get(name, ()) if e.kind == "assign" and e.value is not None]
            if entries:
                return text(entries[-1].value)
        return ""

    def _caller_contexts(self, func: Any, cls: str | None) -> list[Ctx]:
        """Contexts binding `func`'s parameters to each call of it in this module (by name, `this.` in a class)."""
        from ragdiag.codescan.js_index import func_name

        name = func_name(func, func.parent) if func.parent is not None else None
        if not name:
            return []
        out = []
        for node, _qual, funcs, ccls in self.calls:
            fn = field(node, "function")
            if fn is None or node.type != "call_expression":
                continue
            callee = text(fn)
            if callee != name and not (callee == f"this.{name}" and ccls == cls) and \
                    not callee.endswith(f".{name}"):
                continue
            if any(f.id == func.id for f in funcs):
                continue
            positional = [None if a.type == "spread_element" else a for a in args_of(node)]
            bindings = self.r.bind_call(self.mod, func, positional, {}, self.ctx(funcs, ccls))
            out.append(Ctx(self.mod, (func,), cls, bindings))
            if len(out) >= 8:
                break
        return out

    def _js_store_name(self, name: str) -> bool:
        """A LangChain.js / LlamaIndex.TS vector store class (`FaissStore`, `AzureCosmosDBNoSQLVectorStore`...)."""
        if not ((self.langchain or self.llamaindex) and name[:1].isupper()) or name.endswith(
                ("DocumentStore", "DocStore", "ChatMessageStore", "KVStore", "ByteStore")):
            return False
        suffix = name.endswith(("VectorStore", "Store", "VectorSearch"))
        # where the file imports the class from decides: the framework's packages (any class of its vector-store
        # modules, `@langchain/community/vectorstores/x`), or the app's own module (no library store, whatever
        # its name); a class not imported here is judged by its name
        m = re.search(r"import\s*\{[^}]*\b" + re.escape(name) + r"\b[^}]*\}\s*from\s*['\"]([^'\"]+)['\"]", self.source)
        if m is None:
            return suffix
        path = m.group(1)
        framework = path.startswith(("@langchain/", "langchain/", "@llamaindex/", "llamaindex")) or path == "langchain"
        return framework and (suffix or "vectorstores" in path or "vector_stores" in path)

    def _js_retrieves(self) -> bool:
        """Does this file retrieve from a store (a store built or loaded only to be filled is ingestion)?"""
        return "asRetriever" in self.source or any(m in self.source for m in LC_METHODS)

    def _js_store(self, node: Any, qual: str, store: str, name: str) -> None:
        """A vector store the framework searches with its own defaults (LangChain.js `k` = 4)."""
        framework = "llamaindex" if self.llamaindex and not self.langchain else "langchain"
        defaults = {"similarity_top_k": 2} if framework == "llamaindex" else {"k": 4}
        self.out.delegated.append(DelegatedRetrieval(
            file=self.rel, line=line(node), function=qual or "<module>", kind="vector_store", framework=framework,
            store=store, settings={}, defaults=defaults, call=name, language=language(self.rel)))

    def _js_delegated(self, node: Any, qual: str, url: str, body: Val | None, headers: Val | None, name: str,
                      is_async: bool) -> None:
        """REST `.../retrieve` (agentic retrieval) and `/chat/completions` with `data_sources` (On your data)."""
        settings: dict[str, Val] = {}
        if "/retrieve" in url and ("agents" in url or "knowledge" in url):
            kind, framework = "agentic_retrieval", "azure_search_knowledge_agent"
            if body is not None and body.kind == "dict":
                for k in ("targetIndexParams", "knowledgeSourceParams"):
                    v = body.get(k)
                    if v is not None and v.kind == "list" and v.elems:
                        for key in ("rerankerThreshold", "filterAddOn", "maxDocsForReranker"):
                            got = v.elems[0].get(key)
                            if got is not None:
                                settings[key] = got
        else:
            sources = body.get("data_sources") or body.get("dataSources") if body is not None and \
                body.kind == "dict" else None
            if sources is None:
                return
            kind, framework = "on_your_data", "azure_openai"
            first = sources.elems[0] if sources.kind == "list" and sources.elems else None
            parameters = first.get("parameters") if first is not None and first.kind == "dict" else None
            if parameters is not None and parameters.kind == "dict":
                for key in ("top_n_documents", "topNDocuments", "strictness", "in_scope", "inScope", "filter",
                            "query_type", "queryType", "semantic_configuration"):
                    got = parameters.get(key)
                    if got is not None:
                        settings[key] = got
        qsa = header(headers, "x-ms-query-source-authorization")
        params: dict[str, Val] = {}
        for src, dst in (("top_n_documents", "top"), ("topNDocuments", "top"), ("filter", "filter"),
                         ("filterAddOn", "filter")):
            if src in settings:
                params[dst] = settings[src]
        defaults: dict[str, Any] = {}
        if kind == "on_your_data":
            from ragdiag.codescan.python_retrieval import _CAMEL, OYD_DEFAULTS

            given = {_CAMEL.get(k, k) for k in settings}
            defaults = {k: v for k, v in OYD_DEFAULTS.items() if k not in given}
            if "top" not in params:
                params["top"] = C.lit(5, "library_default:on_your_data").copy(override="parameter",
                                                                               prov="on_your_data default")
        if qsa is not None:
            params["query_source_authorization"] = qsa
        self.out.search_calls.append(self.site(kind, node, qual, params, {}, None, name, is_async))
        self.out.delegated.append(DelegatedRetrieval(
            file=self.rel, line=line(node), function=qual or "<module>", kind=kind, framework=framework,
            store="azure_search", settings={k: export(v) for k, v in settings.items()}, defaults=defaults, call=name,
            language=language(self.rel)))
        self._js_acl(self.out.search_calls[-1], node, qual)

    def _js_vector_db(self, node: Any, qual: str, ctx: Ctx, name: str, api: str, args: list[Any], opts: Val | None,
                      is_async: bool) -> None:
        """A native vector-database client's query (`vector_db`): result count, filter, query channels."""
        items = dict(opts.items or {}) if opts is not None else {}
        params: dict[str, Val] = {}
        count = next((items[k] for k in COUNT_KEYS if k in items), None)
        if count is not None:
            params["k"] = count
        elif opts is not None and opts.open:
            params["k"] = C.unknown("unresolved:spread options not resolved", text(node)[:120])
        elif DEFAULTS.get(api) is not None:
            params["k"] = C.lit(DEFAULTS[api], f"library_default:{api}").copy(override="parameter",
                                                                             prov=f"{api} default")
        else:
            params["k"] = C.unknown(f"unresolved:{api}'s server-side default applies", text(node)[:120])
        flt = next((items[k] for k in FILTER_KEYS if k in items), None)
        if flt is not None:
            params["filter"] = flt
        channels: dict[str, str | None] = {}
        if api == "weaviate" and args and name.rsplit(".", 1)[-1] in ("nearText", "hybrid", "bm25"):
            channels["search_text"] = self.ref(self.r.resolve(args[0], ctx))
        self.out.search_calls.append(self.site("vector_db", node, qual, params, channels, None, name, is_async))
        self._js_acl(self.out.search_calls[-1], node, qual)

    def _js_acl(self, site: Any, node: Any, qual: str) -> None:
        """The permission trimming of a JS/TS request: the token header, or a security clause in the filter."""
        qsa = site.params.get("query_source_authorization")
        mechanisms = []
        if qsa is not None:
            mechanisms.append(("query_source_authorization", qsa.expression or "x-ms-query-source-authorization"))
        f = site.params.get("filter")
        # a framework's metadata filter is an object: a security-named key at any depth (`{preFilter: {user_id:
        # {$eq: id}}}`) trims as an OData clause does
        mech = "framework_filter" if site.kind in ("langchain", "llamaindex", "vector_db") else "odata_filter"
        if f is not None and (C.SECURITY_FILTER_RE.search(str(f.value or "")) or C.SECURITY_NAME_RE.search(
                f.expression or "") or _security_key(f.value)):
            mechanisms.append((mech, str(f.value or f.expression)[:200]))
        for mech, detail in mechanisms:
            self.out.acl_sites.append(AclSite(
                file=self.rel, line=site.line, function=site.function, mechanism=mech, detail=detail,
                site=site.location, language=language(self.rel)))

    def _search(self, node: Any, qual: str, ctx: Ctx, name: str, receiver: str, args: list[Any],
                is_async: bool) -> None:
        low = receiver.lower()
        tag = self.type_of(receiver)
        opts = self.r.resolve(args[1], ctx) if len(args) >= 2 else None
        sdk_keys = {"filter", "top", "vectorSearchOptions", "queryType", "semanticSearchOptions", "select",
                    "includeTotalCount", "vectorQueries", "searchFields", "scoringProfile"}
        is_sdk = opts is not None and opts.kind == "dict" and bool(set(opts.items or {}) & sdk_keys)
        if tag == "faiss" or (tag is None and "index" in low.rsplit(".", 1)[-1] and not is_sdk and len(args) >= 2):
            params = {"k": self.r.resolve(args[1], ctx)} if len(args) >= 2 else {}
            channels = {"vector": self.ref(self.r.resolve(args[0], ctx), True)} if args else {}
            self.out.search_calls.append(self.site("faiss_search", node, qual, params, channels, None, name,
                                                   is_async))
            return
        if not (tag == "SearchClient" or is_sdk or re.search(r"search_?client|searcher", low)):
            return
        params: dict[str, Val] = {}
        channels: dict[str, str | None] = {}
        if args:
            text_val = self.r.resolve(args[0], ctx)
            channels["search_text"] = self.ref(text_val)
            params["search_text"] = text_val  # as in Python: `"*"` lists the index; callers may fill a parameter
        builder = opts.builder if opts is not None else None
        if opts is not None and opts.kind == "dict" and opts.items is not None:
            items = opts.items
            params.update({C.JS_SDK_PARAMS[k]: v for k, v in items.items() if k in C.JS_SDK_PARAMS})
            if "top" not in items and is_sdk and not opts.builder and not opts.open:
                # the SDK's options all listed (no unknown spread) without `top`: the service returns its default 50
                params["top"] = C.lit(50, "library_default:azure_search").copy(override="parameter",
                                                                               prov="Azure AI Search default")
            sem = items.get("semanticSearchOptions")
            if sem is not None and sem.kind == "dict" and sem.items:
                if "configurationName" in sem.items:
                    params["semantic_configuration"] = sem.items["configurationName"]
                if "semanticQuery" in sem.items:
                    channels["semantic_query"] = self.ref(sem.items["semanticQuery"])
            if "semanticConfiguration" in items:
                params["semantic_configuration"] = items["semanticConfiguration"]
            vso = items.get("vectorSearchOptions")
            queries = None
            if vso is not None and vso.kind == "dict" and vso.items:
                queries = vso.items.get("queries")
                if "filterMode" in vso.items:
                    params["vector_filter_mode"] = vso.items["filterMode"]
            queries = queries or items.get("vectorQueries")
            if queries is not None:
                entries = [e for e in (queries.elems or []) if e.kind == "dict"] if queries.kind == "list" else []
                for pname, keys in (("k", ("kNearestNeighborsCount", "k")), ("exhaustive", ("exhaustive",)),
                                    ("vector_fields", ("fields",)), ("weight", ("weight",))):
                    present = [next((e.items[k] for k in keys if e.items and k in e.items), None) for e in entries]
                    present = [p for p in present if p is not None]
                    if present:
                        params[pname] = C.combine(present, "options")
                n_text = n_vec = 0
                for e in entries:
                    if e.items and "text" in e.items:
                        n_text += 1
                        channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = self.ref(e.items["text"])
                    if e.items and "vector" in e.items:
                        n_vec += 1
                        channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = self.ref(e.items["vector"], True)
        self.out.search_calls.append(self.site("azure_search", node, qual, params, channels, builder, name,
                                               is_async))


def _security_key(value: Any, depth: int = 0) -> bool:
    """Does a filter object hold a security-named key (`user_id`, `allowed_groups`) at any depth?"""
    if not isinstance(value, dict) or depth > 3:
        return False
    return any(C.SECURITY_FIELD_RE.match(str(k)) or _security_key(v, depth + 1) for k, v in value.items())
