"""Report sentences conditioned on the evidence they assert.

A check's spec holds fixed sentences for the report (``client_<status>`` and variants
``client_<status>_<name>``). Each states something about the audited system ("citations are
checked in code", "permission filtering works", "the reranker finds relevant hits"), and is
printed only where the finding holds the evidence for it. The spec's ``[evidence]`` table names
it per sentence, as a list of conditions that must all hold:

- ``observed:NAME``: the finding observed NAME (``Finding.observed[NAME] > 0``: a probe run, a
  call site judged, a pool measured);
- ``metric:NAME``: the metric is present and true (not None, 0, False or empty);
- ``said:NAME``: the finding's headline says message NAME of the check (``<check_id>.NAME``);
- ``A|B``: either; a leading ``!`` negates one condition.

`client_sentence_id` picks the first sentence of the finding's status whose conditions hold
(``client_warn`` before ``client_warn_fields`` ..., in spec order); none holding, the report
prints the finding's own headline (computed from what was measured) instead of a fixed claim.
A sentence without an ``[evidence]`` entry asserts nothing beyond its status and always holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["CONDITION_KINDS", "client_sentence_id", "condition_problem", "holds"]

CONDITION_KINDS = ("observed", "metric", "said")
_CONDITION = re.compile(r"!?(observed|metric|said):[A-Za-z_][A-Za-z0-9_@.]*")


def condition_problem(condition: str) -> str | None:
    """Why `condition` is not a condition of the ``[evidence]`` language, or None."""
    parts = condition.split("|")
    bad = [p for p in parts if not _CONDITION.fullmatch(p.strip())]
    if bad:
        return (f"{bad[0]!r} is not a condition: write observed:NAME, metric:NAME or said:MESSAGE "
                "(a leading ! negates; | joins alternatives)")
    return None


def _one(finding: Any, condition: str) -> bool:
    negate = condition.startswith("!")
    kind, _, name = condition.lstrip("!").partition(":")
    if kind == "observed":
        ok = int((getattr(finding, "observed", None) or {}).get(name, 0) or 0) > 0
    elif kind == "metric":
        value = (getattr(finding, "metrics", None) or {}).get(name)
        ok = value not in (None, 0, 0.0, False, "")
    else:  # said
        wanted = f"{finding.check_id}.{name}"
        said = (*(getattr(finding, "headline_msgs", ()) or ()), *(getattr(finding, "more_msgs", ()) or ()))
        ok = any(m.id == wanted for m in said)
    return ok != negate


def holds(finding: Any, conditions: Iterable[str]) -> bool:
    """Whether every condition holds for `finding` (each may join alternatives with '|')."""
    return all(any(_one(finding, alt.strip()) for alt in c.split("|")) for c in conditions)


def client_sentence_id(finding: Any, messages: Sequence[str], evidence: Mapping[str, Sequence[str]],
                       kind: str) -> str | None:
    """The name of the first sentence ``client_<kind>`` or ``client_<kind>_*`` among `messages`
    whose evidence holds for `finding`; None when none does."""
    base = f"client_{kind}"
    for name in messages:
        if (name == base or name.startswith(base + "_")) and holds(finding, evidence.get(name, ())):
            return name
    return None
