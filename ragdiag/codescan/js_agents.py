"""LangGraph.js graphs (`new StateGraph(...).addNode("retrieve", retrieve)...compile()`) as `AgentGraph` records.

The Python pass reads LangGraph graphs from the syntax tree; a JavaScript/TypeScript graph was no graph at all, so
an agent's loop, its search nodes and their trimming went unreported. This pass reads a graph's nodes and edges
from the file's text and decides, on the merged scan, which nodes search: a node's function holds a search site,
or calls (directly or one call further, matched by name as the call graph matches) a function that does, in any
file of the tree. A search node is unsecured when one of the sites it reaches carries no trimming mechanism; a
node the scan cannot tie to a site is not counted as searching (nothing is claimed about it).
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan.model import AgentGraph
from ragdiag.codescan.python_agents import _REWRITE, _cycle_nodes, _cyclic

__all__ = ["js_agent_graphs"]

_JS_FILES = (".ts", ".tsx", ".js", ".mjs", ".cjs", ".mts")
_ADD_NODE = re.compile(r"\.addNode\(\s*[\"'`](\w+)[\"'`]\s*,\s*([\w.]+)")
_ADD_EDGE = re.compile(r"\.addEdge\(\s*[\"'`]?([\w]+)[\"'`]?\s*,\s*[\"'`]?([\w]+)[\"'`]?\s*\)")
_COND_EDGE = re.compile(r"\.addConditionalEdges\(\s*[\"'`](\w+)[\"'`]\s*,\s*([\w.]+)\s*(?:,\s*(\[[^\]]*\]|\{[^}]*\}))?")
_LIMIT = re.compile(r"recursionLimit\s*:\s*(\d+)")
_ENDS = {"START": "__start__", "END": "__end__"}


def _name(x: str) -> str:
    return _ENDS.get(x, x)


def js_agent_graphs(project: Any, merged: Any, graph: Any) -> None:
    """Append an `AgentGraph` to `merged.agent_graphs` for every LangGraph.js graph of the tree."""
    by_func: dict[str, list[Any]] = {}
    for s in merged.search_calls:
        by_func.setdefault(s.function.rsplit(".", 1)[-1], []).append(s)
    secured = {a.site for a in merged.acl_sites}
    nodes_by_name: dict[str, list[Any]] = {}
    for n in getattr(graph, "nodes", ()):
        if n.kind == "func":
            nodes_by_name.setdefault(n.name, []).append(n)
    for rel in project.files:
        if not rel.endswith(_JS_FILES):
            continue
        text = project.read_text(rel)
        if not text or "StateGraph" not in text or ".addNode(" not in text:
            continue
        # an inline arrow or function (`addNode("agent", async (s) => ...)`) has no name to follow
        nodes = {m.group(1): ("<inline>" if m.group(2) in ("async", "function") else m.group(2))
                 for m in _ADD_NODE.finditer(text)}
        if not nodes:
            continue
        edges = [(_name(a), _name(b)) for a, b in _ADD_EDGE.findall(text)]
        routers = []
        for src, router, targets in _COND_EDGE.findall(text):
            routers.append(router)
            edges += [(src, _name(t)) for t in re.findall(r"[\"'`](\w+)[\"'`]", targets or "")]
        search_nodes, unsecured, rewrites = [], [], []
        for node, fn in nodes.items():
            sites = _sites_of(fn.rsplit(".", 1)[-1], by_func, nodes_by_name)
            if sites:
                search_nodes.append(node)
                if any(s.location not in secured for s in sites):
                    unsecured.append(node)
            if _REWRITE.search(node) or _REWRITE.search(fn):
                rewrites.append(node)
        first = min(m.start() for m in _ADD_NODE.finditer(text))
        limit = _LIMIT.search(text)
        has_cycle = _cyclic(edges)
        merged.agent_graphs.append(AgentGraph(
            file=rel, line=text.count("\n", 0, first) + 1, function="<module>", framework="langgraph",
            nodes=dict(nodes), search_nodes=tuple(search_nodes), unsecured_search_nodes=tuple(unsecured),
            rewrite_nodes=tuple(rewrites), has_cycle=has_cycle,
            loop_limit=f"recursionLimit={limit.group(1)}" if limit else "",
            loop_limit_effective=(True if limit else None) if has_cycle and _cycle_nodes(edges) else None,
            language="typescript" if rel.endswith((".ts", ".tsx", ".mts")) else "javascript"))


def _sites_of(fn: str, by_func: dict[str, list[Any]], nodes_by_name: dict[str, list[Any]]) -> list[Any]:
    """The search sites a node's function holds or reaches within two calls (by name)."""
    sites = list(by_func.get(fn, ()))
    frontier, seen = [fn], {fn}
    for _ in range(2):
        nxt = []
        for name in frontier:
            for node in nodes_by_name.get(name, ())[:8]:
                for callee in node.calls:
                    if callee not in seen:
                        seen.add(callee)
                        nxt.append(callee)
                        sites += by_func.get(callee, ())
        frontier = nxt
    return list({s.location: s for s in sites}.values())
