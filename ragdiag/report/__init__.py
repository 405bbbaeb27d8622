"""The audit report: a papermill notebook rendered to HTML and PDF.

`build_report` runs the packaged template ``template/audit_report.ipynb`` with papermill in the
current interpreter's kernel, keeps the executed notebook, exports it to HTML
with nbconvert (code hidden) and prints that HTML to PDF with WeasyPrint (or
Debian's chromium). Before anything is written, every output is scanned for the
values of secret-looking environment variables.

The notebook's cells are short calls into this module: `report_context` runs the
audit (or loads saved findings) and the ``render_*`` functions are pure: they
turn findings, check specs and an audit context into HTML strings, so they are
unit-testable without a kernel. Fixed texts exist in English and German; check
texts come from the checklist specs.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.errors import ConfigError, MissingDependencyError, NotebookRunError, RagdiagError

__all__ = [
    "LANGUAGES",
    "MAX_EVIDENCE_ROWS",
    "ReportPaths",
    "ReportContext",
    "SecretLeakError",
    "build_report",
    "template_path",
    "report_context",
    "render_title",
    "render_summary",
    "render_check",
    "render_appendix",
    "evidence_frame",
    "profiles_frame",
    "routes_frame",
    "goldset_frames",
    "versions_frame",
    "show",
    "secret_values",
    "find_secrets",
    "assert_no_secrets",
]

LANGUAGES: tuple[str, ...] = ("en", "de")
MAX_EVIDENCE_ROWS = 25
MAX_CELL_CHARS = 400
PDF_ENGINES: tuple[str, ...] = ("weasyprint", "chromium")
KEY_PACKAGES: tuple[str, ...] = (
    "numpy", "pandas", "scipy", "faiss-cpu", "bm25s", "sentence-transformers", "ir-measures",
    "azure-search-documents", "matplotlib", "papermill", "nbconvert", "weasyprint",
)
_STATUS_COLOURS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "skipped": "#6e7781",
                   "error": "#8250df"}

# ---------------------------------------------------------------------------
# fixed texts (every key in both languages; a test keeps them in step)

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "report_title": "Retrieval audit report",
        "intro": ("This report checks the retrieval half of a RAG system against the ragdiag "
                  "checklist. Each section states the question a check answers, why it matters, "
                  "the rule that sets its status, and the evidence behind the finding."),
        "client": "Client",
        "system": "System",
        "audit": "Audit",
        "audit_date": "Audit date",
        "report_date": "Report generated",
        "version": "ragdiag version",
        "target": "Search target",
        "policy": "Policy under audit",
        "compare_policy": "Comparison policy",
        "findings_source": "Findings",
        "source_live": "computed in this run",
        "source_json": "loaded from {path}",
        "language": "Language",
        "summary": "Executive summary",
        "counts": "{n} checks; worst status {worst}.",
        "col_status": "Status",
        "col_check": "Check",
        "col_headline": "Finding",
        "col_top_rec": "Top recommendation",
        "check_of": "Check {n} of {total}",
        "question": "Question",
        "why": "Why it matters",
        "rule": "Status rule",
        "finding": "Finding",
        "skipped_reason": "Not run because",
        "metrics": "Metrics",
        "metric": "metric",
        "value": "value",
        "figure": "Figure",
        "figure_failed": "The figure could not be drawn: {error}",
        "evidence": "Evidence",
        "truncated": ("Showing the first {shown} of {total} rows; the complete table is in the "
                      "audit's JSON output (ragdiag audit --json)."),
        "no_rows": "(no rows)",
        "recommendations": "Recommendations",
        "none": "None.",
        "remediation": "General remediation (checklist)",
        "incomplete": "Incomplete",
        "incomplete_text": "this check did not see everything it asked for: {counts}.",
        "references": "References",
        "appendix": "Appendix",
        "profiles": "Query profiles of policy '{name}'",
        "routes": "Routes of policy '{name}'",
        "no_policy": "No policy (profiles file) was configured.",
        "col_profile": "profile",
        "col_query_type": "query type",
        "col_keyword_text": "keyword text",
        "col_vector_text": "vector text",
        "col_semantic_text": "semantic text",
        "col_vector_fields": "vector fields",
        "col_k": "k",
        "col_filter": "filter",
        "col_scoring_profile": "scoring profile",
        "col_top": "top",
        "col_intent": "intent",
        "col_questions": "questions",
        "default_route": "(default)",
        "gold_metrics": "Goldset metrics of policy '{name}'",
        "gold_per_profile": "Per profile (the profile each question was routed to)",
        "gold_per_intent": "Per intent",
        "all": "all",
        "no_goldset": "No goldset was configured, so no retrieval metrics were measured.",
        "gold_from_json": ("The report was rendered from saved findings: goldset metrics are "
                           "computed only when the audit runs."),
        "gold_failed": "Goldset metrics could not be computed: {error}",
        "not_run": "What was not run, and why",
        "skipped_checks": "Skipped checks",
        "errored_checks": "Checks that could not finish",
        "incomplete_checks": "Checks with incomplete data",
        "col_reason": "reason",
        "col_counts": "counts",
        "col_kind": "kind",
        "col_count": "requests",
        "all_ran": "Every check ran to completion.",
        "runner_failures": "Failed search requests",
        "no_failures": "No search request failed.",
        "runner_stats": ("Search requests: {sent} sent to the target, {hits} answered from the "
                         "cache, {failed} failed, {over} refused by the request budget."),
        "versions": "Versions",
        "col_package": "package",
        "col_version": "version",
        "not_installed": "not installed",
        "inputs": "Inputs",
        "col_input": "input",
        "generated": "Report generated {date} with ragdiag {version}.",
        "yes": "yes",
        "no": "no",
    },
    "de": {
        "report_title": "Retrieval-Audit-Bericht",
        "intro": ("Dieser Bericht prüft die Retrieval-Hälfte eines RAG-Systems anhand der "
                  "ragdiag-Checkliste. Jeder Abschnitt nennt die Frage, die eine Prüfung "
                  "beantwortet, warum sie wichtig ist, die Regel, die ihren Status bestimmt, und "
                  "die Belege hinter dem Befund."),
        "client": "Kunde",
        "system": "System",
        "audit": "Audit",
        "audit_date": "Audit-Datum",
        "report_date": "Bericht erstellt",
        "version": "ragdiag-Version",
        "target": "Suchziel",
        "policy": "Geprüfte Policy",
        "compare_policy": "Vergleichs-Policy",
        "findings_source": "Befunde",
        "source_live": "in diesem Lauf ermittelt",
        "source_json": "geladen aus {path}",
        "language": "Sprache",
        "summary": "Zusammenfassung",
        "counts": "{n} Prüfungen; schlechtester Status {worst}.",
        "col_status": "Status",
        "col_check": "Prüfung",
        "col_headline": "Befund",
        "col_top_rec": "Wichtigste Empfehlung",
        "check_of": "Prüfung {n} von {total}",
        "question": "Frage",
        "why": "Warum es wichtig ist",
        "rule": "Statusregel",
        "finding": "Befund",
        "skipped_reason": "Nicht ausgeführt, weil",
        "metrics": "Kennzahlen",
        "metric": "Kennzahl",
        "value": "Wert",
        "figure": "Abbildung",
        "figure_failed": "Die Abbildung konnte nicht erstellt werden: {error}",
        "evidence": "Belege",
        "truncated": ("Gezeigt werden die ersten {shown} von {total} Zeilen; die vollständige "
                      "Tabelle steht in der JSON-Ausgabe des Audits (ragdiag audit --json)."),
        "no_rows": "(keine Zeilen)",
        "recommendations": "Empfehlungen",
        "none": "Keine.",
        "remediation": "Allgemeine Abhilfe (Checkliste)",
        "incomplete": "Unvollständig",
        "incomplete_text": "diese Prüfung hat nicht alles gesehen, was sie angefragt hat: {counts}.",
        "references": "Referenzen",
        "appendix": "Anhang",
        "profiles": "Abfrageprofile der Policy '{name}'",
        "routes": "Routen der Policy '{name}'",
        "no_policy": "Es wurde keine Policy (Profildatei) konfiguriert.",
        "col_profile": "Profil",
        "col_query_type": "Abfragetyp",
        "col_keyword_text": "Stichwort-Text",
        "col_vector_text": "Vektor-Text",
        "col_semantic_text": "Semantik-Text",
        "col_vector_fields": "Vektorfelder",
        "col_k": "k",
        "col_filter": "Filter",
        "col_scoring_profile": "Scoring-Profil",
        "col_top": "top",
        "col_intent": "Intent",
        "col_questions": "Fragen",
        "default_route": "(Standard)",
        "gold_metrics": "Goldset-Kennzahlen der Policy '{name}'",
        "gold_per_profile": "Pro Profil (das Profil, zu dem jede Frage geroutet wurde)",
        "gold_per_intent": "Pro Intent",
        "all": "alle",
        "no_goldset": "Es wurde kein Goldset konfiguriert; daher wurden keine Retrieval-Kennzahlen gemessen.",
        "gold_from_json": ("Der Bericht wurde aus gespeicherten Befunden erstellt: "
                           "Goldset-Kennzahlen werden nur berechnet, wenn das Audit läuft."),
        "gold_failed": "Die Goldset-Kennzahlen konnten nicht berechnet werden: {error}",
        "not_run": "Was nicht ausgeführt wurde, und warum",
        "skipped_checks": "Übersprungene Prüfungen",
        "errored_checks": "Prüfungen, die nicht abgeschlossen werden konnten",
        "incomplete_checks": "Prüfungen mit unvollständigen Daten",
        "col_reason": "Grund",
        "col_counts": "Zähler",
        "col_kind": "Art",
        "col_count": "Anfragen",
        "all_ran": "Alle Prüfungen wurden vollständig ausgeführt.",
        "runner_failures": "Fehlgeschlagene Suchanfragen",
        "no_failures": "Keine Suchanfrage ist fehlgeschlagen.",
        "runner_stats": ("Suchanfragen: {sent} an das Suchziel gesendet, {hits} aus dem Cache "
                         "beantwortet, {failed} fehlgeschlagen, {over} vom Anfrage-Budget abgelehnt."),
        "versions": "Versionen",
        "col_package": "Paket",
        "col_version": "Version",
        "not_installed": "nicht installiert",
        "inputs": "Eingaben",
        "col_input": "Eingabe",
        "generated": "Bericht erstellt am {date} mit ragdiag {version}.",
        "yes": "ja",
        "no": "nein",
    },
}


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ConfigError(f"report language must be one of {', '.join(LANGUAGES)}, got {lang!r}",
                          key="lang")
    return lang


def _t(key: str, lang: str, **values: Any) -> str:
    text = TEXTS[_check_lang(lang)][key]
    return text.format(**values) if values else text


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------------------
# value formatting


def _fmt(value: Any, lang: str = "en") -> str:
    """A cell or metric as short text: None -> "–", floats to 4 significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return _t("yes" if value else "no", lang)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v, lang) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_fmt(v, lang)}" for k, v in value.items())
    text = str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS - 1] + "…"


