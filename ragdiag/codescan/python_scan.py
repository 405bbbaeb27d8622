"""Python client code, read with `ast` (never imported, never run).

One pass over the tree collects calls, strings, functions and assignments;
the analyses then resolve what they need: literals, module constants
(also `from .settings import TOP_K` from a sibling module of the scanned
tree), simple locals of the same function, f-strings, concatenations,
`str.format`, `" and ".join([...])`, dict literals passed as `**kwargs` or as
REST bodies, and helper functions that return such a dict (the "builder").
"""

from __future__ import annotations

import ast
import bisect
import builtins
import re
from collections import defaultdict
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

VECTOR_CTORS = frozenset({"VectorizedQuery", "VectorizableTextQuery", "VectorizableImageUrlQuery",
                          "VectorizableImageBinaryQuery"})
SDK_SEARCH_KW = frozenset({"search_text", "vector_queries", "query_type", "semantic_configuration_name",
                           "filter", "top", "select", "include_total_count", "scoring_profile",
                           "semantic_query", "search_fields", "vector_filter_mode", "query_caption",
                           "query_answer", "skip", "order_by", "facets", "search_mode",
                           "scoring_parameters"})
LC_SEARCH_METHODS = frozenset({"similarity_search", "similarity_search_with_score",
                               "similarity_search_with_relevance_scores", "similarity_search_by_vector",
                               "asimilarity_search", "asimilarity_search_with_score",
                               "max_marginal_relevance_search", "amax_marginal_relevance_search",
                               "hybrid_search", "hybrid_search_with_score", "semantic_hybrid_search",
                               "semantic_hybrid_search_with_score",
                               "semantic_hybrid_search_with_score_and_rerank"})
SQL_METHODS = frozenset({"cosine_distance", "l2_distance", "max_inner_product", "l1_distance"})
LC_CHAT_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream", "predict", "apredict", "batch",
                             "abatch"})
HTTP_METHODS = frozenset({"post", "get", "put", "request", "urlopen", "Request"})
_BUILTINS = frozenset(dir(builtins)) | {"self", "cls"}

_CITATION_TRIGGER = re.compile(r"def\s+\w*(?:citation|cite|sources)", re.I)
_SQL_RE = re.compile(r"<->|<=>|<#>|cosine_distance")
_SQL_KEYWORDS = re.compile(r"\b(select|order\s+by|limit)\b", re.I)
#: Lower-case substrings of everything the analyses look for (plain `in` tests are fast).
_KEYWORDS = (".search(", "vectoriz", "vectoris", "docs/search", "similarity_search", "as_retriever",
             "as_query_engine", "as_chat_engine", "retriever", "vectorstore", "hybrid_search", "<->", "<=>",
             "<#>", "cosine_distance", "l2_distance", "max_inner_product", ".create(", "invoke(", ".stream(",
             ".predict(", "completion", ".batch(", "generate_content", ".chat(", ".parse(", "requests",
             "httpx", "aiohttp", "urllib", ".post(", ".request(", "prompt", "search_in")


def _triggered(source: str) -> bool:
    """Could the file yield anything at all? (If not, it is not even parsed.)"""
    low = source.lower()
    if any(k in low for k in _KEYWORDS):
        return True
    if ("cit" in low or "sources" in low) and _CITATION_TRIGGER.search(source):
        return True
    if _security_offsets(source, low):
        return True
    return _has_budget_constant(source, low)


_ASSIGNED_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def _has_budget_constant(source: str, low: str) -> bool:
    """Is some line an assignment to a budget-like name? (Only lines holding max/budget/limit are tried.)"""
    for word in ("max", "budget", "limit"):
        i = low.find(word)
        while i != -1:
            start = low.rfind("\n", 0, i) + 1
            m = _ASSIGNED_NAME.match(source, start)
            if m and C.BUDGET_NAME_RE.search(m.group(1)):
                return True
            end = low.find("\n", i)
            if end == -1:
                break
            i = low.find(word, end)
    return False


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar,
             ast.Match, ast.match_case, ast.ExceptHandler)
#: Lower-case words marking the lines the collecting walk must visit.
_LINE_WORDS = (*_KEYWORDS, "searchclient", "openai", "faiss", "vectorstoreindex", "azuresearch", "chroma",
               "pgvector", "chat", "max_marginal_relevance", "l1_distance", "client.", "session.", ".put(",
               "urlopen", "search.in")


_SECURITY_WORDS = ("group", "acl", "oid", "user_id", "allowed_", "owner_id", "search.in")


def _security_offsets(source: str, low: str) -> list[int]:
    """Offsets of security-field filters, searched only in the lines that hold a security word."""
    spans: set[tuple[int, int]] = set()
    for word in _SECURITY_WORDS:
        i = low.find(word)
        while i != -1:
            start = low.rfind("\n", 0, i) + 1
            end = low.find("\n", i)
            spans.add((start, len(low) if end == -1 else end))
            i = low.find(word, (len(low) if end == -1 else end))
    out = []
    for start, end in spans:
        m = C.SECURITY_FILTER_RE.search(source, start, end)
        if m:
            out.append(m.start())
    return out


def _interesting_lines(source: str) -> list[int]:
    """Sorted numbers of the lines holding a trigger word, a security field filter or an SQL operator."""
    low = source.lower()
    offsets: set[int] = set()
    for word in _LINE_WORDS:
        i = low.find(word)
        while i != -1:
            offsets.add(i)
            i = low.find(word, i + 1)
    offsets.update(_security_offsets(source, low))
    if not offsets:
        return []
    starts = [0]
    i = source.find("\n")
    while i != -1:
        starts.append(i + 1)
        i = source.find("\n", i + 1)
    return sorted({bisect.bisect_right(starts, off) for off in offsets})


def _dotted(node: ast.AST | None) -> str | None:
    """`a.b.c` for Name/Attribute chains, `f().x` for calls, `a[].b` for subscripts; else None."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            inner = _dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Subscript):
            inner = _dotted(node.value)
            if inner is None:
                return None
            parts.append(inner + "[]")
            return ".".join(reversed(parts))
        else:
            return None


def _unparse(node: ast.AST, limit: int = 240) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must never break a scan
        return "<expr>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _callee_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _walk_body(nodes: list[ast.AST]):
    """All nodes under `nodes`, not descending into nested functions or classes (lambdas included)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            stack.append(child)


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler)


def _walk_blocks(nodes: list[ast.AST]):
    """(node, innermost conditional block as (first line, last line) or None), as `_walk_body`."""
    stack: list[tuple[ast.AST, tuple[int, int] | None]] = [(n, None) for n in reversed(nodes)]
    while stack:
        node, block = stack.pop()
        yield node, block
        inner = (node.lineno, node.end_lineno or node.lineno) if isinstance(node, _BLOCKS) else block
        for child in reversed(list(ast.iter_child_nodes(node))):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append((child, inner))


def _param_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = func.args
    return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + \
        ([a.vararg.arg] if a.vararg else []) + ([a.kwarg.arg] if a.kwarg else [])


def _ctor_tag(ctor: str) -> str | None:
    last = ctor.rsplit(".", 1)[-1]
    if ctor.startswith("faiss."):
        return "faiss"
    if last in ("SearchClient",):
        return "SearchClient"
    if last in ("AzureOpenAI", "AsyncAzureOpenAI"):
        return "AzureOpenAI"
    if last in ("OpenAI", "AsyncOpenAI"):
        return "OpenAI"
    if last in ("AzureChatOpenAI", "ChatOpenAI") or (last.startswith("Chat") and last[4:5].isupper()):
        return "LCChat"
    if last == "VectorStoreIndex" or ctor.startswith("VectorStoreIndex."):
        return "LlamaIndex"
    if ctor.startswith(("FAISS.", "AzureSearch.")) or last in ("AzureSearch", "FAISS", "Chroma", "PGVector"):
        return "LCStore"
    return None


class _Ctx:
    __slots__ = ("mod", "func", "cls", "bindings", "depth")

    def __init__(self, mod: _PyModule, func: Any = None, cls: str | None = None,
                 bindings: dict[str, Val] | None = None, depth: int = 0) -> None:
        self.mod = mod
        self.func = func
        self.cls = cls
        self.bindings = bindings
        self.depth = depth


