"""Compare two audits: per check the status change and the metric deltas, and regressions.

A check **regressed** when its status got worse by `SEVERITY` (``pass < skipped < warn <
error < fail``), when it ran in the old audit but not in the new one, or when a metric its
spec lists under ``[regression.<metric>]`` moved against ``better`` by more than
``tolerance`` (or is no longer measured). Other numeric metrics are shown with their
deltas but never gate. ``ragdiag diff OLD NEW --fail-on-regression`` exits 1 on any
regression.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragdiag.model.findings import SEVERITY, AuditResult

__all__ = ["MetricDelta", "CheckDiff", "FunnelDelta", "AuditDiff", "diff_audits", "diff_funnels"]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class MetricDelta:
    """One metric in both audits; `regressed` only for metrics with a spec tolerance."""

    name: str
    old: Any
    new: Any
    better: str | None = None
    tolerance: float | None = None

    @property
    def delta(self) -> float | None:
        a, b = _number(self.old), _number(self.new)
        return None if a is None or b is None else b - a

    @property
    def regressed(self) -> bool:
        if self.better is None:
            return False
        a, b = _number(self.old), _number(self.new)
        if a is None:
            return False  # nothing to fall from
        if b is None:
            return True  # measured before, not now
        tol = float(self.tolerance or 0)
        eps = 1e-12 * max(1.0, abs(a))
        return (a - b > tol + eps) if self.better == "higher" else (b - a > tol + eps)

    @property
    def improved(self) -> bool:
        d = self.delta
        return self.better is not None and d is not None and (d > 0 if self.better == "higher" else d < 0)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "old": self.old, "new": self.new, "delta": self.delta,
                "better": self.better, "tolerance": self.tolerance, "regressed": self.regressed}


@dataclass(frozen=True)
class CheckDiff:
    check_id: str
    old_status: str | None
    new_status: str | None
    metrics: tuple[MetricDelta, ...] = ()

    @property
    def change(self) -> str:
        """``same``, ``worse``, ``better``, ``added`` (new only) or ``removed`` (old only)."""
        if self.old_status is None:
            return "added"
        if self.new_status is None:
            return "removed"
        d = SEVERITY[self.new_status] - SEVERITY[self.old_status]
        return "worse" if d > 0 else "better" if d < 0 else "same"

    @property
    def regressions(self) -> list[str]:
        out = []
        if self.change == "worse":
            out.append(f"{self.check_id}: status {self.old_status} -> {self.new_status}")
        elif self.change == "removed":
            out.append(f"{self.check_id}: ran before ({self.old_status}), missing now")
        for m in self.metrics:
            if m.regressed:
                moved = "no longer measured" if _number(m.new) is None else \
                    f"{_fmt(m.old)} -> {_fmt(m.new)} ({_fmt(m.delta, sign=True)})"
                out.append(f"{self.check_id}: {m.name} {moved}; better {m.better}, tolerance "
                           f"{_fmt(m.tolerance)}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"check_id": self.check_id, "old_status": self.old_status, "new_status": self.new_status,
                "change": self.change, "regressed": bool(self.regressions),
                "metrics": [m.to_dict() for m in self.metrics]}


@dataclass(frozen=True)
class FunnelDelta:
    """One stage of one route (route None: all routes) in both audits' loss funnels: the
    expected sources it lost and their share of the route's expected sources, before and now.
    Shown, never gating (a funnel moves when the goldset does)."""

    route: str | None
    stage: str
    detail: str | None
    old_sources: int
    new_sources: int
    old_share: float | None
    new_share: float | None

    @property
    def delta(self) -> int:
        return self.new_sources - self.old_sources

    def to_dict(self) -> dict[str, Any]:
        return {"route": self.route, "stage": self.stage, "detail": self.detail, "old_sources": self.old_sources,
                "new_sources": self.new_sources, "old_share": self.old_share, "new_share": self.new_share,
                "delta_sources": self.delta}


def _funnel_rows(funnel: Mapping[str, Any] | None) -> dict[tuple[str | None, str, str | None], tuple[int, float | None]]:
    out: dict[tuple[str | None, str, str | None], tuple[int, float | None]] = {}
    if not funnel or funnel.get("status") != "measured":
        return out
    for row in funnel.get("totals") or ():
        out[(None, row["stage"], row.get("detail"))] = (int(row["sources"]), row.get("share"))
    for route in funnel.get("routes") or ():
        for row in route.get("stages") or ():
            out[(route["route"], row["stage"], row.get("detail"))] = (int(row["sources"]), row.get("share"))
    return out


def diff_funnels(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[FunnelDelta, ...]:
    """Per route and stage, where the expected sources went before and now (only rows that moved)."""
    a, b = _funnel_rows(old), _funnel_rows(new)
    out = []
    for key in list(a) + [k for k in b if k not in a]:
        (na, sa), (nb, sb) = a.get(key, (0, 0.0 if a else None)), b.get(key, (0, 0.0 if b else None))
        if na != nb or (sa is not None and sb is not None and abs(sa - sb) > 1e-9):
            out.append(FunnelDelta(key[0], key[1], key[2], na, nb, sa, sb))
    return tuple(out)


@dataclass(frozen=True)
class AuditDiff:
    checks: tuple[CheckDiff, ...]
    old_meta: Mapping[str, Any] = field(default_factory=dict)
    new_meta: Mapping[str, Any] = field(default_factory=dict)
    #: "<check>.<metric>" of [regression] tables whose metric neither audit reports (a renamed
    #: metric or a typo: such a tolerance guards nothing)
    unmatched: tuple[str, ...] = ()
    #: the loss funnel's stages that moved between the audits (`diff_funnels`)
    funnel: tuple[FunnelDelta, ...] = ()

    @property
    def regressions(self) -> list[str]:
        return [r for c in self.checks for r in c.regressions]

    def exit_code(self, fail_on_regression: bool = True) -> int:
        return 1 if fail_on_regression and self.regressions else 0

    def to_dict(self) -> dict[str, Any]:
        return {"regressed": bool(self.regressions), "regressions": self.regressions,
                "unmatched_tolerances": list(self.unmatched),
                "old": {k: self.old_meta.get(k) for k in ("date", "ragdiag_version", "target", "policy")},
                "new": {k: self.new_meta.get(k) for k in ("date", "ragdiag_version", "target", "policy")},
                "checks": [c.to_dict() for c in self.checks],
                "funnel": [f.to_dict() for f in self.funnel]}

    def markdown(self) -> str:
        """Markdown for a CI step summary: one row per check, then the regressions."""
        lines = ["## ragdiag diff", "",
                 f"**{len(self.regressions)} regression(s)**" if self.regressions else "**No regressions**",
                 "", "| check | status | change | metrics that moved |", "|---|---|---|---|"]
        for c in self.checks:
            moved = ", ".join(f"{m.name} {_fmt(m.delta, sign=True)}" + (" ⚠" if m.regressed else "")
                              for m in c.metrics if (m.delta or m.regressed))
            lines.append(f"| `{c.check_id}` | {c.old_status or '–'} → {c.new_status or '–'} | {c.change} | "
                         f"{_cell(moved)} |")
        if self.regressions:
            lines += ["", *[f"- {_cell(r)}" for r in self.regressions]]
        if self.funnel:
            lines += ["", "### Where the relevant documents went (loss funnel)", "",
                      "| route | stage | expected sources | share |", "|---|---|---|---|"]
            for f in self.funnel:
                stage = f.stage + (f": {f.detail}" if f.detail else "")
                lines.append(f"| {_cell(f.route or 'all')} | {_cell(stage)} | {f.old_sources} → {f.new_sources} "
                             f"({f.delta:+d}) | {_share(f.old_share)} → {_share(f.new_share)} |")
        return "\n".join(lines) + "\n"


def _share(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _fmt(value: Any, *, sign: bool = False) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        text = f"{value:+.4g}" if sign else f"{value:.4g}"
        return text
    if isinstance(value, int) and not isinstance(value, bool) and sign:
        return f"{value:+d}"
    return str(value)


def diff_audits(old: AuditResult, new: AuditResult, specs: Mapping[str, Any] | None = None) -> AuditDiff:
    """Compare `old` with `new`; `specs` (check id -> CheckSpec) supply the regression tolerances."""
    specs = specs or {}
    olds = {f.check_id: f for f in old.findings}
    news = {f.check_id: f for f in new.findings}
    ids = list(olds) + [cid for cid in news if cid not in olds]
    checks = []
    unmatched: list[str] = []
    for cid in ids:
        a, b = olds.get(cid), news.get(cid)
        rules = getattr(specs.get(cid), "regression", {}) or {}
        names = list(a.metrics if a else {}) + [n for n in (b.metrics if b else {}) if not a or n not in a.metrics]
        if a is not None and b is not None and a.status != "skipped" and b.status != "skipped":
            unmatched += [f"{cid}.{m}" for m in rules if m not in names]
        metrics = []
        for name in names:
            x = a.metrics.get(name) if a else None
            y = b.metrics.get(name) if b else None
            rule = rules.get(name)
            if rule is None and _number(x) is None and _number(y) is None:
                continue  # text metrics: not compared
            if a is None or b is None:
                rule = None  # the check itself was added or removed: its status says so
            metrics.append(MetricDelta(name, x, y, rule["better"] if rule else None,
                                       rule["tolerance"] if rule else None))
        checks.append(CheckDiff(cid, a.status if a else None, b.status if b else None, tuple(metrics)))
    return AuditDiff(tuple(checks), old.meta, new.meta, tuple(unmatched),
                     diff_funnels(getattr(old, "loss_funnel", None), getattr(new, "loss_funnel", None)))
