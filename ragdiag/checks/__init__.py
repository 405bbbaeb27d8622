"""The ten checks and their registry.

Each built-in check is a module ``ragdiag.checks.<id>`` that registers one
check with ``@register``; its texts and thresholds live in ``checks/<id>.toml``.
`Check` is the base class a check subclasses (`ragdiag.checks.base`); `CheckProtocol` what
the registry accepts from a plugin that does not subclass it.
Importing this package imports no check module: the registry discovers them
(and plugins from the ``ragdiag.checks`` entry-point group) on first lookup.
"""

from __future__ import annotations

from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.registry import (
    CHECKS_TABLE_COLUMNS,
    ENTRY_POINT_GROUP,
    KNOWN_NEEDS,
    BrokenCheck,
    CheckProtocol,
    PlaceholderCheck,
    Registry,
    all_checks,
    available,
    checks_table,
    default_registry,
    get,
    is_implemented,
    load_errors,
    register,
    resolve,
    run_check,
)

__all__ = [
    "CHECKS_TABLE_COLUMNS",
    "ENTRY_POINT_GROUP",
    "KNOWN_NEEDS",
    "BrokenCheck",
    "Check",
    "CheckProtocol",
    "PlaceholderCheck",
    "Registry",
    "all_checks",
    "available",
    "checks_table",
    "default_registry",
    "get",
    "is_implemented",
    "load_errors",
    "register",
    "resolve",
    "run_check",
    "Verdict",
]
