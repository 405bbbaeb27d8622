"""LangGraph.js graphs (`ragdiag.codescan.js_agents`): nodes, edges and which nodes search, judged across files.

Both ways: a node whose function reaches a search site in another module is a search node, unsecured when the
site carries no trimming and secured when it filters by the caller's id; a node reaching no site is not counted
as searching; a loop without a recursion limit is a cycle with no limit, one with `recursionLimit` is bounded.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from ragdiag.codescan import scan_path

RETRIEVAL = """
    import { FaissStore } from "@langchain/community/vectorstores/faiss";
    import { OpenAIEmbeddings } from "@langchain/openai";

    export async function makeRetriever(userId: string) {
      const store = await FaissStore.load("idx", new OpenAIEmbeddings());
      return store.asRetriever({ k: 4 });
    }
    """

GRAPH = """
    import { StateGraph, START, END } from "@langchain/langgraph";
    import { makeRetriever } from "./retrieval.js";

    async function retrieve(state: any, config: any) {
      const retriever = await makeRetriever(config.configurable.userId);
      return { docs: await retriever.invoke(state.query) };
    }

    async function grade(state: any) {
      return { ok: state.docs.length > 0 };
    }

    export const graph = new StateGraph(State)
      .addNode("retrieve", retrieve)
      .addNode("grade", grade)
      .addEdge(START, "retrieve")
      .addEdge("retrieve", "grade")
      .addConditionalEdges("grade", route, ["retrieve", END])
      .compile();
    """


def _scan(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan_path(tmp_path)


def test_a_node_reaching_a_search_in_another_module_is_an_unsecured_search_node_of_an_unbounded_loop(tmp_path):
    (g,) = _scan(tmp_path, {"src/retrieval.ts": RETRIEVAL, "src/graph.ts": GRAPH}).agent_graphs
    assert (g.file, g.framework, dict(g.nodes)) == ("src/graph.ts", "langgraph", {"retrieve": "retrieve", "grade": "grade"})
    assert g.search_nodes == ("retrieve",) and g.unsecured_search_nodes == ("retrieve",)
    assert g.has_cycle and g.loop_limit == ""


def test_a_node_whose_search_filters_by_the_user_is_secured_and_a_recursion_limit_bounds_the_loop(tmp_path):
    secured = RETRIEVAL.replace("store.asRetriever({ k: 4 })", "store.asRetriever({ k: 4, filter: { user_id: userId } })")
    bounded = GRAPH.replace(".compile();", ".compile();\nexport const run = (q: string) => graph.invoke({ query: q },"
                                           " { recursionLimit: 8 });")
    (g,) = _scan(tmp_path, {"src/retrieval.ts": secured, "src/graph.ts": bounded}).agent_graphs
    assert g.search_nodes == ("retrieve",) and g.unsecured_search_nodes == ()
    assert g.has_cycle and g.loop_limit == "recursionLimit=8" and g.loop_limit_effective is True
