"""JavaScript / TypeScript modules as the scanner indexes them (tree-sitter, never run).

`JSModule` is the JS/TS `ModuleIndex`: top-level constants, functions and
class methods (also exported), imports of scanned siblings (relative paths
resolved to files), and for a function its local bindings (with the
conditional block they sit in), item stores and parameters with defaults.
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import Local, ModuleIndex, Param, Store

FUNC_TYPES = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                        "function", "arrow_function", "method_definition", "generator_function"})
UNWRAP_TYPES = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression",
                          "non_null_expression", "type_assertion", "await_expression"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "`": "`", "$": "$", "0": "\0"}

_PARSERS: dict[str, Any] = {}



def parser(rel: str):
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


def text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def line(node: Any) -> int:
    return node.start_point[0] + 1


def short(node: Any, limit: int = 240) -> str:
    t = " ".join(text(node).split())
    return t if len(t) <= limit else t[: limit - 3] + "..."


def field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name) if node is not None else None


def unwrap(node: Any) -> Any:
    while node is not None and node.type in UNWRAP_TYPES:
        inner = node.named_children
        node = inner[0] if inner else None
    return node


def args_of(call: Any) -> list[Any]:
    a = field(call, "arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def string_value(node: Any) -> str:
    out = []
    for c in node.named_children:
        if c.type == "string_fragment":
            out.append(text(c))
        elif c.type == "escape_sequence":
            t = text(c)
            out.append(_ESCAPES.get(t[1:2], t[1:]))
    if not node.named_children:
        raw = text(node)
        return raw[1:-1]
    return "".join(out)


def number(text: str) -> int | float | None:
    t = text.replace("_", "")
    try:
        if t.lower().startswith(("0x", "0o", "0b")):
            return int(t, 0)
        return int(t) if re.fullmatch(r"-?\d+", t) else float(t)
    except ValueError:
        return None


def ctor_tag(name: str) -> str | None:
    last = name.rsplit(".", 1)[-1]
    if last == "SearchClient":
        return "SearchClient"
    if last == "QdrantClient":
        return "qdrant"
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


def func_name(node: Any, parent: Any) -> str | None:
    """The name a function node is known by: declaration name, method name, or the variable/key holding it."""
    name = field(node, "name")
    if name is not None:
        return text(name)
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        return text(field(parent, "name"))
    if parent.type == "pair":
        return text(field(parent, "key")).strip("'\"")
    if parent.type in ("assignment_expression", "public_field_definition", "field_definition"):
        target = field(parent, "left") or field(parent, "name") or field(parent, "property")
        return text(target).split(".")[-1] if target is not None else None
    return None




def walk_scope(node: Any):
    """Descendants of a function (or program) not inside nested functions."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        yield n
        if n.type in FUNC_TYPES or n.type == "class_declaration":
            continue
        stack.extend(reversed(n.children))


