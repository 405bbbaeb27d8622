"""The ten checks and their registry.

Each built-in check is a module ``ragdiag.checks.<id>`` that registers one
check with ``@register``; its texts and thresholds live in ``checks/<id>.toml``.
Importing this package imports no check module: the registry discovers them
(and plugins from the ``ragdiag.checks`` entry-point group) on first lookup.
"""

from __future__ import annotations

from ragdiag.checks.registry import (
    CHECKS_TABLE_COLUMNS,
    ENTRY_POINT_GROUP,
    KNOWN_NEEDS,
    BrokenCheck,
    Check,
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
]
