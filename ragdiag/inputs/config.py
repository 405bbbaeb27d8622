"""The audit config (TOML): target, profiles, goldset, query log, identities, code, checklist, output.

Paths are relative to the config file. Everything is optional, the target too: without
``[target]`` the audit is code-only (client code, no index) and no probe is sent anywhere.
A check whose input is missing says `skipped` and what to supply. The ``[target]`` table
belongs to its kind (`ragdiag.targets.registry`), which validates its own keys. Secrets
never live here: an Azure key is read from the environment variable the config names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.inputs.limits import excerpt, path_problem, short_path, special_file
from ragdiag.inputs.tomlfile import TomlFile, check_keys

TARGET_KINDS = ("sample", "local", "azure")  # the built-in kinds; plugins add more
# Ranges of the [runner] and [budgets] values (checked at load, with file and line).
MAX_CONCURRENCY = 64
MAX_RETRIES = 20
MAX_TIMEOUT_S = 3600.0
MAX_BUDGET = 100_000_000
MAX_TOKENS = 100_000_000
DEFAULT_MAX_CONSECUTIVE_FAILURES = 5
_TOKEN_BUDGETS = ("context_tokens", "model_window_tokens", "answer_reserve_tokens")
_TOP = ("audit", "target", "inputs", "identities", "runner", "output", "budgets", "init")
_AUDIT = ("name", "client", "system", "language")
_INPUTS = ("profiles", "compare_profiles", "goldset", "topics", "goldset_topics", "answers", "query_log",
           "client_code",
           "checklist", "entities", "traffic", "traces")
_RUNNER = ("budget", "concurrency", "cache", "timeout_s", "retries", "max_consecutive_failures")
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
    # TREC topics, the questions of a TREC qrels goldset: [inputs] topics (goldset_topics, the
    # key's first name, is still read)
    goldset_topics: Path | None = None
    answers: Path | None = None  # the client's system run over the goldset (ragdiag.inputs.answers)
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
    # the runner's circuit breaker opens after this many consecutive connection failures
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES
    output_dir: Path | None = None
    budgets: Mapping[str, Any] = field(default_factory=dict)
    # observed evidence (ragdiag.observe): `ragdiag record` files and Postgres logs; OTLP JSON traces
    traffic: tuple[Path, ...] = ()
    traces: tuple[Path, ...] = ()
    #: [init]: what `ragdiag init` read and skipped (route, counts), repeated in the findings' meta
    init: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """A secret-free summary for reports and JSON output."""
        return {
            "config": str(self.path), "name": self.name, "client": self.client, "system": self.system,
            "target": self.target.describe() if self.target is not None else None,
            "profiles": _s(self.profiles), "compare_profiles": _s(self.compare_profiles),
            "goldset": _s(self.goldset), "goldset_topics": _s(self.goldset_topics), "answers": _s(self.answers), "query_log": _s(self.query_log),
            "client_code": _s(self.client_code), "identities": sorted(self.identities),
            **({"traffic": [str(p) for p in self.traffic]} if self.traffic else {}),
            **({"traces": [str(p) for p in self.traces]} if self.traces else {}),
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
    tf = TomlFile.load(path, what="audit config")
    base = Path(tf.path).resolve().parent
    d = tf.data
    check_keys(tf, "", d, _TOP)

    def table(name: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        t = d.get(name, {})
        if not isinstance(t, Mapping):
            raise tf.error(f"'{name}' must be a table ([{name}])", "", name)
        # `key` names the key column of a pgvector table; elsewhere it would be a secret
        if name == "target" and ("api_key" in t or ("key" in t and t.get("kind") != "pgvector")):
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
            raise tf.error(f"'{key}' must be a string, got {_kind(v)} {excerpt(v)}", tname, key)
        return v

    def path_text(t: Mapping[str, Any], tname: str, key: str) -> str | None:
        v = string(t, tname, key)
        if v is None:
            return None
        if not v.strip():
            raise tf.error(f"'{key}' must name a file or folder; remove the key or give a path",
                           tname, key)
        problem = path_problem(v)
        if problem:
            raise tf.error(f"'{key}' {problem}", tname, key)
        return v

    def path_of(t: Mapping[str, Any], tname: str, key: str, must_exist: bool = True) -> Path | None:
        v = path_text(t, tname, key)
        if v is None:
            return None
        try:
            p = (base / v).resolve()
            exists = p.exists()
        except (OSError, ValueError, RuntimeError) as exc:  # a path the OS refuses, a symlink loop
            raise tf.error(f"'{key}' = {excerpt(v)} cannot be resolved: "
                           f"{excerpt(getattr(exc, 'strerror', None) or str(exc))}", tname, key) from None
        if must_exist and not exists:
            raise tf.error(f"'{key}' points to {short_path(p)}, which does not exist; fix the "
                           f"path (relative to {base}) or remove the key", tname, key)
        special = special_file(p)
        if special:  # a FIFO would block the audit, a device never ends
            raise tf.error(f"'{key}' = {excerpt(v)} is {special} ({short_path(p)}); give a regular file or "
                           "folder", tname, key)
        return p

    def integer(t: Mapping[str, Any], tname: str, key: str, default: int | None, lo: int,
                hi: int) -> int | None:
        v = t.get(key, default)
        if v is None:
            return None
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise tf.error(f"'{key}' must be an integer from {lo} to {hi:,}, got {_kind(v)} "
                           f"{excerpt(v)}", tname, key)
        return v

    def boolean(t: Mapping[str, Any], tname: str, key: str, default: bool) -> bool:
        v = t.get(key, default)
        if not isinstance(v, bool):
            raise tf.error(f"'{key}' must be true or false, got {_kind(v)} {excerpt(v)}", tname, key)
        return v

    def seconds(t: Mapping[str, Any], tname: str, key: str, default: float) -> float:
        v = t.get(key, default)
        if (not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v)
                or not 0 < v <= MAX_TIMEOUT_S):
            raise tf.error(f"'{key}' must be a number of seconds above 0 and at most "
                           f"{MAX_TIMEOUT_S:g}, got {_kind(v)} {excerpt(v)}", tname, key)
        return float(v)

    target = _target(tf, tgt, base) if tgt is not None else None
    identities_raw = d.get("identities", {})
    if not isinstance(identities_raw, Mapping):
        raise tf.error("[identities] must map user names to lists of groups", "", "identities")
    identities: dict[str, tuple[str, ...]] = {}
    for user, groups in identities_raw.items():
        if not user.strip():
            raise tf.error("an identity needs a non-empty user name, e.g. \"anna\" = [\"sales\"]",
                           "identities", user)
        if not isinstance(groups, list) or not all(isinstance(g, str) and g.strip() for g in groups):
            raise tf.error(f"identity {excerpt(user, 60)} must be a list of group names (non-empty "
                           f"strings), e.g. [\"all-staff\", \"sales\"]; got {excerpt(groups)}", "identities", user)
        identities[user] = tuple(groups)
    language = string(audit, "audit", "language", "en") or "en"
    if language not in ("en", "de"):
        raise tf.error(f"language must be 'en' or 'de', got {excerpt(language)}", "audit", "language")
    out = path_text(output, "output", "dir")
    try:
        output_dir = (base / out).resolve() if out else None
    except (OSError, ValueError, RuntimeError) as exc:
        raise tf.error(f"'dir' cannot be resolved: {excerpt(str(exc))}", "output", "dir") from None
    if output_dir is not None and output_dir.exists() and not output_dir.is_dir():
        raise tf.error(f"'dir' = {excerpt(out)} is a file ({short_path(output_dir)}); [output] dir names the "
                       "folder the findings are written into", "output", "dir")
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
        goldset_topics=_topics(tf, inputs, path_of),
        answers=path_of(inputs, "inputs", "answers"),
        query_log=path_of(inputs, "inputs", "query_log"),
        client_code=path_of(inputs, "inputs", "client_code"),
        checklist=_folder(tf, path_of(inputs, "inputs", "checklist"), inputs, "checklist"),
        entities=path_of(inputs, "inputs", "entities"),
        identities=identities,
        budget=integer(runner, "runner", "budget", None, 1, MAX_BUDGET),
        concurrency=integer(runner, "runner", "concurrency", 1, 1, MAX_CONCURRENCY) or 1,
        cache=boolean(runner, "runner", "cache", True),
        timeout_s=seconds(runner, "runner", "timeout_s", 30.0),
        retries=integer(runner, "runner", "retries", 4, 0, MAX_RETRIES) or 0,
        max_consecutive_failures=integer(runner, "runner", "max_consecutive_failures",
                                         DEFAULT_MAX_CONSECUTIVE_FAILURES, 1, 1000)
        or DEFAULT_MAX_CONSECUTIVE_FAILURES,
        output_dir=output_dir,
        budgets=_budgets(tf, budgets),
        traffic=_paths(tf, inputs, "traffic", path_of),
        traces=_paths(tf, inputs, "traces", path_of),
        init=_init_table(tf, d.get("init", {})),
    )


def _folder(tf: TomlFile, p: Path | None, table: Mapping[str, Any], key: str) -> Path | None:
    """`p` when it is a folder (or None), else the config's error at the key's line."""
    if p is not None and not p.is_dir():
        raise tf.error(f"'{key}' = {excerpt(table.get(key))} is a file ({short_path(p)}); it must name a folder",
                       "inputs", key)
    return p


def _paths(tf: TomlFile, inputs: Mapping[str, Any], key: str, path_of: Any) -> tuple[Path, ...]:
    """[inputs] traffic / traces: one file or a list of files (observed evidence, ragdiag.observe)."""
    v = inputs.get(key)
    if v is None:
        return ()
    items = v if isinstance(v, list) else [v]
    if not items or not all(isinstance(x, str) for x in items):
        raise tf.error(f"'{key}' must be a file or a list of files, e.g. {key} = [\"{key}.jsonl\"]; got "
                       f"{_kind(v)} {excerpt(v)}", "inputs", key)
    return tuple(path_of({key: x}, "inputs", key) for x in items)


def _init_table(tf: TomlFile, table: Any) -> dict[str, Any]:
    """[init] as `ragdiag init` writes it: names to counts (integers >= 0) or short strings."""
    if not isinstance(table, Mapping):
        raise tf.error("'init' must be a table ([init])", "", "init")
    out: dict[str, Any] = {}
    for key, v in table.items():
        ok = (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_BUDGET) or (
            isinstance(v, str) and len(v) <= 200)
        if not ok:
            raise tf.error(f"'{key}' in [init] must be a count (a whole number >= 0) or a short string, got "
                           f"{_kind(v)} {excerpt(v)}", "init", key)
        out[key] = v
    return out


def _topics(tf: TomlFile, inputs: Mapping[str, Any], path_of: Any) -> Path | None:
    """[inputs] topics, or its first name goldset_topics; both at once is a mistake."""
    if "topics" in inputs and "goldset_topics" in inputs:
        raise tf.error("[inputs] has both 'topics' and 'goldset_topics' (the same key's old name); "
                       "keep 'topics'", "inputs", "goldset_topics")
    key = "topics" if "topics" in inputs else "goldset_topics"
    if key in inputs and "goldset" not in inputs:
        raise tf.error(f"'{key}' holds the questions of a TREC qrels goldset, but [inputs] has no "
                       "goldset; add goldset = \"qrels.tsv\" (the judgments) or remove the key", "inputs", key)
    return path_of(inputs, "inputs", key)


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "a table"}.get(type(v), type(v).__name__)


def _budgets(tf: TomlFile, table: Mapping[str, Any]) -> dict[str, Any]:
    """[budgets]: token counts are integers above 0; the answer reserve fits in the window."""
    out: dict[str, Any] = {}
    for key, v in table.items():
        if key in _TOKEN_BUDGETS:
            if not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= MAX_TOKENS:
                raise tf.error(f"'{key}' must be a whole number of tokens above 0 (at most "
                               f"{MAX_TOKENS:,}), got {_kind(v)} {excerpt(v)}", "budgets", key)
        elif key == "tokenizer" and (not isinstance(v, str) or not v.strip()):
            raise tf.error(f"'tokenizer' must be a non-empty string, got {_kind(v)} {excerpt(v)}",
                           "budgets", key)
        out[key] = v
    window, reserve = out.get("model_window_tokens"), out.get("answer_reserve_tokens")
    if window is not None and reserve is not None and reserve >= window:
        raise tf.error(f"'answer_reserve_tokens' ({reserve:,}) must be smaller than "
                       f"'model_window_tokens' ({window:,}): nothing would be left for the context",
                       "budgets", "answer_reserve_tokens")
    return out
