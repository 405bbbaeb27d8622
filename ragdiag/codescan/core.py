"""The resolution core both language scanners share, and the contract a language scanner fulfils.

A language scanner (`LanguageScanner`) turns one file's text into a
`FileResult`. It brings three language-specific pieces:

* a module index (`ModuleIndex`): the top-level constants, imports,
  functions and classes of a parsed module, and for a function its local
  bindings (`Local`), item stores (`Store`) and parameters (`Param`);
* a resolver (a subclass of `Resolver`) that knows the syntax: literals,
  strings, operators, containers, calls;
* the site finders (search calls, LLM calls, security strings...).

What is the same in every language lives here, once: the guarded entry of
resolution (depth limit, cycle detection), how a name is looked up (the
bindings of a helper being followed, the enclosing functions' locals with
their reassignment and conditional-block rules, parameters and their
defaults, module constants, imports), item stores applied to a dict, the
binding of a helper's parameters when it is followed, and the provenance
(`file:line`) every value read from a definition carries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import SecurityFilterSite
from ragdiag.codescan.values import Val, lit, unknown


class Ctx:
    """Where an expression is resolved: its module, enclosing functions (innermost first), class, bindings."""

    __slots__ = ("mod", "funcs", "cls", "bindings", "depth")

    def __init__(self, mod: Any, funcs: tuple[Any, ...] = (), cls: str | None = None,
                 bindings: dict[str, Val] | None = None, depth: int = 0) -> None:
        self.mod = mod
        self.funcs = funcs
        self.cls = cls
        self.bindings = bindings
        self.depth = depth

    @classmethod
    def of(cls, mod: Any, func: Any = None, klass: str | None = None, bindings: dict[str, Val] | None = None,
           depth: int = 0) -> Ctx:
        return cls(mod, (func,) if func is not None else (), klass, bindings, depth)

    @property
    def func(self) -> Any:
        return self.funcs[0] if self.funcs else None


@dataclass(frozen=True)
class Local:
    """One binding of a local name: `kind` is ``assign`` (value known), ``aug`` or ``other`` (loop, with...)."""

    line: int
    kind: str
    value: Any
    block: tuple[int, int] | None = None


@dataclass(frozen=True)
class Store:
    """An item store into a local (`d["k"] = v`, `d.update(...)`): key None means "some unknown key"."""

    line: int
    key: str | None
    value: Any


@dataclass(frozen=True)
class Param:
    """A function parameter and its default (a syntax node, or None)."""

    name: str
    default: Any = None
    annotation: str = ""


class ModuleIndex(ABC):
    """A parsed module's top level, as both languages index it."""

    project: C.Project
    rel: str
    dotted: str
    constants: dict[str, tuple[Any, int]]
    functions: dict[str, Any]

    @abstractmethod
    def locals_of(self, func: Any) -> tuple[dict[str, list[Local]], dict[str, list[Store]]]:
        """(bindings, stores) of the locals of `func`, each list sorted by line."""

    @abstractmethod
    def params_of(self, func: Any) -> list[Param]:
        """The parameters of `func`, in order."""


