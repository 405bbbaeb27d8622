"""Tests of ragdiag.inputs.checklist: the ten shipped specs, and every way a spec can be wrong."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ragdiag.errors import ConfigError
from ragdiag.inputs.checklist import (
    TEXT_FIELDS,
    CheckSpec,
    checklist_table_markdown,
    default_checklist_dir,
    load_checklist,
    load_spec,
    packaged_checklist_dir,
)

CHECKS_DIR = Path(__file__).resolve().parents[1] / "ragdiag" / "checks" / "specs"

# the owners of ablated profile elements judge them with these (ragdiag/checks/_ablation.py)
ABLATION = {"ablation_alpha": 0.05, "ablation_fail_delta": 0.02}

# The ten checks of CHECKS.md with their default thresholds, in checklist order.
EXPECTED_THRESHOLDS = {
    "reranker_scores": {"warn_median_top1": 2.0, "warn_share_below": 0.30, "warn_share_threshold": 1.5,
                        "fail_median_top1": 1.0, "warn_if_rerank_lowers_ndcg": True,
                        "somewhat_relevant": 2.0, **ABLATION},
    "pool_size": {"min_configured_pool": 50, "measured_pool_min": 50, "max_share_below": 0.10,
                  "max_k": 100, "exhaustive_index_size": 50000, **ABLATION},
    "prerank_filters": {"fail_removed_relevant_share": 0.05, "warn_any_nonrelevance_clause": True, **ABLATION},
    "shared_query_text": {"warn_identical_share": 0.5, "fail_recall10_gain": 0.05,
                          "min_language_share": 0.05, "language_sample_records": 2000, **ABLATION},
    "chunk_boundaries": {"warn_mid_sentence_end_share": 0.05, "warn_split_table_share": 0.05,
                         "fail_missing_citation_share": 0.01, "min_tokens": 20, "max_tokens": 512,
                         "fail_mid_sentence_end_share": 0.30, "warn_mid_word_share": 0.02,
                         "fail_mid_word_share": 0.15, "warn_heading_only_share": 0.02,
                         "warn_split_code_share": 0.05, "warn_tiny_share": 0.10, "fail_tiny_share": 0.50},
    "route_counts": {"min_traffic_share": 0.02, "min_gain": 0.01, "alpha": 0.05},
    "call_sites": {"max_builder_modules": 1, "fail_on_filter_drift": True},
    "context_budgets": {"default_budget_tokens": 6000, "model_window_tokens": 128000,
                        "answer_reserve_tokens": 1000, "warn_unbounded_call": True, "max_top_ratio": 2.0,
                        "estimated_chunk_tokens": 400},
    "acl_trimming": {"max_leaks": 0, "warn_retrievable_security_fields": True,
                     "warn_missing_identity": True},
    "goldset": {"min_cases_per_intent": 30, "target_cases_per_intent": 50, "require_refusals": True,
                "require_restricted": True, "gate_min_reranker_score": 1.5},
}


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch):
    monkeypatch.delenv("RAGDIAG_CHECKLIST", raising=False)


# -- the shipped checklist ------------------------------------------------------

def test_default_dir_is_repo_checks():
    assert default_checklist_dir() == CHECKS_DIR == packaged_checklist_dir()


def test_env_overrides_default_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGDIAG_CHECKLIST", str(tmp_path))
    assert default_checklist_dir() == tmp_path


def test_all_ten_specs_load_in_order():
    specs = load_checklist()
    assert list(specs) == list(EXPECTED_THRESHOLDS)
    assert [s.order for s in specs.values()] == list(range(1, 11))
    for check_id, spec in specs.items():
        assert spec.id == check_id
        assert spec.path == CHECKS_DIR / f"{check_id}.toml"


@pytest.mark.parametrize("check_id", list(EXPECTED_THRESHOLDS))
def test_thresholds_match_checks_md(check_id):
    spec = load_spec(CHECKS_DIR / f"{check_id}.toml")
    # every check tolerates the same share of failed requests before it says "error"
    assert dict(spec.thresholds) == {**EXPECTED_THRESHOLDS[check_id], "max_failed_request_share": 0.02}
    for name, value in EXPECTED_THRESHOLDS[check_id].items():
        assert type(spec.threshold(name)) is type(value), name


@pytest.mark.parametrize("check_id", list(EXPECTED_THRESHOLDS))
def test_texts_in_english_and_german(check_id):
    spec = load_spec(CHECKS_DIR / f"{check_id}.toml")
    for field in TEXT_FIELDS:
        en, de = spec.text(field, "en"), getattr(spec, field).get("de", "")
        assert en and de, f"{check_id}: {field} needs en and de"
        assert en != de
        # every threshold placeholder resolves in both languages
    for lang in ("en", "de"):
        rendered = spec.render_rules(lang)
        assert not re.search(r"\{[a-z_]+", rendered), rendered
    assert spec.references and all(r.startswith("https://") for r in spec.references)
    assert spec.languages == ("en", "de")


def test_every_threshold_is_named_in_the_status_rules():
    for spec in load_checklist().values():
        for lang in ("en", "de"):
            rules = spec.status_rules[lang]
            for name in spec.thresholds:
                assert "{" + name in rules, f"{spec.id}/{lang}: {name} not in status_rules"


def test_prerank_filters_roles():
    spec = load_checklist()["prerank_filters"]
    assert spec.roles == {
        "quality": ("confidence", "quality", "score"),
        "recency": ("date", "updated", "valid", "created", "modified"),
        "source": ("source", "doc_type", "origin", "channel"),
        "scope": ("tenant", "entity", "customer", "project", "level", "citable", "language", "parent"),
    }


def test_render_rules_substitutes_and_formats():
    spec = load_checklist()["pool_size"]
    en = spec.render_rules()
    assert "is below 50;" in en
    assert "more than 10% of queries" in en
    assert "k above 100" in en and "50000 documents" in en
    assert "mehr als 10% der Anfragen" in spec.render_rules("de")
    tuned = spec.with_thresholds(max_share_below=0.25, max_k=200)
    assert "more than 25% of queries" in tuned.render_rules()
    assert spec.threshold("max_k") == 100  # original untouched
    assert spec.render_rules("fr") == en  # falls back to English


def test_text_falls_back_to_english():
    spec = load_checklist()["goldset"]
    assert spec.text("title", "fr") == spec.text("title", "en") == "Goldset presence"
    assert spec.text("title", "de") == "Goldset vorhanden"
    with pytest.raises(ValueError, match="unknown text field"):
        spec.text("summary")


def test_threshold_missing_names_file_and_available():
    spec = load_checklist()["pool_size"]
    with pytest.raises(ConfigError) as err:
        spec.threshold("max_kk")
    msg = str(err.value)
    assert "pool_size.toml" in msg and "did you mean 'max_k'" in msg
    assert "available: ablation_alpha, ablation_fail_delta, exhaustive_index_size, max_failed_request_share, max_k" in msg
    assert err.value.line == _line_of(spec.path, "[thresholds]")


def test_threshold_kind_checked():
    spec = load_checklist()["pool_size"]
    assert spec.threshold("max_k", int) == 100
    assert spec.threshold("max_share_below", float) == 0.10
    assert spec.threshold("min_configured_pool", float) == 50.0
    with pytest.raises(ConfigError, match="must be a boolean, got 100") as err:
        spec.threshold("max_k", bool)
    assert err.value.line == _line_of(spec.path, "max_k =")
    with pytest.raises(ConfigError, match="is a number, got boolean"):
        spec.with_thresholds(max_k=True)


def test_readme_table_matches_specs():
    readme = (CHECKS_DIR / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- checks-table:start -->\n(.*?)<!-- checks-table:end -->", readme, re.S)
    assert m, "checks/README.md lacks the checks-table markers"
    assert m.group(1) == checklist_table_markdown(load_checklist()), (
        "checks/README.md is out of date; regenerate the table (see the README)")


def test_table_markdown_escapes_pipes():
    spec = CheckSpec(id="x", order=1, title={"en": "a | b"}, question={"en": "q?"},
                     thresholds={"t": 1})
    table = checklist_table_markdown([spec])
    assert "a \\| b" in table and "`t = 1`" in table


# -- error paths: each is a ConfigError with file and line -----------------------

VALID = '''\
id = "demo"
order = 3
references = ["https://example.org"]

[title]
en = "Demo"
de = "Demo DE"

[question]
en = "Is it a demo?"

[status_rules]
en = "warn above {limit} or {share:.0%}"

[thresholds]
limit = 5
share = 0.25
'''


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def _write(tmp_path: Path, text: str, name: str = "demo.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _error(tmp_path: Path, text: str, name: str = "demo.toml") -> ConfigError:
    p = _write(tmp_path, text, name)
    with pytest.raises(ConfigError) as err:
        load_spec(p)
    assert err.value.path == str(p)
    assert str(err.value).startswith(f"{p}:{err.value.line}: ")
    return err.value


def test_valid_minimal_spec(tmp_path):
    spec = load_spec(_write(tmp_path, VALID))
    assert spec.id == "demo" and spec.order == 3
    assert spec.render_rules() == "warn above 5 or 25%"
    assert spec.text("why") == ""
    assert spec.key_lines["thresholds.share"] == 17


def test_unknown_top_level_key(tmp_path):
    err = _error(tmp_path, VALID.replace("[thresholds]", "[treshold]\nx = 1\n\n[thresholds]"))
    assert err.line == 15 and err.key == "treshold"
    assert "unknown key 'treshold'" in str(err) and "did you mean 'thresholds'" in str(err)


def test_unknown_scalar_key(tmp_path):
    err = _error(tmp_path, VALID.replace('order = 3', 'order = 3\nseverity = "high"'))
    assert err.line == 3 and "unknown key 'severity'" in str(err)


def test_missing_title_en(tmp_path):
    err = _error(tmp_path, VALID.replace('en = "Demo"\n', ""))
    assert err.line == 5 and err.key == "title"
    assert "[title] needs an 'en' entry" in str(err)


def test_missing_title_table(tmp_path):
    text = VALID.replace('[title]\nen = "Demo"\nde = "Demo DE"\n', "")
    err = _error(tmp_path, text)
    assert "missing required table [title]" in str(err)
    assert err.line == len(text.splitlines())  # points at the end, where it can be appended


def test_missing_thresholds(tmp_path):
    text = VALID.split("[status_rules]")[0]
    err = _error(tmp_path, text)
    assert "missing required table [thresholds]" in str(err)
    assert err.line == len(text.splitlines())


def test_missing_id(tmp_path):
    err = _error(tmp_path, VALID.replace('id = "demo"\n', ""))
    assert "missing required key 'id'" in str(err) and 'id = "demo"' in str(err)
    assert err.line == 1


def test_id_must_match_file_stem(tmp_path):
    err = _error(tmp_path, VALID, name="other.toml")
    assert err.line == 1 and err.key == "id"
    assert "does not match the file name 'other.toml'" in str(err)


def test_reserved_id(tmp_path):
    err = _error(tmp_path, VALID.replace('"demo"', '"registry"'), name="registry.toml")
    assert "reserved" in str(err)


@pytest.mark.parametrize(("old", "new", "line", "message"), [
    ("order = 3", 'order = "3"', 2, "'order' must be a positive integer, got string"),
    ('en = "Is it a demo?"', "en = 42", 10, "[question] en must be a non-empty string, got number"),
    ("limit = 5", "limit = [5, 6]", 16, "threshold 'limit' must be a number, boolean or string, got array"),
    ("limit = 5", "limit = {a = 1}", 16, "got table"),
    ('references = ["https://example.org"]', 'references = "https://example.org"', 3,
     "'references' must be a list"),
    ('de = "Demo DE"', 'deutsch = "Demo DE"', 7, "is not a language code"),
    ("{limit}", "{limt}", 13, "refers to {limt}, which is not a threshold (did you mean 'limit'?)"),
    ("{share:.0%}", "{share:d}", 13, "cannot format {share:d}"),
])
def test_wrong_types(tmp_path, old, new, line, message):
    assert old in VALID
    err = _error(tmp_path, VALID.replace(old, new))
    assert message in str(err)
    assert err.line == line


def test_title_as_plain_string_is_rejected(tmp_path):
    text = VALID.replace('[title]\nen = "Demo"\nde = "Demo DE"\n', "").replace(
        'order = 3', 'order = 3\ntitle = "Demo"')
    err = _error(tmp_path, text)
    assert err.line == 3 and "'title' must be a table of texts per language" in str(err)


def test_roles_must_be_string_lists(tmp_path):
    err = _error(tmp_path, VALID + '\n[roles]\nquality = "confidence"\n')
    assert err.line == 20 and err.key == "roles.quality"


def test_extras_are_free_form(tmp_path):
    spec = load_spec(_write(tmp_path, VALID + '\n[extras]\nglobs = ["*.jsonl"]\n[extras.nested]\na = 1\n'))
    assert spec.extras == {"globs": ["*.jsonl"], "nested": {"a": 1}}


def test_toml_syntax_error(tmp_path):
    err = _error(tmp_path, VALID.replace("limit = 5", "limit = = 5"))
    assert err.line == 16 and "TOML syntax error" in str(err)


def test_duplicate_key_is_syntax_error(tmp_path):
    err = _error(tmp_path, VALID + "limit = 6\n")
    assert err.line == 18


def test_multiline_strings_do_not_confuse_line_numbers(tmp_path):
    text = VALID.replace('en = "Is it a demo?"', 'en = """\nlimit = 1\n[thresholds]\nIs it?"""')
    spec = load_spec(_write(tmp_path, text))
    assert spec.key_lines["thresholds"] == 18
    assert spec.key_lines["question.en"] == 10


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_spec(tmp_path / "nope.toml")


# -- folders -------------------------------------------------------------------

def test_load_checklist_folder_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_checklist(tmp_path / "missing")
    with pytest.raises(ConfigError, match="no \\*.toml spec files"):
        load_checklist(tmp_path)


def test_copied_folder_loads_and_is_tuned(tmp_path):
    copy = tmp_path / "client"
    shutil.copytree(CHECKS_DIR, copy)
    p = copy / "pool_size.toml"
    p.write_text(p.read_text(encoding="utf-8").replace("max_k = 100", "max_k = 150"), encoding="utf-8")
    specs = load_checklist(copy)
    assert specs["pool_size"].threshold("max_k") == 150
    assert list(specs) == list(EXPECTED_THRESHOLDS)


def test_copied_folder_rejects_misspelt_threshold(tmp_path):
    copy = tmp_path / "client"
    shutil.copytree(CHECKS_DIR, copy)
    p = copy / "pool_size.toml"
    p.write_text(p.read_text(encoding="utf-8").replace("max_share_below", "max_sahre_below"),
                 encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_checklist(copy)
    assert "lacks threshold 'max_share_below'" in str(err.value)
    assert err.value.path == str(p)
    assert load_checklist(copy, compare_to_defaults=False)["pool_size"].thresholds["max_sahre_below"] == 0.1


def test_copied_folder_rejects_unknown_threshold_and_wrong_kind(tmp_path):
    copy = tmp_path / "client"
    shutil.copytree(CHECKS_DIR, copy)
    p = copy / "goldset.toml"
    original = p.read_text(encoding="utf-8")
    p.write_text(original.replace("require_refusals = true", "require_refusals = true\nextra_knob = 1"),
                 encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown threshold 'extra_knob'") as err:
        load_checklist(copy)
    assert err.value.line == _line_of(p, "extra_knob")
    p.write_text(original.replace("min_cases_per_intent = 30", "min_cases_per_intent = 30.5"),
                 encoding="utf-8")
    with pytest.raises(ConfigError, match="must be an integer like the shipped default 30") as err:
        load_checklist(copy)
    assert err.value.line == _line_of(p, "min_cases_per_intent =")
    p.write_text(original.replace("require_refusals = true", 'require_refusals = "yes"'),
                 encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a boolean"):
        load_checklist(copy)


def test_copied_folder_may_drop_checks_and_add_custom_ones(tmp_path):
    copy = tmp_path / "client"
    shutil.copytree(CHECKS_DIR, copy)
    (copy / "goldset.toml").unlink()
    _write(copy, VALID)
    specs = load_checklist(copy)
    assert "goldset" not in specs
    assert list(specs)[2:4] == ["demo", "prerank_filters"]  # order 3, ties broken by id
