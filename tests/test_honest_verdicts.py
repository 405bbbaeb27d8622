"""No verdict without evidence, across the whole checklist: an audit config holding nothing
but [target] passes no check, and every pass on the sample rests on observed items."""

from __future__ import annotations

import pytest

from ragdiag.audit import build_context, run_checks
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.config import load_config

pytestmark = pytest.mark.slow


def test_a_config_with_only_a_target_passes_no_check(tmp_path):
    cfg = tmp_path / "audit.toml"
    cfg.write_text('[target]\nkind = "sample"\n', encoding="utf-8")
    result = run_checks(build_context(load_config(cfg), progress=False))
    assert len(result.findings) == len(load_checklist())
    passed = [(f.check_id, f.headline) for f in result.findings if f.status == "pass"]
    assert not passed, passed
    for f in result.findings:
        if f.status == "skipped":
            assert f.skipped_reason, f.check_id


def test_every_pass_on_the_sample_names_what_it_observed(tuned_ctx):
    result = run_checks(tuned_ctx)
    passes = [f for f in result.findings if f.status == "pass"]
    assert passes, "the tuned sample passes some checks"
    for f in passes:
        assert f.observed and sum(f.observed.values()) > 0, (f.check_id, f.headline)
