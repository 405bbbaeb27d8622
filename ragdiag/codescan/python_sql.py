"""SQL similarity call sites in Python (psycopg, asyncpg, SQLAlchemy `text()`): where their groups come from.

A retrieval query with ``<=>`` / ``<->`` / ``<#>`` trims permissions in its WHERE when a clause
on a security-named column (``allowed_groups && %(groups)s::text[]``) binds the caller's
groups. What decides whether that trimming holds is the bound value: taken from the login
session (``session["user"]["groups"]``, ``current_user.groups``, a validated token) it does;
taken from the request (``request.get_json()["groups"]``, ``body.groups``) the caller picks
its own groups. For every ``execute`` / ``fetch`` / ``fetchrow`` / ``fetchval`` / SQLAlchemy
``execute(text(...))`` of such a query this pass finds the placeholder of the security clause
(``%(name)s``, ``:name``, ``$n``, ``%s`` / ``?`` by position), the argument bound to it, and
follows that value through local assignments and, when it is a parameter of the function,
to the callers in the same file (one hop). It records an `AclSite` (``sql_where``) per site
and a `FailOpen` (``ids_from_request``) when the groups come from the request. Values from
other files are not followed: their origin is reported as unknown.

A mixin of the Python file scanner.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import AclSite, FailOpen
from ragdiag.codescan.python_index import callee_name, unparse

__all__ = ["SqlSimilaritySites", "security_placeholder", "value_origin"]

SQL_EXEC = ("execute", "executemany", "fetch", "fetchrow", "fetchval", "fetch_all", "fetch_one",
            "exec_driver_sql")
_SIMILARITY = re.compile(r"<->|<=>|<#>|cosine_distance")
_SECURITY_COL = re.compile(r"\b\w*(group|acl|allowed|permission|role|user_ids?|tenant|principal|owner|member|"
                           r"reader|viewer|created_by|visib|share)\w*\b", re.I)
#: Tables holding who may see what (a JOIN on one of them trims by whatever its WHERE binds).
_ACL_TABLE = re.compile(r"acl|permission|access|share|member|grant|visib|entitle|right", re.I)
_JOIN = re.compile(r"\bjoin\s+(?:[\w\"]+\.)?\"?(\w+)\"?(?:\s+(?:as\s+)?(?!on\b)(\w+))?", re.I)
_FROM_TABLES = re.compile(r"\b(?:from|join)\s+(?:only\s+)?(?:[\w\"]+\.)?\"?(\w+)\"?", re.I)
#: The caller's identity set on the connection, for row-level security policies to read.
_SETS_IDENTITY = re.compile(r"set_config\s*\(|\bSET\s+(?:LOCAL\s+)?(?:SESSION\s+)?(?:ROLE\b|\"?\w+\"?\.\w+)|"
                            r"set_session_authorization|postgrest\.auth\s*\(|\.auth\.set_session\s*\(", re.I)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s|(?<![:\w]):([A-Za-z_]\w*)|\$(\d+)|%s|\?")
_SESSION = re.compile(r"\bsession\b|current_user|\bg\.user|\btoken\b|claims|identity|\bauth\w*|\blogin\b|"
                      r"request\.user\b|request\.state\.user", re.I)
_LOGIN_ON_REQUEST = re.compile(r"request\.(state\.)?user\b|request\.auth\b")
#: FastAPI parameter defaults that take the value from the request as sent (never verified).
_REQUEST_PARAMS = frozenset({"Header", "Query", "Body", "Cookie", "Form"})
#: A dependency that checks what it reads: its result is the login, not request data.
_VERIFIES = re.compile(r"jwt\.decode|decode_token|verify|validate_token|get_current_user\b|oauth2_scheme|"
                       r"HTTPBearer|id_token", re.I)
_WHERE = re.compile(r"\bwhere\b(.*?)(?:\bgroup\s+by\b|\border\s+by\b|\blimit\b|$)", re.I | re.S)


def security_placeholder(sql: str) -> tuple[str, str, int | None] | None:
    """(clause, placeholder name or "", positional index) of the WHERE's security clause, or None.

    A clause is a security clause when it filters a security-named column (`allowed_groups && %s`,
    `owner_id = :uid`, `principal_id = ANY(%s)`) or any column of a joined table holding who may see
    what (`JOIN document_acl a ON ... WHERE a.subject = %s`)."""
    m = _WHERE.search(sql)
    if not m:
        return None
    acl_aliases = set()
    for j in _JOIN.finditer(sql):
        if _ACL_TABLE.search(j.group(1)):
            acl_aliases.update(x.lower() for x in (j.group(1), j.group(2)) if x)
    for clause in re.split(r"\band\b", m.group(1), flags=re.I):
        qualified = {q.lower() for q in re.findall(r"\b(\w+)\s*\.\s*\w+", clause)}
        if not (_SECURITY_COL.search(clause) or qualified & acl_aliases):
            continue
        # `?|`, `?&` (and `?` beside `$n` placeholders) are JSONB operators, not positional placeholders
        dollar = re.search(r"\$\d", sql) is not None
        p = next((x for x in _PLACEHOLDER.finditer(clause) if x.group(0) != "?" or not (
            dollar or clause[x.end():x.end() + 1] in ("|", "&"))), None)
        if p is None:
            continue
        if p.group(1) or p.group(2):
            return " ".join(clause.split()), p.group(1) or p.group(2), None
        if p.group(3):
            return " ".join(clause.split()), "", int(p.group(3)) - 1
        before = sql[:m.start(1)] + m.group(1)[:m.group(1).find(clause)]
        index = sum(1 for x in _PLACEHOLDER.finditer(before) if x.group(0) in ("%s", "?"))
        return " ".join(clause.split()), "", index
    return None


def value_origin(texts: list[str]) -> str:
    """``request`` when any text reads request data, ``session`` when it reads the login, else ``unknown``."""
    # the authenticated user a framework hangs on the request (Django's request.user) is the login
    plain = [t for t in texts if not _LOGIN_ON_REQUEST.search(t)]
    if any(C.CLIENT_DATA_RE.search(t) or C.is_request_expr(t) for t in plain):
        return "request"
    if len(plain) < len(texts):
        return "session"
    if any(_SESSION.search(t) or C.is_identity_expr(t) for t in texts):
        return "session"
    return "unknown"


class SqlSimilaritySites:
    """The groups bound into SQL similarity queries (mixed into `PyFileScan`)."""

    def _sql_pass(self) -> None:
        for call, qual, func, cls in self.calls:
            last = callee_name(call) or ""
            if last not in SQL_EXEC or not call.args:
                continue
            sql_node = call.args[0]
            if isinstance(sql_node, ast.Call) and (callee_name(sql_node) or "") == "text" and sql_node.args:
                sql_node = sql_node.args[0]
            v = self.r.resolve(sql_node, self.ctx(func, cls))
            sql, _ = C.text_of(v, "python")
            conditional: list[tuple[str, Any]] = []
            if (not sql or not _SIMILARITY.search(sql)) and isinstance(sql_node, ast.Name) and func is not None:
                sql, conditional = self._assembled_sql(sql_node.id, func, cls, call.lineno)
            if not sql or not _SIMILARITY.search(sql):
                continue
            where = f"{self.rel}:{call.lineno}"
            self._row_level_security(sql, call, qual, func, where)
            found = security_placeholder(sql)
            if found is None:
                continue
            clause, name, index = found
            guard = next((test for part, test in conditional if clause.split()[0] in part), None)
            if guard is not None:
                self._sql_guard(clause, guard, call, qual, func, cls, where)
            node = self._bound_value(call, name, index)
            texts = self._texts(node, func, index if isinstance(node, ast.Name) else None) if node is not None else []
            origin = value_origin(texts) if texts else "unknown"
            shown = texts[-1] if texts else "?"
            self.out.acl_sites.append(AclSite(
                file=self.rel, line=call.lineno, function=qual or "<module>", mechanism="sql_where",
                detail=f"{clause[:120]} <- {shown[:80]} ({origin})", enabled_by="", site=where, language="python"))
            if origin == "request":
                self.out.fail_open.append(FailOpen(
                    file=self.rel, line=call.lineno, function=qual or "<module>", kind="ids_from_request",
                    evidence=f"{clause[:80]} bound to {shown[:80]}", site=where))

    def _assembled_sql(self, name: str, func: Any, cls: str | None, line: int) -> tuple[str, list[tuple[str, Any]]]:
        """The SQL a local is built into by `+=` (every part, as if each branch ran), and the parts added
        under an `if` with its test: a WHERE clause appended only in a branch."""
        assigns, _ = self.mod.locals_of(func)
        entries = [e for e in assigns.get(name, ()) if e.line < line]
        start = max((i for i, e in enumerate(entries) if e.kind == "assign"), default=None)
        if start is None:
            return "", []
        ctx = self.ctx(func, cls)
        texts = [C.text_of(self.r.resolve(entries[start].value, ctx), "python")[0]]
        conditional: list[tuple[str, Any]] = []
        ifs = [n for n in self.mod.nodes_of(func).get(ast.If, ())]
        for e in entries[start + 1:]:
            if e.kind != "aug" or not isinstance(e.value, ast.AugAssign) or not isinstance(e.value.op, ast.Add):
                continue
            part = C.text_of(self.r.resolve(e.value.value, ctx), "python")[0]
            texts.append(part)
            if e.block is not None:
                test = next((n.test for n in ifs if n.lineno == e.block[0]), None)
                if test is not None:
                    conditional.append((part, test))
        return " ".join(texts), conditional

    def _sql_guard(self, clause: str, test: Any, call: ast.Call, qual: str, func: Any, cls: str | None,
                   where: str) -> None:
        """The security clause is appended only under `if <test>`: without the value, the query is untrimmed."""
        from ragdiag.codescan.python_acl import presence_of

        value = presence_of(test)
        text = unparse(test, 80)
        if value is not None and isinstance(value, ast.Name):
            param = next((p for p in self.mod.params_of(func) if p.name == value.id), None)
            default = param.default if param is not None else None
            empty = param is not None and (default is None or (isinstance(default, ast.Constant) and not default.value)
                                           or (isinstance(default, (ast.List, ast.Tuple)) and not default.elts))
            if empty:
                was = f"defaults to {unparse(default, 20)}" if default is not None else "may be empty"
                self.out.fail_open.append(FailOpen(
                    file=self.rel, line=call.lineno, function=qual or "<module>", kind="dropped_when_absent",
                    evidence=f"{clause[:80]} is added only `if {text}`; {value.id} {was}: without it the "
                             f"similarity query returns every row", site=where))
                return
        self.out.fail_open.append(FailOpen(
            file=self.rel, line=call.lineno, function=qual or "<module>", kind="dropped_when_absent",
            evidence=f"{clause[:80]} is added only `if {text}`: when that is false the similarity query "
                     f"returns every row", site=where))

    def _row_level_security(self, sql: str, call: ast.Call, qual: str, func: Any, where: str) -> None:
        """Row-level security on the tables the query reads (policies in the tree's SQL keyed on the caller)."""
        from ragdiag.codescan.sql_catalog import identity_policies, sql_catalog

        cat = sql_catalog(self.project)
        if not cat.policies:
            return
        tables = tuple(dict.fromkeys(m.group(1) for m in _FROM_TABLES.finditer(sql)))
        policies = identity_policies(cat, tables)
        if not policies:
            return
        pol = policies[0]
        sets = _SETS_IDENTITY.search(self.fn_low(func) if func is not None else "") or _SETS_IDENTITY.search(self.source)
        detail = (f"row-level security on {', '.join(sorted({p.table for p in policies}))} ({pol.location}: "
                  f"{pol.identity}); the connection " + (f"sets the caller ({sets.group(0).strip()[:40]})" if sets
                                                         else "sets no visible identity"))
        self.out.acl_sites.append(AclSite(file=self.rel, line=call.lineno, function=qual or "<module>",
                                          mechanism="row_level_security", detail=detail[:300], site=where,
                                          language="python"))

    @staticmethod
    def _bound_value(call: ast.Call, name: str, index: int | None) -> ast.AST | None:
        """The argument node bound to the placeholder: a dict entry, a tuple item or an asyncpg argument."""
        params = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg in ("params", "parameters", "vars", "args")), None)
        if name:
            if isinstance(params, ast.Dict):
                for k, val in zip(params.keys, params.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == name:
                        return val
            if isinstance(params, ast.Call) and (callee_name(params) or "") == "dict":
                return next((k.value for k in params.keywords if k.arg == name), None)
            return next((k.value for k in call.keywords if k.arg == name), None)
        if index is None:
            return None
        if isinstance(params, (ast.Tuple, ast.List)):
            return params.elts[index] if index < len(params.elts) else None
        rest = call.args[1:]  # asyncpg: conn.fetch(sql, a, b) binds $1, $2
        return rest[index] if index < len(rest) else None

    def _texts(self, node: ast.AST, func: Any, index: int | None = None) -> list[str]:
        """The value's text, its local assignments and, for a parameter, the callers' arguments (one hop).

        A local list filled by `.append(...)` (`params.append(groups)`) stands for what is appended
        (the `index`-th append for a positional placeholder); the local's own name is no data."""
        texts = [unparse(node, 200)]
        if not isinstance(node, ast.Name) or func is None:
            return texts
        appended = [n.args[0] for n in self.mod.nodes_of(func).get(ast.Call, ())
                    if isinstance(n.func, ast.Attribute) and n.func.attr == "append" and n.args
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == node.id]
        appended.sort(key=lambda n: n.lineno)
        if appended:
            pick = appended[index] if index is not None and index < len(appended) else None
            return self._texts(pick, func) if pick is not None else [unparse(a, 200) for a in appended]
        assigned = self._assigned(node.id, func)
        if assigned:
            texts = assigned
        else:
            texts += assigned
        args = [a.arg for a in func.args.posonlyargs + func.args.args]
        texts += self._param_request_data(node.id, func)
        assigns, _ = self.mod.locals_of(func)  # a local computed from such a parameter (json.dumps(roles))
        for e in assigns.get(node.id, ()):
            for sub in ast.walk(e.value) if e.value is not None else ():
                if isinstance(sub, ast.Name) and sub.id != node.id:
                    texts += self._param_request_data(sub.id, func)
        if node.id in args and len(texts) == 1:
            pos = args.index(node.id)
            for call, _qual, caller, _cls in self.calls:
                if callee_name(call) != func.name:
                    continue
                shift = 1 if args and args[0] in ("self", "cls") and isinstance(call.func, ast.Attribute) else 0
                arg = next((k.value for k in call.keywords if k.arg == node.id), None)
                if arg is None and 0 <= pos - shift < len(call.args):
                    arg = call.args[pos - shift]
                if arg is not None:
                    texts.append(unparse(arg, 200))
                    if isinstance(arg, ast.Name) and caller is not None:
                        texts += self._assigned(arg.id, caller)
        return texts

    def _param_request_data(self, name: str, func: Any, depth: int = 0) -> list[str]:
        """A parameter the web framework fills from the request: ``request.headers[...]`` for a FastAPI
        `Header(...)` / `Query` / `Body` / `Cookie` / `Form` default, and for `Depends(dep)` whatever `dep`'s own
        parameters are, unless `dep` verifies what it reads (a token decoded or validated: the login)."""
        param = next((p for p in self.mod.params_of(func) if p.name == name), None)
        default = param.default if param is not None else None
        if not isinstance(default, ast.Call):
            return []
        kind = callee_name(default) or ""
        if kind in _REQUEST_PARAMS:
            return [f"request.{kind.lower()}s[{name!r}]"]
        if kind != "Depends" or not default.args or depth > 1:
            return []
        dep = callee_name(default.args[0]) if isinstance(default.args[0], ast.Call) else (
            default.args[0].id if isinstance(default.args[0], ast.Name) else None)
        target = next((f for _q, f, _c in getattr(self, "functions", ()) if f.name == dep), None)
        if target is None or _VERIFIES.search(unparse(target, 4000)):
            return []
        out: list[str] = []
        for p in self.mod.params_of(target):
            out += self._param_request_data(p.name, target, depth + 1)
        return out

    def _assigned(self, name: str, func: Any) -> list[str]:
        assigns, _ = self.mod.locals_of(func)
        out = []
        for e in assigns.get(name, ()):
            if e.value is None:
                continue
            out.append(unparse(e.value, 200))
            root = e.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name) and root.id != name:  # body["groups"] where body = request.get_json()
                out += [unparse(x.value, 200) for x in assigns.get(root.id, ()) if x.value is not None]
        return out
