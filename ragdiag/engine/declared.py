"""Every declared value of the same thing, with where it was declared.

An audit can be told one thing three times: the audit config says ``[budgets] context_tokens
= 6000``, the client code says ``MAX_CONTEXT_TOKENS = 4000``, a profile says ``top = 10``
while a call site passes ``top=20``. A check that reads only one of them judges a system
that may not exist. `declared_values(ctx)` collects every declaration with its source
(`Declared`): the config, the code (resolved constants and call-site parameters on the
request path), the profiles; `DeclaredValues.conflicts()` names values that disagree, and
`strictest(name)` is what a check judges (the smallest budget, the smallest ``k``, the
largest ``top``: the one that makes the verdict hardest to pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Declared", "DeclaredValues", "declared_values", "STRICTEST"]

#: how the strictest declaration of each quantity is chosen
STRICTEST: dict[str, str] = {"context_tokens": "min", "vector_k": "min", "top": "max"}
SOURCE_ORDER: dict[str, int] = {"code": 0, "config": 1, "profile": 2}


@dataclass(frozen=True)
class Declared:
    """One declaration: what (`name`), its value, the kind of source and where exactly."""

    name: str
    value: Any
    source: str  # "config" | "code" | "profile"
    where: str

    def to_row(self) -> tuple[Any, ...]:
        return (self.name, self.value, self.source, self.where)


@dataclass(frozen=True)
class DeclaredValues:
    values: tuple[Declared, ...]

    def of(self, name: str) -> list[Declared]:
        return [d for d in self.values if d.name == name]

    def strictest(self, name: str) -> Declared | None:
        items = [d for d in self.of(name) if _number(d.value) is not None]
        if not items:
            return None
        sign = 1.0 if STRICTEST.get(name, "min") == "min" else -1.0
        # on a tie the application's own value (code) is the one named
        return min(items, key=lambda d: (sign * (_number(d.value) or 0.0), SOURCE_ORDER.get(d.source, 9)))

    def conflicts(self) -> list[tuple[str, list[Declared]]]:
        """Quantities whose kinds of source (config, code, profiles) declare different sets of
        values: each with all its declarations."""
        out = []
        for name in dict.fromkeys(d.name for d in self.values):
            items = self.of(name)
            by_source: dict[str, set[Any]] = {}
            for d in items:
                by_source.setdefault(d.source, set()).add(d.value)
            # a conflict: the kinds of source do not declare the same values (a code path sends a
            # k no profile has, the config's budget is not the code's)
            if len(by_source) >= 2 and len({frozenset(v) for v in by_source.values()}) > 1:
                out.append((name, items))
        return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _code_params(scan: Any, name: str) -> list[tuple[Any, str]]:
    """Resolved integer values of call-site parameter `name` on the request path."""
    out = []
    for s in getattr(scan, "search_calls", ()) or ():
        if getattr(s, "site_class", "request") != "request":
            continue
        p = s.params.get(name)
        if p is None or not p.resolved or p.source.startswith("library_default"):
            continue
        if isinstance(p.value, int) and not isinstance(p.value, bool):
            out.append((p.value, f"{s.file}:{s.line}"))
    return out


def declared_values(ctx: Any, *, profiles: Sequence[Any] | None = None) -> DeclaredValues:
    """The declarations of the context budget, the vector k and the top in config, code and profiles."""
    cached = getattr(ctx, "_declared", None)
    if cached is not None and profiles is None:
        return cached
    out: list[Declared] = []
    budgets = getattr(ctx, "budgets", None) or {}
    if budgets.get("context_tokens"):
        out.append(Declared("context_tokens", int(budgets["context_tokens"]), "config", "[budgets] context_tokens"))
    scan = ctx.code_scan() if ctx.has("client_code") else None
    if scan is not None:
        from ragdiag.checks._context_tokens import code_budgets

        b = code_budgets(scan).get("tokens")
        if b is not None:
            out.append(Declared("context_tokens", int(b.value), "code", f"{b.location} {b.name}"))
        out += [Declared("vector_k", v, "code", where) for v, where in _code_params(scan, "k")]
        out += [Declared("top", v, "code", where) for v, where in _code_params(scan, "top")]
    policy = getattr(ctx, "policy", None)
    for p in profiles if profiles is not None else (policy.profiles.values() if policy is not None else ()):
        for i, vq in enumerate(p.vector_queries):
            out.append(Declared("vector_k", vq.k, "profile", f"profile {p.name}, vector query {i + 1}"))
        out.append(Declared("top", p.top, "profile", f"profile {p.name}"))
    result = DeclaredValues(tuple(out))
    if profiles is None:
        try:
            ctx._declared = result
        except AttributeError:
            pass
    return result