class _PyModule:
    """A parsed module's top level: constants, imports, functions, classes."""

    def __init__(self, project: C.Project, rel: str, tree: ast.Module) -> None:
        self.project = project
        self.rel = rel
        self.tree = tree
        self.dotted = C.module_name(rel)
        self.is_pkg = rel.endswith("__init__.py")
        self.package = self.dotted if self.is_pkg else self.dotted.rpartition(".")[0]
        self.constants: dict[str, tuple[ast.expr, int]] = {}
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.class_consts: dict[str, dict[str, ast.expr]] = {}
        self._locals: dict[int, tuple[dict[str, list[tuple[int, str, Any]]],
                                      dict[str, list[tuple[int, str | None, Any]]]]] = {}
        self._self_attrs: dict[str, dict[str, list[tuple[Any, ast.expr]]]] = {}
        self._index(tree.body)

    def _index(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        self.constants[t.id] = (stmt.value, stmt.lineno)
                    elif isinstance(t, ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                            and len(t.elts) == len(stmt.value.elts):
                        for te, ve in zip(t.elts, stmt.value.elts, strict=True):
                            if isinstance(te, ast.Name):
                                self.constants[te.id] = (ve, stmt.lineno)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
                self.constants[stmt.target.id] = (stmt.value, stmt.lineno)
            elif isinstance(stmt, ast.ImportFrom):
                base = self._abs_module(stmt.module, stmt.level)
                for alias in stmt.names:
                    if alias.name != "*":
                        self.imports[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.imports[alias.asname] = (alias.name, None)
                    else:
                        self.imports[alias.name.split(".")[0]] = (alias.name.split(".")[0], None)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
                consts: dict[str, ast.expr] = {}
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions[f"{stmt.name}.{item.name}"] = item
                    elif isinstance(item, ast.Assign):
                        for t in item.targets:
                            if isinstance(t, ast.Name):
                                consts[t.id] = item.value
                    elif isinstance(item, ast.AnnAssign) and item.value is not None \
                            and isinstance(item.target, ast.Name):
                        consts[item.target.id] = item.value
                self.class_consts[stmt.name] = consts
            elif isinstance(stmt, (ast.If, ast.Try)):
                self._index(stmt.body)
                for h in getattr(stmt, "handlers", []):
                    self._index(h.body)
                self._index(stmt.orelse)

    def _abs_module(self, module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = self.package.split(".") if self.package else []
        if level > 1:
            base = base[: max(0, len(base) - (level - 1))]
        return ".".join(base + ([module] if module else []))

    def locals_of(self, func: Any):
        """(assignments, subscript stores) of a function: name -> [(line, kind, node)], sorted."""
        key = id(func)
        cached = self._locals.get(key)
        if cached is not None:
            return cached
        assigns: dict[str, list[tuple[int, str, Any]]] = defaultdict(list)
        subs: dict[str, list[tuple[int, str | None, Any]]] = defaultdict(list)

        block: tuple[int, int] | None = None

        def bind(target: ast.AST, value: ast.AST | None, line: int) -> None:
            if isinstance(target, ast.Name):
                assigns[target.id].append((line, "assign" if value is not None else "other", value, block))
            elif isinstance(target, (ast.Tuple, ast.List)):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                    for te, ve in zip(target.elts, value.elts, strict=True):
                        bind(te, ve, line)
                else:
                    for te in target.elts:
                        bind(te, None, line)
            elif isinstance(target, ast.Starred):
                bind(target.value, None, line)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                key_node = target.slice
                k = key_node.value if isinstance(key_node, ast.Constant) and isinstance(key_node.value, str) \
                    else None
                subs[target.value.id].append((line, k, value))

        for node, block in _walk_blocks(func.body):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    bind(t, node.value, node.lineno)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    bind(node.target, node.value, node.lineno)
            elif isinstance(node, ast.AugAssign):
                if isinstance(node.target, ast.Name):
                    assigns[node.target.id].append((node.lineno, "aug", node, block))
                elif isinstance(node.target, ast.Subscript) and isinstance(node.target.value, ast.Name):
                    subs[node.target.value.id].append((node.lineno, None, None))
            elif isinstance(node, ast.NamedExpr):
                bind(node.target, node.value, node.lineno)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                bind(node.target, None, node.lineno)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars, None, node.lineno)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.attr in ("update", "setdefault"):
                name = node.func.value.id
                if node.func.attr == "update":
                    for a in node.args:
                        subs[name].append((node.lineno, "**", a))
                    for kw in node.keywords:
                        subs[name].append((node.lineno, kw.arg or "**", kw.value))
                elif node.args and isinstance(node.args[0], ast.Constant) and len(node.args) > 1:
                    subs[name].append((node.lineno, str(node.args[0].value), node.args[1]))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) \
                    and node.func.attr in ("append", "extend", "insert", "remove", "pop", "clear", "add",
                                           "discard", "popitem"):
                subs[node.func.value.id].append((node.lineno, None, None))
            elif isinstance(node, ast.ExceptHandler) and node.name:
                assigns[node.name].append((node.lineno, "other", None, block))
        for v in assigns.values():
            v.sort(key=lambda e: e[0])
        for v in subs.values():
            v.sort(key=lambda e: e[0])
        result = (dict(assigns), dict(subs))
        self._locals[key] = result
        return result

    def self_attrs(self, cls: str) -> dict[str, list[tuple[Any, ast.expr]]]:
        """`self.X = value` assignments in the methods of class `cls`: X -> [(method, value)]."""
        cached = self._self_attrs.get(cls)
        if cached is not None:
            return cached
        out: dict[str, list[tuple[Any, ast.expr]]] = defaultdict(list)
        node = self.classes.get(cls)
        if node is not None:
            for item in node.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for sub in _walk_body(item.body):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        for t in targets:
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                                    and t.value.id == "self" and sub.value is not None:
                                out[t.attr].append((item, sub.value))
        self._self_attrs[cls] = dict(out)
        return self._self_attrs[cls]


def _load_module(project: C.Project, rel: str) -> _PyModule | None:
    key = ("py", rel)
    if key in project.cache:
        return project.cache[key]
    mod = None
    text = project.read_text(rel)
    if text is not None:
        try:
            mod = _PyModule(project, rel, ast.parse(text, filename=rel))
        except (SyntaxError, ValueError, RecursionError):
            mod = None
    project.cache[key] = mod
    return mod


class _Resolver:
    """Resolves expressions to `Val`s, following names across locals, constants and imports."""

    MAX_DEPTH = 24
    MAX_CALL_DEPTH = 3

    def __init__(self, project: C.Project) -> None:
        self.project = project
        self.depth = 0
        self.active: set[tuple[Any, ...]] = set()

    # -- entry -------------------------------------------------------------------------
    def resolve(self, node: ast.AST, ctx: _Ctx) -> Val:
        if self.depth > self.MAX_DEPTH:
            return unknown("too deep", _unparse(node), node, ctx)
        self.depth += 1
        try:
            v = self._resolve(node, ctx)
        except RecursionError:
            v = unknown("too deep", "", node, ctx)
        finally:
            self.depth -= 1
        if v.node is not node and v.kind != "call":
            v = v.copy(node=node, ctx=ctx, expr=_unparse(node))
        elif not v.expr:
            v.expr = _unparse(node)
        return v

    def _resolve(self, node: ast.AST, ctx: _Ctx) -> Val:
        t = type(node)
        if t is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if value is None or isinstance(value, (str, int, float, bool)):
                return lit(value, "literal", node, ctx)
            return unknown("literal", _unparse(node), node, ctx)
        if t is ast.JoinedStr:
            return self._fstring(node, ctx)  # type: ignore[arg-type]
        if t is ast.Name:
            return self._name(node.id, ctx, node.lineno, node)  # type: ignore[attr-defined]
        if t is ast.Attribute:
            return self._attribute(node, ctx)  # type: ignore[arg-type]
        if t is ast.BinOp:
            return self._binop(node, ctx)  # type: ignore[arg-type]
        if t is ast.UnaryOp:
            operand = self.resolve(node.operand, ctx)  # type: ignore[attr-defined]
            if operand.kind == "scalar" and operand.resolved:
                op = node.op  # type: ignore[attr-defined]
                if isinstance(op, ast.USub) and isinstance(operand.value, (int, float)) \
                        and not isinstance(operand.value, bool):
                    return lit(-operand.value, operand.source, node, ctx)
                if isinstance(op, ast.Not):
                    return lit(not operand.value, operand.source, node, ctx)
            return unknown("expression", _unparse(node), node, ctx)
        if t is ast.Dict:
            return self._dict(node, ctx)  # type: ignore[arg-type]
        if t in (ast.List, ast.Tuple, ast.Set):
            elems = [self.resolve(e, ctx) for e in node.elts]  # type: ignore[attr-defined]
            return C.make_list(elems, node, ctx)
        if t is ast.Call:
            return self._call(node, ctx)  # type: ignore[arg-type]
        if t is ast.Subscript:
            base = self.resolve(node.value, ctx)  # type: ignore[attr-defined]
            key = node.slice  # type: ignore[attr-defined]
            if isinstance(key, ast.Constant):
                if base.kind == "dict" and isinstance(key.value, str) and base.items and key.value in base.items:
                    return base.items[key.value]
                if base.kind == "list" and isinstance(key.value, int) and base.elems \
                        and -len(base.elems) <= key.value < len(base.elems):
                    return base.elems[key.value]
            return unknown("subscript", _unparse(node), node, ctx)
        if t is ast.IfExp:
            a = self.resolve(node.body, ctx)  # type: ignore[attr-defined]
            b = self.resolve(node.orelse, ctx)  # type: ignore[attr-defined]
            if a.kind == b.kind == "scalar" and a.resolved and b.resolved and a.value == b.value:
                return a
            return unknown("conditional", _unparse(node), node, ctx)
        if t is ast.Await:
            return self.resolve(node.value, ctx)  # type: ignore[attr-defined]
        return unknown("expression", _unparse(node), node, ctx)

    # -- strings --------------------------------------------------------------------------
    def _fstring(self, node: ast.JoinedStr, ctx: _Ctx) -> Val:
        parts: list[Val] = []
        vars_: list[str] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(lit(str(piece.value)))
            elif isinstance(piece, ast.FormattedValue):
                expr = _unparse(piece.value)
                vars_.append(expr)
                inner = self.resolve(piece.value, ctx)
                if inner.kind == "scalar" and inner.resolved and piece.conversion == -1 \
                        and piece.format_spec is None:
                    parts.append(inner)
                elif inner.kind == "scalar" and inner.resolved:
                    try:
                        value = inner.value
                        if piece.conversion == ord("r"):
                            value = repr(value)
                        elif piece.conversion == ord("s"):
                            value = str(value)
                        spec = ""
                        if piece.format_spec is not None:
                            spec_val = self._fstring(piece.format_spec, ctx)  # type: ignore[arg-type]
                            if not spec_val.resolved:
                                raise ValueError
                            spec = spec_val.value
                        parts.append(lit(format(value, spec)))
                    except (ValueError, TypeError):
                        parts.append(unknown("fstring", expr))
                else:
                    parts.append(inner.copy(expr=expr) if inner.kind != "scalar" else inner)
            else:
                parts.append(unknown("fstring", _unparse(piece)))
        return C.concat(parts, "python", fstring=True, source="fstring", node=node, ctx=ctx,
                        vars=tuple(vars_))

    def _binop(self, node: ast.BinOp, ctx: _Ctx) -> Val:
        left = self.resolve(node.left, ctx)
        right = self.resolve(node.right, ctx)
        op = node.op
        if isinstance(op, ast.Add):
            if left.is_str or right.is_str:
                extra = tuple(x.expr for x in (left, right) if not x.resolved and not x.is_str)
                return C.concat([left, right], "python", fstring=False, source="concat", node=node,
                                ctx=ctx, vars=extra)
            if left.kind == right.kind == "list":
                return C.make_list((left.elems or []) + (right.elems or []), node, ctx)
        if isinstance(op, ast.Mod) and left.is_str:
            return self._percent(left, node.right, ctx, node)
        if left.kind == right.kind == "scalar" and left.resolved and right.resolved \
                and isinstance(left.value, (int, float)) and isinstance(right.value, (int, float)) \
                and not isinstance(left.value, bool) and not isinstance(right.value, bool):
            try:
                if isinstance(op, ast.Add):
                    return lit(left.value + right.value, "expression", node, ctx)
                if isinstance(op, ast.Sub):
                    return lit(left.value - right.value, "expression", node, ctx)
                if isinstance(op, ast.Mult):
                    return lit(left.value * right.value, "expression", node, ctx)
                if isinstance(op, ast.FloorDiv) and right.value:
                    return lit(left.value // right.value, "expression", node, ctx)
                if isinstance(op, ast.Div) and right.value:
                    return lit(left.value / right.value, "expression", node, ctx)
            except (OverflowError, ArithmeticError):
                pass
        return unknown("expression", _unparse(node), node, ctx)

    def _percent(self, fmt: Val, arg: ast.AST, ctx: _Ctx, node: ast.AST) -> Val:
        args = list(arg.elts) if isinstance(arg, ast.Tuple) else [arg]
        vals = [self.resolve(a, ctx) for a in args]
        pieces = re.split(r"(%[-#0 +]*\d*(?:\.\d+)?[sdrfi])", fmt.value)
        parts: list[Val] = []
        i = 0
        for p in pieces:
            if re.fullmatch(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfi]", p) and i < len(vals):
                parts.append(vals[i])
                i += 1
            else:
                parts.append(lit(p))
        return C.concat(parts, "python", fstring=True, source="format", node=node, ctx=ctx,
                        vars=tuple(_unparse(a) for a in args))

    def _format(self, fmt: Val, call: ast.Call, ctx: _Ctx) -> Val:
        args = [self.resolve(a, ctx) for a in call.args]
        kws = {k.arg: self.resolve(k.value, ctx) for k in call.keywords if k.arg}
        parts: list[Val] = []
        auto = 0
        for piece in re.split(r"(\{[^{}]*\})", fmt.value):
            m = re.fullmatch(r"\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}", piece)
            if not m:
                parts.append(lit(piece.replace("{{", "{").replace("}}", "}")))
                continue
            field_name = m.group(1)
            if field_name == "":
                v = args[auto] if auto < len(args) else unknown("format", piece)
                auto += 1
            elif field_name.isdigit():
                idx = int(field_name)
                v = args[idx] if idx < len(args) else unknown("format", piece)
            else:
                v = kws.get(field_name, unknown("format", field_name))
            parts.append(v)
        exprs = tuple(_unparse(a) for a in call.args) + tuple(_unparse(k.value) for k in call.keywords)
        return C.concat(parts, "python", fstring=True, source="format", node=call, ctx=ctx, vars=exprs)

    # -- names ---------------------------------------------------------------------------
    def _name(self, name: str, ctx: _Ctx, line: int, node: ast.AST) -> Val:
        if ctx.bindings is not None and name in ctx.bindings:
            return ctx.bindings[name]
        mod = ctx.mod
        if ctx.func is not None:
            assigns, subs = mod.locals_of(ctx.func)
            entries = [e for e in assigns.get(name, ()) if e[0] < line]
            if entries:
                last_assign = None
                for i in range(len(entries) - 1, -1, -1):
                    if entries[i][1] == "assign":
                        last_assign = i
                        break
                if last_assign is None or last_assign != len(entries) - 1:
                    return unknown(f"local:{name} (reassigned)", name, node, ctx)
                a_line, _, value, a_block = entries[last_assign]
                if a_block is not None and not a_block[0] <= line <= a_block[1]:
                    return unknown(f"local:{name} (conditional)", name, node, ctx)
                key = ("local", id(ctx.func), name, a_line, id(ctx.bindings))
                if key in self.active:
                    return unknown(f"local:{name}", name, node, ctx)
                self.active.add(key)
                try:
                    v = self.resolve(value, ctx)
                finally:
                    self.active.discard(key)
                stores = [s for s in subs.get(name, ()) if a_line < s[0] < line]
                if stores and v.kind == "dict":
                    v = self._apply_stores(v, stores, ctx)
                elif stores:
                    v = unknown(f"local:{name} (modified)", name, node, ctx)
                return v.copy(source=f"local:{name}") if v.source in ("literal", "") else v
            if name in _param_names(ctx.func):
                return unknown(f"parameter:{name}", name, node, ctx)
        if name in mod.constants:
            value = mod.constants[name][0]
            key = ("const", mod.rel, name)
            if key in self.active:
                return unknown(f"constant:{name}", name, node, ctx)
            self.active.add(key)
            try:
                v = self.resolve(value, _Ctx(mod))
            finally:
                self.active.discard(key)
            return v.copy(source=f"constant:{name}") if not v.source.startswith(("import:", "constant:")) \
                else v
        if name in mod.imports:
            module, attr = mod.imports[name]
            return self._imported(module, attr, node, ctx)
        if name in ("None", "True", "False"):
            return lit({"None": None, "True": True, "False": False}[name], "literal", node, ctx)
        return unknown(f"name:{name}", name, node, ctx)

    def _apply_stores(self, v: Val, stores: list[tuple[int, str | None, Any]], ctx: _Ctx) -> Val:
        items = dict(v.items or {})
        open_ = v.open
        for _, key, value in stores:
            if key is None or value is None:
                open_ = True
            elif key == "**":
                extra = self.resolve(value, ctx)
                if extra.kind == "dict":
                    items.update(extra.items or {})
                else:
                    open_ = True
            else:
                items[key] = self.resolve(value, ctx)
        return C.make_dict(items, open=open_, node=v.node, ctx=v.ctx).copy(source=v.source,
                                                                            builder=v.builder)

    def _imported(self, module: str, attr: str | None, node: ast.AST, ctx: _Ctx) -> Val:
        if attr is None:
            return Val("unknown", None, False, f"module:{module}", module, node=node, ctx=ctx)
        target_rel = self.project.find_py_module(module)
        if target_rel is not None:
            target = _load_module(self.project, target_rel)
            if target is not None and attr in target.constants:
                key = ("const", target.rel, attr)
                if key not in self.active:
                    self.active.add(key)
                    try:
                        v = self.resolve(target.constants[attr][0], _Ctx(target))
                    finally:
                        self.active.discard(key)
                    return v.copy(source=f"import:{module}.{attr}")
        return unknown(f"import:{module}.{attr}", attr, node, ctx)

    def _module_of(self, dotted: str, ctx: _Ctx) -> tuple[_PyModule | None, list[str]]:
        """The scanned module a dotted name starts with (via imports), and the remaining parts."""
        parts = dotted.split(".")
        head = parts[0]
        imp = ctx.mod.imports.get(head)
        if imp is None:
            return None, parts
        module, attr = imp
        base = module if attr is None else f"{module}.{attr}"
        rest = parts[1:]
        # walk into submodules while they exist in the scanned tree
        best: tuple[_PyModule | None, list[str]] = (None, parts)
        for i in range(len(rest) + 1):
            name = ".".join([base, *rest[:i]])
            rel = self.project.find_py_module(name)
            if rel is not None:
                best = (_load_module(self.project, rel), rest[i:])
        return best

    def _attribute(self, node: ast.Attribute, ctx: _Ctx) -> Val:
        dotted = _dotted(node)
        if dotted is None:
            return unknown("attribute", _unparse(node), node, ctx)
        parts = dotted.split(".")
        if parts[0] == "self" and ctx.cls and len(parts) == 2:
            assigned = ctx.mod.self_attrs(ctx.cls).get(parts[1], [])
            if len(assigned) == 1:
                method, value = assigned[0]
                key = ("self", ctx.mod.rel, ctx.cls, parts[1])
                if key not in self.active:
                    self.active.add(key)
                    try:
                        v = self.resolve(value, _Ctx(ctx.mod, method, ctx.cls))
                    finally:
                        self.active.discard(key)
                    if v.resolved:
                        return v.copy(source=f"attribute:{dotted}")
            return unknown(f"attribute:{dotted}", dotted, node, ctx)
        if len(parts) == 2 and parts[0] in ctx.mod.class_consts and parts[1] in ctx.mod.class_consts[parts[0]]:
            v = self.resolve(ctx.mod.class_consts[parts[0]][parts[1]], _Ctx(ctx.mod))
            return v.copy(source=f"constant:{dotted}")
        if parts[0] == "os" and "environ" in parts:
            return unknown("env", dotted, node, ctx)
        target, rest = self._module_of(dotted, ctx)
        if target is not None and len(rest) == 1 and rest[0] in target.constants:
            key = ("const", target.rel, rest[0])
            if key not in self.active:
                self.active.add(key)
                try:
                    v = self.resolve(target.constants[rest[0]][0], _Ctx(target))
                finally:
                    self.active.discard(key)
                return v.copy(source=f"import:{target.dotted}.{rest[0]}")
        # attribute of a resolved dict-like value? (e.g. a local dataclass) -> unknown
        return unknown(f"attribute:{dotted}", dotted, node, ctx)

    # -- containers and calls ---------------------------------------------------------------
    def _dict(self, node: ast.Dict, ctx: _Ctx) -> Val:
        items: dict[str, Val] = {}
        open_ = False
        builder = None
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                extra = self.resolve(v, ctx)
                if extra.kind == "dict":
                    items.update(extra.items or {})
                    open_ = open_ or extra.open
                    builder = builder or extra.builder
                else:
                    open_ = True
                continue
            key = self.resolve(k, ctx)
            if key.kind == "scalar" and key.resolved and isinstance(key.value, (str, int, float, bool)):
                items[str(key.value)] = self.resolve(v, ctx)
            else:
                open_ = True
        out = C.make_dict(items, open=open_, node=node, ctx=ctx)
        out.builder = builder
        return out

    def _call(self, node: ast.Call, ctx: _Ctx) -> Val:
        func = node.func
        name = _dotted(func) or ""
        last = _callee_name(node) or ""
        if isinstance(func, ast.Attribute) and last in ("format", "join", "strip", "lower", "upper"):
            base = self.resolve(func.value, ctx)
            if base.is_str:
                if last == "format":
                    return self._format(base, node, ctx)
                if last == "join" and len(node.args) == 1:
                    seq = self.resolve(node.args[0], ctx)
                    if seq.kind == "list" and seq.elems is not None:
                        parts: list[Val] = []
                        for i, e in enumerate(seq.elems):
                            if i:
                                parts.append(base)
                            parts.append(e)
                        return C.concat(parts, "python", fstring=False, source="join", node=node, ctx=ctx)
                    return unknown("join", _unparse(node), node, ctx)
                if base.resolved and not node.args:
                    return lit(getattr(base.value, last)(), base.source, node, ctx)
        if name in ("json.dumps", "dumps") and node.args:
            return self.resolve(node.args[0], ctx)
        if name == "dict":
            items: dict[str, Val] = {}
            open_ = False
            if node.args:
                base = self.resolve(node.args[0], ctx)
                if base.kind == "dict":
                    items.update(base.items or {})
                else:
                    open_ = True
            for kw in node.keywords:
                if kw.arg is None:
                    extra = self.resolve(kw.value, ctx)
                    if extra.kind == "dict":
                        items.update(extra.items or {})
                    else:
                        open_ = True
                else:
                    items[kw.arg] = self.resolve(kw.value, ctx)
            return C.make_dict(items, open=open_, node=node, ctx=ctx)
        if name in ("os.environ.get", "os.getenv", "getenv", "environ.get"):
            key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
            return unknown(f"env:{key}", _unparse(node), node, ctx)
        if name in ("str", "int", "float", "bool") and len(node.args) == 1:
            inner = self.resolve(node.args[0], ctx)
            if inner.kind == "scalar" and inner.resolved:
                try:
                    return lit({"str": str, "int": int, "float": float, "bool": bool}[name](inner.value),
                               inner.source, node, ctx)
                except (TypeError, ValueError):
                    pass
            return unknown(f"call:{name}", _unparse(node), node, ctx)
        if last in VECTOR_CTORS:
            kwargs = {k.arg: self.resolve(k.value, ctx) for k in node.keywords if k.arg}
            return Val("call", None, all(v.resolved for v in kwargs.values()), f"call:{last}",
                       _unparse(node), call=last, kwargs=kwargs, node=node, ctx=ctx)
        target = self._function_target(func, ctx)
        if target is not None and ctx.depth < self.MAX_CALL_DEPTH:
            return self._call_builder(target, node, ctx)
        return Val("call", None, False, f"call:{name or last}", _unparse(node), call=name or last,
                   node=node, ctx=ctx)

    def _function_target(self, func: ast.AST, ctx: _Ctx):
        """(module, qualname, node) of a function in the scanned tree that `func` names."""
        mod = ctx.mod
        if isinstance(func, ast.Name):
            if func.id in mod.functions:
                return mod, func.id, mod.functions[func.id]
            imp = mod.imports.get(func.id)
            if imp is not None and imp[1] is not None:
                rel = self.project.find_py_module(imp[0])
                if rel is not None:
                    target = _load_module(self.project, rel)
                    if target is not None and imp[1] in target.functions:
                        return target, imp[1], target.functions[imp[1]]
            return None
        dotted = _dotted(func)
        if dotted is None:
            return None
        parts = dotted.split(".")
        if parts[0] in ("self", "cls") and ctx.cls and len(parts) == 2:
            q = f"{ctx.cls}.{parts[1]}"
            if q in mod.functions:
                return mod, q, mod.functions[q]
            return None
        target, rest = self._module_of(dotted, ctx)
        if target is not None and len(rest) == 1 and rest[0] in target.functions:
            return target, rest[0], target.functions[rest[0]]
        return None

    def _call_builder(self, target, node: ast.Call, ctx: _Ctx) -> Val:
        mod, qual, fn = target
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if "." in qual and params and params[0] in ("self", "cls"):
            params = params[1:]
        bindings: dict[str, Val] = {}
        for p, a in zip(params, node.args, strict=False):
            if isinstance(a, ast.Starred):
                break
            bindings[p] = self.resolve(a, ctx)
        for kw in node.keywords:
            if kw.arg:
                bindings[kw.arg] = self.resolve(kw.value, ctx)
        # defaults
        pos = [*fn.args.posonlyargs, *fn.args.args]
        for a, d in zip(pos[len(pos) - len(fn.args.defaults):], fn.args.defaults, strict=True):
            if a.arg not in bindings:
                bindings[a.arg] = self.resolve(d, _Ctx(mod)).copy(source=f"default:{a.arg}")
        for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
            if a.arg not in bindings and d is not None:
                bindings[a.arg] = self.resolve(d, _Ctx(mod)).copy(source=f"default:{a.arg}")
        for p in _param_names(fn):
            if p not in bindings:
                bindings[p] = unknown(f"parameter:{p}", p)
        returns = [n for n in _walk_body(fn.body) if isinstance(n, ast.Return) and n.value is not None]
        name = f"{mod.dotted}:{qual}"
        if len(returns) != 1:
            return Val("call", None, False, f"call:{qual}", _unparse(node), call=qual, node=node, ctx=ctx,
                       builder=name)
        key = ("call", mod.rel, qual)
        if key in self.active:
            return unknown(f"call:{qual}", _unparse(node), node, ctx)
        self.active.add(key)
        try:
            cls = qual.split(".")[0] if "." in qual else None
            v = self.resolve(returns[0].value, _Ctx(mod, fn, cls, bindings, ctx.depth + 1))
        finally:
            self.active.discard(key)
        return v.copy(builder=name, source=f"builder:{qual}") if v.kind == "dict" else v.copy(builder=name)


# ---- the file scanner ----------------------------------------------------------------------


class _FileScan:
    def __init__(self, project: C.Project, rel: str, source: str, tree: ast.Module) -> None:
        self.project = project
        self.rel = rel
        self.source = source
        self.mod = _PyModule(project, rel, tree)
        self.r = _Resolver(project)
        self.out = C.FileResult()
        self.calls: list[tuple[ast.Call, str, Any, str | None]] = []
        self.awaited: set[int] = set()
        self.strings: list[tuple[ast.AST, str, Any, str | None]] = []
        self.prompt_assigns: list[tuple[str, ast.expr, str, Any, str | None]] = []
        self.functions: list[tuple[str, Any, str | None]] = []
        self.typed: dict[str, str] = {}
        self.typed_tail: dict[str, str] = {}
        low = source.lower()
        self.want_strings = any(op in source for op in ("<->", "<=>", "<#>", "cosine_distance")) or \
            bool(_security_offsets(source, low))
        self.want_prompts = "prompt" in low
        self.has_http = any(k in low for k in ("docs/search", "requests", "httpx", "aiohttp", "urllib", ".post(",
                                               ".request("))
        self.want_llm = any(k in low for k in (".create(", "invoke(", ".stream(", ".predict(", "completion",
                                               ".batch(", "generate_content", ".chat(", ".parse("))
        self.imports_azure_search = "azure.search.documents" in source
        self.imports_azure_openai = "AzureOpenAI" in source

    # -- collection ------------------------------------------------------------------------
    def collect(self) -> None:
        self.lines = _interesting_lines(self.source)
        self._walk(self.mod.tree, "", None, None, False, filtered=True)

    def _hit(self, node: ast.AST) -> bool:
        """Does `node` span a line holding a trigger word?"""
        start = getattr(node, "lineno", None)
        if start is None:
            return True
        end = getattr(node, "end_lineno", None) or start
        lines = self.lines
        i = bisect.bisect_left(lines, start)
        return i < len(lines) and lines[i] <= end

    def _walk(self, node: ast.AST, qual: str, func: Any, cls: str | None, in_string: bool,
              filtered: bool = False) -> None:
        """Visit the children of `node`; with `filtered`, only simple statements and expressions that
        span a trigger line are visited (definitions and compound statements are always entered)."""
        for child in ast.iter_child_nodes(node):
            t = type(child)
            if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                q = f"{qual}.{child.name}" if qual else child.name  # type: ignore[attr-defined]
                self.functions.append((q, child, cls))
                for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs):  # type: ignore[attr-defined]
                    if a.annotation is not None:
                        tag = _ctor_tag(_dotted(a.annotation) or "")
                        if tag:
                            self.typed[a.arg] = tag
                self._walk(child, q, child, cls, False, filtered)
            elif t is ast.ClassDef:
                q = f"{qual}.{child.name}" if qual else child.name  # type: ignore[attr-defined]
                self._walk(child, q, None, child.name, False, filtered)  # type: ignore[attr-defined]
            elif filtered and isinstance(child, _COMPOUND):
                self._walk(child, qual, func, cls, in_string, True)
            elif filtered and not self._hit(child):
                continue
            elif t is ast.Call:
                self.calls.append((child, qual, func, cls))  # type: ignore[arg-type]
                if self.want_strings and not in_string and _is_string_expr(child):
                    self.strings.append((child, qual, func, cls))
                    self._walk(child, qual, func, cls, True)
                else:
                    self._walk(child, qual, func, cls, in_string)
            elif t is ast.Await:
                if isinstance(child.value, ast.Call):  # type: ignore[attr-defined]
                    self.awaited.add(id(child.value))  # type: ignore[attr-defined]
                self._walk(child, qual, func, cls, in_string)
            elif t is ast.Expr and isinstance(child.value, ast.Constant):  # type: ignore[attr-defined]
                continue  # docstrings and bare strings
            elif t is ast.Assign or t is ast.AnnAssign:
                self._assignment(child, qual, func, cls)
                self._walk(child, qual, func, cls, in_string)
            elif self.want_strings and not in_string and (t is ast.JoinedStr or t is ast.BinOp
                                                           or (t is ast.Constant and isinstance(child.value, str))):  # type: ignore[attr-defined]
                if _is_string_expr(child):
                    self.strings.append((child, qual, func, cls))
                    self._walk(child, qual, func, cls, True)
                else:
                    self._walk(child, qual, func, cls, in_string)
            else:
                self._walk(child, qual, func, cls, in_string)

    def _assignment(self, node: Any, qual: str, func: Any, cls: str | None) -> None:
        value = node.value
        if value is None:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        call = value.value if isinstance(value, ast.Await) else value
        if isinstance(call, ast.Call):
            tag = _ctor_tag(_dotted(call.func) or "")
            if tag:
                for t in targets:
                    d = _dotted(t)
                    if d:
                        self.typed[d] = tag
                        self.typed_tail[d.rsplit(".", 1)[-1]] = tag
        if self.want_prompts:
            for t in targets:
                d = _dotted(t)
                if d and "prompt" in d.rsplit(".", 1)[-1].lower():
                    self.prompt_assigns.append((d, value, qual, func, cls))

    # -- helpers -------------------------------------------------------------------------------
    def ctx(self, func: Any, cls: str | None) -> _Ctx:
        return _Ctx(self.mod, func, cls)

    def type_of(self, receiver: str | None) -> str | None:
        if not receiver:
            return None
        if receiver in self.typed:
            return self.typed[receiver]
        return self.typed_tail.get(receiver.rsplit(".", 1)[-1])

    def ref(self, v: Val | None, vector: bool = False) -> str | None:
        """The variable (or expression) a channel value is written as; None for literals."""
        if v is None:
            return None
        node, ctx = v.node, v.ctx
        if node is None:
            return v.expr or None
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            return None
        if vector:
            if isinstance(node, ast.Name) and isinstance(ctx, _Ctx) and ctx.func is not None:
                assigns, _ = ctx.mod.locals_of(ctx.func)
                entries = [e for e in assigns.get(node.id, ()) if e[0] < getattr(node, "lineno", 10**9)]
                if entries and entries[-1][1] == "assign" and isinstance(entries[-1][2], (ast.Call, ast.Await)):
                    node = entries[-1][2]
            if isinstance(node, ast.Await):
                node = node.value
            if isinstance(node, ast.Call):
                for a in [*node.args, *(k.value for k in node.keywords)]:
                    d = _dotted(a)
                    if d:
                        return d
        d = _dotted(node)
        return d if d else _unparse(node, 80)

    def site(self, kind: str, call: ast.AST, qual: str, params: dict[str, Val],
             channels: dict[str, str | None], builder: str | None, callee: str = "",
             is_async: bool = False) -> SearchCallSite:
        return SearchCallSite(
            file=self.rel, line=call.lineno, kind=kind, function=qual or "<module>",
            module=self.mod.dotted, params={k: export(v) for k, v in params.items()},
            channel_vars=dict(channels), shared_text=C.shared_channels(channels), builder=builder,
            language="python", call=callee, is_async=is_async)

    # -- analyses ------------------------------------------------------------------------------
    def run(self) -> C.FileResult:
        self._budget_constants()
        self.collect()
        for call, qual, func, cls in self.calls:
            self._call(call, qual, func, cls, self.want_llm)
        for node, qual, func, cls in self.strings:
            self._string(node, qual, func, cls)
        for name, value, _qual, func, cls in self.prompt_assigns:
            self._prompt(name, value, func, cls)
        self._citations()
        return self.out

    def _budget_constants(self) -> None:
        for name, (value, line) in self.mod.constants.items():
            if C.BUDGET_NAME_RE.search(name):
                v = self.r.resolve(value, _Ctx(self.mod))
                self.out.budget_constants.append(BudgetConstant(self.rel, line, name, C.plain(v)))
        self.out.budget_constants.sort(key=lambda b: b.line)

    def _call(self, call: ast.Call, qual: str, func: Any, cls: str | None, want_llm: bool) -> None:
        f = call.func
        last = _callee_name(call)
        if last is None:
            return
        name = _dotted(f) or last
        receiver = _dotted(f.value) if isinstance(f, ast.Attribute) else None
        ctx = self.ctx(func, cls)
        is_async = id(call) in self.awaited
        if last in VECTOR_CTORS:
            self._vector_query(call, qual, ctx, name)
        elif last == "search" and receiver is not None:
            self._search_method(call, qual, ctx, name, receiver, is_async)
        elif last in LC_SEARCH_METHODS and receiver is not None:
            self._langchain_search(call, qual, ctx, name, is_async)
        elif last in ("as_retriever", "as_query_engine", "as_chat_engine"):
            self._as_retriever(call, qual, ctx, name, receiver, last)
        elif last in ("AzureAISearchRetriever", "AzureCognitiveSearchRetriever"):
            params = self._kw_params(call, ctx, {"top_k": "top", "filter": "filter", "index_name": "index_name"})
            self.out.search_calls.append(self.site("langchain", call, qual, params, {}, None, name))
        elif last in ("AzureAISearchVectorStore", "VectorIndexRetriever"):
            params = self._kw_params(call, ctx, {"similarity_top_k": "k", "index_name": "index_name",
                                                 "filters": "filter"})
            self.out.search_calls.append(self.site("llamaindex", call, qual, params, {}, None, name))
        elif last in SQL_METHODS and receiver is not None:
            self.out.search_calls.append(self.site("sql_similarity", call, qual, {}, {}, None, name))
        elif want_llm and self._llm_kind(call, name, receiver, last):
            self._llm(call, qual, func, cls, self._llm_kind(call, name, receiver, last) or "other", name)
        elif last in HTTP_METHODS and self.has_http and (
                last != "get" or re.search(r"requests|httpx|session|client|http|aiohttp|api", receiver or "", re.I)):
            self._rest(call, qual, ctx, name, last, is_async)
        if "search_in" in last.lower() and call.args and isinstance(call.args[0], ast.Constant) \
                and isinstance(call.args[0].value, str) and C.SECURITY_FIELD_RE.match(call.args[0].value):
            self._search_in_helper(call, qual, func, cls)

    def _kw_params(self, call: ast.Call, ctx: _Ctx, mapping: dict[str, str]) -> dict[str, Val]:
        out: dict[str, Val] = {}
        for kw in call.keywords:
            if kw.arg in mapping:
                out[mapping[kw.arg]] = self.r.resolve(kw.value, ctx)
        return out

    def _vector_query(self, call: ast.Call, qual: str, ctx: _Ctx, name: str) -> None:
        kw = {k.arg: self.r.resolve(k.value, ctx) for k in call.keywords if k.arg}
        params: dict[str, Val] = {}
        for key, pname in (("k_nearest_neighbors", "k"), ("k", "k"), ("exhaustive", "exhaustive"),
                           ("fields", "vector_fields"), ("weight", "weight"),
                           ("filter_override", "filter"), ("oversampling", "oversampling")):
            if key in kw:
                params[pname] = kw[key]
        channels: dict[str, str | None] = {}
        if "text" in kw:
            channels["vector_text"] = self.ref(kw["text"])
        if "vector" in kw:
            channels["vector"] = self.ref(kw["vector"], vector=True)
        self.out.vector_queries.append(self.site("azure_vector_query", call, qual, params, channels, None, name))

    def _search_method(self, call: ast.Call, qual: str, ctx: _Ctx, name: str, receiver: str,
                       is_async: bool) -> None:
        low = receiver.lower()
        if low in ("re", "regex") or low.endswith(("pattern", "_re", "regex", "rx")):
            return
        tag = self.type_of(receiver)
        kwnames = {k.arg for k in call.keywords}
        sdk = bool(kwnames & SDK_SEARCH_KW) or None in kwnames
        tail = low.rsplit(".", 1)[-1]
        if tag == "faiss" or (tag is None and "index" in tail and not sdk
                              and (len(call.args) >= 2 or "k" in kwnames)):
            params: dict[str, Val] = {}
            if len(call.args) >= 2:
                params["k"] = self.r.resolve(call.args[1], ctx)
            for kw in call.keywords:
                if kw.arg == "k":
                    params["k"] = self.r.resolve(kw.value, ctx)
            channels = {"vector": self.ref(self.r.resolve(call.args[0], ctx), vector=True)} if call.args else {}
            self.out.search_calls.append(self.site("faiss_search", call, qual, params, channels, None, name,
                                                   is_async))
            return
        if tag == "SearchClient" or sdk or re.search(r"search_?client|searcher", tail) \
                or (self.imports_azure_search and "client" in tail):
            self._azure_search(call, qual, ctx, name, is_async)

    def _azure_search(self, call: ast.Call, qual: str, ctx: _Ctx, name: str, is_async: bool) -> None:
        kw: dict[str, Val] = {}
        builder: str | None = None
        if call.args and not isinstance(call.args[0], ast.Starred):
            kw["search_text"] = self.r.resolve(call.args[0], ctx)
        for k in call.keywords:
            if k.arg is None:
                d = self.r.resolve(k.value, ctx)
                if d.kind == "dict":
                    kw.update(d.items or {})
                builder = builder or d.builder
            else:
                kw[k.arg] = self.r.resolve(k.value, ctx)
        params = {C.SDK_PARAMS[k]: v for k, v in kw.items() if k in C.SDK_PARAMS}
        channels: dict[str, str | None] = {}
        if "search_text" in kw:
            channels["search_text"] = self.ref(kw["search_text"])
        if "semantic_query" in kw:
            channels["semantic_query"] = self.ref(kw["semantic_query"])
        vqs = kw.get("vector_queries")
        if vqs is not None:
            self._fold_vector_queries(vqs, params, channels)
        self.out.search_calls.append(self.site("azure_search", call, qual, params, channels, builder, name,
                                               is_async))

    def _fold_vector_queries(self, vqs: Val, params: dict[str, Val], channels: dict[str, str | None]) -> None:
        elems = vqs.elems if vqs.kind == "list" and vqs.elems is not None else [vqs]
        calls = [e for e in elems if e.kind == "call" and e.call in VECTOR_CTORS and e.kwargs is not None]
        if not calls:
            return
        first = calls[0]
        where = f"{first.ctx.mod.rel}:{first.node.lineno}" if isinstance(first.ctx, _Ctx) and first.node is not None \
            else self.rel
        for pname, keys in (("k", ("k_nearest_neighbors", "k")), ("exhaustive", ("exhaustive",)),
                            ("vector_fields", ("fields",)), ("weight", ("weight",))):
            found = [next((c.kwargs[k] for k in keys if k in c.kwargs), None) for c in calls]  # type: ignore[index]
            if pname == "exhaustive" and any(v is not None for v in found):
                found = [v if v is not None else lit(False, "default") for v in found]
            present = [v for v in found if v is not None]
            if present:
                params[pname] = C.combine(present, f"vector_query@{where}")
        n_text = n_vec = 0
        for c in calls:
            if "text" in c.kwargs:  # type: ignore[operator]
                n_text += 1
                channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = self.ref(c.kwargs["text"])  # type: ignore[index]
            if "vector" in c.kwargs:  # type: ignore[operator]
                n_vec += 1
                channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = self.ref(c.kwargs["vector"], vector=True)  # type: ignore[index]

    def _langchain_search(self, call: ast.Call, qual: str, ctx: _Ctx, name: str, is_async: bool) -> None:
        params: dict[str, Val] = {}
        if len(call.args) >= 2:
            params["k"] = self.r.resolve(call.args[1], ctx)
        for kw in call.keywords:
            if kw.arg == "k":
                params["k"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("filter", "filters"):
                params["filter"] = self.r.resolve(kw.value, ctx)
            elif kw.arg == "search_type":
                params["query_type"] = self.r.resolve(kw.value, ctx)
        channels: dict[str, str | None] = {}
        if call.args:
            key = "vector" if "by_vector" in name else "search_text"
            channels[key] = self.ref(self.r.resolve(call.args[0], ctx), vector=key == "vector")
        self.out.search_calls.append(self.site("langchain", call, qual, params, channels, None, name, is_async))

    def _as_retriever(self, call: ast.Call, qual: str, ctx: _Ctx, name: str, receiver: str | None,
                      last: str) -> None:
        kwnames = {k.arg for k in call.keywords}
        llama = last != "as_retriever" or "similarity_top_k" in kwnames \
            or self.type_of(receiver) == "LlamaIndex" or "llama_index" in self.source
        params: dict[str, Val] = {}
        for kw in call.keywords:
            if kw.arg == "similarity_top_k":
                params["k"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("filters", "filter"):
                params["filter"] = self.r.resolve(kw.value, ctx)
            elif kw.arg in ("search_type", "vector_store_query_mode"):
                params["query_type"] = self.r.resolve(kw.value, ctx)
            elif kw.arg == "search_kwargs":
                sk = self.r.resolve(kw.value, ctx)
                if sk.kind == "dict":
                    for key, pname in (("k", "k"), ("filter", "filter"), ("fetch_k", "fetch_k"),
                                       ("score_threshold", "score_threshold")):
                        if sk.items and key in sk.items:
                            params[pname] = sk.items[key]
                else:
                    params["k"] = unknown("search_kwargs", sk.expr)
        self.out.search_calls.append(self.site("llamaindex" if llama else "langchain", call, qual, params, {},
                                               None, name))

    def _rest(self, call: ast.Call, qual: str, ctx: _Ctx, name: str, last: str, is_async: bool) -> None:
        url_node = None
        for kw in call.keywords:
            if kw.arg == "url":
                url_node = kw.value
        if url_node is None and call.args:
            url_node = call.args[1] if last == "request" and len(call.args) > 1 else call.args[0]
        if url_node is None:
            return
        url = self.r.resolve(url_node, ctx)
        text, _ = C.text_of(url, "python")
        if "/docs/search" not in text and "docs/search" not in text:
            return
        body: Val | None = None
        builder = None
        query: Val | None = None
        for kw in call.keywords:
            if kw.arg in ("json", "data", "content", "body"):
                body = self.r.resolve(kw.value, ctx)
            elif kw.arg == "params":
                query = self.r.resolve(kw.value, ctx)
        if body is None and len(call.args) >= 2 and last in ("post", "put"):
            body = self.r.resolve(call.args[1], ctx)
        params: dict[str, Val] = {}
        channels: dict[str, str | None] = {}
        for src in (query, body):
            if src is not None and src.kind == "dict":
                p, ch = C.rest_params(src, self.ref)
                params.update(p)
                channels.update(ch)
                builder = builder or src.builder
        self.out.search_calls.append(self.site("rest_search", call, qual, params, channels, builder, name,
                                               is_async))

    # -- LLM calls ---------------------------------------------------------------------------
    def _llm_kind(self, call: ast.Call, name: str, receiver: str | None, last: str) -> str | None:
        if name.endswith(("chat.completions.create", "responses.create", "completions.create",
                          "chat.completions.parse", "beta.chat.completions.parse")) \
                or name.endswith((".chat.completions.acreate",)):
            tag = None
            parts = receiver.split(".") if receiver else []
            for i in range(len(parts), 0, -1):
                prefix = ".".join(parts[:i])
                if prefix in self.typed:
                    tag = self.typed[prefix]
                    break
            if tag == "AzureOpenAI" or (tag is None and self.imports_azure_openai):
                return "azure_openai_chat"
            return "openai_chat"
        if last in LC_CHAT_METHODS and receiver is not None:
            tag = self.type_of(receiver)
            if tag == "LCChat" or re.search(r"(^|[._])(llm|chat_model|chat|model)$", receiver.lower()):
                return "langchain_chat"
            return None
        if name.endswith(("messages.create", "generate_content")) or name in ("litellm.completion",
                                                                               "litellm.acompletion",
                                                                               "completion", "ollama.chat"):
            return "other"
        return None

    def _names_in(self, nodes: list[ast.AST]) -> list[str]:
        bound: set[str] = set()
        names: list[str] = []
        for n in nodes:
            for sub in ast.walk(n):
                if isinstance(sub, ast.comprehension):
                    for t in ast.walk(sub.target):
                        if isinstance(t, ast.Name):
                            bound.add(t.id)
                elif isinstance(sub, ast.Lambda):
                    bound.update(_param_names(sub))  # type: ignore[arg-type]
        for n in nodes:
            for sub in ast.walk(n):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound:
                    names.append(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                        and sub.value.id == "self":
                    names.append(f"self.{sub.attr}")
        return list(dict.fromkeys(names))

    def _llm(self, call: ast.Call, qual: str, func: Any, cls: str | None, kind: str, name: str) -> None:
        exprs: list[ast.AST] = [kw.value for kw in call.keywords
                                if kw.arg in ("messages", "input", "prompt", "contents", "instructions", None)]
        exprs += list(call.args)
        mod = self.mod
        closure = self._names_in(exprs)
        if func is not None:
            closure = self._expand_closure(func, closure)
        skip = set(mod.constants) | set(mod.imports) | set(mod.functions) | set(mod.classes) | _BUILTINS
        context_vars = tuple(n for n in closure if n not in skip)
        retrieved = any(C.CONTEXT_NAME_RE.search(n) for n in context_vars)
        evidence = self._bound_evidence(func, cls, set(closure), call, 0, set()) if func is not None else []
        self.out.llm_calls.append(LLMCallSite(
            file=self.rel, line=call.lineno, kind=kind, function=qual or "<module>",
            context_bounded=bool(evidence),
            bound_evidence="; ".join(evidence[:3]) if evidence else
            "no slice, budget comparison or truncation helper on the context in this function "
            "or the same-file functions it calls",
            context_vars=context_vars, retrieved_context=retrieved, module=mod.dotted, language="python",
            call=name))

    def _expand_closure(self, func: Any, closure: list[str]) -> list[str]:
        """Names feeding `closure` in `func`: assigned values, `x.append(...)` arguments, loop iterables."""
        assigns, subs = self.mod.locals_of(func)
        feeders: dict[str, list[ast.AST]] = defaultdict(list)
        for node in _walk_body(func.body):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) \
                    and node.func.attr in ("append", "extend", "insert", "add", "update", "write"):
                feeders[node.func.value.id].extend([*node.args, *(k.value for k in node.keywords)])
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                feeders[node.target.id].append(node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                touched = {sub.func.value.id for sub in ast.walk(node)
                           if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                           and isinstance(sub.func.value, ast.Name)
                           and sub.func.attr in ("append", "extend", "add", "write")}
                touched |= {sub.target.id for sub in ast.walk(node)
                            if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name)}
                for name in touched:
                    feeders[name].append(node.iter)
        out = list(closure)
        i = 0
        while i < len(out) and len(out) < 80:
            n = out[i]
            values = [e[2] for e in assigns.get(n, ()) if e[1] == "assign" and e[2] is not None]
            values += [e[2] for e in subs.get(n, ()) if e[2] is not None]
            values += feeders.get(n, [])
            for extra in self._names_in(values):
                if extra not in out:
                    out.append(extra)
            i += 1
        return out

    def _bound_evidence(self, func: Any, cls: str | None, closure: set[str], skip: ast.AST | None,
                        depth: int, seen: set[int]) -> list[str]:
        if func is None or id(func) in seen:
            return []
        seen.add(id(func))
        out: list[str] = []
        budget_names = {b.name for b in self.out.budget_constants}
        skip_ids = {id(skip)} if skip is not None else set()
        prefix = f"in {func.name}(): " if depth else ""
        for node in _walk_body(func.body):
            if id(node) in skip_ids:
                continue
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
                    and node.slice.upper is not None and node.slice.lower is None:
                base = _dotted(node.value) or ""
                if depth or base.split(".")[0] in closure or base in closure:
                    out.append(prefix + _unparse(node, 100))
            elif isinstance(node, ast.Compare):
                names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
                if any(n in budget_names or C.BUDGET_NAME_RE.search(n) or n.lower() in ("max_sources",
                                                                                        "max_tokens_context")
                       for n in names):
                    out.append(prefix + _unparse(node, 100))
            elif isinstance(node, ast.Call):
                last = _callee_name(node) or ""
                if C.TRUNCATE_FUNC_RE.search(last) or last == "islice":
                    out.append(prefix + _unparse(node, 100))
                elif any(kw.arg and C.BOUND_KW_RE.search(kw.arg) for kw in node.keywords):
                    out.append(prefix + _unparse(node, 100))
                elif depth < 2:
                    target = None
                    if isinstance(node.func, ast.Name) and node.func.id in self.mod.functions:
                        target = (self.mod.functions[node.func.id], None)
                    elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                            and node.func.value.id == "self" and cls \
                            and f"{cls}.{node.func.attr}" in self.mod.functions:
                        target = (self.mod.functions[f"{cls}.{node.func.attr}"], cls)
                    if target is not None:
                        out.extend(self._bound_evidence(target[0], target[1], closure, None, depth + 1, seen))
            elif isinstance(node, ast.Name) and node.id.lower() == "max_sources":
                out.append(prefix + node.id)
        return list(dict.fromkeys(out))

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
                    entries = [e for e in assigns.get(var, ()) if e[0] <= node.lineno and e[1] == "assign"]
                    if entries:
                        related[var].append(_unparse(entries[-1][2], 400))
        texts = [t for ts in related.values() for t in ts]
        interpolated = bool(v.vars)
        escaped = all(any(C.ESCAPE_TEXT_RE.search(t) for t in ts) for ts in related.values())
        self.out.security_filters.append(SecurityFilterSite(
            file=self.rel, line=node.lineno, function=qual or "<module>", expression=_unparse(node, 300),
            uses_search_in="search.in(" in text, escaped=escaped,
            from_identity=any(C.is_identity_expr(t) for t in texts) if interpolated else None,
            from_request=any(C.is_request_expr(t) for t in texts) if interpolated else None,
            fstring=interpolated, fields=fields, language="python"))

    def _search_in_helper(self, call: ast.Call, qual: str, func: Any, cls: str | None) -> None:
        texts = [_unparse(a) for a in call.args[1:]] + [_unparse(k.value) for k in call.keywords]
        self.out.security_filters.append(SecurityFilterSite(
            file=self.rel, line=call.lineno, function=qual or "<module>", expression=_unparse(call, 300),
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

    def _citations(self) -> None:
        for qual, fn, cls in self.functions:
            if not C.CITATION_FUNC_RE.search(fn.name):
                continue
            evidence = self._validation_evidence(fn, cls, 0, set())
            self.out.citation_checks.append(CitationCheck(
                file=self.rel, line=fn.lineno, function=qual, validated=bool(evidence),
                evidence="; ".join(evidence[:3]) if evidence else
                "no membership test of cited ids against the retrieved ids", language="python"))

    def _validation_evidence(self, fn: Any, cls: str | None, depth: int, seen: set[int]) -> list[str]:
        if id(fn) in seen:
            return []
        seen.add(id(fn))
        out: list[str] = []
        prefix = f"in {fn.name}(): " if depth else ""
        for node in _walk_body(fn.body):
            if isinstance(node, ast.Call):
                last = _callee_name(node) or ""
                if last in ("issubset", "issuperset", "intersection", "difference", "isdisjoint"):
                    out.append(prefix + _unparse(node, 100))
                elif depth < 2 and re.search(r"valid|verify|check|allowed|known", last, re.I):
                    target = None
                    if isinstance(node.func, ast.Name) and node.func.id in self.mod.functions:
                        target = self.mod.functions[node.func.id]
                    elif isinstance(node.func, ast.Attribute) and cls and f"{cls}.{last}" in self.mod.functions:
                        target = self.mod.functions[f"{cls}.{last}"]
                    if target is not None:
                        out.extend(self._validation_evidence(target, cls, depth + 1, seen))
            elif isinstance(node, ast.Compare):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, (ast.Constant, ast.JoinedStr)):
                        if isinstance(right, (ast.List, ast.Tuple, ast.Set)) and all(
                                isinstance(e, ast.Constant) for e in right.elts):
                            continue
                        if C.VALIDATION_REF_RE.search(_unparse(right, 120)):
                            out.append(prefix + _unparse(node, 100))
                    elif isinstance(op, (ast.LtE, ast.GtE)) and "set(" in _unparse(node, 200):
                        out.append(prefix + _unparse(node, 100))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.BitAnd)):
                text = _unparse(node, 200)
                if "set(" in text or C.VALIDATION_REF_RE.search(text):
                    if any(isinstance(s, (ast.Set, ast.SetComp)) or (isinstance(s, ast.Call) and _callee_name(s) in
                                                                      ("set", "frozenset"))
                           or isinstance(s, ast.Name) for s in (node.left, node.right)):
                        out.append(prefix + _unparse(node, 100))
        return list(dict.fromkeys(out))


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


def _is_string_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return _is_string_expr(node.left) or _is_string_expr(node.right)
        if isinstance(node.op, ast.Mod):
            return _is_string_expr(node.left)
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return isinstance(node.func.value, (ast.Constant, ast.JoinedStr)) and _is_string_expr(node.func.value)
    return False


def scan_python(project: C.Project, rel: str, source: str) -> C.FileResult:
    """Scan one Python file (already read as text).

    A file with no trigger word (search, vector, retriever, completion, prompt,
    citation, an HTTP client, a security field, a budget-like constant) cannot
    yield anything, so it is not parsed unless `project.check_syntax` is set.
    """
    if not project.check_syntax and not _triggered(source):
        return C.FileResult(scanned=True)
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError as exc:
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"syntax error at line {exc.lineno}: {exc.msg}"))
        return result
    except (ValueError, RecursionError, MemoryError) as exc:
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"could not parse: {type(exc).__name__}"))
        return result
    scan = _FileScan(project, rel, source, tree)
    return scan.run()
