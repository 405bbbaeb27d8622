"""Dependencies point one way: which ragdiag package may import which (docs/design/layers.md).

Every import counts, at module level and inside functions (a function-level import is a
dependency that only shows up at run time). A package may import its own layer and the
layers below it; the few imports that still point up are listed in `KNOWN_UPWARD` with the
reason, and the list is exact: a new upward import fails, and so does a listed one that is
gone (delete it from the list). Module-level import cycles are pinned the same way.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "ragdiag"

#: Bottom to top. The target contract (`targets.base`, `targets.registry`) sits with the data
#: it describes; the target implementations above it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ragdiag", "errors", "_optional", "language", "metrics", "cache", "plugins", "http_server", "env_secret"),
    ("inputs", "odata", "model", "encoders", "policy", "outputs", "targets.base", "targets.registry"),
    ("chunks", "codescan", "targets", "observe"),
    ("engine",),
    ("checks",),
    ("audit", "plan", "ci", "report", "optimize", "tuner", "drafting", "init", "sample", "extend"),
    ("cli", "__main__"),
)

#: (importing package, imported package) -> why it still points up.
KNOWN_UPWARD: dict[tuple[str, str], str] = {
    ("model", "checks"): "a Finding displayed in a notebook draws its check's figure (checks.figures)",
    ("inputs", "report"): "a spec's [evidence] conditions are validated in the report's condition language",
    ("engine", "checks"): "the loss funnel and the declared values count tokens with check 8's "
                          "tokenizer (checks._context_tokens)",
    ("targets", "sample"): "pgvector `embedded = true` opens the sample's embedded database",
    ("inputs", "targets"): "the config's analyzer names are checked against the local target's analyzers",
}

#: Module-level import cycles (function-level imports counted), by their members.
KNOWN_CYCLES: set[frozenset[str]] = {
    frozenset({"inputs.limits", "inputs.tomlfile"}),
    frozenset({"odata.ast", "odata.render"}),
    frozenset({"checks.base", "checks.figures", "checks.registry", "model.findings"}),
    frozenset({"report.format", "report.tables"}),
    frozenset({"optimize.result", "report.optimization"}),
    frozenset({"checks._observed", "checks.prerank_filters", "checks.shared_query_text"}),
}
#: the client-code scanner's modules call each other's resolvers (one cycle, inside codescan)
CODESCAN_CYCLE_PREFIX = "codescan."


def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(path: Path, module: str, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported ragdiag module, line) for every import in the file, at any depth."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rsplit(".", 1)[0] if "." in name else ""
            if name.startswith("ragdiag") and name != module:
                out.append((name, node.lineno))
    return out


def _layer_of(module: str) -> tuple[str, int]:
    rel = module.split(".", 1)[1] if "." in module else "ragdiag"
    for depth in (2, 1):
        key = ".".join(rel.split(".")[:depth])
        for i, layer in enumerate(LAYERS):
            if key in layer:
                return rel.split(".")[0] if key != "ragdiag" else "ragdiag", i
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS (and docs/design/layers.md)")


def upward_imports(modules: dict[str, Path] | None = None) -> dict[tuple[str, str], list[str]]:
    modules = modules if modules is not None else _modules()
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, path in modules.items():
        a, la = _layer_of(module)
        for imported, line in _imports(path, module, modules):
            b, lb = _layer_of(imported)
            if lb > la:
                found[(a, b)].append(f"{module}:{line} imports {imported}")
    return dict(found)


def cycles() -> list[frozenset[str]]:
    modules = _modules()
    edges = {m: {i for i, _ in _imports(p, m, modules)} for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components, iteratively deep enough
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(c.split(".", 1)[1] for c in comp))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return out


def test_every_package_is_in_a_layer():
    for module in _modules():
        _layer_of(module)


def test_imports_point_down_except_the_known_ones():
    found = upward_imports()
    new = {k: v for k, v in found.items() if k not in KNOWN_UPWARD}
    assert not new, "imports pointing up a layer (see docs/design/layers.md):\n" + "\n".join(
        line for lines in new.values() for line in lines)
    gone = set(KNOWN_UPWARD) - set(found)
    assert not gone, f"no longer imported, delete from KNOWN_UPWARD: {sorted(gone)}"


def test_the_cache_folder_and_the_default_embedder_are_not_the_samples():
    found = upward_imports().get(("targets", "sample"), [])
    assert found and all("sample.pgvector" in line for line in found), found  # only the embedded database


def test_the_context_is_below_the_orchestrator():
    modules = _modules()
    for name in ("ragdiag.engine.context", "ragdiag.engine.ablation", "ragdiag.engine.funnel"):
        assert not [i for i, _ in _imports(modules[name], name, modules) if i == "ragdiag.audit"], name


def test_module_cycles_are_only_the_known_ones():
    found = {c for c in cycles() if not all(m.startswith(CODESCAN_CYCLE_PREFIX) for m in c)}
    assert found - KNOWN_CYCLES == set(), f"new import cycles: {sorted(map(sorted, found - KNOWN_CYCLES))}"
    assert KNOWN_CYCLES - found == set(), f"cycles gone, delete them: {sorted(map(sorted, KNOWN_CYCLES - found))}"


def test_the_rules_catch_a_planted_upward_import(tmp_path):
    """Both ways: an engine module importing the orchestrator inside a function is reported."""
    planted = tmp_path / "_planted.py"
    planted.write_text("def f():\n    from ragdiag.audit import run_checks\n    return run_checks\n", encoding="utf-8")
    found = upward_imports({**_modules(), "ragdiag.engine._planted": planted})
    assert found[("engine", "audit")] == ["ragdiag.engine._planted:2 imports ragdiag.audit"]
