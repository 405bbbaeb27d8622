"""The extension API: everything a third-party check or target needs, in one pinned place.

A check subclasses `Check`, declares the audit inputs it `needs` and records what it
observed into a `Verdict`; it registers with `register_check` (or the ``ragdiag.checks``
entry-point group) and ships its spec (texts, thresholds) as a TOML file named by
``spec_file``. A target implements the `Target` protocol, declares what else it can do in
``capabilities`` (`CAPABILITIES`), and joins through a `TargetKind` registered with
`register_target_kind` (or the ``ragdiag.targets`` entry-point group). `MockTarget` is an
in-memory target for an extension's tests. See docs/extending.md for a worked plugin package.

Everything named here is pinned by ``tests/test_extend.py``: a change is deliberate and noted.
Names load lazily, so importing this module stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # checks
    "Check": "ragdiag.checks.base",
    "CheckProtocol": "ragdiag.checks.registry",
    "Verdict": "ragdiag.checks.base",
    "SkipCheck": "ragdiag.checks.base",
    "INPUTS": "ragdiag.checks.base",
    "register_check": "ragdiag.checks.registry:register",
    "run_check": "ragdiag.checks.registry",
    "CheckSpec": "ragdiag.inputs.checklist",
    "load_spec": "ragdiag.inputs.checklist",
    "Message": "ragdiag.model.messages",
    # what a check returns
    "Finding": "ragdiag.model.findings",
    "Evidence": "ragdiag.model.findings",
    "Effect": "ragdiag.model.findings",
    "Location": "ragdiag.model.findings",
    "AuditResult": "ragdiag.model.findings",
    # figures drawn from a finding's evidence
    "plt": "ragdiag.checks.figures",
    "column_values": "ragdiag.checks.figures",
    "figure_text": "ragdiag.checks.figures:text",
    # what a check reads
    "AuditContext": "ragdiag.engine.context",
    "SearchRequest": "ragdiag.model.request",
    "VectorQuery": "ragdiag.model.request",
    "Trace": "ragdiag.model.trace",
    "Hit": "ragdiag.model.trace",
    "RankedList": "ragdiag.model.trace",
    "IndexSchema": "ragdiag.model.schema",
    "Field": "ragdiag.model.schema",
    # targets
    "Target": "ragdiag.targets.base",
    "CAPABILITIES": "ragdiag.targets.base",
    "CAPABILITY_MEMBERS": "ragdiag.targets.base",
    "has_capability": "ragdiag.targets.base",
    "missing_members": "ragdiag.targets.base",
    "TargetKind": "ragdiag.targets.registry",
    "OptionReader": "ragdiag.targets.registry",
    "register_target_kind": "ragdiag.targets.registry:register_kind",
    "MockTarget": "ragdiag.targets.mock",
    # errors
    "RagdiagError": "ragdiag.errors",
    "ConfigError": "ragdiag.errors",
    "InputDataError": "ragdiag.errors",
    "TargetError": "ragdiag.errors",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    ref = _EXPORTS.get(name)
    if ref is None:
        raise AttributeError(f"module 'ragdiag.extend' has no attribute {name!r}")
    module, _, attr = ref.partition(":")
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
