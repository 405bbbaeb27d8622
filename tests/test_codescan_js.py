"""Tests of ragdiag.codescan on small JavaScript/TypeScript snippets (tree-sitter)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ragdiag.codescan import CodeScan, scan_path


def scan(tmp_path: Path, files: dict[str, str]) -> CodeScan:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return scan_path(tmp_path)


def test_fetch_rest_search_with_imported_constants(tmp_path):
    s = scan(tmp_path, {
        "src/config.ts": """
            export const SEARCH_ENDPOINT = process.env.SEARCH_ENDPOINT ?? "https://muster.search.windows.net";
            export const TOP = 10;
            """,
        "src/search.ts": """
            import { SEARCH_ENDPOINT, TOP } from "./config";

            const URL = `${SEARCH_ENDPOINT}/indexes/muster/docs/search?api-version=2025-09-01`;

            export async function searchDocuments(query: string): Promise<unknown> {
              const body = {
                search: query,
                queryType: "semantic",
                semanticConfiguration: "default",
                semanticQuery: query,
                top: TOP,
                vectorQueries: [{ kind: "text", text: query, fields: "content_vector", k: 20, exhaustive: true }],
                filter: "confidence_score ge " + "0.85",
              };
              const res = await fetch(URL, { method: "POST", body: JSON.stringify(body) });
              return res.json();
            }
            """})
    site = s.search_calls[0]
    assert (site.location, site.kind, site.language) == ("src/search.ts:15", "rest_search", "typescript")
    assert site.function == "searchDocuments" and site.module == "src.search" and site.is_async
    assert site.value("top") == 10 and site.param("top").source == "import:src.config.TOP"
    assert site.value("k") == 20 and site.value("exhaustive") is True
    assert site.value("vector_fields") == "content_vector"
    assert site.value("filter") == "confidence_score ge 0.85"
    assert site.value("query_type") == "semantic" and site.value("semantic_configuration") == "default"
    assert site.channel_vars == {"search_text": "query", "semantic_query": "query", "vector_text": "query"}
    assert site.shared_text


def test_axios_post_and_config_form(tmp_path):
    s = scan(tmp_path, {"api.js": """
        const axios = require("axios");
        const BASE = "https://muster.search.windows.net/indexes/muster";

        async function suggest(prefix) {
          const { data } = await axios.post(`${BASE}/docs/search?api-version=2025-09-01`,
            { search: prefix, top: 5, select: "title" }, { headers: { "api-key": key } });
          return data.value;
        }

        function viaConfig(keywords, question) {
          return axios({ url: BASE + "/docs/search", method: "post",
                         data: { search: keywords, semanticQuery: question, top: 7 } });
        }

        function notSearch() {
          return axios.post(`${BASE}/docs/index`, { value: [] });
        }
        """})
    assert [(c.location, c.kind, c.language) for c in s.search_calls] == [
        ("api.js:5", "rest_search", "javascript"), ("api.js:11", "rest_search", "javascript")]
    a, b = s.search_calls
    assert a.value("top") == 5 and a.value("select") == "title" and a.channel_vars == {"search_text": "prefix"}
    assert b.value("top") == 7 and not b.shared_text
    assert b.channel_vars == {"search_text": "keywords", "semantic_query": "question"}


def test_js_sdk_search(tmp_path):
    s = scan(tmp_path, {"sdk.ts": """
        import { SearchClient, AzureKeyCredential } from "@azure/search-documents";

        const client = new SearchClient("https://x", "muster", new AzureKeyCredential("k"));

        export async function find(question: string, vector: number[]) {
          const results = await client.search(question, {
            top: 8,
            filter: "level eq 'evidence'",
            queryType: "semantic",
            semanticSearchOptions: { configurationName: "default", semanticQuery: question },
            vectorSearchOptions: { queries: [{ kind: "vector", vector, kNearestNeighborsCount: 50,
                                               fields: ["content_vector"], exhaustive: false }],
                                   filterMode: "preFilter" },
          });
          return results;
        }
        """})
    site = s.search_calls[0]
    assert (site.location, site.kind) == ("sdk.ts:6", "azure_search")
    assert site.value("top") == 8 and site.value("semantic_configuration") == "default"
    assert site.value("k") == 50 and site.value("exhaustive") is False
    assert site.value("vector_filter_mode") == "preFilter" and site.value("vector_fields") == ["content_vector"]
    assert site.channel_vars == {"search_text": "question", "semantic_query": "question", "vector": "vector"}
    assert site.shared_text


def test_faiss_langchain_llamaindex_sql(tmp_path):
    s = scan(tmp_path, {"misc.ts": """
        import { FaissStore } from "@langchain/community/vectorstores/faiss";

        export async function lc(store: FaissStore, q: string) {
          const retriever = store.asRetriever({ k: 6 });
          return store.similaritySearch(q, 4);
        }

        export function faissNode(index: any, xq: number[]) {
          return index.search(xq, 10);
        }

        export function llama(vectorIndex: any) {
          return vectorIndex.asRetriever({ similarityTopK: 3 });
        }

        const NEAREST = `SELECT id FROM chunks ORDER BY embedding <=> $1 LIMIT 5`;
        """})
    found = [(c.location, c.kind) for c in s.search_calls]
    assert found == [("misc.ts:4", "langchain"), ("misc.ts:5", "langchain"), ("misc.ts:9", "faiss_search"),
                     ("misc.ts:13", "llamaindex"), ("misc.ts:16", "sql_similarity")]
    by_loc = {c.location: c for c in s.search_calls}
    assert by_loc["misc.ts:4"].value("k") == 6
    assert by_loc["misc.ts:5"].value("k") == 4 and by_loc["misc.ts:5"].channel_vars == {"search_text": "q"}
    assert by_loc["misc.ts:9"].value("k") == 10
    assert by_loc["misc.ts:13"].value("k") == 3
    assert by_loc["misc.ts:16"].value("k") == 5


def test_llm_bounded_unbounded_budgets_citations_prompts(tmp_path):
    s = scan(tmp_path, {"chat.ts": """
        import OpenAI from "openai";

        const MAX_CONTEXT_CHARS = 8000;
        const QUERY_PROMPT = `You write search queries.
        Write between 2 and 7 words.`;
        const openai = new OpenAI();

        export async function unbounded(question: string, hits: Hit[]) {
          const context = hits.map((h) => h.content).join("\\n");
          return openai.chat.completions.create({ model: "gpt-4o",
            messages: [{ role: "user", content: `${context}\\n${question}` }] });
        }

        export async function bounded(question: string, hits: Hit[]) {
          let context = "";
          for (const h of hits) {
            if (context.length + h.content.length > MAX_CONTEXT_CHARS) break;
            context += h.content;
          }
          return openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: context }] });
        }

        export function validateCitations(cited: string[], retrievedIds: Set<string>): string[] {
          return cited.filter((id) => retrievedIds.has(id));
        }

        export function renderCitations(cited: string[]): string {
          return cited.map((c) => `[${c}]`).join(" ");
        }
        """})
    calls = {c.function: c for c in s.llm_calls}
    assert calls["unbounded"].kind == "openai_chat" and not calls["unbounded"].context_bounded
    assert calls["unbounded"].retrieved_context and "hits" in calls["unbounded"].context_vars
    assert calls["bounded"].context_bounded and "MAX_CONTEXT_CHARS" in calls["bounded"].bound_evidence
    assert [c.location for c in s.unbounded_llm_calls()] == ["chat.ts:10"]
    assert [(b.name, b.value, b.line) for b in s.budget_constants] == [("MAX_CONTEXT_CHARS", 8000, 3)]
    checks = {c.function: c for c in s.citation_checks}
    assert checks["validateCitations"].validated and checks["validateCitations"].evidence == "retrievedIds.has(id)"
    assert not checks["renderCitations"].validated
    assert [(r.location, r.min_words, r.max_words) for r in s.prompt_rules] == [("chat.ts:5", 2, 7)]


def test_security_filters_template_strings(tmp_path):
    s = scan(tmp_path, {"sec.ts": """
        export function fromRequest(req: Request) {
          const group = req.headers.get("x-group");
          return `group_ids/any(g: g eq '${group}')`;
        }

        export function escaped(identity: Identity) {
          const groups = identity.groups.map(escapeOData).join("|");
          return `group_ids/any(g: search.in(g, '${groups}', '|'))`;
        }

        export function replaced(user: User) {
          return "allowed_users/any(u: u eq '" + user.oid.replace(/'/g, "''") + "')";
        }
        """})
    sites = {x.function: x for x in s.security_filters}
    r = sites["fromRequest"]
    assert r.fstring and not r.escaped and r.from_request and r.injection_risk and r.language == "typescript"
    e = sites["escaped"]
    assert e.uses_search_in and e.escaped and e.from_identity and not e.from_request
    c = sites["replaced"]
    assert c.fstring and c.escaped and c.fields == ("allowed_users",)


def test_class_methods_locals_and_builder(tmp_path):
    s = scan(tmp_path, {"svc.ts": """
        const URL = "https://x/indexes/muster/docs/search";

        function baseBody(text: string) {
          return { search: text, top: 5, filter: "level eq 'evidence'" };
        }

        export class SearchService {
          async run(question: string) {
            const body = { ...baseBody(question), semanticQuery: question };
            return fetch(URL, { method: "POST", body: JSON.stringify(body) });
          }
        }
        """})
    site = s.search_calls[0]
    assert site.function == "SearchService.run"
    assert site.builder == "svc:baseBody"
    assert site.value("top") == 5 and site.value("filter") == "level eq 'evidence'"
    assert site.channel_vars == {"search_text": "text", "semantic_query": "question"}


def test_tsx_jsx_and_syntax_errors(tmp_path):
    s = scan(tmp_path, {
        "ui/View.tsx": """
            export const View = ({ q }: { q: string }) => {
              const run = () => fetch("/indexes/muster/docs/search", { method: "POST", body: JSON.stringify({ search: q }) });
              return <button onClick={run}>{q}</button>;
            };
            """,
        "ui/old.jsx": """
            export function Old({ q }) { return <div>{q}</div>; }
            """,
        "broken.js": """
            function ( {
              fetch("/indexes/muster/docs/search", { body: JSON.stringify({ search: "x" }) });
            """,
    })
    assert any(c.file == "ui/View.tsx" and c.kind == "rest_search" for c in s.search_calls)
    reasons = {x.file: x.reason for x in s.skipped}
    assert "broken.js" in reasons and "syntax error" in reasons["broken.js"]
    assert "ui/View.tsx" not in reasons and "ui/old.jsx" not in reasons


def test_reassigned_let_is_not_guessed(tmp_path):
    s = scan(tmp_path, {"r.js": """
        async function f(q, strict) {
          let top = 5;
          if (strict) { top = 50; }
          const fixed = 7;
          await fetch("/indexes/muster/docs/search", { method: "POST", body: JSON.stringify({ search: q, top }) });
          return fetch("/indexes/muster/docs/search", { method: "POST", body: JSON.stringify({ search: q, top: fixed }) });
        }
        """})
    a, b = s.search_calls
    assert not a.param("top").resolved and a.param("top").source == "local:top (reassigned)"
    assert b.value("top") == 7 and b.param("top").source == "local:fixed"


def test_sdk_options_without_top_get_the_services_default_50_but_spread_options_do_not(tmp_path):
    src = (
        'import { SearchClient } from "@azure/search-documents";\n'
        'const client = new SearchClient("e", "i", null as any);\n'
        "export async function a(q: string) {\n  return client.search(q, { filter: \"kind eq 'x'\" });\n}\n"
        "export async function b(q: string) {\n  return client.search(q, { top: 7, filter: \"kind eq 'x'\" });\n}\n"
        "export async function c(q: string, extra: any) {\n"
        "  return client.search(q, { ...extra, filter: \"kind eq 'x'\" });\n}\n"
    )
    got = {s.function: s.params.get("top") for s in scan(tmp_path, {"src/search.ts": src}).search_calls}
    assert (got["a"].value, got["a"].outcome) == (50, "library_default")
    assert (got["b"].value, got["b"].outcome) == (7, "resolved")
    assert got["c"] is None or got["c"].outcome != "library_default"


def test_a_query_engine_over_an_index_built_elsewhere_is_delegated_retrieval(tmp_path):
    engine = (
        'import { VectorStoreIndex } from "llamaindex";\n\n'
        "export function engine(index: VectorStoreIndex) {\n  return index.asQueryEngine({ similarityTopK: 3 });\n}\n"
    )
    plain = 'import { VectorStoreIndex } from "llamaindex";\n\nexport const n = 1;\n'
    got = scan(tmp_path, {"src/engine.ts": engine, "src/other.ts": plain})
    rows = [d for d in got.delegated if d.file == "src/engine.ts"]
    assert len(rows) == 1 and rows[0].framework == "llamaindex" and rows[0].kind == "vector_store"
    assert (rows[0].settings["k"].value, rows[0].settings["k"].resolved) == (3, True)
    assert not [d for d in got.delegated if d.file == "src/other.ts"]


def test_a_retriever_beside_its_store_adds_no_second_delegated_row(tmp_path):
    src = (
        'import { FaissStore } from "@langchain/community/vectorstores/faiss";\n'
        'import { OpenAIEmbeddings } from "@langchain/openai";\n\n'
        "export async function retriever() {\n"
        '  const store = await FaissStore.load("idx", new OpenAIEmbeddings());\n  return store.asRetriever();\n}\n'
    )
    rows = [d for d in scan(tmp_path, {"src/r.ts": src}).delegated if d.file == "src/r.ts"]
    assert len(rows) == 1 and rows[0].store == "FaissStore"


RETRIEVER = """
import { Client } from "@elastic/elasticsearch";
import { ElasticVectorSearch } from "@langchain/community/vectorstores/elasticsearch";
import { OpenAIEmbeddings } from "@langchain/openai";

export async function makeRetriever(userId: string, extra: Record<string, any>) {
  const store = new ElasticVectorSearch(new OpenAIEmbeddings(), { client: new Client({}), indexName: "docs" });
  const filter = { ...extra, user_id: userId };
  return store.asRetriever({ filter });
}
"""


def test_a_langchain_store_imported_from_its_vectorstores_module_gets_the_library_default_k(tmp_path):
    (site,) = scan(tmp_path, {"src/r.ts": RETRIEVER}).search_calls
    assert (site.kind, site.params["k"].value, site.params["k"].source) == ("langchain", 4, "library_default:langchain")
    # sound variant: a class of the app's own of the same shape is no library store: k stays unresolved
    own = RETRIEVER.replace('import { ElasticVectorSearch } from "@langchain/community/vectorstores/elasticsearch";',
                            'import { ElasticVectorSearch } from "./our-search";')
    (site,) = scan(tmp_path / "own", {"src/r.ts": own}).search_calls
    assert site.params["k"].resolved is False


def test_a_framework_filter_object_with_a_security_key_is_trimming(tmp_path):
    got = scan(tmp_path, {"src/r.ts": RETRIEVER})
    assert [(a.mechanism, a.file) for a in got.acl_sites] == [("framework_filter", "src/r.ts")]
    # nested (MongoDB's preFilter) counts too; a filter on a content field does not
    nested = RETRIEVER.replace("const filter = { ...extra, user_id: userId };",
                               "const filter = { preFilter: { user_id: { $eq: userId } } };")
    assert [a.mechanism for a in scan(tmp_path / "n", {"src/r.ts": nested}).acl_sites] == ["framework_filter"]
    content = RETRIEVER.replace("const filter = { ...extra, user_id: userId };",
                                "const filter = { ...extra, category: userId };")
    assert scan(tmp_path / "c", {"src/r.ts": content}).acl_sites == ()


def test_native_vector_database_clients_are_search_sites_in_typescript(tmp_path):
    got = scan(tmp_path, {"src/r.ts": """
import weaviate from "weaviate-client";
import { QdrantClient } from "@qdrant/js-client-rest";

const qdrant = new QdrantClient({ url: "http://q" });

export async function tenantHits(collection: any, question: string) {
  return collection.query.nearText(question, { limit: 5 });
}

export async function listing(collection: any) {
  return collection.query.fetchObjects({ limit: 6 });
}

export async function qdrantHits(vector: number[]) {
  return qdrant.search("docs", { vector, limit: 8, filter: { must: [{ key: "owner_id", match: { value: "u" } }] } });
}

export async function chromaHits(collection: any, q: string) {
  return collection.query({ queryTexts: [q], nResults: 2 });
}

export async function notASearch(db: any) {
  return db.query("SELECT 1");
}
"""})
    sites = {x.function: (x.kind, x.params["k"].value) for x in got.search_calls}
    assert sites == {"tenantHits": ("vector_db", 5), "listing": ("vector_db", 6), "qdrantHits": ("vector_db", 8),
                     "chromaHits": ("vector_db", 2)}
