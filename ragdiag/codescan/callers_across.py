"""Values a site's function is handed by its callers in other modules: `k`, `top`, the filter, the query text.

A search inside the application's own function shows its parameters only: `def search(self, query,
k=3): self.index.search(q, k)` reads `default:k`, `SimilaritySearch(text, k, filter)` reads
`parameter:k`. What is sent is what the callers pass (`vector_db.search(emb, k=15)` in another
module, `SimilaritySearch(msg, 10, \\`user eq '${id}'\\`)`). The per-file scanners follow callers
within a module only (`python_callers`); this pass runs once the whole tree is merged and follows
them across modules:

* callers are the functions of the call graph that call the site's function by name, outside test
  files (test calls never run on a request); a method is called through `self`/`cls` in its own
  file or through a name bound to an instance of its class (`vector_db = VectorStore()`), so a
  same-named method of another class is not taken for a caller;
* each call's argument for the parameter is read by keyword or by position (a caller that omits it
  sends the parameter's default, when it has one);
* every caller passes the same known value: the value, resolved, with the callers as provenance;
  values differ: unresolved, the expression lists them per caller (never one value picked); a
  caller passes an expression not known here: a default the site already read stays (its override
  says callers can change it), an unresolved parameter shows the callers' expressions (a filter
  template keeps its text). No caller found: the site is left as it was.

A filter resolved this way that holds a security clause (a security field, or any field compared
with the caller's own identity) is a permission-trimming mechanism of the site.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import AclSite, ResolvedValue
from ragdiag.codescan.python_index import children, walk

__all__ = ["request_ids_from_callers", "resolve_from_callers"]

#: Parameters whose value a check judges (pool sizes, the query text, the filter).
_PARAMS = ("k", "top", "filter", "search_text", "text_k", "top_n_documents")
_FROM_PARAM = re.compile(r"(?:^|\s)(parameter|default):([A-Za-z_$][\w$]*)\b")
_TEST = re.compile(r"(^|/)(tests?|__tests__|spec|e2e)(/|$)|(^|/)(test_[^/]*|[^/]*_tests?\.py|conftest\.py|"
                   r"[^/]*\.(test|spec)\.[jt]sx?)$", re.I)
_MISSING = object()
#: More files calling a name than an application's own wrapper has: a library's generic method, not followed.
_MAX_CALLER_FILES = 12


def _is_py(rel: str) -> bool:
    return rel.endswith(".py")


# ---- parsing the files once ----------------------------------------------------------------------------------

class _Trees:
    """Each file read and parsed at most once per scan; who calls a name, indexed once from the call graph."""

    def __init__(self, project: Any, graph: Any = None) -> None:
        self.project = project
        self._py: dict[str, Any] = {}
        self._js: dict[str, Any] = {}
        self._text: dict[Any, Any] = {}
        self._calling: dict[str, set[str]] | None = None
        self.graph = graph

    def text(self, rel: str) -> str:
        if rel not in self._text:
            self._text[rel] = self.project.read_text(rel) or ""
        return self._text[rel]

    def py_calls(self, rel: str, name: str) -> list[tuple[ast.Call, str, str]]:
        """Calls of `name` in a Python file (all calls of the file indexed by callee name, once)."""
        key = ("pycalls", rel)
        if key not in self._text:
            tree = self.py(rel)
            self._text[key] = _py_call_index(tree) if tree is not None else {}  # type: ignore[index]
        named = ("pycalls", rel, name)
        if named not in self._text:  # receivers written out only for the name asked (unparse is costly)
            self._text[named] = [(call, ast.unparse(receiver) if receiver is not None else "", owner)  # type: ignore[index]
                                 for call, receiver, owner in self._text[key].get(name, [])]  # type: ignore[union-attr]
        return self._text[named]  # type: ignore[index,return-value]

    def py_defs(self, rel: str, name: str) -> list[Any]:
        key = ("pydefs", rel)
        if key not in self._text:
            tree = self.py(rel)
            index: dict[str, list[Any]] = {}
            for n in walk(tree) if tree is not None else ():
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    index.setdefault(n.name, []).append(n)
            self._text[key] = index  # type: ignore[index]
        return self._text[key].get(name, [])  # type: ignore[index,union-attr]

    def js_calls(self, rel: str, name: str) -> list[tuple[Any, str, str]]:
        key = ("jscalls", rel)
        if key not in self._text:
            root = self.js(rel)
            self._text[key] = _js_call_index(root) if root is not None else {}  # type: ignore[index]
        return self._text[key].get(name, [])  # type: ignore[index,union-attr]

    def calling(self, name: str) -> set[str]:
        """Files with a function (or module code) calling `name`, test files left out."""
        if self._calling is None:
            index: dict[str, set[str]] = {}
            for n in self.graph.nodes if self.graph is not None else ():
                if _TEST.search(n.file):
                    continue
                for called in n.calls:
                    index.setdefault(called, set()).add(n.file)
            self._calling = index
        return self._calling.get(name, set())

    def py(self, rel: str) -> ast.Module | None:
        if rel not in self._py:
            try:
                self._py[rel] = ast.parse(self.text(rel))
            except (SyntaxError, ValueError):
                self._py[rel] = None
        return self._py[rel]

    def js(self, rel: str) -> Any:
        if rel not in self._js:
            try:
                from ragdiag.codescan.js_index import parser

                self._js[rel] = parser(rel).parse(self.text(rel).encode("utf-8", "replace")).root_node
            except Exception:  # noqa: BLE001 - a file tree-sitter cannot read adds no caller
                self._js[rel] = None
        return self._js[rel]


# ---- the function's parameters ---------------------------------------------------------------------------------

def _py_params(trees: _Trees, rel: str, name: str, line: int) -> tuple[list[str], dict[str, ast.expr]] | None:
    best = None
    for n in trees.py_defs(rel, name):
        if n.lineno <= line <= (n.end_lineno or n.lineno) and (best is None or n.lineno > best.lineno):
            best = n
    if best is None:
        return None
    a = best.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    defaults = dict(zip([p.arg for p in (*a.posonlyargs, *a.args)][len(a.posonlyargs) + len(a.args)
                                                                  - len(a.defaults):], a.defaults, strict=False))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    return positional, defaults


def _js_params(trees: _Trees, rel: str, name: str, line: int) -> tuple[list[str], dict[str, Any]] | None:
    """Parameter names of the JS/TS function `name` enclosing `line` (declaration, arrow or method)."""
    root = trees.js(rel)
    if root is None:
        return None
    best = None
    stack = [root]
    while stack:
        n = stack.pop()
        stack.extend(n.named_children)
        if n.type not in ("function_declaration", "arrow_function", "function_expression", "method_definition",
                          "function"):
            continue
        if not (n.start_point[0] + 1 <= line <= n.end_point[0] + 1):
            continue
        own = n.child_by_field_name("name")
        label = own.text.decode() if own is not None else ""
        if not label and n.parent is not None and n.parent.type == "variable_declarator":
            decl = n.parent.child_by_field_name("name")
            label = decl.text.decode() if decl is not None else ""
        if label == name and (best is None or n.start_point[0] >= best.start_point[0]):
            best = n
    if best is None:
        return None
    params = best.child_by_field_name("parameters") or best.child_by_field_name("parameter")
    if params is None:
        return None
    if params.type == "identifier":
        return [params.text.decode()], {}
    out, defaults = [], {}
    for p in params.named_children:
        target = p.child_by_field_name("pattern") or p.child_by_field_name("left") or p
        pname = target.text.decode() if target.type == "identifier" else ""
        out.append(pname)
        default = p.child_by_field_name("value") or p.child_by_field_name("right")
        if pname and default is not None:
            defaults[pname] = default
    return out, defaults


# ---- argument values -------------------------------------------------------------------------------------------

def _py_value(node: ast.expr) -> tuple[Any, bool, str, tuple[str, ...]]:
    """(value, resolved, expression, interpolated expressions) of a caller's argument."""
    expr = ast.unparse(node)[:160]
    try:
        return ast.literal_eval(node), True, expr, ()
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.JoinedStr):
        parts, vars_ = [], []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                inner = ast.unparse(v.value) if isinstance(v, ast.FormattedValue) else ast.unparse(v)
                parts.append("{" + inner + "}")
                vars_.append(inner)
        return "".join(parts), False, expr, tuple(vars_)
    return None, False, expr, ()


