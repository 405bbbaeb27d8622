"""What the scan knows it does not know (`ragdiag.codescan.gaps`, `ResolvedValue.outcome`), and the checks
that never pass on it.

Each mechanism both ways, on fixtures of our own: a value the resolver follows is ``resolved`` (or the
library's ``library_default``), one it cannot follow is ``unresolved`` with its expression and becomes
a gap; a check with a request-path gap says what is missing instead of passing, and the same
application fully readable passes (or says "none").
"""

from __future__ import annotations

from ragdiag.codescan import ResolvedValue, scan_path
from tests.codescan_trees import run_on_code as run
from tests.codescan_trees import tree as app


def ids(f) -> set[str]:
    """The message names of the headline, a skip's reason included."""
    out, todo = set(), list(f.headline_msgs)
    while todo:
        m = todo.pop()
        out.add(m.id.split(".", 1)[1])
        todo += [v for v in m.params.values() if hasattr(v, "id") and hasattr(v, "params")]
    return out


# ---- three outcomes ------------------------------------------------------------------------------------------

def test_a_value_is_resolved_a_library_default_or_unresolved_with_its_expression():
    known = ResolvedValue(5, True, "literal")
    default = ResolvedValue(4, True, "library_default:langchain", override="parameter")
    unknown = ResolvedValue(None, False, "call:make_filter", expression="make_filter(user)")
    assert (known.outcome, default.outcome, unknown.outcome) == ("resolved", "library_default", "unresolved")
    assert unknown.to_dict()["outcome"] == "unresolved" and unknown.to_dict()["expression"] == "make_filter(user)"


ROUTE = """
    from fastapi import FastAPI
    from azure.search.documents import SearchClient

    app = FastAPI()
    client = SearchClient("https://x.search.windows.net", "docs", None)


    @app.get("/ask")
    def ask(q: str, user: str):
        return list(client.search(search_text=q, top=5, filter={flt}))
    """


def test_an_unresolved_filter_is_a_gap_and_call_sites_does_not_pass(specs, tmp_path):
    faulty = app(tmp_path / "f", {"app.py": ROUTE.format(flt="build_filter(user)")})
    scan = scan_path(faulty)
    (gap,) = scan.gaps_in(scope="request")
    assert (gap.kind, gap.param, gap.location) == ("unresolved_param", "filter", "app.py:11")
    assert "build_filter(user)" in gap.detail
    f = run(specs, "call_sites", faulty)
    assert f.status == "warn" and "code_gaps" in ids(f)
    assert "build_filter(user)" in f.headline
    assert [r["gap"] for r in f.evidence_table("code_gaps").records()] == [
        "a search parameter that could not be resolved"]
    # the same route with a filter it can read: compared, and a pass
    sound = app(tmp_path / "s", {"app.py": ROUTE.format(flt="\"category eq 'hr'\"")})
    assert not scan_path(sound).gaps_in(scope="request")
    assert run(specs, "call_sites", sound).status == "pass"


def test_no_trimming_is_said_only_when_every_request_path_site_was_read(specs, tmp_path):
    unread = run(specs, "acl_trimming", app(tmp_path / "f", {"app.py": ROUTE.format(flt="build_filter(user)")}))
    assert unread.status == "skipped" and "no_mechanism_incomplete" in ids(unread)
    assert "cannot say there is none" in unread.headline and "build_filter(user)" in unread.headline
    read = run(specs, "acl_trimming", app(tmp_path / "s", {"app.py": ROUTE.format(flt="\"category eq 'hr'\"")}))
    assert read.status == "skipped" and "no_mechanism_request" in ids(read)


WRAPPER = """
    import requests
    from fastapi import FastAPI

    app = FastAPI()


    def search_index(url: str, payload: dict) -> dict:
        return requests.post(url, json=payload, timeout=10).json()


    @app.get("/ask")
    def ask(q: str):
        return search_index(SETTINGS.search_url, {"search": q, "top": 5})
    """


def test_retrieval_through_the_apps_own_http_wrapper_is_a_gap_not_a_pass(specs, tmp_path):
    root = app(tmp_path / "py", {"app.py": WRAPPER})
    scan = scan_path(root)
    assert not scan.search_calls
    (gap,) = scan.gaps_in(scope="all")
    assert (gap.kind, gap.location, gap.site_class) == ("http_wrapper", "app.py:9", "request")
    cs = run(specs, "call_sites", root)
    assert cs.status == "skipped" and "no_request_site_gaps" in ids(cs) and "app.py:9" in cs.headline
    acl = run(specs, "acl_trimming", root)
    assert acl.status == "skipped" and "no_mechanism_gaps_only" in ids(acl)
    ts = app(tmp_path / "ts", {"src/search.ts": """
        export async function searchIndex(url: string, body: object) {
          const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
          return res.json();
        }
        """})
    (js_gap,) = scan_path(ts).gaps_in(scope="all")
    assert js_gap.kind == "http_wrapper" and js_gap.language == "typescript"


def test_a_file_in_a_language_ragdiag_does_not_read_is_a_gap_when_it_mentions_retrieval(specs, tmp_path):
    root = app(tmp_path / "a", {"app.py": ROUTE.format(flt="\"category eq 'hr'\""),
                                "Search.java": "class Search { void run() { client.search(query); } }",
                                "Util.java": "class Util { int add(int a, int b) { return a + b; } }"})
    scan = scan_path(root)
    gaps = scan.gaps_in(scope="request")
    assert [(g.file, g.kind) for g in gaps] == [("Search.java", "unsupported_language")]
    f = run(specs, "call_sites", root)
    assert f.status == "warn" and "code_gaps" in ids(f) and "Search.java" in f.headline