class Resolver(ABC):
    """Resolves expressions to `Val`s; the language subclass implements `_resolve` and the syntax hooks."""

    MAX_DEPTH = 24
    MAX_CALL_DEPTH = 3
    #: The language tag used for placeholders (``python`` or ``js``).
    lang: ClassVar[str] = "python"
    #: How a local assigned in a block that does not enclose the use is labelled.
    conditional_label: ClassVar[str] = "conditional"

    def __init__(self, project: C.Project) -> None:
        self.project = project
        self.depth = 0
        self.active: set[tuple[Any, ...]] = set()

    # -- syntax hooks ------------------------------------------------------------------------------
    @abstractmethod
    def _resolve(self, node: Any, ctx: Ctx) -> Val:
        """The language's dispatch on the node type."""

    @abstractmethod
    def text(self, node: Any) -> str:
        """The expression as written (shortened)."""

    @abstractmethod
    def line(self, node: Any) -> int:
        """The 1-based line of `node`."""

    @abstractmethod
    def imported(self, name: str, ctx: Ctx, node: Any) -> Val:
        """The value of a name imported into `ctx.mod` (a constant of a scanned sibling, else unknown)."""

    def is_param_of(self, ctx: Ctx, func: Any, name: str) -> Param | None:
        for p in ctx.mod.params_of(func):
            if p.name == name:
                return p
        return None

    # -- the guarded entry -------------------------------------------------------------------------
    def resolve(self, node: Any, ctx: Ctx) -> Val:
        if node is None:
            return unknown("missing")
        if self.depth > self.MAX_DEPTH:
            return unknown("too deep", self.text(node), node, ctx)
        self.depth += 1
        try:
            v = self._resolve(node, ctx)
        except RecursionError:
            v = unknown("too deep", "", node, ctx)
        finally:
            self.depth -= 1
        if v.node is not node and v.kind != "call":
            v = v.copy(node=node, ctx=ctx, expr=self.text(node))
        elif not v.expr:
            v.expr = self.text(node)
        return v

    def guarded(self, key: tuple[Any, ...], node: Any, ctx: Ctx, thunk: Any, source: str) -> Val:
        """`thunk()` unless `key` is already being resolved (a cycle): then unknown(`source`)."""
        if key in self.active:
            return unknown(source, self.text(node) if node is not None else "", node, ctx)
        self.active.add(key)
        try:
            return thunk()
        finally:
            self.active.discard(key)

    def where(self, mod: Any, node: Any) -> str:
        """`file:line` of `node` in module `mod`."""
        try:
            return f"{mod.rel}:{self.line(node)}"
        except (AttributeError, TypeError):
            return mod.rel

    # -- names ---------------------------------------------------------------------------------------
    def name(self, name: str, ctx: Ctx, line: int, node: Any) -> Val:
        """A name: a helper's binding, a local of an enclosing function, a parameter, a constant, an import."""
        if ctx.bindings is not None and name in ctx.bindings:
            return ctx.bindings[name]
        mod = ctx.mod
        for i, func in enumerate(ctx.funcs):
            assigns, stores = mod.locals_of(func)
            entries = [e for e in assigns.get(name, ()) if e.line < line]
            if entries:
                return self._local(name, entries, stores.get(name, ()), Ctx(mod, ctx.funcs[i:], ctx.cls,
                                                                             ctx.bindings, ctx.depth),
                                   line, node, ctx)
            param = self.is_param_of(ctx, func, name)
            if param is not None:
                return self.parameter(param, mod, func, node, ctx)
        if name in mod.constants:
            return self.constant(mod, name, node, ctx)
        v = self.imported(name, ctx, node)
        if v.kind != "unknown" or v.source != f"name:{name}":
            return v
        return unknown(f"name:{name}", name, node, ctx)

    def _local(self, name: str, entries: list[Local], stores: Any, inner: Ctx, line: int, node: Any,
               ctx: Ctx) -> Val:
        last_assign = None
        for i in range(len(entries) - 1, -1, -1):
            if entries[i].kind == "assign":
                last_assign = i
                break
        if last_assign is None or last_assign != len(entries) - 1:
            return self._branches(unknown(f"local:{name} (reassigned)", name, node, ctx), name, entries, inner)
        entry = entries[last_assign]
        if entry.block is not None and not entry.block[0] <= line <= entry.block[1]:
            return self._branches(unknown(f"local:{name} ({self.conditional_label})", name, node, ctx), name,
                                  entries, inner)
        key = ("local", id(inner.funcs[0]), name, entry.line, id(ctx.bindings))
        v = self.guarded(key, node, ctx, lambda: self.resolve(entry.value, inner), f"local:{name}")
        later = [s for s in stores if entry.line < s.line < line]
        if later and v.kind == "dict":
            v = self.apply_stores(v, later, inner)
        elif later:
            v = unknown(f"local:{name} (modified)", name, node, ctx)
        return v.copy(source=f"local:{name}") if v.source in ("literal", "") else v

    def _branches(self, v: Val, name: str, entries: list[Local], inner: Ctx) -> Val:
        """An unresolvable local assigned in several branches: still say whether some branch interpolates."""
        vars_: list[str] = []
        texts: list[str] = []
        for e in entries:
            if e.kind != "assign" or e.value is None:
                continue
            key = ("branch", id(inner.funcs[0]), name, e.line)
            b = self.guarded(key, e.value, inner, lambda e=e: self.resolve(e.value, inner), f"local:{name}")
            if b.fstring:
                vars_.extend(b.vars)
            if b.is_str:
                texts.append(b.value)
            elif not (b.kind == "scalar" and b.resolved and b.value is None):
                texts.append("\0")  # a branch that is neither a string nor None
        if len(texts) == 1 and texts[0] != "\0":  # one string branch, the others None: that string, partly
            v = v.copy(kind="scalar", value=texts[0])
        if vars_:
            return v.copy(fstring=True, vars=tuple(dict.fromkeys(vars_)))
        return v

    def parameter(self, param: Param, mod: Any, func: Any, node: Any, ctx: Ctx) -> Val:
        """A parameter: its default when it has one (overridable by the caller), else unknown."""
        if param.default is None:
            return unknown(f"parameter:{param.name}", param.name, node, ctx)
        key = ("default", mod.rel, id(func), param.name)
        v = self.guarded(key, node, ctx, lambda: self.resolve(param.default, Ctx(mod)), f"parameter:{param.name}")
        if not v.resolved or v.kind not in ("scalar", "list", "dict") or (v.kind == "scalar" and v.value is None):
            return unknown(f"parameter:{param.name}", param.name, node, ctx).copy(override=f"parameter:{param.name}")
        return v.copy(source=f"default:{param.name}", prov=v.prov or self.where(mod, param.default),
                      override=v.override or f"parameter:{param.name}")

    def constant(self, mod: Any, name: str, node: Any, ctx: Ctx, source: str | None = None) -> Val:
        """A module-level constant of `mod` (followed to its definition, with provenance)."""
        value, line = mod.constants[name]
        key = ("const", mod.rel, name)
        v = self.guarded(key, node, ctx, lambda: self.resolve(value, Ctx(mod)), f"constant:{name}")
        tag = source or f"constant:{name}"
        if v.source.startswith(("import:", "constant:", "env:", "settings:")) and source is None:
            return v if v.prov else v.copy(prov=f"{mod.rel}:{line}")
        return v.copy(source=tag, prov=v.prov or f"{mod.rel}:{line}")

    # -- dict stores -----------------------------------------------------------------------------------
    def apply_stores(self, v: Val, stores: Any, ctx: Ctx) -> Val:
        items = dict(v.items or {})
        open_ = v.open
        for s in stores:
            if s.key is None or s.value is None:
                open_ = True
            elif s.key == "**":
                extra = self.resolve(s.value, ctx)
                if extra.kind == "dict":
                    items.update(extra.items or {})
                else:
                    open_ = True
            else:
                items[s.key] = self.resolve(s.value, ctx)
        return C.make_dict(items, open=open_, node=v.node, ctx=v.ctx).copy(source=v.source, builder=v.builder)

    # -- helpers followed into ---------------------------------------------------------------------------
    def bind_call(self, mod: Any, fn: Any, positional: list[Any], keywords: dict[str, Any], ctx: Ctx,
                  skip_first: bool = False) -> dict[str, Val]:
        """Bindings of `fn`'s parameters for a call: arguments, then defaults, then unknown."""
        params = mod.params_of(fn)
        if skip_first and params and params[0].name in ("self", "cls"):
            params = params[1:]
        bindings: dict[str, Val] = {}
        for p, a in zip(params, positional, strict=False):
            if a is None:  # a starred / spread argument: the rest is unknown
                break
            bindings[p.name] = self.resolve(a, ctx)
        for k, a in keywords.items():
            bindings[k] = self.resolve(a, ctx)
        for p in params:
            if p.name in bindings:
                continue
            if p.default is not None:
                bindings[p.name] = self.resolve(p.default, Ctx(mod)).copy(
                    source=f"default:{p.name}", prov=self.where(mod, p.default))
            else:
                bindings[p.name] = unknown(f"parameter:{p.name}", p.name)
        return bindings

    def follow(self, mod: Any, qual: str, fn: Any, returns: list[Any], bindings: dict[str, Val], node: Any,
               ctx: Ctx) -> Val:
        """The value a helper returns, when it has exactly one return; tagged with the helper as builder."""
        name = f"{mod.dotted}:{qual}"
        if len(returns) != 1:
            return Val("call", None, False, f"call:{qual}", self.text(node), call=qual, node=node, ctx=ctx,
                       builder=name)
        cls = qual.split(".")[0] if "." in qual else None
        v = self.guarded(("call", mod.rel, qual), node, ctx,
                         lambda: self.resolve(returns[0], Ctx(mod, (fn,), cls, bindings, ctx.depth + 1)),
                         f"call:{qual}")
        return v.copy(builder=name, source=f"builder:{qual}") if v.kind == "dict" else v.copy(builder=name)

    # -- env defaults and `a or default` -------------------------------------------------------------------
    @staticmethod
    def env_default(var: str, default: Val | None, expr: str, node: Any, ctx: Ctx, where: str) -> Val:
        """`os.getenv("X", "3")`: the default, overridable by the environment; without one, unknown."""
        if default is None or not default.resolved or default.kind != "scalar" or default.value is None:
            return unknown(f"env:{var}", expr, node, ctx).copy(override=f"env:{var}")
        return default.copy(source=f"env:{var}", prov=where, override=f"env:{var}", node=node, ctx=ctx, expr=expr)

    @staticmethod
    def when(a: Val, b: Val, test: str, expr: str, node: Any, ctx: Ctx, where: str) -> Val | None:
        """`c ? 50 : undefined`, `50 if c else None`: the value when it is sent at all (None otherwise)."""
        for value, other in ((a, b), (b, a)):
            if value.resolved and value.kind == "scalar" and value.value is not None and other.resolved \
                    and other.kind == "scalar" and other.value is None:
                return value.copy(source=f"when:{test}"[:120], prov=value.prov or where,
                                  override=value.override or f"condition:{test}"[:160], node=node, ctx=ctx, expr=expr)
        return None

    @staticmethod
    def with_fallback(primary: Val, fallback: Val, expr: str, node: Any, ctx: Ctx, where: str) -> Val:
        """`x or 3`, `x ?? 3`, `x if x else 3`: the fallback is the default; `x` can override it."""
        what = primary.expr or "?"
        kind = "request" if (C.is_request_expr(what) or C.CLIENT_DATA_RE.search(what)) else (
            primary.override.split(":", 1)[0] if primary.override else "expression")
        if primary.resolved or not fallback.resolved or fallback.kind != "scalar" or fallback.value is None:
            return unknown("conditional", expr, node, ctx).copy(
                override=primary.override or (f"{kind}:{what}"[:160] if kind == "request" else ""))
        return fallback.copy(source=f"fallback:{what}"[:120], prov=fallback.prov or where,
                             override=f"{kind}:{what}"[:160], node=node, ctx=ctx, expr=expr)


