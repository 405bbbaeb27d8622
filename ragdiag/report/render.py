"""The report's sections as HTML: title page, summary, one check (figure, evidence), appendix.

The renderers are pure: they turn findings, check specs and an audit context
into HTML strings, so they are unit-testable without a kernel.
"""

from __future__ import annotations

import base64
import io
import platform
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import RagdiagError
from ragdiag.report.format import _badge, _date, _e, _fmt, _frame, _frame_html, _now_iso
from ragdiag.report.texts import _check_lang, _t

MAX_EVIDENCE_ROWS = 25
KEY_PACKAGES: tuple[str, ...] = (
    "numpy", "pandas", "scipy", "faiss-cpu", "bm25s", "sentence-transformers", "ir-measures",
    "azure-search-documents", "matplotlib", "papermill", "nbconvert", "weasyprint",
)


# ---------------------------------------------------------------------------
# title page and summary


def render_title(result: Any, lang: str = "en", *, client: str = "", system: str = "",
                 name: str = "", source: str = "", generated: str | None = None) -> str:
    """The title page: client, system, dates, ragdiag version, target and policy names."""
    meta = result.meta
    cfg = meta.get("config") or {}
    target = meta.get("target") or ""
    kind = (cfg.get("target") or {}).get("kind")
    if kind and target:
        target = f"{target} ({kind})"
    compare = cfg.get("compare_profiles")
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
    if compare:
        rows.append(("compare_policy", Path(str(compare)).stem))
    rows.append(("findings_source", _t("source_json", lang, path=Path(source).name) if source
                 else _t("source_live", lang)))
    rows.append(("language", lang))
    body = "".join(f"<tr><th>{_e(_t(k, lang))}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    heading = client or cfg.get("client") or ""
    sub = system or cfg.get("system") or ""
    return (
        '<section class="rd-title-page">'
        f'<h1 class="rd-doc-title">{_e(_t("report_title", lang))}</h1>'
        + (f'<p class="rd-subtitle">{_e(heading)}{" – " + _e(sub) if sub else ""}</p>' if heading or sub else "")
        + f'<table class="rd-meta">{body}</table>'
        f'<p class="rd-intro">{_e(_t("intro", lang))}</p>'
        "</section>"
    )


def _check_title(finding: Any, spec: Any, lang: str) -> str:
    if spec is not None:
        return spec.text("title", lang)
    return finding.title or finding.check_id


def _top_recommendation(finding: Any) -> str:
    return finding.recommendations[0] if finding.recommendations else ""


def render_summary(result: Any, lang: str = "en", specs: Mapping[str, Any] | None = None) -> str:
    """The executive summary: every check with its status badge, headline, top recommendation."""
    specs = specs or {}
    counts = result.status_counts()
    badges = " ".join(f"{_badge(s)}&nbsp;{n}" for s, n in counts.items() if n)
    rows = []
    for i, f in enumerate(result.findings, start=1):
        title = _check_title(f, specs.get(f.check_id), lang)
        rec = _top_recommendation(f)
        rows.append(
            f"<tr><td>{_badge(f.status)}</td>"
            f'<td><a href="#check-{_e(f.check_id)}">{i}. {_e(title)}</a></td>'
            f"<td>{_e(f.headline)}</td><td>{_e(rec) if rec else '–'}</td></tr>")
    head = "".join(f"<th>{_e(_t(k, lang))}</th>" for k in
                   ("col_status", "col_check", "col_headline", "col_top_rec"))
    return (
        '<section class="rd-summary">'
        f'<h2>{_e(_t("summary", lang))}</h2>'
        f'<p>{_e(_t("counts", lang, n=len(result.findings), worst=result.worst().upper()))} {badges}</p>'
        f'<table class="rd-table rd-summary-table"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
        "</section>"
    )


# ---------------------------------------------------------------------------
# one check


def evidence_frame(evidence: Any, max_rows: int = MAX_EVIDENCE_ROWS) -> tuple[Any, int]:
    """The evidence as a DataFrame cut to `max_rows`, and its full row count."""
    frame = evidence.to_dataframe()
    return frame.head(max_rows), len(frame)


def render_evidence(evidence: Any, lang: str = "en", *, max_rows: int = MAX_EVIDENCE_ROWS) -> str:
    """One evidence table (truncated, with a note saying so)."""
    frame, total = evidence_frame(evidence, max_rows)
    parts = [f'<div class="rd-evidence"><h4>{_e(evidence.title)}</h4>']
    if evidence.note:
        parts.append(f'<p class="rd-note">{_e(evidence.note)}</p>')
    if total == 0:
        parts.append(f'<p class="rd-note">{_e(_t("no_rows", lang))}</p>')
    else:
        note = _t("truncated", lang, shown=max_rows, total=total) if total > max_rows else ""
        parts.append(_frame_html(frame, lang, note=note))
    parts.append("</div>")
    return "".join(parts)


def figure_png(finding: Any, *, dpi: int = 150, lang: str = "en") -> str | None:
    """The finding's figure (drawn by its check, `ragdiag.checks.figures.figure`) as base64 PNG,
    or None when the finding has nothing to draw. Errors propagate: a figure that cannot be
    drawn from its evidence is a bug to see, not a gap in the client's report."""
    from ragdiag.checks.figures import figure

    fig = figure(finding, lang)
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _metrics_html(metrics: Mapping[str, Any], lang: str) -> str:
    """Metrics as a compact two-pair-per-row table."""
    items = list(metrics.items())
    half = (len(items) + 1) // 2
    left, right = items[:half], items[half:]
    def pair(k: str, v: Any) -> str:
        num = isinstance(v, int | float) and not isinstance(v, bool)
        cls = ' class="rd-num"' if num else ""
        return f"<td>{_e(k)}</td><td{cls}>{_e(_fmt(v, lang))}</td>"

    rows = []
    for i, (k, v) in enumerate(left):
        cells = pair(k, v) + (pair(*right[i]) if i < len(right) else "<td></td><td></td>")
        rows.append(f"<tr>{cells}</tr>")
    head = (f"<th>{_e(_t('metric', lang))}</th><th>{_e(_t('value', lang))}</th>") * 2
    return (f'<table class="rd-table rd-metrics"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def render_check(finding: Any, spec: Any, lang: str = "en", *, number: int | None = None,
                 total: int | None = None, figures: bool = True,
                 max_rows: int = MAX_EVIDENCE_ROWS) -> str:
    """One check's section: texts from the spec, the finding, figure, evidence, fixes."""
    _check_lang(lang)
    title = _check_title(finding, spec, lang)
    question = spec.text("question", lang) if spec is not None else finding.question
    why = spec.text("why", lang) if spec is not None else ""
    rule = spec.render_rules(lang) if spec is not None else ""
    remediation = spec.text("remediation", lang) if spec is not None else ""
    prefix = f"{number}. " if number is not None else ""
    parts = [f'<section class="rd-check" id="check-{_e(finding.check_id)}">']
    if number is not None and total is not None:
        parts.append(f'<p class="rd-kicker">{_e(_t("check_of", lang, n=number, total=total))}</p>')
    parts.append(f"<h2>{_e(prefix + title)} {_badge(finding.status)}</h2>")
    parts.append(f'<p class="rd-id"><code>{_e(finding.check_id)}</code></p>')
    if question:
        parts.append(f'<p class="rd-question"><b>{_e(_t("question", lang))}:</b> <i>{_e(question)}</i></p>')
    if why:
        parts.append(f'<h3>{_e(_t("why", lang))}</h3><p>{_e(why)}</p>')
    if rule:
        parts.append(f'<h3>{_e(_t("rule", lang))}</h3><p class="rd-rule">{_e(rule)}</p>')
    parts.append(f'<h3>{_e(_t("finding", lang))}</h3>'
                 f'<p class="rd-headline">{_badge(finding.status)} {_e(finding.headline)}</p>')
    if finding.skipped_reason:
        parts.append(f'<p><b>{_e(_t("skipped_reason", lang))}:</b> {_e(finding.skipped_reason)}</p>')
    if finding.incomplete:
        counts = ", ".join(f"{k} = {v}" for k, v in finding.incomplete.items())
        parts.append(f'<p class="rd-incomplete"><b>{_e(_t("incomplete", lang))}:</b> '
                     f'{_e(_t("incomplete_text", lang, counts=counts))}</p>')
    if finding.metrics:
        parts.append(f'<h3>{_e(_t("metrics", lang))}</h3>{_metrics_html(finding.metrics, lang)}')
    if figures:
        png = figure_png(finding, lang=lang)
        if png:
            parts.append(f'<figure class="rd-figure"><img alt="{_e(_t("figure", lang))}: '
                         f'{_e(title)}" src="data:image/png;base64,{png}"/></figure>')
    if finding.evidence:
        parts.append(f'<h3>{_e(_t("evidence", lang))}</h3>')
        parts.extend(render_evidence(ev, lang, max_rows=max_rows) for ev in finding.evidence)
    parts.append(f'<h3>{_e(_t("recommendations", lang))}</h3>')
    if finding.recommendations:
        items = "".join(f"<li>{_e(r)}</li>" for r in finding.recommendations)
        parts.append(f'<ul class="rd-recs">{items}</ul>')
    else:
        parts.append(f"<p>{_e(_t('none', lang))}</p>")
    if remediation and finding.status in ("warn", "fail"):
        parts.append(f'<h4>{_e(_t("remediation", lang))}</h4><p class="rd-remediation">{_e(remediation)}</p>')
    if spec is not None and spec.references:
        refs = "".join(f"<li>{_e(r)}</li>" for r in spec.references)
        parts.append(f'<h4>{_e(_t("references", lang))}</h4><ul class="rd-refs">{refs}</ul>')
    parts.append("</section>")
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


def render_appendix(ctx: Any, result: Any, lang: str = "en", *, policy: Any = None,
                    specs: Mapping[str, Any] | None = None, generated: str | None = None) -> str:
    """Profiles, goldset metrics, what was not run and why, versions.

    `ctx` is the `AuditContext` (None when the report was rendered from saved
    findings: goldset metrics and runner failures are then not available).
    """
    _check_lang(lang)
    specs = specs or {}
    policy = policy if policy is not None else getattr(ctx, "policy", None)
    parts = [f'<section class="rd-appendix"><h2>{_e(_t("appendix", lang))}</h2>']

    # A. profiles and routes
    if policy is None:
        parts.append(f"<h3>{_e(_t('profiles', lang, name='–'))}</h3><p>{_e(_t('no_policy', lang))}</p>")
    else:
        parts.append(f"<h3>A. {_e(_t('profiles', lang, name=policy.name))}</h3>")
        parts.append(_frame_html(profiles_frame(policy, lang), lang))
        parts.append(f"<h4>{_e(_t('routes', lang, name=policy.name))}</h4>")
        parts.append(_frame_html(routes_frame(policy, lang), lang))

    # B. goldset metrics
    parts.append(f"<h3>B. {_e(_t('gold_metrics', lang, name=getattr(policy, 'name', '–')))}</h3>")
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
            parts.append(f"<h4>{_e(_t('gold_per_profile', lang))}</h4>{_frame_html(per_profile, lang)}")
            parts.append(f"<h4>{_e(_t('gold_per_intent', lang))}</h4>{_frame_html(per_intent, lang)}")

    # C. what was not run
    parts.append(f"<h3>C. {_e(_t('not_run', lang))}</h3>")
    skipped = [f for f in result.findings if f.status == "skipped"]
    errored = [f for f in result.findings if f.status == "error"]
    incomplete = [f for f in result.findings if f.incomplete]
    if not (skipped or errored or incomplete):
        parts.append(f"<p>{_e(_t('all_ran', lang))}</p>")

    def title(f: Any) -> str:
        return _check_title(f, specs.get(f.check_id), lang)

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

    # D. inputs and versions
    cfg = result.meta.get("config") or {}
    inputs = [[k, Path(str(v)).name if isinstance(v, str) and ("/" in v or "\\" in v) else v]
              for k, v in cfg.items() if k in ("config", "profiles", "compare_profiles", "goldset",
                                               "query_log", "client_code") and v]
    parts.append(f"<h3>D. {_e(_t('versions', lang))}</h3>")
    if inputs:
        parts.append(f"<h4>{_e(_t('inputs', lang))}</h4>")
        parts.append(_frame_html(_frame(inputs, [_t("col_input", lang), _t("value", lang)]), lang))
    parts.append(_frame_html(versions_frame(lang), lang))
    parts.append(f'<p class="rd-note">{_e(_t("generated", lang, date=_date(generated or _now_iso()), version=__version__))}</p>')
    parts.append("</section>")
    return "".join(parts)