def test_a_search_site_whose_body_is_unknown_has_no_absent_filter(tmp_path):
    """A REST site that posts a body the scanner cannot read: its filter is unknown, never "absent"."""
    root = app(tmp_path, {"app.py": """
        import requests
        from fastapi import FastAPI

        app = FastAPI()


        @app.post("/ask")
        def ask(body: dict):
            return requests.post("https://x.search.windows.net/indexes/i/docs/search", json=load_body(body)).json()


        @app.get("/all")
        def everything():
            return requests.post("https://x.search.windows.net/indexes/i/docs/search",
                                 json={"search": "q", "filter": "group_ids/any(g: g eq 'x')"}).json()
        """})
    scan = scan_path(root)
    opaque = next(s for s in scan.search_calls if s.function == "ask")
    assert opaque.params["body"].outcome == "unresolved"
    assert not [d for d in scan.drift() if d.kind == "security_clause"]  # unknown is not "absent"


# ---- retrieved content no search is traced into (wave 6) ------------------------------------------------------

GRAPH_STATE = {
    "src/retrieval.ts": """
        import { FaissStore } from "@langchain/community/vectorstores/faiss";
        import { OpenAIEmbeddings } from "@langchain/openai";

        export async function makeRetriever() {
          const store = await FaissStore.load("idx", new OpenAIEmbeddings());
          return store.asRetriever({ k: 4 });
        }
        """,
    "src/graph.ts": """
        import { ChatOpenAI } from "@langchain/openai";
        import { makeRetriever } from "./retrieval.js";

        async function retrieve(state: any) {
          const retriever = await makeRetriever();
          return { retrievedDocs: await retriever.invoke(state.query) };
        }

        async function respond(state: any) {
          const model = new ChatOpenAI({ model: "gpt-4o-mini" });
          const docs = state.retrievedDocs.map((d: any) => d.pageContent).join("\\n");
          return { messages: [await model.invoke([{ role: "system", content: `Answer from: ${docs}` }])] };
        }
        """,
}


def test_retrieved_content_reaching_a_prompt_through_graph_state_is_unresolved_not_unbounded(specs, tmp_path):
    scan = scan_path(app(tmp_path, GRAPH_STATE))
    (call,) = [c for c in scan.llm_calls if c.file == "src/graph.ts"]
    assert call.retrieved_context and call.context_unresolved and not call.context_from
    assert any(g.kind == "unresolved_context" and g.file == "src/graph.ts" for g in scan.gaps)
    assert call not in scan.unbounded_llm_calls()
    f = run(specs, "context_budgets", tmp_path)
    assert f.status != "pass" and not [loc for loc in f.locations if loc.file == "src/graph.ts"
                                       and loc.message_msg is not None and loc.message_msg.id.endswith("loc_unbounded")]


def test_retrieved_content_traced_to_its_search_keeps_its_verdict(specs, tmp_path):
    # sound variant: the same prompt filled in the function that searches is traced (bounded by the count 4)
    traced = {"src/graph.ts": """
        import { ChatOpenAI } from "@langchain/openai";
        import { FaissStore } from "@langchain/community/vectorstores/faiss";
        import { OpenAIEmbeddings } from "@langchain/openai";

        export async function respond(question: string) {
          const store = await FaissStore.load("idx", new OpenAIEmbeddings());
          const retrievedDocs = await store.similaritySearch(question, 4);
          const docs = retrievedDocs.map((d: any) => d.pageContent).join("\\n");
          const model = new ChatOpenAI({ model: "gpt-4o-mini" });
          return model.invoke([{ role: "system", content: `Answer from: ${docs}` }]);
        }
        """}
    scan = scan_path(app(tmp_path, traced))
    (call,) = scan.llm_calls
    assert call.retrieved_context and not call.context_unresolved and call.context_from


REDUCED_STATE = {
    "app/state.py": """
        import operator
        from dataclasses import dataclass, field
        from typing import Annotated


        @dataclass
        class State:
            documents: Annotated[list, operator.add] = field(default_factory=list)
        """,
    "app/graph.py": """
        from langchain_openai import ChatOpenAI
        from langgraph.graph import StateGraph
        from app.state import State


        def retrieve(state: State):
            return {"documents": retriever.invoke(state.question)}


        def respond(state: State):
            context = "\\n".join(d.page_content for d in state.documents)
            model = ChatOpenAI(model="gpt-4o-mini")
            messages = [{"role": "system", "content": f"Answer from: {context}"}, {"role": "user", "content": state.question}]
            return {"messages": [model.invoke(messages)]}


        retriever = vectorstore.as_retriever(search_kwargs={"k": 4})
        graph = StateGraph(State).add_node("retrieve", retrieve).add_node("respond", respond).compile()
        """,
}


def test_graph_state_documents_with_a_reducer_accumulate_so_the_prompt_is_unbounded(tmp_path):
    scan = scan_path(app(tmp_path, REDUCED_STATE))
    (call,) = scan.llm_calls
    assert call.retrieved_context and not call.context_unresolved and "reducer" in call.bound_evidence
    assert call in scan.unbounded_llm_calls()
    # sound variant: the same field without a reducer is replaced per step: its size is not known, no verdict
    plain = dict(REDUCED_STATE, **{"app/state.py": REDUCED_STATE["app/state.py"].replace(
        "Annotated[list, operator.add]", "list")})
    scan = scan_path(app(tmp_path / "plain", plain))
    (call,) = scan.llm_calls
    assert call.context_unresolved and call not in scan.unbounded_llm_calls()
