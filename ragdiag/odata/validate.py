"""Check a parsed filter against an index schema, as Azure would before running it.

Catches what the grammar cannot: unknown or non-filterable fields, lambdas over
scalar fields, collections compared directly, and constants of the wrong type.
Messages list the index's filterable fields so the fix is one glance away.
"""

from __future__ import annotations

from datetime import datetime

from ragdiag.errors import FilterError
from ragdiag.inputs.limits import MAX_EXCERPT, excerpt
from ragdiag.model.schema import (
    BOOLEAN,
    DATETIME,
    DOUBLE,
    INT32,
    INT64,
    STRING,
    IndexSchema,
)
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
    Target,
    VarRef,
)
from ragdiag.odata.parser import parse
from ragdiag.odata.render import render, render_constant

_NUMERIC = frozenset({INT32, INT64, DOUBLE, "Edm.Single", "Edm.Int16", "Edm.SByte", "Edm.Byte"})
_COMPARABLE = _NUMERIC | {STRING, BOOLEAN, DATETIME}


def _is_complex(type_: str) -> bool:
    return type_ in ("Edm.ComplexType", "Collection(Edm.ComplexType)")


def _constant_type(c: Constant) -> str:
    v = c.value
    if isinstance(v, bool):
        return BOOLEAN
    if isinstance(v, str):
        return STRING
    if isinstance(v, int):
        return INT64
    if isinstance(v, float):
        return DOUBLE
    if isinstance(v, datetime):
        return DATETIME
    return "null"


def _compatible(field_type: str, c: Constant) -> bool:
    ctype = _constant_type(c)
    if ctype == "null":
        return True
    if field_type in _NUMERIC:
        return ctype in (INT64, DOUBLE)
    return ctype == field_type


def validate(expr: Expr | str, schema: IndexSchema) -> None:
    """Raise FilterError unless every field is known, filterable and used with the right types."""
    if isinstance(expr, str):
        expr = parse(expr)
    _Validator(schema).check(expr, {})


class _Validator:
    def __init__(self, schema: IndexSchema) -> None:
        self.schema = schema
        self.by_name = {f.name: f for f in schema.fields}

    def _listing(self) -> str:
        names = self.schema.filterable_fields
        return "filterable fields: " + (_s(", ".join(names)) if names else "none")

    def resolve(self, target: Target, scope: dict[str, str | None]) -> str | None:
        """The type a target denotes (a field type or a collection's element type); None if unknown."""
        if isinstance(target, VarRef):
            if target.var not in scope:
                raise FilterError(f"range variable {_q(target.var)} is used outside its lambda")
            elem = scope[target.var]
            if not target.path:
                return elem
            if elem is not None and not _is_complex(elem):
                raise FilterError(f"{_q(target.name)}: range variable {_q(target.var)} stands for an "
                                  f"{elem} value, which has no sub-field {_q(target.path[0])}")
            return None  # sub-fields of complex types are not modelled by IndexSchema
        name = target.path[0]
        f = self.by_name.get(name)
        if f is None:
            raise FilterError(f"index '{self.schema.name}' has no field {_q(name)}; {self._listing()}")
        if f.is_vector:
            raise FilterError(f"vector field {_q(name)} cannot be used in a filter; {self._listing()}")
        if not f.filterable:
            raise FilterError(f"field {_q(name)} is not filterable in index '{self.schema.name}'; "
                              f"{self._listing()}")
        if len(target.path) > 1:
            if not _is_complex(f.type):
                raise FilterError(f"{_q(target.name)}: field {_q(name)} ({f.type}) has no sub-fields")
            return None
        return f.type

    def check(self, expr: Expr, scope: dict[str, str | None]) -> None:
        if isinstance(expr, (And, Or)):
            for item in expr.items:
                self.check(item, scope)
        elif isinstance(expr, Not):
            self.check(expr.operand, scope)
        elif isinstance(expr, BoolLiteral):
            return
        elif isinstance(expr, (FieldRef, VarRef)):
            t = self.resolve(expr, scope)
            if t is not None and t != BOOLEAN:
                raise FilterError(f"{_q(expr.name)} ({t}) is used as a condition on its own, which "
                                  f"needs an Edm.Boolean field; compare it instead, e.g. "
                                  f"{_s(expr.name)} eq ...")
        elif isinstance(expr, Comparison):
            self.check_comparison(expr, scope)
        elif isinstance(expr, SearchIn):
            t = self.resolve(expr.target, scope)
            if t is not None and t != STRING:
                hint = (f"; for a collection use {_s(expr.target.name)}/any(x: search.in(x, ...))"
                        if t.startswith("Collection(") else "")
                raise FilterError(f"search.in needs an Edm.String field, but {_q(expr.target.name)} "
                                  f"is {t}{hint}")
        elif isinstance(expr, Lambda):
            t = self.resolve(expr.source, scope)
            if t is not None and not t.startswith("Collection("):
                raise FilterError(f"{expr.kind}() needs a collection field, but {_q(expr.source.name)} "
                                  f"is {t}")
            if expr.body is not None and expr.var is not None:
                elem = t[len("Collection("):-1] if t is not None else None
                self.check(expr.body, {**scope, expr.var: elem})
        else:
            raise FilterError(f"not a filter expression: {type(expr).__name__}")

    def check_comparison(self, expr: Comparison, scope: dict[str, str | None]) -> None:
        t = self.resolve(expr.target, scope)
        if t is None:
            return
        name = expr.target.name
        if t.startswith("Collection("):
            raise FilterError(f"field {_q(name)} is a collection ({t}) and cannot be compared "
                              f"directly; use {_s(name)}/any(x: x {expr.op} "
                              f"{_s(render_constant(expr.value))}) in {_q(render(expr))}")
        if t not in _COMPARABLE:
            raise FilterError(f"{_q(name)} ({t}) cannot be compared with {expr.op}")
        if not _compatible(t, expr.value):
            ctype = _constant_type(expr.value)
            raise FilterError(f"cannot compare {_q(name)} ({t}) with the {ctype} constant "
                              f"{_s(render_constant(expr.value))} in {_q(render(expr))}")


def _s(text: object) -> str:
    """A name or expression for a message: at most ~120 characters."""
    t = str(text)
    return t if len(t) <= MAX_EXCERPT else excerpt(t).strip("'")


def _q(text: object) -> str:
    """`_s` in quotes."""
    return f"'{_s(text)}'"
