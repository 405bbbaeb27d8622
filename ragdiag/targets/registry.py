"""Target kinds: ``[target] kind = "..."`` -> a factory that validates its options and opens it.

Each kind owns its ``[target]`` keys: it validates them when the config loads (errors carry
the config's file and line) and opens the target when the audit starts. Built-in kinds are
``sample`` (the embedded Muster AG index), ``local`` (a FAISS + BM25 hybrid over your
records), ``azure`` (a live index) and ``pgvector`` (the client's SQL on PostgreSQL + pgvector). Plugins join through the entry-point group
``ragdiag.targets`` (name = kind, value = a `TargetKind` class or instance), loaded lazily
on the first lookup of an unknown kind.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ragdiag import plugins
from ragdiag.errors import ConfigError
from ragdiag.inputs.limits import excerpt, path_problem, short_path, special_file

__all__ = ["ENTRY_POINT_GROUP", "TargetKind", "OptionReader", "register_kind", "get_kind", "kinds", "load_errors"]

ENTRY_POINT_GROUP = "ragdiag.targets"
_BUILTIN = {
    "sample": "ragdiag.sample.kind:SampleKind",
    "local": "ragdiag.targets.local.kind:LocalKind",
    "azure": "ragdiag.targets.azure.kind:AzureKind",
    "pgvector": "ragdiag.targets.pgvector.kind:PgvectorKind",
}


@runtime_checkable
class TargetKind(Protocol):
    """A kind of search target: its option keys, their validation, and how to open it."""

    name: str
    keys: tuple[str, ...]

    def validate(self, options: OptionReader) -> dict[str, Any]:
        """Typed options from the ``[target]`` table; raise via `options.error` on bad input."""
        ...

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        """The opened, read-only target."""
        ...


@dataclass(frozen=True)
class OptionReader:
    """Typed access to the ``[target]`` table, errors with the config's file and line."""

    table: Mapping[str, Any]
    tomlfile: Any = None  # ragdiag.inputs.tomlfile.TomlFile, for line numbers
    base: Path = Path(".")
    kind: str = ""

    def error(self, message: str, key: str | None = None) -> ConfigError:
        if self.tomlfile is not None:
            return self.tomlfile.error(message, "target", key)
        return ConfigError(message, key=key)

    def has(self, key: str) -> bool:
        return key in self.table

    def string(self, key: str, default: str | None = None, *, required: bool = False,
               choices: tuple[str, ...] | None = None) -> str | None:
        if key not in self.table:
            if required:
                raise self.error(f"target kind '{self.kind}' needs '{key}'", key)
            return default
        v = self.table[key]
        if not isinstance(v, str) or not v.strip():
            raise self.error(f"'{key}' must be a non-empty string, got {_kind(v)}", key)
        if choices is not None and v not in choices:
            raise self.error(f"'{key}' must be one of {', '.join(choices)}, got {excerpt(v)}", key)
        return v

    def path(self, key: str, *, required: bool = False, must_exist: bool = True) -> Path | None:
        v = self.string(key, required=required)
        if v is None:
            return None
        problem = path_problem(v)
        if problem:
            raise self.error(f"'{key}' {problem}", key)
        try:
            p = (self.base / v).resolve()
            exists = p.exists()
        except (OSError, ValueError, RuntimeError) as exc:  # a path the OS refuses, a symlink loop
            raise self.error(f"'{key}' = {excerpt(v)} cannot be resolved: "
                             f"{excerpt(getattr(exc, 'strerror', None) or str(exc))}", key) from None
        if must_exist and not exists:
            raise self.error(f"'{key}' points to {short_path(p)}, which does not exist; fix the "
                             f"path (relative to {self.base}) or remove the key", key)
        special = special_file(p)
        if special:  # a FIFO would block the audit, a device never ends
            raise self.error(f"'{key}' = {excerpt(v)} is {special} ({short_path(p)}); give a regular file", key)
        return p

    def mapping_of_lists(self, key: str) -> dict[str, tuple[str, ...]]:
        v = self.table.get(key, {})
        if not isinstance(v, Mapping) or not all(
                isinstance(x, list) and all(isinstance(s, str) and s.strip() for s in x)
                for x in v.values()):
            raise self.error(f"'{key}' must map names to lists of strings, e.g. "
                             f"{{ content_vector = [\"content\"] }}", key)
        return {str(k): tuple(x) for k, x in v.items()}


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a table"}.get(
        type(v), type(v).__name__)


