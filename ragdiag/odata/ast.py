"""The syntax tree of an Azure AI Search `$filter` expression.

Nodes are frozen dataclasses so parsed filters can be hashed, cached, compared
and shared between threads. `And`/`Or` are n-ary: a chain `a and b and c` is one
node, while an explicitly parenthesised `a and (b and c)` keeps its nesting, so
`parse(render(e)) == e` holds for every tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeAlias

ComparisonOp = Literal["eq", "ne", "gt", "ge", "lt", "le"]
LambdaKind = Literal["any", "all"]

COMPARISON_OPS: tuple[str, ...] = ("eq", "ne", "gt", "ge", "lt", "le")
RANGE_OPS: frozenset[str] = frozenset({"gt", "ge", "lt", "le"})
# `5 lt rating` means `rating gt 5`.
REVERSED_OP: dict[str, str] = {"eq": "eq", "ne": "ne", "gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}

ConstantValue: TypeAlias = str | int | float | bool | datetime | None

_NAN_KEY = ("nan",)


class Expr:
    """Base class of every boolean expression node; `str(expr)` renders it."""

    __slots__ = ()

    def __str__(self) -> str:
        from ragdiag.odata.render import render

        return render(self)


@dataclass(frozen=True, eq=False)
class Constant:
    """A literal operand: str, int, float (incl. NaN/INF), bool, None or an aware datetime.

    Equality is type-strict (1 != 1.0 != True) and NaN equals NaN, so that a
    parsed constant compares equal to the constant it was rendered from.
    """

    value: ConstantValue

    def __post_init__(self) -> None:
        v = self.value
        if isinstance(v, datetime):
            if v.utcoffset() is None:
                raise TypeError("a date-time Constant needs a time zone (tzinfo)")
        elif v is not None and not isinstance(v, (str, int, float)):
            raise TypeError(f"unsupported constant type {type(v).__name__}")

    def _key(self) -> tuple[object, ...]:
        v = self.value
        if isinstance(v, float):
            return (float, _NAN_KEY) if math.isnan(v) else (float, v)
        if isinstance(v, datetime):
            # Wall time + offset: avoids UTC conversion (can overflow at year 1/9999)
            # and keeps 12:00Z and 14:00+02:00 distinct, as they render differently.
            return (datetime, v.replace(tzinfo=None), v.utcoffset())
        return (type(v), v)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Constant):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class FieldRef(Expr):
    """A document field path (`rating`, `address/city`); alone it is a boolean test."""

    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return "/".join(self.path)


@dataclass(frozen=True)
class VarRef(Expr):
    """A lambda range variable, optionally with a sub-path (`t`, `room/type`)."""

    var: str
    path: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "/".join((self.var, *self.path))


Target: TypeAlias = FieldRef | VarRef


@dataclass(frozen=True)
class BoolLiteral(Expr):
    """`true` or `false` used as a whole expression."""

    value: bool


@dataclass(frozen=True)
class Comparison(Expr):
    """`target op constant`; a constant written on the left is normalised to the right."""

    target: Target
    op: ComparisonOp
    value: Constant


@dataclass(frozen=True)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True)
class And(Expr):
    """A chain of two or more conjuncts."""

    items: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if len(self.items) < 2:
            raise ValueError("And needs at least two items; use conjoin() to build one")


@dataclass(frozen=True)
class Or(Expr):
    """A chain of two or more disjuncts."""

    items: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if len(self.items) < 2:
            raise ValueError("Or needs at least two items")


@dataclass(frozen=True)
class Lambda(Expr):
    """`source/any(var: body)`, `source/all(var: body)` or `source/any()` (var/body None)."""

    kind: LambdaKind
    source: Target
    var: str | None = None
    body: Expr | None = None

    def __post_init__(self) -> None:
        if (self.var is None) != (self.body is None):
            raise ValueError("Lambda needs both var and body, or neither")
        if self.kind == "all" and self.body is None:
            raise ValueError("all() needs a body")


@dataclass(frozen=True)
class SearchIn(Expr):
    """`search.in(target, 'text'[, 'delimiters'])`: target equals one of the listed values.

    `delimiters=None` means Azure's default, space and comma. Every character of
    the delimiter string separates values; empty pieces are ignored.
    """

    target: Target
    text: str
    delimiters: str | None = None
    values: tuple[str, ...] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", split_values(self.text, self.delimiters))


DEFAULT_DELIMITERS = " ,"


def split_values(text: str, delimiters: str | None) -> tuple[str, ...]:
    """Split a search.in value list: each delimiter char separates, empty pieces dropped."""
    delims = DEFAULT_DELIMITERS if delimiters is None else delimiters
    if not delims:
        return (text,) if text else ()
    first = delims[0]
    for ch in delims[1:]:
        text = text.replace(ch, first)
    return tuple(p for p in text.split(first) if p)


@dataclass(frozen=True)
class Clause:
    """One top-level conjunct of a filter, with its rendered text and the fields it uses."""

    index: int
    expr: Expr
    text: str
    fields: frozenset[str]
