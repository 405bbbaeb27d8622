"""Verification template: evidence for and against a claim ("Is it true that ...?")."""

from __future__ import annotations

from ..identity import Identity
from ..retrieval import profiles
from ..retrieval.keywords import write_keywords


def run_verification_template(claim: str, identity: Identity) -> dict:
    keywords = write_keywords(claim)
    supporting = profiles.search("verification", question=claim, keywords=keywords, identity=identity)
    contradicting = profiles.search("verification", question=f"Widerlegt: {claim}", keywords=keywords,
                                    identity=identity)
    return {"supporting": supporting, "contradicting": contradicting}
