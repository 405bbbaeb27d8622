"""ragdiag.policy.profile: loading a policy file, building requests, errors with lines, round trip."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ragdiag import odata
from ragdiag.errors import ConfigError, InputDataError
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.policy import (
    Identity,
    Policy,
    Profile,
    Route,
    VectorQuerySpec,
    dump_policy,
    dump_profile,
    load_policy,
    loads_policy,
)
from ragdiag.sample.schema import sample_schema

POLICY = """\
[policy]
name = "tuned"
description = "hand-written test policy"
security_field = "group_ids"

[routes]
fact = "fact"
definition = "definition"
exact_id = "exact"
default = "fact"

[defaults]
query_type = "semantic"
semantic_configuration = "default"
top = 10

[profiles.fact]
description = "facts from evidence records"
search_fields = ["content", "title", "section_title"]
keyword_text = "keywords"
semantic_text = "verbatim"
filter = "level eq 'evidence'"
vector_filter_mode = "preFilter"
max_text_recall_size = 300
scoring_profile = "quality_boost"
scoring_parameters = ["entities-{entities}"]
captions = "extractive"
answers = "extractive|count-3"
  [[profiles.fact.vector_queries]]
  fields = ["content_vector"]
  k = 50
  exhaustive = false
  weight = 1.0
  text = "verbatim"
  [[profiles.fact.vector_queries]]
  fields = ["summary_vector"]
  k = 30
  weight = 0.5
  text = "keyword_text"
  filter_override = "level eq 'section' or level eq 'document'"

[profiles.definition]
keyword_text = "none"
semantic_text = "keywords"
top = 5
  [[profiles.definition.vector_queries]]
  fields = ["summary_vector", "title_vector"]
  k = 20
  filter_override = "level eq 'document'"
  override_security = false

[profiles.exact]
query_type = "simple"
search_fields = ["content", "title"]
search_mode = "all"
keyword_text = "keywords"
semantic_text = "verbatim"
filter = ""
security_trimming = true
"""

QUESTION = "What is the notice period of Nordlicht GmbH?"
KEYWORDS = "notice period Nordlicht GmbH"
ANNA = Identity("anna", ("all-staff", "sales"))
ANNA_CLAUSE = "group_ids/any(g: search.in(g, 'all-staff|sales', '|'))"


def write(tmp_path: Path, text: str, name: str = "profiles.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle` (the expected error line)."""
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in the test text")


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    return load_policy(write(tmp_path, POLICY))


# ---- building requests -------------------------------------------------------------------

def test_fact_profile_builds_exactly_the_expected_request(policy):
    route, request = policy.request_for(QUESTION, ANNA, entities=["nordlicht-gmbh"])
    assert route == Route("fact", policy.profiles["fact"], "fact.default")
    assert request == SearchRequest(
        search=KEYWORDS,
        search_fields=("content", "title", "section_title"),
        query_type="semantic",
        semantic_configuration="default",
        semantic_query=QUESTION,
        vector_queries=(
            VectorQuery(fields=("content_vector",), text=QUESTION, k=50, exhaustive=False, weight=1.0),
            VectorQuery(fields=("summary_vector",), text=KEYWORDS, k=30, weight=0.5,
                        filter_override=f"{ANNA_CLAUSE} and (level eq 'section' or level eq 'document')"),
        ),
        vector_filter_mode="preFilter",
        max_text_recall_size=300,
        filter=f"{ANNA_CLAUSE} and level eq 'evidence'",
        scoring_profile="quality_boost",
        scoring_parameters=("entities-nordlicht-gmbh",),
        top=10,
        captions="extractive",
        answers="extractive|count-3",
    )


def test_keyword_text_none_and_override_without_security(policy):
    route, request = policy.request_for("What does force majeure mean?", ANNA)
    assert (route.intent, route.profile.name, route.rule) == ("definition", "definition", "definition.cue")
    assert request == SearchRequest(
        search=None,
        query_type="semantic",
        semantic_configuration="default",
        semantic_query="force majeure",
        vector_queries=(VectorQuery(fields=("summary_vector", "title_vector"),
                                    text="What does force majeure mean?", k=20,
                                    filter_override="level eq 'document'"),),
        filter=ANNA_CLAUSE,
        top=5,
    )


def test_explicit_intent_skips_the_classifier_and_simple_query_has_no_semantic_query(policy):
    route, request = policy.request_for("What does force majeure mean?", ANNA, intent="exact_id")
    assert (route.intent, route.profile.name, route.rule, route.fallback) == (
        "exact_id", "exact", "explicit", False)
    assert request == SearchRequest(
        search="force majeure", search_fields=("content", "title"), query_type="simple",
        search_mode="all", semantic_configuration="default", filter=ANNA_CLAUSE, top=10)