def security_filter_site(file: str, line: int, function: str, expression: str, text: str, vars: tuple[str, ...],
                         related: dict[str, list[str]], fields: tuple[str, ...], language: str,
                         escaped_call: bool = False) -> SecurityFilterSite:
    """A `SecurityFilterSite` from a resolved filter string, the same way in every language.

    `related` maps each interpolated expression to the texts it comes from
    (itself, the value it was assigned); an expression counts as escaped when
    one of them passes through an escaping helper.
    """
    texts = [t for ts in related.values() for t in ts]
    interpolated = bool(vars)
    escaped = escaped_call or all(any(C.ESCAPE_TEXT_RE.search(t) for t in ts) for ts in related.values())
    return SecurityFilterSite(
        file=file, line=line, function=function or "<module>", expression=expression,
        uses_search_in="search.in(" in text, escaped=escaped,
        from_identity=any(C.is_identity_expr(t) for t in texts) if interpolated else None,
        from_request=any(C.is_request_expr(t) for t in texts) if interpolated else None,
        fstring=interpolated and not escaped_call, fields=fields, language=language,
        from_llm=any(C.LLM_ARG_RE.search(t) for t in texts) if interpolated else None)


def security_fields(literal: str, source: str) -> tuple[str, ...]:
    """Security fields a filter string filters on: named in its literal text, or held in a variable."""
    found = {(m.group(1) or m.group(2)) for m in C.SECURITY_FILTER_RE.finditer(literal)}
    found |= {"{" + m.group(1).strip() + "}" for m in C.VAR_FIELD_FILTER_RE.finditer(source)}
    found |= {name for _, name in C.identity_clauses(source)}
    return tuple(sorted(found))


