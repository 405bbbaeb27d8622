"""The audit config (TOML): target, profiles, goldset, query log, identities, code, checklist, output.

Paths are relative to the config file. Everything but the target is optional;
a check whose input is missing says `skipped` and what to supply. Secrets never
live here: an Azure key is read from the environment variable the config names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.inputs.tomlfile import TomlFile, check_keys

TARGET_KINDS = ("sample", "local", "azure")
_TOP = ("audit", "target", "inputs", "identities", "runner", "output", "budgets")
_AUDIT = ("name", "client", "system", "language")
_TARGET = ("kind", "variant", "records", "schema", "vector_sources", "now", "name", "reranker",
           "endpoint", "index", "api_key_env", "credential", "api_version")
_INPUTS = ("profiles", "compare_profiles", "goldset", "query_log", "client_code", "checklist", "entities")
_RUNNER = ("budget", "concurrency", "cache", "timeout_s", "retries")
_OUTPUT = ("dir",)
_BUDGETS = ("context_tokens", "model_window_tokens", "answer_reserve_tokens", "tokenizer")


@dataclass(frozen=True)
class TargetConfig:
    kind: str
    variant: str = "structured"
    records: Path | None = None
    schema: Path | None = None
    vector_sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    now: str | None = None
    name: str | None = None
    reranker: str | None = None
    endpoint: str | None = None
    index: str | None = None
    api_key_env: str | None = None
    credential: str = "api_key"
    api_version: str | None = None


@dataclass(frozen=True)
class AuditConfig:
    path: Path
    name: str
    client: str
    system: str
    language: str
    target: TargetConfig
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
        t = self.target
        return {
            "config": str(self.path), "name": self.name, "client": self.client, "system": self.system,
            "target": {"kind": t.kind, "variant": t.variant if t.kind == "sample" else None,
                       "endpoint": t.endpoint, "index": t.index, "credential": t.credential
                       if t.kind == "azure" else None, "api_key_env": t.api_key_env},
            "profiles": _s(self.profiles), "compare_profiles": _s(self.compare_profiles),
            "goldset": _s(self.goldset), "query_log": _s(self.query_log),
            "client_code": _s(self.client_code), "identities": sorted(self.identities),
        }


def _s(p: Path | None) -> str | None:
    return str(p) if p else None


def load_config(path: str | Path) -> AuditConfig:
    tf = TomlFile.load(path)
    base = Path(tf.path).resolve().parent
    d = tf.data
    check_keys(tf, "", d, _TOP)
    if "target" not in d:
        raise tf.error("missing [target] table; e.g. [target] kind = \"sample\"")

    def table(name: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        t = d.get(name, {})
        if not isinstance(t, Mapping):
            raise tf.error(f"'{name}' must be a table ([{name}])", "", name)
        if name == "target" and ("api_key" in t or "key" in t):
            raise tf.error("never write a key into the config: name the environment variable that "
                           "holds it with api_key_env = \"AZURE_SEARCH_API_KEY\"", "target",
                           "api_key" if "api_key" in t else "key")
        check_keys(tf, name, t, allowed)
        return t

    audit = table("audit", _AUDIT)
    tgt = table("target", _TARGET)
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

    kind = string(tgt, "target", "kind")
    if kind not in TARGET_KINDS:
        raise tf.error(f"target kind must be one of {', '.join(TARGET_KINDS)}, got {kind!r}", "target", "kind")
    variant = string(tgt, "target", "variant", "structured") or "structured"
    if kind == "sample" and variant not in ("structured", "naive"):
        raise tf.error(f"sample variant must be 'structured' or 'naive', got {variant!r}", "target", "variant")
    vs = tgt.get("vector_sources", {})
    if not isinstance(vs, Mapping) or not all(isinstance(v, list) for v in vs.values()):
        raise tf.error("vector_sources must map vector fields to lists of text fields, "
                       "e.g. { content_vector = [\"content\"] }", "target", "vector_sources")
    if kind == "local":
        for req in ("records", "schema"):
            if req not in tgt:
                raise tf.error(f"a local target needs '{req}'", "target")
    if kind == "azure":
        for req in ("endpoint", "index"):
            if req not in tgt:
                raise tf.error(f"an azure target needs '{req}'", "target")
        cred = string(tgt, "target", "credential", "api_key")
        if cred not in ("api_key", "default"):
            raise tf.error(f"credential must be 'api_key' (read from api_key_env) or 'default' "
                           f"(azure-identity DefaultAzureCredential), got {cred!r}", "target", "credential")
    target = TargetConfig(
        kind=kind, variant=variant,
        records=path_of(tgt, "target", "records"), schema=path_of(tgt, "target", "schema"),
        vector_sources={k: tuple(v) for k, v in vs.items()}, now=string(tgt, "target", "now"),
        name=string(tgt, "target", "name"), reranker=string(tgt, "target", "reranker"),
        endpoint=string(tgt, "target", "endpoint"), index=string(tgt, "target", "index"),
        api_key_env=string(tgt, "target", "api_key_env", "AZURE_SEARCH_API_KEY" if kind == "azure" else None),
        credential=string(tgt, "target", "credential", "api_key") or "api_key",
        api_version=string(tgt, "target", "api_version"),
    )
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
