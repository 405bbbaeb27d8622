"""Python strings that matter: security filters (built how? escaped? from the identity or the request?),
SQL similarity queries, and prompts (their length rules). A mixin of the Python file scanner."""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import SecurityFilterSite
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
        is_security = bool(C.SECURITY_FILTER_RE.search(own))
        is_sql = bool(_SQL_RE.search(own)) and bool(_SQL_KEYWORDS.search(own) or "cosine_distance" in own)
        if not (is_security or is_sql):
            return
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
            self.out.search_calls.append(self.site("sql_similarity", node, qual, params, {}, None, "sql"))
        matches = list(C.SECURITY_FILTER_RE.finditer(own))
        if not is_security:
            return
        fields = tuple(sorted({(m.group(1) or m.group(2)) for m in matches}))
        related: dict[str, list[str]] = {var: [var] for var in v.vars}
        if func is not None:
            assigns, _ = self.mod.locals_of(func)
            for var in v.vars:
                if re.fullmatch(r"[A-Za-z_]\w*", var):
                    entries = [e for e in assigns.get(var, ()) if e.line <= node.lineno and e.kind == "assign"]
                    if entries:
                        related[var].append(unparse(entries[-1].value, 400))
        texts = [t for ts in related.values() for t in ts]
        interpolated = bool(v.vars)
        escaped = all(any(C.ESCAPE_TEXT_RE.search(t) for t in ts) for ts in related.values())
        self.out.security_filters.append(SecurityFilterSite(
            file=self.rel, line=node.lineno, function=qual or "<module>", expression=unparse(node, 300),
            uses_search_in="search.in(" in text, escaped=escaped,
            from_identity=any(C.is_identity_expr(t) for t in texts) if interpolated else None,
            from_request=any(C.is_request_expr(t) for t in texts) if interpolated else None,
            fstring=interpolated, fields=fields, language="python"))

    def _search_in_helper(self, call: ast.Call, qual: str, func: Any, cls: str | None) -> None:
        texts = [unparse(a) for a in call.args[1:]] + [unparse(k.value) for k in call.keywords]
        self.out.security_filters.append(SecurityFilterSite(
            file=self.rel, line=call.lineno, function=qual or "<module>", expression=unparse(call, 300),
            uses_search_in=True, escaped=True,
            from_identity=any(C.is_identity_expr(t) for t in texts) if texts else None,
            from_request=any(C.is_request_expr(t) for t in texts) if texts else None,
            fstring=False, fields=(call.args[0].value,), language="python"))  # type: ignore[attr-defined]

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