def test_unrouted_intent_uses_the_default_route(policy):
    route = policy.route("Compare the SLA of Nordlicht GmbH and Südwind AG")
    assert (route.intent, route.profile_name, route.fallback) == ("comparison", "fact", True)


def test_no_identity_means_no_security_clause(policy):
    request = policy.profiles["fact"].build(QUESTION, None, security_field="group_ids")
    assert request.filter == "level eq 'evidence'"
    assert request.vector_queries[1].filter_override == "level eq 'section' or level eq 'document'"


def test_security_trimming_false_drops_the_clause(policy):
    profile = policy.profiles["exact"].replace(security_trimming=False)
    assert profile.build("x", ANNA, security_field="group_ids").filter is None


def test_identity_clause_comes_first_and_never_from_the_question(policy):
    request = policy.profiles["fact"].build("group_ids eq 'hr' or true", ANNA, security_field="group_ids")
    assert request.filter.startswith(ANNA_CLAUSE + " and ")
    assert "hr" not in request.filter


def test_hostile_group_name_stays_restrictive(policy):
    hostile = Identity("mallory", ("sales') or true or ('x",))
    request = policy.profiles["fact"].build(QUESTION, hostile, security_field="group_ids")
    expected_clause = "group_ids/any(g: search.in(g, 'sales'') or true or (''x', '|'))"
    assert request.filter == f"{expected_clause} and level eq 'evidence'"
    expr = odata.parse(request.filter)
    assert odata.evaluate(expr, {"group_ids": ["other"], "level": "evidence"}) is False
    assert odata.evaluate(expr, {"group_ids": ["sales"], "level": "evidence"}) is False
    assert odata.evaluate(expr, {"group_ids": ["sales') or true or ('x"], "level": "evidence"}) is True
    override = request.vector_queries[1].filter_override
    assert odata.evaluate(override, {"group_ids": ["other"], "level": "section"}) is False


def test_group_with_space_and_comma_stays_one_value(policy):
    ident = Identity("eva", ("Sales, EMEA", "all staff"))
    request = policy.profiles["exact"].build("x", ident, security_field="group_ids")
    assert request.filter == "group_ids/any(g: search.in(g, 'Sales, EMEA|all staff', '|'))"
    assert odata.evaluate(request.filter, {"group_ids": ["Sales, EMEA"]}) is True
    assert odata.evaluate(request.filter, {"group_ids": ["all staff"]}) is True
    assert odata.evaluate(request.filter, {"group_ids": ["Sales"]}) is False
    assert odata.evaluate(request.filter, {"group_ids": ["EMEA"]}) is False


def test_identity_without_groups_sees_nothing(policy):
    request = policy.profiles["exact"].build("x", Identity("nobody", ()), security_field="group_ids")
    assert request.filter == "false"


def test_identity_groups_must_be_a_list():
    with pytest.raises(InputDataError, match="groups must be a list"):
        Identity("anna", "sales")  # type: ignore[arg-type]


@pytest.mark.parametrize(("semantic_text", "query_type", "expected"), [
    ("verbatim", "semantic", QUESTION),
    ("keywords", "semantic", KEYWORDS),
    ("keyword_text", "semantic", None),  # Azure: absent semanticQuery = the search text
    ("verbatim", "simple", None),  # only semantic queries carry a semantic query
])
def test_semantic_text_modes(semantic_text, query_type, expected):
    profile = Profile("p", query_type=query_type, keyword_text="keywords", semantic_text=semantic_text)
    request = profile.build(QUESTION, None, security_field="group_ids")
    assert request.search == KEYWORDS
    assert request.semantic_query == expected


@pytest.mark.parametrize(("keyword_text", "vector_text", "search", "vector"), [
    ("verbatim", "keywords", QUESTION, KEYWORDS),
    ("keywords", "verbatim", KEYWORDS, QUESTION),
    ("keywords", "keyword_text", KEYWORDS, KEYWORDS),
    ("verbatim", "keyword_text", QUESTION, QUESTION),
    ("none", "verbatim", None, QUESTION),
])
def test_channel_text_modes(keyword_text, vector_text, search, vector):
    profile = Profile("p", keyword_text=keyword_text,
                      vector_queries=(VectorQuerySpec(("content_vector",), text=vector_text),))
    request = profile.build(QUESTION, None, security_field="group_ids")
    assert (request.search, request.vector_queries[0].text) == (search, vector)


