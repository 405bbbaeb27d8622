"""Fact template: one precise, citable passage ("Which notice period applies to ...?")."""

from __future__ import annotations

from ..identity import Identity
from ..retrieval import profiles
from ..retrieval.keywords import write_keywords


def run_fact_template(question: str, identity: Identity) -> list[dict]:
    return profiles.search("fact", question=question, keywords=write_keywords(question), identity=identity)