def _js_value(node: Any) -> tuple[Any, bool, str, tuple[str, ...]]:
    from ragdiag.codescan.js_index import string_value, unwrap

    node = unwrap(node) or node
    expr = " ".join(node.text.decode("utf-8", "replace").split())[:160]
    t = node.type
    if t == "number":
        try:
            num = float(expr)
            return (int(num) if num.is_integer() else num), True, expr, ()
        except ValueError:
            return None, False, expr, ()
    if t == "string":
        return string_value(node), True, expr, ()
    if t in ("undefined", "null") or expr in ("undefined", "null"):
        return None, True, expr, ()
    if t in ("true", "false"):
        return t == "true", True, expr, ()
    if t == "template_string":
        parts, vars_ = [], []
        for c in node.named_children:
            if c.type == "template_substitution":
                inner = " ".join(c.text.decode("utf-8", "replace")[2:-1].split())
                parts.append("${" + inner + "}")
                vars_.append(inner)
            else:
                parts.append(c.text.decode("utf-8", "replace"))
        if not node.named_children:
            return expr.strip("`"), True, expr, ()
        raw = node.text.decode("utf-8", "replace")[1:-1]
        return (raw if vars_ else raw), not vars_, expr, tuple(vars_)
    return None, False, expr, ()


# ---- callers ---------------------------------------------------------------------------------------------------

