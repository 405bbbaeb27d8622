"""Python strings that matter: security filters (built how? escaped? from the identity or the request?),
SQL similarity queries, and prompts (their length rules). A mixin of the Python file scanner."""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import security_fields, security_filter_site
from ragdiag.codescan.prompts import prompt_rules
from ragdiag.codescan.python_index import callee_name, unparse
from ragdiag.codescan.python_sql import SQL_EXEC
from ragdiag.codescan.values import Val, lit, unknown

_SQL_RE = re.compile(r"<->|<=>|<#>|cosine_distance")
_SQL_KEYWORDS = re.compile(r"\b(select|order\s+by|limit)\b", re.I)
#: Calls that show or log a string: an SQL text passed only to one of them is never sent.
_SHOWN = frozenset({"print", "code", "markdown", "write", "caption", "text_area", "echo", "debug", "info",
                    "warning", "error", "exception", "log", "pprint"})


class StringSites:
    """Security filter strings, SQL strings and prompts (mixed into `PyFileScan`)."""

    # -- strings: security filters, SQL --------------------------------------------------------
    def _string(self, node: ast.AST, qual: str, func: Any, cls: str | None) -> None:
        own = _literal_text(node)
        source = unparse(node, 2000)
        is_security = bool(C.SECURITY_FILTER_RE.search(own) or C.VAR_FIELD_FILTER_RE.search(source)
                           or C.identity_clauses(source))
        is_sql = bool(_SQL_RE.search(own)) and bool(_SQL_KEYWORDS.search(own) or "cosine_distance" in own)
        if not (is_security or is_sql):
            return
        self._cur = (func, cls, node)
        ctx = self.ctx(func, cls)
        v = self.r.resolve(node, ctx)
        text, _ = C.text_of(v, "python")
        use = self._sql_use(node, func) if is_sql else None
        if use == "dead":
            is_sql = False
            if not is_security:
                return
        if is_sql:
            params: dict[str, Val] = {}
            m = re.search(r"\blimit\s+(\d+)", text, re.I)
            if m:
                params["k"] = lit(int(m.group(1)), "literal")
            elif re.search(r"\blimit\b", text, re.I):
                params["k"] = unknown("sql parameter", re.search(r"\blimit\s+(\S+)", text, re.I).group(1)
                                      if re.search(r"\blimit\s+(\S+)", text, re.I) else "LIMIT")
            text_k = self._fulltext_limit(func)
            if text_k is not None:
                params["text_k"] = lit(text_k, "sql fulltext LIMIT")
            where = [x for x in v.vars if re.search(r"filter|where|clause|condition", x, re.I)]
            if where or re.search(r"\bwhere\b", text, re.I):
                clause = re.search(r"\bwhere\b(.*?)(?:\border\s+by\b|\blimit\b|$)", text, re.I | re.S)
                params["filter"] = Val("scalar", " ".join(clause.group(1).split()) if clause else "", False,
                                       "sql where", ", ".join(where), fstring=bool(where), vars=tuple(where))
            sent = use if isinstance(use, ast.Call) else node
            self._cur = (func, cls, sent)  # the results are what the executing call returns
            self.out.search_calls.append(self.site("sql_similarity", sent, qual, params, {}, None, "sql"))
            self._cur = (func, cls, node)
        if not is_security:
            return
        related: dict[str, list[str]] = {var: [var] for var in v.vars}
        if func is not None:
            assigns, _ = self.mod.locals_of(func)
            for var in v.vars:
                root = re.match(r"[A-Za-z_]\w*", var)
                if root:
                    entries = [e for e in assigns.get(root.group(0), ()) if e.line <= node.lineno
                               and e.kind == "assign"]
                    if entries:
                        related[var].append(unparse(entries[-1].value, 400))
        self.out.security_filters.append(security_filter_site(
            self.rel, node.lineno, qual, unparse(node, 300), text, tuple(v.vars), related,
            security_fields(own, source), "python"))

    def _sql_use(self, node: ast.AST, func: Any) -> ast.Call | str | None:
        """Where an SQL string is sent: the `execute`/`fetch` call running the function's local it is assigned
        to (the site is that call), ``"dead"`` when it is never sent (a local nothing reads, or a string only
        shown or logged: `st.code(sql)`, `print(sql)`), None when its use is not known (it stays a site at the
        string: a module-level constant, passed to a helper or composed into a larger query)."""
        body = func if func is not None else self.mod.tree
        nodes = self.mod.nodes_of(body)
        for call in nodes.get(ast.Call, ()):
            if any(a is node for a in call.args) or any(k.value is node for k in call.keywords):
                return "dead" if (callee_name(call) or "") in _SHOWN else None
        target = next((a.targets[0].id for a in nodes.get(ast.Assign, ()) if a.value is node
                       and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)), None)
        if target is None or func is None:  # a module-level constant may be imported and run anywhere
            return None
        reads = [n for n in nodes.get(ast.Name, ()) if n.id == target and isinstance(n.ctx, ast.Load)]
        if not reads:
            return "dead"
        for call in nodes.get(ast.Call, ()):
            if (callee_name(call) or "") not in SQL_EXEC or not call.args:
                continue
            first = call.args[0]
            if isinstance(first, ast.Call) and (callee_name(first) or "") == "text" and first.args:
                first = first.args[0]
            if isinstance(first, ast.Name) and first.id == target:
                return call
        return None

    def _fulltext_limit(self, func: Any) -> int | None:
        """The LIMIT of a full-text SQL query (`to_tsvector`, `@@`, `ts_rank`) in the same function: the text pool."""
        if func is None:
            return None
        for n in ast.walk(func):
            if isinstance(n, (ast.Constant, ast.JoinedStr)):
                own = _literal_text(n)
                if re.search(r"to_tsvector|ts_rank|@@|plainto_tsquery|websearch_to_tsquery|bm25", own, re.I):
                    m = re.search(r"\blimit\s+(\d+)", own, re.I)
                    if m:
                        return int(m.group(1))
        return None

    def _search_in_helper(self, call: ast.Call, qual: str, func: Any, cls: str | None) -> None:
        texts = [unparse(a) for a in call.args[1:]] + [unparse(k.value) for k in call.keywords]
        self.out.security_filters.append(security_filter_site(
            self.rel, call.lineno, qual, unparse(call, 300), "search.in(", tuple(texts), {t: [t] for t in texts},
            (call.args[0].value,), "python", escaped_call=True))  # type: ignore[attr-defined]

    # -- prompts and citations -------------------------------------------------------------------
    def _prompt(self, name: str, value: ast.expr, func: Any, cls: str | None) -> None:
        v = self.r.resolve(value, self.ctx(func, cls))
        if not v.is_str or not v.value:
            return
        self.out.prompt_rules.extend(prompt_rules(v.value, file=self.rel, first_line=value.lineno))


def _literal_text(node: ast.AST) -> str:
    """The literal parts of a string expression (interpolations as `{}`), not following names."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else "{}"
    if isinstance(node, ast.JoinedStr):
        return "".join(p.value if isinstance(p, ast.Constant) and isinstance(p.value, str) else "{}"
                       for p in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _literal_text(node.left) + ("" if isinstance(node.op, ast.Mod) else _literal_text(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _literal_text(node.func.value)
    return "{}"


def is_string_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return is_string_expr(node.left) or is_string_expr(node.right)
        if isinstance(node.op, ast.Mod):
            return is_string_expr(node.left)
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return isinstance(node.func.value, (ast.Constant, ast.JoinedStr)) and is_string_expr(node.func.value)
    return False

