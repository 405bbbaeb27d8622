"""A seeded corpus of mutants of the sample's real input files: every loader refuses each one
with a clean RagdiagError (or accepts it), never another exception.

The corpus is small here (the unit tier must stay fast); `benchmarks/bench_hardening.py`
runs a larger one and tabulates the outcomes. Plus the cases issue 12 named one by one.
"""

from __future__ import annotations

import math
import time
from collections import Counter

import pytest

from ragdiag.errors import ConfigError, InputDataError, RagdiagError
from tests.mutations import OPERATORS, mutants, outcome, subjects

PER_SUBJECT = 24  # two of each operator


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("mutants")


@pytest.fixture(scope="module")
def corpus_subjects(workdir):
    return subjects(workdir)


def test_every_loader_refuses_every_mutant_cleanly(corpus_subjects, workdir):
    tally: dict[str, Counter[str]] = {}
    bugs = []
    for s in corpus_subjects:
        tally[s.name] = Counter()
        for m in mutants(s, PER_SUBJECT, seed=12):
            result, message = outcome(s, m, workdir)
            tally[s.name][result] += 1
            if result == "traceback":
                bugs.append(f"{s.name} / {m.op}: {message}")
            elif result != "accepted":
                assert len(message) <= 2200, f"{s.name} / {m.op}: a {len(message)}-character message"
    assert not bugs, "\n\n".join(bugs[:5])
    # the corpus exercised every loader and mostly produced located errors
    assert len(tally) >= 12
    for name, counts in tally.items():
        assert sum(counts.values()) >= PER_SUBJECT - 2, (name, counts)
        assert counts["located"] >= PER_SUBJECT // 3, (name, counts)


def test_operators_cover_the_issue():
    for op in ("truncate", "bitflip", "nul", "deep", "hugenum", "wrongtype", "longpath"):
        assert op in OPERATORS


# ---- the issue's cases, one by one ------------------------------------------------------------
def _config(tmp_path, body: str):
    from ragdiag.inputs.config import load_config

    p = tmp_path / "audit.toml"
    p.write_text(body, encoding="utf-8")
    return load_config(p)


@pytest.mark.parametrize("line, message", [
    ("timeout_s = true", "'timeout_s' must be a number of seconds"),
    ("timeout_s = nan", "'timeout_s' must be a number of seconds"),
    ("timeout_s = inf", "'timeout_s' must be a number of seconds"),
    ("timeout_s = 0", "'timeout_s' must be a number of seconds"),
    ("concurrency = 100000000", "'concurrency' must be an integer from 1 to 64"),
    ("concurrency = 0", "'concurrency' must be an integer from 1 to 64"),
    ("retries = 1000", "'retries' must be an integer from 0 to 20"),
    ("retries = true", "'retries' must be an integer"),
    ("cache = 1", "'cache' must be true or false"),
    ("budget = 2.5", "'budget' must be an integer"),
    ("max_consecutive_failures = 0", "'max_consecutive_failures' must be an integer from 1"),
])
def test_runner_values_are_type_and_range_checked(tmp_path, line, message):
    with pytest.raises(ConfigError, match="audit.toml:2: " + message.replace("(", r"\(")):
        _config(tmp_path, f"[runner]\n{line}\n")


@pytest.mark.parametrize("line, message", [
    ('context_tokens = "lots"', "'context_tokens' must be a whole number of tokens above 0"),
    ("context_tokens = -5", "'context_tokens' must be a whole number of tokens above 0"),
    ("context_tokens = 0", "'context_tokens' must be a whole number of tokens above 0"),
    ("model_window_tokens = 1.5", "'model_window_tokens' must be a whole number"),
    ("answer_reserve_tokens = true", "'answer_reserve_tokens' must be a whole number"),
    ("tokenizer = 5", "'tokenizer' must be a non-empty string"),
])
def test_budgets_are_positive_integers(tmp_path, line, message):
    with pytest.raises(ConfigError, match="audit.toml:2: " + message):
        _config(tmp_path, f"[budgets]\n{line}\n")


def test_budget_reserve_must_fit_the_window_and_good_values_load(tmp_path):
    with pytest.raises(ConfigError, match="audit.toml:3: 'answer_reserve_tokens'.*smaller"):
        _config(tmp_path, "[budgets]\nmodel_window_tokens = 1000\nanswer_reserve_tokens = 1000\n")
    cfg = _config(tmp_path, "[runner]\ntimeout_s = 2.5\nconcurrency = 64\nretries = 0\n"
                            "max_consecutive_failures = 3\n[budgets]\ncontext_tokens = 6000\n")
    assert (cfg.timeout_s, cfg.concurrency, cfg.retries, cfg.max_consecutive_failures) == (2.5, 64, 0, 3)
    assert cfg.budgets == {"context_tokens": 6000}