def walk_all(node: Any):
    """All descendants, callbacks included (a citation filter usually lives in an arrow function)."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def param_names(func: Any) -> list[str]:
    out: list[str] = []
    single = field(func, "parameter")
    if single is not None:
        return [text(single)]
    params = field(func, "parameters")
    if params is None:
        return out
    for p in params.named_children:
        target = p
        if p.type in ("required_parameter", "optional_parameter"):
            target = field(p, "pattern") or p
        if target.type == "assignment_pattern":
            target = field(target, "left") or target
        if target.type == "rest_pattern":
            target = target.named_children[0] if target.named_children else target
        if target.type == "identifier":
            out.append(text(target))
        else:
            for sub in walk_scope(target):
                if sub.type in ("identifier", "shorthand_property_identifier_pattern"):
                    out.append(text(sub))
    return out


class JSModule(ModuleIndex):
    """A parsed JS/TS module's top level (see the module docstring)."""

    def __init__(self, project: C.Project, rel: str, tree: Any) -> None:
        self.project = project
        self.rel = rel
        self.dotted = C.module_name(rel)
        self.root = tree.root_node
        self.constants: dict[str, tuple[Any, int]] = {}
        self.functions: dict[str, Any] = {}
        self.imports: dict[str, tuple[str | None, str]] = {}
        self._locals: dict[int, tuple[dict[str, list[Local]], dict[str, list[Store]]]] = {}
        self._index()

    def _index(self) -> None:
        for stmt in self.root.named_children:
            decl = stmt
            if stmt.type == "export_statement":
                decl = field(stmt, "declaration") or (stmt.named_children[-1] if stmt.named_children else stmt)
            if decl.type in ("lexical_declaration", "variable_declaration"):
                for d in decl.named_children:
                    if d.type != "variable_declarator":
                        continue
                    name = field(d, "name")
                    value = field(d, "value")
                    if name is not None and name.type == "identifier" and value is not None:
                        n = text(name)
                        v = unwrap(value) if value.type != "await_expression" else value
                        if v is not None and v.type in ("arrow_function", "function_expression", "function"):
                            self.functions[n] = v
                        else:
                            self.constants[n] = (value, line(d))
            elif decl.type in ("function_declaration", "generator_function_declaration"):
                name = field(decl, "name")
                if name is not None:
                    self.functions[text(name)] = decl
            elif decl.type == "class_declaration":
                cname = text(field(decl, "name"))
                body = field(decl, "body")
                for m in body.named_children if body is not None else []:
                    if m.type == "method_definition":
                        self.functions[f"{cname}.{text(field(m, 'name'))}"] = m
            elif stmt.type == "import_statement":
                self._import(stmt)

    def _import(self, stmt: Any) -> None:
        source = field(stmt, "source")
        spec = string_value(source) if source is not None else ""
        target = self._resolve_path(spec)
        for clause in stmt.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.imports[text(part)] = (target, "default")
                elif part.type == "namespace_import":
                    ident = [c for c in part.named_children if c.type == "identifier"]
                    if ident:
                        self.imports[text(ident[0])] = (target, "*")
                elif part.type == "named_imports":
                    for s in part.named_children:
                        if s.type != "import_specifier":
                            continue
                        name = text(field(s, "name"))
                        alias = field(s, "alias")
                        self.imports[text(alias) if alias is not None else name] = (target, name)

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

    def locals_of(self, func: Any) -> tuple[dict[str, list[Local]], dict[str, list[Store]]]:
        """(bindings, item stores) of the locals of `func` (not of functions nested in it), sorted by line."""
        key = func.id if hasattr(func, "id") else id(func)
        cached = self._locals.get(key)
        if cached is not None:
            return cached
        out: dict[str, list[Local]] = {}
        stores: dict[str, list[Store]] = {}
        body = field(func, "body") or func
        stack: list[tuple[Any, tuple[int, int] | None]] = [(c, None) for c in reversed(body.children)]
        while stack:
            n, block = stack.pop()
            t = n.type
            if t == "variable_declarator":
                name = field(n, "name")
                value = field(n, "value")
                if name is not None and name.type == "identifier":
                    out.setdefault(text(name), []).append(
                        Local(line(n), "assign" if value is not None else "other", value, block))
                elif name is not None and name.type == "array_pattern" and _is_state_hook(value):
                    first = next((c for c in name.named_children if c.type == "identifier"), None)
                    if first is not None:
                        out.setdefault(text(first), []).append(Local(line(n), "assign", value, block))
                elif name is not None:
                    for sub in walk_scope(name):
                        if sub.type in ("identifier", "shorthand_property_identifier_pattern"):
                            out.setdefault(text(sub), []).append(Local(line(n), "other", None, block))
            elif t == "assignment_expression":
                left = field(n, "left")
                if left is not None and left.type == "identifier":
                    out.setdefault(text(left), []).append(Local(line(n), "assign", field(n, "right"), block))
                elif left is not None and left.type in ("member_expression", "subscript_expression"):
                    obj = field(left, "object")
                    if obj is not None and obj.type == "identifier":
                        stores.setdefault(text(obj), []).append(Store(line(n), self._store_key(left), field(n, "right")))
            elif t == "augmented_assignment_expression":
                left = field(n, "left")
                if left is not None and left.type == "identifier":
                    out.setdefault(text(left), []).append(Local(line(n), "aug", n, block))
            elif t in ("for_in_statement",):
                left = field(n, "left")
                if left is not None:
                    for sub in [left, *walk_scope(left)]:
                        if sub.type == "identifier":
                            out.setdefault(text(sub), []).append(Local(line(n), "other", None, block))
            if t in FUNC_TYPES or t == "class_declaration":
                continue
            inner = (line(n), n.end_point[0] + 1) if t in _BLOCK_TYPES else block
            stack.extend((c, inner) for c in reversed(n.children))
        for v in out.values():
            v.sort(key=lambda e: e.line)
        for s in stores.values():
            s.sort(key=lambda e: e.line)
        self._locals[key] = (out, stores)
        return out, stores

    @staticmethod
    def _store_key(left: Any) -> str | None:
        if left.type == "member_expression":
            return text(field(left, "property"))
        idx = field(left, "index")
        if idx is not None and idx.type == "string":
            return string_value(idx)
        if idx is not None and idx.type == "number":
            return text(idx)
        return None

    def params_of(self, func: Any) -> list[Param]:
        """Parameters of a function with their default nodes (`x = 5`, TS `x: number = 5`)."""
        single = field(func, "parameter")
        if single is not None:
            return [Param(text(single))]
        params = field(func, "parameters")
        out: list[Param] = []
        if params is None:
            return out
        for p in params.named_children:
            target, default, ann = p, None, ""
            if p.type in ("required_parameter", "optional_parameter"):
                target = field(p, "pattern") or p
                default = field(p, "value")
                t = field(p, "type")
                ann = text(t).lstrip(": ").strip() if t is not None else ""
            if target.type == "assignment_pattern":
                default = field(target, "right")
                target = field(target, "left") or target
            if target.type == "rest_pattern":
                target = target.named_children[0] if target.named_children else target
            if target.type == "identifier":
                out.append(Param(text(target), default, ann))
            else:
                for sub in walk_scope(target):
                    if sub.type in ("identifier", "shorthand_property_identifier_pattern"):
                        out.append(Param(text(sub)))
        return out


def _is_state_hook(value: Any) -> bool:
    """`useState(x)` / `React.useState<T>(x)` / `useRef(x)`: the first element is the initial value."""
    value = unwrap(value)
    if value is None or value.type != "call_expression":
        return False
    return text(field(value, "function")).rsplit(".", 1)[-1] in ("useState", "useRef", "signal", "ref")


#: Statements whose body runs conditionally (a local assigned there may not hold after them).
_BLOCK_TYPES = frozenset({"if_statement", "else_clause", "for_statement", "for_in_statement", "while_statement",
                          "do_statement", "catch_clause", "switch_case", "switch_default", "ternary_expression"})


def load_module(project: C.Project, rel: str) -> JSModule | None:
    key = ("js", rel)
    if key in project.cache:
        return project.cache[key]
    mod = None
    source = project.read_text(rel)
    if source is not None:
        try:
            mod = JSModule(project, rel, parser(rel).parse(source.encode("utf-8")))
        except Exception:  # noqa: BLE001 - an unreadable sibling only stops resolution
            mod = None
    project.cache[key] = mod
    return mod

