"""Value converters: check and normalise one profile value, shared by the loader and the dataclasses.

A converter returns the normalised value or raises `_Invalid` with what is
wrong; the caller adds where (file, line, key): the policy loader from the
TOML text, `_convert_fields` from a dataclass's `source`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from ragdiag import odata
from ragdiag.errors import ConfigError, FilterError
from ragdiag.inputs.limits import MAX_EXCERPT, excerpt

TEMPLATE_FIELDS = ("entities",)

_TEMPLATE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*-")


class _Invalid(Exception):
    """A value is wrong; the caller adds where (file, line, key)."""


def _describe(v: Any) -> str:
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
             (list, "an array"), (tuple, "an array"), (dict, "a table"))
    for t, name in kinds:
        if isinstance(v, t):
            try:
                shown = json.dumps(v, default=str)
            except (ValueError, TypeError, RecursionError):
                shown = excerpt(v)
            return f"{name} ({excerpt(shown).strip(chr(39)) if len(shown) > MAX_EXCERPT else shown})"
    return f"{type(v).__name__} ({excerpt(v)})"


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise _Invalid(f"must be a string, got {_describe(v)}")
    return v


def _opt_str(v: Any) -> str | None:
    return _str(v) or None


def _enum(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def conv(v: Any) -> str:
        s = _str(v)
        if s not in choices:
            raise _Invalid(f"must be one of {', '.join(choices)}; got {excerpt(s)}")
        return s
    return conv


def _names(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) and x for x in v):
        raise _Invalid(f'must be an array of field names, e.g. ["content", "title"]; got {_describe(v)}')
    return tuple(v)


def _opt_names(v: Any) -> tuple[str, ...] | None:
    return _names(v) or None


def _some_names(v: Any) -> tuple[str, ...]:
    names = _names((v,) if isinstance(v, str) else v)
    if not names:
        raise _Invalid('needs at least one field, e.g. ["content_vector"]')
    return names


def _int(low: int, high: int | None = None) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Invalid(f"must be an integer, got {_describe(v)}")
        if v < low or (high is not None and v > high):
            rng = f"between {low} and {high}" if high is not None else f">= {low}"
            raise _Invalid(f"must be {rng}, got {v}")
        return v
    return conv


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _Invalid(f"must be true or false, got {_describe(v)}")
    return v


def _weight(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Invalid(f"must be a number, got {_describe(v)}")
    if not v > 0:
        raise _Invalid(f"must be > 0, got {v}")
    if not math.isfinite(v):
        raise _Invalid(f"must be a finite number, got {v}")
    return float(v)


def _filter(v: Any) -> str | None:
    s = _opt_str(v)
    if s is not None:
        try:
            odata.parse(s)
        except FilterError as exc:
            raise _Invalid(f"does not parse as OData: {exc}") from exc
    return s


def _template_fields(template: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _Invalid(f"template {excerpt(template)} is malformed: {exc}") from exc
    out = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS or spec or conversion:
            raise _Invalid(f"template {excerpt(template)} uses {{{excerpt(name, 40)}}}; available placeholders: "
                           + ", ".join(f"{{{n}}}" for n in TEMPLATE_FIELDS))
        out.append(name)
    return out


def _templates(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
        raise _Invalid(f'must be an array of strings, e.g. ["entities-{{entities}}"]; got {_describe(v)}')
    for t in v:
        if not _TEMPLATE_NAME.match(t):
            raise _Invalid(f"template {excerpt(t)} must look like 'name-value', e.g. 'entities-{{entities}}'")
        _template_fields(t)
    return tuple(v)


def _where(source: tuple[str, int]) -> dict[str, Any]:
    return {"path": source[0] or None, "line": source[1] or None}


def _convert_fields(obj: Any, converters: Mapping[str, Callable[[Any], Any]], what: str,
                    source: tuple[str, int]) -> None:
    """Normalise and check a dataclass's fields in place (programmatic construction, replace())."""
    for key, conv in converters.items():
        v = getattr(obj, key)
        if v is None and _optional(obj, key):
            continue
        try:
            object.__setattr__(obj, key, conv(list(v) if isinstance(v, tuple) else v))
        except _Invalid as exc:
            raise ConfigError(f"{what}: '{key}' {exc}", key=key, **_where(source)) from None


def _optional(obj: Any, key: str) -> bool:
    f = next(f for f in dataclasses.fields(obj) if f.name == key)
    return f.default is None

