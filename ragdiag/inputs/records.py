"""The records of a local target: one JSON object per line, checked against the index schema.

    {"key": "CON-0001", "title": "...", "content": "...", "page": 1, "group_ids": ["legal"]}

`load_records(path, schema)` reads and checks a records file; `parse_records(blob, path=,
schema=)` checks bytes already read (a caller that hashes the file reads it once). Every
problem is an `InputDataError` naming the file and line (and the record's key): invalid
JSON, a line that is not an object, a missing, empty or duplicate key, a key Azure AI Search
would refuse (``ragdiag.inputs.validate.azure_key_problem``: letters, digits, ``_``, ``-``,
``=``), a field the schema does not define, or a value of the wrong type for its field:

- ``Edm.String``: a string; ``Edm.Int32`` / ``Edm.Int64``: an integer in range;
  ``Edm.Double``: a number; ``Edm.Boolean``: true or false;
  ``Edm.DateTimeOffset``: an ISO 8601 date-time with a time zone (``2026-01-01T00:00:00Z``);
- ``Collection(...)``: a list of such values; a vector field (``Collection(Edm.Single)``):
  a list of exactly ``dimensions`` finite numbers;
- null is allowed for every field but the key; other Edm types are not checked.

Lines and files are bounded by `ragdiag.inputs.limits` (line length, nesting, 64-bit
integers, file size).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.inputs import limits

__all__ = ["check_record", "iter_records", "load_records", "parse_records"]

_INT_RANGE = {"Edm.Int32": (-2**31, 2**31 - 1), "Edm.Int64": (-2**63, 2**63 - 1),
              "Edm.Int16": (-2**15, 2**15 - 1), "Edm.SByte": (-2**7, 2**7 - 1), "Edm.Byte": (0, 255)}


def load_records(path: str | os.PathLike[str], schema: Any = None, *,
                 unknown_fields: str = "error") -> list[dict[str, Any]]:
    """Read and check a JSONL records file (see the module docstring); blank lines are skipped."""
    text = limits.read_text(path, what="records file")
    return list(iter_records(text, path=str(path), schema=schema, unknown_fields=unknown_fields))


def parse_records(blob: bytes | str, *, path: str | os.PathLike[str] | None, schema: Any = None,
                  unknown_fields: str = "error") -> list[dict[str, Any]]:
    """Check the records in `blob` (the bytes of a records file, already read)."""
    spath = str(path) if path is not None else None
    text = limits.decode(blob, what="records file", path=spath) if isinstance(blob, bytes) else blob
    return list(iter_records(text, path=spath, schema=schema, unknown_fields=unknown_fields))


def iter_records(text: str, *, path: str | None, schema: Any = None,
                 unknown_fields: str = "error") -> Iterator[dict[str, Any]]:
    """The checked records of JSONL `text`, one at a time (duplicate keys are found too).

    `unknown_fields` is "error" (a field the schema lacks is refused, as Azure refuses it
    on upload) or "keep".
    """
    if unknown_fields not in ("error", "keep"):
        raise ValueError(f"unknown_fields must be 'error' or 'keep', got {unknown_fields!r}")
    checkers = _checkers_for(schema) if schema is not None else None
    key_name = schema.key_field.name if schema is not None else None
    seen: dict[str, int] = {}
    index = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if len(raw) > limits.MAX_LINE_CHARS:
            raise InputDataError(f"the record's line has {len(raw):,} characters; the limit is "
                                 f"{limits.MAX_LINE_CHARS:,} (ragdiag.inputs.limits.MAX_LINE_CHARS)",
                                 path=path, line=lineno)
        obj = limits.loads_json(raw, path=path, line=lineno, what="the record")
        if checkers is not None:
            obj = check_record(obj, schema, path=path, line=lineno, index=index,
                               unknown_fields=unknown_fields, _checkers=checkers)
            key = obj[key_name]
            if key in seen:
                raise InputDataError(f"the record's key {limits.excerpt(key, 60)} is used twice "
                                     f"(first on line {seen[key]}); keys must be unique",
                                     path=path, line=lineno)
            seen[key] = lineno
        elif not isinstance(obj, dict):
            raise InputDataError(f"a record must be a JSON object, got {_kind(obj)} "
                                 f"{limits.excerpt(obj)}", path=path, line=lineno)
        index += 1
        yield obj


def check_record(obj: Any, schema: Any, *, path: str | None = None, line: int | None = None,
                 index: int | None = None, unknown_fields: str = "error",
                 _checkers: Mapping[str, Callable[[Any], str | None]] | None = None) -> dict[str, Any]:
    """`obj` if it is a valid record of `schema`, else an `InputDataError` saying why."""
    # the error's path:line names the record; without a line, its position (1-based)
    label = "the record" if line is not None or index is None else f"record #{index + 1}"

    def err(message: str) -> InputDataError:
        return InputDataError(message, path=path, line=line)

    if not isinstance(obj, dict):
        raise err(f"{label} must be a JSON object, got {_kind(obj)} {limits.excerpt(obj)}")
    checkers = _checkers if _checkers is not None else _checkers_for(schema)
    key_name = schema.key_field.name
    key = obj.get(key_name)
    if not isinstance(key, str) or not key.strip():
        got = "none" if key_name not in obj else f"{_kind(key)} {limits.excerpt(key)}"
        raise err(f"{label} needs its key field '{key_name}' as a non-empty string, got {got}")
    from ragdiag.inputs.validate import azure_key_problem

    problem = azure_key_problem(key)
    if problem:
        raise err(f"{label}'s key {limits.excerpt(key, 60)} (field '{key_name}') {problem}")
    label = f"{label} (key {limits.excerpt(key, 60)})"
    for name, value in obj.items():
        check = checkers.get(name)
        if check is None:
            if unknown_fields == "keep":
                continue
            names = list(checkers)
            known = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
            raise err(f"{label}: field {limits.excerpt(name, 60)} is not in the index schema "
                      f"(fields: {known})")
        problem = check(value)
        if problem:
            raise err(f"{label}: field '{name}' {problem}")
    return obj


# ---- per-field checks -------------------------------------------------------------------------
def _checkers_for(schema: Any) -> dict[str, Callable[[Any], str | None]]:
    return {f.name: _checker(f) for f in schema.fields}


def _checker(field: Any) -> Callable[[Any], str | None]:
    if field.is_vector:
        dims = field.dimensions

        def vector(value: Any) -> str | None:
            if value is None:
                return None
            if not isinstance(value, list):
                return f"must be a vector (a list of {dims} numbers), got {_kind(value)} {limits.excerpt(value)}"
            if dims is not None and len(value) != dims:
                return f"has {len(value):,} dimensions; the schema says {dims}"
            for x in value:
                if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
                    return f"must hold finite numbers only, got {_kind(x)} {limits.excerpt(x)}"
            return None

        return vector
    element = _scalar(field.element_type)
    if element is None:
        return lambda value: None
    if not field.is_collection:
        return lambda value: None if value is None else element(value)
    kind = field.type

    def collection(value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, list):
            return f"must be a list ({kind}), got {_kind(value)} {limits.excerpt(value)}"
        for i, x in enumerate(value):
            problem = "must not hold null" if x is None else element(x)
            if problem:
                return f"item {i}: {problem}"
        return None

    return collection


def _scalar(edm: str) -> Callable[[Any], str | None] | None:
    if edm == "Edm.String":
        return lambda v: None if isinstance(v, str) else f"must be a string, got {_kind(v)} {limits.excerpt(v)}"
    if edm in _INT_RANGE:
        lo, hi = _INT_RANGE[edm]

        def integer(v: Any) -> str | None:
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                return f"must be an integer from {lo:,} to {hi:,} ({edm}), got {_kind(v)} {limits.excerpt(v)}"
            return None

        return integer
    if edm in ("Edm.Double", "Edm.Single", "Edm.Half"):
        return lambda v: (None if isinstance(v, int | float) and not isinstance(v, bool)
                          else f"must be a number ({edm}), got {_kind(v)} {limits.excerpt(v)}")
    if edm == "Edm.Boolean":
        return lambda v: None if isinstance(v, bool) else f"must be true or false, got {_kind(v)} {limits.excerpt(v)}"
    if edm == "Edm.DateTimeOffset":
        return _datetime
    return None


def _datetime(v: Any) -> str | None:
    if not isinstance(v, str):
        return f"must be an ISO 8601 date-time string, got {_kind(v)} {limits.excerpt(v)}"
    try:
        ts = datetime.fromisoformat(v.strip())
    except ValueError:
        return f"must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z, got {limits.excerpt(v)}"
    if ts.tzinfo is None:
        return f"needs a time zone ('Z' or an offset such as +02:00), got {limits.excerpt(v)}"
    return None


def _kind(value: Any) -> str:
    for t, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                    (list, "an array"), (dict, "an object")):
        if isinstance(value, t):
            return name
    return "null" if value is None else type(value).__name__
