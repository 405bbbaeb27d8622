"""Messages: computed text as an id plus parameters, rendered in the report's language.

A check never stores only rendered English. It records `Message("pool_size.configured_below",
{"profile": "definition", "pool": 20, "min": 50})`; the catalogue (each check's spec plus
`ragdiag/checks/common.toml`) holds the templates per language, and `render` fills them in.
A finding saved as JSON can therefore be rendered again in another language.

Templates use `str.format` fields. Parameter values are JSON scalars, lists of them
(joined with ", "), or nested messages (``{"$msg": id, "params": {...}}``), so an
enumerated word such as a clause role is translated too. Numbers follow the Swiss
convention the German texts use: a decimal point, ``'`` for thousands, a space before ``%``.
"""

from __future__ import annotations

import math
import numbers
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Message", "Catalogue", "render", "LANGUAGES", "format_value"]

LANGUAGES: tuple[str, ...] = ("en", "de")
MAX_PARAM_CHARS = 400  # a parameter longer than this is cut: messages stay sentences


def _param(value: Any) -> Any:
    """Normalise one parameter to JSON-safe data (numpy -> Python, NaN -> None)."""
    if value is None or isinstance(value, bool | str):
        return value if not isinstance(value, str) or len(value) <= MAX_PARAM_CHARS \
            else value[:MAX_PARAM_CHARS - 1] + "…"
    if isinstance(value, Message):
        return value
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return _param(value.item())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, Mapping) and "$msg" in value:
        return Message.from_dict(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return tuple(_param(v) for v in items)
    return str(value)


@dataclass(frozen=True)
class Message:
    """One sentence (or phrase) of computed text: a catalogue id and its parameters."""

    id: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or "." not in self.id:
            raise ValueError(f"a message id is '<check_id>.<name>' or 'common.<name>', got {self.id!r}")
        object.__setattr__(self, "params", {str(k): _param(v) for k, v in dict(self.params).items()})

    def to_dict(self) -> dict[str, Any]:
        return {"$msg": self.id, "params": {k: _json(v) for k, v in self.params.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        return cls(str(data.get("$msg") or data.get("id")), dict(data.get("params") or {}))

    def __hash__(self) -> int:
        return hash((self.id, tuple(sorted((k, repr(v)) for k, v in self.params.items()))))


def _json(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value


class Catalogue:
    """Message id -> {language: template}; lookups fall back to English, then to the id."""

    def __init__(self, entries: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._entries: dict[str, dict[str, str]] = {k: dict(v) for k, v in (entries or {}).items()}

    def add(self, prefix: str, table: Mapping[str, Mapping[str, str]]) -> None:
        for name, texts in table.items():
            self._entries[f"{prefix}.{name}"] = dict(texts)

    def merged(self, other: Catalogue) -> Catalogue:
        out = Catalogue(self._entries)
        out._entries.update(other._entries)
        return out

    def __contains__(self, msg_id: str) -> bool:
        return msg_id in self._entries

    def ids(self) -> Iterable[str]:
        return iter(self._entries)

    def templates(self, msg_id: str) -> Mapping[str, str]:
        return self._entries.get(msg_id, {})

    def template(self, msg_id: str, lang: str) -> str | None:
        texts = self._entries.get(msg_id)
        if not texts:
            return None
        return texts.get(lang) or texts.get("en")


class _Formatter(string.Formatter):
    def __init__(self, lang: str, catalogue: Catalogue) -> None:
        self.lang, self.catalogue = lang, catalogue

    def format_field(self, value: Any, format_spec: str) -> str:
        return format_value(value, format_spec, self.lang, self.catalogue)

    def get_value(self, key: Any, args: Any, kwargs: Mapping[str, Any]) -> Any:
        if isinstance(key, str) and key not in kwargs:
            return "{" + key + "}"  # a missing parameter shows as itself, never a crash
        return super().get_value(key, args, kwargs)


_FIXED = re.compile(r"^(?P<head>.*\.)(?P<prec>\d+)(?P<kind>[f%])$")


def _nonzero_format(value: Any, spec: str) -> str:
    """`format(value, spec)`, except that a non-zero value never prints as zero: a fixed or
    percent spec whose rounding gives 0 ("0%" for a share of 0.004) gets up to three more
    decimals ("0.4%"), so a sentence never contradicts the table that prints the same share."""
    text = format(value, spec)
    m = _FIXED.match(spec)
    if m is None or not value or any(c in "123456789" for c in text):
        return text
    for extra in range(1, 4):
        text = format(value, f"{m['head']}{int(m['prec']) + extra}{m['kind']}")
        if any(c in "123456789" for c in text):
            break
    return text


def format_value(value: Any, spec: str = "", lang: str = "en", catalogue: Catalogue | None = None) -> str:
    """One parameter as text in `lang`: numbers per convention, lists joined, messages rendered."""
    if isinstance(value, Message):
        return render(value, lang, catalogue or Catalogue())
    if isinstance(value, tuple | list):
        return ", ".join(format_value(v, spec, lang, catalogue) for v in value)
    if value is None:
        return "n/a" if lang == "en" else "k. A."
    if isinstance(value, bool):
        return ("yes" if value else "no") if lang == "en" else ("ja" if value else "nein")
    if isinstance(value, numbers.Real) and spec:
        try:
            text = _nonzero_format(value, spec)
        except (ValueError, TypeError):
            text = str(value)
    elif isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    elif isinstance(value, numbers.Integral):
        text = f"{value:,}" if abs(value) >= 10000 else str(value)
    else:
        text = format(str(value), spec) if spec and not isinstance(value, numbers.Real) else str(value)
    if lang == "de" and isinstance(value, numbers.Real):
        text = text.replace(",", "'")
        if text.endswith("%"):
            text = text[:-1] + " %"
    return text


def render(msg: Message, lang: str = "en", catalogue: Catalogue | None = None) -> str:
    """The message's text in `lang` (English when the language lacks it; the id when unknown)."""
    cat = catalogue or Catalogue()
    template = cat.template(msg.id, lang)
    if template is None:
        params = ", ".join(f"{k}={format_value(v, '', lang, cat)}" for k, v in msg.params.items())
        return f"[{msg.id}{': ' + params if params else ''}]"
    try:
        return _Formatter(lang, cat).vformat(template, (), dict(msg.params))
    except (ValueError, IndexError, KeyError, AttributeError):
        return template
