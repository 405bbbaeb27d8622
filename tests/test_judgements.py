"""Goldset judgements as people give them (`ragdiag.inputs.judgements`): a document, a section
(anchor, title or a heading inside a chunk), a page, a page-field value; resolved to graded chunk
keys on records made here, and refused with the nearest names when they resolve to nothing."""

from __future__ import annotations

import json

import pytest

from ragdiag.chunks.fields import ChunkFields
from ragdiag.errors import InputValidationError
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.inputs.judgements import MemoryRecords, TargetRecords, resolve_goldset, slug
from ragdiag.model.schema import INT32, STRING, Field, IndexSchema

SCHEMA = IndexSchema(name="docs", fields=(
    Field("key", STRING, key=True, filterable=True), Field("source_file", STRING, filterable=True),
    Field("section_title", STRING, searchable=True), Field("page", INT32, filterable=True),
    Field("position", INT32, filterable=True), Field("content", STRING, searchable=True)))
FIELDS = ChunkFields.from_schema(SCHEMA)


def rec(key, doc, section, position, content, page=1):
    return {"key": key, "source_file": doc, "section_title": section, "page": page, "position": position,
            "content": content}


RECORDS = [
    rec("pp-1", "tutorial/path-params.md", "", 0, "You can declare path parameters."),
    rec("pp-2", "tutorial/path-params.md", "Order matters", 1, "Declare /users/me before /users/{user_id}."),
    rec("pp-3", "tutorial/path-params.md", "Order matters", 2, "Path operations are evaluated in order."),
    rec("pp-4", "tutorial/path-params.md", "Predefined values", 3, "Use a standard Python Enum."),
    rec("pp-5", "tutorial/path-params.md", "Predefined values", 4, "Create an Enum class\nInherit from str and Enum."),
    rec("pp-6", "tutorial/path-params.md", "Predefined values", 5, "The values are then documented."),
    rec("pp-7", "tutorial/path-params.md", "Predefined values", 6, "Working with Python enumerations\nCompare them."),
    rec("q-1", "tutorial/query.md", "Defaults", 0, "Query parameters can have default values."),
    rec("man-7", "manual.pdf", "Warranty", 0, "The warranty lasts two years.", page=7),
    rec("man-8", "manual.pdf", "Claims", 1, "Claims go to the dealer.", page=8),
    rec("dup-a", "a/index.md", "Intro", 0, "A."),
    rec("dup-b", "b/index.md", "Intro", 0, "B."),
    rec("ueberblick-1", "de/überblick.md", "Eigentümerschaft", 0, "Regeln der Eigentümerschaft."),
]


def resolve(*cases, records=RECORDS, fields=FIELDS):
    return resolve_goldset(Goldset(cases=tuple(cases)), MemoryRecords(records, "key"), fields)


def case(cid, sources, contains=(), **kw):
    return GoldCase(id=cid, question=f"question {cid}?", expect_sources=tuple(sources),
                    expect_answer_contains=tuple(contains), **kw)


def test_a_section_by_anchor_resolves_to_the_chunks_of_that_section():
    gs, problems, res = resolve(case("order", [("tutorial/path-params.md#order-matters", 1)]))
    assert problems == []
    assert gs["order"].expect_sources == (("pp-2", 1), ("pp-3", 1))
    assert gs["order"].judged_sources == (("tutorial/path-params.md#order-matters", 1),)
    assert [(r.how, r.keys) for r in res] == [("section", (("pp-2", 1), ("pp-3", 1)))]


def test_the_chunk_holding_the_expected_answer_is_graded_highest():
    gs, _, res = resolve(case("order", [("path-params.md#Order matters", 2)], contains=["evaluated in order"]))
    # a path suffix names the document, the title names the section; pp-3 holds the answer: 2 + 1
    assert gs["order"].expect_sources == (("pp-2", 2), ("pp-3", 3))
    assert res[0].answer_keys == ("pp-3",)


def test_a_whole_document_and_a_page():
    gs, problems, _ = resolve(case("doc", [("tutorial/query.md", 1)]), case("page", [("manual.pdf#page=8", 1)]))
    assert problems == []
    assert gs["doc"].expect_sources == (("q-1", 1),)
    assert gs["page"].expect_sources == (("man-8", 1),)


def test_a_heading_inside_a_chunk_takes_that_chunk_up_to_the_next_heading():
    gs, _, res = resolve(case("enum", [("tutorial/path-params.md#create-an-enum-class", 1)]))
    # pp-6 continues the sub-section; pp-7 opens with the next heading
    assert gs["enum"].expect_sources == (("pp-5", 1), ("pp-6", 1))
    assert res[0].how == "heading"
    gs, _, _ = resolve(case("next", [("tutorial/path-params.md#working-with-python-enumerations", 1)]))
    assert gs["next"].expect_sources == (("pp-7", 1),)


def test_umlaut_anchors_match_with_and_without_folding():
    assert slug("Eigentümerschaft") == "eigentümerschaft" and slug("Eigentümerschaft", fold=True) == "eigentumerschaft"
    for name in ("de/überblick.md#eigentümerschaft", "de/überblick.md#eigentumerschaft"):
        gs, problems, _ = resolve(case("de", [(name, 1)]))
        assert problems == [] and gs["de"].expect_sources == (("ueberblick-1", 1),), name


def test_a_key_of_the_index_wins_over_any_name_and_keeps_its_grade():
    gs, _, res = resolve(case("k", [("pp-4", 3), ("tutorial/query.md", 1)]))
    assert gs["k"].expect_sources == (("pp-4", 3), ("q-1", 1))
    assert [r.name for r in res] == ["tutorial/query.md"]


