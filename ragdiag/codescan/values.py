"""The resolved-value model both language scanners share: `Val` (internal) and its export to `ResolvedValue`.

A `Val` is an expression as far as static analysis resolved it. Besides the
value it carries where the value comes from (`source`), the file:line of the
definition or default it was read from (`prov`) and, for a default, what can
override it at run time (`override`: ``env:TOP_K``, ``request:overrides.top``,
``parameter:k``, ``settings:Settings.top_k``...).
"""

from __future__ import annotations

import re
from typing import Any

from ragdiag.codescan.model import ResolvedValue

# The placeholder an unresolved part of a string is rendered as.
PLACEHOLDER_RE = re.compile(r"\$?\{[^{}]*\}")


def placeholder(expr: str, lang: str) -> str:
    return "${" + expr + "}" if lang != "python" else "{" + expr + "}"


class Val:
    """An expression as far as static analysis resolved it (internal, language-neutral).

    kind: ``scalar`` (value is a Python scalar; for a partially known string
    `value` is the text with placeholders and `resolved` False), ``dict``
    (`items`), ``list`` (`elems`), ``call`` (`call`, `kwargs` for known
    constructors), ``unknown``. `node`/`ctx` point at the expression as
    written, so scanners can name the variable behind a value.
    """

    __slots__ = ("kind", "value", "resolved", "source", "expr", "fstring", "vars", "items", "elems",
                 "call", "kwargs", "args", "node", "ctx", "builder", "open", "prov", "override")

    def __init__(self, kind: str, value: Any = None, resolved: bool = False, source: str = "",
                 expr: str = "", *, fstring: bool = False, vars: tuple[str, ...] = (),
                 items: dict[str, Val] | None = None, elems: list[Val] | None = None,
                 call: str | None = None, kwargs: dict[str, Val] | None = None,
                 args: list[Val] | None = None, node: Any = None, ctx: Any = None,
                 builder: str | None = None, open: bool = False, prov: str = "", override: str = "") -> None:
        self.kind = kind
        self.value = value
        self.resolved = resolved
        self.source = source
        self.expr = expr
        self.fstring = fstring
        self.vars = vars
        self.items = items
        self.elems = elems
        self.call = call
        self.kwargs = kwargs
        self.args = args
        self.node = node
        self.ctx = ctx
        self.builder = builder
        self.open = open
        self.prov = prov
        self.override = override

    def copy(self, **changes: Any) -> Val:
        new = Val.__new__(Val)
        for name in Val.__slots__:
            setattr(new, name, getattr(self, name))
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    @property
    def is_str(self) -> bool:
        return self.kind == "scalar" and isinstance(self.value, str)

    def get(self, key: str) -> Val | None:
        if self.kind == "dict" and self.items is not None:
            return self.items.get(key)
        if self.kind == "call" and self.kwargs is not None:
            return self.kwargs.get(key)
        return None

    def __repr__(self) -> str:  # debugging aid
        return f"Val({self.kind}, {self.value!r}, resolved={self.resolved}, source={self.source!r})"


def lit(value: Any, source: str = "literal", node: Any = None, ctx: Any = None, expr: str = "") -> Val:
    return Val("scalar", value, True, source, expr, node=node, ctx=ctx)


def unknown(source: str, expr: str = "", node: Any = None, ctx: Any = None) -> Val:
    return Val("unknown", None, False, source, expr, node=node, ctx=ctx)


def plain(v: Val) -> Any:
    """A JSON-safe Python value for `v` (unknown parts as None)."""
    if v.kind == "scalar":
        return v.value
    if v.kind == "dict":
        return {k: plain(i) for k, i in (v.items or {}).items()}
    if v.kind == "list":
        return [plain(e) for e in (v.elems or [])]
    if v.kind == "call" and v.kwargs is not None:
        return {"call": v.call, **{k: plain(i) for k, i in v.kwargs.items()}}
    return None


def export(v: Val) -> ResolvedValue:
    return ResolvedValue(value=plain(v), resolved=bool(v.resolved), source=v.source or "unknown",
                         expression=v.expr, from_fstring=v.fstring, fstring_vars=tuple(v.vars),
                         provenance=v.prov, override=v.override)


def text_of(v: Val, lang: str) -> tuple[str, bool]:
    """(string form, fully known) of `v` when embedded in a string."""
    if v.kind == "scalar":
        value = v.value
        if isinstance(value, str):
            return value, v.resolved
        if isinstance(value, bool):
            return (("true" if value else "false") if lang != "python" else str(value)), v.resolved
        if value is None:
            return ("None" if lang == "python" else "null"), v.resolved
        return str(value), v.resolved
    return placeholder(v.expr or "?", lang), False


def all_resolved(vals: list[Val]) -> bool:
    return all(v.resolved for v in vals)


def make_list(elems: list[Val], node: Any = None, ctx: Any = None, expr: str = "") -> Val:
    return Val("list", None, all_resolved(elems), "literal", expr, elems=elems, node=node, ctx=ctx)


def make_dict(items: dict[str, Val], *, open: bool = False, node: Any = None, ctx: Any = None,
              expr: str = "") -> Val:
    return Val("dict", None, all_resolved(list(items.values())) and not open, "literal", expr,
               items=items, node=node, ctx=ctx, open=open)


def concat(parts: list[Val], lang: str, *, fstring: bool, source: str, expr: str = "",
           node: Any = None, ctx: Any = None, vars: tuple[str, ...] = ()) -> Val:
    """A string Val made of parts (literal or not); `vars` are the interpolated expressions."""
    texts = []
    resolved = True
    all_vars = list(vars)
    for p in parts:
        t, ok = text_of(p, lang)
        texts.append(t)
        resolved = resolved and ok
        all_vars.extend(p.vars)
        if p.fstring:
            fstring = True
    return Val("scalar", "".join(texts), resolved, source, expr, fstring=fstring,
               vars=tuple(dict.fromkeys(all_vars)), node=node, ctx=ctx)


def combine(vals: list[Val], source: str) -> Val:
    """One Val standing for the same parameter over several vector queries."""
    if len(vals) == 1 or (all(v.kind == "scalar" and v.resolved for v in vals)
                          and len({repr(v.value) for v in vals}) == 1):
        inner = vals[0].source
        return vals[0].copy(source=f"{source} {inner}" if inner and inner != "literal" else source)
    return Val("list", None, all_resolved(vals), source, elems=vals)

