"""Audit config: a valid file loads; every mistake names the file, the line and the fix."""

from __future__ import annotations

import secrets

import pytest

from ragdiag.errors import ConfigError
from ragdiag.inputs.config import load_config
from ragdiag.sample.system import sample_dir


def _write(tmp_path, text):
    p = tmp_path / "audit.toml"
    p.write_text(text)
    return p


def test_sample_configs_load():
    cfg = load_config(sample_dir() / "audit.toml")
    assert cfg.target.kind == "sample" and cfg.target.variant == "structured"
    assert cfg.profiles.name == "misconfigured.toml" and cfg.goldset.exists()
    assert cfg.identities["anna.sales"] == ("all-staff", "sales")
    assert cfg.budgets["context_tokens"] == 6000
    assert load_config(sample_dir() / "audit-naive.toml").goldset is None


def test_unknown_key_names_line_and_allowed(tmp_path):
    p = _write(tmp_path, '[target]\nkind = "sample"\n\n[inputs]\nprofile = "x.toml"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    msg = str(err.value)
    assert f"{p}:5:" in msg and "unknown key 'profile'" in msg and "profiles" in msg


def test_bad_target_kind(tmp_path):
    p = _write(tmp_path, '[audit]\nname = "x"\n\n[target]\nkind = "elastic"\n')
    with pytest.raises(ConfigError, match=r"audit.toml:5: no target kind named .elastic.; available: azure, local, pgvector, sample"):
        load_config(p)


def test_no_target_is_a_code_only_audit_and_missing_file(tmp_path):
    assert load_config(_write(tmp_path, '[audit]\nname = "x"\n')).target is None
    with pytest.raises(ConfigError, match=r"audit.toml:1: \[target\] needs kind"):
        load_config(_write(tmp_path, '[target]\nvariant = "naive"\n'))
    with pytest.raises(ConfigError, match=r"audit.toml:3: unknown key 'endpoint' in \[target\]; allowed: kind, variant"):
        load_config(_write(tmp_path, '[target]\nkind = "sample"\nendpoint = "https://x"\n'))
    p = _write(tmp_path, '[target]\nkind = "sample"\n[inputs]\ngoldset = "nope.yaml"\n')
    with pytest.raises(ConfigError, match=r"audit.toml:4: 'goldset' points to .*nope.yaml, which does not exist"):
        load_config(p)


def test_keys_never_in_the_config(tmp_path):
    planted = secrets.token_hex(16)  # made at run time: nothing key-like is committed
    p = _write(tmp_path, '[target]\nkind = "azure"\nendpoint = "https://x"\nindex = "i"\n'
                         f'api_key = "{planted}"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert "api_key_env" in str(err.value) and planted not in str(err.value)


def test_azure_target_needs_endpoint_and_identities_must_be_lists(tmp_path):
    with pytest.raises(ConfigError, match="audit.toml:1: target kind 'azure' needs 'endpoint'"):
        load_config(_write(tmp_path, '[target]\nkind = "azure"\nindex = "i"\n'))
    p = _write(tmp_path, '[target]\nkind = "sample"\n\n[identities]\n"anna" = "sales"\n')
    with pytest.raises(ConfigError, match=r"audit.toml:5: identity 'anna' must be a list of group names"):
        load_config(p)


def test_toml_syntax_error_has_a_line(tmp_path):
    p = _write(tmp_path, '[target]\nkind = "sample"\n[runner\n')
    with pytest.raises(ConfigError, match=r"audit.toml:3: TOML syntax error"):
        load_config(p)


def test_a_trec_qrels_goldset_takes_its_questions_from_goldset_topics(tmp_path):
    """TREC qrels hold judgments only: without topics an audit would search for empty strings,
    so the config must name the topics (and topics beside a YAML goldset are a mistake)."""
    from ragdiag.audit import build_context

    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 2\n2 0 d3 1\n")
    (tmp_path / "topics.trec").write_text("<top>\n<num>1</num><title>\nDIELECTRIC CONSTANT\n</title>\n</top>\n"
                                          "<top>\n<num>2</num><title>\nMICROWAVE PHASE\n</title>\n</top>\n")
    (tmp_path / "g.yaml").write_text("- id: c1\n  question: what is x?\n  expect_sources: [d1]\n")
    cfg = tmp_path / "a.toml"
    cfg.write_text('[inputs]\ngoldset = "qrels"\n')
    with pytest.raises(ConfigError, match=r"a\.toml:2: a TREC qrels goldset holds no questions: set \[inputs\] topics"):
        build_context(load_config(cfg), progress=False)
    cfg.write_text('[inputs]\ngoldset = "qrels"\ngoldset_topics = "topics.trec"\n')
    ctx = build_context(load_config(cfg), progress=False)
    assert [(c.id, c.question, c.expect_sources) for c in ctx.goldset.cases] == [
        ("1", "DIELECTRIC CONSTANT", (("d1", 1), ("d2", 2))), ("2", "MICROWAVE PHASE", (("d3", 1),))]
    cfg.write_text('[inputs]\ngoldset = "g.yaml"\ngoldset_topics = "topics.trec"\n')
    with pytest.raises(ConfigError, match=r"a\.toml:3: \[inputs\] topics only applies to a TREC qrels goldset"):
        build_context(load_config(cfg), progress=False)
