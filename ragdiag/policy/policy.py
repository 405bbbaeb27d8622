"""Retrieval policies: a `Policy` holds the profiles and the routing table; a `Route` says where a
question went. `dump_policy` writes a policy back as TOML.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tomli_w

from ragdiag.errors import ConfigError
from ragdiag.model import SearchRequest
from ragdiag.model.schema import STRING, STRING_COLLECTION, IndexSchema
from ragdiag.policy.identity import Identity
from ragdiag.policy.profile import Profile
from ragdiag.policy.routing import INTENTS, explain

DEFAULT_SECURITY_FIELD = "group_ids"
DEFAULT_ROUTE_KEY = "default"

_FIELD_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Route:
    """Where a question went: its intent, the profile, and why."""

    intent: str
    profile: Profile
    rule: str = "explicit"  # the classifier rule that fired, or "explicit"
    fallback: bool = False  # the intent had no route of its own: the default profile was used

    @property
    def profile_name(self) -> str:
        return self.profile.name


@dataclass(frozen=True)
class Policy:
    """The profiles and the routing table of one retrieval policy."""

    name: str
    description: str
    profiles: Mapping[str, Profile]
    routes: Mapping[str, str]
    default_route: str | None
    security_field: str = DEFAULT_SECURITY_FIELD
    path: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        profiles = dict(self.profiles)
        for key, p in profiles.items():
            if not isinstance(p, Profile) or p.name != key:
                raise ConfigError(f"policy '{self.name}': profiles must map each name to the "
                                  f"Profile of that name; '{key}' does not", path=self.path)
        object.__setattr__(self, "profiles", profiles)
        object.__setattr__(self, "routes", dict(self.routes))
        if not _FIELD_PATH.fullmatch(self.security_field or ""):
            raise ConfigError(f"security_field must be a field name such as 'group_ids', got "
                              f"{self.security_field!r}", path=self.path, key="security_field")
        for intent, target in [*self.routes.items(), (DEFAULT_ROUTE_KEY, self.default_route)]:
            if intent != DEFAULT_ROUTE_KEY and intent not in INTENTS:
                raise ConfigError(_unknown_intent(intent), path=self.path, key=f"routes.{intent}")
            if target is not None and target not in profiles:
                raise ConfigError(_missing_profile(intent, target, profiles), path=self.path,
                                  key=f"routes.{intent}")

    # ---- routing ---------------------------------------------------------------------
    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            raise ConfigError(f"policy '{self.name}' has no profile '{name}'; profiles: "
                              f"{', '.join(self.profiles)}", path=self.path) from None

    def route_intent(self, intent: str, *, rule: str = "explicit") -> Route:
        """The route for a known intent (no classifier)."""
        target = self.routes.get(intent)
        if target is not None:
            return Route(intent, self.profiles[target], rule)
        if self.default_route is not None:
            return Route(intent, self.profiles[self.default_route], rule, fallback=True)
        if len(self.profiles) == 1:
            return Route(intent, next(iter(self.profiles.values())), rule, fallback=True)
        raise ConfigError(f"no route for intent '{intent}' and no default route; add "
                          f"`default = \"<profile>\"` under [routes] (profiles: "
                          f"{', '.join(self.profiles)})", path=self.path, key="routes.default")

    def route(self, question: str) -> Route:
        """Classify `question` (ragdiag.policy.routing) and pick its profile."""
        intent, rule = explain(question)
        return self.route_intent(intent, rule=rule)

    def request_for(self, question: str, identity: Identity | None, *, intent: str | None = None,
                    entities: Sequence[str] = ()) -> tuple[Route, SearchRequest]:
        """Route `question` (an explicit `intent` skips the classifier) and build its request."""
        route = self.route(question) if intent is None else self.route_intent(intent)
        request = route.profile.build(question, identity, security_field=self.security_field,
                                      entities=entities)
        return route, request

    # ---- checks and edits ----------------------------------------------------------
    def validate_against(self, schema: IndexSchema) -> list[str]:
        """Problems of the policy on `schema` (fields, configurations, filters), not raised."""
        pre = f"{self.path}: " if self.path else ""
        out = [f"{pre}{m}" for m in self.security_problems(schema)]
        for p in self.profiles.values():
            out.extend(p.validate_against(schema))
        return out

    def security_problems(self, schema: IndexSchema) -> list[str]:
        """Problems of `security_field` on `schema` (the identity clause would be rejected)."""
        out: list[str] = []
        root = self.security_field.split("/")[0]
        if not schema.has_field(root):
            out.append(f"security field '{self.security_field}' is not in index "
                       f"'{schema.name}'; the identity clause would be rejected (fields: "
                       f"{', '.join(schema.field_names)})")
        elif "/" not in self.security_field:
            f = schema.field(root)
            if not f.filterable:
                out.append(f"security field '{f.name}' is not filterable; the identity "
                           "clause cannot be applied")
            if f.type != STRING_COLLECTION:
                out.append(f"security field '{f.name}' is {f.type}, not {STRING_COLLECTION}; "
                           f"the identity clause uses {f.name}/any(...)"
                           + (" (a single-valued string field needs search.in directly)"
                              if f.type == STRING else ""))
        return out

    def with_profile(self, profile: Profile) -> Policy:
        """A copy with `profile` added or replacing the one of the same name."""
        return dataclasses.replace(self, profiles={**self.profiles, profile.name: profile})

    def dump(self) -> str:
        return dump_policy(self)


def _unknown_intent(intent: str) -> str:
    return (f"route '{intent}' is not an intent; intents: {', '.join(INTENTS)} "
            f"(and '{DEFAULT_ROUTE_KEY}' for all others)")


def _missing_profile(intent: str, target: str, profiles: Mapping[str, Any]) -> str:
    return (f"route '{intent}' names profile '{target}', which is not defined; profiles: "
            f"{', '.join(profiles) or 'none'}")


def dump_policy(policy: Policy) -> str:
    """The policy as TOML that `load_policy` reads back to an equal Policy (defaults resolved)."""
    head: dict[str, Any] = {"name": policy.name}
    if policy.description:
        head["description"] = policy.description
    head["security_field"] = policy.security_field
    routes = dict(policy.routes)
    if policy.default_route is not None:
        routes[DEFAULT_ROUTE_KEY] = policy.default_route
    data: dict[str, Any] = {"policy": head}
    if routes:
        data["routes"] = routes
    data["profiles"] = {name: p.to_toml() for name, p in policy.profiles.items()}
    return tomli_w.dumps(data)


__all__ = ["DEFAULT_ROUTE_KEY", "DEFAULT_SECURITY_FIELD", "Policy", "Route", "dump_policy"]
