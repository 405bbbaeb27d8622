"""Python modules as the scanner indexes them (`ast`, never imported): top level, locals, parameters, classes.

`PyModule` is the Python `ModuleIndex`: constants (also inside top-level
`if`/`try`), imports (relative ones made absolute), functions and methods,
classes with their class-level fields (pydantic-settings / dataclass /
model defaults) and the `self.x = ...` assignments of their methods.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict, deque
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Local, ModuleIndex, Param, Store


def dotted(node: ast.AST | None) -> str | None:
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
            inner = dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Subscript):
            inner = dotted(node.value)
            if inner is None:
                return None
            parts.append(inner + "[]")
            return ".".join(reversed(parts))
        else:
            return None


def unparse(node: ast.AST, limit: int = 240) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must never break a scan
        return "<expr>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def callee_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


#: Field types of the grammar that never hold a node (`FunctionDef(identifier name, ...)`).
_LEAF_TYPES = frozenset({"identifier", "string", "int", "constant"})
#: Node lists of the grammar that hold None for an absent entry (`{**d}`'s key, a keyword-only
#: parameter without a default).
_LISTS_WITH_NONE = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})
#: Per node type, the fields that can hold nodes: (name, 0 one node or None / 1 a list of nodes /
#: 2 a list of nodes and Nones / 3 unknown shape, tested value by value).
_CHILD_FIELDS: dict[type, tuple[tuple[str, int], ...]] = {}


def _child_fields(t: type) -> tuple[tuple[str, int], ...]:
    """The node-holding fields of node type `t`, read from the grammar line `ast` gives as its docstring
    (`Compare(expr left, cmpop* ops, expr* comparators)`); a type whose docstring does not spell its
    fields is walked generically, field by field."""
    fields = tuple(getattr(t, "_fields", ()))
    doc = (t.__doc__ or "").strip()
    head, _, rest = doc.partition("(")
    decls = [d.strip().rsplit(" ", 1) for d in rest[:-1].split(",")] if rest.endswith(")") else []
    if head != t.__name__ or [d[-1] for d in decls] != list(fields) or any(len(d) != 2 for d in decls):
        plan = tuple((f, 3) for f in fields)
    else:
        plan = tuple((name, 0 if not typ.endswith("*") else 2 if (t.__name__, name) in _LISTS_WITH_NONE else 1)
                     for typ, name in decls if typ.rstrip("*?") not in _LEAF_TYPES)
    _CHILD_FIELDS[t] = plan
    return plan


def children(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, same order, without its generator layers and without testing
    the fields the grammar never fills with nodes (names, strings, constants): the walks below visit
    every node of every parsed file."""
    plan = _CHILD_FIELDS.get(type(node))
    if plan is None:
        plan = _child_fields(type(node))
    out: list[ast.AST] = []
    for name, shape in plan:
        value = getattr(node, name, None)
        if shape == 0:
            if value is not None:
                out.append(value)
        elif shape == 1:
            if value:
                out.extend(value)
        elif shape == 2:
            if value:
                out.extend([item for item in value if item is not None])
        elif isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, ast.AST)])
    return out


