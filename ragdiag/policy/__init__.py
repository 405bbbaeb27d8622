"""Named query profiles: the retrieval policy as data, one profile per route.

A policy file (TOML) holds the profiles and the routing table; a profile turns
(question, identity) into the complete `SearchRequest`, so every search goes
through one place that decides the channel texts, vector fields and weights,
filters, scoring profile, semantic configuration and the security clause:

    policy = load_policy("profiles.toml")
    route, request = policy.request_for("What does E-4021 mean?",
                                        Identity("anna", ("sales", "all-staff")))
    route.intent, route.profile.name, request.filter

The modules: `identity` (who asks), `profile` (`Profile`, `VectorQuerySpec`:
building one request), `policy` (`Policy`, `Route`: routing to a profile),
`load` (reading a policy file with line numbers), `convert` (the value checks
both share), `routing` (the intent classifier) and `text` (keyword extraction).
"""

from __future__ import annotations

from ragdiag.policy.identity import Identity
from ragdiag.policy.load import load_policy, loads_policy
from ragdiag.policy.policy import (
    DEFAULT_ROUTE_KEY,
    DEFAULT_SECURITY_FIELD,
    Policy,
    Route,
    dump_policy,
)
from ragdiag.policy.profile import (
    KEYWORD_TEXT_MODES,
    SEARCH_MODES,
    SEMANTIC_TEXT_MODES,
    VECTOR_TEXT_MODES,
    Profile,
    VectorQuerySpec,
    dump_profile,
)

__all__ = [
    "DEFAULT_ROUTE_KEY",
    "DEFAULT_SECURITY_FIELD",
    "KEYWORD_TEXT_MODES",
    "SEARCH_MODES",
    "SEMANTIC_TEXT_MODES",
    "VECTOR_TEXT_MODES",
    "Identity",
    "Policy",
    "Profile",
    "Route",
    "VectorQuerySpec",
    "dump_policy",
    "dump_profile",
    "load_policy",
    "loads_policy",
]
