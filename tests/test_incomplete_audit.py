"""An audit whose requests all fail is incomplete, not clean: the affected checks say
`error` with the failure reason (in the JSON too), the table marks them, the exit code is 3."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from ragdiag.sample.schema import SAMPLE_IDENTITIES as IDENTITIES
from ragdiag.sample.system import sample_dir

pytestmark = pytest.mark.slow


@pytest.fixture()
def broken_audit(tmp_path):
    """The sample audit with a request budget of one search: every later request is refused.

    (It used to break every profile with a search field the index lacks; such inputs are now
    refused before any request, exit 2, so the failures come from the runner instead.)"""
    src = sample_dir()
    profiles = (src / "profiles" / "tuned.toml").read_text(encoding="utf-8")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "broken.toml").write_text(profiles, encoding="utf-8")
    for name in ("goldset.yaml", "entities.json"):
        shutil.copy(src / name, tmp_path / name)
    cfg = tmp_path / "audit.toml"
    cfg.write_text('[audit]\nname = "broken"\n\n[target]\nkind = "sample"\n\n[inputs]\n'
                   'profiles = "profiles/broken.toml"\ngoldset = "goldset.yaml"\nentities = "entities.json"\n'
                   '\n[identities]\n' + "".join(f'"{u}" = {json.dumps(list(g))}\n' for u, g in IDENTITIES.items())
                   + '\n[runner]\ncache = false\nbudget = 1\n', encoding="utf-8")
    return cfg


def test_all_failed_requests_make_the_check_error_and_exit_3(broken_audit, tmp_path):
    out = tmp_path / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(broken_audit), "--checks", "pool_size",
                           "--json", str(out), "--fail-on", "fail", "--quiet"],
                          capture_output=True, text=True, env={**__import__("os").environ, "COLUMNS": "200"})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    f = data["findings"][0]
    assert f["status"] == "error"
    # the one request the budget allows went to the measurements that run first (the ablation's
    # baseline); every element whose what-if could not run is not measured, never "neutral"
    assert f["incomplete"]["failed_requests"] > 0
    assert f["incomplete"]["failed_requests"] >= f["incomplete"]["requests"] - 1
    verdicts = {e["verdict"] for e in data["ablation"]["elements"] if e["owner"] == "pool_size"}
    assert verdicts <= {"not_measured", "at_default", "not_ablatable"}
    assert any("request budget of 1 exhausted" in r["reason"] for r in f["failures"]), f["failures"]
    assert "error*" in proc.stdout and "incomplete" in proc.stdout


def test_a_confirmed_fail_stays_fail_but_the_audit_is_incomplete(broken_audit, tmp_path):
    """The misconfigured policy's k = 20 is a fault whatever the requests did: fail, marked, exit 3."""
    text = broken_audit.read_text(encoding="utf-8")
    src = (sample_dir() / "profiles" / "misconfigured.toml").read_text(encoding="utf-8")
    (tmp_path / "profiles" / "broken.toml").write_text(src, encoding="utf-8")
    broken_audit.write_text(text, encoding="utf-8")
    out = tmp_path / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(broken_audit), "--checks", "pool_size",
                           "--json", str(out), "--fail-on", "never", "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    f = json.loads(out.read_text())["findings"][0]
    assert f["status"] == "fail" and f["incomplete"]["above_threshold"] == 1
    assert "definition: configured pool 20 < 50" in f["headline"]
