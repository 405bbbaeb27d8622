"""Python strings that matter: security filters (built how? escaped? from the identity or the request?),
SQL similarity queries, and prompts (their length rules). A mixin of the Python file scanner."""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import security_fields, security_filter_site
from ragdiag.codescan.prompts import prompt_rules
from ragdiag.codescan.python_index import unparse
from ragdiag.codescan.values import Val, lit, unknown

_SQL_RE = re.compile(r"<->|<=>|<#>|cosine_distance")
_SQL_KEYWORDS = re.compile(r"\b(select|order\s+by|limit)\b", re.I)


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
            self.out.search_calls.append(self.site("sql_similarity", node, qual, params, {}, None, "sql"))
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

