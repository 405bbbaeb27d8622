"""docs/sample-audit.md is rendered from findings JSON only (`ragdiag.sample.figures`).

The findings come from a real audit of the constructed topic world (`tests/worlds.py`: all ten
checks, the loss funnel, a compare policy), so each rendered figure can be traced to a value
of that run; the world's planted filter ``zq_tier eq 1`` removes 9 of its 12 relevant
documents, a share checkable by hand (75.0 %). Changing a value in the findings changes the
page: nothing on it is typed by hand.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdiag.audit import run_checks
from ragdiag.inputs.fingerprint import group_digest
from ragdiag.policy import loads_policy
from ragdiag.sample.figures import render
from tests.worlds import context, policy_text, topic_world

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> dict:
    target = topic_world(tmp_path_factory.mktemp("figures"))
    ctx = context(target, policy_text(filter='"zq_tier eq 1"'))
    ctx.compare_policy = loads_policy(policy_text())
    return json.loads(json.dumps(run_checks(ctx, stop_on_signals=False).to_dict()))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _row(page: str, first_cell: str) -> str:
    return next(line for line in page.splitlines() if line.startswith(f"| {first_cell} |"))


def test_every_checks_status_and_headline_come_from_the_findings(findings):
    page = render({"world": findings})
    assert len(findings["findings"]) == 10
    for f in findings["findings"]:
        row = _row(page, f"`{f['check_id']}`")
        assert row == f"| `{f['check_id']}` | **{f['status']}**: {_cell(f['headline'])} |"


def test_goldset_metrics_and_comparison_are_the_findings_values(findings):
    page = render({"world": findings})
    metrics = next(f for f in findings["findings"] if f["check_id"] == "goldset")["metrics"]
    assert _row(page, "nDCG@10") == f"| nDCG@10 | {metrics['ndcg@10']:.3f} |"
    assert _row(page, "recall@50") == f"| recall@50 | {metrics['recall@50']:.3f} |"
    comparison = next(e for f in findings["findings"] if f["check_id"] == "goldset"
                      for e in f["evidence"] if e.get("key") == "comparison")
    metric, first, second, delta = comparison["rows"][0][:4]
    assert f"| {metric} | {first:.3f} | {second:.3f} | {delta:+.3f} |" in page


def test_the_funnel_share_of_the_planted_filter_is_the_hand_checked_one(findings):
    page = render({"world": findings})
    # 9 of the world's 12 relevant documents are on tier 2, which `zq_tier eq 1` removes
    assert _row(page, "`filter`") == "| `filter` | zq_tier eq 1 | 75.0 % (9) |"
    assert _row(page, "`top`") == "| `top` |  | 25.0 % (3) |"
    assert "12 sources, 12 questions" in _row(page, "expected sources")


def test_changed_findings_change_the_page(findings):
    planted = copy.deepcopy(findings)
    gold = next(f for f in planted["findings"] if f["check_id"] == "goldset")
    gold["metrics"]["ndcg@10"] = 0.123456
    pool = next(f for f in planted["findings"] if f["check_id"] == "pool_size")
    pool["status"], pool["headline"] = "fail", "a planted | headline"
    planted["loss_funnel"]["totals"][0]["share"] = 0.5
    page = render({"world": planted})
    assert _row(page, "nDCG@10") == "| nDCG@10 | 0.123 |"
    assert _row(page, "`pool_size`") == "| `pool_size` | **fail**: a planted \\| headline |"
    assert _row(page, "`filter`").startswith("| `filter` | zq_tier eq 1 | 50.0 % ")
    planted["loss_funnel"]["totals"].reverse()  # rows follow the funnel's stage order, not the list's
    lines = render({"world": planted}).splitlines()
    assert lines.index(_row(page, "`filter`")) < lines.index(_row(page, "`top`"))
    planted["loss_funnel"] = {"status": "skipped", "reason": "no goldset"}
    assert "not measured: no goldset" in _row(render({"world": planted}), "expected sources")


def test_the_stamp_is_the_fingerprints(findings):
    page = render({"a": findings, "b": findings})
    fp = findings["meta"]["fingerprint"]
    digest = group_digest(fp, "instrument")
    assert digest and digest.startswith("sha256:")
    assert f"| a | {findings['ragdiag_version']} | `{digest}` | `{fp['digest']}` |" in page
    assert f"torch {fp['instrument']['packages']['torch']}" in page
    assert "not measured by the same instrument" not in page
    other = copy.deepcopy(findings)
    other["meta"]["fingerprint"]["instrument"]["packages"]["torch"] = "0.0.1"
    page = render({"a": findings, "b": other})
    assert "not measured by the same instrument (they differ in `packages.torch`)" in page


def test_the_script_renders_saved_findings(findings, tmp_path):
    (tmp_path / "misconfigured.json").write_text(json.dumps(findings), encoding="utf-8")
    out = tmp_path / "page.md"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "sample-figures.py"), "--audits", "misconfigured",
                           "--findings", str(tmp_path), "--out", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == render({"misconfigured": findings})
