"""A plugin check and a plugin target kind in a separate package, joined through entry points only:
the worked example of docs/extending.md (docs/examples/ragdiag-acme), installed into a temporary
folder as a distribution would be (its dist-info written from its own pyproject.toml), run in an
audit in a fresh process and shown in the report. Proven both ways: a planted fault warns, the
sound records pass."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "ragdiag-acme"
GOLDSET = """\
- id: q1
  question: How long is the notice period?
  intent: fact
  expect_sources:
  - {key: a, grade: 3}
- id: q2
  question: When is the holiday request due?
  intent: fact
  expect_sources:
  - {key: b, grade: 3}
"""
SOUND = [{"id": "a", "content": "the notice period is three months"},
         {"id": "b", "content": "a holiday request is due two weeks ahead"}]
SHORT = [SOUND[0], {"id": "b", "content": "holiday request"}]  # planted: two words


def install(site: Path) -> None:
    """Copy the example's package into `site` with a dist-info naming its entry points (what pip writes)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    shutil.copytree(EXAMPLE / "ragdiag_acme", site / "ragdiag_acme")
    info = site / f"ragdiag_acme-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n",
                                   encoding="utf-8")
    groups = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
                     for group, eps in project["entry-points"].items())
    (info / "entry_points.txt").write_text(groups, encoding="utf-8")


def audit_folder(tmp_path: Path, records: list[dict]) -> Path:
    folder = tmp_path / "audit"
    folder.mkdir()
    (folder / "records.json").write_text(json.dumps(records), encoding="utf-8")
    (folder / "goldset.yaml").write_text(GOLDSET, encoding="utf-8")
    (folder / "audit.toml").write_text('[audit]\nname = "acme"\n\n[target]\nkind = "acme"\nrecords = "records.json"\n\n'
                                       '[inputs]\ngoldset = "goldset.yaml"\n', encoding="utf-8")
    return folder


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    install(site)
    return site


def run_audit(site: Path, folder: Path) -> tuple[dict, subprocess.CompletedProcess]:
    env = dict(os.environ, PYTHONPATH=str(site))
    out = folder / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(folder / "audit.toml"), "--json", str(out),
                           "--fail-on", "never", "--quiet"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text(encoding="utf-8")), proc


def test_the_plugin_check_and_target_run_in_an_audit_through_entry_points(site, tmp_path):
    data, _ = run_audit(site, audit_folder(tmp_path, SHORT))
    by_id = {f["check_id"]: f for f in data["findings"]}
    words = by_id["acme_words"]
    assert words["status"] == "warn" and words["headline"] == "b: 2 words, fewer than 3"
    assert words["title"] == "Words per hit" and data["meta"]["target"] == "acme"
    # the built-in checks ran against the plugin target too
    assert {"pool_size", "context_budgets"} <= set(by_id)


def test_the_sound_records_pass(site, tmp_path):
    data, _ = run_audit(site, audit_folder(tmp_path, SOUND))
    words = {f["check_id"]: f for f in data["findings"]}["acme_words"]
    assert words["status"] == "pass" and words["headline"].startswith("all ") and "at least 3 words" in words["headline"]
    assert words["metrics"]["hits_counted"] >= 2


def test_the_plugin_appears_in_checks_list_and_the_report(site, tmp_path, monkeypatch):
    env = dict(os.environ, PYTHONPATH=str(site))
    listed = subprocess.run([sys.executable, "-m", "ragdiag", "checks", "list"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert "acme_words" in listed.stdout and "Words per hit" in listed.stdout
    data, _ = run_audit(site, audit_folder(tmp_path, SHORT))
    # the report, rendered in this process with the plugin installed: its title, its sentence, its labels
    monkeypatch.syspath_prepend(str(site))
    from ragdiag.checks import registry
    from ragdiag.inputs.checklist import load_checklist
    from ragdiag.model.findings import AuditResult
    from ragdiag.report.render import render_check, render_summary

    monkeypatch.setattr(registry, "_DEFAULT", registry.Registry())  # discovers the plugin now on the path
    specs = load_checklist()
    assert "acme_words" in specs
    from ragdiag.checks.base import localize

    result = localize(AuditResult.from_dict(data), "de", specs)  # as the report does for its language
    finding = result["acme_words"]
    html = render_check(finding, specs["acme_words"], "de", figures=True)
    assert "Wörter pro Treffer" in html and "b: 2 Wörter, weniger als 3" in html
    assert "Schlüssel" in html  # the evidence column by the spec's label
    assert "data:image/png;base64," in html  # the plugin's figure
    assert "Wörter pro Treffer" in render_summary(result, "de", specs)


def test_without_the_plugin_the_kind_is_unknown(tmp_path):
    folder = audit_folder(tmp_path, SOUND)
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(folder / "audit.toml"), "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no target kind named 'acme'" in proc.stdout + proc.stderr