def test_entities_template_omitted_without_entities(policy):
    fact = policy.profiles["fact"]
    assert fact.build(QUESTION, ANNA, security_field="group_ids").scoring_parameters == ()
    assert fact.scoring_parameters_for(["", ""]) == ()
    assert fact.scoring_parameters_for(["a", "b", "a"]) == ("entities-a,b",)
    both = fact.replace(scoring_parameters=("entities-{entities}", "region-emea"))
    assert both.scoring_parameters_for([]) == ("region-emea",)
    assert both.scoring_parameters_for(["x"]) == ("entities-x", "region-emea")


def test_top_level_or_filter_is_parenthesised_next_to_the_identity_clause():
    p = Profile("p", filter="level eq 'a' or level eq 'b'")
    f = p.build("q", ANNA, security_field="group_ids").filter
    assert f == f"{ANNA_CLAUSE} and (level eq 'a' or level eq 'b')"
    assert odata.evaluate(f, {"group_ids": ["hr"], "level": "b"}) is False
    wrapped = Profile("p", filter="(level eq 'a') or (level eq 'b')")
    assert wrapped.build("q", ANNA, security_field="group_ids").filter == (
        f"{ANNA_CLAUSE} and ((level eq 'a') or (level eq 'b'))")
    already = Profile("p", filter="(level eq 'a' or level eq 'b')")
    assert already.build("q", ANNA, security_field="group_ids").filter == (
        f"{ANNA_CLAUSE} and (level eq 'a' or level eq 'b')")


# ---- [defaults] ----------------------------------------------------------------------------

def test_defaults_are_inherited_and_overridden(policy):
    fact, definition, exact = (policy.profiles[n] for n in ("fact", "definition", "exact"))
    assert fact.query_type == definition.query_type == "semantic"
    assert exact.query_type == "simple"  # overridden
    assert (fact.top, definition.top, exact.top) == (10, 5, 10)
    assert exact.filter is None  # "" clears an optional value
    assert definition.semantic_configuration == "default"


def test_defaults_can_hold_vector_queries(tmp_path):
    text = textwrap.dedent("""\
        [defaults]
        [[defaults.vector_queries]]
        fields = ["content_vector"]
        k = 7

        [profiles.a]
        [profiles.b]
        vector_queries = []
        """)
    pol = load_policy(write(tmp_path, text))
    assert pol.profiles["a"].vector_queries == (VectorQuerySpec(("content_vector",), k=7),)
    assert pol.profiles["b"].vector_queries == ()
    assert pol.name == "profiles"  # no [policy] table: the file's stem


def test_profile_source_names_file_and_header_line(policy, tmp_path):
    assert policy.profiles["definition"].source == (
        str(tmp_path / "profiles.toml"), line_of(POLICY, "[profiles.definition]"))
    assert policy.profiles["fact"].vector_queries[1].source[1] == 35  # its second [[...]] header


# ---- errors name file, line and key ---------------------------------------------------------

def error_for(tmp_path: Path, text: str) -> ConfigError:
    path = write(tmp_path, text, "bad-policy.toml")
    with pytest.raises(ConfigError) as info:
        load_policy(path)
    err = info.value
    assert "bad-policy.toml" in str(err)
    assert err.path == str(path)
    return err


def test_unknown_key_lists_allowed_keys(tmp_path):
    text = POLICY.replace("top = 5\n", "topp = 5\n")
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "topp = 5")
    assert f"bad-policy.toml:{err.line}:" in str(err)
    assert "unknown key 'topp'" in str(err)
    assert "allowed keys:" in str(err) and "max_text_recall_size" in str(err)
    assert err.key == "profiles.definition.topp"


def test_unknown_key_in_vector_query(tmp_path):
    text = POLICY.replace("  k = 30\n", "  k = 30\n  kk = 3\n")
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "kk = 3")
    assert "[[profiles.fact.vector_queries]] #2" in str(err)
    assert "override_security" in str(err)


