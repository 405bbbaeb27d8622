"""Reachability from entry points (`ragdiag.codescan.reach`): which sites are on the request path.

Each mechanism both ways: an entry point reaching a site through another module is request
path; the same site with nothing reaching it is `unreachable` and no check judges it.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.codescan import scan_path
from ragdiag.codescan.reach import CallGraph, js_graph, langgraph_entries, python_graph
from tests.codescan_trees import tree as _tree

SEARCH = '''from azure.search.documents import SearchClient

client = SearchClient("https://x.search.windows.net", "idx", None)


def find(question: str) -> list:
    return list(client.search(search_text=question, top=5))


def old_find(question: str) -> list:
    return list(client.search(search_text=question, top=50))
'''


def _classes(root: Path) -> dict[str, tuple[str, str]]:
    scan = scan_path(root)
    return {f"{s.function}": (s.site_class, s.class_reason) for s in scan.search_calls}


def test_a_route_reaches_a_site_in_another_module_and_a_dead_function_is_unreachable(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app/api.py": "from fastapi import FastAPI\nfrom app.services.search import find\n\napp = FastAPI()\n\n\n"
                      "@app.post('/ask')\ndef ask(q: str) -> list:\n    return find(q)\n",
        "app/services/search.py": SEARCH,
    })
    got = _classes(root)
    assert got["find"][0] == "request" and "app/api.py" in got["find"][1] and "ask" in got["find"][1]
    assert got["old_find"][0] == "unreachable"
    assert "no entry point reaches it" in got["old_find"][1] and "request" in got["old_find"][1]


def test_the_real_caller_is_a_lifespan_not_the_test_that_also_calls_it(tmp_path: Path) -> None:
    # the only caller by name outside the app is a test; the app reaches it from its lifespan
    root = _tree(tmp_path, {
        "src/main.py": "from contextlib import asynccontextmanager\nfrom fastapi import FastAPI\n"
                       "from src.searcher import Searcher\n\n\n@asynccontextmanager\nasync def lifespan(app):\n"
                       "    app.state.searcher = Searcher()\n    yield\n\n\napp = FastAPI(lifespan=lifespan)\n",
        "src/searcher.py": "from azure.search.documents import SearchClient\n\n\nclass Searcher:\n"
                           "    def __init__(self):\n        self.client = SearchClient('e', 'i', None)\n\n"
                           "    def lookup(self, q):\n        return self.client.search(search_text=q, top=3)\n",
        "tests/test_searcher.py": "from src.searcher import Searcher\n\n\ndef test_lookup():\n"
                                  "    Searcher().lookup('x')\n",
    })
    cls, why = _classes(root)["Searcher.lookup"]
    assert cls == "request" and "src/main.py" in why


def test_a_plugin_class_is_reached_only_when_it_is_built_on_a_reached_path(tmp_path: Path) -> None:
    plugin = ("import requests\n\n\nclass RetrievalPlugin:\n    @kernel_function(name='retrieve')\n"
              "    def retrieve(self, q):\n        return self._post({'search': q, 'top': 3})\n\n"
              "    def _post(self, body):\n        return requests.post('https://s.search.windows.net/indexes/i/docs/search',"
              " json=body).json()\n")
    app = ("from fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get('/chat')\ndef chat(q: str):\n"
           "    return 'hello'\n")
    dead = _tree(tmp_path / "dead", {"api.py": app, "plugins/retrieval.py": plugin})
    assert _classes(dead)["RetrievalPlugin._post"][0] == "unreachable"
    live = _tree(tmp_path / "live", {
        "api.py": app.replace("    return 'hello'\n", "    kernel.add_plugin(RetrievalPlugin())\n    return kernel.run(q)\n"),
        "plugins/retrieval.py": plugin})
    assert _classes(live)["RetrievalPlugin._post"][0] == "request"


def test_a_graph_served_by_langgraph_json_reaches_its_nodes_in_other_modules(tmp_path: Path) -> None:
    files = {
        "langgraph.json": '{"graphs": {"agent": "./src/agent/graph.py:graph"}}',
        "src/agent/graph.py": "from langgraph.graph import StateGraph\nfrom agent.research.graph import graph as "
                              "research\n\n\nasync def conduct(state):\n    return await research.ainvoke(state)\n\n\n"
                              "builder = StateGraph(dict)\nbuilder.add_node(conduct)\ngraph = builder.compile()\n",
        "src/agent/research/graph.py": "from langgraph.graph import StateGraph\nfrom shared.retrieval import fetch\n\n\n"
                                       "async def retrieve(state):\n    return fetch(state['q'])\n\n\n"
                                       "builder = StateGraph(dict)\nbuilder.add_node(retrieve)\ngraph = builder.compile()\n",
        "src/shared/retrieval.py": "def fetch(q):\n    return store.as_retriever(search_kwargs={'k': 4}).invoke(q)\n",
        "src/other.py": "from fastapi import FastAPI\napp = FastAPI()\n",
    }
    root = _tree(tmp_path, files)
    cls, why = _classes(root)["fetch"]
    assert cls == "request" and "langgraph.json" in why
    # without the server's configuration nothing serves the graph: the same site is unreachable
    (root / "langgraph.json").unlink()
    assert _classes(root)["fetch"][0] == "unreachable"


def test_express_routes_reach_a_service_method_and_a_dead_js_helper_is_unreachable(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "src/routes/chat.js": "const express = require('express');\nconst router = express.Router();\n"
                              "const svc = require('../services/search');\n"
                              "router.post('/chat', async (req, res) => {\n  res.json(await svc.answer(req.body.q));\n});\n"
                              "module.exports = router;\n",
        "src/services/search.js": "class Search {\n  async answer(q) {\n    const r = await fetch("
                                  "`${process.env.EP}/indexes/i/docs/search?api-version=2024-07-01`, {method: 'POST', "
                                  "body: JSON.stringify({search: q, top: 5})});\n    return r.json();\n  }\n}\n"
                                  "async function legacy(q) {\n  return fetch(`${process.env.EP}/indexes/i/docs/search`"
                                  ", {method: 'POST', body: JSON.stringify({search: q, top: 50})});\n}\n"
                                  "module.exports = new Search();\n",
    })
    got = _classes(root)
    assert got["Search.answer"][0] == "request"
    assert got["legacy"][0] == "unreachable"


def test_without_any_request_entry_point_reachability_is_unknown_not_unreachable(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"lib/search.py": SEARCH})
    cls, why = _classes(root)["old_find"]
    assert cls == "request" and "reachability is unknown" in why


def test_unreachable_sites_are_not_judged_by_call_sites(tmp_path: Path) -> None:
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config

    root = _tree(tmp_path / "app", {
        "api.py": "from fastapi import FastAPI\nfrom search import find\n\napp = FastAPI()\n\n\n"
                  "@app.get('/x')\ndef x(q):\n    return find(q)\n",
        "search.py": SEARCH.replace("top=50", "top=50, filter=\"confidence ge 0.8\""),
    })
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[audit]\nname = "t"\n\n[inputs]\nclient_code = "{root.as_posix()}"\n', encoding="utf-8")
    ctx = build_context(load_config(cfg), progress=False)
    f = {x.check_id: x for x in run_checks(ctx, stop_on_signals=False).findings}["call_sites"]
    assert f.observed == {"call_sites_compared": 1}
    assert not f.evidence_table("drift")  # the dead site's clause is no drift of the request path
    classes = {r[0]: r[1] for r in f.evidence_table("call_sites").rows}
    assert "unreachable" in str(classes["search.py:11"])


def test_graph_helpers() -> None:
    nodes = python_graph("m.py", "def a():\n    b()\n\n\ndef b():\n    pass\n\n\nif __name__ == '__main__':\n    a()\n")
    graph = CallGraph(nodes)
    b = graph.node_at("m.py", "b", 6)
    assert graph.entry_of(b)[0] == "script"
    assert [n.kind for n in js_graph("web/x.ts", "export function GET() {}\n")] == ["func", "module"]
    assert langgraph_entries('{"graphs": {"g": "./src/g.py:graph", "h": {"path": "h.py:x"}}}') == ["src/g.py", "h.py"]
    assert langgraph_entries("not json") == []


def test_a_route_a_test_defines_is_a_test_not_the_request_path(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"app/search.py": SEARCH, "app/api.py": (
        "from fastapi import FastAPI\nfrom app.search import find\n\napp = FastAPI()\n\n\n"
        "@app.get('/ask')\ndef ask(q: str):\n    return find(q)\n"), "tests/test_api.py": (
        "from fastapi import FastAPI\nfrom app.search import old_find\n\napp = FastAPI()\n\n\n"
        "@app.get('/probe')\ndef probe(q: str):\n    return old_find(q)\n")})
    classes = _classes(root)
    assert classes["find"][0] == "request"
    assert classes["old_find"][0] == "test" and "tests/test_api.py" in classes["old_find"][1]


def test_a_call_on_self_reaches_the_own_class_only(tmp_path: Path) -> None:
    """`self.run(...)` in one class is not a call of every other class's `run` (a dead plugin stays dead)."""
    plugin = ('from azure.search.documents import SearchClient\n\nclient = SearchClient("e", "i", None)\n\n\n'
              'class DeadPlugin:\n    def run(self, q):\n        return list(client.search(search_text=q, top=3))\n')
    live = ('from fastapi import FastAPI\n\napp = FastAPI()\n\n\nclass Worker:\n    def run(self, q):\n'
            '        return q.upper()\n\n    def go(self, q):\n        return self.run(q)\n\n\n'
            '@app.get("/w")\ndef w(q: str):\n    return Worker().go(q)\n')
    classes = _classes(_tree(tmp_path, {"plugins/dead.py": plugin, "app.py": live}))
    assert classes["DeadPlugin.run"][0] == "unreachable"


