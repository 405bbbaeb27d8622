"""Take a filter apart and put it back together: fields touched, top-level conjuncts.

Ablation checks ("which clause of the filter removes the relevant document?")
drop one conjunct at a time; `clauses` and `drop_clause` make that exact.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragdiag.odata.ast import (
    And,
    Clause,
    Comparison,
    Expr,
    FieldRef,
    Lambda,
    Not,
    Or,
    SearchIn,
    Target,
    VarRef,
)
from ragdiag.odata.render import render


def fields_of(expr: Expr) -> frozenset[str]:
    """Top-level field names `expr` reads; a lambda variable counts as its collection field."""
    out: set[str] = set()
    _collect(expr, {}, out)
    return frozenset(out)


def _root(target: Target, scope: dict[str, str]) -> str | None:
    if isinstance(target, VarRef):
        return scope.get(target.var)
    return target.path[0]


def _collect(expr: Expr, scope: dict[str, str], out: set[str]) -> None:
    if isinstance(expr, (And, Or)):
        for item in expr.items:
            _collect(item, scope, out)
    elif isinstance(expr, Not):
        _collect(expr.operand, scope, out)
    elif isinstance(expr, (FieldRef, VarRef)):
        root = _root(expr, scope)
        if root is not None:
            out.add(root)
    elif isinstance(expr, (Comparison, SearchIn)):
        root = _root(expr.target, scope)
        if root is not None:
            out.add(root)
    elif isinstance(expr, Lambda):
        root = _root(expr.source, scope)
        if root is not None:
            out.add(root)
        if expr.body is not None and expr.var is not None and root is not None:
            _collect(expr.body, {**scope, expr.var: root}, out)


def _conjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, And):
        return [c for item in expr.items for c in _conjuncts(item)]
    return [expr]


def clauses(expr: Expr) -> tuple[Clause, ...]:
    """The top-level conjuncts (nested top-level `and`s flattened); a non-`and` is one clause."""
    return tuple(Clause(index=i, expr=e, text=render(e), fields=fields_of(e))
                 for i, e in enumerate(_conjuncts(expr)))


def drop_clause(expr: Expr, index: int) -> Expr | None:
    """`expr` without top-level conjunct `index` (as numbered by `clauses`); None if none remain."""
    parts = _conjuncts(expr)
    if not 0 <= index < len(parts):
        raise IndexError(f"clause index {index} out of range: the filter has {len(parts)} clause(s)")
    return conjoin(parts[:index] + parts[index + 1:])


def conjoin(exprs: Iterable[Expr | None]) -> Expr | None:
    """`and` the expressions together (None entries skipped); None when there are none."""
    items: list[Expr] = []
    for e in exprs:
        if e is None:
            continue
        items.extend(e.items if isinstance(e, And) else (e,))
    if not items:
        return None
    return items[0] if len(items) == 1 else And(tuple(items))