class LanguageScanner(ABC):
    """The contract of a language scanner: which files it reads, and what one file yields."""

    #: Short name (``python``, ``js``, ``notebook``).
    name: ClassVar[str] = ""
    #: Lower-case file suffixes it reads.
    suffixes: ClassVar[tuple[str, ...]] = ()

    def accepts(self, rel: str) -> bool:
        return rel.lower().endswith(self.suffixes)

    @abstractmethod
    def scan(self, project: C.Project, rel: str, text: str) -> C.FileResult:
        """Scan one file (already read as text); never executes it. May raise: the walker catches it."""


_REGISTRY: list[LanguageScanner] = []


def register(scanner: LanguageScanner) -> LanguageScanner:
    """Add a language scanner (the walker asks them in the order registered)."""
    _REGISTRY.append(scanner)
    return scanner


def scanners() -> tuple[LanguageScanner, ...]:
    if not _REGISTRY:
        # importing the language modules registers them
        from ragdiag.codescan import js_scan, notebook, python_scan  # noqa: F401
    return tuple(_REGISTRY)


def scanner_for(rel: str) -> LanguageScanner | None:
    for s in scanners():
        if s.accepts(rel):
            return s
    return None


__all__ = ["Ctx", "LanguageScanner", "Local", "ModuleIndex", "Param", "Resolver", "Store", "lit", "register",
           "scanner_for", "scanners", "security_fields", "security_filter_site"]