def test_windows_line_endings_do_not_cut_a_class_short(tmp_path: Path) -> None:
    """A blank CRLF line inside a class is no dedent: its methods stay its methods, not module code."""
    text = ('from azure.search.documents import SearchClient\r\n\r\nclient = SearchClient("e", "i", None)\r\n\r\n'
            'class Plugin:\r\n    def a(self):\r\n        return 1\r\n\r\n    def find(self, q):\r\n'
            '        return list(client.search(search_text=q, top=3))\r\n')
    nodes = {n.qual: n for n in python_graph("p.py", text)}
    assert nodes["Plugin"].end >= nodes["Plugin.find"].end
    assert "search" not in nodes["<module>"].calls


def test_the_reason_names_the_path_from_the_entry_point(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"app/search.py": SEARCH, "app/api.py": (
        "from fastapi import FastAPI\nfrom app.search import find\n\napp = FastAPI()\n\n\n"
        "def helper(q):\n    return find(q)\n\n\n@app.get('/ask')\ndef ask(q: str):\n    return helper(q)\n")})
    reason = _classes(root)["find"][1]
    assert reason.startswith("reachable from app/api.py") and "helper -> find" in reason


TS_SEARCH = '''import { SearchClient } from "@azure/search-documents";

const client = new SearchClient("https://x.search.windows.net", "idx", null as any);

export const findDocs = async (
  question: string,
  k: number,
): Promise<Array<{ id: string }>> => {
  const results = await client.search(question, { top: 5 });
  const out: Array<{ id: string }> = [];
  for await (const r of results.results) out.push(r.document as any);
  return out;
};

export const oldFind = async <T,>(question: string): Promise<T[]> => {
  const results = await client.search(question, { top: 50 });
  return [] as T[];
};
'''


