"""A report of an emulated live audit never contains the API key (ipynb, HTML, PDF).

The audit goes through the real Azure SDK to the emulator on loopback; the key is
only in the environment, as in a consultant's shell.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess

import pytest

from ragdiag.report import build_report
from ragdiag.sample.live import emulated_config
from ragdiag.sample.system import sample_dir
from ragdiag.targets.emulator import Emulator

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

ENV = "RAGDIAG_REPORT_LIVE_KEY"


def test_emulated_live_report_holds_no_key(tmp_path, monkeypatch, sample_target):
    key = secrets.token_hex(16)
    monkeypatch.setenv(ENV, key)  # the papermill kernel inherits it, as a shell would pass it
    with Emulator({"muster-structured": sample_target}, api_key=key) as emu:
        config = emulated_config(sample_dir() / "audit.toml", emu.url, "muster-structured", ENV,
                                 tmp_path / "live-audit.toml", concurrency=4)
        paths = build_report(config, tmp_path / "out", checks=["pool_size", "acl_trimming", "goldset"],
                             progress=False, log=lambda m: None)
        stats = emu.stats()
    assert stats["search_requests"] > 100  # the audit really went through the emulator
    assert stats["write_requests"] == 0
    assert key not in config.read_text()
    html = paths.html.read_text(encoding="utf-8")
    assert "muster-structured (azure)" in html  # the title page names the live target it audited
    for path in (paths.ipynb, paths.html):
        assert key not in path.read_text(encoding="utf-8"), f"the key leaked into {path.name}"
    assert key.encode() not in paths.pdf.read_bytes()
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(paths.pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
        assert key not in text
        assert "Post-filter candidate pool" in text
