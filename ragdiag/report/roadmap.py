"""The report's roadmap: one ordered list of changes (the limits of the audit are in render.py).

The roadmap replaces the per-check "what to do" lists in the body (those stand in appendix A):
security faults first, then every significant improving effect the checks measured, largest
first, each change once. Its numbers are the findings' `Effect`s, the same the effects tables
print; nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragdiag.report.format import _e
from ragdiag.report.texts import _check_lang, _t

#: the effort class of a check's changes: a policy setting, application code, the index, the goldset
EFFORT: Mapping[str, str] = {
    "pool_size": "config", "prerank_filters": "config", "reranker_scores": "config",
    "shared_query_text": "config", "route_counts": "config", "goldset": "config",
    "call_sites": "code", "context_budgets": "code", "acl_trimming": "code",
    "chunk_boundaries": "index",
}
MAX_ROWS = 12


@dataclass(frozen=True)
class Step:
    """One roadmap row: the change, its measured effect (None for a security fault), its check."""

    number: int  # the check's position in the report
    finding: Any
    change: str
    effect: Any

    @property
    def effort(self) -> str:
        return EFFORT.get(self.finding.check_id, "config")


def roadmap(result: Any, specs: Mapping[str, Any] | None = None, lang: str = "en") -> list[Step]:
    """The ordered changes: the security faults (as `render.priorities` ranks them), then each
    distinct significant improving effect, nDCG@10 before the pool metrics, largest first."""
    from ragdiag.report.render import (
        PRIMARY_METRIC,
        _catalogue,
        _client_text,
        _first_part,
        _priority_of,
    )

    specs = specs or {}
    cat = _catalogue(specs)
    steps: list[Step] = []
    numbered = list(enumerate(result.findings, start=1))
    for n, f in numbered:
        if f.status in ("fail", "warn") and _priority_of(f) == "security":
            change = _client_text(f, specs.get(f.check_id), lang, cat, "client_action") or _first_part(f, lang, cat)
            steps.append(Step(n, f, change, None))
    best: dict[str, Step] = {}
    for n, f in numbered:
        if f.status not in ("fail", "warn"):
            continue
        for e in f.effects:
            if not (e.significant and e.improves and e.action):
                continue
            key = " ".join(e.action.split()).lower()
            old = best.get(key)
            if old is None or (e.metric == PRIMARY_METRIC, e.delta) > (old.effect.metric == PRIMARY_METRIC,
                                                                       old.effect.delta):
                best[key] = Step(n, f, e.action, e)
    steps += sorted(best.values(), key=lambda s: (s.effect.metric != PRIMARY_METRIC, -s.effect.delta, s.number))
    return steps


def render_roadmap(result: Any, lang: str = "en", specs: Mapping[str, Any] | None = None) -> str:
    """The roadmap section: a table of change, measured effect, effort class and check; the
    failing checks without a significant measured gain named below it."""
    from ragdiag.report.render import (
        _check_title,
        _effect_short,
        _not_significant,
        unmeasured_findings,
    )

    _check_lang(lang)
    specs = specs or {}
    steps = roadmap(result, specs, lang)
    parts = [f'<section class="rd-roadmap"><h2>{_e(_t("roadmap", lang))}</h2>',
             f'<p class="rd-note">{_e(_t("roadmap_intro", lang))}</p>']
    if not steps:
        parts.append(f"<p>{_e(_t('roadmap_none', lang))}</p>")
    else:
        head = "".join(f"<th>{_e(_t(k, lang))}</th>" for k in ("col_change", "col_effect", "col_effort", "col_from_check"))
        rows = []
        for i, s in enumerate(steps[:MAX_ROWS], start=1):
            effect = _t("roadmap_security", lang) if s.effect is None else _effect_short(s.effect, lang)
            rows.append(f"<tr><td>{i}. {_e(s.change)}</td><td>{_e(effect)}</td>"
                        f"<td>{_e(_t('effort_' + s.effort, lang))}</td>"
                        f'<td><a href="#check-{_e(s.finding.check_id)}">{s.number}. '
                        f"{_e(_check_title(s.finding, specs.get(s.finding.check_id), lang))}</a></td></tr>")
        parts.append('<table class="rd-table rd-roadmap-table"><colgroup><col style="width:46%"/>'
                     '<col style="width:22%"/><col style="width:12%"/><col style="width:20%"/></colgroup>'
                     f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        if len(steps) > MAX_ROWS:
            parts.append(f'<p class="rd-note">{_e(_t("truncated", lang, shown=MAX_ROWS, total=len(steps)))}</p>')
    rest = unmeasured_findings(result)
    if rest:
        names = ", ".join(_check_title(f, specs.get(f.check_id), lang)
                          + (_not_significant(f, lang) or f" ({_t('not_measured', lang)})") for f in rest)
        parts.append(f'<p class="rd-note">{_e(_t("roadmap_rest", lang, items=names))}</p>')
    parts.append("</section>")
    return "".join(parts)