def test_a_typed_arrow_function_is_a_node_a_route_reaches_through_another_module(tmp_path: Path) -> None:
    # `const f = async (a: A): Promise<R> => {...}` (a return type, generics, a multi-line typed
    # parameter list): the call graph must see it, or nothing below the route is reached
    root = _tree(tmp_path, {
        "src/app/api/chat/route.ts": 'import { answer } from "@/features/chat";\n\n'
                                     "export async function POST(req: Request) {\n  return answer(await req.text());\n}\n",
        "src/features/chat.ts": 'import { findDocs } from "./search";\n\n'
                                "export const answer = async (props: {\n  text: string;\n}): Promise<string> => {\n"
                                "  const docs = await findDocs(props.text, 10);\n  return JSON.stringify(docs);\n};\n",
        "src/features/search.ts": TS_SEARCH,
    })
    got = _classes(root)
    assert got["findDocs"][0] == "request" and "route.ts" in got["findDocs"][1]
    assert got["oldFind"][0] == "unreachable"  # typed and generic, and nothing calls it


def test_typed_arrow_functions_have_their_own_extent() -> None:
    nodes = {n.name: (n.start, n.end) for n in js_graph("src/features/search.ts", TS_SEARCH) if n.kind == "func"}
    # the braces of a typed parameter or a return type are no body: each function ends at its own brace
    assert nodes["findDocs"] == (5, 13) and nodes["oldFind"] == (15, 18)


