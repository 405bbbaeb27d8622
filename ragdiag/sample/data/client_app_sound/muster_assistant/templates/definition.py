"""Definition template: what a term means in Muster AG's documents."""

from __future__ import annotations

from ..identity import Identity
from ..retrieval import profiles


def run_definition_template(term: str, identity: Identity) -> list[dict]:
    return profiles.search("definition", question=f"Was bedeutet {term}?", keywords=term, identity=identity)
