"""The `acme` target kind: records from a JSON file, searched in memory (`MockTarget`).

A real plugin would open its search service here; the kind's contract is the same: it owns
its ``[target]`` keys, validates them when the config loads (errors carry the file and line)
and opens a read-only target that declares its capabilities.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragdiag.extend import MockTarget, OptionReader


class AcmeKind:
    name = "acme"
    keys = ("records",)

    def validate(self, options: OptionReader) -> dict[str, Any]:
        return {"records": options.path("records", required=True)}

    def open(self, options: Mapping[str, Any], config: Any, *, log: Any, progress: bool) -> MockTarget:
        records = json.loads(options["records"].read_text(encoding="utf-8"))
        return MockTarget(records, name="acme", capabilities=("documents", "get_document"))