@pytest.mark.parametrize("value, message", [
    ('"' + "a" * 5000 + '"', "is 5,000 characters long"),
    ('"' + "b" * 300 + '/x.yaml"', "has a file or folder name of 300 bytes.*at most 255"),
    ('"bad\\u0000name.yaml"', "contains a NUL character"),
    ('"line\\nbreak.yaml"', "contains a control character"),
    ('""', "must name a file or folder"),
])
def test_config_paths_are_checked_before_the_os_sees_them(tmp_path, value, message):
    with pytest.raises(ConfigError, match="audit.toml:2: 'goldset' " + message):
        _config(tmp_path, f"[inputs]\ngoldset = {value}\n")


@pytest.mark.parametrize("body, line", [
    ("[runner]\nx = " + "[" * 3000 + "]" * 3000 + "\n", 2),
    ("[runner]\nx = " + "[" * 80 + "]" * 80 + "\n", 2),
    ("[audit]\nname = 1" + "0" * 5000 + "\n", 2),
    ("[audit]\nname = 0x" + "f" * 5000 + "\n", None),
])
def test_toml_nesting_and_huge_numbers_are_config_errors(tmp_path, body, line):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, body)
    assert len(str(err.value)) < 400
    if line:
        assert err.value.line == line


def test_yaml_nul_and_control_characters_are_located(tmp_path):
    from ragdiag.inputs.goldset import load_goldset

    for ch in ("\x00", "\x07", "\x1b"):
        p = tmp_path / "g.yaml"
        p.write_text(f"- id: a\n  question: q{ch}\n  expect: refused\n", encoding="utf-8")
        # a NUL is refused for every text input before parsing (the column is named too)
        expected = r"g.yaml:2: the goldset holds a NUL character at column 14" if ch == "\x00" else \
            r"g.yaml:2: invalid YAML"
        with pytest.raises(InputDataError, match=expected):
            load_goldset(p)


def test_a_small_alias_bomb_gives_a_short_message_quickly(tmp_path):
    from ragdiag.inputs.goldset import load_goldset

    lines = ['a0: &a0 ["xxxxxxxxxx","xxxxxxxxxx","xxxxxxxxxx"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    p = tmp_path / "bomb.yaml"
    p.write_text("- " + "\n  ".join(lines) + "\n", encoding="utf-8")
    assert p.stat().st_size < 600
    t0 = time.perf_counter()
    with pytest.raises(InputDataError) as err:
        load_goldset(p)
    assert time.perf_counter() - t0 < 5
    assert len(str(err.value)) < 300 and "bomb.yaml:" in str(err.value)


def test_a_goldset_case_quoted_in_an_error_is_an_excerpt(tmp_path):
    from ragdiag.inputs.goldset import load_goldset

    p = tmp_path / "g.yaml"
    p.write_text("- [" + ", ".join(["'" + "q" * 1000 + "'"] * 50) + "]\n", encoding="utf-8")
    with pytest.raises(InputDataError) as err:
        load_goldset(p)
    assert "must be a mapping" in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize("loader_name", ["goldset", "query_log", "profiles", "config", "entities",
                                         "schema", "records", "spec"])
def test_every_loader_refuses_an_over_long_path(tmp_path, loader_name):
    from ragdiag.inputs.checklist import load_spec
    from ragdiag.inputs.config import load_config
    from ragdiag.inputs.entities import load_entities
    from ragdiag.inputs.goldset import load_goldset
    from ragdiag.inputs.querylog import load_query_log
    from ragdiag.inputs.records import load_records
    from ragdiag.model.schema import IndexSchema
    from ragdiag.policy import load_policy

    loader = {"goldset": load_goldset, "query_log": load_query_log, "profiles": load_policy,
              "config": load_config, "entities": load_entities, "schema": IndexSchema.load,
              "records": load_records, "spec": load_spec}[loader_name]
    for name in ("x" * 300 + ".yaml", "/".join(["d" * 250] * 20) + ".jsonl"):
        with pytest.raises(RagdiagError) as err:
            loader(tmp_path / name)
        assert len(str(err.value)) < 600


def test_nan_and_infinity_never_reach_a_budget(tmp_path):
    for v in ("nan", "inf", "-inf"):
        with pytest.raises(ConfigError):
            _config(tmp_path, f"[budgets]\ncontext_tokens = {v}\n")
    assert not math.isnan(_config(tmp_path, "[runner]\ntimeout_s = 1e-3\n").timeout_s)