_BOUND_LINE = re.compile(r"\s*(?:(?:export\s+)?(?:const|let|var)\s+)?(?:self\.|this\.)?([A-Za-z_$][\w$]*)\s*"
                         r"(?::[^=\n]{0,80})?=\s*(?:await\s+)?(?:new\s+)?(?:[A-Za-z_$][\w$]*\.)*")
_ANNOTATED = re.compile(r"([A-Za-z_$][\w$]*)\s*:\s*$")


def _instances(trees: _Trees, files: list[str], cls: str) -> set[str]:
    """Names bound to an instance of `cls` in `files` (`vector_db = VectorStore()`, `x: VectorStore`).

    Each occurrence of the class name is looked at from its own position (what precedes it), so the cost
    is the number of occurrences, not the size of the files."""
    out: set[str] = set()
    for rel in files:
        text = trees.text(rel)
        i = text.find(cls)
        while i != -1:
            end = i + len(cls)
            if (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_$")) and \
                    (end >= len(text) or not (text[end].isalnum() or text[end] in "_$")):
                segment = text[max(text.rfind("\n", 0, i) + 1, i - 160):i]  # the line up to the class name
                bound = _BOUND_LINE.fullmatch(segment)
                if bound and text[end:end + 40].lstrip().startswith("("):
                    out.add(bound.group(1))
                else:
                    annotated = _ANNOTATED.search(segment[-60:])
                    if annotated:
                        out.add(annotated.group(1))
            i = text.find(cls, end)
    return out


def _py_call_index(tree: ast.Module) -> dict[str, list[tuple[ast.Call, ast.expr | None, str]]]:
    """Every call of a module by callee name: (call, receiver node or None, enclosing function name)."""
    out: dict[str, list[tuple[ast.Call, ast.expr | None, str]]] = {}
    stack: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while stack:
        node, owner = stack.pop()
        for child in children(node):
            here = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Attribute):
                    out.setdefault(f.attr, []).append((child, f.value, owner))
                elif isinstance(f, ast.Name):
                    out.setdefault(f.id, []).append((child, None, owner))
            stack.append((child, here))
    return out


def _js_call_index(root: Any) -> dict[str, list[tuple[Any, str, str]]]:
    out: dict[str, list[tuple[Any, str, str]]] = {}
    for name, item in _js_calls_all(root):
        out.setdefault(name, []).append(item)
    return out


