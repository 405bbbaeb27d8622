"""The audit config (TOML): target, profiles, goldset, query log, identities, code, checklist, output.

Paths are relative to the config file. Everything is optional, the target too: without
``[target]`` the audit is code-only (client code, no index) and no probe is sent anywhere.
A check whose input is missing says `skipped` and what to supply. The ``[target]`` table
belongs to its kind (`ragdiag.targets.registry`), which validates its own keys. Secrets
never live here: an Azure key is read from the environment variable the config names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.inputs.tomlfile import TomlFile, check_keys

TARGET_KINDS = ("sample", "local", "azure")  # the built-in kinds; plugins add more
_TOP = ("audit", "target", "inputs", "identities", "runner", "output", "budgets")
_AUDIT = ("name", "client", "system", "language")
_INPUTS = ("profiles", "compare_profiles", "goldset", "query_log", "client_code", "checklist", "entities")
_RUNNER = ("budget", "concurrency", "cache", "timeout_s", "retries")
_OUTPUT = ("dir",)
_BUDGETS = ("context_tokens", "model_window_tokens", "answer_reserve_tokens", "tokenizer")


class TargetConfig:
    """The ``[target]`` table: its kind and the options that kind validated.

    Options read as attributes (``config.target.endpoint``); an option the kind does not
    have reads as None.
    """

    __slots__ = ("kind", "options")

    def __init__(self, kind: str, options: Mapping[str, Any] | None = None, **more: Any) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "options", {**(options or {}), **more})

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "options").get(name)
        except AttributeError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("TargetConfig is read-only")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TargetConfig) and (self.kind, self.options) == (other.kind, other.options)

    def __hash__(self) -> int:
        return hash((self.kind, tuple(sorted(self.options))))

    def __repr__(self) -> str:
        return f"TargetConfig({self.kind!r}, {self.options!r})"

    def describe(self) -> dict[str, Any]:
        """A secret-free summary (the kind's own, or the option names only)."""
        from ragdiag.targets.registry import get_kind

        try:
            kind = get_kind(self.kind)
        except RagdiagError:
            return {"kind": self.kind}
        describe = getattr(kind, "describe", None)
        return {"kind": self.kind, **(describe(self.options) if callable(describe) else {})}


@dataclass(frozen=True)
class AuditConfig:
    path: Path
    name: str
    client: str
    system: str
    language: str
    target: TargetConfig | None = None
    profiles: Path | None = None
    compare_profiles: Path | None = None
    goldset: Path | None = None
    query_log: Path | None = None
    client_code: Path | None = None
    checklist: Path | None = None
    entities: Path | None = None  # entity lexicon {key: [names]} for tag-boost scoring parameters
    identities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    budget: int | None = None
    concurrency: int = 1
    cache: bool = True
    timeout_s: float = 30.0
    retries: int = 4
    output_dir: Path | None = None
    budgets: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """A secret-free summary for reports and JSON output."""
        return {
            "config": str(self.path), "name": self.name, "client": self.client, "system": self.system,
            "target": self.target.describe() if self.target is not None else None,
            "profiles": _s(self.profiles), "compare_profiles": _s(self.compare_profiles),
            "goldset": _s(self.goldset), "query_log": _s(self.query_log),
            "client_code": _s(self.client_code), "identities": sorted(self.identities),
        }


def _s(p: Path | None) -> str | None:
    return str(p) if p else None


def _target(tf: TomlFile, table: Mapping[str, Any], base: Path) -> TargetConfig:
    """The ``[target]`` table validated by its kind (unknown keys refused with file and line)."""
    from ragdiag.targets.registry import OptionReader, get_kind

    kind_name = table.get("kind")
    if not isinstance(kind_name, str) or not kind_name:
        raise tf.error("[target] needs kind = \"sample\", \"local\" or \"azure\" (or a plugin's kind); "
                       "leave [target] out for a code-only audit", "target", "kind")
    try:
        kind = get_kind(kind_name)
    except ConfigError as exc:
        raise tf.error(str(exc), "target", "kind") from None
    check_keys(tf, "target", table, ("kind", *kind.keys))
    options = kind.validate(OptionReader({k: v for k, v in table.items() if k != "kind"}, tf, base, kind_name))
    return TargetConfig(kind_name, options)


def load_config(path: str | Path) -> AuditConfig:
    tf = TomlFile.load(path)
    base = Path(tf.path).resolve().parent
    d = tf.data
    check_keys(tf, "", d, _TOP)

    def table(name: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        t = d.get(name, {})
        if not isinstance(t, Mapping):
            raise tf.error(f"'{name}' must be a table ([{name}])", "", name)
        if name == "target" and ("api_key" in t or "key" in t):
            raise tf.error("never write a key into the config: name the environment variable that "
                           "holds it with api_key_env = \"AZURE_SEARCH_API_KEY\"", "target",
                           "api_key" if "api_key" in t else "key")
        if allowed:
            check_keys(tf, name, t, allowed)
        return t

    audit = table("audit", _AUDIT)
    tgt = table("target", ()) if "target" in d else None
    inputs = table("inputs", _INPUTS)
    runner = table("runner", _RUNNER)
    output = table("output", _OUTPUT)
    budgets = table("budgets", _BUDGETS)

    def string(t: Mapping[str, Any], tname: str, key: str, default: str | None = None) -> str | None:
        v = t.get(key, default)
        if v is not None and not isinstance(v, str):
            raise tf.error(f"'{key}' must be a string, got {type(v).__name__}", tname, key)
        return v

    def path_of(t: Mapping[str, Any], tname: str, key: str, must_exist: bool = True) -> Path | None:
        v = string(t, tname, key)
        if v is None:
            return None
        p = (base / v).resolve()
        if must_exist and not p.exists():
            raise tf.error(f"'{key}' points to {p}, which does not exist; fix the path "
                           f"(relative to {base}) or remove the key", tname, key)
        return p

    def integer(t: Mapping[str, Any], tname: str, key: str, default: int | None, lo: int = 0) -> int | None:
        v = t.get(key, default)
        if v is None:
            return None
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise tf.error(f"'{key}' must be an integer >= {lo}, got {v!r}", tname, key)
        return v

    target = _target(tf, tgt, base) if tgt is not None else None
    identities_raw = d.get("identities", {})
    if not isinstance(identities_raw, Mapping):
        raise tf.error("[identities] must map user names to lists of groups", "", "identities")
    identities: dict[str, tuple[str, ...]] = {}
    for user, groups in identities_raw.items():
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise tf.error(f"identity '{user}' must be a list of group names, e.g. "
                           f"\"{user}\" = [\"sales\"]", "identities", user)
        identities[user] = tuple(groups)
    language = string(audit, "audit", "language", "en") or "en"
    if language not in ("en", "de"):
        raise tf.error(f"language must be 'en' or 'de', got {language!r}", "audit", "language")
    out = string(output, "output", "dir")
    cache = runner.get("cache", True)
    if not isinstance(cache, bool):
        raise tf.error("'cache' must be true or false", "runner", "cache")
    timeout = runner.get("timeout_s", 30.0)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise tf.error("'timeout_s' must be a positive number", "runner", "timeout_s")
    return AuditConfig(
        path=Path(tf.path).resolve(),
        name=string(audit, "audit", "name", "ragdiag audit") or "ragdiag audit",
        client=string(audit, "audit", "client", "") or "",
        system=string(audit, "audit", "system", "") or "",
        language=language,
        target=target,
        profiles=path_of(inputs, "inputs", "profiles"),
        compare_profiles=path_of(inputs, "inputs", "compare_profiles"),
        goldset=path_of(inputs, "inputs", "goldset"),
        query_log=path_of(inputs, "inputs", "query_log"),
        client_code=path_of(inputs, "inputs", "client_code"),
        checklist=path_of(inputs, "inputs", "checklist"),
        entities=path_of(inputs, "inputs", "entities"),
        identities=identities,
        budget=integer(runner, "runner", "budget", None, 1),
        concurrency=integer(runner, "runner", "concurrency", 1, 1) or 1,
        cache=cache,
        timeout_s=float(timeout),
        retries=integer(runner, "runner", "retries", 4, 0) or 0,
        output_dir=(base / out).resolve() if out else None,
        budgets=dict(budgets),
    )
