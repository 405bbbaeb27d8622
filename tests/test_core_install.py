"""A core-only install audits an Azure index: the built wheel in a fresh venv with the core
dependencies only (no torch, FAISS, Jupyter or WeasyPrint), against the emulator.

The venv installs the wheel from PyPI (through pip's cache) at the versions of
constraints.txt, and once more at the lower bounds of the core's ranges
(constraints-lowest.txt), so those bounds are tested. The emulator runs in this test
process over the sample index; the core venv runs `ragdiag audit` of an azure-kind config
through the real SDK and must reach the same verdicts as the local audit.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("azure.search.documents")

from ragdiag.sample.live import emulated_config  # noqa: E402
from ragdiag.targets.emulator import Emulator  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
INDEX = "muster-structured"
ENV = "RAGDIAG_CORE_TEST_KEY"
#: modules of the extras that a core install must not have
NOT_IN_CORE = ("torch", "faiss", "sentence_transformers", "bm25s", "Stemmer", "jupyterlab", "ipywidgets",
               "ipykernel", "papermill", "nbconvert", "nbformat", "pandas", "matplotlib", "weasyprint",
               "pysbd", "transformers")


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    proc = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                 str(dist), str(REPO)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return next(dist.glob("ragdiag-*.whl"))


def _core_venv(root: Path, wheel: Path, constraints: str, python: str) -> Path:
    venv = root / "venv"
    proc = _run([python, "-m", "venv", str(venv)])
    assert proc.returncode == 0, proc.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    proc = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 "-c", str(REPO / constraints), str(wheel)], env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return venv


def _env(tmp: Path, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAGDIAG_SAMPLE_DATA",
                                                             "RAGDIAG_CHECKLIST", "COLUMNS")}
    env.update({ENV: key, "RAGDIAG_CACHE": str(tmp / "cache"), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1"})
    return env


@pytest.fixture(scope="module")
def local_statuses(misconfigured_ctx):
    from ragdiag.audit import run_checks

    return {f.check_id: f.status for f in run_checks(misconfigured_ctx).findings}


#: (interpreter, constraints file): this interpreter at the tested pins and at the lower bounds,
#: plus any interpreters in $RAGDIAG_TEST_PYTHONS (os.pathsep-separated paths; e.g. Python 3.12
#: and 3.13, which the core supports: torch for them is only on PyPI as a CUDA build, so the
#: [local] extra is tested on 3.11 alone).
CASES = [(sys.executable, "constraints.txt"), (sys.executable, "constraints-lowest.txt")] + [
    (p, "constraints.txt") for p in os.environ.get("RAGDIAG_TEST_PYTHONS", "").split(os.pathsep) if p]


@pytest.mark.parametrize(("python", "constraints"), CASES,
                         ids=[f"{Path(p).name if p != sys.executable else 'this-python'}-{c}" for p, c in CASES])
def test_core_install_audits_the_emulated_azure_index(python, constraints, wheel, sample_target,
                                                       local_statuses, tmp_path):
    venv = _core_venv(tmp_path, wheel, constraints, python)
    py, exe = str(venv / "bin" / "python"), str(venv / "bin" / "ragdiag")
    key = secrets.token_hex(16)
    env = _env(tmp_path, key)

    # nothing of the extras is importable; the core is
    probe = ("import importlib.util, json, sys; print(json.dumps({m: importlib.util.find_spec(m) is not None "
             f"for m in {NOT_IN_CORE!r} + ('numpy', 'scipy', 'azure.search.documents', 'tree_sitter', "
             "'tiktoken', 'rich', 'ragdiag')}))")
    found = json.loads(_run([py, "-c", probe], env=env, cwd=tmp_path, check=True).stdout)
    assert [m for m in NOT_IN_CORE if found[m]] == []
    assert all(found[m] for m in ("numpy", "scipy", "azure.search.documents", "tree_sitter", "tiktoken",
                                  "rich", "ragdiag"))
    where = _run([py, "-c", "import ragdiag; print(ragdiag.__file__)"], env=env, cwd=tmp_path, check=True)
    assert str(venv) in where.stdout  # the wheel, not the checkout

    with Emulator({INDEX: sample_target}, api_key=key) as emu:
        cfg = emulated_config(REPO / "ragdiag" / "sample" / "data" / "audit.toml", emu.url, INDEX, ENV,
                              tmp_path / "audit-azure.toml", concurrency=4)
        out = tmp_path / "out"
        audit = _run([exe, "audit", str(cfg), "--quiet", "--json", str(out / "findings.json"),
                      "--junit", str(out / "junit.xml"), "--sarif", str(out / "ragdiag.sarif")],
                     env=env, cwd=tmp_path, timeout=1200)
        stats = emu.stats()
    assert audit.returncode == 1, audit.stdout[-3000:] + audit.stderr[-3000:]  # the sample fails checks
    assert key not in audit.stdout + audit.stderr
    data = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    assert data["meta"]["config"]["target"]["kind"] == "azure"
    assert {f["check_id"]: f["status"] for f in data["findings"]} == local_statuses
    assert data["meta"]["target_stats"]["failures"] == 0
    assert stats["write_requests"] == 0 and stats["search_requests"] > 100
    assert (out / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert json.loads((out / "ragdiag.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"

    # what needs an extra says which one, in one line, exit 2
    sample = _run([exe, "audit", "--quiet", "--checks", "pool_size"], env=env, cwd=tmp_path, timeout=300)
    assert sample.returncode == 2, sample.stderr[-2000:]
    assert "ragdiag[local]" in sample.stderr and "Traceback" not in sample.stderr
    frame = _run([py, "-c", "import ragdiag; ragdiag.AuditResult(findings=()).to_dataframe()"], env=env,
                 cwd=tmp_path)
    assert "ragdiag[notebooks]" in frame.stderr and "OptionalDependencyError" in frame.stderr