def walk(node: ast.AST):
    """`ast.walk(node)`: the same nodes in the same (breadth-first) order, with the faster `children`."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def walk_body(nodes: list[ast.AST]):
    """All nodes under `nodes`, not descending into nested functions or classes (lambdas included)."""
    stack = list(reversed(nodes))
    definitions = _DEFINITIONS
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
            if type(child) not in definitions:
                stack.append(child)


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler)


def walk_blocks(nodes: list[ast.AST]):
    """(node, innermost conditional block as (first line, last line) or None), as `walk_body`."""
    stack: list[tuple[ast.AST, tuple[int, int] | None]] = [(n, None) for n in reversed(nodes)]
    while stack:
        node, block = stack.pop()
        yield node, block
        inner = (node.lineno, node.end_lineno or node.lineno) if isinstance(node, _BLOCKS) else block
        for child in reversed(children(node)):
            if type(child) not in _DEFINITIONS:
                stack.append((child, inner))


def param_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = func.args
    return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + \
        ([a.vararg.arg] if a.vararg else []) + ([a.kwarg.arg] if a.kwarg else [])


def ctor_tag(ctor: str) -> str | None:
    last = ctor.rsplit(".", 1)[-1]
    if ctor.startswith("faiss."):
        return "faiss"
    if last in ("SearchClient",):
        return "SearchClient"
    if last in ("QdrantClient", "AsyncQdrantClient"):
        return "qdrant"
    if last in ("KnowledgeAgentRetrievalClient", "KnowledgeBaseRetrievalClient"):
        return "AgentClient"
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



class PyModule(ModuleIndex):
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
        self.class_fields: dict[str, dict[str, tuple[ast.expr, int]]] = {}
        self.class_bases: dict[str, list[str]] = {}
        self._locals: dict[int, tuple[dict[str, list[Local]], dict[str, list[Store]]]] = {}
        self._params: dict[int, list[Param]] = {}
        self._self_attrs: dict[str, dict[str, list[tuple[Any, ast.expr]]]] = {}
        self._nodes: dict[int, dict[type, list[Any]]] = {}
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
                self.class_bases[stmt.name] = [dotted(b) or "" for b in stmt.bases]
                consts: dict[str, ast.expr] = {}
                fields: dict[str, tuple[ast.expr, int]] = {}
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions[f"{stmt.name}.{item.name}"] = item
                    elif isinstance(item, ast.Assign):
                        for t in item.targets:
                            if isinstance(t, ast.Name):
                                consts[t.id] = item.value
                                fields[t.id] = (item.value, item.lineno)
                    elif isinstance(item, ast.AnnAssign) and item.value is not None \
                            and isinstance(item.target, ast.Name):
                        consts[item.target.id] = item.value
                        fields[item.target.id] = (item.value, item.lineno)
                self.class_consts[stmt.name] = consts
                self.class_fields[stmt.name] = fields
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

    def locals_of(self, func: Any) -> tuple[dict[str, list[Local]], dict[str, list[Store]]]:
        """(bindings, item stores) of a function's locals, each list sorted by line."""
        key = id(func)
        cached = self._locals.get(key)
        if cached is not None:
            return cached
        assigns: dict[str, list[Local]] = defaultdict(list)
        subs: dict[str, list[Store]] = defaultdict(list)

        block: tuple[int, int] | None = None

        def bind(target: ast.AST, value: ast.AST | None, line: int) -> None:
            if isinstance(target, ast.Name):
                assigns[target.id].append(Local(line, "assign" if value is not None else "other", value, block))
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
                subs[target.value.id].append(Store(line, k, value))

        for node, block in walk_blocks(func.body):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    bind(t, node.value, node.lineno)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    bind(node.target, node.value, node.lineno)
            elif isinstance(node, ast.AugAssign):
                if isinstance(node.target, ast.Name):
                    assigns[node.target.id].append(Local(node.lineno, "aug", node, block))
                elif isinstance(node.target, ast.Subscript) and isinstance(node.target.value, ast.Name):
                    subs[node.target.value.id].append(Store(node.lineno, None, None))
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
                        subs[name].append(Store(node.lineno, "**", a))
                    for kw in node.keywords:
                        subs[name].append(Store(node.lineno, kw.arg or "**", kw.value))
                elif node.args and isinstance(node.args[0], ast.Constant) and len(node.args) > 1:
                    subs[name].append(Store(node.lineno, str(node.args[0].value), node.args[1]))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) \
                    and node.func.attr in ("append", "extend", "insert", "remove", "pop", "clear", "add",
                                           "discard", "popitem"):
                subs[node.func.value.id].append(Store(node.lineno, None, None))
            elif isinstance(node, ast.ExceptHandler) and node.name:
                assigns[node.name].append(Local(node.lineno, "other", None, block))
        for v in assigns.values():
            v.sort(key=lambda e: e.line)
        for v in subs.values():
            v.sort(key=lambda e: e.line)
        result = (dict(assigns), dict(subs))
        self._locals[key] = result
        return result

    def nodes_of(self, func: Any) -> dict[type, list[Any]]:
        """The nodes of a function's body (not of nested functions), by type: one walk, cached."""
        key = id(func)
        cached = self._nodes.get(key)
        if cached is None:
            cached = defaultdict(list)
            stack = list(reversed(func.body))  # `walk_body`'s order, without its generator
            definitions = _DEFINITIONS
            while stack:
                n = stack.pop()
                cached[type(n)].append(n)
                for child in children(n):
                    if type(child) not in definitions:
                        stack.append(child)
            self._nodes[key] = cached
        return cached

    def params_of(self, func: Any) -> list[Param]:
        """Parameters of a function (or lambda) with their default nodes and annotations."""
        key = id(func)
        cached = self._params.get(key)
        if cached is not None:
            return cached
        a = func.args
        pos = [*a.posonlyargs, *a.args]
        defaults: dict[str, ast.expr] = {}
        for arg, d in zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True):
            defaults[arg.arg] = d
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if d is not None:
                defaults[arg.arg] = d
        out = [Param(x.arg, defaults.get(x.arg), dotted(x.annotation) or unparse(x.annotation, 80)
                     if getattr(x, "annotation", None) is not None else "")
               for x in (*pos, *a.kwonlyargs)]
        out += [Param(x.arg) for x in (a.vararg, a.kwarg) if x is not None]
        self._params[key] = out
        return out

    def settings_kind(self, cls: str) -> str | None:
        """``settings`` (pydantic BaseSettings: env-driven), ``model``, ``dataclass`` or None for class `cls`."""
        node = self.classes.get(cls)
        if node is None:
            return None
        bases = [b.rsplit(".", 1)[-1] for b in self.class_bases.get(cls, [])]
        if any(b in ("BaseSettings",) or b.endswith("Settings") for b in bases):
            return "settings"
        if any(b in ("BaseModel", "TypedDict", "NamedTuple") for b in bases):
            return "model"
        if any((dotted(d.func) if isinstance(d, ast.Call) else dotted(d)) in ("dataclass", "dataclasses.dataclass",
                                                                                "attr.s", "attrs.define", "define")
               for d in node.decorator_list):
            return "dataclass"
        for b in bases:  # a subclass of a settings class of the same module
            if b in self.classes and b != cls:
                inner = self.settings_kind(b)
                if inner:
                    return inner
        return None

    def env_prefix(self, cls: str) -> str:
        """The `env_prefix` of a settings class (`model_config = SettingsConfigDict(env_prefix=...)`, `Config`)."""
        node = self.classes.get(cls)
        if node is None:
            return ""
        for sub in ast.walk(node):
            if isinstance(sub, ast.keyword) and sub.arg == "env_prefix" and isinstance(sub.value, ast.Constant):
                return str(sub.value.value)
            if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "env_prefix"
                                                   for t in sub.targets) and isinstance(sub.value, ast.Constant):
                return str(sub.value.value)
        return ""

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
                for sub in walk_body(item.body):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        for t in targets:
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                                    and t.value.id == "self" and sub.value is not None:
                                out[t.attr].append((item, sub.value))
        self._self_attrs[cls] = dict(out)
        return self._self_attrs[cls]


