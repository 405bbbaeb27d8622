"""Azure AI Search OData `$filter` support: parse, render, validate and evaluate filters.

    expr = parse("group_ids/any(g: search.in(g, 'hr, sales')) and confidence_score ge 0.85")
    validate(expr, schema)              # fields exist, are filterable, types match
    keep = compile_filter(expr)         # record -> bool, Azure null/NaN semantics
    [c.text for c in clauses(expr)]     # top-level conjuncts, for ablation
"""

from __future__ import annotations

from ragdiag.odata.ast import (
    And,
    BoolLiteral,
    Clause,
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
from ragdiag.odata.build import MATCH_NOTHING, pick_delimiter, search_in_any
from ragdiag.odata.clauses import clauses, conjoin, drop_clause, fields_of
from ragdiag.odata.evaluate import compile_filter, evaluate
from ragdiag.odata.parser import parse
from ragdiag.odata.render import quote, render
from ragdiag.odata.validate import validate

__all__ = [
    "MATCH_NOTHING",
    "And",
    "BoolLiteral",
    "Clause",
    "Comparison",
    "Constant",
    "Expr",
    "FieldRef",
    "Lambda",
    "Not",
    "Or",
    "SearchIn",
    "VarRef",
    "clauses",
    "compile_filter",
    "conjoin",
    "drop_clause",
    "evaluate",
    "fields_of",
    "parse",
    "pick_delimiter",
    "quote",
    "render",
    "search_in_any",
    "validate",
]
