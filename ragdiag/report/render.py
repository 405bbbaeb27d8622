"""The report's sections as HTML: page 1 (verdict, priorities), summary, one check, appendix.

The renderers are pure: they turn findings, check specs and an audit context
into HTML strings, so they are unit-testable without a kernel.
"""

from __future__ import annotations

import base64
import platform
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.model.findings import SEVERITY
from ragdiag.report.format import _badge, _date, _e, _frame, _frame_html, _now_iso
from ragdiag.report.labels import metric_label
from ragdiag.report.tables import (
    APPENDIX_MAX_ROWS,
    Table,
    body_tables,
    fmt_cell,
    fmt_number,
    fmt_p,
    is_landscape,
    is_share_key,
    table_html,
)
from ragdiag.report.texts import TEXTS, _check_lang, _t

MAX_EVIDENCE_ROWS = 25
KEY_PACKAGES: tuple[str, ...] = (
    "numpy", "pandas", "scipy", "faiss-cpu", "bm25s", "sentence-transformers", "ir-measures",
    "azure-search-documents", "matplotlib", "papermill", "nbconvert", "weasyprint",
)


# ---------------------------------------------------------------------------
# priorities and the verdict


@dataclass(frozen=True)
class Priority:
    """One of the front page's priorities: a finding, what to do, and its measured effect."""

    number: int  # the check's position in the report
    finding: Any
    action: str
    effect: Any  # Effect | None
    title: str


def _statuses(result: Any) -> Counter[str]:
    return Counter(f.status for f in result.findings)


#: the metric a priority is ranked by first: what the user sees (the pool metrics follow)
PRIMARY_METRIC = "ndcg@10"


def best_effect(finding: Any) -> Any:
    """The finding's improving effect: significant ones first, then one on nDCG@10 (what the user
    sees; recall@50 measures the pool), then the largest delta (or None)."""
    improving = [e for e in getattr(finding, "effects", ()) if e.improves]
    if not improving:
        return None
    return max(improving, key=lambda e: (e.significant, e.metric == PRIMARY_METRIC, e.delta))


def _effect_rank(finding: Any) -> tuple[bool, float]:
    e = best_effect(finding)
    return (e.metric == PRIMARY_METRIC, e.delta) if e is not None and e.significant else (False, -1.0)


def _priority_of(finding: Any) -> str:
    p = getattr(finding, "priority", "") or ""
    derive = getattr(finding, "derived_priority", None)
    return p or (derive() if callable(derive) else "unmeasured")


def priorities(result: Any, specs: Mapping[str, Any] | None = None, lang: str = "en",
               limit: int = 3) -> list[Priority]:
    """The front page's priorities: security faults first (`Finding.priority` ``security``: a
    leak, a fail-open or unescaped security filter), then findings with a significant improving
    effect, ranked by its size (on nDCG@10 before the pool metrics), then by severity and check
    order: every security fault, then up to `limit` measured gains. A
    finding whose fix no metric measured as a significant gain (``unmeasured``) is never a
    priority: `unmeasured_findings` lists those."""
    specs = specs or {}
    cat = _catalogue(specs)
    numbered = list(enumerate(result.findings, start=1))
    cands = [(n, f) for n, f in numbered if f.status in ("fail", "warn")
             and _priority_of(f) in ("security", "measured")]
    def rank(nf: tuple[int, Any]) -> tuple[Any, ...]:
        primary, delta = _effect_rank(nf[1])
        return (_priority_of(nf[1]) != "security", not primary, -delta, -SEVERITY[nf[1].status], nf[0])

    cands.sort(key=rank)
    # every security fault, then up to `limit` measured gains: a leak never costs a gain its place
    security = [c for c in cands if _priority_of(c[1]) == "security"]
    out = []
    for n, f in security + [c for c in cands if _priority_of(c[1]) != "security"][:limit]:
        spec = specs.get(f.check_id)
        e = best_effect(f)
        if e is not None and e.significant and e.action:
            action = e.action
        else:
            e = e if e is not None and e.significant else None
            action = _client_text(f, spec, lang, cat, "client_action") or _first_part(f, lang, cat)
        out.append(Priority(n, f, action, e, _check_title(f, spec, lang)))
    return out


def unmeasured_findings(result: Any) -> list[Any]:
    """Failing and warning findings that are not priorities: no significant measured gain."""
    return [f for f in result.findings if f.status in ("fail", "warn") and _priority_of(f) == "unmeasured"]


def _catalogue(specs: Mapping[str, Any]) -> Any:
    from ragdiag.checks.base import catalogue_for

    return catalogue_for(list(specs.values()))


def _client_text(finding: Any, spec: Any, lang: str, cat: Any, name: str) -> str:
    """A client-readable message of the check's spec (``client_<status>``, ``client_action``)."""
    from ragdiag.model.messages import Message, render

    msg_id = f"{finding.check_id}.{name}"
    if spec is None or msg_id not in cat:
        return ""
    return render(Message(msg_id), lang, cat)


def _first_part(finding: Any, lang: str, cat: Any) -> str:
    from ragdiag.model.messages import render

    if finding.headline_msgs:
        return render(finding.headline_msgs[0], lang, cat)
    return finding.headline.split("; ")[0]


def _headline_parts(finding: Any, lang: str, cat: Any) -> list[str]:
    from ragdiag.model.messages import render

    if finding.headline_msgs:
        more = tuple(getattr(finding, "more_msgs", ()) or ())
        # the check's section hides nothing: the parts cut behind "(+N more)" in full
        shown = [m for m in finding.headline_msgs if not (more and m.id == "common.and_more")]
        return [render(m, lang, cat) for m in (*shown, *more)]
    return [finding.headline]