def load_module(project: C.Project, rel: str, defines: str | None = None, kind: str = "",
                any_of: tuple[str, ...] = ()) -> PyModule | None:
    """The indexed module of a scanned file (cached per process), or None when it cannot be parsed.

    With `defines`, the caller only wants the module if it defines that top-level name (`kind`
    "class", "def" or "" for any binding, such as a constant): a module whose text cannot hold
    such a definition is not parsed and None is returned, which the caller treats as it treats a
    module without the name (parsing is most of a lookup's cost, and most lookups miss). With
    `any_of`, likewise a module whose text holds none of these identifiers (a class whose bases
    must be one of them)."""
    key = ("py", rel)
    if key in project.cache:
        return project.cache[key]
    gated = defines is not None or bool(any_of)
    lacks = ("py-lacks", rel, defines, kind, any_of)
    if gated and lacks in project.cache:
        return None
    mod = None
    text = project.read_text(rel)
    # (identifiers are NFKC-normalised by the parser: the text gates hold for ASCII sources only)
    if text is not None and gated and text.isascii() and not rel.lower().endswith(".ipynb") and (
            (defines is not None and not _may_define(text, defines, kind))
            or (any_of and not any(word in text for word in any_of))):
        project.cache[lacks] = True
        return None
    if text is not None:
        if rel.lower().endswith(".ipynb"):
            from ragdiag.codescan.notebook import notebook_source

            text = notebook_source(text)[0]
        try:
            mod = PyModule(project, rel, ast.parse(text, filename=rel))
        except (SyntaxError, ValueError, RecursionError):
            mod = None
    project.cache[key] = mod
    return mod


def _may_define(text: str, name: str, kind: str) -> bool:
    """Could `text` define `name` (as a class, a function, or at all)? A sound, cheap over-approximation:
    a `class`/`def` statement needs the keyword before the name (whitespace or line continuations
    between), and any other binding needs the name as a whole word."""
    word = re.escape(name)
    if kind in ("class", "def"):
        return re.search(rf"\b{kind}[\s\\]+{word}(?!\w)", text) is not None
    return re.search(rf"(?<!\w){word}(?!\w)", text) is not None
