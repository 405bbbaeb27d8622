"""JavaScript / TypeScript client code, read with tree-sitter (never run).

Finds REST calls to `/docs/search` (fetch, axios, ky/got, `client.post`),
the Azure JS SDK `searchClient.search(text, options)`, LangChain.js / LlamaIndex.TS
retrievers, FAISS-node `index.search`, pgvector SQL, OpenAI / LangChain chat
calls, prompt and budget constants, citation handlers and security filters.
Resolution mirrors the Python scanner: literals, template strings, `+`
concatenation, top-level constants (also imported from a sibling module of the
scanned tree), simple locals of the enclosing functions, object literals, and
same-module helper functions returning an object literal.
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan._common import Val, export, lit, unknown
from ragdiag.codescan.model import (
    BudgetConstant,
    CitationCheck,
    LLMCallSite,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
)
from ragdiag.codescan.prompts import prompt_rules

FUNC_TYPES = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                        "function", "arrow_function", "method_definition", "generator_function"})
UNWRAP_TYPES = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression",
                          "non_null_expression", "type_assertion", "await_expression"})
HTTP_FUNCS = frozenset({"fetch", "$fetch", "ofetch", "ky", "got", "axios", "request"})
HTTP_METHODS = frozenset({"post", "get", "put", "patch", "request"})
LC_METHODS = frozenset({"similaritySearch", "similaritySearchWithScore", "similaritySearchVectorWithScore",
                        "maxMarginalRelevanceSearch", "hybridSearch", "semanticHybridSearch"})
SQL_FUNCS = frozenset({"cosineDistance", "l2Distance", "innerProduct", "cosine_distance"})
LLM_METHODS = frozenset({"invoke", "stream", "batch", "call", "predict"})
_SQL_RE = re.compile(r"<->|<=>|<#>|cosine_distance")
_SQL_KEYWORDS = re.compile(r"\b(select|order\s+by|limit)\b", re.I)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "`": "`", "$": "$", "0": "\0"}

_PARSERS: dict[str, Any] = {}


def _parser(rel: str):
    lower = rel.lower()
    key = "tsx" if lower.endswith(".tsx") else "ts" if lower.endswith((".ts", ".mts", ".cts")) else "js"
    parser = _PARSERS.get(key)
    if parser is None:
        import tree_sitter

        if key == "js":
            import tree_sitter_javascript as grammar

            lang = tree_sitter.Language(grammar.language())
        else:
            import tree_sitter_typescript as grammar_ts

            lang = tree_sitter.Language(grammar_ts.language_tsx() if key == "tsx"
                                        else grammar_ts.language_typescript())
        parser = tree_sitter.Parser(lang)
        _PARSERS[key] = parser
    return parser


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _line(node: Any) -> int:
    return node.start_point[0] + 1


def _short(node: Any, limit: int = 240) -> str:
    t = " ".join(_text(node).split())
    return t if len(t) <= limit else t[: limit - 3] + "..."


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name) if node is not None else None


def _unwrap(node: Any) -> Any:
    while node is not None and node.type in UNWRAP_TYPES:
        inner = node.named_children
        node = inner[0] if inner else None
    return node


def _args(call: Any) -> list[Any]:
    a = _field(call, "arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _string_value(node: Any) -> str:
    out = []
    for c in node.named_children:
        if c.type == "string_fragment":
            out.append(_text(c))
        elif c.type == "escape_sequence":
            t = _text(c)
            out.append(_ESCAPES.get(t[1:2], t[1:]))
    if not node.named_children:
        raw = _text(node)
        return raw[1:-1]
    return "".join(out)


def _number(text: str) -> int | float | None:
    t = text.replace("_", "")
    try:
        if t.lower().startswith(("0x", "0o", "0b")):
            return int(t, 0)
        return int(t) if re.fullmatch(r"-?\d+", t) else float(t)
    except ValueError:
        return None


def _ctor_tag(name: str) -> str | None:
    last = name.rsplit(".", 1)[-1]
    if last == "SearchClient":
        return "SearchClient"
    if last in ("AzureOpenAI",):
        return "AzureOpenAI"
    if last in ("OpenAI",):
        return "OpenAI"
    if last in ("AzureChatOpenAI", "ChatOpenAI") or (last.startswith("Chat") and last[4:5].isupper()):
        return "LCChat"
    if last in ("IndexFlatL2", "IndexFlatIP", "IndexHNSWFlat") or name.startswith("faiss."):
        return "faiss"
    if last == "VectorStoreIndex":
        return "LlamaIndex"
    return None


def _func_name(node: Any, parent: Any) -> str | None:
    """The name a function node is known by: declaration name, method name, or the variable/key holding it."""
    name = _field(node, "name")
    if name is not None:
        return _text(name)
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        return _text(_field(parent, "name"))
    if parent.type == "pair":
        return _text(_field(parent, "key")).strip("'\"")
    if parent.type in ("assignment_expression", "public_field_definition", "field_definition"):
        target = _field(parent, "left") or _field(parent, "name") or _field(parent, "property")
        return _text(target).split(".")[-1] if target is not None else None
    return None


class _Ctx:
    __slots__ = ("mod", "funcs", "cls", "bindings", "depth")

    def __init__(self, mod: _JSModule, funcs: tuple[Any, ...] = (), cls: str | None = None,
                 bindings: dict[str, Val] | None = None, depth: int = 0) -> None:
        self.mod = mod
        self.funcs = funcs
        self.cls = cls
        self.bindings = bindings
        self.depth = depth


def _walk_scope(node: Any):
    """Descendants of a function (or program) not inside nested functions."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        yield n
        if n.type in FUNC_TYPES or n.type == "class_declaration":
            continue
        stack.extend(reversed(n.children))