def _effect_line(e: Any, lang: str) -> str:
    return _t("priority_effect", lang, scope=e.scope or "–", metric=metric_label(e.metric, lang),
              before=fmt_number(e.before, lang, decimals=3), after=fmt_number(e.after, lang, decimals=3),
              delta=fmt_number(e.delta, lang, signed=True, decimals=3), p=fmt_p(e.p, lang))


def _not_significant(finding: Any, lang: str) -> str:
    """" (measured, not significant: nDCG@10 +0.020, p = 0.4)" for a finding whose fix was
    measured without a significant gain; "" when nothing was measured."""
    e = best_effect(finding) or next(iter(getattr(finding, "effects", ())), None)
    return f" ({_t('not_significant', lang, effect=_effect_short(e, lang))})" if e is not None else ""


def _effect_short(e: Any, lang: str) -> str:
    return _t("effect_short", lang, metric=metric_label(e.metric, lang),
              delta=fmt_number(e.delta, lang, signed=True, decimals=3), p=fmt_p(e.p, lang))


def verdict(result: Any, lang: str = "en") -> str:
    """The overall verdict in one sentence: statuses, and what the compared policy measures."""
    st = _statuses(result)
    n = len(result.findings)
    others = st["skipped"] + st["error"]
    if st["fail"]:
        text = _t("verdict_fail", lang, fails=st["fail"], n=n, warns=st["warn"])
    elif st["warn"]:
        text = _t("verdict_warn", lang, warns=st["warn"], n=n)
    else:
        text = _t("verdict_pass", lang, passes=st["pass"], n=n)
    if others:
        text += _t("verdict_others", lang, others=others)
    policy_effect = next((e for f in result.findings if f.check_id == "goldset" for e in f.effects
                          if e.metric == "ndcg@10" and e.action_msg is not None
                          and "policy" in e.action_msg.params), None)
    if policy_effect is not None and policy_effect.significant and policy_effect.delta:
        key = "verdict_policy_better" if policy_effect.improves else "verdict_policy_worse"
        text += _t(key, lang, policy=policy_effect.action_msg.params["policy"],
                   metric=metric_label(policy_effect.metric, lang), n=policy_effect.n,
                   before=fmt_number(policy_effect.before, lang, decimals=3),
                   after=fmt_number(policy_effect.after, lang, decimals=3),
                   p=fmt_p(policy_effect.p, lang))
    return text + _t("verdict_end", lang)


# ---------------------------------------------------------------------------
# page 1 and the summary


def _status_badge(status: str, lang: str) -> str:
    return _badge(status, _t(f"st_{status}", lang) if f"st_{status}" in TEXTS[lang] else status)


def render_title(result: Any, lang: str = "en", *, client: str = "", system: str = "", name: str = "",
                 source: str = "", generated: str | None = None, specs: Mapping[str, Any] | None = None) -> str:
    """Page 1: the system, the date, the verdict in one sentence and the three priorities with
    their measured effect; a one-line note on the audit (its details are in the appendix)."""
    _check_lang(lang)
    meta = result.meta
    cfg = meta.get("config") or {}
    specs = specs or {}
    heading = client or cfg.get("client") or ""
    sub = system or cfg.get("system") or ""
    target = meta.get("target") or "–"
    kind = (cfg.get("target") or {}).get("kind")
    if kind and target != "–":
        target = f"{target} ({kind})"
    date = _date(meta.get("date"))[:10] if meta.get("date") else "–"
    parts = ['<section class="rd-title-page">',
             f'<h1 class="rd-doc-title">{_e(_t("report_title", lang))}</h1>']
    if heading or sub:
        parts.append(f'<p class="rd-subtitle">{_e(heading)}{" – " + _e(sub) if sub else ""}</p>')
    parts.append(f'<p class="rd-date">{_e(_t("front_date", lang, date=date, policy=meta.get("policy") or "–", target=target))}</p>')
    parts.append(f'<div class="rd-verdict rd-verdict-{_e(result.worst())}"><b>{_e(_t("verdict_label", lang))}:</b> '
                 f'{_e(verdict(result, lang))}</div>')
    prios = priorities(result, specs, lang)
    parts.append(f'<h2 class="rd-prio-head">{_e(_t("priorities", lang))}</h2>')
    rest = unmeasured_findings(result)
    if not prios:  # "nothing needs fixing" only where nothing failed or warned
        parts.append(f"<p>{_e(_t('priorities_none_measured' if rest else 'priorities_none', lang))}</p>")
    else:
        cat = _catalogue(specs)
        items = []
        for p in prios:
            # the measured effect, significant or not; "unmeasured" only where nothing was measured
            shown = p.effect or best_effect(p.finding) or next(iter(getattr(p.finding, "effects", ())), None)
            measured = (_effect_line(shown, lang) if shown is not None
                        else _t("priority_security", lang, finding=_first_part(p.finding, lang, cat))
                        if _priority_of(p.finding) == "security"
                        else _t("priority_unmeasured", lang, finding=_first_part(p.finding, lang, cat)))
            items.append(f'<li class="rd-prio">{_status_badge(p.finding.status, lang)} <b>{_e(p.action)}</b>'
                         f'<br><span class="rd-prio-effect">{_e(measured)}</span>'
                         f'<br><span class="rd-prio-from"><a href="#check-{_e(p.finding.check_id)}">'
                         f'{_e(_t("priority_from", lang, n=p.number, title=p.title))}</a></span></li>')
        parts.append(f'<ol class="rd-prios">{"".join(items)}</ol>')
        parts.append(f'<p class="rd-note">{_e(_t("priorities_rule", lang))}</p>')
    if rest:  # a measured effect that is not significant is shown as such, never as "unmeasured"
        names = ", ".join(_check_title(f, specs.get(f.check_id), lang) + _not_significant(f, lang) for f in rest)
        parts.append(f'<p class="rd-note">{_e(_t("priorities_unmeasured", lang, items=names))}</p>')
    parts.append(f'<p class="rd-about">{_e(_t("about_line", lang, audit=name or cfg.get("name") or "–", client=heading or "–", version=meta.get("ragdiag_version") or __version__, generated=_date(generated or _now_iso())))}'
                 + (f" · {_e(_t('findings_source', lang))}: {_e(_t('source_json', lang, path=Path(source).name))}"
                    if source else "") + "</p>")
    parts.append("</section>")
    return "".join(parts)


