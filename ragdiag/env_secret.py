"""A secret named by an environment variable: read once, never echoed.

Commands take the *name* of a variable (``--api-key-env VAR``), never the key itself, so the key
stays out of shell history, notebooks, parameters and logs.
"""

from __future__ import annotations

import os

from ragdiag.errors import ConfigError


def secret_from_env(variable: str, remedy: str) -> str:
    """The value of `variable`, stripped; a located ConfigError (exit 2) naming `remedy` when unset or blank."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise ConfigError(f"environment variable {variable} is empty or unset; {remedy}")
    return value
