"""/v1/definition kept for old clients; it goes through the same profile as /templates/definition."""

from __future__ import annotations

from ..identity import Identity
from ..templates.definition import run_definition_template


def legacy_definition_search(term: str, identity: Identity) -> list[dict]:
    return run_definition_template(term, identity)
