"""Reading a policy file: `load_policy` / `loads_policy` check every value and report
ConfigErrors naming file, line and key (lines from `ragdiag.inputs.tomlfile.TomlLocator`).

The file:

    [policy]
    name = "tuned"
    security_field = "group_ids"      # the identity clause is built on this field

    [routes]                           # intent -> profile; `default` for the rest
    fact = "fact"
    default = "fact"

    [defaults]                         # keys every profile inherits unless it sets them
    query_type = "semantic"

    [profiles.fact]
    search_fields = ["content", "title"]
    keyword_text = "keywords"          # verbatim | keywords | none (no keyword leg)
    filter = "level eq 'evidence'"
      [[profiles.fact.vector_queries]]
      fields = ["content_vector"]
      k = 50

The accepted keys are the fields of `Profile` and `VectorQuerySpec` (error
messages list them). TOML has no null: an empty string clears an optional
string inherited from `[defaults]` (`filter = ""`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.inputs.limits import excerpt, read_text, toml_loads
from ragdiag.inputs.tomlfile import TomlLocator
from ragdiag.policy.convert import _describe, _Invalid, _str
from ragdiag.policy.policy import (
    _FIELD_PATH,
    DEFAULT_ROUTE_KEY,
    DEFAULT_SECURITY_FIELD,
    Policy,
    _missing_profile,
    _unknown_intent,
)
from ragdiag.policy.profile import (
    _PROFILE_CONVERTERS,
    _VQ_CONVERTERS,
    Profile,
    VectorQuerySpec,
    _cross_problems,
)
from ragdiag.policy.routing import INTENTS

_POLICY_KEYS = ("name", "description", "security_field")
_TOP_KEYS = ("policy", "routes", "defaults", "profiles")


def load_policy(path: str | Path) -> Policy:
    """Read and check a policy file; errors are ConfigErrors naming file, line and key."""
    p = Path(path)
    text = read_text(path, what="profiles file", error=ConfigError)
    return loads_policy(text, path=str(path), default_name=p.stem)


def loads_policy(text: str, *, path: str | None = None, default_name: str = "policy") -> Policy:
    """Like `load_policy` for TOML text; `path` only names the source in messages."""
    where = path or "<string>"
    data = toml_loads(text, path=where, error=ConfigError)
    return _Loader(text, where).policy(data, path, default_name)


class _Loader:
    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.loc = TomlLocator(text)

    def fail(self, message: str, table: tuple[Any, ...], key: str | None = None) -> ConfigError:
        dotted = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in table)
        dotted = dotted.replace(".[", "[")
        full = f"{dotted}.{key}" if key and dotted else (key or dotted or None)
        return ConfigError(message, path=self.where, line=self.loc.line(table, key), key=full)

    def table(self, value: Any, table: tuple[Any, ...], key: str | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            name = _table_name(table + ((key,) if key else ()))
            raise self.fail(f"{name} must be a table, got {_describe(value)}", table, key)
        return value

    def unknown(self, data: Mapping[str, Any], allowed: Sequence[str], table: tuple[Any, ...]) -> None:
        for key in data:
            if key not in allowed:
                raise self.fail(f"unknown key {excerpt(key, 60)} in {_table_name(table)}; allowed keys: "
                                f"{', '.join(allowed)}", table, key)

    def convert(self, conv: Callable[[Any], Any], value: Any, table: tuple[Any, ...], key: str) -> Any:
        try:
            return conv(value)
        except _Invalid as exc:
            raise self.fail(f"'{key}' in {_table_name(table)} {exc}", table, key) from None

    def policy(self, data: dict[str, Any], path: str | None, default_name: str) -> Policy:
        self.unknown(data, _TOP_KEYS, ())
        head = self.table(data.get("policy", {}), (), "policy")
        self.unknown(head, _POLICY_KEYS, ("policy",))
        name = self.convert(_str, head.get("name", default_name), ("policy",), "name")
        description = self.convert(_str, head.get("description", ""), ("policy",), "description")
        security_field = self.convert(_str, head.get("security_field", DEFAULT_SECURITY_FIELD),
                                      ("policy",), "security_field")
        if not _FIELD_PATH.fullmatch(security_field):
            raise self.fail(f"'security_field' in [policy] must be a field name such as "
                            f"'group_ids', got {excerpt(security_field)}", ("policy",), "security_field")

        defaults = self.profile_values(self.table(data.get("defaults", {}), (), "defaults"),
                                       ("defaults",))
        raw_profiles = self.table(data.get("profiles", {}), (), "profiles")
        if not raw_profiles:
            raise self.fail("no profiles defined; add a [profiles.<name>] table", (), "profiles")
        profiles: dict[str, Profile] = {}
        for pname, raw in raw_profiles.items():
            table = ("profiles", pname)
            values = {**defaults, **self.profile_values(self.table(raw, ("profiles",), pname), table)}
            profiles[pname] = self.make_profile(pname, values, table)

        routes_raw = self.table(data.get("routes", {}), (), "routes")
        routes: dict[str, str] = {}
        default_route = None
        for intent, target in routes_raw.items():
            target = self.convert(_str, target, ("routes",), intent)
            if intent != DEFAULT_ROUTE_KEY and intent not in INTENTS:
                raise self.fail(_unknown_intent(intent), ("routes",), intent)
            if target not in profiles:
                raise self.fail(_missing_profile(intent, target, profiles), ("routes",), intent)
            if intent == DEFAULT_ROUTE_KEY:
                default_route = target
            else:
                routes[intent] = target
        return Policy(name=name, description=description, profiles=profiles, routes=routes,
                      default_route=default_route, security_field=security_field, path=path)

    def profile_values(self, raw: dict[str, Any], table: tuple[Any, ...]
                       ) -> dict[str, tuple[Any, tuple[Any, ...]]]:
        """Checked values of one profile (or [defaults]) table: key -> (value, origin table)."""
        allowed = [*_PROFILE_CONVERTERS, "vector_queries"]
        self.unknown(raw, allowed, table)
        out: dict[str, tuple[Any, tuple[Any, ...]]] = {}
        for key, value in raw.items():
            if key == "vector_queries":
                out[key] = (self.vector_queries(value, table), table)
            else:
                out[key] = (self.convert(_PROFILE_CONVERTERS[key], value, table, key), table)
        return out

    def vector_queries(self, value: Any, table: tuple[Any, ...]) -> tuple[VectorQuerySpec, ...]:
        if not isinstance(value, list):
            raise self.fail(f"'vector_queries' in {_table_name(table)} must be an array of tables "
                            f"([[...vector_queries]]), got {_describe(value)}", table, "vector_queries")
        out = []
        for i, raw in enumerate(value):
            vt = (*table, "vector_queries", i)
            raw = self.table(raw, table, "vector_queries")
            self.unknown(raw, list(_VQ_CONVERTERS), vt)
            if "fields" not in raw:
                raise self.fail(f"{_table_name(vt)} needs 'fields', e.g. fields = [\"content_vector\"]",
                                vt)
            kwargs = {k: self.convert(_VQ_CONVERTERS[k], v, vt, k) for k, v in raw.items()}
            out.append(VectorQuerySpec(**kwargs, source=(self.where, self.loc.line(vt) or 0)))
        return tuple(out)

    def make_profile(self, name: str, values: Mapping[str, tuple[Any, tuple[Any, ...]]],
                     table: tuple[Any, ...]) -> Profile:
        kwargs = {k: v for k, (v, _) in values.items()}
        # Key combinations that cannot work, reported at the line of the key that is set.
        for index, key, message in _cross_problems({**_PROFILE_DEFAULTS, **kwargs}):
            if index is None:
                origin = values[key][1] if key in values else table
                raise self.fail(f"profile '{name}': {message}", origin, key)
            origin = values["vector_queries"][1]
            raise self.fail(f"profile '{name}': {message}", (*origin, "vector_queries", index), key)
        return Profile(name=name, **kwargs, source=(self.where, self.loc.line(table) or 0))


_PROFILE_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Profile)
                                     if f.name not in ("name", "source")}


def _table_name(table: tuple[Any, ...]) -> str:
    if not table:
        return "the top level"
    parts = [p if isinstance(p, int) or len(str(p)) <= 60 else excerpt(str(p), 60) for p in table]
    if isinstance(parts[-1], int):
        return f"[[{'.'.join(map(str, parts[:-1]))}]] #{parts[-1] + 1}"
    return f"[{'.'.join(map(str, parts))}]"


__all__ = ["load_policy", "loads_policy"]
