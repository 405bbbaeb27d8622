"""The secret scan: no report output may contain the value of a secret-looking environment variable.

`build_report` scans the notebook, the HTML and the PDF before anything is written.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping

from ragdiag.errors import SecretLeakError

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
MIN_SECRET_LEN = 8


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret-looking environment variables (name has KEY, TOKEN, SECRET or PASSWORD) with a
    non-trivial value (at least 8 characters)."""
    env = os.environ if env is None else env
    return {name: value for name, value in env.items()
            if SECRET_NAME.search(name) and value and len(value.strip()) >= MIN_SECRET_LEN}


def _variants(value: str) -> set[str]:
    v = value.strip()
    return {v, html.escape(v), html.escape(v, quote=False), json.dumps(v)[1:-1]}


def find_secrets(text: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Names of the secret-looking environment variables whose value occurs in `text`."""
    found = []
    for name, value in sorted(secret_values(env).items()):
        if any(variant and variant in text for variant in _variants(value)):
            found.append(name)
    return found


def assert_no_secrets(texts: Mapping[str, str], env: Mapping[str, str] | None = None) -> None:
    """Raise `SecretLeakError` naming the output and the variable (never the value)."""
    for where, text in texts.items():
        names = find_secrets(text, env)
        if names:
            raise SecretLeakError(
                f"the report {where} contains the value of environment variable(s) "
                f"{', '.join('$' + n for n in names)}; nothing was written. Secrets must never "
                "reach report parameters or outputs: check what the notebook prints")