def _date(iso: str | None) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM UTC' (or as given when it does not parse)."""
    if not iso:
        return "–"
    try:
        d = _dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    if d.tzinfo is not None:
        d = d.astimezone(_dt.UTC)
        return d.strftime("%Y-%m-%d %H:%M UTC")
    return d.strftime("%Y-%m-%d %H:%M")


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _badge(status: str) -> str:
    colour = _STATUS_COLOURS.get(status, "#6e7781")
    return (f'<span class="rd-badge rd-{_e(status)}" style="background:{colour};color:#fff;'
            f'border-radius:3px;padding:1px 6px;font-weight:bold;font-size:85%;white-space:nowrap">'
            f"{_e(status.upper())}</span>")


def _frame_html(frame: Any, lang: str = "en", *, note: str = "") -> str:
    """A DataFrame as a report table (cells formatted, escaped); wide tables get a smaller font."""
    cols = len(frame.columns)
    size = " rd-wide" if cols >= 7 else (" rd-mid" if cols >= 5 else "")
    shown = frame.copy()
    for col in shown.columns:
        shown[col] = [_fmt(v, lang) for v in shown[col]]
    table = shown.to_html(index=False, escape=True, border=0, classes=f"rd-table{size}", na_rep="–")
    note_html = f'<p class="rd-note">{_e(note)}</p>' if note else ""
    return table + note_html


