"""The new loaders' error shapes: records, the entities lexicon, the index definition."""

from __future__ import annotations

import json

import pytest

from ragdiag.errors import ConfigError, InputDataError
from ragdiag.inputs.entities import entity_matcher, load_entities
from ragdiag.inputs.records import load_records, parse_records
from ragdiag.model.schema import IndexSchema
from tests.fakes import tiny_schema


@pytest.fixture(scope="module")
def schema():
    return tiny_schema()


def _rec(**kw):
    return json.dumps({"key": "a", **kw})


@pytest.mark.parametrize("lines, line, message", [
    ([_rec(), "", _rec()], 3, "the record's key 'a' is used twice (first on line 1)"),
    (['{"title": "x"}'], 1, "the record needs its key field 'key' as a non-empty string, got none"),
    ([_rec(page="3")], 1, "the record (key 'a'): field 'page' must be an integer"),
    ([_rec(is_table="false")], 1, "field 'is_table' must be true or false, got a string 'false'"),
    ([_rec(group_ids="sales")], 1, "field 'group_ids' must be a list (Collection(Edm.String))"),
    ([_rec(last_updated="yesterday")], 1, "field 'last_updated' must be an ISO 8601 date-time"),
    ([_rec(vec=[1.0, 2.0])], 1, "field 'vec' has 2 dimensions; the schema says 3"),
    ([_rec(nope=1)], 1, "field 'nope' is not in the index schema"),
    ([_rec(), "[1, 2]"], 2, "the record must be a JSON object, got an array"),
    ([_rec(), '{"key": "b", "page": 1' + "0" * 40 + "}"], 2, "integers must lie between"),
    ([_rec(), "{" * 100], 2, "nests lists and objects deeper than 64 levels"),
])
def test_records_errors_name_the_line_and_the_record(tmp_path, schema, lines, line, message):
    p = tmp_path / "records.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputDataError) as err:
        load_records(p, schema)
    assert f"records.jsonl:{line}: " in str(err.value) and message in str(err.value)


def test_records_load_and_keep_unknown_fields_on_request(schema):
    blob = (_rec(page=2, vec=[1, 0, 0]) + "\n" + json.dumps({"key": "b", "extra": 1})).encode()
    assert [r["key"] for r in parse_records(blob, path="r.jsonl", schema=schema,
                                            unknown_fields="keep")] == ["a", "b"]
    assert len(parse_records(blob, path="r.jsonl")) == 2  # without a schema: JSON objects only


def test_the_sample_records_are_valid():
    from ragdiag.sample.system import sample_dir

    base = sample_dir()
    schema = IndexSchema.load(base / "index" / "schema.json")
    assert len(load_records(base / "index" / "structured.jsonl", schema)) > 3000


@pytest.mark.parametrize("lexicon, message", [
    ({"ENT-A": "Aquila"}, "the names must be a list of strings, got the string 'Aquila'"),
    ({"ENT-A": [""]}, "name #1 is ''; a name needs at least 2 characters"),
    ({"ENT-A": ["Aquila", "x"]}, "name #2 is 'x'"),
    ({"ENT-A": []}, "entity 'ENT-A' has no names"),
    ({"ENT-A": [3]}, "name #1 must be a string, got an integer 3"),
    ({" ": ["Aquila"]}, "an entity key must be a non-empty string"),
    (["Aquila"], "must be a JSON object"),
    ({}, "the entities lexicon is empty"),
])
def test_entities_are_validated(tmp_path, lexicon, message):
    p = tmp_path / "entities.json"
    p.write_text(json.dumps(lexicon, indent=2), encoding="utf-8")
    with pytest.raises(InputDataError, match="entities.json:"):
        load_entities(p)
    with pytest.raises(InputDataError) as err:
        entity_matcher(p)
    assert message in str(err.value)


def test_entity_errors_point_at_the_entry_line(tmp_path):
    p = tmp_path / "entities.json"
    p.write_text('{\n  "ENT-A": ["Aquila"],\n  "ENT-B": "Brandt"\n}\n', encoding="utf-8")
    with pytest.raises(InputDataError, match=r"entities.json:1: entity 'ENT-B'"):
        load_entities(p)
    p.write_text('{\n  "ENT-A": ["Aquila"],\n  "ENT-B": [\n    "Brandt", 5]\n}\n', encoding="utf-8")
    with pytest.raises(InputDataError, match=r"entities.json:3: entity 'ENT-B': name #2"):
        load_entities(p)
    p.write_text('{"ENT-A": ["Aquila"],\n "ENT-A": ["Brandt"]}', encoding="utf-8")
    with pytest.raises(InputDataError, match="given twice"):
        load_entities(p)


def test_entity_matcher_matches_names_not_letters(tmp_path):
    p = tmp_path / "entities.json"
    p.write_text(json.dumps({"ENT-A": ["Aquila Polymers", "Aquila"], "ENT-B": ["Brandt"]}), encoding="utf-8")
    match = entity_matcher(p)
    assert match("What does Aquila supply?") == ("ENT-A",)
    assert match("an unrelated question about payment terms") == ()
    assert entity_matcher(None)("Aquila") == ()
    from ragdiag.audit import entity_matcher as reexported

    assert reexported is entity_matcher


def test_index_definition_errors_name_the_json_path_and_line(tmp_path):
    good = tiny_schema().to_azure()
    p = tmp_path / "schema.json"

    def broken(mutate) -> str:
        d = json.loads(json.dumps(good))
        mutate(d)
        p.write_text(json.dumps(d, indent=2), encoding="utf-8")
        with pytest.raises(ConfigError) as err:
            IndexSchema.load(p)
        return str(err.value)

    msg = broken(lambda d: d["fields"][1].update(searchable="yes"))
    assert "schema.json:" in msg and "fields[1] ('title'): 'searchable' must be true or false" in msg
    line = int(msg.split("schema.json:")[1].split(":")[0])
    assert '"name": "title"' in p.read_text().splitlines()[line]  # the line after the object's {
    assert "used twice" in broken(lambda d: d["fields"].append(dict(d["fields"][0])))
    assert "needs 'dimensions'" in broken(lambda d: [f.pop("dimensions", None) for f in d["fields"]
                                                     if f["type"] == "Collection(Edm.Single)"])
    assert "2 key fields" in broken(lambda d: d["fields"][1].update(key=True))
    assert "must be an object" in broken(lambda d: d["fields"].__setitem__(0, "key"))
    assert IndexSchema.from_azure(good) == tiny_schema()
