"""The entity lexicon: which entity keys a question mentions, for tag-boost scoring parameters.

A JSON object mapping each entity key to the names and aliases that mention it:

    {
      "ENT-ALPENBLICK": ["Alpenblick Logistik AG", "Alpenblick Logistik", "Alpenblick"],
      "ENT-AQUILA": ["Aquila Polymers S.r.l.", "Aquila"]
    }

A name is found in a question case-insensitively as a substring, longest names first, so
every name must be a string of at least `MIN_NAME_CHARS` characters: an alias written as
a bare string ("Aquila", which would be read letter by letter) or as "" would match
almost every question. `load_entities` refuses that, and every other malformed lexicon,
with an `InputDataError` naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.inputs import limits

__all__ = ["MIN_NAME_CHARS", "entity_matcher", "load_entities", "parse_entities"]

MIN_NAME_CHARS = 2
"""Shortest name accepted: a single character is found in nearly every question."""


def load_entities(path: str | os.PathLike[str]) -> dict[str, tuple[str, ...]]:
    """Read and check an entity lexicon: entity key -> its names (stripped, in file order)."""
    spath = str(path)
    text = limits.read_text(path, what="entities lexicon")
    data = limits.loads_json_lined(text, path=spath, what="the entities lexicon")
    return parse_entities(data, path=spath)


def parse_entities(data: Any, *, path: str | None = None) -> dict[str, tuple[str, ...]]:
    """Check a decoded lexicon (`load_entities` without the file): {key: [names]}."""
    def err(message: str, line: int | None = None) -> InputDataError:
        return InputDataError(message, path=path, line=line)

    if not isinstance(data, Mapping):
        raise err(f"an entities lexicon must be a JSON object {{\"ENT-KEY\": [\"Name\", \"Alias\"]}}, "
                  f"got {_kind(data)} {limits.excerpt(data)}", getattr(data, "line", 1))
    out: dict[str, tuple[str, ...]] = {}
    top = getattr(data, "line", None)
    for key, names in data.items():
        line = getattr(names, "line", None) or top
        shown = limits.excerpt(key, 60)
        if not isinstance(key, str):
            raise err(f"an entity key must be a string, got {_kind(key)} {shown}", line)
        if not key.strip():
            raise err("an entity key must be a non-empty string, got \"\"", line)
        if isinstance(names, str):
            raise err(f"entity {shown}: the names must be a list of strings, got the string "
                      f"{limits.excerpt(names, 60)} (a bare string would be read letter by letter); "
                      f"write [{limits.excerpt(names, 60).replace(chr(39), chr(34))}]", line)
        if not isinstance(names, list):
            raise err(f"entity {shown}: the names must be a list of strings, got {_kind(names)} "
                      f"{limits.excerpt(names)}", line)
        if not names:
            raise err(f"entity {shown} has no names; list at least one, e.g. "
                      f"{{{limits.excerpt(key, 40).replace(chr(39), chr(34))}: [\"Name\"]}}", line)
        clean: list[str] = []
        for i, name in enumerate(names):
            if not isinstance(name, str):
                raise err(f"entity {shown}: name #{i + 1} must be a string, got {_kind(name)} "
                          f"{limits.excerpt(name)}", line)
            stripped = " ".join(name.split())
            if len(stripped) < MIN_NAME_CHARS:
                raise err(f"entity {shown}: name #{i + 1} is {limits.excerpt(name, 40)}; a name needs "
                          f"at least {MIN_NAME_CHARS} characters (a shorter one is found in almost "
                          "every question)", line)
            clean.append(stripped)
        out[key.strip()] = tuple(dict.fromkeys(clean))
    if not out:
        raise err("the entities lexicon is empty; map at least one entity key to its names, or "
                  "remove 'entities' from [inputs]", top)
    return out


def entity_matcher(lexicon: str | os.PathLike[str] | Mapping[str, Sequence[str]] | None
                   ) -> Callable[[str], Sequence[str]]:
    """Entity keys mentioned in a question (longest names first), from a lexicon file or mapping.

    None (or a path that does not exist, as before this module) matches nothing.
    """
    if lexicon is None:
        return lambda q: ()
    if isinstance(lexicon, Mapping):
        table = parse_entities(dict(lexicon))
    else:
        try:
            missing = not Path(lexicon).exists()
        except (OSError, ValueError):  # a path the OS refuses: load_entities says why
            missing = False
        if missing:
            return lambda q: ()
        table = load_entities(lexicon)
    names = sorted(((name.lower(), key) for key, names in table.items() for name in names),
                   key=lambda nk: -len(nk[0]))

    def match(question: str) -> Sequence[str]:
        ql = question.lower()
        found: list[str] = []
        for name, key in names:
            if name in ql and key not in found:
                found.append(key)
        return tuple(found)

    return match


def _kind(value: Any) -> str:
    for t, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                    (list, "an array"), (Mapping, "an object")):
        if isinstance(value, t):
            return name
    return "null" if value is None else type(value).__name__