def _js_calls_all(root: Any) -> list[tuple[str, tuple[Any, str, str]]]:
    out = []
    stack = [(root, "<module>")]
    while stack:
        n, owner = stack.pop()
        if n.type in ("function_declaration", "method_definition"):
            own = n.child_by_field_name("name")
            owner = own.text.decode() if own is not None else owner
        elif n.type == "variable_declarator":
            own = n.child_by_field_name("name")
            owner = own.text.decode() if own is not None else owner
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and f.type == "identifier":
                out.append((f.text.decode(), (n, "", owner)))
            elif f is not None and f.type == "member_expression":
                prop = f.child_by_field_name("property")
                if prop is not None:
                    obj = f.child_by_field_name("object")
                    out.append((prop.text.decode(), (n, obj.text.decode() if obj is not None else "", owner)))
        stack.extend((c, owner) for c in n.named_children)
    return out


def _caller_files(trees: _Trees, site_file: str, name: str) -> list[str]:
    py = _is_py(site_file)
    return sorted(f for f in trees.calling(name) if _is_py(f) == py)


def _variants(trees: _Trees, graph: Any, site: Any, name: str, cls: str | None,
              wanted: dict[str, str]) -> dict[str, list[tuple[Any, bool, str, tuple[str, ...], str]]] | None:
    """Per parameter, what each caller passes: (value, resolved, expression, vars, where); None: no caller."""
    py = _is_py(site.file)
    files = _caller_files(trees, site.file, name)
    if cls:  # a method's callers use one of its instances (built where the class is called) or `self`
        instances = _instances(trees, sorted({site.file, *files, *_caller_files(trees, site.file, cls)}), cls)
        files = [f for f in files if f == site.file or any(i in trees.text(f) for i in instances)]
    else:
        instances = set()
    if not files or len(files) > _MAX_CALLER_FILES:
        return None  # nobody calls it, or a name so common (a library's `search`) that callers are not the app's
    if py:
        sig = _py_params(trees, site.file, name, site.line)
        if sig is None:
            return None
        positional, defaults = sig
    else:
        js = _js_params(trees, site.file, name, site.line)
        if js is None:
            return None
        positional, defaults = js
    out: dict[str, list[tuple[Any, bool, str, tuple[str, ...], str]]] = {k: [] for k in wanted}
    found = 0
    for rel in files:
        calls = trees.py_calls(rel, name) if py else trees.js_calls(rel, name)
        for call, receiver, owner in calls:
            if owner == name and rel == site.file:
                continue  # the function calling itself (or the wrapped library call of the same name)
            if cls:
                root = receiver.split(".", 1)[0].split("[", 1)[0]
                if receiver in ("self", "cls", "this"):
                    if rel != site.file:
                        continue
                elif root not in instances and receiver.rsplit(".", 1)[-1] not in instances:
                    continue
            elif receiver and not py and receiver not in ("",):
                continue  # `obj.name(...)` is some object's method, not the module function
            where = f"{owner} ({rel}:{call.lineno if py else call.start_point[0] + 1})"
            if py:
                args = list(call.args)
                kws = {k.arg: k.value for k in call.keywords if k.arg}
                if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in call.keywords):
                    return None  # `f(*a)`, `f(**kw)`: the mapping of arguments is not readable
            else:
                from ragdiag.codescan.js_index import args_of

                args = args_of(call)
                kws = {}
                if any(a.type == "spread_element" for a in args):
                    return None
            found += 1
            for key, pname in wanted.items():
                node = kws.get(pname, _MISSING)
                if node is _MISSING and pname in positional and positional.index(pname) < len(args):
                    node = args[positional.index(pname)]
                if node is _MISSING:
                    if pname in defaults:
                        value = _py_value(defaults[pname]) if py else _js_value(defaults[pname])
                        out[key].append((*value, where))
                    else:
                        out[key].append((None, not py, "absent", (), where))  # JS: undefined
                    continue
                out[key].append((*(_py_value(node) if py else _js_value(node)), where))
    return out if found else None


