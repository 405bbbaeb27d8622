"""ragdiag: a diagnostic and audit workbench for the retrieval half of RAG systems.

The public API (pinned by ``tests/test_public_api.py``); everything else is internal::

    import ragdiag

    audit = ragdiag.open_audit()              # the embedded sample; or open_audit("audit.toml")
    result = audit.run()                      # an AuditResult: findings, JSON, exit code
    result["pool_size"]                       # one Finding, displays itself in a notebook
    ragdiag.figure(result["pool_size"])       # its figure (matplotlib), drawn from its evidence
    ragdiag.localize(result, "de")            # every computed text in German
    ragdiag.ProfileTuner(audit, "definition") # the widget (imports ipywidgets on first use)
    ragdiag.optimize_policy(audit).write("out")  # a proposed policy with held-out evidence

Names load lazily, so ``import ragdiag`` stays cheap (no numpy, torch or SDK at import).
Extensions (a check, a target kind) import ``ragdiag.extend``, pinned by ``tests/test_extend.py``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # audits
    "open_audit": "ragdiag.audit",
    "run_audit": "ragdiag.audit",
    "build_context": "ragdiag.audit",
    "run_checks": "ragdiag.audit",
    "open_target": "ragdiag.audit",
    "AuditContext": "ragdiag.engine.context",
    "load_config": "ragdiag.inputs.config",
    "AuditConfig": "ragdiag.inputs.config",
    "sample_config": "ragdiag.sample.system",
    "sample_dir": "ragdiag.sample.system",
    # results
    "AuditResult": "ragdiag.model.findings",
    "Finding": "ragdiag.model.findings",
    "Evidence": "ragdiag.model.findings",
    "localize": "ragdiag.checks.base",
    "figure": "ragdiag.checks.figures",
    "load_checklist": "ragdiag.inputs.checklist",
    # the request model
    "SearchRequest": "ragdiag.model",
    "VectorQuery": "ragdiag.model",
    "Trace": "ragdiag.model",
    "Hit": "ragdiag.model",
    "IndexSchema": "ragdiag.model.schema",
    # policy and inputs
    "load_policy": "ragdiag.policy",
    "Policy": "ragdiag.policy",
    "Profile": "ragdiag.policy",
    "Identity": "ragdiag.policy",
    "load_goldset": "ragdiag.inputs.goldset",
    "load_query_log": "ragdiag.inputs.querylog",
    # probes, for what-ifs in notebooks
    "probes": "ragdiag.engine",
    # the tuner (ipywidgets imported on first use)
    "ProfileTuner": "ragdiag.tuner",
    # the optimizer: a proposed policy validated on held-out questions
    "optimize_policy": "ragdiag.optimize",
    # errors
    "RagdiagError": "ragdiag.errors",
    "ConfigError": "ragdiag.errors",
    "InputDataError": "ragdiag.errors",
    "TargetError": "ragdiag.errors",
}

__all__ = ["__version__", *_EXPORTS]

# optional dependencies (extras) missing at a lazy import raise an error naming the extra
from ragdiag import _optional  # noqa: E402

_optional.install()


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragdiag' has no attribute {name!r}")
    mod = importlib.import_module(module)
    value = getattr(mod, name) if hasattr(mod, name) else importlib.import_module(f"{module}.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
