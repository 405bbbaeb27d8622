"""Property-based fuzzing of ragdiag.odata: parse, render and evaluate never misbehave."""

from __future__ import annotations

import math
import os
from datetime import timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiag.errors import FilterError
from ragdiag.odata import (
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
    compile_filter,
    parse,
    render,
)

# The same examples on every run, so a CI result depends on the code, not on the draw;
# RAGDIAG_FUZZ_RANDOM=1 explores new ones and RAGDIAG_FUZZ_EXAMPLES=N draws more (tests/README.md).
FUZZ = settings(max_examples=int(os.environ.get("RAGDIAG_FUZZ_EXAMPLES", "300")), deadline=None, database=None,
                derandomize=not os.environ.get("RAGDIAG_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow])
FUZZ_TREES = settings(FUZZ, max_examples=FUZZ.max_examples // 2)

# ---- arbitrary text and token soup ---------------------------------------------------

TOKENS = [
    "(", ")", ",", ":", "/", "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le",
    "AND", "Eq", "true", "false", "null", "NaN", "INF", "-INF", "-", "1", "-2.5", "1e309",
    "'a'", "'it''s'", "'", "''", "x", "tags", "rating", "any", "all", "any()", "search.in",
    "search.ismatch", "geo.distance", "a.b", "2024-01-01T00:00:00Z", "2024-01-01T00:00",
    "2024-01-01", "2024-02-30T00:00:00Z", "9999-12-31T23:59:59.9999999-23:59", "#", ".", "\n",
]


@FUZZ
@given(st.text(max_size=80))
def test_parse_arbitrary_text_only_raises_filter_error(text):
    try:
        parse(text)
    except FilterError:
        pass


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=25), st.sampled_from([" ", ""]))
def test_parse_token_soup_only_raises_filter_error(tokens, sep):
    text = sep.join(tokens)
    try:
        e = parse(text)
    except FilterError:
        return
    assert parse(render(e)) == e


# ---- generated valid expressions ------------------------------------------------------

RESERVED = {"and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null",
            "NaN", "INF", "any", "all"}
_FIRST = "abcxyzABCXYZ_"
idents = st.builds(
    str.__add__, st.sampled_from(_FIRST), st.text(_FIRST + "09", max_size=4)
).filter(lambda s: s not in RESERVED)
fields = st.one_of(st.sampled_from(["rating", "title", "tags", "flag", "d", "rooms"]), idents)
paths = st.lists(fields, min_size=1, max_size=3).map(lambda p: FieldRef(tuple(p)))
zones = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
constants = st.one_of(
    st.text(max_size=8), st.integers(), st.floats(), st.booleans(), st.none(),
    st.datetimes(timezones=zones),
).map(Constant)
ops = st.sampled_from(["eq", "ne", "gt", "ge", "lt", "le"])


def _comparison(target: FieldRef | VarRef, op: str, c: Constant) -> Comparison:
    if c.value is None and op not in ("eq", "ne"):
        op = "eq"
    return Comparison(target, op, c)  # type: ignore[arg-type]


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0, bound: tuple[str, ...] = ()) -> Expr:
    """A random well-formed tree; lambda bodies may use the variables bound around them."""
    def target() -> FieldRef | VarRef:
        if bound and draw(st.booleans()):
            var = draw(st.sampled_from(bound))
            return VarRef(var, tuple(draw(st.lists(fields, max_size=1))))
        # a field named like a bound range variable would parse as the variable
        return draw(paths.filter(lambda p: p.path[0] not in bound))

    leaf_kinds = ["cmp", "field", "bool", "in", "any0"]
    kinds = leaf_kinds if depth >= 2 else [*leaf_kinds, "and", "or", "not", "lambda"]
    kind = draw(st.sampled_from(kinds))
    if kind == "cmp":
        return _comparison(target(), draw(ops), draw(constants))
    if kind == "field":
        return target()
    if kind == "bool":
        return BoolLiteral(draw(st.booleans()))
    if kind == "in":
        return SearchIn(target(), draw(st.text(max_size=10)),
                        draw(st.none() | st.text(max_size=3)))
    if kind == "any0":
        return Lambda("any", target())
    if kind in ("and", "or"):
        items = draw(st.lists(expressions(depth + 1, bound), min_size=2, max_size=3))
        return And(tuple(items)) if kind == "and" else Or(tuple(items))
    if kind == "not":
        return Not(draw(expressions(depth + 1, bound)))
    var = draw(idents.filter(lambda v: v not in bound))
    body = draw(expressions(depth + 1, (*bound, var)))
    return Lambda(draw(st.sampled_from(["any", "all"])), target(), var, body)  # type: ignore[arg-type]


