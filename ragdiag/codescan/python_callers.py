"""Values a function's callers hand it: a wrapper's URL, body or headers resolved where it is called.

An application's own wrapper (`async def search(self, index, body, *, token=None)` posting
`body` to `/docs/search`) shows at its call site only `parameter:body`: the request's `top`,
filter and header live in the callers (`self.search(index, body=search_body, token=t)`). This
mixin finds the calls of a function in the same module (a method through `self.`/`cls.`, a
module function by its name) and gives, per caller, a resolution context whose bindings are
the caller's arguments, so that the wrapper's own expressions resolve as that caller sends
them. Callers in other modules are not followed (the call graph matches by name only).

`merge_variants` folds the per-caller parameters of one site into one value per parameter:
the same in every caller is resolved (provenance: the callers); values that differ between
callers are kept apart in the expression (``3 from search_knowledge_base (search.py:706); 1
from is_index_empty (search.py:612)``) with source ``callers``: known per caller, not one
value, so no check treats it as a single known value.
"""

from __future__ import annotations

import ast
from typing import Any

from ragdiag.codescan.core import Ctx
from ragdiag.codescan.python_index import walk_body
from ragdiag.codescan.values import Val, plain

__all__ = ["CallerValues", "merge_variants"]


class CallerValues:
    """Callers of a function in the same module and their argument bindings (mixed into `PyFileScan`)."""

    def _calls_by_name(self) -> dict[str, list[tuple[ast.Call, str, Any, str | None]]]:
        """Every call of the module by callee name (one walk, cached): (call, qual, function, class)."""
        cached = self.__dict__.get("_all_calls")
        if cached is not None:
            return cached
        out: dict[str, list[tuple[ast.Call, str, Any, str | None]]] = {}

        def add(nodes: list[ast.AST], qual: str, func: Any, cls: str | None) -> None:
            for n in walk_body(nodes):
                if isinstance(n, ast.Call):
                    f = n.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                    if name:
                        out.setdefault(name, []).append((n, qual, func, cls))

        add(self.mod.tree.body, "", None, None)
        for qual, fn, cls in self.functions:
            add(fn.body, qual, fn, cls)
        self.__dict__["_all_calls"] = out
        return out

    def callers_of(self, func: Any, cls: str | None) -> list[tuple[ast.Call, str, Any, str | None]]:
        """Calls of `func` in this module: `self.f(...)` / `cls.f(...)` inside its class, `f(...)` for a function."""
        if func is None:
            return []
        out = []
        for call, qual, caller, ccls in self._calls_by_name().get(func.name, ()):
            if caller is func:
                continue  # recursion
            f = call.func
            if cls is not None:
                if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        and f.value.id in ("self", "cls") and ccls == cls):
                    continue
            elif not isinstance(f, ast.Name):
                continue
            out.append((call, qual, caller, ccls))
        return out

    def caller_contexts(self, func: Any, cls: str | None) -> list[tuple[Ctx, str, str]]:
        """(context binding `func`'s parameters to a caller's arguments, caller name, caller file:line)."""
        out = []
        for call, qual, caller, ccls in self.callers_of(func, cls)[:8]:
            positional = [None if isinstance(a, ast.Starred) else a for a in call.args]
            keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
            bindings = self.r.bind_call(self.mod, func, positional, keywords, self.ctx(caller, ccls),
                                        skip_first=cls is not None)
            out.append((Ctx(self.mod, (func,), cls, bindings), qual or "<module>", f"{self.rel}:{call.lineno}"))
        return out


def _shown(v: Val) -> str:
    if v.resolved and v.kind in ("scalar", "list", "dict"):
        return repr(plain(v))
    return v.expr or "?"


def merge_variants(variants: list[tuple[dict[str, Val], str, str]]) -> dict[str, Val]:
    """One value per parameter over the callers' variants of a site: (params, caller, caller file:line) each."""
    if len(variants) == 1:
        params, caller, where = variants[0]
        return {k: (v if v.prov else v.copy(prov=where)) for k, v in params.items()}
    out: dict[str, Val] = {}
    names = list(dict.fromkeys(k for params, _c, _w in variants for k in params))
    for name in names:
        vals = [(params.get(name), caller, where) for params, caller, where in variants]
        known = [v for v, _c, _w in vals if v is not None]
        if len(known) == len(vals) and all(v.resolved for v in known) \
                and len({repr(plain(v)) for v in known}) == 1:
            first = known[0]
            out[name] = first.copy(prov=first.prov or ", ".join(w for _v, _c, w in vals))
            continue
        parts = [f"{_shown(v) if v is not None else '<unset>'} from {caller} ({where})" for v, caller, where in vals]
        base = known[0] if known else None
        out[name] = Val("unknown", None, False, "callers", "; ".join(parts)[:300],
                        fstring=any(v.fstring for v in known), vars=tuple(x for v in known for x in v.vars),
                        node=base.node if base is not None else None, ctx=base.ctx if base is not None else None)
    return out