def test_bad_enum_lists_allowed_values(tmp_path):
    text = POLICY.replace('query_type = "simple"', 'query_type = "semntic"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'query_type = "semntic"')
    assert "must be one of simple, full, semantic; got 'semntic'" in str(err)


def test_bad_enum_in_defaults_points_at_defaults(tmp_path):
    text = POLICY.replace('query_type = "semantic"', 'query_type = "hybrid"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'query_type = "hybrid"')
    assert "[defaults]" in str(err)


def test_bad_vector_text_mode(tmp_path):
    text = POLICY.replace('  text = "keyword_text"', '  text = "both"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'text = "both"')
    assert "verbatim, keywords, keyword_text" in str(err)


def test_route_to_missing_profile(tmp_path):
    text = POLICY.replace('definition = "definition"', 'definition = "defn"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'definition = "defn"')
    assert "'defn', which is not defined; profiles: fact, definition, exact" in str(err)


def test_route_for_unknown_intent(tmp_path):
    text = POLICY.replace('fact = "fact"', 'facts = "fact"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'facts = "fact"')
    assert "intents: fact, definition" in str(err)


def test_default_route_to_missing_profile(tmp_path):
    text = POLICY.replace('default = "fact"', 'default = "nope"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'default = "nope"')


def test_filter_that_does_not_parse(tmp_path):
    text = POLICY.replace("filter = \"level eq 'evidence'\"", "filter = \"level eq 'evidence' and\"")
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "filter = \"level eq 'evidence' and\"")
    assert "does not parse as OData" in str(err)
    assert "at position" in str(err)  # the OData error text is included


def test_filter_override_that_does_not_parse(tmp_path):
    text = POLICY.replace("filter_override = \"level eq 'document'\"", "filter_override = \"level eq\"")
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "filter_override = \"level eq\"")


@pytest.mark.parametrize(("old", "new", "message"), [
    ("  k = 20\n", "  k = 0\n", "must be >= 1, got 0"),
    ("  weight = 0.5\n", "  weight = 0\n", "must be > 0, got 0"),
    ("top = 5\n", "top = -1\n", "must be >= 0, got -1"),
    ("max_text_recall_size = 300\n", "max_text_recall_size = 10001\n",
     "must be between 1 and 10000, got 10001"),
    ("max_text_recall_size = 300\n", "max_text_recall_size = 0\n", "must be between 1 and 10000"),
    ("top = 5\n", 'top = "5"\n', 'must be an integer, got a string ("5")'),
    ("top = 5\n", "top = 5.0\n", "must be an integer, got a float"),
    ("top = 5\n", "top = true\n", "must be an integer, got a boolean"),
    ("exhaustive = false\n", 'exhaustive = "no"\n', "must be true or false"),
    ('search_fields = ["content", "title"]\n', 'search_fields = "content"\n', "array of field names"),
    ('scoring_parameters = ["entities-{entities}"]\n', 'scoring_parameters = ["entities-{entity}"]\n',
     "available placeholders: {entities}"),
    ('scoring_parameters = ["entities-{entities}"]\n', 'scoring_parameters = ["{entities}"]\n',
     "must look like 'name-value'"),
])
def test_value_errors_point_at_the_key(tmp_path, old, new, message):
    assert old in POLICY
    text = POLICY.replace(old, new, 1)
    err = error_for(tmp_path, text)
    assert message in str(err)
    assert err.line == line_of(text, new.strip())


def test_keyword_text_none_needs_a_semantic_text(tmp_path):
    text = POLICY.replace('semantic_text = "keywords"', 'semantic_text = "keyword_text"')
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, 'semantic_text = "keyword_text"')
    assert "gives the reranker no text" in str(err)


def test_keyword_text_none_without_vectors_searches_nothing(tmp_path):
    text = 'query_type = "simple"\n'
    text = "[profiles.p]\n" + text + 'keyword_text = "none"\n'
    err = error_for(tmp_path, text)
    assert err.line == 3
    assert "searches nothing" in str(err)


def test_vector_query_needs_fields(tmp_path):
    text = "[profiles.p]\n\n[[profiles.p.vector_queries]]\nk = 5\n"
    err = error_for(tmp_path, text)
    assert err.line == 3
    assert "needs 'fields'" in str(err)


def test_toml_syntax_error_carries_tomllibs_line(tmp_path):
    text = POLICY.replace("top = 5\n", "top = = 5\n")
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "top = = 5")
    assert "TOML syntax error" in str(err) and f"line {err.line}" in str(err)


def test_unknown_top_level_table(tmp_path):
    text = POLICY + "\n[profile.typo]\ntop = 1\n"
    err = error_for(tmp_path, text)
    assert err.line == line_of(text, "[profile.typo]")
    assert "allowed keys: policy, routes, defaults, profiles" in str(err)


def test_no_profiles(tmp_path):
    err = error_for(tmp_path, '[policy]\nname = "x"\n')
    assert "no profiles defined" in str(err)


def test_lines_found_in_inline_and_multiline_forms(tmp_path):
    text = textwrap.dedent("""\
        [profiles.p]
        search_fields = [
          "content",
          "title",
        ]
        vector_queries = [
          { fields = ["content_vector"], k = 0 },
        ]
        top = -3
        """)
    err = error_for(tmp_path, text)
    assert err.line == 6  # inline tables: the `vector_queries =` line
    err = error_for(tmp_path, text.replace("k = 0", "k = 1"))
    assert err.line == 9


def test_missing_file():
    with pytest.raises(ConfigError, match="not found"):
        load_policy("/nonexistent/profiles.toml")


def test_programmatic_profiles_are_checked_too():
    with pytest.raises(ConfigError, match="'top' must be >= 0"):
        Profile("p", top=-1)
    with pytest.raises(ConfigError, match="'k' must be >= 1"):
        VectorQuerySpec(("v",), k=0)
    with pytest.raises(ConfigError, match="'fields' needs at least one field"):
        VectorQuerySpec(())
    assert VectorQuerySpec("v").fields == ("v",)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="does not parse as OData"):
        Profile("p").replace(filter="level eq")


def test_route_without_default_and_several_profiles_is_an_error(tmp_path):
    pol = load_policy(write(tmp_path, "[routes]\nfact = \"a\"\n[profiles.a]\n[profiles.b]\n"))
    assert pol.route("What is the notice period?").profile_name == "a"
    with pytest.raises(ConfigError, match="no default route"):
        pol.route_intent("table")


# ---- validation against an index ------------------------------------------------------------

def test_policy_is_valid_on_the_sample_index(policy):
    assert policy.validate_against(sample_schema()) == []


def test_validate_against_reports_problems(policy):
    bad = policy.with_profile(policy.profiles["fact"].replace(
        search_fields=("content", "nope", "group_ids"),
        semantic_configuration="missing",
        scoring_profile="quality_boost",
        scoring_parameters=("region-{entities}",),
        filter="valid_to lt 5 and summary eq 'x'",
        vector_queries=(VectorQuerySpec(("content",), filter_override="nope eq 1"),),
    ))
    problems = bad.validate_against(sample_schema())
    text = "\n".join(problems)
    assert all("profile 'fact'" in p for p in problems)
    assert "search field 'nope' is not in index 'muster'" in text
    assert "search field 'group_ids' is not searchable" in text
    assert "no semantic configuration 'missing'" in text
    assert "scoring parameter 'region' is not a parameter of scoring profile 'quality_boost'" in text
    assert "'content' is not a vector field" in text
    assert "filter_override:" in text and "nope" in text
    assert "filter:" in text and "summary" in text
    assert len(problems) == 7


def test_validate_against_reports_missing_security_field(policy):
    from dataclasses import replace
    problems = replace(policy, security_field="acl").validate_against(sample_schema())
    assert any("security field 'acl' is not in index 'muster'" in p for p in problems)
    problems = replace(policy, security_field="level").validate_against(sample_schema())
    assert any("not Collection(Edm.String)" in p for p in problems)


def test_validate_against_reports_semantic_only_options():
    p = Profile("p", captions="extractive", query_rewrites="generative")
    problems = p.validate_against(sample_schema())
    assert any("'captions' needs query_type = 'semantic'" in m for m in problems)
    assert any("query_rewrites needs query_language" in m for m in problems)


# ---- dump / load round trip ----------------------------------------------------------------

def test_dump_load_round_trip(policy, tmp_path):
    text = dump_policy(policy)
    again = load_policy(write(tmp_path, text, "dumped.toml"))
    assert again == policy
    assert again.profiles["fact"].source[1] == line_of(text, "[profiles.fact]")
    assert dump_policy(again) == text


def test_dump_profile_round_trip(policy, tmp_path):
    for profile in policy.profiles.values():
        loaded = load_policy(write(tmp_path, dump_profile(profile), "one.toml"))
        assert loaded.profiles == {profile.name: profile}


def test_tuned_profile_round_trip(policy, tmp_path):
    tuned = policy.with_profile(policy.profiles["fact"].replace(
        top=25, max_text_recall_size=None, description='quote " and \\ backslash',
        vector_queries=(VectorQuerySpec(("title_vector",), k=12, weight=2.5, exhaustive=True),)))
    again = loads_policy(dump_policy(tuned), path="mem.toml")
    assert again == tuned
    assert again != policy


def test_odd_profile_names_round_trip(tmp_path):
    pol = Policy(name="x", description="", profiles={"my profile.v2": Profile("my profile.v2", top=3)},
                 routes={}, default_route="my profile.v2")
    text = dump_policy(pol)
    assert load_policy(write(tmp_path, text)) == pol
    err = error_for(tmp_path, text.replace("top = 3", "top = -3"))
    assert err.line == line_of(text, "top = 3")