class _Registry:
    """Kind name -> target kind, under the registry rules of `ragdiag.plugins` (shared with checks)."""

    def __init__(self) -> None:
        self._kinds: dict[str, TargetKind] = {}
        self._errors: dict[str, str] = {}
        self._plugins_loaded = False
        self._lock = threading.RLock()

    def register(self, kind: Any, *, replace_existing: bool = False) -> Any:
        obj = kind() if isinstance(kind, type) else kind
        for attr in ("name", "keys", "validate", "open"):
            if not hasattr(obj, attr):
                raise ConfigError(f"target kind {obj!r} lacks '{attr}'; a kind has name, keys, "
                                  "validate(options) and open(options, config, log=, progress=)")
        with self._lock:
            old = self._kinds.get(obj.name)
            if old is not None and not replace_existing and not plugins.same_definition(old, obj):
                raise ConfigError(plugins.collision_message("target kind", obj.name, old))
            self._kinds[obj.name] = obj
            self._errors.pop(obj.name, None)
        return kind

    def unregister(self, name: str) -> None:
        with self._lock:
            self._kinds.pop(name, None)

    def _builtin(self, name: str) -> TargetKind | None:
        ref = _BUILTIN.get(name)
        if ref is None:
            return None
        module, _, attr = ref.partition(":")
        obj = getattr(importlib.import_module(module), attr)
        self.register(obj)
        return self._kinds[name]

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in plugins.entry_points(ENTRY_POINT_GROUP, self._errors.__setitem__):
            if ep.name in self._kinds or ep.name in _BUILTIN:  # a built-in of the same name wins
                self._errors.setdefault(ep.name, plugins.ignored_message("target kind", ep.name, ep.value))
                continue
            try:
                obj = ep.load()
                obj = obj() if isinstance(obj, type) else obj
                if getattr(obj, "name", None) != ep.name:
                    raise ConfigError(f"entry point '{ep.name}' loads a target kind named "
                                      f"{getattr(obj, 'name', None)!r}; the entry-point name must equal the kind's name")
                self.register(obj)
            except Exception as exc:  # a broken plugin must not break the built-in kinds
                self._kinds.pop(ep.name, None)
                self._errors[ep.name] = plugins.failed_message(ep.value, exc)

    def get(self, name: str) -> TargetKind:
        with self._lock:
            if name in self._kinds:
                return self._kinds[name]
            found = self._builtin(name)
            if found is not None:
                return found
            self._load_plugins()
            if name in self._kinds:
                return self._kinds[name]
            error = self._errors.get(name)
        if error:
            raise ConfigError(f"target kind '{name}' could not be loaded: {error}")
        raise ConfigError(f"no target kind named {excerpt(name, 60)}; available: "
                          f"{', '.join(self.names())}")

    def names(self) -> tuple[str, ...]:
        with self._lock:
            self._load_plugins()
            return tuple(sorted(set(_BUILTIN) | set(self._kinds)))

    def load_errors(self) -> dict[str, str]:
        """Kind name -> why its plugin did not load or was ignored (after discovery)."""
        with self._lock:
            self._load_plugins()
            return dict(self._errors)


_DEFAULT = _Registry()


def register_kind(kind: Any = None, *, replace_existing: bool = False) -> Any:
    """Register a target kind (usable as a class decorator, ``@register_kind``); a second, different
    kind under a taken name is an error unless `replace_existing` (the rules of `ragdiag.plugins`)."""
    if kind is None:
        return lambda obj: _DEFAULT.register(obj, replace_existing=replace_existing)
    return _DEFAULT.register(kind, replace_existing=replace_existing)


def get_kind(name: str) -> TargetKind:
    """The kind registered as `name`; `ConfigError` listing the available kinds if none."""
    return _DEFAULT.get(name)


def kinds() -> tuple[str, ...]:
    return _DEFAULT.names()


def load_errors() -> dict[str, str]:
    """Kind name -> why its plugin did not load (the same report as `ragdiag.checks.load_errors`)."""
    return _DEFAULT.load_errors()
