"""Agentic retrieval loops in Python: LangGraph `StateGraph`s of planner, search, evaluator, rewrite, synthesis nodes.

For each graph (`AgentGraph`): its nodes and the functions behind them; the
nodes that search (the node function holds a search call site, or calls a
same-file function that does) and those among them without the identity's
security clause; the rewrite nodes and whether they rebuild or drop filter
state while they "improve" the text; whether the edges form a loop and what
bounds it (a `recursion_limit`, an iteration counter compared in a router);
whether a search node logs its filter (or a hash of it) with the search text.

A mixin of the Python file scanner, run after the ACL pass.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan.model import AgentGraph
from ragdiag.codescan.python_index import callee_name, dotted, unparse, walk_body

_REWRITE = re.compile(r"rewrite|refine|reformulat|rephrase|improve|transform_?query|expand_?query|rewriter", re.I)
_SEARCHY = re.compile(r"retriev|search|lookup|fetch_docs|query_index", re.I)
_COUNTER = re.compile(r"iter|loop|step|count|attempt|round|retr|max_|hops|depth|revision", re.I)
_FILTERY = re.compile(r"filter|secur|acl|group|permission|scope", re.I)
_LOG = re.compile(r"(^|\.)(log|logger|logging|print|debug|info|warning|trace|span|set_attribute|emit)", re.I)


class AgentsPass:
    """LangGraph loops (mixed into `PyFileScan`)."""

    def _agents_pass(self) -> None:
        if "add_node" not in self.source:
            return
        graphs: dict[str, dict[str, Any]] = {}
        for call, qual, _func, _cls in self.calls:
            name = callee_name(call)
            if name not in ("add_node", "add_edge", "add_conditional_edges", "set_entry_point", "set_finish_point"):
                continue
            if not isinstance(call.func, ast.Attribute):
                continue
            recv = dotted(call.func.value) or "?"
            g = graphs.setdefault(recv, {"line": call.lineno, "function": qual or "<module>", "nodes": {},
                                         "edges": [], "routers": []})
            args = [a.value if isinstance(a, ast.Constant) else a for a in call.args]
            if name == "add_node":
                if len(call.args) >= 2 and isinstance(args[0], str):
                    g["nodes"][args[0]] = dotted(call.args[1]) or unparse(call.args[1], 60)
                elif call.args and not isinstance(args[0], str):  # add_node(fn): named after the function
                    fn = dotted(call.args[0]) or "?"
                    g["nodes"][fn.rsplit(".", 1)[-1]] = fn
                g["line"] = min(g["line"], call.lineno)
            elif name == "add_edge" and len(args) >= 2:
                g["edges"].append((_node_name(args[0]), _node_name(args[1])))
            elif name == "add_conditional_edges" and len(call.args) >= 2:
                src = _node_name(args[0])
                router = dotted(call.args[1]) or ""
                g["routers"].append(router)
                targets: list[str] = []
                if len(call.args) >= 3 or any(k.arg == "path_map" for k in call.keywords):
                    mapping = call.args[2] if len(call.args) >= 3 else next(k.value for k in call.keywords
                                                                             if k.arg == "path_map")
                    if isinstance(mapping, ast.Dict):
                        targets = [_node_name(v.value) for v in mapping.values if isinstance(v, ast.Constant)]
                    elif isinstance(mapping, (ast.List, ast.Tuple)):
                        targets = [_node_name(e.value) for e in mapping.elts if isinstance(e, ast.Constant)]
                if not targets and router in self.mod.functions:
                    targets = [_node_name(r.value.value) for r in walk_body(self.mod.functions[router].body)
                               if isinstance(r, ast.Return) and isinstance(r.value, ast.Constant)
                               and isinstance(r.value.value, str)]
                g["edges"].extend((src, t) for t in targets)
        for recv, g in graphs.items():
            if not g["nodes"] or not re.search(r"StateGraph|MessageGraph|langgraph", self.source):
                continue
            self.out.agent_graphs.append(self._graph(recv, g))

    def _graph(self, recv: str, g: dict[str, Any]) -> AgentGraph:
        secured = {a.site for a in self.out.acl_sites}
        sites_by_func: dict[str, list[Any]] = {}
        for site, _cur in self.site_nodes:
            sites_by_func.setdefault(site.function.rsplit(".", 1)[-1], []).append(site)
        search_nodes, unsecured, rewrites, rewrite_filters = [], [], [], []
        logged = False
        for node, fn_name in g["nodes"].items():
            fn_last = fn_name.rsplit(".", 1)[-1]
            sites = list(sites_by_func.get(fn_last, []))
            fn = self.mod.functions.get(fn_last) or self.mod.functions.get(fn_name)
            if fn is not None:
                for n in walk_body(fn.body):
                    if isinstance(n, ast.Call):
                        callee = (dotted(n.func) or "").rsplit(".", 1)[-1]
                        sites += sites_by_func.get(callee, []) if callee != fn_last else []
            if sites or (fn is None and _SEARCHY.search(node + fn_name)):
                search_nodes.append(node)
                if not sites or any(s.location not in secured for s in sites):
                    unsecured.append(node)
                if fn is not None and self._logs_filter(fn):
                    logged = True
            if _REWRITE.search(node) or _REWRITE.search(fn_last):
                rewrites.append(node)
                if fn is not None and self._touches_filters(fn):
                    rewrite_filters.append(node)
        has_cycle = _cyclic(g["edges"])
        limit = ""
        effective: bool | None = None
        m = re.search(r"recursion_limit\W+(\d+)", self.source)
        if m:
            limit = f"recursion_limit={m.group(1)}"
            effective = True
        else:
            for router in g["routers"]:
                fn = self.mod.functions.get(router)
                if fn is None:
                    continue
                for n in walk_body(fn.body):
                    if isinstance(n, ast.Compare) and _COUNTER.search(unparse(n, 120)) and any(
                            isinstance(x, ast.Constant) and isinstance(x.value, int) for x in ast.walk(n)):
                        limit = f"{router}: {unparse(n, 80)}"
                        keys = [x.slice.value for x in ast.walk(n) if isinstance(x, ast.Subscript)
                                and isinstance(x.slice, ast.Constant) and isinstance(x.slice.value, str)
                                and _COUNTER.search(x.slice.value)]
                        if keys:
                            effective, why = self._counter_in_loop(keys[0], g)
                            limit += why
                        break
                if limit:
                    break
        return AgentGraph(
            file=self.rel, line=g["line"], function=g["function"], framework="langgraph", nodes=dict(g["nodes"]),
            search_nodes=tuple(search_nodes), unsecured_search_nodes=tuple(unsecured), rewrite_nodes=tuple(rewrites),
            rewrite_nodes_touching_filters=tuple(rewrite_filters), has_cycle=has_cycle, loop_limit=limit,
            loop_limit_effective=effective if has_cycle else None, filter_logged=logged, language="python")

    def _counter_in_loop(self, key: str, g: dict[str, Any]) -> tuple[bool, str]:
        """Is the router's counter `key` written by a node on a cycle? (Else the bound never trips.)"""
        on_cycle = _cycle_nodes(g["edges"])
        writers = []
        for node, fn_name in g["nodes"].items():
            fn = self.mod.functions.get(fn_name.rsplit(".", 1)[-1])
            if fn is None:
                continue
            for n in walk_body(fn.body):
                if (isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == key for k in n.keys)) \
                        or (isinstance(n, (ast.Assign, ast.AugAssign)) and key in unparse(n, 200)):
                    writers.append(node)
                    break
        inside = [w for w in writers if w in on_cycle]
        if inside:
            return True, f" (counter {key!r} advanced in the loop by {', '.join(inside)})"
        return False, (f" (counter {key!r} is never advanced inside the loop"
                       f"{': only ' + ', '.join(writers) + ' sets it' if writers else ''}; the bound never trips)")

    @staticmethod
    def _logs_filter(fn: Any) -> bool:
        for n in walk_body(fn.body):
            if isinstance(n, ast.Call) and _LOG.search(dotted(n.func) or "") and re.search(
                    r"filter|hash|sha|digest", " ".join(unparse(a, 200) for a in [*n.args, *(k.value for k in
                                                                                              n.keywords)]), re.I):
                return True
        return False

    @staticmethod
    def _touches_filters(fn: Any) -> bool:
        """Does a rewrite node write filter / security state (rebuild it, or drop it)?"""
        for n in walk_body(fn.body):
            if isinstance(n, ast.Dict):
                if any(isinstance(k, ast.Constant) and isinstance(k.value, str) and _FILTERY.search(k.value)
                       for k in n.keys):
                    return True
            elif isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) \
                            and isinstance(t.slice.value, str) and _FILTERY.search(t.slice.value):
                        return True
        return False


def _node_name(value: Any) -> str:
    if isinstance(value, str):
        return value
    text = unparse(value, 40) if isinstance(value, ast.AST) else str(value)
    return "END" if text in ("END", "langgraph.graph.END") else "START" if text == "START" else text


def _cycle_nodes(edges: list[tuple[str, str]]) -> set[str]:
    """Nodes that lie on some cycle (each reaches itself)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    out = set()
    for start in graph:
        seen, stack = set(), list(graph.get(start, ()))
        while stack:
            n = stack.pop()
            if n == start:
                out.add(start)
                break
            if n not in seen:
                seen.add(n)
                stack.extend(graph.get(n, ()))
    return out


def _cyclic(edges: list[tuple[str, str]]) -> bool:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}

    def visit(n: str) -> bool:
        state[n] = 1
        for m in graph.get(n, ()):
            if state.get(m) == 1 or (state.get(m) is None and visit(m)):
                return True
        state[n] = 2
        return False

    return any(state.get(n) is None and visit(n) for n in list(graph))


__all__ = ["AgentsPass"]
