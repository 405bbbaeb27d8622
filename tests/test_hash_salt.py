"""The product's output does not depend on Python's string-hash salt (PYTHONHASHSEED).

CI once failed on a test whose fake embedder was seeded from the salted `hash()`; the same
class in the product would be a set (or a dict built from one) whose iteration order reaches a
ranking, a table, a list in the findings JSON or the code-scan output. `tests/salt_world.py`
audits a constructed world with every check and scans the sample's client code; two runs in
subprocesses under different salts must give the same bytes (outside the schema's
nondeterministic fields), and a planted set-ordered list must make them differ. About 6 s of
CPU a run (25 s wall each at load 7 on the 2 shared cores), hence `slow`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_determinism import canonical

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _run(out: Path, seed: int, *extra: str) -> Path:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "tests.salt_world", str(out), *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_two_salts_give_the_same_findings_and_scan(tmp_path):
    a, b = _run(tmp_path / "a", 1), _run(tmp_path / "b", 2)
    assert canonical(a / "findings.json") == canonical(b / "findings.json")
    assert (a / "scan.json").read_bytes() == (b / "scan.json").read_bytes()


def test_a_planted_set_order_is_caught(tmp_path):
    # seven strings: the chance that two salts order them alike is small, and 1 and 2 do not
    a, b = _run(tmp_path / "a", 1, "--plant-leak"), _run(tmp_path / "b", 2, "--plant-leak")
    assert canonical(a / "findings.json") != canonical(b / "findings.json")
