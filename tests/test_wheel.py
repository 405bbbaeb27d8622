"""The built wheel runs outside the checkout: specs, report template and sample data are
package data read through importlib.resources, not files next to the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv holding only the wheel; third-party packages come from this venv's
    site-packages through a .pth line (no download, and no editable ragdiag finder)."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(root / "dist"), str(REPO)], check=True, capture_output=True)
    wheel = next((root / "dist").glob("ragdiag-*.whl"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "host-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # without PYTHONPATH: a checkout on it (with the ragdiag.egg-info the build leaves) would make
    # pip say "ragdiag is already installed" and install nothing
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                    "--no-deps", "-q", str(wheel)], check=True, capture_output=True, env=env)
    return wheel, venv


def _env(tmp):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAGDIAG_SAMPLE_DATA",
                                                             "RAGDIAG_CHECKLIST")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    # nbconvert's templates are data files of the host venv (a real install puts them in its own)
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    return env


def test_wheel_holds_the_package_data(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "ragdiag/checks/specs/pool_size.toml" in names
    assert "ragdiag/checks/common.toml" in names
    assert "ragdiag/model/findings.schema.json" in names
    assert "ragdiag/report/template/audit_report.ipynb" in names
    assert "ragdiag/sample/data/audit.toml" in names
    assert "ragdiag/sample/data/index/structured.jsonl" in names
    assert not any(n.startswith("ragdiag/sample/data/") and n.endswith("__init__.py") and "client_app" not in n
                   for n in names)


def test_installed_wheel_runs_from_any_folder(installed, tmp_path):
    _, venv = installed
    exe = str(venv / "bin" / "ragdiag")
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import ragdiag; print(ragdiag.__file__)"],
                           cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=True)
    assert str(venv) in where.stdout, where.stdout  # the wheel's copy, not the checkout
    listed = subprocess.run([exe, "checks", "list"], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                            text=True)
    assert listed.returncode == 0, listed.stderr
    assert "pool_size" in listed.stdout and "acl_trimming" in listed.stdout
    out = tmp_path / "findings.json"
    audit = subprocess.run([exe, "audit", "--json", str(out), "--checks", "pool_size,call_sites", "--quiet"],
                           cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True)
    assert audit.returncode in (0, 1), audit.stderr
    data = json.loads(out.read_text())
    assert {f["check_id"] for f in data["findings"]} == {"pool_size", "call_sites"}
    report = subprocess.run([exe, "report", "--findings", str(out), "--out", str(tmp_path / "report")],
                            cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True)
    assert report.returncode == 0, report.stderr[-2000:]
    assert (tmp_path / "report" / "report.pdf").stat().st_size > 10_000