def _merged(p: ResolvedValue, variants: list[tuple[Any, bool, str, tuple[str, ...], str]]) -> ResolvedValue:
    values = {repr(v[0]) for v in variants}
    prov = "; ".join(v[4] for v in variants[:3])
    if all(v[1] for v in variants) and len(values) == 1:
        return dataclasses.replace(p, value=variants[0][0], resolved=True, source="callers", provenance=prov[:300],
                                   expression=p.expression or variants[0][2], override="", from_fstring=False,
                                   fstring_vars=())
    if len(variants) == 1 or len({v[2] for v in variants}) == 1:
        v = variants[0]
        return dataclasses.replace(p, value=v[0], resolved=False, source="callers", provenance=prov[:300],
                                   expression=f"{v[2]} from {v[4]}"[:300], override="", from_fstring=bool(v[3]),
                                   fstring_vars=tuple(v[3]))
    shown = "; ".join(f"{v[2]} from {v[4]}" for v in variants[:4])
    return dataclasses.replace(p, value=None, resolved=False, source="callers", provenance=prov[:300],
                               expression=shown[:300], override="", from_fstring=False, fstring_vars=())


def resolve_from_callers(project: Any, merged: Any, graph: Any) -> None:
    """Replace the parameters a site reads from its function's parameters with what its callers pass."""
    trees = _Trees(project, graph)
    out = []
    for site in merged.search_calls:
        wanted: dict[str, str] = {}
        for key in _PARAMS:
            p = site.params.get(key)
            if p is None or p.source == "callers":
                continue
            m = _FROM_PARAM.search(p.source) or (_FROM_PARAM.search(p.override) if not p.resolved else None)
            if m:
                wanted[key] = m.group(2)
        if not wanted:
            out.append(site)
            continue
        parts = site.function.split(".")
        name, cls = parts[-1], (parts[-2] if len(parts) > 1 else None)
        try:
            variants = _variants(trees, graph, site, name, cls, wanted)
        except (RecursionError, ValueError, AttributeError):
            variants = None
        if not variants:
            out.append(site)
            continue
        params = dict(site.params)
        for key, vs in variants.items():
            if not vs:
                continue
            if params[key].resolved and not all(v[1] for v in vs):
                continue  # a caller passes a value not known here: the default (with its override) says more
            params[key] = _merged(params[key], vs)
        site = dataclasses.replace(site, params=params)
        _acl_from_callers(merged, site, params.get("filter"))
        out.append(site)
    merged.search_calls[:] = out


def _acl_from_callers(merged: Any, site: Any, f: ResolvedValue | None) -> None:
    """A filter the callers pass that holds a security clause is the site's trimming mechanism."""
    if f is None or f.source != "callers" or not isinstance(f.value, str):
        return
    if not (C.SECURITY_FILTER_RE.search(f.value) or C.identity_clauses(f.value)):
        return
    mech = "sql_where" if site.kind == "sql_similarity" else "odata_filter" \
        if site.kind in ("azure_search", "rest_search", "on_your_data", "agentic_retrieval") else "framework_filter"
    if any(a.site == site.location and a.mechanism == mech for a in merged.acl_sites):
        return
    merged.acl_sites.append(AclSite(file=site.file, line=site.line, function=site.function, mechanism=mech,
                                    detail=f"{f.value[:160]} (passed by {f.provenance[:120]})", site=site.location,
                                    language=site.language))


# ---- security ids a caller takes from the request ----------------------------------------------------------------

_CLAUSE = re.compile(r"\b([A-Za-z_][\w/]*)\s+(?:eq|ne)\s+'?\{([A-Za-z_]\w*)\}|search\.in\(\s*([A-Za-z_]\w*)\s*,\s*'?\{"
                     r"([A-Za-z_]\w*)\}")


def _py_all_params(trees: _Trees, rel: str, name: str, line: int) -> list[str]:
    for n in trees.py_defs(rel, name):
        if n.lineno <= line <= (n.end_lineno or n.lineno):
            a = n.args
            return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return []


