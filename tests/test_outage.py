"""A search service that dies mid-audit, and an audit that is told to stop.

The live audit (`ragdiag audit`, a subprocess, the real Azure SDK) runs against the
emulator over the sample index. Once its searches have started:

- the emulator is killed (its listening socket closed, every open connection dropped):
  the audit must notice within a few requests (the circuit breaker), write its partial
  findings and exit 3; what is asserted is the number of HTTP attempts made after the
  outage, not seconds;
- or the audit gets SIGTERM: it stops sending, writes its partial findings and exits 143.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("azure.search.documents")

from ragdiag.inputs.checklist import load_checklist
from ragdiag.sample.live import emulated_config  # noqa: E402
from ragdiag.targets.emulator import Emulator  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ENV = "RAGDIAG_OUTAGE_TEST_KEY"
INDEX = "muster-structured"
CONCURRENCY = 4
THRESHOLD = 5  # [runner] max_consecutive_failures, the default


def _env(key: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({ENV: key, "COLUMNS": "200", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONPATH": str(ROOT)})
    return env


def kill(emu: Emulator) -> None:
    """The service dies: no new connections, and every open one is dropped on its next request."""
    emu.handle = lambda handler, method: handler.drop()  # instance attribute: wins over the method
    emu.stop()


def _start_audit(cfg: Path, out: Path, key: str, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ragdiag", "audit", str(cfg), "--json", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(key))


def _wait_for_searches(emu: Emulator, proc: subprocess.Popen, n: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while emu.stats()["search_requests"] < n:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the audit ended before {n} searches: rc {proc.returncode}\n{out[-2000:]}\n{err[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"fewer than {n} searches within {timeout} s")
        time.sleep(0.05)


def test_an_emulator_killed_mid_audit_stops_the_audit_within_a_few_requests(sample_target, tmp_path):
    key = secrets.token_hex(16)
    emu = Emulator({INDEX: sample_target}, api_key=key)
    emu.start()
    cfg = emulated_config(ROOT / "ragdiag" / "sample" / "data" / "audit.toml", emu.url, INDEX, ENV,
                          tmp_path / "audit-live.toml", concurrency=CONCURRENCY, retries=4, cache=False)
    out = tmp_path / "findings.json"
    proc = _start_audit(cfg, out, key, tmp_path)
    try:
        _wait_for_searches(emu, proc, 40)
        kill(emu)
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        emu.stop()
    served = emu.stats()["requests"]  # every request the service answered before it died
    assert proc.returncode == 3, stdout[-3000:] + stderr[-3000:]
    assert "Traceback" not in stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    meta = data["meta"]
    cb = meta["circuit_breaker"]
    assert cb["open"] and cb["kind"] == "circuit_open"
    assert cb["reason"].startswith(f"circuit open after {THRESHOLD} consecutive connection failures: ")
    # HTTP attempts after the outage: the breaker's threshold plus what was in flight, not
    # the retries of every remaining request (before the breaker: ~5 attempts each, thousands)
    after = meta["target_stats"]["requests"] - served
    assert THRESHOLD <= after <= THRESHOLD + 2 * CONCURRENCY, (after, meta["target_stats"])
    assert meta["runner"]["not_sent"] > 100  # the rest were marked failed, not sent
    # partial findings: every check is there; the ones that needed the service say why not
    assert len(data["findings"]) == len(load_checklist())
    incomplete = [f for f in data["findings"] if f["incomplete"].get("failed_requests")]
    assert incomplete
    assert "stopped early: circuit open after" in stdout
    assert key not in stdout and key not in stderr and key not in out.read_text(encoding="utf-8")


def test_sigterm_mid_audit_writes_partial_findings_and_exits_143(sample_target, tmp_path):
    key = secrets.token_hex(16)
    with Emulator({INDEX: sample_target}, api_key=key) as emu:
        cfg = emulated_config(ROOT / "ragdiag" / "sample" / "data" / "audit.toml", emu.url, INDEX, ENV,
                              tmp_path / "audit-live.toml", concurrency=CONCURRENCY, retries=4,
                              cache=False)
        out = tmp_path / "findings.json"
        proc = _start_audit(cfg, out, key, tmp_path)
        try:
            _wait_for_searches(emu, proc, 30)
            proc.send_signal(signal.SIGTERM)
            at_signal = emu.stats()["search_requests"]
            stdout, stderr = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                proc.kill()
        after_signal = emu.stats()["search_requests"] - at_signal
    assert proc.returncode == 143, stdout[-3000:] + stderr[-3000:]
    assert "SIGTERM: no more requests are sent" in stderr and "Traceback" not in stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    intr = data["meta"]["interrupted"]
    assert intr["signal"] == "SIGTERM" and intr["exit_code"] == 143 and intr["during"]
    assert len(data["findings"]) == len(load_checklist())
    not_run = [f for f in data["findings"] if "not run: the audit was interrupted by SIGTERM" in f["headline"]]
    assert [f["check_id"] for f in not_run] == intr["not_run"] and not_run
    # only what was in flight (and its retries, at most) reached the service after the signal
    assert after_signal <= CONCURRENCY, after_signal
    assert data["meta"]["runner"]["not_sent"] > 0
