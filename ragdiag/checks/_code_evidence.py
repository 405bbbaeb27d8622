"""What the checks that read the client-code scan share (not a check).

- `at(rec)`: where a scan record sits, ``file:line`` or, in a notebook, ``file#cell<i>:<line>``
  (the cell as Jupyter counts them, from 0, and the line in that cell);
- `locate(v, rec, name, ...)`: the record as a finding location (SARIF); a notebook record
  points at the notebook with its cell named in the message, because the scanner's line is
  a line of the joined code cells, not of the notebook's JSON;
- `site_class(v, rec)`: the record's site class as a catalogue message (a table cell);
- `value_fields(p)`: a resolved parameter as plain table cells (value, resolved, source,
  override, provenance): codes and values, no prose;
- `short(v, where)`: a list of places for a headline, the first few and how many more.

The judgement on the request path (what a check passes or fails on) uses the records whose
`site_class` is ``request``; the other classes are listed in the evidence with their class,
so that a consultant sees them without their changing a verdict.
"""

from __future__ import annotations

from typing import Any

SHOW = 3  # places named in a headline before "and N more"
REQUEST = "request"


def at(rec: Any) -> str:
    """``file:line``, or ``file#cell<i>:<line in cell>`` for a notebook record."""
    cell = getattr(rec, "cell", "") or ""
    if cell:
        index, _, line = cell.partition(":")
        return f"{rec.file}#cell{index}:{line}"
    return str(rec.location)


def on_request_path(rec: Any) -> bool:
    return getattr(rec, "site_class", REQUEST) == REQUEST


def request_only(items: Any) -> list[Any]:
    return [i for i in items if on_request_path(i)]


def locate(v: Any, rec: Any, name: str, /, *, level: str = "warning", **params: Any) -> None:
    """Point the finding at `rec` (a notebook record at its notebook, the cell in the message)."""
    cell = getattr(rec, "cell", "") or ""
    if cell:
        v.location(rec.file, 1, "common.loc_in_cell", level=level, cell=at(rec), what=v.msg(name, **params))
    else:
        v.location(rec.file, rec.line, name, level=level, **params)


def site_class(v: Any, rec: Any) -> Any:
    cls = getattr(rec, "site_class", REQUEST) or REQUEST
    return v.msg(f"common.class_{cls}") if f"common.class_{cls}" in v.catalogue else cls


def value_fields(p: Any) -> tuple[Any, bool | None, str, str, str]:
    """(value, resolved, source, override, provenance) of a ResolvedValue (all empty when None)."""
    if p is None:
        return None, None, "", "", ""
    value = p.value
    if not isinstance(value, str | int | float | bool) and value is not None:
        value = str(value)
    return value, bool(p.resolved), p.source or "", getattr(p, "override", "") or "", getattr(p, "provenance", "") or ""


def shown(p: Any) -> Any:
    """A parameter's value for a compact cell: the value, ``value?`` when partly known, ``?`` when unknown."""
    if p is None:
        return None
    if p.resolved:
        return p.value if isinstance(p.value, str | int | float | bool) or p.value is None else str(p.value)
    return f"{p.value}?" if p.value is not None else "?"


def short(v: Any, where: Any) -> Any:
    """Up to `SHOW` places, then "and N more" (a message)."""
    where = tuple(where)
    if len(where) <= SHOW:
        return where
    return v.msg("common.places_more", places=where[:SHOW], n=len(where) - SHOW)


def file_line(location: str) -> tuple[str, int]:
    file, _, line = location.rpartition(":")
    return (file, int(line)) if line.isdigit() else (location, 1)


def outcome(p: Any) -> Any:
    """The three-way outcome of a resolved parameter (``resolved``, ``library_default``, ``unresolved``)."""
    return getattr(p, "outcome", None) if p is not None else None


def report_gaps(v: Any, scan: Any, kinds: tuple[str, ...], *, params: tuple[str, ...] | None = None) -> list[Any]:
    """List what the scan could not read (of `kinds`) as the ``code_gaps`` table; returns the request-path gaps
    (of unresolved parameters only those in `params`, when given: the ones the check's verdict rests on).

    A check that judges code must never pass on evidence with a hole: the caller turns the gaps it
    gets back into a ``warn`` (some evidence was judged, the rest is named) or a ``skipped`` (nothing
    else was found). Gaps of other classes (a test's wrapper) are listed, not judged."""
    every = scan.gaps_in(kinds, scope="all")
    if not every:
        return []
    v.table("code_gaps", "common.t_code_gaps", ("site", "site_class", "gap", "function", "detail"),
            [(at(g), site_class(v, g), v.msg(f"common.gap_{g.kind}"), g.function, g.detail) for g in every],
            note="common.n_code_gaps")
    return list(scan.gaps_in(kinds, scope="request", params=params))


def gap_parts(v: Any, gaps: list[Any], limit: int = SHOW) -> tuple[Any, ...]:
    """Each gap as ``<kind> at <where> (<detail>)`` for a headline: the first few and how many more."""
    parts = tuple(v.msg("common.gap_at", kind=v.msg(f"common.gap_{g.kind}"), where=at(g), detail=g.detail[:120])
                  for g in gaps[:limit])
    if len(gaps) > limit:
        parts = (*parts, v.msg("common.gaps_more", n=len(gaps) - limit))
    return parts