QDRANT_STORE = '''from qdrant_client import AsyncQdrantClient


class Store:
    def __init__(self, url):
        self._client = AsyncQdrantClient(location=url)

    async def find(self, vector, limit: int = 10):
        return await self._client.query_points(collection_name="notes", query=vector, limit=limit)
'''


def test_an_mcp_server_module_is_a_request_entry_reaching_a_site_in_another_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "srv/server.py": "from fastmcp import FastMCP\nfrom srv.store import Store\n\nmcp = FastMCP('notes')\n"
                         "store = Store('http://q')\n\n\n@mcp.tool()\nasync def recall(vector: list) -> list:\n"
                         "    return await store.find(vector)\n",
        "srv/store.py": QDRANT_STORE,
        "tests/test_store.py": "from srv.store import Store\n\n\nasync def test_find():\n"
                               "    await Store('memory').find([0.1])\n",
    })
    cls, why = _classes(root)["Store.find"]
    assert cls == "request" and "srv/server.py" in why
    # sound variant: the same store beside a plain module: no entry point is known, so the site is not said to be
    # reached from one (it stays application code of unknown reach)
    root = _tree(tmp_path / "no_server", {"srv/server.py": "from srv.store import Store\n\nstore = Store('q')\n",
                                          "srv/store.py": QDRANT_STORE})
    cls, why = _classes(root)["Store.find"]
    assert "srv/server.py" not in why and "no request entry point" in why
def test_imports_are_matched_at_the_lines_holding_import_only() -> None:
    from ragdiag.codescan.reach import (
        _PY_FROM,
        _PY_IMPORT,
        _lines_holding,
        _matches_at,
        _py_imports,
    )

    text = ("import a\nfrom b import (c,\nimport d,\n  from e import f)\n  import g, h as i\nfrom . import j\n"
            "x = 'import'\nfrom .k import l  # import\n")
    for rx in (_PY_FROM, _PY_IMPORT):
        assert [m.span() for m in _matches_at(rx, text, _lines_holding(text, "import"))] == \
            [m.span() for m in rx.finditer(text)]
    # each pattern is matched on its own: the `from b import (...)` names are read up to its `)`, and
    # `import d,` inside the parentheses is still a line starting with `import` for the other pattern
    assert _py_imports("pkg/mod.py", text) == ("b", "b.c", "b.import", "b.d", "b.from", "b.e", "b.f", "pkg", "pkg.j",
                                               "pkg.k", "pkg.k.l", "a", "d", "g", "h")
    assert _lines_holding("no\nimports here\n", "import") == [3] and _lines_holding("none", "import") == []
