"""The benchmarks import ragdiag's internals inside their functions, so a moved module breaks
them only when someone runs them: every `from ragdiag... import name` in benchmarks/ must
resolve against the current package."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _imports() -> list[tuple[str, int, str, str]]:
    out = []
    for path in sorted(BENCH.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ragdiag":
                out += [(path.name, node.lineno, node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                out += [(path.name, node.lineno, a.name, "") for a in node.names if a.name.split(".")[0] == "ragdiag"]
    return out


def test_benchmarks_import_ragdiag_names():
    assert len(_imports()) > 20  # the benchmarks do reach into the package


@pytest.mark.parametrize(("file", "line", "module", "name"), _imports(), ids=lambda v: str(v))
def test_benchmark_import_resolves(file, line, module, name):
    mod = importlib.import_module(module)
    if name:
        assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None, (
            f"benchmarks/{file}:{line}: {module} has no {name}")