def _check_title(finding: Any, spec: Any, lang: str) -> str:
    if spec is not None:
        return spec.text("title", lang)
    return finding.title or finding.check_id


def client_sentence(finding: Any, spec: Any, lang: str, cat: Any = None) -> str:
    """What a finding means for the client, in one plain sentence."""
    if finding.status == "skipped":
        return _t("client_skipped", lang, reason=finding.skipped_reason or finding.headline)
    if finding.status == "error":
        return _t("client_error", lang)
    cat = cat if cat is not None else _catalogue({finding.check_id: spec} if spec is not None else {})
    if spec is None:
        return finding.headline
    # a fixed sentence only where the finding holds what it asserts (ragdiag.report.evidence);
    # without one, the finding's own headline, computed from what was measured
    from ragdiag.report.evidence import client_sentence_id

    name = client_sentence_id(finding, list(getattr(spec, "messages", {}) or {}),
                              getattr(spec, "evidence", {}) or {}, finding.status)
    return (_client_text(finding, spec, lang, cat, name) if name else "") or finding.headline


def render_summary(result: Any, lang: str = "en", specs: Mapping[str, Any] | None = None) -> str:
    """The one-page summary: per check its plain-language status, what it means for the client,
    and the measured effect of its fix."""
    _check_lang(lang)
    specs = specs or {}
    cat = _catalogue(specs)
    st = _statuses(result)
    rows = []
    for i, f in enumerate(result.findings, start=1):
        spec = specs.get(f.check_id)
        title = _check_title(f, spec, lang)
        e = best_effect(f)
        rows.append(
            f'<tr><td class="rd-st">{_status_badge(f.status, lang)}</td>'
            f'<td><a href="#check-{_e(f.check_id)}">{i}. {_e(title)}</a></td>'
            f"<td>{_e(client_sentence(f, spec, lang, cat))}</td>"
            f'<td class="rd-eff">{_e(_effect_short(e, lang)) if e is not None else "–"}</td></tr>')
    head = "".join(f"<th>{_e(_t(k, lang))}</th>" for k in ("col_status", "col_check", "col_client", "col_effect"))
    counts = _t("summary_counts", lang, n=len(result.findings), fails=st["fail"], warns=st["warn"],
                passes=st["pass"], others=st["skipped"] + st["error"])
    return (
        '<section class="rd-summary">'
        f'<h2>{_e(_t("summary", lang))}</h2>'
        f"<p>{_e(counts)}</p>"
        f"{render_limits(result, lang, specs)}"
        '<table class="rd-table rd-summary-table"><colgroup><col style="width:13%"/><col style="width:21%"/>'
        '<col style="width:46%"/><col style="width:20%"/></colgroup>'
        f'<thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
        f"{render_funnel(result, lang)}"
        "</section>"
    )


