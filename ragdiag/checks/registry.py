"""The check registry: built-in checks, plugins, and honest placeholders.

A check is an object with an ``id``, the inputs it ``needs`` and a
``run(ctx, spec) -> Finding`` method. Built-in checks live in
``ragdiag/checks/<id>.py`` and register themselves with the `register`
decorator when their module is imported. Plugins join through the entry-point
group ``ragdiag.checks`` (entry-point name = check id, value = a check class or
instance).

Nothing is imported or scanned at import time. Discovery is lazy:

- ``get("pool_size")`` imports ``ragdiag.checks.pool_size`` if that module
  exists, then, if still unknown, loads the plugins once;
- ``available()``, ``all_checks()`` and ``checks_table()`` discover everything:
  every module in ``ragdiag/checks/`` (and every spec id passed in), then the
  plugins.

A spec without an implementation resolves (``resolve(spec)``) to a
`PlaceholderCheck` whose ``run`` returns ``Finding.not_implemented`` (status
``skipped``): the registry never pretends a check ran. A module or plugin that
fails to import resolves to a `BrokenCheck` that returns status ``error`` with
the import error, so one broken check cannot take the whole audit down.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pkgutil
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from ragdiag import plugins
from ragdiag.checks.base import INPUTS, missing_inputs, skipped_for_missing
from ragdiag.errors import RagdiagError
from ragdiag.inputs.checklist import CheckSpec
from ragdiag.model.findings import Finding

__all__ = [
    "ENTRY_POINT_GROUP",
    "KNOWN_NEEDS",
    "CHECKS_TABLE_COLUMNS",
    "CheckProtocol",
    "PlaceholderCheck",
    "BrokenCheck",
    "Registry",
    "register",
    "get",
    "available",
    "all_checks",
    "resolve",
    "is_implemented",
    "load_errors",
    "checks_table",
    "run_check",
    "default_registry",
]

ENTRY_POINT_GROUP = "ragdiag.checks"
#: Inputs a check may declare in `needs` ("a|b": either); the runner enforces them.
KNOWN_NEEDS: tuple[str, ...] = INPUTS
CHECKS_TABLE_COLUMNS: tuple[str, ...] = ("id", "order", "title", "implemented", "question")

_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_BUILTIN_PACKAGE = "ragdiag.checks"
_NOT_CHECK_MODULES = frozenset({"registry", "base", "figures"})


@runtime_checkable
class CheckProtocol(Protocol):
    """What the runner needs from a check (the base class `ragdiag.checks.base.Check` has it)."""

    id: str
    needs: tuple[str, ...]

    def run(self, ctx: Any, spec: CheckSpec) -> Finding:
        """Run the check; read every threshold from `spec`."""
        ...


@dataclass(frozen=True)
class PlaceholderCheck:
    """Stands in for a check that has a spec but no implementation yet."""

    id: str
    needs: tuple[str, ...] = ()

    def run(self, ctx: Any, spec: CheckSpec) -> Finding:
        return Finding.not_implemented(self.id, title=spec.text("title"), question=spec.text("question"))


@dataclass(frozen=True)
class BrokenCheck:
    """Stands in for a check whose module or plugin failed to load."""

    id: str
    error: str
    needs: tuple[str, ...] = ()

    def run(self, ctx: Any, spec: CheckSpec) -> Finding:
        return Finding.errored(self.id, f"the check could not be loaded: {self.error}",
                               title=spec.text("title"), question=spec.text("question"))


def _validate(check: Any) -> None:
    cid = getattr(check, "id", None)
    if not isinstance(cid, str) or not _ID_RE.match(cid):
        raise RagdiagError(f"a check needs an `id` of lowercase letters, digits and underscores; "
                           f"{check!r} has id {cid!r}")
    needs = getattr(check, "needs", None)
    if not isinstance(needs, tuple) or not all(isinstance(n, str) for n in needs):
        raise RagdiagError(f"check '{cid}' must declare `needs` as a tuple of input names such as "
                           f"{KNOWN_NEEDS[:3]}, got {needs!r}")
    unknown = [n for need in needs for n in need.split("|") if n.strip() not in KNOWN_NEEDS]
    if unknown:
        raise RagdiagError(f"check '{cid}' needs unknown input(s) {', '.join(unknown)}; inputs are "
                           f"{', '.join(KNOWN_NEEDS)} ('a|b' for either)")
    if not callable(getattr(check, "run", None)):
        raise RagdiagError(f"check '{cid}' has no run(ctx, spec) method")


_same_definition = plugins.same_definition


class Registry:
    """Check id -> check object, with lazy discovery of built-ins and plugins."""

    def __init__(self, builtin_package: str | None = _BUILTIN_PACKAGE,
                 entry_point_group: str | None = ENTRY_POINT_GROUP) -> None:
        self._checks: dict[str, CheckProtocol] = {}
        self._errors: dict[str, str] = {}
        self._builtin_package = builtin_package
        self._group = entry_point_group
        self._plugins_loaded = False
        self._builtins_scanned = False
        self._tried_modules: set[str] = set()
        self._lock = threading.RLock()

    # -- registration -------------------------------------------------------

    def register(self, check: Any = None, *, replace_existing: bool = False) -> Any:
        """Register a check instance, or a class (instantiated without arguments).

        Usable as ``@register`` on a class; returns what it was given.
        Registering a second, different check under a taken id is an error
        unless `replace_existing`; re-registering the same class (a module
        reload) silently replaces.
        """
        if check is None:
            return lambda obj: self.register(obj, replace_existing=replace_existing)
        obj = check() if isinstance(check, type) else check
        _validate(obj)
        with self._lock:
            old = self._checks.get(obj.id)
            if old is not None and not replace_existing and not _same_definition(old, obj):
                raise RagdiagError(plugins.collision_message("check", obj.id, old))
            self._checks[obj.id] = obj
            self._errors.pop(obj.id, None)
        return check

    def unregister(self, check_id: str) -> None:
        with self._lock:
            self._checks.pop(check_id, None)

    # -- discovery ----------------------------------------------------------

    def _import_builtin(self, check_id: str) -> None:
        if not self._builtin_package or check_id in self._tried_modules or not _ID_RE.match(check_id) \
                or check_id in _NOT_CHECK_MODULES:
            return
        self._tried_modules.add(check_id)
        name = f"{self._builtin_package}.{check_id}"
        try:
            if importlib.util.find_spec(name) is None:
                return
            importlib.import_module(name)
        except Exception as exc:  # a broken module must not break the registry
            self._errors[check_id] = f"importing {name} failed: {type(exc).__name__}: {exc}"
            return
        if check_id not in self._checks:
            self._errors[check_id] = (f"module {name} exists but registers no check with id "
                                      f"'{check_id}' (decorate its class with @register)")

    def _scan_builtins(self) -> None:
        if self._builtins_scanned or not self._builtin_package:
            return
        self._builtins_scanned = True
        try:
            package = importlib.import_module(self._builtin_package)
        except ImportError:
            return
        for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
            if not info.name.startswith("_") and info.name not in _NOT_CHECK_MODULES:
                self._import_builtin(info.name)

    def _load_plugins(self) -> None:
        if self._plugins_loaded or not self._group:
            return
        self._plugins_loaded = True
        for ep in plugins.entry_points(self._group, self._errors.__setitem__):
            self._import_builtin(ep.name)  # a built-in of the same id wins over a plugin
            if ep.name in self._checks:
                self._errors.setdefault(ep.name, plugins.ignored_message("check", ep.name, ep.value))
                continue
            try:
                obj = ep.load()
                obj = obj() if isinstance(obj, type) else obj
                _validate(obj)
                if obj.id != ep.name:
                    raise RagdiagError(f"entry point '{ep.name}' loads a check with id '{obj.id}'; "
                                       "the entry-point name must equal the check id")
                self.register(obj)
            except Exception as exc:
                self._errors[ep.name] = plugins.failed_message(ep.value, exc)

    def discover(self, ids: Iterable[str] = ()) -> None:
        """Import every built-in check module (and those named by `ids`), then the plugins."""
        with self._lock:
            for cid in ids:
                self._import_builtin(cid)
            self._scan_builtins()
            self._load_plugins()

    # -- lookup -------------------------------------------------------------

    def get(self, check_id: str) -> CheckProtocol:
        """The check registered as `check_id`; `RagdiagError` listing the available ids if none."""
        with self._lock:
            if check_id not in self._checks:
                self._import_builtin(check_id)
            if check_id not in self._checks:
                self._load_plugins()
            if check_id in self._checks:
                return self._checks[check_id]
            if check_id in self._errors:
                raise RagdiagError(f"check '{check_id}' could not be loaded: {self._errors[check_id]}")
        names = ", ".join(self.available()) or "(none)"
        raise RagdiagError(f"no check named '{check_id}'; available: {names}")

    def available(self) -> tuple[str, ...]:
        """Ids of every implemented check, sorted (discovers everything first)."""
        self.discover()
        with self._lock:
            return tuple(sorted(self._checks))

    def all_checks(self) -> tuple[CheckProtocol, ...]:
        """Every implemented check, sorted by id (discovers everything first)."""
        self.discover()
        with self._lock:
            return tuple(self._checks[k] for k in sorted(self._checks))

    def is_implemented(self, check_id: str) -> bool:
        try:
            self.get(check_id)
        except RagdiagError:
            return False
        return True

    def resolve(self, spec: CheckSpec) -> CheckProtocol:
        """The check for `spec`: its implementation, else a `BrokenCheck` or `PlaceholderCheck`."""
        try:
            return self.get(spec.id)
        except RagdiagError:
            with self._lock:
                error = self._errors.get(spec.id)
            return BrokenCheck(spec.id, error) if error else PlaceholderCheck(spec.id)

    def load_errors(self) -> dict[str, str]:
        """Check id -> why its module or plugin did not load (after discovery)."""
        with self._lock:
            return dict(self._errors)

    def checks_table(self, specs: Mapping[str, CheckSpec] | Iterable[CheckSpec],
                     lang: str = "en") -> list[tuple[str, int, str, str, str]]:
        """Rows (id, order, title, implemented, question) for ``ragdiag checks list``.

        ``implemented`` is "yes", "no" or "error" (see `load_errors`). Checks
        registered without a spec are listed last with order 0 and "yes (no spec)".
        """
        items = list(specs.values()) if isinstance(specs, Mapping) else list(specs)
        items.sort(key=lambda s: (s.order, s.id))
        self.discover(s.id for s in items)
        rows: list[tuple[str, int, str, str, str]] = []
        with self._lock:
            for s in items:
                state = "yes" if s.id in self._checks else ("error" if s.id in self._errors else "no")
                rows.append((s.id, s.order, s.text("title", lang), state, s.text("question", lang)))
            spec_ids = {s.id for s in items}
            for cid in sorted(set(self._checks) - spec_ids):
                rows.append((cid, 0, "", "yes (no spec)", ""))
        return rows


def run_check(check: CheckProtocol, ctx: Any, spec: CheckSpec) -> Finding:
    """Run `check` defensively: a crash or a malformed result becomes an ``error`` finding.

    The check's declared `needs` are enforced first: a missing input gives ``skipped`` with
    what to supply, and the check does not run. Fills the finding's title and question from
    the spec when the check left them empty.
    """
    lang = getattr(ctx, "lang", "en")
    title, question = spec.text("title", lang), spec.text("question", lang)
    missing = missing_inputs(getattr(check, "needs", ()), ctx)
    if missing:
        return replace(skipped_for_missing(spec.id, missing, lang), title=title, question=question)
    try:
        finding = check.run(ctx, spec)
    except RagdiagError as exc:
        return Finding.errored(spec.id, f"{type(exc).__name__}: {exc}", title=title, question=question)
    except Exception as exc:
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        # an internal error (exit 4), told apart from an input or service error by incomplete
        return Finding.errored(spec.id, f"the check crashed: {type(exc).__name__}: {exc}{where}",
                               title=title, question=question, incomplete={"internal_error": 1})
    if not isinstance(finding, Finding):
        return Finding.errored(spec.id, f"the check returned {type(finding).__name__}, not a Finding; "
                               "subclass ragdiag.extend.Check and implement evaluate(ctx, spec, v), or "
                               "return a Finding from run(ctx, spec)", title=title, question=question)
    if finding.check_id != spec.id:
        return Finding.errored(spec.id, f"the check returned a finding for '{finding.check_id}'",
                               title=title, question=question)
    if not finding.title or not finding.question:
        finding = replace(finding, title=finding.title or title, question=finding.question or question)
    return finding


# -- the default registry and its module-level API ---------------------------

_DEFAULT = Registry()


def default_registry() -> Registry:
    return _DEFAULT


def register(check: Any = None, *, replace_existing: bool = False) -> Any:
    """Register a check in the default registry; also a class decorator (``@register``)."""
    return _DEFAULT.register(check, replace_existing=replace_existing)


def get(check_id: str) -> CheckProtocol:
    return _DEFAULT.get(check_id)


def available() -> tuple[str, ...]:
    return _DEFAULT.available()


def all_checks() -> tuple[CheckProtocol, ...]:
    return _DEFAULT.all_checks()


def resolve(spec: CheckSpec) -> CheckProtocol:
    return _DEFAULT.resolve(spec)


def is_implemented(check_id: str) -> bool:
    return _DEFAULT.is_implemented(check_id)


def load_errors() -> dict[str, str]:
    return _DEFAULT.load_errors()


def checks_table(specs: Mapping[str, CheckSpec] | Iterable[CheckSpec],
                 lang: str = "en") -> list[tuple[str, int, str, str, str]]:
    return _DEFAULT.checks_table(specs, lang)
