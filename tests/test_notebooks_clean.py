"""Notebook hygiene: committed notebooks are stripped, parameterised and never download."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "ragdiag" / "report" / "template").glob("*.ipynb")])
FORBIDDEN = [
    (re.compile(r"pip\s+install", re.I), "pip install"),
    (re.compile(r"^\s*[!%]\s*pip\b", re.M), "!pip / %pip"),
    (re.compile(r"^\s*[!%]\s*(conda|mamba|apt|apt-get|curl|wget)\b", re.M), "shell installs/downloads"),
    (re.compile(r"\burllib\b"), "urllib"),
    (re.compile(r"\brequests\.(get|post)\b"), "requests.get/post"),
    (re.compile(r"https?://"), "http URLs"),
    (re.compile(r"\b(hf_hub_download|snapshot_download|urlretrieve)\b"), "model/data downloads"),
]


def test_there_are_notebooks():
    assert any(p.name == "audit_report.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_clean(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code):
        assert cell.get("outputs") == [], f"{path.name}: code cell {i} has outputs; strip them"
        assert cell.get("execution_count") is None, f"{path.name}: code cell {i} has an execution count"
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one code cell tagged 'parameters'"
    assert "papermill" not in nb.metadata, f"{path.name}: papermill run metadata committed"
    for i, cell in enumerate(code):
        for pattern, what in FORBIDDEN:
            match = pattern.search(cell.source)
            assert match is None, f"{path.name}: {what} in code cell {i}: {match.group(0)!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_parameters_hold_no_secrets(path):
    nb = nbformat.read(str(path), as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    names = re.findall(r"^(\w+)\s*=", params.source, re.M)
    for name in names:
        assert not re.search(r"key|token|secret|password|credential", name, re.I), (
            f"{path.name}: parameter {name!r} looks like a secret; read it from the environment")
