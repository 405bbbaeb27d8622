"""The rules every registry of ragdiag follows (checks, target kinds): one place, one wording.

- Registering a second, different object under a taken name is an error naming both, unless
  ``replace_existing``; re-registering the same definition (a module reloaded in a notebook)
  replaces it silently.
- Plugins join through an entry-point group, loaded lazily once. The entry-point name must
  equal the object's name; a built-in of the same name wins and the plugin is reported as
  ignored; a plugin that fails to load is reported with its error. Neither stops the others.
- What did not load is kept (`load_errors`) and named when that name is asked for.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["same_definition", "collision_message", "ignored_message", "failed_message", "entry_points"]


def same_definition(a: Any, b: Any) -> bool:
    """True when `b` is `a` re-created, e.g. by importlib.reload in a notebook."""
    ta, tb = type(a), type(b)
    return a is b or (ta.__module__, ta.__qualname__) == (tb.__module__, tb.__qualname__)


def collision_message(what: str, name: str, old: Any) -> str:
    return (f"a {what} named '{name}' is already registered ({type(old).__module__}.{type(old).__qualname__}); "
            "pass replace_existing=True to override it")


def ignored_message(what: str, name: str, value: str) -> str:
    return f"plugin {value} ignored: a {what} named '{name}' is already registered"


def failed_message(value: str, exc: BaseException) -> str:
    return f"plugin {value} failed to load: {type(exc).__name__}: {exc}"


def entry_points(group: str, on_error: Callable[[str, str], None]) -> Iterator[Any]:
    """The entry points of `group`; a broken metadata scan is reported as ``<entry points group>``."""
    try:
        yield from importlib.metadata.entry_points(group=group)
    except Exception as exc:
        on_error(f"<entry points {group}>", f"{type(exc).__name__}: {exc}")
