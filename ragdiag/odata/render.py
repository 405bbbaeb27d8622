"""Render a filter tree back to canonical OData text.

Canonical means: single spaces, constants normalised (`5 lt x` becomes `x gt 5`),
floats as Python `repr` (exact round trip), date-times as
`YYYY-MM-DDTHH:MM:SS[.ffffff]Z|±HH:MM`, and only the parentheses needed to keep
the tree's shape, so `parse(render(e)) == e`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from ragdiag.odata.ast import (
    And,
    BoolLiteral,
    Comparison,
    Constant,
    Expr,
    FieldRef,
    Lambda,
    Not,
    Or,
    SearchIn,
    VarRef,
)


def quote(value: str) -> str:
    """An OData string literal: single quotes, embedded quotes doubled (`'O''Brien'`)."""
    if not isinstance(value, str):
        raise TypeError(f"quote() needs a str, got {type(value).__name__}")
    return "'" + value.replace("'", "''") + "'"


def render_datetime(value: datetime) -> str:
    """ISO-8601 with seconds, trimmed microseconds and `Z` for a zero offset."""
    text = (f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
            f"T{value.hour:02d}:{value.minute:02d}:{value.second:02d}")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    offset = value.utcoffset() or timedelta(0)
    if not offset:
        return text + "Z"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(offset) // timedelta(minutes=1)
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def render_constant(constant: Constant) -> str:
    """The OData literal for a constant value."""
    v = constant.value
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "INF" if v > 0 else "-INF"
        return repr(v)
    return render_datetime(v)


def _target(t: FieldRef | VarRef) -> str:
    return t.name


def render(expr: Expr) -> str:
    """Canonical filter text for `expr`."""
    if isinstance(expr, Comparison):
        return f"{_target(expr.target)} {expr.op} {render_constant(expr.value)}"
    if isinstance(expr, And):
        return " and ".join(_wrap(i, (And, Or)) for i in expr.items)
    if isinstance(expr, Or):
        return " or ".join(_wrap(i, (Or,)) for i in expr.items)
    if isinstance(expr, Not):
        return "not " + _wrap(expr.operand, (And, Or, Comparison))
    if isinstance(expr, (FieldRef, VarRef)):
        return _target(expr)
    if isinstance(expr, BoolLiteral):
        return "true" if expr.value else "false"
    if isinstance(expr, Lambda):
        src = _target(expr.source)
        if expr.body is None:
            return f"{src}/{expr.kind}()"
        return f"{src}/{expr.kind}({expr.var}: {render(expr.body)})"
    if isinstance(expr, SearchIn):
        args = f"{_target(expr.target)}, {quote(expr.text)}"
        if expr.delimiters is not None:
            args += f", {quote(expr.delimiters)}"
        return f"search.in({args})"
    raise TypeError(f"not a filter expression: {type(expr).__name__}")


def _wrap(expr: Expr, needs_parens: tuple[type, ...]) -> str:
    text = render(expr)
    return f"({text})" if isinstance(expr, needs_parens) else text