def _frame(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> Any:
    import pandas as pd

    return pd.DataFrame([list(r) for r in rows], columns=list(columns))


# ---------------------------------------------------------------------------
# the report context (what the notebook holds)


@dataclass
class ReportContext:
    """Findings plus what the report needs around them; built by `report_context`."""

    result: Any  # AuditResult
    specs: Mapping[str, Any]  # {check_id: CheckSpec}
    lang: str = "en"
    client: str = ""
    system: str = ""
    name: str = ""
    config: Any = None  # AuditConfig | None
    audit: Any = None  # AuditContext | None (None when rendered from saved findings)
    policy: Any = None  # Policy | None
    source: str = ""  # "" = computed in this run, else the findings JSON path


def _split_checks(checks: str | Sequence[str] | None) -> list[str]:
    if not checks:
        return []
    items = checks.split(",") if isinstance(checks, str) else list(checks)
    return [c.strip() for c in items if c and c.strip()]


def _default_config() -> Path:
    from ragdiag.sample.system import sample_dir

    return sample_dir() / "audit.toml"


def report_context(config: str | Path | None = "", *, client: str = "", system: str = "",
                   lang: str = "en", checks: str | Sequence[str] | None = "",
                   findings_json: str | Path | None = "", progress: bool = False,
                   log: Callable[[str], None] | None = None) -> ReportContext:
    """Run the audit the config names (empty: the embedded sample's) or load saved findings.

    `client` and `system` override the config's names; `checks` is a comma list of
    check ids (empty: all). With `findings_json` the audit is not re-run: the findings
    come from that `AuditResult` JSON and the config (if given) only supplies names
    and the policy for the appendix.
    """
    from ragdiag.inputs.checklist import load_checklist
    from ragdiag.inputs.config import load_config
    from ragdiag.model.findings import AuditResult

    _check_lang(lang)
    wanted = _split_checks(checks)
    cfg = None
    ctx = None
    policy = None
    source = ""
    if findings_json:
        source = str(findings_json)
        result = AuditResult.from_json(findings_json)
        if config:
            cfg = load_config(config)
        if wanted:
            result = AuditResult(findings=tuple(f for f in result.findings if f.check_id in wanted),
                                 meta=result.meta)
        meta_cfg = dict(result.meta.get("config") or {})
        profiles_path = (cfg.profiles if cfg is not None else
                         (Path(meta_cfg["profiles"]) if meta_cfg.get("profiles") else None))
        if profiles_path is not None and Path(profiles_path).is_file():
            from ragdiag.policy import load_policy

            policy = load_policy(profiles_path)
        checklist = cfg.checklist if cfg is not None and cfg.checklist else None
    else:
        from ragdiag.audit import build_context, run_checks

        cfg = load_config(config or _default_config())
        ctx = build_context(cfg, log=log, progress=progress)
        ctx.lang = lang  # checks that word their findings per language follow the report
        result = run_checks(ctx, checks=wanted or None)
        policy = ctx.policy
        checklist = cfg.checklist
    specs = load_checklist(checklist) if checklist else load_checklist()
    meta_cfg = dict(result.meta.get("config") or {})
    return ReportContext(
        result=result, specs=specs, lang=lang,
        client=client or (cfg.client if cfg is not None else meta_cfg.get("client") or ""),
        system=system or (cfg.system if cfg is not None else meta_cfg.get("system") or ""),
        name=(cfg.name if cfg is not None else meta_cfg.get("name") or ""),
        config=cfg, audit=ctx, policy=policy, source=source)


def show(markup: str) -> None:
    """Display an HTML string in the notebook."""
    from IPython.display import HTML, display

    display(HTML(markup))


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


def figure_png(finding: Any, *, dpi: int = 150) -> str | None:
    """The finding's figure (`ragdiag.plots.figure`) as base64 PNG, or None."""
    from ragdiag.plots import figure

    fig = figure(finding)
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
        try:
            png = figure_png(finding)
        except Exception as exc:  # a broken figure must not hide the finding
            parts.append(f'<p class="rd-note">{_e(_t("figure_failed", lang, error=f"{type(exc).__name__}: {exc}"))}</p>')
        else:
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


# ---------------------------------------------------------------------------
# secrets

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
MIN_SECRET_LEN = 8


class SecretLeakError(RagdiagError):
    """A report output contains the value of a secret-looking environment variable."""


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret-looking environment variables (name has KEY, TOKEN, SECRET or PASSWORD) with a
    non-trivial value (at least 8 characters)."""
    env = os.environ if env is None else env
    return {name: value for name, value in env.items()
            if SECRET_NAME.search(name) and value and len(value.strip()) >= MIN_SECRET_LEN}


def _variants(value: str) -> set[str]:
    v = value.strip()
    return {v, html.escape(v), html.escape(v, quote=False), json.dumps(v)[1:-1]}


def find_secrets(text: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Names of the secret-looking environment variables whose value occurs in `text`."""
    found = []
    for name, value in sorted(secret_values(env).items()):
        if any(variant and variant in text for variant in _variants(value)):
            found.append(name)
    return found


def assert_no_secrets(texts: Mapping[str, str], env: Mapping[str, str] | None = None) -> None:
    """Raise `SecretLeakError` naming the output and the variable (never the value)."""
    for where, text in texts.items():
        names = find_secrets(text, env)
        if names:
            raise SecretLeakError(
                f"the report {where} contains the value of environment variable(s) "
                f"{', '.join('$' + n for n in names)}; nothing was written. Secrets must never "
                "reach report parameters or outputs: check what the notebook prints")


# ---------------------------------------------------------------------------
# building the report


@dataclass(frozen=True)
class ReportPaths:
    ipynb: Path
    html: Path
    pdf: Path

    def __iter__(self):
        return iter((self.ipynb, self.html, self.pdf))


def template_path() -> Path:
    """The report notebook template, shipped as package data (``ragdiag/report/template``)."""
    from importlib.resources import files

    return Path(str(files("ragdiag.report") / "template" / "audit_report.ipynb"))


PRINT_CSS = """
@page {
  size: A4;
  margin: 18mm 15mm 18mm 15mm;
  @bottom-right { content: counter(page); font-family: "DejaVu Sans", sans-serif; font-size: 8pt;
                  color: #57606a; }
  @bottom-left { content: string(rd-doc-title); font-family: "DejaVu Sans", sans-serif;
                 font-size: 8pt; color: #57606a; }
}
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "DejaVu Sans", "Liberation Sans", Helvetica, Arial, sans-serif; font-size: 10pt;
       line-height: 1.4; color: #1f2328; max-width: 64em; margin: 1.5em auto; padding: 0 1em; }
h1, h2, h3, h4 { line-height: 1.2; break-after: avoid; page-break-after: avoid; }
h1.rd-doc-title { font-size: 22pt; margin: 2.5em 0 0.3em; string-set: rd-doc-title content(); }
h2 { font-size: 15pt; border-bottom: 2px solid #d0d7de; padding-bottom: 0.15em; margin-top: 0.2em; }
h3 { font-size: 11.5pt; margin: 1em 0 0.35em; }
h4 { font-size: 10pt; margin: 0.8em 0 0.25em; }
p { margin: 0.3em 0 0.5em; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 90%; }
.rd-subtitle { font-size: 14pt; color: #57606a; margin-bottom: 1.5em; }
.rd-title-page { break-after: page; page-break-after: always; }
.rd-check, .rd-appendix { break-before: page; page-break-before: always; }
.rd-summary { break-after: page; page-break-after: always; }
.rd-kicker { color: #57606a; font-size: 8.5pt; margin: 0; text-transform: uppercase; letter-spacing: 0.04em; }
.rd-id { margin: 0 0 0.4em; color: #57606a; }
.rd-headline { font-weight: bold; }
.rd-note { color: #57606a; font-size: 8pt; font-style: italic; }
.rd-rule, .rd-remediation { background: #f6f8fa; border-left: 3px solid #d0d7de; padding: 0.3em 0.6em; }
table.rd-meta { border-collapse: collapse; margin: 1em 0 2em; font-size: 10.5pt; }
table.rd-meta th { text-align: left; padding: 3px 1.2em 3px 0; color: #57606a; font-weight: normal; vertical-align: top; }
table.rd-meta td { padding: 3px 0; }
table.rd-table { border-collapse: collapse; width: auto; max-width: 100%; font-size: 8pt;
                 margin: 0.3em 0 0.7em; }
table.rd-summary-table { width: 100%; }
table.rd-table.rd-mid { font-size: 7.5pt; }
table.rd-table.rd-wide { font-size: 6.5pt; }
table.rd-table th, table.rd-table td { border-bottom: 1px solid #d0d7de; padding: 2px 4px;
  text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.rd-table th { background: #f6f8fa; font-weight: bold; }
table.rd-table thead { display: table-header-group; }
table.rd-table tr { break-inside: avoid; page-break-inside: avoid; }
table.rd-metrics td.rd-num { text-align: right; white-space: nowrap; padding-right: 1.2em; }
.rd-summary-table td:first-child { white-space: nowrap; }
figure.rd-figure { margin: 0.5em 0; text-align: center; break-inside: avoid; page-break-inside: avoid; }
figure.rd-figure img { max-width: 100%; max-height: 110mm; }
ul { margin: 0.2em 0 0.5em; padding-left: 1.4em; }
li { margin: 0.15em 0; }
.rd-refs { font-size: 8pt; overflow-wrap: break-word; }
@media print { body { max-width: none; margin: 0; padding: 0; font-size: 9.5pt; } a { color: inherit; text-decoration: none; } }
"""


def _log_fn(log: Callable[[str], None] | None) -> Callable[[str], None]:
    return log if log is not None else (lambda m: None)


@contextmanager
def _kernel(workdir: Path):
    """The name of a kernel that runs this interpreter.

    The ``python3`` kernelspec is used when it resolves to `sys.executable` (ipykernel
    installed in this venv); otherwise a throw-away kernelspec is written under
    `workdir` and made visible through a temporary ``JUPYTER_PATH`` (nothing global).
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        exe = spec.argv[0] if spec.argv else ""
        ok = exe in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}") or (
            Path(exe).exists() and Path(exe).resolve() == Path(sys.executable).resolve())
    except NoSuchKernel:
        ok = False
    if ok:
        yield "python3"
        return
    name = "ragdiag-report"
    kdir = workdir / "jupyter" / "kernels" / name
    kdir.mkdir(parents=True, exist_ok=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (ragdiag report)", "language": "python"}), encoding="utf-8")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(workdir / "jupyter"), old) if p)
    try:
        yield name
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _notebook_text(nb: Any) -> str:
    """Every source and output text of a notebook (for the secret scan)."""
    import nbformat

    return nbformat.writes(nb)


def _report_notebook(nb: Any) -> Any:
    """A copy without stream and error outputs: the report shows only rendered displays."""
    import copy

    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", [])
                               if o.get("output_type") in ("display_data", "execute_result")]
    return out


def export_html(nb: Any, *, title: str = "ragdiag report", lang: str = "en") -> str:
    """The executed notebook as standalone HTML: code, prompts, streams and Markdown hidden,
    print CSS (A4, page breaks, no overflowing tables) inlined, no external scripts."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, exclude_markdown=True, exclude_raw=True)
    body, _ = exporter.from_notebook_node(_report_notebook(nb), resources={"metadata": {"name": title}})
    return (f'<!DOCTYPE html>\n<html lang="{_e(lang)}">\n<head>\n<meta charset="utf-8"/>\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"/>\n'
            f"<title>{_e(title)}</title>\n<style>{PRINT_CSS}</style>\n</head>\n"
            f'<body class="ragdiag-report">\n{body}\n</body>\n</html>\n')


def _pdf_weasyprint(html_text: str, base: Path) -> bytes:
    import logging

    from weasyprint import HTML

    wlog = logging.getLogger("weasyprint")
    level = wlog.level
    wlog.setLevel(logging.ERROR)  # unsupported-CSS chatter
    try:
        return HTML(string=html_text, base_url=str(base)).write_pdf()
    finally:
        wlog.setLevel(level)


CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-pdf-header-footer", "--print-to-pdf-no-header",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _require_chromium() -> str:
    exe = find_chromium()
    if exe is None:
        raise MissingDependencyError(
            "pdf_engine='chromium' needs Debian's chromium (apt-get install chromium); it was not "
            "found on PATH. Use the default pdf_engine='weasyprint' instead")
    return exe


def _pdf_chromium(html_file: Path, workdir: Path, *, timeout: float = 180) -> bytes:
    exe = _require_chromium()
    pdf = workdir / "chromium.pdf"
    profile = workdir / "chromium-profile"
    cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={pdf}",
           html_file.resolve().as_uri()]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RagdiagError(f"chromium did not print the report within {timeout:.0f} s") from None
    if not pdf.exists() or pdf.stat().st_size == 0:
        raise RagdiagError(f"chromium failed to print the report (exit {proc.returncode}): "
                           f"{proc.stderr.strip()[-800:]}")
    return pdf.read_bytes()