def test_cases_with_keys_only_are_left_as_they_are():
    c = case("k", [("pp-4", 3)])
    gs, problems, res = resolve(c)
    assert gs["k"] is c and problems == [] and res == []


def test_a_page_field_value_with_a_fragment_is_matched_whole():
    records = [{"key": "c1", "sourcefile": "Benefits.pdf", "sourcepage": "Benefits.pdf#page=2", "content": "x"},
               {"key": "c2", "sourcefile": "Benefits.pdf", "sourcepage": "Benefits.pdf#page=3", "content": "y"}]
    schema = IndexSchema(name="rag", fields=(Field("key", STRING, key=True), Field("sourcefile", STRING),
                                             Field("sourcepage", STRING), Field("content", STRING, searchable=True)))
    gs, problems, res = resolve(case("p", [("Benefits.pdf#page=2", 1)]), records=records,
                                fields=ChunkFields.from_schema(schema))
    assert problems == [] and gs["p"].expect_sources == (("c1", 1),) and res[0].how == "value"


@pytest.mark.parametrize("name, message", [
    ("tutorial/path-params.md#order-matter", "document 'tutorial/path-params.md' has no section or heading "
                                             "'order-matter' (did you mean #order-matters?)"),
    ("tutorial/path-param.md", "names no document of the index"),
    ("manual.pdf#page=9", "document 'manual.pdf' has no page 9 (pages 7-8)"),
    ("index.md", "is ambiguous: 'index.md' matches 2 documents (a/index.md, b/index.md)"),
])
def test_a_name_that_resolves_to_nothing_is_a_problem_with_the_nearest_names(name, message):
    c = GoldCase(id="x", question="q?", expect_sources=((name, 1),), path="gold.yaml", line=4,
                 key_lines=(("expect_source", 6),))
    gs, problems, _ = resolve(c)
    assert len(problems) == 1
    path, line, text = problems[0]
    assert (path, line) == ("gold.yaml", 6) and text.startswith(f"case 'x': expected source '{name}'")
    assert message in text, text


def test_an_index_without_a_document_field_says_which_roles_it_has():
    schema = IndexSchema(name="ir", fields=(Field("key", STRING, key=True), Field("content", STRING, searchable=True)))
    _, problems, _ = resolve(case("x", [("doc.md#a", 1)]), records=[{"key": "d1", "content": "x"}],
                             fields=ChunkFields.from_schema(schema))
    assert "the index has no document field to read names from" in problems[0][2]


def test_forbidden_sources_resolve_without_grades():
    c = GoldCase(id="f", question="q?", as_user="u", expect_refused=True, forbidden_sources=("tutorial/query.md",))
    gs, problems, res = resolve(c)
    assert problems == [] and gs["f"].forbidden_sources == ("q-1",) and res[0].forbidden


def test_the_same_resolution_from_an_opened_target(tmp_path):
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget

    target = LocalTarget.build(RECORDS, LocalIndexSpec("docs", SCHEMA, {}), index_dir=tmp_path / "idx",
                               progress=False)
    gs, problems, _ = resolve_goldset(Goldset(cases=(case("order", [("tutorial/path-params.md#order-matters", 1)],
                                                          contains=["evaluated"]),)),
                                      TargetRecords(target, "key"), FIELDS)
    assert problems == [] and gs["order"].expect_sources == (("pp-2", 1), ("pp-3", 2))


# ---- in the audit: resolved before anything is embedded ---------------------------------------------


def _folder(tmp_path, goldset_yaml):
    (tmp_path / "schema.json").write_text(json.dumps({**SCHEMA.to_azure()}))
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS))
    (tmp_path / "goldset.yaml").write_text(goldset_yaml)
    (tmp_path / "profiles.toml").write_text('[policy]\nname = "p"\n[routes]\ndefault = "k"\n[profiles.k]\n'
                                            'search_fields = ["content"]\n')
    (tmp_path / "audit.toml").write_text('[target]\nkind = "local"\nrecords = "records.jsonl"\n'
                                         'schema = "schema.json"\n[inputs]\nprofiles = "profiles.toml"\n'
                                         'goldset = "goldset.yaml"\n')
    return tmp_path / "audit.toml"


def test_a_bad_name_is_refused_before_the_index_is_built(tmp_path, monkeypatch):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.targets.local.kind import LocalKind

    def never(*a, **k):
        raise AssertionError("the index was opened (and would have been embedded)")

    monkeypatch.setattr(LocalKind, "open", never)
    config = _folder(tmp_path, "- id: a\n  question: q?\n  expect_source: tutorial/path-params.md#order-matter\n")
    with pytest.raises(InputValidationError) as exc:
        build_context(load_config(config), progress=False)
    assert "goldset.yaml:3: case 'a': expected source 'tutorial/path-params.md#order-matter'" in str(exc.value)


def test_a_good_name_reaches_the_checks_as_chunk_keys(tmp_path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    config = _folder(tmp_path, "- id: a\n  question: Which path first?\n  expect_source: path-params.md#order-matters\n"
                               "  expect_answer_contains: [/users/me]\n")
    ctx = build_context(load_config(config), progress=False, cache_dir=tmp_path / "cache")
    assert ctx.goldset["a"].expect_sources == (("pp-2", 2), ("pp-3", 1))
    assert [r.name for r in ctx.resolutions] == ["path-params.md#order-matters"]
