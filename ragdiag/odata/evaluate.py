"""Evaluate a filter against plain records (the local search target's documents).

`compile_filter` turns the tree into nested closures once, so evaluating 100k
records costs a few function calls each rather than a tree walk. Semantics follow
Azure AI Search: missing fields are null; null is unequal to every non-null
constant and fails every range comparison; NaN fails everything except `ne`;
strings compare case-sensitively; date-times compare as instants; a value of the
wrong type (a string compared with a number) simply does not match. Odd record
values never raise; anything unexpected surfaces as FilterError.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from ragdiag.errors import FilterError
from ragdiag.inputs.limits import excerpt
from ragdiag.odata.ast import (
    And,
    BoolLiteral,
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
from ragdiag.odata.parser import parse

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]
# Internal closures take the record and a tuple of bound lambda elements (by depth).
_Fn = Callable[[Any, tuple[Any, ...]], bool]
_Get = Callable[[Any, tuple[Any, ...]], Any]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt,
    "ge": operator.ge, "lt": operator.lt, "le": operator.le,
}
_EPOCH = datetime(1970, 1, 1)
_MICRO = timedelta(microseconds=1)


def compile_filter(expr: Expr | str) -> Predicate:
    """A fast predicate `record -> bool` for `expr` (filter text is parsed first)."""
    if isinstance(expr, str):
        expr = parse(expr)
    fn = _compile(expr, {})

    def run(record: Record) -> bool:
        try:
            return fn(record, ())
        except FilterError:
            raise
        except Exception as exc:  # a safety net: odd values must not escape as random errors
            raise FilterError(f"cannot evaluate filter {excerpt(str(expr))} on this record: "
                              f"{type(exc).__name__}: {excerpt(str(exc))}") from exc

    return run


_compile_cached = lru_cache(maxsize=512)(compile_filter)


def evaluate(expr: Expr | str, record: Record) -> bool:
    """Evaluate one record (compiled predicates are cached per expression)."""
    return _compile_cached(expr)(record)


# ---- value coercion -------------------------------------------------------------------

def _as_number(v: Any) -> int | float | None:
    """v as a real number, or None (bools and strings are not numbers)."""
    t = type(v)
    if t is int or t is float:
        return v
    if v is None or t is bool or t is str:
        return None
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return None
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    return None


def _as_bool(v: Any) -> bool | None:
    if v is True or v is False:
        return v
    if type(v).__name__ == "bool_":  # numpy.bool_
        return bool(v)
    return None


@lru_cache(maxsize=65536)
def _parse_iso_micros(text: str) -> int | None:
    """Microseconds since the epoch for an ISO-8601 string (no zone = UTC), or None."""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return _dt_micros(dt)


def _dt_micros(dt: datetime) -> int:
    offset = dt.utcoffset() or timedelta(0)
    return ((dt.replace(tzinfo=None) - _EPOCH) - offset) // _MICRO


def _as_instant(v: Any) -> int | None:
    if isinstance(v, str):
        return _parse_iso_micros(v) if len(v) <= 64 else None
    if isinstance(v, datetime):
        return _dt_micros(v)
    if isinstance(v, date):
        return _dt_micros(datetime(v.year, v.month, v.day))
    return None


def _elements(v: Any) -> Any:
    """The elements of a collection value; null or a non-collection behaves as empty."""
    t = type(v)
    if t is list or t is tuple:
        return v
    if v is None or isinstance(v, (str, bytes, bytearray, Mapping)):
        return ()
    try:
        return list(v)
    except Exception:
        return ()


def _step(v: Any, key: str) -> Any:
    if type(v) is dict or isinstance(v, Mapping):
        return v.get(key)
    return None


# ---- compilation ----------------------------------------------------------------------

def _getter(target: Target, scope: dict[str, int]) -> _Get:
    if isinstance(target, VarRef):
        idx = scope.get(target.var)
        if idx is None:
            raise FilterError(f"range variable '{target.var}' is used outside its lambda")
        rest = target.path
        if not rest:
            return lambda rec, env: env[idx]
        return _walk(lambda rec, env: env[idx], rest)
    head, rest = target.path[0], target.path[1:]
    base: _Get = lambda rec, env: rec.get(head)  # noqa: E731
    return _walk(base, rest) if rest else base


def _walk(base: _Get, rest: tuple[str, ...]) -> _Get:
    def get(rec: Any, env: tuple[Any, ...]) -> Any:
        v = base(rec, env)
        for key in rest:
            v = _step(v, key)
        return v

    return get


def _compile(expr: Expr, scope: dict[str, int]) -> _Fn:
    if isinstance(expr, Comparison):
        return _compile_comparison(expr, scope)
    if isinstance(expr, And):
        fns = [_compile(i, scope) for i in expr.items]
        if len(fns) == 2:
            a, b = fns
            return lambda rec, env: a(rec, env) and b(rec, env)

        def all_of(rec: Any, env: tuple[Any, ...]) -> bool:
            for f in fns:
                if not f(rec, env):
                    return False
            return True

        return all_of
    if isinstance(expr, Or):
        membership = _string_set(expr)
        if membership is not None:
            return _compile_membership(_getter(membership[0], scope), membership[1])
        fns = [_compile(i, scope) for i in expr.items]
        if len(fns) == 2:
            a, b = fns
            return lambda rec, env: a(rec, env) or b(rec, env)

        def any_of(rec: Any, env: tuple[Any, ...]) -> bool:
            for f in fns:
                if f(rec, env):
                    return True
            return False

        return any_of
    if isinstance(expr, Not):
        inner = _compile(expr.operand, scope)
        return lambda rec, env: not inner(rec, env)
    if isinstance(expr, (FieldRef, VarRef)):
        get = _getter(expr, scope)
        return lambda rec, env: _as_bool(get(rec, env)) is True
    if isinstance(expr, BoolLiteral):
        value = expr.value
        return lambda rec, env: value
    if isinstance(expr, SearchIn):
        return _compile_membership(_getter(expr.target, scope), frozenset(expr.values))
    if isinstance(expr, Lambda):
        return _compile_lambda(expr, scope)
    raise FilterError(f"cannot evaluate a {type(expr).__name__} node")


def _string_set(expr: Expr) -> tuple[Target, frozenset[str]] | None:
    """(target, values) if expr is `t eq 's'`, `search.in(t, ...)` or an `or` of those on one t."""
    if isinstance(expr, SearchIn):
        return expr.target, frozenset(expr.values)
    if isinstance(expr, Comparison):
        if expr.op == "eq" and isinstance(expr.value.value, str):
            return expr.target, frozenset((expr.value.value,))
        return None
    if isinstance(expr, Or):
        parts = [_string_set(i) for i in expr.items]
        if any(p is None for p in parts):
            return None
        targets = {p[0] for p in parts if p is not None}
        if len(targets) != 1:
            return None
        return targets.pop(), frozenset().union(*(p[1] for p in parts if p is not None))
    return None


def _compile_membership(get: _Get, values: frozenset[str]) -> _Fn:
    def member(rec: Any, env: tuple[Any, ...]) -> bool:
        v = get(rec, env)
        return isinstance(v, str) and v in values

    return member


def _compile_lambda(expr: Lambda, scope: dict[str, int]) -> _Fn:
    get = _getter(expr.source, scope)
    if expr.body is None:  # any(): the collection is non-empty
        return lambda rec, env: len(_elements(get(rec, env))) > 0
    var = str(expr.var)
    if expr.kind == "any":
        fast = _string_set(expr.body)
        if fast is not None and fast[0] == VarRef(var):
            return _compile_any_in(get, fast[1])
    depth = len(scope)
    inner = {**scope, var: depth}
    body = _compile(expr.body, inner)
    if expr.kind == "any":
        def any_el(rec: Any, env: tuple[Any, ...]) -> bool:
            for el in _elements(get(rec, env)):
                if body(rec, (*env, el)):
                    return True
            return False

        return any_el

    def all_el(rec: Any, env: tuple[Any, ...]) -> bool:
        for el in _elements(get(rec, env)):
            if not body(rec, (*env, el)):
                return False
        return True

    return all_el


def _compile_any_in(get: _Get, values: frozenset[str]) -> _Fn:
    """`coll/any(x: search.in(x, ...))` as a set intersection: the security-trimming hot path."""
    def any_in(rec: Any, env: tuple[Any, ...]) -> bool:
        els = _elements(get(rec, env))
        try:
            hit = not values.isdisjoint(els)
        except TypeError:  # unhashable elements
            return any(isinstance(e, str) and e in values for e in els)
        if hit:  # guard against non-str elements that hash/compare equal to a str
            return any(isinstance(e, str) and e in values for e in els)
        return False

    return any_in


def _compile_comparison(expr: Comparison, scope: dict[str, int]) -> _Fn:
    get = _getter(expr.target, scope)
    op = expr.op
    c = expr.value.value
    opf = _OPS[op]
    if c is None:
        if op == "eq":
            return lambda rec, env: get(rec, env) is None
        if op == "ne":
            return lambda rec, env: get(rec, env) is not None
        raise FilterError(f"'{op}' cannot compare with null")
    if isinstance(c, bool):
        conv: Callable[[Any], Any] = _as_bool
    elif isinstance(c, (int, float)):
        if isinstance(c, float) and math.isnan(c):
            result = op == "ne"  # NaN equals nothing and orders with nothing
            return lambda rec, env: result
        return _compile_numeric(get, op, c)
    elif isinstance(c, str):
        return _compile_string(get, op, c)
    else:
        conv = _as_instant
        c = _dt_micros(c)
    const = c
    if op == "eq":
        return lambda rec, env: conv(get(rec, env)) == const
    if op == "ne":
        return lambda rec, env: conv(get(rec, env)) != const

    def ranged(rec: Any, env: tuple[Any, ...]) -> bool:
        x = conv(get(rec, env))
        return x is not None and opf(x, const)

    return ranged


def _compile_string(get: _Get, op: str, c: str) -> _Fn:
    if op == "eq":
        return lambda rec, env: isinstance(v := get(rec, env), str) and v == c
    if op == "ne":
        return lambda rec, env: not (isinstance(v := get(rec, env), str) and v == c)
    opf = _OPS[op]
    return lambda rec, env: isinstance(v := get(rec, env), str) and opf(v, c)


def _compile_numeric(get: _Get, op: str, c: int | float) -> _Fn:
    opf = _OPS[op]
    if op == "ne":
        def ne(rec: Any, env: tuple[Any, ...]) -> bool:
            v = get(rec, env)
            t = type(v)
            if t is int or t is float:
                return v != c
            n = _as_number(v)
            return n is None or n != c

        return ne

    def cmp(rec: Any, env: tuple[Any, ...]) -> bool:
        v = get(rec, env)
        t = type(v)
        if t is int or t is float:
            return opf(v, c)
        n = _as_number(v)
        return n is not None and opf(n, c)

    return cmp