def render_funnel(result: Any, lang: str = "en") -> str:
    """Page 2's funnel: per route, the share of its expected sources each stage lost and the
    share that reached the top, and the profile element whose ablation cost most (with its
    measured delta and Holm-adjusted p). Empty when the audit measured no funnel."""
    funnel = getattr(result, "loss_funnel", None)
    if not funnel:
        return ""
    if funnel.get("status") != "measured":
        return f'<p class="rd-note">{_e(_t("funnel_skipped", lang, reason=funnel.get("reason") or "–"))}</p>'
    from ragdiag.engine.funnel import STAGE_IDS

    routes = funnel.get("routes") or []
    lost = [s for s in STAGE_IDS if s != "top" and any(r["stage"] == s for route in routes for r in route["stages"])]
    costs = _element_costs(getattr(result, "ablation", None) or {})
    head = ("<th>" + _e(_t("funnel_route", lang)) + "</th>"
            + "".join(f"<th>{_e(_t(f'stage_{s}', lang))}</th>" for s in lost)
            + f"<th>{_e(_t('funnel_reached', lang))}</th><th>{_e(_t('funnel_costs', lang))}</th>")
    body = []
    for route in routes:
        share = {s: sum(r["share"] or 0 for r in route["stages"] if r["stage"] == s) for s in (*lost, "top")}
        cost = costs.get(route["route"])
        cells = "".join(f'<td class="rd-num">{_e(fmt_number(share[s], lang, share=True))}</td>' for s in lost)
        body.append(f"<tr><td>{_e(route['route'])} ({route['sources']})</td>{cells}"
                    f'<td class="rd-num">{_e(fmt_number(share["top"], lang, share=True))}</td>'
                    f"<td>{_e(cost or _t('funnel_none', lang))}</td></tr>")
    method = _t(f"funnel_method_{funnel.get('method')}", lang) if funnel.get("method") else "–"
    intro = _t("funnel_intro", lang, sources=funnel.get("sources_total", 0), cases=funnel.get("cases", 0),
               method=method)
    return (f'<h3 class="rd-funnel-head">{_e(_t("funnel_title", lang))}</h3><p class="rd-note">{_e(intro)}</p>'
            f'<table class="rd-table rd-funnel"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _element_costs(ablation: Mapping[str, Any]) -> dict[str, str]:
    """Per route: the element whose ablation measured the largest significant cost (verdict
    ``hurts``), as ``profile: element (metric +delta, Holm p)``; routes without one get none."""
    best: dict[str, tuple[Any, ...]] = {}
    alpha = float(ablation.get("alpha") or 0.05)
    for e in ablation.get("elements") or ():
        if e.get("verdict") != "hurts":  # only a measured (Holm-significant) cost is named
            continue
        for m, v in (e.get("metrics") or {}).items():
            d, p = v.get("delta"), v.get("p_holm")
            if d is None or d <= 0 or p is None or not p < alpha:
                continue
            key = (True, d)
            for route in e.get("routes") or ():
                if route not in best or key > best[route][0]:
                    best[route] = (key, e, m, d, p)
    out = {}
    for route, (_k, e, m, d, p) in best.items():
        p_text = "–" if p is None else f"p = {p:.2g}"
        out[route] = f"{e['profile']}: {e['element']} ({m} +{d:.3f}, Holm {p_text})"
    return out


# ---------------------------------------------------------------------------
# one check


def evidence_frame(evidence: Any, max_rows: int = MAX_EVIDENCE_ROWS) -> tuple[Any, int]:
    """The evidence as a DataFrame cut to `max_rows`, and its full row count."""
    frame = evidence.to_dataframe()
    return frame.head(max_rows), len(frame)


def _table_block(t: Table, lang: str, *, title: str | None = None, notes: Sequence[str] = (),
                 fold: bool = False, max_rows: int | None = None, heading: str = "h4",
                 landscape: bool = False) -> str:
    """A titled table with its notes; `landscape`: sized for a landscape page (the caller puts
    it on one: the appendix's wide tables), else it wraps on the portrait page."""
    parts = ['<div class="rd-evidence">']
    title = t.title if title is None else title
    if title:
        parts.append(f"<{heading}>{_e(title)}</{heading}>")
    if t.note:
        parts.append(f'<p class="rd-note">{_e(t.note)}</p>')
    if not t.rows:
        parts.append(f'<p class="rd-note">{_e(_t("no_rows", lang))}</p>')
    else:
        parts.append(table_html(t, lang, fold=fold, max_rows=max_rows, landscape=landscape))
    for n in [*t.notes, *notes]:
        parts.append(f'<p class="rd-note">{_e(n)}</p>')
    parts.append("</div>")
    return "".join(parts)


def render_evidence(evidence: Any, lang: str = "en", *, max_rows: int = MAX_EVIDENCE_ROWS) -> str:
    """One evidence table (identical rows collapsed; cut to `max_rows` with a note saying so)."""
    t = Table.of(evidence).collapsed(lang)
    notes = [_t("truncated", lang, shown=max_rows, total=len(t.rows))] if len(t.rows) > max_rows else []
    return _table_block(t, lang, notes=notes, max_rows=max_rows)


def figure_png(finding: Any, *, dpi: int = 150, lang: str = "en") -> str | None:
    """The finding's figure (drawn by its check, `ragdiag.checks.figures.figure`) as base64 PNG,
    or None when the finding has nothing to draw. Errors propagate: a figure that cannot be
    drawn from its evidence is a bug to see, not a gap in the client's report."""
    from ragdiag.checks.figures import figure, png_bytes

    fig = figure(finding, lang)
    if fig is None:
        return None
    return base64.b64encode(png_bytes(fig, dpi=dpi)).decode("ascii")


def _metrics_html(metrics: Mapping[str, Any], lang: str, spec: Any = None) -> str:
    """Metrics as a compact two-pair-per-row table, by their display names (the spec's
    ``[labels]`` first)."""
    labels = getattr(spec, "labels", None) or {}
    items = list(metrics.items())
    half = (len(items) + 1) // 2
    left, right = items[:half], items[half:]

    def pair(k: str, v: Any) -> str:
        num = isinstance(v, int | float) and not isinstance(v, bool)
        cls = ' class="rd-num"' if num else ""
        text = fmt_number(v, lang, share=is_share_key(k)) if num else fmt_cell(v, k, lang)
        return f"<td>{_e(metric_label(k, lang, labels))}</td><td{cls}>{_e(text)}</td>"

    rows = []
    for i, (k, v) in enumerate(left):
        cells = pair(k, v) + (pair(*right[i]) if i < len(right) else "<td></td><td></td>")
        rows.append(f"<tr>{cells}</tr>")
    head = (f"<th>{_e(_t('metric', lang))}</th><th>{_e(_t('value', lang))}</th>") * 2
    return (f'<table class="rd-table rd-metrics"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


#: measured effects a check's section prints in the body; all of them are in appendix A
BODY_EFFECTS = 4


def _effects_html(effects: Sequence[Any], lang: str, *, more: str = "") -> str:
    rows = [[e.action, e.scope, metric_label(e.metric, lang), fmt_number(e.before, lang, decimals=3),
             fmt_number(e.after, lang, decimals=3), fmt_number(e.delta, lang, signed=True, decimals=3),
             fmt_p(e.p, lang)] for e in effects]
    t = Table([_t(k, lang) for k in ("col_change", "col_scope", "col_metric", "col_before", "col_after")]
              + ["Δ", "p"], ["change", "scope", "metric", "before", "after", "delta", "p_text"], rows,
              _t("effects", lang), _t("effects_note", lang))
    return _table_block(t, lang, heading="h3", notes=[more] if more else ())


def render_details(result: Any, lang: str = "en") -> str:
    """The heading of the part with one section per check (starts a new page)."""
    _check_lang(lang)
    return f'<section class="rd-details-head"><h2 class="rd-part">{_e(_t("details", lang))}</h2></section>'


#: evidence tables a check's section prints in the body; the others are in appendix A in full
BODY_EVIDENCE_TABLES = 1


def report_tables(finding: Any, lang: str) -> list[tuple[Any, Any]]:
    """`body_tables`, with only the first `BODY_EVIDENCE_TABLES` shown tables kept in the body
    (the rest: in the appendix, in full). Body and appendix both read this one plan, so no
    table is lost and none is printed twice in full."""
    from ragdiag.report.tables import BodyTable

    out, shown = [], 0
    for ev, body in body_tables(finding, lang):
        if body.table is not None:
            shown += 1
            if shown > BODY_EVIDENCE_TABLES:
                body = BodyTable(None, True)
        out.append((ev, body))
    return out


def render_check(finding: Any, spec: Any, lang: str = "en", *, number: int | None = None,
                 total: int | None = None, figures: bool = True,
                 max_rows: int = MAX_EVIDENCE_ROWS) -> str:
    """One check's section: what it means, what was found and measured, the figure, the evidence
    (long tables summarised; the appendix prints them in full) and what to do."""
    _check_lang(lang)
    cat = _catalogue({finding.check_id: spec} if spec is not None else {})
    title = _check_title(finding, spec, lang)
    question = spec.text("question", lang) if spec is not None else finding.question
    why = spec.text("why", lang) if spec is not None else ""
    remediation = spec.text("remediation", lang) if spec is not None else ""
    prefix = f"{number}. " if number is not None else ""
    parts = [f'<section class="rd-check" id="check-{_e(finding.check_id)}">']
    if number is not None and total is not None:
        parts.append(f'<p class="rd-kicker">{_e(_t("check_of", lang, n=number, total=total))}</p>')
    parts.append(f"<h2>{_e(prefix + title)} {_status_badge(finding.status, lang)}</h2>")
    parts.append(f'<p class="rd-client">{_e(client_sentence(finding, spec, lang, cat))}</p>')
    if question:
        parts.append(f'<p class="rd-question"><b>{_e(_t("question", lang))}:</b> <i>{_e(question)}</i></p>')
    if why:
        parts.append(f'<h3>{_e(_t("why", lang))}</h3><p class="rd-why">{_e(why)}</p>')
    parts.append(f'<h3>{_e(_t("finding", lang))}</h3>')
    heads = _headline_parts(finding, lang, cat)
    if len(heads) > 1:
        parts.append('<ul class="rd-headline">' + "".join(f"<li>{_e(h)}</li>" for h in heads) + "</ul>")
    else:
        parts.append(f'<p class="rd-headline">{_e(heads[0] if heads else finding.headline)}</p>')
    if finding.skipped_reason:
        parts.append(f'<p><b>{_e(_t("skipped_reason", lang))}:</b> {_e(finding.skipped_reason)}</p>')
    if finding.incomplete:
        counts = ", ".join(f"{k} = {v}" for k, v in finding.incomplete.items())
        parts.append(f'<p class="rd-incomplete"><b>{_e(_t("incomplete", lang))}:</b> '
                     f'{_e(_t("incomplete_text", lang, counts=counts))}</p>')
    if finding.effects:
        effects = list(finding.effects)
        if number is not None and len(effects) > BODY_EFFECTS:
            # the one page 1 and the roadmap lead with (`best_effect`) first, then the significant
            # ones (in the check's order); the whole table in appendix A
            best = best_effect(finding)
            effects = sorted(effects, key=lambda e: (e is not best, not (e.significant and e.improves)))[:BODY_EFFECTS]
            parts.append(_effects_html(effects, lang, more=_t("effects_more", lang, shown=BODY_EFFECTS,
                                                               total=len(finding.effects), n=number)))
        else:
            parts.append(_effects_html(effects, lang))
    if figures:
        png = figure_png(finding, lang=lang)
        if png:
            parts.append(f'<figure class="rd-figure"><img alt="{_e(_t("figure", lang))}: '
                         f'{_e(title)}" src="data:image/png;base64,{png}"/></figure>')
    if finding.evidence:
        parts.append(f'<h3>{_e(_t("evidence", lang))}</h3>')
        plan = report_tables(finding, lang) if number is not None else body_tables(finding, lang)
        hidden = [ev for ev, body in plan if body.table is None]
        for _ev, body in plan:
            ref = _t("see_appendix", lang, n=number) if number is not None else ""
            if body.table is not None:
                parts.append(_table_block(body.table, lang, notes=[ref] if body.in_appendix and ref else []))
        n_ref = number if number is not None else ""
        if len(hidden) == 1:
            parts.append(f'<p class="rd-note">{_e(_t("in_appendix", lang, title=hidden[0].title, n=n_ref, rows=len(hidden[0].rows)))}</p>')
        elif hidden:  # one line for the tables the appendix prints in full
            tables = "; ".join(_t("table_rows", lang, title=ev.title, rows=len(ev.rows)) for ev in hidden)
            parts.append(f'<p class="rd-note">{_e(_t("in_appendix_many", lang, n=n_ref, tables=tables))}</p>')
    if number is None:  # a section on its own (no roadmap, no appendix): what to do stands here
        parts.append(_recs_html(finding, remediation, lang, "h3"))
    elif finding.recommendations or (remediation and finding.status in ("warn", "fail")):
        # one roadmap instead of a list per check: the check's own list is in appendix A
        parts.append(f'<p class="rd-note"><a href="#app-{_e(finding.check_id)}">'
                     f'{_e(_t("recs_in_appendix", lang, n=number))}</a></p>')
    parts.append("</section>")
    return "".join(parts)


def _recs_html(finding: Any, remediation: str, lang: str, heading: str) -> str:
    """A check's "what to do": its recommendations and the checklist's general remediation."""
    parts = [f'<{heading}>{_e(_t("recommendations", lang))}</{heading}>']
    if finding.recommendations:
        items = "".join(f"<li>{_e(r)}</li>" for r in finding.recommendations)
        parts.append(f'<ul class="rd-recs">{items}</ul>')
    else:
        parts.append(f"<p>{_e(_t('none', lang))}</p>")
    if remediation and finding.status in ("warn", "fail"):
        parts.append(f'<p class="rd-remediation"><b>{_e(_t("remediation", lang))}:</b> {_e(remediation)}</p>')
    return "".join(parts)


# ---------------------------------------------------------------------------
# appendix


def profiles_frame(policy: Any, lang: str = "en") -> Any:
    """One row per profile: query type, channel text modes, vector fields and k, filter, ..."""
    rows = []
    for p in policy.profiles.values():
        vqs = p.vector_queries
        rows.append([
            p.name,
            p.query_type,
            p.keyword_text,
            "; ".join(v.text for v in vqs) or "–",
            p.semantic_text if p.query_type == "semantic" else "–",
            "; ".join(", ".join(v.fields) for v in vqs) or "–",
            "; ".join(str(v.k) for v in vqs) or "–",
            p.filter or "–",
            p.scoring_profile or "–",
            p.top,
        ])
    cols = [_t(k, lang) for k in ("col_profile", "col_query_type", "col_keyword_text",
                                   "col_vector_text", "col_semantic_text", "col_vector_fields",
                                   "col_k", "col_filter", "col_scoring_profile", "col_top")]
    return _frame(rows, cols)


def routes_frame(policy: Any, lang: str = "en") -> Any:
    """The policy's routing table: intent -> profile (the default route last)."""
    rows = [[intent, profile] for intent, profile in policy.routes.items()]
    if policy.default_route:
        rows.append([_t("default_route", lang), policy.default_route])
    return _frame(rows, [_t("col_intent", lang), _t("col_profile", lang)])


def goldset_frames(ctx: Any, lang: str = "en", policy: Any = None) -> tuple[Any, Any]:
    """Goldset metrics of the policy under audit, per routed profile and per intent.

    Uses ``ctx.run_gold(policy).evaluation(ctx.goldset)`` (cached by the audit's
    goldset check). Each frame has a first row for all questions.
    """
    policy = policy if policy is not None else ctx.policy
    run = ctx.run_gold(policy)
    evaluation = run.evaluation(ctx.goldset)
    by_profile: dict[str, list[str]] = defaultdict(list)
    by_intent: dict[str, list[str]] = defaultdict(list)
    for q in run.queries:
        by_profile[q.profile].append(q.case.id)
        by_intent[q.intent or "unknown"].append(q.case.id)
    measures = list(evaluation.measures)

    def table(groups: Mapping[str, list[str]], label: str) -> Any:
        rows = [[_t("all", lang), len(evaluation), *[evaluation.aggregate.get(m) for m in measures]]]
        for name in sorted(groups):
            sub = evaluation.subset(groups[name])
            rows.append([name, len(sub), *[sub.aggregate.get(m) if len(sub) else None
                                           for m in measures]])
        return _frame(rows, [label, _t("col_questions", lang), *measures])

    return (table(by_profile, _t("col_profile", lang)), table(by_intent, _t("col_intent", lang)))


def versions_frame(lang: str = "en", packages: Sequence[str] = KEY_PACKAGES) -> Any:
    """Python, ragdiag and key package versions."""
    from importlib.metadata import PackageNotFoundError, version

    rows = [["python", platform.python_version()], ["ragdiag", __version__]]
    for name in packages:
        try:
            rows.append([name, version(name)])
        except PackageNotFoundError:
            rows.append([name, _t("not_installed", lang)])
    return _frame(rows, [_t("col_package", lang), _t("col_version", lang)])


def _failures_frame(failures: Iterable[Any], lang: str) -> Any:
    counts = Counter((getattr(f, "kind", "error"), str(getattr(f, "reason", f))) for f in failures)
    rows = [[kind, reason, n] for (kind, reason), n in counts.most_common()]
    return _frame(rows, [_t("col_kind", lang), _t("col_reason", lang), _t("col_count", lang)])


def _goldset_html(frame: Any, lang: str) -> str:
    keys = [str(c) for c in frame.columns]
    shown = frame.copy()
    shown.columns = [metric_label(c, lang) for c in keys]
    return _frame_html(shown, lang, keys=keys)


def _meta_rows(result: Any, lang: str, *, client: str, system: str, name: str, source: str,
               generated: str | None) -> list[tuple[str, Any]]:
    meta = result.meta
    cfg = meta.get("config") or {}
    target = meta.get("target") or ""
    kind = (cfg.get("target") or {}).get("kind")
    if kind and target:
        target = f"{target} ({kind})"
    server = (meta.get("target_info") or {}).get("server_version")
    if server and target:  # a database target: what the server said it is (SELECT version())
        target = f"{target}; {server}"
    rows = [
        ("client", client or cfg.get("client") or "–"),
        ("system", system or cfg.get("system") or "–"),
        ("audit", name or cfg.get("name") or "–"),
        ("audit_date", _date(meta.get("date"))),
        ("report_date", _date(generated or _now_iso())),
        ("version", meta.get("ragdiag_version") or __version__),
        ("target", target or "–"),
        ("policy", meta.get("policy") or "–"),
    ]
    compare = cfg.get("compare_profiles")
    if compare:
        rows.append(("compare_policy", Path(str(compare)).stem))
    rows.append(("findings_source", _t("source_json", lang, path=Path(source).name) if source
                 else _t("source_live", lang)))
    rows.append(("language", lang))
    return rows


def render_appendix(ctx: Any, result: Any, lang: str = "en", *, policy: Any = None,
                    specs: Mapping[str, Any] | None = None, generated: str | None = None,
                    client: str = "", system: str = "", name: str = "", source: str = "") -> str:
    """A. the full evidence tables and key figures per check, B. the policy's profiles and
    routes, C. goldset metrics, D. how each check decides, E. what was not run and why,
    F. the audit's details, inputs and versions.

    `ctx` is the `AuditContext` (None when the report was rendered from saved
    findings: goldset metrics and runner failures are then not available).
    """
    _check_lang(lang)
    specs = specs or {}
    policy = policy if policy is not None else getattr(ctx, "policy", None)
    parts = [f'<section class="rd-appendix"><h2>{_e(_t("appendix", lang))}</h2>']

    def title(f: Any) -> str:
        return _check_title(f, specs.get(f.check_id), lang)

    # A. full evidence tables and key figures
    parts.append(f"<h3>A. {_e(_t('app_evidence', lang))}</h3>")
    parts.append(f'<p class="rd-note">{_e(_t("app_evidence_intro", lang, max=APPENDIX_MAX_ROWS))}</p>')
    wide: list[str] = []  # landscape tables, printed together at the end (no half-empty page before each)
    for n, f in enumerate(result.findings, start=1):
        full = [ev for ev, body in report_tables(f, lang) if body.in_appendix]
        spec = specs.get(f.check_id)
        remediation = spec.text("remediation", lang) if spec is not None else ""
        has_recs = bool(f.recommendations) or bool(remediation and f.status in ("warn", "fail"))
        if not full and not f.metrics and not has_recs and len(f.effects) <= BODY_EFFECTS:
            continue
        parts.append(f'<div class="rd-app-check"><h4 id="app-{_e(f.check_id)}">A.{n} {_e(title(f))}</h4>')
        if has_recs:
            parts.append(_recs_html(f, remediation, lang, "h5"))
        if len(f.effects) > BODY_EFFECTS:  # the section printed only the first few
            parts.append(_effects_html(f.effects, lang).replace("<h3>", "<h5>").replace("</h3>", "</h5>"))
        for ev in full:
            t = Table.of(ev).collapsed(lang)
            notes = ([_t("truncated", lang, shown=APPENDIX_MAX_ROWS, total=len(t.rows))]
                     if len(t.rows) > APPENDIX_MAX_ROWS else [])
            if is_landscape(t):
                parts.append(f'<p class="rd-note">{_e(_t("in_wide", lang, title=t.title, rows=len(t.rows)))}</p>')
                wide.append(_table_block(t, lang, title=f"A.{n} {title(f)}: {t.title}", notes=notes,
                                         max_rows=APPENDIX_MAX_ROWS, heading="h4", landscape=True))
                continue
            parts.append(_table_block(t, lang, notes=notes, fold=True, max_rows=APPENDIX_MAX_ROWS, heading="h5"))
        if f.metrics:
            parts.append(f"<h5>{_e(_t('key_figures', lang))}</h5>{_metrics_html(f.metrics, lang, specs.get(f.check_id))}")
        parts.append("</div>")

    # B. profiles and routes
    if policy is None:
        parts.append(f"<h3>B. {_e(_t('profiles', lang, name='–'))}</h3><p>{_e(_t('no_policy', lang))}</p>")
    else:
        parts.append(f"<h3>B. {_e(_t('profiles', lang, name=policy.name))}</h3>")
        parts.append(_frame_html(profiles_frame(policy, lang), lang))
        parts.append(f"<h4>{_e(_t('routes', lang, name=policy.name))}</h4>")
        parts.append(_frame_html(routes_frame(policy, lang), lang))

    # C. goldset metrics
    parts.append(f"<h3>C. {_e(_t('gold_metrics', lang, name=getattr(policy, 'name', '–')))}</h3>")
    if ctx is None:
        parts.append(f"<p>{_e(_t('gold_from_json', lang))}</p>")
    elif ctx.goldset is None or policy is None:
        parts.append(f"<p>{_e(_t('no_goldset', lang) if ctx.goldset is None else _t('no_policy', lang))}</p>")
    else:
        try:
            per_profile, per_intent = goldset_frames(ctx, lang, policy)
        except RagdiagError as exc:
            parts.append(f"<p>{_e(_t('gold_failed', lang, error=exc))}</p>")
        else:
            parts.append(f"<h4>{_e(_t('gold_per_profile', lang))}</h4>{_goldset_html(per_profile, lang)}")
            parts.append(f"<h4>{_e(_t('gold_per_intent', lang))}</h4>{_goldset_html(per_intent, lang)}")

    # D. method
    parts.append(f"<h3>D. {_e(_t('app_method', lang))}</h3>")
    parts.append(f'<p>{_e(_t("intro", lang))}</p>')
    for n, f in enumerate(result.findings, start=1):
        spec = specs.get(f.check_id)
        if spec is None:
            continue
        parts.append(f'<div class="rd-method"><h4>D.{n} {_e(title(f))} <code>{_e(f.check_id)}</code></h4>')
        rule = spec.render_rules(lang)
        if rule:
            parts.append(f'<p class="rd-rule"><b>{_e(_t("rule", lang))}:</b> {_e(rule)}</p>')
        if spec.references:
            refs = "".join(f"<li>{_e(r)}</li>" for r in spec.references)
            parts.append(f'<p class="rd-refs-head">{_e(_t("references", lang))}:</p><ul class="rd-refs">{refs}</ul>')
        parts.append("</div>")

    # E. what was not run
    parts.append(f"<h3>E. {_e(_t('not_run', lang))}</h3>")
    skipped = [f for f in result.findings if f.status == "skipped"]
    errored = [f for f in result.findings if f.status == "error"]
    incomplete = [f for f in result.findings if f.incomplete]
    if not (skipped or errored or incomplete):
        parts.append(f"<p>{_e(_t('all_ran', lang))}</p>")
    if skipped:
        frame = _frame([[title(f), f.check_id, f.skipped_reason or f.headline] for f in skipped],
                       [_t("col_check", lang), "id", _t("col_reason", lang)])
        parts.append(f"<h4>{_e(_t('skipped_checks', lang))}</h4>{_frame_html(frame, lang)}")
    if errored:
        frame = _frame([[title(f), f.check_id, f.headline] for f in errored],
                       [_t("col_check", lang), "id", _t("col_reason", lang)])
        parts.append(f"<h4>{_e(_t('errored_checks', lang))}</h4>{_frame_html(frame, lang)}")
    if incomplete:
        frame = _frame([[title(f), f.check_id, dict(f.incomplete)] for f in incomplete],
                       [_t("col_check", lang), "id", _t("col_counts", lang)])
        parts.append(f"<h4>{_e(_t('incomplete_checks', lang))}</h4>{_frame_html(frame, lang)}")
    stats = result.meta.get("runner") or {}
    if ctx is not None:
        stats = ctx.runner.stats.to_dict()
    if stats:
        parts.append("<p>" + _e(_t(
            "runner_stats", lang, sent=stats.get("sent", 0),
            hits=stats.get("memory_hits", 0) + stats.get("disk_hits", 0),
            failed=stats.get("failed", 0), over=stats.get("over_budget", 0))) + "</p>")
    failures = list(ctx.runner.stats.failures) if ctx is not None else []
    parts.append(f"<h4>{_e(_t('runner_failures', lang))}</h4>")
    if failures:
        parts.append(_frame_html(_failures_frame(failures, lang), lang))
    else:
        parts.append(f"<p>{_e(_t('no_failures', lang))}</p>")

    # F. audit details, inputs and versions
    parts.append(f"<h3>F. {_e(_t('audit_details', lang))}</h3>")
    meta_rows = _meta_rows(result, lang, client=client, system=system, name=name, source=source,
                           generated=generated)
    body = "".join(f"<tr><th>{_e(_t(k, lang))}</th><td>{_e(v)}</td></tr>" for k, v in meta_rows)
    parts.append(f'<table class="rd-meta">{body}</table>')
    cfg = result.meta.get("config") or {}
    inputs = [[k, Path(str(v)).name if isinstance(v, str) and ("/" in v or "\\" in v) else v]
              for k, v in cfg.items() if k in ("config", "profiles", "compare_profiles", "goldset",
                                               "query_log", "client_code") and v]
    if inputs:
        parts.append(f"<h4>{_e(_t('inputs', lang))}</h4>")
        parts.append(_frame_html(_frame(inputs, [_t("col_input", lang), _t("value", lang)]), lang))
    parts.append(f"<h4>{_e(_t('versions', lang))}</h4>")
    versions = versions_frame(lang)
    parts.append(table_html(Table([str(c) for c in versions.columns], ["package", "version"],
                                  [list(r) for r in versions.itertuples(index=False, name=None)]),
                            lang, fold=True, fold_min_rows=6))
    parts.append(f'<p class="rd-note">{_e(_t("effects_field", lang))}</p>')
    parts.append(f'<p class="rd-note">{_e(_t("generated", lang, date=_date(generated or _now_iso()), version=__version__))}</p>')
    if wide:  # G. wide tables: one landscape stretch at the very end
        parts.append(f'<div class="rd-landscape"><h3>G. {_e(_t("app_wide", lang))}</h3>'
                     + "".join(wide) + "</div>")
    parts.append("</section>")
    return "".join(parts)

# ---- the limits of the audit (page 2) ----

def limits(result: Any, lang: str = "en", specs: Mapping[str, Any] | None = None) -> list[str]:
    """The audit's limits in sentences: what was not measured, the judged share of the top 10,
    the stand-ins used, the requests that failed."""
    from ragdiag.report.tables import fmt_number

    specs = specs or {}
    out = []
    unmeasured = [f for f in result.findings if f.status in ("skipped", "error")]
    if unmeasured:
        out.append(_t("limit_not_measured", lang, items=", ".join(
            _check_title(f, specs.get(f.check_id), lang) for f in unmeasured)))
    else:
        out.append(_t("limit_all_measured", lang))
    gold = next((f for f in result.findings if f.check_id == "goldset"), None)
    judged = (gold.metrics or {}).get("judged@10") if gold is not None else None
    if isinstance(judged, int | float):
        out.append(_t("limit_judged", lang, share=fmt_number(judged, lang, share=True)))
    elif gold is None or gold.status == "skipped":
        out.append(_t("limit_no_goldset", lang))
    kind = ((result.meta.get("config") or {}).get("target") or {}).get("kind")
    rerank = next((f for f in result.findings if f.check_id == "reranker_scores"), None)
    if kind in ("sample", "local") and rerank is not None and rerank.status != "skipped":
        out.append(_t("limit_stand_in", lang))
    stats = result.meta.get("runner") or {}
    if stats.get("failed") or stats.get("over_budget"):
        out.append(_t("limit_failed", lang, sent=stats.get("sent", 0), failed=stats.get("failed", 0),
                      over=stats.get("over_budget", 0)))
    else:
        out.append(_t("limit_no_failures", lang))
    return out


def render_limits(result: Any, lang: str = "en", specs: Mapping[str, Any] | None = None) -> str:
    items = "".join(f"<li>{_e(s)}</li>" for s in limits(result, lang, specs))
    return f'<div class="rd-limits"><h3>{_e(_t("limits", lang))}</h3><ul class="rd-limits-list">{items}</ul></div>'
