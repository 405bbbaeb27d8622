"""Whether two audits can be compared: their fingerprints (``meta["fingerprint"]``) side by side.

Equal ``instrument`` (ragdiag, the packages that compute figures, Python, the models) and
equal ``yardstick`` (goldset, checklist): comparable, and every moved figure is the audited
system's. Another instrument or yardstick: **not comparable**: a figure can move with a new
torch, another embedding model or a grown goldset while the system stands still, so a
"regression" may be no regression. Changes of the ``system`` group (target, profiles, client
code, query log, config) are what a diff is for; they are listed, not held against it. An
audit without a fingerprint (written before ragdiag recorded one) cannot be judged: then
``comparable`` is None. See `ragdiag.inputs.fingerprint`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragdiag.inputs.fingerprint import flatten

__all__ = ["Comparability", "compare_fingerprints"]

_GROUPS_THAT_BREAK = ("instrument", "yardstick")


@dataclass(frozen=True)
class Comparability:
    """``comparable``: True, False, or None (a fingerprint is missing); what differs, by group."""

    comparable: bool | None
    #: "<dotted path>: <old> -> <new>" of the instrument and yardstick groups
    reasons: tuple[str, ...] = ()
    #: the same for the system group (expected to differ)
    system_changes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # "old" / "new": the audits without a fingerprint

    def sentence(self) -> str:
        """One line for people: comparable, not (and why), or cannot tell."""
        if self.comparable is None:
            return (f"cannot tell whether the audits are comparable: the {' and '.join(self.missing)} "
                    "audit has no fingerprint (written by an older ragdiag); re-run it")
        if self.comparable:
            return "comparable: same instrument (ragdiag, packages, models) and yardstick (goldset, checklist)"
        shown = "; ".join(self.reasons[:6]) + (f"; and {len(self.reasons) - 6} more" if len(self.reasons) > 6 else "")
        return f"NOT comparable: figures may move with the measurement, not the system: {shown}"

    def markdown(self) -> str:
        """The sentence for a CI step summary (a warning when not comparable or unknown)."""
        if self.comparable:
            return f"\n{self.sentence()}\n"
        lines = ["", f"> **Warning:** {_md(self.sentence())}"]
        if len(self.reasons) > 6:  # the sentence shows six; the summary lists every one
            lines += [">", *[f"> - {_md(r)}" for r in self.reasons]]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {"comparable": self.comparable, "reasons": list(self.reasons),
                "system_changes": list(self.system_changes), "missing_fingerprint": list(self.missing)}


def _md(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, str]]:
    a, b = flatten(old), flatten(new)
    out = []
    for key in sorted(set(a) | set(b)):
        if key == "digest" or a.get(key) == b.get(key):
            continue
        out.append((key.split(".", 1)[0], f"{key}: {_short(a.get(key))} -> {_short(b.get(key))}"))
    return out


def _short(value: Any) -> str:
    if value is None:
        return "(none)"
    text = str(value)
    return text[:19] + "…" if text.startswith("sha256:") and len(text) > 20 else text


def compare_fingerprints(old_meta: Mapping[str, Any], new_meta: Mapping[str, Any]) -> Comparability:
    """Compare the fingerprints in two audits' ``meta``."""
    old, new = old_meta.get("fingerprint"), new_meta.get("fingerprint")
    missing = tuple(name for name, fp in (("old", old), ("new", new)) if not isinstance(fp, Mapping))
    if missing:
        return Comparability(None, missing=missing)
    changes = _changes(old, new)
    reasons = tuple(text for group, text in changes if group in _GROUPS_THAT_BREAK)
    system = tuple(text for group, text in changes if group not in _GROUPS_THAT_BREAK)
    return Comparability(not reasons, reasons, system)
