"""The public API is what notebooks and users import; this pins it (a change is deliberate)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ragdiag

EXPECTED = [
    "__version__",
    "open_audit", "run_audit", "build_context", "run_checks", "open_target", "AuditContext",
    "load_config", "AuditConfig", "sample_config", "sample_dir",
    "AuditResult", "Finding", "Evidence", "localize", "figure", "load_checklist",
    "SearchRequest", "VectorQuery", "Trace", "Hit", "IndexSchema",
    "load_policy", "Policy", "Profile", "Identity", "load_goldset", "load_query_log",
    "probes", "ProfileTuner", "optimize_policy",
    "RagdiagError", "ConfigError", "InputDataError", "TargetError",
]
NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_all_is_pinned():
    assert ragdiag.__all__ == EXPECTED


def test_every_name_resolves():
    for name in EXPECTED:
        assert getattr(ragdiag, name) is not None, name


def test_import_is_cheap():
    code = ("import sys, ragdiag; heavy = [m for m in ('numpy', 'torch', 'faiss', 'azure', 'ipywidgets', "
            "'matplotlib') if m in sys.modules]; assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_name_is_an_attribute_error():
    try:
        ragdiag.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_notebooks_import_only_the_public_api():
    import json
    import re

    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        private = re.findall(r"^\s*(?:from|import)\s+(ragdiag\.[\w.]+)", code, re.M)
        assert not private, f"{path.name} imports internals {private}; use `import ragdiag` names"