def pdf_text(pdf: Path) -> str | None:
    """The PDF's text via ``pdftotext`` (poppler-utils), or None when it is not installed."""
    exe = shutil.which("pdftotext")
    if exe is None:
        return None
    proc = subprocess.run([exe, "-layout", str(pdf), "-"], capture_output=True, check=False)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def _parameters(config: Path | None, lang: str, client: str | None, system: str | None,
                checks: str | Sequence[str] | None, findings_json: str | Path | None) -> dict[str, str]:
    return {
        "config": str(config) if config else "",
        "client": client or "",
        "system": system or "",
        "lang": lang,
        "checks": ",".join(_split_checks(checks)),
        "findings_json": str(Path(findings_json).resolve()) if findings_json else "",
    }


def build_report(config: str | Path | None, out_dir: str | Path, *, lang: str = "en",
                 client: str | None = None, system: str | None = None,
                 checks: str | Sequence[str] | None = None, pdf_engine: str = "weasyprint",
                 progress: bool = True, log: Callable[[str], None] | None = print,
                 findings_json: str | Path | None = None,
                 template: str | Path | None = None) -> ReportPaths:
    """Run the report notebook and write ``report.ipynb``, ``report.html`` and ``report.pdf``.

    `config` is an audit config (None: the embedded sample's). The notebook runs in a
    kernel of this interpreter; a failing cell raises `NotebookRunError` (cell index and
    traceback) and the partially executed notebook is kept as ``report.ipynb``. Every
    output is scanned for secret environment values before it is written.
    """
    import nbformat
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    say = _log_fn(log)
    _check_lang(lang)
    if pdf_engine not in PDF_ENGINES:
        raise ConfigError(f"pdf_engine must be one of {', '.join(PDF_ENGINES)}, got {pdf_engine!r}",
                          key="pdf_engine")
    if pdf_engine == "chromium":
        _require_chromium()
    # fail fast in this process on a bad config or check name (clearer than a kernel traceback)
    cfg_path = Path(config).expanduser().resolve() if config else None
    title = _t("report_title", lang)
    if cfg_path is not None:
        from ragdiag.inputs.config import load_config

        cfg = load_config(cfg_path)
        title = f"{title}: {client or cfg.client}" if (client or cfg.client) else title
    elif not findings_json:
        title = f"{title}: {client}" if client else title
    wanted = _split_checks(checks)
    if wanted:
        from ragdiag.inputs.checklist import load_checklist

        unknown = [c for c in wanted if c not in load_checklist()]
        if unknown:
            raise ConfigError(f"no check named {', '.join(unknown)}; available: "
                              f"{', '.join(load_checklist())}", key="checks")
    src = Path(template) if template else template_path()
    if not src.is_file():
        raise ConfigError("report notebook template not found", path=str(src))

    out = Path(out_dir).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(out / "report.ipynb", out / "report.html", out / "report.pdf")
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        executed = work / "report.ipynb"
        params = _parameters(cfg_path, lang, client, system, checks, findings_json)
        say(f"executing notebook {src.name} ({'sample' if cfg_path is None else cfg_path.name}, "
            f"lang={lang})")
        with _kernel(work) as kernel_name:
            try:
                pm.execute_notebook(str(src), str(executed), parameters=params,
                                    kernel_name=kernel_name, progress_bar=progress,
                                    cwd=str(work), log_output=False)
            except PapermillExecutionError as exc:
                if executed.exists():
                    assert_no_secrets({"notebook": executed.read_text(encoding="utf-8")})
                    shutil.copyfile(executed, paths.ipynb)
                tb = _strip_ansi("\n".join(exc.traceback or ()))
                raise NotebookRunError(
                    f"report notebook failed in cell {exc.cell_index}: {exc.ename}: "
                    f"{_strip_ansi(str(exc.evalue))}; the partially executed notebook is kept at "
                    f"{paths.ipynb}", cell_index=exc.cell_index, traceback=tb) from None
        nb = nbformat.read(str(executed), as_version=4)
        errors = [i for i, c in enumerate(nb.cells) if c.get("cell_type") == "code"
                  and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
        nb_text = _notebook_text(nb)
        if errors:  # papermill raises on errors; a tolerated one must still not pass silently
            assert_no_secrets({"notebook": nb_text})
            shutil.copyfile(executed, paths.ipynb)
            raise NotebookRunError(f"report notebook has error output in cell {errors[0]}",
                                   cell_index=errors[0])

        say("exporting HTML")
        html_text = export_html(nb, title=title, lang=lang)
        assert_no_secrets({"notebook": nb_text, "HTML": html_text})

        say(f"writing PDF ({pdf_engine})")
        staged_html = work / "report.html"
        staged_html.write_text(html_text, encoding="utf-8")
        if pdf_engine == "chromium":
            pdf_bytes = _pdf_chromium(staged_html, work)
        else:
            pdf_bytes = _pdf_weasyprint(html_text, work)
        staged_pdf = work / "report.pdf"
        staged_pdf.write_bytes(pdf_bytes)
        text = pdf_text(staged_pdf)
        assert_no_secrets({"PDF": (text or "") + "\n" + pdf_bytes.decode("latin-1")})

        shutil.copyfile(executed, paths.ipynb)
        paths.html.write_text(html_text, encoding="utf-8")
        paths.pdf.write_bytes(pdf_bytes)
        say(f"report written: {paths.pdf} ({len(pdf_bytes) / 1024:.0f} KiB), {paths.html.name}, "
            f"{paths.ipynb.name}")
        return paths
    finally:
        shutil.rmtree(work, ignore_errors=True)