@FUZZ_TREES
@given(expressions())
def test_generated_expressions_round_trip(expr):
    text = render(expr)
    parsed = parse(text)
    assert parsed == expr, text
    assert render(parsed) == text


# ---- evaluation over random records ---------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    st.sampled_from(["2024-01-31T00:00:00Z", "2024-01-31", "0001-01-01T00:00:00+14:00",
                     math.nan, b"bytes", 1 + 2j, object()]),
    st.datetimes(timezones=st.none() | zones),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(fields, inner, max_size=3),
    max_leaves=8,
)
records = st.dictionaries(fields, values, max_size=6)


@FUZZ_TREES
@given(expressions(), st.lists(records, max_size=4))
def test_compiled_filters_only_raise_filter_error(expr, recs):
    f = compile_filter(expr)
    for rec in recs:
        try:
            assert f(rec) in (True, False)
        except FilterError:
            pass


# ---- the local target's filter masks: combined from cached parts, equal to the whole -----


@FUZZ_TREES
@given(expressions(), st.lists(records, min_size=1, max_size=5))
def test_masks_combined_from_parts_equal_the_filter_evaluated_whole(expr, recs):
    """`and` / `not` are combined from the masks of their parts; wherever the filter evaluated
    whole gives an answer, the combination gives the same one (or a FilterError, on which
    FilterMasks falls back to the whole filter)."""
    from ragdiag.targets.local.filtering import FilterMasks

    masks = FilterMasks(recs, schema=None)  # type: ignore[arg-type]  (validation is not under test)
    try:
        whole = masks._rows(expr)
    except FilterError:
        return
    try:
        combined = masks._combined(expr)
    except FilterError:
        return
    assert combined.tolist() == whole.tolist(), render(expr)


def test_a_dropped_clause_reuses_the_masks_of_the_other_clauses(monkeypatch):
    from ragdiag.model.schema import IndexSchema
    from ragdiag.targets.local.filtering import FilterMasks

    schema = IndexSchema.from_azure({"name": "t", "fields": [
        {"name": "id", "type": "Edm.String", "key": True},
        {"name": "level", "type": "Edm.String", "filterable": True},
        {"name": "conf", "type": "Edm.Double", "filterable": True},
        {"name": "groups", "type": "Collection(Edm.String)", "filterable": True}]})
    recs = [{"id": str(i), "level": "evidence" if i % 2 else "section", "conf": i / 10,
             "groups": ["hr"] if i % 3 == 0 else ["all"]} for i in range(10)]
    masks = FilterMasks(recs, schema)
    evaluated: list[str] = []
    rows = masks._rows
    monkeypatch.setattr(masks, "_rows", lambda e: (evaluated.append(render(e)), rows(e))[1])
    full = "groups/any(g: search.in(g, 'all')) and level eq 'evidence' and not (conf lt 0.5)"
    assert masks.mask(full).tolist() == [r["groups"] == ["all"] and r["level"] == "evidence" and r["conf"] >= 0.5
                                         for r in recs]
    assert len(evaluated) == 3  # each part once
    dropped = "groups/any(g: search.in(g, 'all')) and not (conf lt 0.5)"
    assert masks.mask(dropped).tolist() == [r["groups"] == ["all"] and r["conf"] >= 0.5 for r in recs]
    assert len(evaluated) == 3  # nothing evaluated again: both parts were cached
