"""Python permission trimming: how each search is trimmed to the caller, what switches it on, where it fails open.

Mechanisms (`AclSite`): a filter on a security field (also one whose field
name is held in a variable), the user's token passed as
`x_ms_query_source_authorization` / the `x-ms-query-source-authorization`
header (Azure AI Search's native document-level security), a framework's
metadata filter on a security field.

What switches it on (`AclSite.enabled_by`): an `if` around the search, the
filter or the token, or a conditional expression in the argument, whose
test reads an environment variable, a setting or the request.

Fail-open paths (`FailOpen`): an exception while getting the user's token
swallowed and the search sent anyway; a retry without the header or the
filter after a failed search; trimming the request body can switch off, or
a filter the request supplies; security ids from an LLM tool-call argument
or from the request; ids interpolated without escaping; trimming behind a
setting whose default is off.

A mixin of the Python file scanner, run after the sites are collected.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Ctx
from ragdiag.codescan.model import AclSite, FailOpen, SearchCallSite
from ragdiag.codescan.python_index import callee_name, dotted, unparse, walk_body

#: Site kinds that send a retrieval request permission trimming applies to.
TRIMMABLE = ("azure_search", "rest_search", "on_your_data", "agentic_retrieval", "langchain", "llamaindex",
             "haystack", "sql_similarity", "vector_db")


def _security_text(site: SearchCallSite) -> str | None:
    """The filter text (or expression) of a site when it carries a security clause, else None."""
    p = site.params.get("filter")
    if p is None:
        return None
    text = p.value if isinstance(p.value, str) else ""
    expr = p.expression or ""
    if C.SECURITY_FILTER_RE.search(text) or C.VAR_FIELD_FILTER_RE.search(text):
        return text
    if isinstance(p.value, dict) and any(C.SECURITY_FIELD_RE.match(str(k)) for k in p.value):
        return str(p.value)
    if C.SECURITY_NAME_RE.search(expr) or C.SECURITY_NAME_RE.search(p.source or ""):
        return expr or p.source
    return None


class AclPass:
    """Permission trimming and its fail-open paths (mixed into `PyFileScan`)."""

    def _acl_pass(self) -> None:
        by_func: dict[int, list[tuple[SearchCallSite, Any, Any, Any]]] = {}
        for site, (func, cls, node) in self.site_nodes:
            if site.kind in TRIMMABLE:
                by_func.setdefault(id(func), []).append((site, func, cls, node))
        for group in by_func.values():
            func, cls = group[0][1], group[0][2]
            trimmed: dict[str, bool] = {}
            for site, _f, _c, node in group:
                trimmed[site.location] = self._site_acl(site, func, cls, node)
            if func is not None:
                self._retry_without_trimming(group, trimmed, func)
                if any(trimmed.values()):
                    self._token_errors(group, func, cls)
        self._filter_fail_open()
        self._toggles()
        self._arg_origins()

    # -- one site ---------------------------------------------------------------------------------
    def _site_acl(self, site: SearchCallSite, func: Any, cls: str | None, node: Any) -> bool:
        mechanisms: list[tuple[str, str, Any]] = []
        qsa = site.params.get("query_source_authorization")
        if qsa is not None and not (qsa.resolved and qsa.value in (None, "")):
            mechanisms.append(("query_source_authorization", qsa.expression or "x-ms-query-source-authorization",
                               self._kw_node(node, ("x_ms_query_source_authorization", "headers"))))
        sec = _security_text(site)
        if sec is not None:
            mech = "odata_filter" if site.kind in ("azure_search", "rest_search", "on_your_data",
                                                   "agentic_retrieval") else \
                "sql_where" if site.kind == "sql_similarity" else "framework_filter"
            mechanisms.append((mech, sec[:200], self._kw_node(node, ("filter", "filters", "filter_add_on"))))
        ctx = Ctx.of(self.mod, func, cls)
        for mech, detail, arg_node in mechanisms:
            cond = self._condition(node, arg_node, func, site)
            enabled_by = self._describe(cond, ctx) if cond is not None else ""
            self.out.acl_sites.append(AclSite(
                file=self.rel, line=site.line, function=site.function, mechanism=mech, detail=detail,
                enabled_by=enabled_by, site=site.location, language="python"))
            if cond is not None:
                self._toggle_fail_open(site, cond, enabled_by, ctx)
        self._client_filter(site, func)
        return bool(mechanisms)

    @staticmethod
    def _kw_node(call: Any, names: tuple[str, ...]) -> Any:
        if isinstance(call, ast.Call):
            for kw in call.keywords:
                if kw.arg in names:
                    return kw.value
        return None

    def _condition(self, call: Any, arg_node: Any, func: Any, site: SearchCallSite) -> ast.expr | None:
        """The test that switches the trimming of `site` on: an IfExp in the argument, an `if` around it."""
        if isinstance(arg_node, ast.IfExp) and ACL_TEST(arg_node.test):
            return arg_node.test
        if func is None:
            return None
        lines = {site.line}
        own: set[int] = set()  # lines that set the mechanism itself (the header store, the filter's assignment)
        if isinstance(arg_node, ast.Name):  # the filter / token variable: where is it assigned or filled?
            assigns, stores = self.mod.locals_of(func)
            for e in assigns.get(arg_node.id, ()):
                if e.line < site.line:
                    lines.add(e.line)
            for st in stores.get(arg_node.id, ()):
                if st.line < site.line and st.key and re.search(r"query.source|authoriz|filter|acl|secur", st.key, re.I):
                    own.add(st.line)
        for sf in self.out.security_filters:
            if sf.function == site.function and sf.line <= site.line:
                lines.add(sf.line)
        for n in walk_body(func.body):
            if not isinstance(n, ast.If):
                continue
            # an `if` naming trimming around the clause; or any presence test (`if token:`) around the line that
            # adds the clause or header itself: without the value the search goes out without it
            if not (ACL_TEST(n.test) or (own and presence_of(n.test) is not None)):
                continue
            watch = lines if ACL_TEST(n.test) else own
            first, last = n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno
            if any(first <= ln <= last for ln in watch):
                return n.test
            if n.orelse and ACL_TEST(n.test):
                first, last = n.orelse[0].lineno, n.orelse[-1].end_lineno or n.orelse[-1].lineno
                if any(first <= ln <= last for ln in lines):
                    return ast.UnaryOp(ast.Not(), n.test)
        return None

    def _describe(self, cond: ast.expr, ctx: Ctx) -> str:
        """``env:X``, ``setting:self.x``, ``request:...`` or ``code:...`` for a condition."""
        if isinstance(cond, ast.BoolOp):
            parts = [v for v in cond.values if ACL_TEST(v)]
            if len(parts) == 1:
                cond = parts[0]
        text = unparse(cond, 160)
        v = self.r.resolve(cond.operand if isinstance(cond, ast.UnaryOp) else cond, ctx)
        if v.override.startswith("env:") or "getenv" in text or "environ" in text:
            return v.override or f"env:{text}"
        if _CLIENT_DATA.search(text):
            return f"request:{text}"
        if re.match(r"(not\s+)?(self|settings|config|cfg|app\.config)\b", text) or v.source.startswith("settings:"):
            return f"setting:{text}"
        return f"code:{text}"

    def _toggle_fail_open(self, site: SearchCallSite, cond: ast.expr, enabled_by: str, ctx: Ctx) -> None:
        if enabled_by.startswith("request:"):
            self._fail(site, "client_can_disable", f"trimming depends on {enabled_by[8:]}, which the request sets")
            return
        if presence_of(cond) is not None and not ACL_TEST(cond):
            self._absent_value(site, presence_of(cond), ctx)
            return
        if isinstance(cond, ast.BoolOp):
            parts = [v for v in cond.values if ACL_TEST(v)]
            cond = parts[0] if len(parts) == 1 else cond
        inner = cond.operand if isinstance(cond, ast.UnaryOp) else cond
        v = self.r.resolve(inner, ctx)
        if v.resolved and v.kind == "scalar" and not isinstance(cond, ast.UnaryOp) and not v.value:
            self._fail(site, "off_by_default", f"trimming depends on {enabled_by}, default {v.value!r}"
                       f"{' at ' + v.prov if v.prov else ''}")

    def _absent_value(self, site: SearchCallSite, value: ast.expr, ctx: Ctx) -> None:
        """The clause or header is added only when `value` is present: where can it be absent?

        A parameter whose default is None (or empty) leaves it out whenever a caller does not pass it
        (``dropped_when_absent``); a token that comes from a function of this module that returns None
        on some path (the exchange failed, no user token, an anonymous switch) sends the search
        untrimmed exactly then (``token_error_swallowed``)."""
        name = dotted(value) or unparse(value, 60)
        func = ctx.func
        sources: list[tuple[ast.expr, Ctx]] = []
        if isinstance(value, ast.Name) and func is not None:
            param = next((p for p in self.mod.params_of(func) if p.name == value.id), None)
            if param is not None:
                default = param.default
                empty = default is None or (isinstance(default, ast.Constant) and not default.value) or (
                    isinstance(default, (ast.List, ast.Tuple, ast.Dict)) and not getattr(default, "elts", None)
                    and not getattr(default, "keys", None))
                if default is not None and empty:
                    self._fail(site, "dropped_when_absent",
                               f"the permission clause is added only when {name} is set; {name} defaults to "
                               f"{unparse(default, 20)} ({self.rel}:{default.lineno})", line=site.line)
                for c_ctx, _caller, _where in self.caller_contexts(func, ctx.cls):
                    bound = (c_ctx.bindings or {}).get(value.id)
                    if bound is not None and bound.node is not None and isinstance(bound.ctx, Ctx):
                        sources.append((bound.node, bound.ctx))
            else:
                assigns, _ = self.mod.locals_of(func)
                for e in assigns.get(value.id, ()):
                    if e.kind == "assign" and e.value is not None and e.line < site.line:
                        sources.append((e.value, ctx))
        for node, nctx in sources:
            if isinstance(node, ast.Name) and nctx.func is not None:  # the caller's local: where it came from
                assigns, _ = self.mod.locals_of(nctx.func)
                node = next((e.value for e in reversed(assigns.get(node.id, ())) if e.kind == "assign"
                             and e.value is not None), node)
            call = node.value if isinstance(node, ast.Await) else node
            if not isinstance(call, ast.Call):
                continue
            target = self._same_module_function(call, nctx.cls)
            if target is None or not (C.TOKEN_CALL_RE.search(target.name) or re.search(r"token", target.name, re.I)):
                continue
            nones = [r.lineno for r in walk_body(target.body) if isinstance(r, ast.Return)
                     and (r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None))]
            if nones:
                self._fail(site, "token_error_swallowed",
                           f"{target.name}() returns None at line(s) {', '.join(map(str, nones[:4]))} (no user token, "
                           f"or the exchange failed) and the search is then sent without the permission header or "
                           f"clause {name} carries",
                           line=nones[0])
                return

    def _same_module_function(self, call: ast.Call, cls: str | None) -> Any:
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") and cls:
            return self.mod.functions.get(f"{cls}.{f.attr}")
        if isinstance(f, ast.Name):
            return self.mod.functions.get(f.id)
        return None

    def _client_filter(self, site: SearchCallSite, func: Any) -> None:
        """The request supplies the whole filter: it can drop any clause (and any trimming)."""
        p = site.params.get("filter")
        if p is None or func is None or site.kind not in ("azure_search", "rest_search", "on_your_data"):
            return
        texts = [p.expression or ""]
        root = re.match(r"[A-Za-z_]\w*$", p.expression or "")
        if root:
            assigns, _ = self.mod.locals_of(func)
            texts += [unparse(e.value, 300) for e in assigns.get(root.group(0), ()) if e.value is not None]
        if any(_CLIENT_DATA.search(t) for t in texts) \
                and not p.from_fstring:
            self._fail(site, "client_can_disable", f"filter taken from the request ({texts[-1][:80]})")

    def _fail(self, site: SearchCallSite, kind: str, evidence: str, line: int | None = None) -> None:
        key = (site.location, kind)
        if key in self._fail_seen:
            return
        self._fail_seen.add(key)
        self.out.fail_open.append(FailOpen(
            file=self.rel, line=line or site.line, function=site.function, kind=kind, evidence=evidence[:300],
            site=site.location, language="python"))

    # -- across sites of a function ----------------------------------------------------------------
    def _retry_without_trimming(self, group: list[Any], trimmed: dict[str, bool], func: Any) -> None:
        """A search in an `except` (or after a failed status / empty result) that drops the trimming."""
        if not any(trimmed.values()):
            return
        for n in walk_body(func.body):
            spans: list[tuple[int, int, str]] = []
            if isinstance(n, ast.Try):
                for h in n.handlers:
                    spans.append((h.lineno, h.end_lineno or h.lineno, "except"))
            elif isinstance(n, ast.If) and re.search(r"status|error|fail|not\s+\w|len\(|== *0|is None",
                                                     unparse(n.test, 120)):
                spans.append((n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno,
                              f"if {unparse(n.test, 60)}"))
            for first, last, what in spans:
                for site, _f, _c, _node in group:
                    if first <= site.line <= last and not trimmed[site.location] and any(
                            trimmed[o.location] and o.line < first for o, *_ in group):
                        self._fail(site, "retry_without_trimming",
                                   f"search in `{what}` at line {first} without the permission trimming of "
                                   f"the first attempt")

    def _token_errors(self, group: list[Any], func: Any, cls: str | None) -> None:
        """Getting the user's token raised, the exception was swallowed, the search went out anyway."""
        candidates = [func]
        for n in walk_body(func.body):
            if isinstance(n, ast.Call) and C.TOKEN_CALL_RE.search(dotted(n.func) or ""):
                name = dotted(n.func) or ""
                parts = name.split(".")
                target = None
                if parts[0] == "self" and cls and f"{cls}.{parts[-1]}" in self.mod.functions:
                    target = self.mod.functions[f"{cls}.{parts[-1]}"]
                elif name in self.mod.functions:
                    target = self.mod.functions[name]
                if target is not None and target not in candidates:
                    candidates.append(target)
        first_site = min(s.line for s, *_ in group)
        for fn in candidates:
            for n in walk_body(fn.body):
                if not isinstance(n, ast.Try):
                    continue
                body_calls = [c for b in n.body for c in ast.walk(b) if isinstance(c, ast.Call)]
                if not any(C.TOKEN_CALL_RE.search(dotted(c.func) or "") for c in body_calls):
                    continue
                for h in n.handlers:
                    raises = any(isinstance(x, ast.Raise) for x in ast.walk(h))
                    aborts = any(isinstance(x, ast.Return) and (x.value is None or not (
                        isinstance(x.value, ast.Constant) and x.value.value in (None, "")))
                        for x in ast.walk(h)) if fn is func else False
                    if raises or aborts:
                        continue
                    if fn is func and (h.end_lineno or h.lineno) > first_site:
                        continue
                    site = group[0][0]
                    self._fail(site, "token_error_swallowed",
                               f"exception while getting the user's token swallowed at line {h.lineno} "
                               f"({unparse(h.type, 60) if h.type is not None else 'bare except'}); "
                               f"the search is sent anyway", line=h.lineno)

    def _toggles(self) -> None:
        """Trimming switched on by a condition away from any search call (a settings method, a payload builder)."""
        low = self.low
        if not any(w in low for w in ("filter", "query_source", "acl", "secur", "permission", "group")):
            return
        seen = {(a.line, a.mechanism) for a in self.out.acl_sites}
        for qual, fn, cls in self.functions:
            low = self.fn_low(fn)
            # (`security_?(filter|clause|trim)` needs "filter" or one of the four spellings: plain `in` tests)
            if "if " not in low or not ("filter" in low or "query_source" in low or "acl" in low
                                        or "securityclause" in low or "security_clause" in low
                                        or "securitytrim" in low or "security_trim" in low) \
                    or not C.ACL_TOGGLE_RE.search(low):
                continue
            for n in self.mod.nodes_of(fn).get(ast.If, ()):
                if not ACL_TEST(n.test):
                    continue
                hit = None
                for stmt in n.body:
                    for sub in ast.walk(stmt):
                        target = None
                        if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                            target = " ".join(unparse(t, 80) for t in targets)
                        elif isinstance(sub, ast.keyword) and sub.arg:
                            target = sub.arg
                        if target and re.search(r"filter|query_source_authorization|\bacl|security_?(filter|clause|trim)",
                                                target, re.I):
                            hit = (sub, target)
                            break
                    if hit:
                        break
                if hit is None:
                    continue
                mech = "query_source_authorization" if "query_source" in hit[1] else "odata_filter"
                end = n.end_lineno or n.lineno
                if (hit[0].lineno, mech) in seen or any(
                        x.function == qual and (n.lineno <= x.line <= end or x.enabled_by)
                        for x in self.out.acl_sites):
                    continue
                ctx = Ctx.of(self.mod, fn, cls)
                enabled_by = self._describe(n.test, ctx)
                site = SearchCallSite(self.rel, hit[0].lineno, "acl", qual, self.mod.dotted)
                self.out.acl_sites.append(AclSite(
                    file=self.rel, line=hit[0].lineno, function=qual, mechanism=mech,
                    detail=f"{hit[1]} set when {unparse(n.test, 80)}", enabled_by=enabled_by, site="",
                    language="python"))
                seen.add((hit[0].lineno, mech))
                self._toggle_fail_open(site, n.test, enabled_by, ctx)

    def _arg_origins(self) -> None:
        """Calls passing request data as `filter=` / the token to some method: matched to its sites later.

        (`app.py` reads the filter from the JSON body and calls `SearchText.search(filter=filter)`;
        inside, the site only sees `parameter:filter`. The walker joins the two across files.)
        """
        for call, qual, func, _cls in self.calls:
            name = callee_name(call)
            if not name or name in ("search", "get") and not isinstance(call.func, ast.Attribute):
                continue
            for kw in call.keywords:
                if kw.arg not in ("filter", "filters", "search_filter", "x_ms_query_source_authorization"):
                    continue
                texts = [unparse(kw.value, 200)]
                if isinstance(kw.value, ast.Name) and func is not None:
                    assigns, _ = self.mod.locals_of(func)
                    texts += [unparse(e.value, 200) for e in assigns.get(kw.value.id, ()) if e.value is not None]
                if any(_CLIENT_DATA.search(t) for t in texts):
                    self.out.arg_origins.append((name, kw.arg, self.rel, call.lineno, qual or "<module>",
                                                 texts[-1][:120]))

    def _filter_fail_open(self) -> None:
        """Security filter strings of this file: ids from an LLM argument, from the request, unescaped."""
        sites = {s.function: s for s, _ in self.site_nodes}
        for f in self.out.security_filters:
            site = sites.get(f.function) or SearchCallSite(self.rel, f.line, "security_filter", f.function,
                                                            self.mod.dotted)
            if f.from_llm:
                self._fail(site, "ids_from_llm", f"security ids from an LLM tool-call argument: {f.expression[:120]}",
                           line=f.line)
            if f.from_request and not f.from_identity:
                self._fail(site, "ids_from_request", f"security ids from request data: {f.expression[:120]}",
                           line=f.line)
            if f.injection_risk:
                self._fail(site, "unescaped_interpolation", f"interpolated without escaping: {f.expression[:120]}",
                           line=f.line)


_CLIENT_DATA = C.CLIENT_DATA_RE


def presence_of(test: ast.AST) -> ast.expr | None:
    """The value an `if` tests for presence (`if x:`, `if x is not None:`, `if len(x):`, `if x and y:` first), or None."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            hit = presence_of(v)
            if hit is not None:
                return hit
        return None
    if isinstance(test, (ast.Name, ast.Attribute)):
        return test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return test.left if isinstance(test.left, (ast.Name, ast.Attribute)) else None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("len", "bool") \
            and test.args and isinstance(test.args[0], (ast.Name, ast.Attribute)):
        return test.args[0]
    return None


def ACL_TEST(test: ast.AST) -> bool:  # noqa: N802 - reads as a predicate on a test expression
    """Does an `if` test look like it switches permission trimming?"""
    return bool(C.ACL_TOGGLE_RE.search(unparse(test, 200)))


__all__ = ["AclPass", "TRIMMABLE"]