def _enclosing(tree: ast.Module, line: int) -> ast.AST:
    best: ast.AST = tree
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is tree or n.lineno > getattr(best, "lineno", 0):
                best = n
    return best


def _origins(scope: ast.AST, node: ast.expr, depth: int = 0) -> list[str]:
    """The texts `node` comes from in `scope`: itself, and (two steps) what its root name was assigned."""
    out = [ast.unparse(node)[:200]]
    if depth >= 2:
        return out
    root = node
    while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if isinstance(root, ast.Name):
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == root.id for t in n.targets):
                out += _origins(scope, n.value, depth + 1)
    return out


def _dict_arg(scope: ast.AST, name: str, key: str) -> ast.expr | None:
    """The value `key` has in the local dict `name` handed over as `**name` (a literal, or `name[key] = v`)."""
    for n in ast.walk(scope):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets) \
                and isinstance(n.value, ast.Dict):
            for k, v in zip(n.value.keys, n.value.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == key:
                    return v
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name \
                        and isinstance(t.slice, ast.Constant) and t.slice.value == key:
                    return n.value
    return None


def request_ids_from_callers(project: Any, merged: Any, graph: Any) -> None:
    """A security clause comparing with a parameter its callers fill from the request is `ids_from_request`.

    (`hybrid_search(query, user_id, active_group_id=None)` filters `group_id eq '{active_group_id}'`; the
    route calls it with `active_group_id = data.get('active_group_id')`, `data = request.get_json()`, even
    through `**search_args`: any caller may name any group.) Python callers, as the call graph finds them."""
    from ragdiag.codescan.model import FailOpen

    trees = _Trees(project, graph)
    seen = {(f.site, f.kind) for f in merged.fail_open}
    sites_of: dict[tuple[str, str], list[Any]] = {}
    for s in merged.search_calls:
        sites_of.setdefault((s.file, s.function), []).append(s)
    for sf in merged.security_filters:
        if not sf.file.endswith(".py") or sf.from_request or not sf.fstring:
            continue
        clauses = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _CLAUSE.finditer(sf.expression)]
        clauses = [(fld, var) for fld, var in clauses if C.SECURITY_FIELD_RE.match(fld.split("/")[0])]
        if not clauses:
            continue
        name = sf.function.rsplit(".", 1)[-1]
        params = _py_all_params(trees, sf.file, name, sf.line)
        wanted = {var: fld for fld, var in clauses if var in params}
        if not wanted:
            continue
        for rel in _caller_files(trees, sf.file, name):
            tree = trees.py(rel)
            if tree is None:
                continue
            for call, _receiver, owner in trees.py_calls(rel, name):
                scope = _enclosing(tree, call.lineno)
                for var, fld in wanted.items():
                    node = next((k.value for k in call.keywords if k.arg == var), None)
                    if node is None:
                        for k in call.keywords:
                            if k.arg is None and isinstance(k.value, ast.Name):
                                node = _dict_arg(scope, k.value.id, var)
                    if node is None and var in params and params.index(var) < len(call.args):
                        node = call.args[params.index(var)]
                    if node is None:
                        continue
                    texts = _origins(scope, node)
                    if not any(C.is_request_expr(t) or C.CLIENT_DATA_RE.search(t) for t in texts) \
                            or any(C.is_identity_expr(t) for t in texts):
                        continue
                    sites = sites_of.get((sf.file, sf.function), [])
                    site = min(sites, key=lambda s: abs(s.line - sf.line)) if sites else None
                    loc = site.location if site is not None else f"{sf.file}:{sf.line}"
                    if (loc, "ids_from_request") in seen:
                        continue
                    seen.add((loc, "ids_from_request"))
                    merged.fail_open.append(FailOpen(
                        file=sf.file, line=sf.line, function=sf.function, kind="ids_from_request",
                        evidence=(f"{fld} is compared with the parameter {var}; {owner} ({rel}:{call.lineno}) passes "
                                  f"{' <- '.join(texts[:3])}")[:300], site=loc, language="python"))
