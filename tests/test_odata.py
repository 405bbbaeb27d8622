"""Hand-checkable tests of ragdiag.odata: parsing, rendering, evaluation, validation."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from ragdiag.errors import FilterError, RagdiagError
from ragdiag.model.schema import Field, IndexSchema
from ragdiag.odata import (
    MATCH_NOTHING,
    And,
    BoolLiteral,
    Clause,
    Comparison,
    Constant,
    FieldRef,
    Lambda,
    Not,
    Or,
    SearchIn,
    VarRef,
    clauses,
    compile_filter,
    conjoin,
    drop_clause,
    evaluate,
    fields_of,
    parse,
    quote,
    render,
    search_in_any,
    validate,
)


def cmp(name: str, op: str, value: object) -> Comparison:
    return Comparison(FieldRef(tuple(name.split("/"))), op, Constant(value))  # type: ignore[arg-type]


# ---- parsing: structure and precedence -------------------------------------------------

def test_or_binds_looser_than_and():
    assert parse("a eq 1 or b eq 2 and c eq 3") == Or((
        cmp("a", "eq", 1), And((cmp("b", "eq", 2), cmp("c", "eq", 3)))))


def test_and_chain_is_one_node_and_parentheses_keep_nesting():
    assert parse("a eq 1 and b eq 2 and c eq 3") == And((
        cmp("a", "eq", 1), cmp("b", "eq", 2), cmp("c", "eq", 3)))
    assert parse("(a eq 1 or b eq 2) and c eq 3") == And((
        Or((cmp("a", "eq", 1), cmp("b", "eq", 2))), cmp("c", "eq", 3)))
    assert parse("a eq 1 and (b eq 2 and c eq 3)") == And((
        cmp("a", "eq", 1), And((cmp("b", "eq", 2), cmp("c", "eq", 3)))))


def test_constant_on_the_left_is_reversed():
    assert parse("5 lt rating") == cmp("rating", "gt", 5)
    assert parse("5 ge rating") == cmp("rating", "le", 5)
    assert parse("'x' eq title") == cmp("title", "eq", "x")
    assert parse("null ne title") == cmp("title", "ne", None)
    assert evaluate("5 lt rating", {"rating": 6})
    assert not evaluate("5 lt rating", {"rating": 5})


def test_bare_boolean_field_and_literals():
    assert parse("is_table") == FieldRef(("is_table",))
    assert parse("not is_table") == Not(FieldRef(("is_table",)))
    assert parse("true") == BoolLiteral(True)
    assert parse("false or is_table") == Or((BoolLiteral(False), FieldRef(("is_table",))))
    assert parse("true eq is_table") == cmp("is_table", "eq", True)
    assert evaluate("is_table", {"is_table": True})
    assert not evaluate("is_table", {"is_table": "yes"})
    assert evaluate("not is_table", {"is_table": False})
    assert evaluate("not is_table", {})  # null is not true


def test_not_rules():
    assert parse("not (rating gt 5)") == Not(cmp("rating", "gt", 5))
    assert parse("not not is_table") == Not(Not(FieldRef(("is_table",))))
    assert parse("not tags/any()") == Not(Lambda("any", FieldRef(("tags",))))
    with pytest.raises(FilterError, match=r"write 'not \(rating gt 5\)'") as err:
        parse("not rating gt 5")
    assert err.value.position == 0
    with pytest.raises(FilterError, match="condition after 'not'"):
        parse("not 5")


def test_keywords_are_lower_case_only():
    with pytest.raises(FilterError, match="write 'and'"):
        parse("a eq 1 AND b eq 2")
    with pytest.raises(FilterError, match="write 'eq'"):
        parse("a EQ 1")
    with pytest.raises(FilterError, match="write 'not'"):
        parse("NOT (a eq 1)")


def test_field_paths_and_identifiers():
    assert parse("address/city eq 'Paris'") == cmp("address/city", "eq", "Paris")
    assert evaluate("address/city eq 'Paris'", {"address": {"city": "Paris"}})
    assert not evaluate("address/city eq 'Paris'", {"address": "Paris"})
    with pytest.raises(FilterError, match="use '/'"):
        parse("address.city eq 'Paris'")


# ---- constants -----------------------------------------------------------------------

def test_string_escaping():
    e = parse("name eq 'O''Brien'")
    assert e == cmp("name", "eq", "O'Brien")
    assert render(e) == "name eq 'O''Brien'"
    assert evaluate(e, {"name": "O'Brien"})
    assert quote("O'Brien") == "'O''Brien'"
    assert quote("''") == "''''''"


def test_numbers():
    assert parse("x eq -5") == cmp("x", "eq", -5)
    assert parse("x eq 2.5e3") == cmp("x", "eq", 2500.0)
    assert parse("x eq 1") != parse("x eq 1.0")  # int vs float constant
    assert parse("x eq INF") == cmp("x", "eq", math.inf)
    assert parse("x gt -INF") == cmp("x", "gt", -math.inf)
    assert parse("x ne NaN") == cmp("x", "ne", math.nan)  # NaN constants compare equal
    with pytest.raises(FilterError, match="malformed number"):
        parse("x eq 5abc")


def test_datetimes_need_a_zone():
    utc = datetime(2024, 5, 6, 12, 30, 5, 451000, tzinfo=UTC)
    assert parse("d eq 2024-05-06T12:30:05.451Z") == cmp("d", "eq", utc)
    plus2 = parse("d eq 2024-05-06T14:30:05.451+02:00")
    assert render(plus2) == "d eq 2024-05-06T14:30:05.451+02:00"
    assert parse("d ge 2024-01-01T00:00Z") == cmp(
        "d", "ge", datetime(2024, 1, 1, tzinfo=UTC))
    with pytest.raises(FilterError, match="no time zone") as err:
        parse("d ge 2024-01-01T00:00:00")
    assert err.value.position == 5
    with pytest.raises(FilterError, match="date without a time"):
        parse("d ge 2024-01-01")
    with pytest.raises(FilterError, match="invalid date-time"):
        parse("d ge 2024-13-01T00:00:00Z")


def test_datetimes_compare_as_instants():
    f = compile_filter("last_updated ge 2024-01-31T00:00:00Z")
    assert f({"last_updated": "2024-01-31T00:00:00Z"})
    assert f({"last_updated": "2024-01-31T01:00:00+01:00"})  # same instant
    assert not f({"last_updated": "2024-01-31T00:59:59+01:00"})
    assert f({"last_updated": "2024-02-01T00:00:00.0000000Z"})  # Azure's 7 fraction digits
    assert f({"last_updated": datetime(2024, 2, 1, tzinfo=timezone(timedelta(hours=-5)))})
    assert not f({"last_updated": "not a date"})
    assert not f({"last_updated": 20240201})
    assert not f({})
    assert evaluate("d eq 2024-05-06T14:30:00+02:00", {"d": "2024-05-06T12:30:00Z"})


# ---- evaluation: null, NaN, types ----------------------------------------------------

NULL_CASES = [
    # (filter, result when the field is null, result when it is missing)
    ("rating eq 3", False),
    ("rating ne 3", True),
    ("rating gt 3", False),
    ("rating ge 3", False),
    ("rating lt 3", False),
    ("rating le 3", False),
    ("rating eq null", True),
    ("rating ne null", False),
    ("title eq 'a'", False),
    ("title ne 'a'", True),
    ("title lt 'a'", False),
    ("flag eq true", False),
    ("flag ne true", True),
    ("d gt 2024-01-01T00:00:00Z", False),
    ("d ne 2024-01-01T00:00:00Z", True),
]


@pytest.mark.parametrize(("text", "expected"), NULL_CASES)
def test_null_rules(text, expected):
    assert evaluate(text, {"rating": None, "title": None, "flag": None, "d": None}) is expected
    assert evaluate(text, {}) is expected  # missing counts as null


def test_null_with_values_present():
    assert evaluate("rating eq null", {"rating": 0}) is False
    assert evaluate("rating ne null", {"rating": 0}) is True
    assert evaluate("rating eq 3", {"rating": 3}) is True
    assert evaluate("rating eq 3", {"rating": 3.0}) is True  # int vs float


@pytest.mark.parametrize("op", ["gt", "ge", "lt", "le"])
def test_range_with_null_constant_is_an_error(op):
    with pytest.raises(FilterError, match="cannot compare with null"):
        parse(f"rating {op} null")


@pytest.mark.parametrize(("op", "expected"), [
    ("eq", False), ("ne", True), ("gt", False), ("ge", False), ("lt", False), ("le", False)])
def test_nan(op, expected):
    assert evaluate(f"x {op} 1.5", {"x": math.nan}) is expected  # NaN value
    assert evaluate(f"x {op} NaN", {"x": 1.5}) is expected  # NaN constant
    assert evaluate(f"x {op} NaN", {"x": math.nan}) is expected


def test_wrong_types_do_not_match_and_do_not_raise():
    assert evaluate("rating gt 3", {"rating": "5"}) is False
    assert evaluate("rating ne 3", {"rating": "3"}) is True
    assert evaluate("title gt 'a'", {"title": 5}) is False
    assert evaluate("flag eq true", {"flag": 1}) is False
    assert evaluate("rating eq 1", {"rating": True}) is False
    assert evaluate("rating lt 3", {"rating": [1, 2]}) is False
    assert evaluate("rating lt 3", {"rating": object()}) is False


def test_strings_are_case_sensitive():
    assert evaluate("t eq 'Sales'", {"t": "Sales"})
    assert not evaluate("t eq 'Sales'", {"t": "sales"})
    assert evaluate("t lt 'b'", {"t": "a"})


def test_non_mapping_record_raises_filter_error():
    with pytest.raises(FilterError, match="cannot evaluate"):
        compile_filter("a eq 1")(["not", "a", "record"])  # type: ignore[arg-type]


def test_compiled_filter_is_fast_enough():
    f = compile_filter("group_ids/any(g: search.in(g, 'hr, sales')) and confidence_score ge 0.85")
    records = [{"group_ids": ["hr"] if i % 2 else ["it"], "confidence_score": (i % 100) / 100}
               for i in range(100_000)]
    assert sum(map(f, records)) == 8000  # odd i with i % 100 in 85..99


# ---- lambdas -------------------------------------------------------------------------

def test_lambdas():
    any_f = compile_filter("tags/any(t: t eq 'a')")
    all_f = compile_filter("tags/all(t: t ne 'a')")
    nonempty = compile_filter("tags/any()")
    assert parse("tags/any(t: t eq 'a')") == Lambda(
        "any", FieldRef(("tags",)), "t", Comparison(VarRef("t"), "eq", Constant("a")))
    for tags, a, al, ne in [
        (["a", "b"], True, False, True),
        (["b"], False, True, True),
        ([], False, True, False),
        (None, False, True, False),  # null collection behaves as empty
    ]:
        rec = {"tags": tags}
        assert (any_f(rec), all_f(rec), nonempty(rec)) == (a, al, ne), tags
    assert (any_f({}), all_f({}), nonempty({})) == (False, True, False)  # missing too


def test_lambda_numeric_and_complex_collections():
    assert evaluate("scores/any(s: s gt 0.5 and s lt 0.9)", {"scores": [0.1, 0.7]})
    assert not evaluate("scores/all(s: s gt 0.5)", {"scores": [0.1, 0.7]})
    rooms = {"rooms": [{"type": "suite", "rate": 300}, {"type": "single", "rate": 90}]}
    assert evaluate("rooms/any(r: r/type eq 'suite' and r/rate gt 200)", rooms)
    assert not evaluate("rooms/any(r: r/type eq 'single' and r/rate gt 200)", rooms)
    nested = {"rooms": [{"tags": ["view"]}, {"tags": None}]}
    assert evaluate("rooms/any(r: r/tags/any(t: t eq 'view'))", nested)


def test_lambda_errors():
    with pytest.raises(FilterError, match="all\\(\\) needs a condition"):
        parse("tags/all()")
    with pytest.raises(FilterError, match="already in use"):
        parse("a/any(x: x/b/any(x: x eq 1))")
    with pytest.raises(FilterError, match="range variable"):
        parse("tags/any(: x eq 1)")


# ---- search.in -----------------------------------------------------------------------

def test_search_in_default_delimiters_are_space_and_comma():
    e = parse("search.in(cat, 'hr, sales,legal  it')")
    assert isinstance(e, SearchIn) and e.values == ("hr", "sales", "legal", "it")
    assert evaluate(e, {"cat": "legal"})
    assert not evaluate(e, {"cat": "hr, sales"})
    assert not evaluate(e, {"cat": "HR"})  # case-sensitive
    assert not evaluate(e, {"cat": ""})


def test_search_in_explicit_delimiter_keeps_spaces():
    e = parse("search.in(cat, 'human resources|sales, emea', '|')")
    assert isinstance(e, SearchIn) and e.values == ("human resources", "sales, emea")
    assert evaluate(e, {"cat": "human resources"})
    assert not evaluate(e, {"cat": "human"})
    assert parse("search.in(c, 'a;b|c', ';|')").values == ("a", "b", "c")  # each char separates


def test_search_in_inside_any_and_not():
    f = compile_filter("group_ids/any(g: search.in(g, 'hr, sales'))")
    assert f({"group_ids": ["it", "sales"]})
    assert not f({"group_ids": ["it"]})
    assert not f({"group_ids": None})
    assert not f({"group_ids": [["sales"]]})  # unhashable element: no crash, no match
    assert evaluate("not search.in(c, 'a b')", {"c": "z"})


def test_unsupported_functions():
    for text in ["search.ismatch('x')", "geo.distance(loc, x) lt 5",
                 "geo.intersects(loc, x)", "search.ismatchscoring('x')"]:
        with pytest.raises(FilterError, match="not supported by ragdiag's evaluator"):
            parse(text)
    with pytest.raises(FilterError, match="unknown function"):
        parse("foo.bar(x)")


# ---- rendering -----------------------------------------------------------------------

REALISTIC = [
    "group_ids/any(g: search.in(g, 'hr, sales')) and confidence_score ge 0.85",
    "level eq 'evidence' and (doc_type eq 'contract' or doc_type eq 'policy')",
    "last_updated ge 2024-01-01T00:00:00Z",
    "not is_table",
    "is_table",
    "tenant_id eq 'acme' and group_ids/any(g: search.in(g, 'finance|legal ops', '|'))",
    "rating gt 4 or rating eq null",
    "not (doc_type eq 'draft')",
    "tags/any()",
    "not tags/any()",
    "tags/all(t: t ne 'internal')",
    "author eq 'O''Brien'",
    "page_number le 10 and page_number ge 2",
    "last_updated lt 2024-05-06T12:30:05.451+02:00",
    "score ne NaN",
    "score lt INF and score gt -INF",
    "a eq 1 or b eq 2 and c eq 3",
    "(a eq 1 or b eq 2) and c eq 3",
    "rooms/any(r: r/type eq 'suite' and r/tags/any(t: t eq 'view'))",
    "search.in(category, 'a,b c')",
    "not search.in(category, 'x')",
    "(a eq 1 and b eq 2) and c eq 3",
    "a/b/c eq -1.5e-07",
]


@pytest.mark.parametrize("text", REALISTIC)
def test_round_trip_realistic(text):
    e = parse(text)
    assert render(e) == text  # these are written canonically
    assert str(e) == text
    assert parse(render(e)) == e


def test_render_normalises():
    assert render(parse("  5   lt  rating ")) == "rating gt 5"
    assert render(parse("(((a eq 1)))")) == "a eq 1"
    assert render(parse("not (is_table)")) == "not is_table"
    assert render(parse("d eq 2024-01-01T00:00:00.500000-00:00")) == "d eq 2024-01-01T00:00:00.5Z"
    # hand-built trees keep their shape
    nested = And((cmp("a", "eq", 1), And((cmp("b", "eq", 2), cmp("c", "eq", 3)))))
    assert render(nested) == "a eq 1 and (b eq 2 and c eq 3)"
    assert parse(render(nested)) == nested
    mixed = Or((And((cmp("a", "eq", 1), cmp("b", "eq", 2))), Not(cmp("c", "eq", 3))))
    assert render(mixed) == "a eq 1 and b eq 2 or not (c eq 3)"


# ---- errors carry positions ----------------------------------------------------------

@pytest.mark.parametrize(("text", "position", "fragment"), [
    ("rating 5", 7, "expected a comparison operator (eq, ne, gt, ge, lt, le) after field 'rating'"),
    ("rating eq", 9, "expected a constant"),
    ("a eq 1 and", 10, "expected a condition"),
    ("(a eq 1", 7, "expected ')' to close the '(' at position 0"),
    ("a eq 1)", 6, "unbalanced ')'"),
    ("a eq 'x", 5, "unterminated string"),
    ("a eq b", 5, "comparing two fields"),
    ("1 eq 2", 5, "a comparison needs a field"),
    ("a eq 1 b", 7, "expected 'and', 'or' or the end"),
    ("a eq #", 5, "unexpected character '#'"),
    ("", 0, "the filter is empty"),
])
def test_error_positions(text, position, fragment):
    with pytest.raises(FilterError) as err:
        parse(text)
    assert err.value.position == position
    assert fragment in str(err.value)
    assert f"(at position {position})" in str(err.value)
    assert isinstance(err.value, RagdiagError)


def test_deep_nesting_is_a_filter_error():
    with pytest.raises(FilterError, match="nests deeper"):
        parse("(" * 500 + "a" + ")" * 500)
    with pytest.raises(FilterError, match="nests deeper"):
        parse("not " * 500 + "a")


# ---- validate ------------------------------------------------------------------------

SCHEMA = IndexSchema(name="docs", fields=(
    Field("id", "Edm.String", key=True, filterable=True),
    Field("content", "Edm.String", searchable=True),
    Field("rating", "Edm.Int32", filterable=True),
    Field("confidence_score", "Edm.Double", filterable=True),
    Field("is_table", "Edm.Boolean", filterable=True),
    Field("last_updated", "Edm.DateTimeOffset", filterable=True),
    Field("group_ids", "Collection(Edm.String)", filterable=True),
    Field("embedding", "Collection(Edm.Single)", filterable=True, dimensions=3),
))
FILTERABLE = "id, rating, confidence_score, is_table, last_updated, group_ids"


def test_validate_accepts_good_filters():
    for text in [
        "group_ids/any(g: search.in(g, 'hr, sales')) and confidence_score ge 0.85",
        "rating gt 3 and not is_table and last_updated ge 2024-01-01T00:00:00Z",
        "confidence_score gt 1", "rating eq null", "id eq 'x'", "group_ids/any()",
    ]:
        validate(parse(text), SCHEMA)
    validate("rating lt 5", SCHEMA)  # text accepted too


@pytest.mark.parametrize(("text", "fragment"), [
    ("nope eq 1", "index 'docs' has no field 'nope'; filterable fields: " + FILTERABLE),
    ("content eq 'x'", "field 'content' is not filterable in index 'docs'; filterable fields: "
                       + FILTERABLE),
    ("embedding/any()", "vector field 'embedding' cannot be used in a filter"),
    ("rating/any()", "any() needs a collection field, but 'rating' is Edm.Int32"),
    ("group_ids eq 'hr'", "field 'group_ids' is a collection"),
    ("rating eq '5'", "cannot compare 'rating' (Edm.Int32) with the Edm.String constant '5'"),
    ("id eq 5", "cannot compare 'id' (Edm.String) with the Edm.Int64 constant 5"),
    ("last_updated ge '2024-01-01'", "(Edm.DateTimeOffset) with the Edm.String"),
    ("rating", "needs an Edm.Boolean field"),
    ("group_ids/any(g: g eq 5)", "cannot compare 'g' (Edm.String) with the Edm.Int64 constant 5"),
    ("search.in(rating, '1 2')", "search.in needs an Edm.String field"),
    ("rating/x eq 1", "has no sub-fields"),
])
def test_validate_errors(text, fragment):
    with pytest.raises(FilterError) as err:
        validate(parse(text), SCHEMA)
    assert fragment in str(err.value)


# ---- fields_of, clauses, drop_clause, conjoin -----------------------------------------

def test_fields_of_resolves_lambda_variables():
    e = parse("group_ids/any(g: search.in(g, 'a')) and (rating gt 3 or not is_table) "
              "and rooms/any(r: r/tags/any(t: t eq 'x'))")
    assert fields_of(e) == frozenset({"group_ids", "rating", "is_table", "rooms"})


def test_clauses_flatten_top_level_ands():
    e = parse("(a eq 1 and b eq 2) and (c eq 3 or d eq 4) and tags/any(t: t eq 'x')")
    cs = clauses(e)
    assert [c.text for c in cs] == ["a eq 1", "b eq 2", "c eq 3 or d eq 4", "tags/any(t: t eq 'x')"]
    assert [c.index for c in cs] == [0, 1, 2, 3]
    assert cs[2].fields == frozenset({"c", "d"})
    assert cs[3] == Clause(3, parse("tags/any(t: t eq 'x')"), "tags/any(t: t eq 'x')",
                           frozenset({"tags"}))
    assert len(clauses(parse("a eq 1 or b eq 2"))) == 1


def test_drop_clause_and_conjoin():
    e = parse("a eq 1 and b eq 2 and c eq 3")
    assert render(drop_clause(e, 1)) == "a eq 1 and c eq 3"  # type: ignore[arg-type]
    assert render(drop_clause(e, 0)) == "b eq 2 and c eq 3"  # type: ignore[arg-type]
    assert drop_clause(parse("a eq 1"), 0) is None
    assert drop_clause(parse("a eq 1 and b eq 2"), 0) == parse("b eq 2")
    with pytest.raises(IndexError):
        drop_clause(e, 3)
    assert conjoin([]) is None
    assert conjoin([None, parse("a eq 1")]) == parse("a eq 1")
    both = conjoin([parse("a eq 1 and b eq 2"), parse("c eq 3 or d eq 4")])
    assert render(both) == "a eq 1 and b eq 2 and (c eq 3 or d eq 4)"  # type: ignore[arg-type]


# ---- quote / search_in_any -----------------------------------------------------------

def test_search_in_any_basic():
    text = search_in_any("group_ids", ["hr", "sales"])
    assert text == "group_ids/any(g: search.in(g, 'hr|sales', '|'))"
    assert evaluate(text, {"group_ids": ["sales"]})
    assert not evaluate(text, {"group_ids": ["it"]})
    validate(text, SCHEMA)


def test_search_in_any_hostile_value_stays_one_literal():
    hostile = "x') or true or ('"
    text = search_in_any("group_ids", [hostile])
    assert text == "group_ids/any(g: search.in(g, 'x'') or true or (''', '|'))"
    e = parse(text)
    assert isinstance(e, Lambda) and isinstance(e.body, SearchIn)
    assert e.body.values == (hostile,)
    assert not evaluate(e, {"group_ids": ["sales"]})
    assert evaluate(e, {"group_ids": [hostile]})


def test_search_in_any_values_with_delimiters_are_not_split():
    values = ["human resources", "a,b", "x|y", "p;q"]
    text = search_in_any("group_ids", values, var="grp")
    assert text == "group_ids/any(grp: search.in(grp, 'human resources~a,b~x|y~p;q', '~'))"
    e = parse(text)
    assert isinstance(e, Lambda) and isinstance(e.body, SearchIn)
    assert e.body.values == tuple(values)
    assert evaluate(e, {"group_ids": ["a,b"]})
    assert not evaluate(e, {"group_ids": ["a"]})
    assert not evaluate(e, {"group_ids": ["human"]})


def test_search_in_any_empty_matches_nothing():
    assert search_in_any("group_ids", []) == MATCH_NOTHING == "false"
    assert search_in_any("group_ids", [""]) == "false"
    assert not evaluate(search_in_any("group_ids", []), {"group_ids": ["hr"]})
    assert not evaluate(search_in_any("group_ids", []), {"group_ids": [""]})


def test_search_in_any_rejects_bad_arguments():
    with pytest.raises(FilterError):
        search_in_any("group ids", ["a"])
    with pytest.raises(FilterError):
        search_in_any("group_ids", "hr")  # a lone string is not a list of values
    with pytest.raises(FilterError):
        search_in_any("group_ids", ["a"], var="and")
