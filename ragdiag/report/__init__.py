"""The audit report: a papermill notebook rendered to HTML and PDF.

`build_report` runs the packaged template ``template/audit_report.ipynb`` with papermill in the
current interpreter's kernel, keeps the executed notebook, exports it to HTML
with nbconvert (code hidden) and prints that HTML to PDF with WeasyPrint (or
Debian's chromium). Before anything is written, every output is scanned for the
values of secret-looking environment variables.

The notebook's cells are short calls into this package: `report_context` runs the
audit (or loads saved findings) and renders every computed text in the report's
language (`ragdiag.checks.localize`); the ``render_*`` functions are pure: they
turn findings, check specs and an audit context into HTML strings, so they are
unit-testable without a kernel. Fixed texts exist in English and German; check
texts come from the checklist specs, metric names from `labels`.

The report reads as a client would: page 1 (`render_title`) names the system and
the date, gives the verdict in one sentence (`verdict`) and the three priorities
with their measured effect (`priorities`: failing, then warning findings, ranked
by the largest significant improvement in ``Finding.effects``); page 2
(`render_summary`) is one table in plain language; then one section per check
(`render_check`: what it means, what was found and measured, figure, evidence with
long tables summarised by `tables`, what to do) and the optional
section "From the current to the proposed policy" (`render_optimization`, when an
optimize.json is given) and the appendix
(`render_appendix`: full tables, policy, goldset metrics, method, what was not
run, audit details).

The modules: `texts` (the fixed texts), `labels` (metric names), `tables` (cells,
collapsed duplicates, summaries of long evidence), `format` (HTML formatting helpers),
`context` (what the notebook holds), `render` (the sections), `secrets` (the
secret scan), `notebook` (parameters and kernel execution), `export` (HTML and
PDF) and `build` (`build_report`).
"""

from __future__ import annotations

from ragdiag.errors import SecretLeakError
from ragdiag.report.build import ReportPaths, build_report, template_path
from ragdiag.report.context import ReportContext, report_context, show
from ragdiag.report.export import CHROMIUM_FLAGS as CHROMIUM_FLAGS
from ragdiag.report.export import PDF_ENGINES as PDF_ENGINES
from ragdiag.report.export import PRINT_CSS as PRINT_CSS
from ragdiag.report.export import export_html as export_html
from ragdiag.report.export import find_chromium as find_chromium
from ragdiag.report.export import pdf_text as pdf_text
from ragdiag.report.format import MAX_CELL_CHARS as MAX_CELL_CHARS
from ragdiag.report.format import _e as _e
from ragdiag.report.format import _fmt as _fmt
from ragdiag.report.optimization import load_optimization, render_optimization
from ragdiag.report.render import KEY_PACKAGES as KEY_PACKAGES
from ragdiag.report.render import (
    MAX_EVIDENCE_ROWS,
    evidence_frame,
    goldset_frames,
    profiles_frame,
    render_appendix,
    render_check,
    render_details,
    render_limits,
    render_summary,
    render_title,
    routes_frame,
    versions_frame,
)
from ragdiag.report.render import best_effect as best_effect
from ragdiag.report.render import client_sentence as client_sentence
from ragdiag.report.render import figure_png as figure_png
from ragdiag.report.render import limits as limits
from ragdiag.report.render import priorities as priorities
from ragdiag.report.render import render_evidence as render_evidence
from ragdiag.report.render import render_funnel as render_funnel
from ragdiag.report.render import unmeasured_findings as unmeasured_findings
from ragdiag.report.render import verdict as verdict
from ragdiag.report.roadmap import render_roadmap
from ragdiag.report.roadmap import roadmap as roadmap
from ragdiag.report.secrets import MIN_SECRET_LEN as MIN_SECRET_LEN
from ragdiag.report.secrets import SECRET_NAME as SECRET_NAME
from ragdiag.report.secrets import assert_no_secrets, find_secrets, secret_values
from ragdiag.report.texts import LANGUAGES
from ragdiag.report.texts import TEXTS as TEXTS
from ragdiag.report.texts import _t as _t

# `from ... import X as X` marks the names that stay reachable as `ragdiag.report.X`, as
# before the split (tests use some of them), without joining `__all__`.
__all__ = [
    "LANGUAGES",
    "load_optimization",
    "render_optimization",
    "MAX_EVIDENCE_ROWS",
    "ReportPaths",
    "ReportContext",
    "SecretLeakError",
    "build_report",
    "template_path",
    "report_context",
    "render_title",
    "render_summary",
    "render_roadmap",
    "render_limits",
    "render_check",
    "render_details",
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