def _walk_all(node: Any):
    """All descendants, callbacks included (a citation filter usually lives in an arrow function)."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _params_of(func: Any) -> list[str]:
    out: list[str] = []
    single = _field(func, "parameter")
    if single is not None:
        return [_text(single)]
    params = _field(func, "parameters")
    if params is None:
        return out
    for p in params.named_children:
        target = p
        if p.type in ("required_parameter", "optional_parameter"):
            target = _field(p, "pattern") or p
        if target.type == "assignment_pattern":
            target = _field(target, "left") or target
        if target.type == "rest_pattern":
            target = target.named_children[0] if target.named_children else target
        if target.type == "identifier":
            out.append(_text(target))
        else:
            for sub in _walk_scope(target):
                if sub.type in ("identifier", "shorthand_property_identifier_pattern"):
                    out.append(_text(sub))
    return out


class _JSModule:
    def __init__(self, project: C.Project, rel: str, tree: Any) -> None:
        self.project = project
        self.rel = rel
        self.dotted = C.module_name(rel)
        self.root = tree.root_node
        self.consts: dict[str, Any] = {}
        self.const_lines: dict[str, int] = {}
        self.functions: dict[str, Any] = {}
        self.imports: dict[str, tuple[str | None, str]] = {}
        self._locals: dict[int, dict[str, list[tuple[int, str, Any]]]] = {}
        self._index()

    def _index(self) -> None:
        for stmt in self.root.named_children:
            decl = stmt
            if stmt.type == "export_statement":
                decl = _field(stmt, "declaration") or (stmt.named_children[-1] if stmt.named_children else stmt)
            if decl.type in ("lexical_declaration", "variable_declaration"):
                for d in decl.named_children:
                    if d.type != "variable_declarator":
                        continue
                    name = _field(d, "name")
                    value = _field(d, "value")
                    if name is not None and name.type == "identifier" and value is not None:
                        n = _text(name)
                        v = _unwrap(value) if value.type != "await_expression" else value
                        if v is not None and v.type in ("arrow_function", "function_expression", "function"):
                            self.functions[n] = v
                        else:
                            self.consts[n] = value
                            self.const_lines[n] = _line(d)
            elif decl.type in ("function_declaration", "generator_function_declaration"):
                name = _field(decl, "name")
                if name is not None:
                    self.functions[_text(name)] = decl
            elif decl.type == "class_declaration":
                cname = _text(_field(decl, "name"))
                body = _field(decl, "body")
                for m in body.named_children if body is not None else []:
                    if m.type == "method_definition":
                        self.functions[f"{cname}.{_text(_field(m, 'name'))}"] = m
            elif stmt.type == "import_statement":
                self._import(stmt)

    def _import(self, stmt: Any) -> None:
        source = _field(stmt, "source")
        spec = _string_value(source) if source is not None else ""
        target = self._resolve_path(spec)
        for clause in stmt.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.imports[_text(part)] = (target, "default")
                elif part.type == "namespace_import":
                    ident = [c for c in part.named_children if c.type == "identifier"]
                    if ident:
                        self.imports[_text(ident[0])] = (target, "*")
                elif part.type == "named_imports":
                    for s in part.named_children:
                        if s.type != "import_specifier":
                            continue
                        name = _text(_field(s, "name"))
                        alias = _field(s, "alias")
                        self.imports[_text(alias) if alias is not None else name] = (target, name)

    def _resolve_path(self, spec: str) -> str | None:
        if not spec.startswith("."):
            return None
        base = self.rel.rsplit("/", 1)[0] if "/" in self.rel else ""
        parts = [p for p in (base.split("/") if base else [])]
        for piece in spec.split("/"):
            if piece in ("", "."):
                continue
            if piece == "..":
                if parts:
                    parts.pop()
            else:
                parts.append(piece)
        stem = "/".join(parts)
        for cand in (stem, *(stem + ext for ext in (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts")),
                     *(f"{stem}/index{ext}" for ext in (".ts", ".tsx", ".js", ".jsx"))):
            if cand in self.project.fileset:
                return cand
        stripped = re.sub(r"\.(js|mjs|cjs|jsx)$", "", stem)
        if stripped != stem:
            for ext in (".ts", ".tsx", ".mts"):
                if stripped + ext in self.project.fileset:
                    return stripped + ext
        return None

    def locals_of(self, func: Any) -> dict[str, list[tuple[int, str, Any]]]:
        key = func.id if hasattr(func, "id") else id(func)
        cached = self._locals.get(key)
        if cached is not None:
            return cached
        out: dict[str, list[tuple[int, str, Any]]] = {}
        body = _field(func, "body") or func
        for n in _walk_scope(body):
            t = n.type
            if t == "variable_declarator":
                name = _field(n, "name")
                value = _field(n, "value")
                if name is not None and name.type == "identifier":
                    out.setdefault(_text(name), []).append((_line(n), "assign" if value is not None else "other",
                                                            value))
                elif name is not None:
                    for sub in _walk_scope(name):
                        if sub.type in ("identifier", "shorthand_property_identifier_pattern"):
                            out.setdefault(_text(sub), []).append((_line(n), "other", None))
            elif t == "assignment_expression":
                left = _field(n, "left")
                if left is not None and left.type == "identifier":
                    out.setdefault(_text(left), []).append((_line(n), "assign", _field(n, "right")))
                elif left is not None and left.type in ("member_expression", "subscript_expression"):
                    obj = _field(left, "object")
                    if obj is not None and obj.type == "identifier":
                        out.setdefault(_text(obj), []).append((_line(n), "store", n))
            elif t == "augmented_assignment_expression":
                left = _field(n, "left")
                if left is not None and left.type == "identifier":
                    out.setdefault(_text(left), []).append((_line(n), "aug", n))
            elif t in ("for_in_statement",):
                left = _field(n, "left")
                if left is not None:
                    for sub in [left, *_walk_scope(left)]:
                        if sub.type == "identifier":
                            out.setdefault(_text(sub), []).append((_line(n), "other", None))
        for v in out.values():
            v.sort(key=lambda e: e[0])
        self._locals[key] = out
        return out


def _load_module(project: C.Project, rel: str) -> _JSModule | None:
    key = ("js", rel)
    if key in project.cache:
        return project.cache[key]
    mod = None
    text = project.read_text(rel)
    if text is not None:
        try:
            mod = _JSModule(project, rel, _parser(rel).parse(text.encode("utf-8")))
        except Exception:  # noqa: BLE001 - an unreadable sibling only stops resolution
            mod = None
    project.cache[key] = mod
    return mod


class _Resolver:
    MAX_DEPTH = 24
    MAX_CALL_DEPTH = 3

    def __init__(self, project: C.Project) -> None:
        self.project = project
        self.depth = 0
        self.active: set[tuple[Any, ...]] = set()

    def resolve(self, node: Any, ctx: _Ctx) -> Val:
        if node is None:
            return unknown("missing")
        if self.depth > self.MAX_DEPTH:
            return unknown("too deep", _short(node), node, ctx)
        self.depth += 1
        try:
            v = self._resolve(node, ctx)
        except RecursionError:
            v = unknown("too deep", "", node, ctx)
        finally:
            self.depth -= 1
        if v.node is not node and v.kind != "call":
            v = v.copy(node=node, ctx=ctx, expr=_short(node))
        elif not v.expr:
            v.expr = _short(node)
        return v

    def _resolve(self, node: Any, ctx: _Ctx) -> Val:
        t = node.type
        if t == "string":
            return lit(_string_value(node), "literal", node, ctx)
        if t == "template_string":
            return self._template(node, ctx)
        if t == "number":
            n = _number(_text(node))
            return lit(n, "literal", node, ctx) if n is not None else unknown("literal", _text(node), node, ctx)
        if t in ("true", "false"):
            return lit(t == "true", "literal", node, ctx)
        if t in ("null", "undefined"):
            return lit(None, "literal", node, ctx)
        if t == "identifier" or t == "shorthand_property_identifier":
            return self._name(_text(node), ctx, _line(node), node)
        if t in UNWRAP_TYPES:
            inner = _unwrap(node)
            return self.resolve(inner, ctx) if inner is not None else unknown("expression", _short(node))
        if t == "member_expression":
            return self._member(node, ctx)
        if t == "subscript_expression":
            base = self.resolve(_field(node, "object"), ctx)
            idx = self.resolve(_field(node, "index"), ctx)
            if base.kind == "dict" and idx.kind == "scalar" and idx.resolved and base.items \
                    and str(idx.value) in base.items:
                return base.items[str(idx.value)]
            if base.kind == "list" and idx.kind == "scalar" and isinstance(idx.value, int) and base.elems \
                    and 0 <= idx.value < len(base.elems):
                return base.elems[idx.value]
            return unknown("subscript", _short(node), node, ctx)
        if t == "binary_expression":
            return self._binary(node, ctx)
        if t == "unary_expression":
            arg = self.resolve(_field(node, "argument"), ctx)
            op = _text(_field(node, "operator"))
            if arg.kind == "scalar" and arg.resolved and op == "-" and isinstance(arg.value, (int, float)) \
                    and not isinstance(arg.value, bool):
                return lit(-arg.value, arg.source, node, ctx)
            if arg.kind == "scalar" and arg.resolved and op == "!":
                return lit(not arg.value, arg.source, node, ctx)
            return unknown("expression", _short(node), node, ctx)
        if t == "object":
            return self._object(node, ctx)
        if t == "array":
            elems = [self.resolve(e, ctx) for e in node.named_children if e.type != "comment"]
            return C.make_list(elems, node, ctx)
        if t == "call_expression":
            return self._call(node, ctx)
        if t == "new_expression":
            ctor = _text(_field(node, "constructor"))
            return Val("call", None, False, f"call:new {ctor}", _short(node), call=ctor, node=node, ctx=ctx)
        if t == "ternary_expression":
            a = self.resolve(_field(node, "consequence"), ctx)
            b = self.resolve(_field(node, "alternative"), ctx)
            if a.kind == b.kind == "scalar" and a.resolved and b.resolved and a.value == b.value:
                return a
            return unknown("conditional", _short(node), node, ctx)
        return unknown("expression", _short(node), node, ctx)

    def _template(self, node: Any, ctx: _Ctx) -> Val:
        parts: list[Val] = []
        vars_: list[str] = []
        for c in node.named_children:
            if c.type == "string_fragment":
                parts.append(lit(_text(c)))
            elif c.type == "escape_sequence":
                t = _text(c)
                parts.append(lit(_ESCAPES.get(t[1:2], t[1:])))
            elif c.type == "template_substitution":
                inner_nodes = c.named_children
                if not inner_nodes:
                    continue
                expr = _short(inner_nodes[0])
                vars_.append(expr)
                v = self.resolve(inner_nodes[0], ctx)
                parts.append(v if v.kind == "scalar" else v.copy(expr=expr))
        return C.concat(parts, "js", fstring=True, source="template", node=node, ctx=ctx, vars=tuple(vars_))

    def _binary(self, node: Any, ctx: _Ctx) -> Val:
        op = _text(_field(node, "operator"))
        left = self.resolve(_field(node, "left"), ctx)
        right = self.resolve(_field(node, "right"), ctx)
        if op == "+" and (left.is_str or right.is_str):
            extra = tuple(x.expr for x in (left, right) if not x.resolved and not x.is_str)
            return C.concat([left, right], "js", fstring=False, source="concat", node=node, ctx=ctx, vars=extra)
        if op in ("??", "||") and left.kind == "unknown" and right.resolved:
            return unknown("conditional", _short(node), node, ctx)
        if left.kind == right.kind == "scalar" and left.resolved and right.resolved \
                and isinstance(left.value, (int, float)) and isinstance(right.value, (int, float)) \
                and not isinstance(left.value, bool) and not isinstance(right.value, bool):
            try:
                value = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                         "/": lambda a, b: a / b}[op](left.value, right.value)
                return lit(value, "expression", node, ctx)
            except (KeyError, ArithmeticError):
                pass
        return unknown("expression", _short(node), node, ctx)

    def _object(self, node: Any, ctx: _Ctx) -> Val:
        items: dict[str, Val] = {}
        open_ = False
        builder = None
        for c in node.named_children:
            if c.type == "pair":
                key = _field(c, "key")
                value = _field(c, "value")
                if key is None or value is None:
                    continue
                if key.type == "property_identifier":
                    k = _text(key)
                elif key.type == "string":
                    k = _string_value(key)
                elif key.type == "number":
                    k = _text(key)
                else:
                    kv = self.resolve(key.named_children[0] if key.named_children else key, ctx)
                    if not (kv.kind == "scalar" and kv.resolved):
                        open_ = True
                        continue
                    k = str(kv.value)
                items[k] = self.resolve(value, ctx)
            elif c.type == "shorthand_property_identifier":
                items[_text(c)] = self.resolve(c, ctx)
            elif c.type == "spread_element":
                inner = c.named_children[0] if c.named_children else None
                extra = self.resolve(inner, ctx) if inner is not None else unknown("spread")
                if extra.kind == "dict":
                    items.update(extra.items or {})
                    open_ = open_ or extra.open
                    builder = builder or extra.builder
                else:
                    open_ = True
        out = C.make_dict(items, open=open_, node=node, ctx=ctx)
        out.builder = builder
        return out

    def _name(self, name: str, ctx: _Ctx, line: int, node: Any) -> Val:
        if ctx.bindings is not None and name in ctx.bindings:
            return ctx.bindings[name]
        mod = ctx.mod
        for func in ctx.funcs:
            entries = [e for e in mod.locals_of(func).get(name, ()) if e[0] < line]
            if entries:
                assigns = [e for e in entries if e[1] == "assign"]
                if not assigns:
                    return unknown(f"local:{name}", name, node, ctx)
                a_line, _, value = assigns[-1]
                later = [e for e in entries if e[0] > a_line or (e is not assigns[-1] and e[0] == a_line)]
                if len(assigns) > 1 or any(e[1] in ("aug", "other") for e in later):
                    return unknown(f"local:{name} (reassigned)", name, node, ctx)
                key = ("local", func.id, name, a_line, id(ctx.bindings))
                if key in self.active:
                    return unknown(f"local:{name}", name, node, ctx)
                self.active.add(key)
                try:
                    idx = ctx.funcs.index(func)
                    v = self.resolve(value, _Ctx(mod, ctx.funcs[idx:], ctx.cls, ctx.bindings, ctx.depth))
                finally:
                    self.active.discard(key)
                stores = [e for e in later if e[1] == "store"]
                if stores and v.kind == "dict":
                    v = self._apply_stores(v, stores, ctx)
                elif stores:
                    v = unknown(f"local:{name} (modified)", name, node, ctx)
                return v.copy(source=f"local:{name}") if v.source in ("literal", "") else v
            if name in _params_of(func):
                return unknown(f"parameter:{name}", name, node, ctx)
        if name in mod.consts:
            key = ("const", mod.rel, name)
            if key in self.active:
                return unknown(f"constant:{name}", name, node, ctx)
            self.active.add(key)
            try:
                v = self.resolve(mod.consts[name], _Ctx(mod))
            finally:
                self.active.discard(key)
            return v.copy(source=f"constant:{name}") if not v.source.startswith(("import:", "constant:")) else v
        if name in mod.imports:
            target_rel, attr = mod.imports[name]
            if target_rel is not None and attr not in ("*", "default"):
                target = _load_module(self.project, target_rel)
                if target is not None and attr in target.consts:
                    key = ("const", target.rel, attr)
                    if key not in self.active:
                        self.active.add(key)
                        try:
                            v = self.resolve(target.consts[attr], _Ctx(target))
                        finally:
                            self.active.discard(key)
                        return v.copy(source=f"import:{target.dotted}.{attr}")
            return unknown(f"import:{name}", name, node, ctx)
        return unknown(f"name:{name}", name, node, ctx)

    def _apply_stores(self, v: Val, stores: list[tuple[int, str, Any]], ctx: _Ctx) -> Val:
        items = dict(v.items or {})
        open_ = v.open
        for _, _, assign in stores:
            left = _field(assign, "left")
            right = _field(assign, "right")
            key = None
            if left.type == "member_expression":
                key = _text(_field(left, "property"))
            else:
                idx = self.resolve(_field(left, "index"), ctx)
                if idx.kind == "scalar" and idx.resolved:
                    key = str(idx.value)
            if key is None:
                open_ = True
            else:
                items[key] = self.resolve(right, ctx)
        return C.make_dict(items, open=open_, node=v.node, ctx=v.ctx).copy(source=v.source, builder=v.builder)

    def _member(self, node: Any, ctx: _Ctx) -> Val:
        text = _text(node)
        if text.startswith(("process.env.", "import.meta.env.")):
            return unknown(f"env:{text.rsplit('.', 1)[-1]}", text, node, ctx)
        obj = _field(node, "object")
        prop = _text(_field(node, "property"))
        if obj is not None and obj.type == "identifier" and _text(obj) in ctx.mod.imports:
            target_rel, attr = ctx.mod.imports[_text(obj)]
            if attr == "*" and target_rel is not None:
                target = _load_module(self.project, target_rel)
                if target is not None and prop in target.consts:
                    v = self.resolve(target.consts[prop], _Ctx(target))
                    return v.copy(source=f"import:{target.dotted}.{prop}")
        if obj is not None and obj.type != "this":
            base = self.resolve(obj, ctx)
            if base.kind == "dict" and base.items and prop in base.items:
                return base.items[prop]
        return unknown(f"attribute:{_short(node, 80)}", text, node, ctx)

    def _call(self, node: Any, ctx: _Ctx) -> Val:
        fn = _field(node, "function")
        name = _text(fn)
        args = _args(node)
        if name == "JSON.stringify" and args:
            return self.resolve(args[0], ctx)
        if fn is not None and fn.type == "member_expression" and _text(_field(fn, "property")) == "join":
            seq = self.resolve(_field(fn, "object"), ctx)
            sep = self.resolve(args[0], ctx) if args else lit(",")
            if seq.kind == "list" and seq.elems is not None and sep.is_str:
                parts: list[Val] = []
                for i, e in enumerate(seq.elems):
                    if i:
                        parts.append(sep)
                    parts.append(e)
                return C.concat(parts, "js", fstring=False, source="join", node=node, ctx=ctx)
        if name in ("String", "Number") and len(args) == 1:
            inner = self.resolve(args[0], ctx)
            if inner.kind == "scalar" and inner.resolved:
                return lit(str(inner.value) if name == "String" else inner.value, inner.source, node, ctx)
        target = self._function_target(fn, ctx)
        if target is not None and ctx.depth < self.MAX_CALL_DEPTH:
            return self._call_builder(target, node, args, ctx)
        return Val("call", None, False, f"call:{name}", _short(node), call=name, node=node, ctx=ctx)

    def _function_target(self, fn: Any, ctx: _Ctx):
        if fn is None:
            return None
        mod = ctx.mod
        if fn.type == "identifier":
            name = _text(fn)
            if name in mod.functions:
                return mod, name, mod.functions[name]
            imp = mod.imports.get(name)
            if imp is not None and imp[0] is not None:
                target = _load_module(self.project, imp[0])
                if target is not None and imp[1] in target.functions:
                    return target, imp[1], target.functions[imp[1]]
        elif fn.type == "member_expression":
            obj = _field(fn, "object")
            prop = _text(_field(fn, "property"))
            if obj is not None and obj.type == "this" and ctx.cls and f"{ctx.cls}.{prop}" in mod.functions:
                return mod, f"{ctx.cls}.{prop}", mod.functions[f"{ctx.cls}.{prop}"]
            if obj is not None and obj.type == "identifier" and _text(obj) in mod.imports:
                target_rel, attr = mod.imports[_text(obj)]
                if attr == "*" and target_rel is not None:
                    target = _load_module(self.project, target_rel)
                    if target is not None and prop in target.functions:
                        return target, prop, target.functions[prop]
        return None

    def _call_builder(self, target, node: Any, args: list[Any], ctx: _Ctx) -> Val:
        mod, qual, fn = target
        params = _params_of(fn)
        bindings: dict[str, Val] = {}
        for p, a in zip(params, args, strict=False):
            if a.type == "spread_element":
                break
            bindings[p] = self.resolve(a, ctx)
        for p in params:
            bindings.setdefault(p, unknown(f"parameter:{p}", p))
        body = _field(fn, "body")
        name = f"{mod.dotted}:{qual}"
        if body is not None and body.type != "statement_block":
            ret = body
        else:
            returns = [n for n in _walk_scope(body) if n.type == "return_statement"] if body is not None else []
            values = [r.named_children[0] for r in returns if r.named_children]
            if len(values) != 1:
                return Val("call", None, False, f"call:{qual}", _short(node), call=qual, node=node, ctx=ctx,
                           builder=name)
            ret = values[0]
        key = ("call", mod.rel, qual)
        if key in self.active:
            return unknown(f"call:{qual}", _short(node), node, ctx)
        self.active.add(key)
        try:
            cls = qual.split(".")[0] if "." in qual else None
            v = self.resolve(ret, _Ctx(mod, (fn,), cls, bindings, ctx.depth + 1))
        finally:
            self.active.discard(key)
        return v.copy(builder=name, source=f"builder:{qual}" if v.kind == "dict" else v.source)


class _FileScan:
    def __init__(self, project: C.Project, rel: str, source: str, tree: Any) -> None:
        self.project = project
        self.rel = rel
        self.source = source
        self.mod = _JSModule(project, rel, tree)
        self.r = _Resolver(project)
        self.out = C.FileResult()
        self.calls: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.strings: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.prompt_decls: list[tuple[Any, str, tuple[Any, ...], str | None]] = []
        self.functions: list[tuple[str, Any, str | None]] = []
        self.typed: dict[str, str] = {}
        self.want_strings = bool(C.SECURITY_FILTER_RE.search(source) or _SQL_RE.search(source))
        self.azure_openai = "AzureOpenAI" in source
        self.langchain = "@langchain" in source or "langchain" in source
        self.llamaindex = "llamaindex" in source or "llama-index" in source

    # -- collection ------------------------------------------------------------------------
    def _walk(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None, in_string: bool) -> None:
        for child in node.children:
            t = child.type
            if t == "comment":
                continue
            if t in FUNC_TYPES:
                name = _func_name(child, node)
                if t == "method_definition" and cls and name:
                    q = f"{cls}.{name}"
                elif name:
                    q = f"{qual}.{name}" if qual and not (cls and qual == cls and t != "method_definition") \
                        else name
                else:
                    q = qual
                if name:
                    self.functions.append((q, child, cls))
                self._walk(child, q, (child, *funcs), cls, False)
                continue
            if t in ("class_declaration", "class"):
                cname_node = _field(child, "name")
                cname = _text(cname_node) if cname_node is not None else (cls or "<class>")
                self._walk(child, cname, funcs, cname, False)
                continue
            if t in ("call_expression", "new_expression"):
                self.calls.append((child, qual, funcs, cls))
            elif t == "variable_declarator":
                self._declarator(child, qual, funcs, cls)
            elif t in ("assignment_expression", "public_field_definition", "field_definition"):
                self._assignment(child)
            if self.want_strings and not in_string and t in ("string", "template_string", "binary_expression") \
                    and _is_string_expr(child):
                self.strings.append((child, qual, funcs, cls))
                self._walk(child, qual, funcs, cls, True)
                continue
            self._walk(child, qual, funcs, cls, in_string)

    def _declarator(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        name = _field(node, "name")
        value = _unwrap(_field(node, "value"))
        if name is None or value is None:
            return
        n = _text(name)
        if value.type == "new_expression":
            tag = _ctor_tag(_text(_field(value, "constructor")))
            if tag:
                self.typed[n] = tag
        if "prompt" in n.lower() and value.type in ("string", "template_string", "binary_expression"):
            self.prompt_decls.append((value, qual, funcs, cls))

    def _assignment(self, node: Any) -> None:
        left = _field(node, "left") or _field(node, "name") or _field(node, "property")
        right = _unwrap(_field(node, "right") or _field(node, "value"))
        if left is None or right is None or right.type != "new_expression":
            return
        tag = _ctor_tag(_text(_field(right, "constructor")))
        if tag:
            target = _text(left)
            if node.type != "assignment_expression":
                target = f"this.{target}"
            self.typed[target] = tag

    def type_of(self, receiver: str) -> str | None:
        if receiver in self.typed:
            return self.typed[receiver]
        tail = receiver.rsplit(".", 1)[-1]
        for k, v in self.typed.items():
            if k.rsplit(".", 1)[-1] == tail:
                return v
        return None

    def ctx(self, funcs: tuple[Any, ...], cls: str | None) -> _Ctx:
        return _Ctx(self.mod, funcs, cls)

    def ref(self, v: Val | None, vector: bool = False) -> str | None:
        if v is None:
            return None
        node = v.node
        if node is None:
            return v.expr or None
        node = _unwrap(node) or node
        if node.type in ("string", "template_string", "number"):
            return None
        if vector:
            if node.type == "identifier" and isinstance(v.ctx, _Ctx):
                for func in v.ctx.funcs:
                    entries = [e for e in v.ctx.mod.locals_of(func).get(_text(node), ()) if e[1] == "assign"]
                    if entries:
                        val = _unwrap(entries[-1][2])
                        if val is not None and val.type == "call_expression":
                            node = val
                        break
            if node.type == "call_expression":
                for a in _args(node):
                    a = _unwrap(a)
                    if a is not None and a.type in ("identifier", "member_expression"):
                        return _text(a)
        return _short(node, 80)

    def site(self, kind: str, node: Any, qual: str, params: dict[str, Val], channels: dict[str, str | None],
             builder: str | None, callee: str, is_async: bool = False) -> SearchCallSite:
        return SearchCallSite(
            file=self.rel, line=_line(node), kind=kind, function=qual or "<module>", module=self.mod.dotted,
            params={k: export(v) for k, v in params.items()}, channel_vars=dict(channels),
            shared_text=C.shared_channels(channels), builder=builder, language=_language(self.rel),
            call=callee, is_async=is_async)

    # -- analyses ------------------------------------------------------------------------------
    def run(self) -> C.FileResult:
        self._walk(self.mod.root, "", (), None, False)
        self._budget_constants()
        for node, qual, funcs, cls in self.calls:
            self._call(node, qual, funcs, cls)
        for node, qual, funcs, cls in self.strings:
            self._string(node, qual, funcs, cls)
        for value, _qual, funcs, cls in self.prompt_decls:
            v = self.r.resolve(value, self.ctx(funcs, cls))
            if v.is_str and v.value:
                self.out.prompt_rules.extend(prompt_rules(v.value, file=self.rel, first_line=_line(value)))
        self._citations()
        return self.out

    def _budget_constants(self) -> None:
        for name, value in self.mod.consts.items():
            if C.BUDGET_NAME_RE.search(name):
                v = self.r.resolve(value, _Ctx(self.mod))
                self.out.budget_constants.append(BudgetConstant(self.rel, self.mod.const_lines[name], name,
                                                                C.plain(v), _language(self.rel)))
        self.out.budget_constants.sort(key=lambda b: b.line)

    def _call(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        ctx = self.ctx(funcs, cls)
        if node.type == "new_expression":
            ctor = _text(_field(node, "constructor"))
            last = ctor.rsplit(".", 1)[-1]
            if last in ("AzureAISearchVectorStore", "AzureAISearchRetriever", "VectorIndexRetriever"):
                kind = "llamaindex" if self.llamaindex and not self.langchain else "langchain"
                self.out.search_calls.append(self.site(kind, node, qual, {}, {}, None, f"new {ctor}"))
            return
        fn = _field(node, "function")
        if fn is None:
            return
        name = _text(fn)
        is_async = node.parent is not None and node.parent.type == "await_expression"
        args = _args(node)
        if fn.type == "identifier":
            last, receiver = name, None
        elif fn.type == "member_expression":
            last = _text(_field(fn, "property"))
            receiver = _text(_field(fn, "object"))
        else:
            return
        if (fn.type == "identifier" and last in HTTP_FUNCS) or (receiver is not None and last in HTTP_METHODS):
            self._rest(node, qual, ctx, name, last, receiver, args, is_async)
        elif last == "search" and receiver is not None:
            self._search(node, qual, ctx, name, receiver, args, is_async)
        elif last in LC_METHODS:
            params: dict[str, Val] = {}
            if len(args) >= 2:
                params["k"] = self.r.resolve(args[1], ctx)
            if len(args) >= 3:
                params["filter"] = self.r.resolve(args[2], ctx)
            key = "vector" if "Vector" in last else "search_text"
            channels = {key: self.ref(self.r.resolve(args[0], ctx), key == "vector")} if args else {}
            self.out.search_calls.append(self.site("langchain", node, qual, params, channels, None, name, is_async))
        elif last in ("asRetriever", "asQueryEngine", "asChatEngine"):
            params = {}
            opts = self.r.resolve(args[0], ctx) if args else None
            llama = last != "asRetriever" or self.llamaindex and not self.langchain
            if opts is not None and opts.kind == "dict" and opts.items:
                if "similarityTopK" in opts.items:
                    llama = True
                    params["k"] = opts.items["similarityTopK"]
                if "k" in opts.items:
                    params["k"] = opts.items["k"]
                if "filter" in opts.items:
                    params["filter"] = opts.items["filter"]
                if "searchType" in opts.items:
                    params["query_type"] = opts.items["searchType"]
            elif opts is not None and opts.kind == "scalar":
                params["k"] = opts
            self.out.search_calls.append(self.site("llamaindex" if llama else "langchain", node, qual, params, {},
                                                   None, name))
        elif last in SQL_FUNCS:
            self.out.search_calls.append(self.site("sql_similarity", node, qual, {}, {}, None, name))
        else:
            kind = self._llm_kind(name, receiver, last)
            if kind:
                self._llm(node, qual, funcs, cls, kind, name, args)

    def _rest(self, node: Any, qual: str, ctx: _Ctx, name: str, last: str, receiver: str | None,
              args: list[Any], is_async: bool) -> None:
        if not args:
            return
        first = self.r.resolve(args[0], ctx)
        url_val = first
        body: Val | None = None
        query: Val | None = None
        if first.kind == "dict":  # axios(config) / client.request(config)
            url_val = first.items.get("url") if first.items else None
            body = first.get("data") or first.get("body") or first.get("json")
            query = first.get("params")
        if url_val is None:
            return
        text, _ = C.text_of(url_val, "js")
        if "docs/search" not in text:
            return
        if body is None and len(args) >= 2:
            second = self.r.resolve(args[1], ctx)
            if second.kind == "dict" and second.items is not None and (
                    set(second.items) & {"method", "headers", "body", "json", "data", "params"}) \
                    and not (set(second.items) & {"search", "vectorQueries", "top", "filter"}):
                body = second.items.get("body") or second.items.get("json") or second.items.get("data")
                query = second.items.get("params")
            else:
                body = second
        params: dict[str, Val] = {}
        channels: dict[str, str | None] = {}
        builder = None
        for src in (query, body):
            if src is not None and src.kind == "dict":
                p, ch = C.rest_params(src, self.ref)
                params.update(p)
                channels.update(ch)
                builder = builder or src.builder
        self.out.search_calls.append(self.site("rest_search", node, qual, params, channels, builder, name,
                                               is_async))

    def _search(self, node: Any, qual: str, ctx: _Ctx, name: str, receiver: str, args: list[Any],
                is_async: bool) -> None:
        low = receiver.lower()
        tag = self.type_of(receiver)
        opts = self.r.resolve(args[1], ctx) if len(args) >= 2 else None
        sdk_keys = {"filter", "top", "vectorSearchOptions", "queryType", "semanticSearchOptions", "select",
                    "includeTotalCount", "vectorQueries", "searchFields", "scoringProfile"}
        is_sdk = opts is not None and opts.kind == "dict" and bool(set(opts.items or {}) & sdk_keys)
        if tag == "faiss" or (tag is None and "index" in low.rsplit(".", 1)[-1] and not is_sdk and len(args) >= 2):
            params = {"k": self.r.resolve(args[1], ctx)} if len(args) >= 2 else {}
            channels = {"vector": self.ref(self.r.resolve(args[0], ctx), True)} if args else {}
            self.out.search_calls.append(self.site("faiss_search", node, qual, params, channels, None, name,
                                                   is_async))
            return
        if not (tag == "SearchClient" or is_sdk or re.search(r"search_?client|searcher", low)):
            return
        params: dict[str, Val] = {}
        channels: dict[str, str | None] = {}
        if args:
            channels["search_text"] = self.ref(self.r.resolve(args[0], ctx))
        builder = opts.builder if opts is not None else None
        if opts is not None and opts.kind == "dict" and opts.items is not None:
            items = opts.items
            params.update({C.JS_SDK_PARAMS[k]: v for k, v in items.items() if k in C.JS_SDK_PARAMS})
            sem = items.get("semanticSearchOptions")
            if sem is not None and sem.kind == "dict" and sem.items:
                if "configurationName" in sem.items:
                    params["semantic_configuration"] = sem.items["configurationName"]
                if "semanticQuery" in sem.items:
                    channels["semantic_query"] = self.ref(sem.items["semanticQuery"])
            if "semanticConfiguration" in items:
                params["semantic_configuration"] = items["semanticConfiguration"]
            vso = items.get("vectorSearchOptions")
            queries = None
            if vso is not None and vso.kind == "dict" and vso.items:
                queries = vso.items.get("queries")
                if "filterMode" in vso.items:
                    params["vector_filter_mode"] = vso.items["filterMode"]
            queries = queries or items.get("vectorQueries")
            if queries is not None:
                entries = [e for e in (queries.elems or []) if e.kind == "dict"] if queries.kind == "list" else []
                for pname, keys in (("k", ("kNearestNeighborsCount", "k")), ("exhaustive", ("exhaustive",)),
                                    ("vector_fields", ("fields",)), ("weight", ("weight",))):
                    present = [next((e.items[k] for k in keys if e.items and k in e.items), None) for e in entries]
                    present = [p for p in present if p is not None]
                    if present:
                        params[pname] = C.combine(present, "options")
                n_text = n_vec = 0
                for e in entries:
                    if e.items and "text" in e.items:
                        n_text += 1
                        channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = self.ref(e.items["text"])
                    if e.items and "vector" in e.items:
                        n_vec += 1
                        channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = self.ref(e.items["vector"], True)
        self.out.search_calls.append(self.site("azure_search", node, qual, params, channels, builder, name,
                                               is_async))

    # -- LLM calls -------------------------------------------------------------------------------
    def _llm_kind(self, name: str, receiver: str | None, last: str) -> str | None:
        if name.endswith(("chat.completions.create", "responses.create", "completions.create")):
            tag = self.type_of(receiver.split(".")[0]) if receiver else None
            return "azure_openai_chat" if tag == "AzureOpenAI" or (tag is None and self.azure_openai) \
                else "openai_chat"
        if last in LLM_METHODS and receiver is not None:
            tag = self.type_of(receiver)
            if tag == "LCChat" or re.search(r"(^|\.)(llm|chatModel|model|chat)$", receiver):
                return "langchain_chat"
        if name.endswith(("messages.create", "generateContent", "generateText")):
            return "other"
        return None

    def _identifiers(self, nodes: list[Any]) -> list[str]:
        bound: set[str] = set()
        names: list[str] = []
        for n in nodes:
            stack = [n]
            while stack:
                x = stack.pop()
                if x.type in ("arrow_function", "function_expression"):
                    bound.update(_params_of(x))
                if x.type in ("identifier", "shorthand_property_identifier") and \
                        (x.parent is None or x.parent.type not in ("formal_parameters", "required_parameter")):
                    names.append(_text(x))
                elif x.type == "member_expression" and _text(_field(x, "object")) == "this":
                    names.append(_text(x))
                stack.extend(reversed(x.children))
        return [n for n in dict.fromkeys(names) if n not in bound]

    def _llm(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None, kind: str, name: str,
             args: list[Any]) -> None:
        closure = self._identifiers(args)
        for func in funcs:
            local = self.mod.locals_of(func)
            i = 0
            while i < len(closure) and len(closure) < 60:
                entries = local.get(closure[i], ())
                values = [e[2] for e in entries if e[1] in ("assign", "store") and e[2] is not None]
                for extra in self._identifiers(values):
                    if extra not in closure:
                        closure.append(extra)
                i += 1
        skip = set(self.mod.consts) | set(self.mod.imports) | set(self.mod.functions) | {
            "JSON", "Math", "console", "Promise", "Object", "Array", "String", "Number", "undefined"}
        context_vars = tuple(n for n in closure if n not in skip)
        evidence = self._bound_evidence(funcs[0], cls, set(closure), node, 0, set()) if funcs else []
        self.out.llm_calls.append(LLMCallSite(
            file=self.rel, line=_line(node), kind=kind, function=qual or "<module>",
            context_bounded=bool(evidence),
            bound_evidence="; ".join(evidence[:3]) if evidence else
            "no slice, budget comparison or truncation helper on the context in this function "
            "or the same-file functions it calls",
            context_vars=context_vars, retrieved_context=any(C.CONTEXT_NAME_RE.search(n) for n in context_vars),
            module=self.mod.dotted, language=_language(self.rel), call=name))

    def _bound_evidence(self, func: Any, cls: str | None, closure: set[str], skip: Any, depth: int,
                        seen: set[int]) -> list[str]:
        if func is None or func.id in seen:
            return []
        seen.add(func.id)
        out: list[str] = []
        budget_names = {b.name for b in self.out.budget_constants}
        fname = _func_name(func, func.parent) or "<anonymous>"
        prefix = f"in {fname}(): " if depth else ""
        body = _field(func, "body") or func
        for n in _walk_all(body):
            if skip is not None and n.start_byte >= skip.start_byte and n.end_byte <= skip.end_byte:
                continue
            t = n.type
            if t == "call_expression":
                fn = _field(n, "function")
                callee = _text(fn)
                last = callee.rsplit(".", 1)[-1]
                if fn is not None and fn.type == "member_expression" and last in ("slice", "substring", "substr"):
                    obj = _text(_field(fn, "object"))
                    if depth or obj.split(".")[0] in closure:
                        out.append(prefix + _short(n, 100))
                elif C.TRUNCATE_FUNC_RE.search(last):
                    out.append(prefix + _short(n, 100))
                elif any(p.type == "pair" and C.BOUND_KW_RE.search(_text(_field(p, "key")))
                         for a in _args(n) if a.type == "object" for p in a.named_children):
                    out.append(prefix + _short(n, 100))
                elif depth < 2 and fn is not None:
                    target = None
                    if fn.type == "identifier" and callee in self.mod.functions:
                        target = self.mod.functions[callee]
                    elif fn.type == "member_expression" and _text(_field(fn, "object")) == "this" and cls \
                            and f"{cls}.{last}" in self.mod.functions:
                        target = self.mod.functions[f"{cls}.{last}"]
                    if target is not None:
                        out.extend(self._bound_evidence(target, cls, closure, None, depth + 1, seen))
            elif t == "binary_expression" and _text(_field(n, "operator")) in ("<", "<=", ">", ">="):
                names = re.findall(r"[A-Za-z_$][\w$]*", _text(n))
                if any(x in budget_names or C.BUDGET_NAME_RE.search(x) for x in names):
                    out.append(prefix + _short(n, 100))
        return list(dict.fromkeys(out))

    # -- strings, citations -------------------------------------------------------------------
    def _string(self, node: Any, qual: str, funcs: tuple[Any, ...], cls: str | None) -> None:
        own = _literal_text(node)
        is_security = bool(C.SECURITY_FILTER_RE.search(own))
        is_sql = bool(_SQL_RE.search(own)) and bool(_SQL_KEYWORDS.search(own) or "cosine_distance" in own)
        if not (is_security or is_sql):
            return
        v = self.r.resolve(node, self.ctx(funcs, cls))
        text, _ = C.text_of(v, "js")
        if is_sql:
            params: dict[str, Val] = {}
            m = re.search(r"\blimit\s+(\d+)", text, re.I)
            if m:
                params["k"] = lit(int(m.group(1)))
            self.out.search_calls.append(self.site("sql_similarity", node, qual, params, {}, None, "sql"))
        if not is_security:
            return
        fields = tuple(sorted({(m.group(1) or m.group(2)) for m in C.SECURITY_FILTER_RE.finditer(own)}))
        related: dict[str, list[str]] = {var: [var] for var in v.vars}
        for var in v.vars:
            if re.fullmatch(r"[A-Za-z_$][\w$]*", var):
                for func in funcs:
                    entries = [e for e in self.mod.locals_of(func).get(var, ()) if e[1] == "assign"
                               and e[0] <= _line(node)]
                    if entries:
                        related[var].append(_short(entries[-1][2], 400))
                        break
        texts = [t for ts in related.values() for t in ts]
        interpolated = bool(v.vars)
        escaped = all(any(C.ESCAPE_TEXT_RE.search(t) for t in ts) for ts in related.values())
        self.out.security_filters.append(SecurityFilterSite(
            file=self.rel, line=_line(node), function=qual or "<module>", expression=_short(node, 300),
            uses_search_in="search.in(" in text, escaped=escaped,
            from_identity=any(C.is_identity_expr(t) for t in texts) if interpolated else None,
            from_request=any(C.is_request_expr(t) for t in texts) if interpolated else None,
            fstring=interpolated, fields=fields, language=_language(self.rel)))

    def _citations(self) -> None:
        for qual, fn, _cls in self.functions:
            name = qual.rsplit(".", 1)[-1]
            if not C.CITATION_FUNC_RE.search(name):
                continue
            evidence = []
            body = _field(fn, "body") or fn
            for n in [body, *_walk_all(body)]:
                if n.type == "call_expression":
                    f = _field(n, "function")
                    if f is not None and f.type == "member_expression":
                        prop = _text(_field(f, "property"))
                        obj = _text(_field(f, "object"))
                        if prop in ("isSubsetOf", "difference", "intersection", "isDisjointFrom"):
                            evidence.append(_short(n, 100))
                        elif prop in ("has", "includes") and C.VALIDATION_REF_RE.search(obj):
                            evidence.append(_short(n, 100))
                elif n.type == "binary_expression" and _text(_field(n, "operator")) == "in" \
                        and C.VALIDATION_REF_RE.search(_text(_field(n, "right"))):
                    evidence.append(_short(n, 100))
            evidence = list(dict.fromkeys(evidence))
            self.out.citation_checks.append(CitationCheck(
                file=self.rel, line=_line(fn), function=qual, validated=bool(evidence),
                evidence="; ".join(evidence[:3]) if evidence else
                "no membership test of cited ids against the retrieved ids", language=_language(self.rel)))


def _language(rel: str) -> str:
    return "typescript" if rel.lower().endswith((".ts", ".tsx", ".mts", ".cts")) else "javascript"


def _is_string_expr(node: Any) -> bool:
    if node.type in ("string", "template_string"):
        return True
    if node.type == "binary_expression" and _text(_field(node, "operator")) == "+":
        return _is_string_expr(_field(node, "left")) or _is_string_expr(_field(node, "right"))
    return False


def _literal_text(node: Any) -> str:
    if node.type == "string":
        return _string_value(node)
    if node.type == "template_string":
        return "".join(_text(c) if c.type == "string_fragment" else "{}" for c in node.named_children)
    if node.type == "binary_expression":
        return _literal_text(_field(node, "left")) + _literal_text(_field(node, "right"))
    return "{}"


def scan_js(project: C.Project, rel: str, source: str) -> C.FileResult:
    """Scan one JavaScript/TypeScript file (already read as text)."""
    tree = _parser(rel).parse(source.encode("utf-8"))
    scan = _FileScan(project, rel, source, tree)
    result = scan.run()
    if tree.root_node.has_error:
        line = _first_error_line(tree.root_node)
        result.skipped.append(Skipped(rel, f"syntax error near line {line} (tree-sitter); scanned partially"))
    return result


def _first_error_line(node: Any) -> int:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return _line(n)
        stack.extend(reversed(n.children))
    return _line(node)
