"""A Markdown summary of an audit for a CI step summary (``$GITHUB_STEP_SUMMARY``, Azure
Pipelines' ``##vso[task.uploadsummary]``): the verdict, a status table, the top
recommendations, and what was incomplete."""

from __future__ import annotations

import html
from pathlib import Path

from ragdiag.ci import gates
from ragdiag.model.findings import SEVERITY, AuditResult

__all__ = ["summary_markdown", "write_summary", "TOP_RECOMMENDATIONS"]

TOP_RECOMMENDATIONS = 5
_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "💥", "skipped": "⏭️"}


def _cell(text: object) -> str:
    """Text safe in a Markdown table cell: one line, pipes and HTML escaped."""
    return html.escape(" ".join(str(text).split()), quote=False).replace("|", "\\|")


def summary_markdown(result: AuditResult, *, fail_on: str = "fail", top: int = TOP_RECOMMENDATIONS) -> str:
    meta = result.meta
    name = (meta.get("config") or {}).get("name") or "ragdiag audit"
    code = result.exit_code(fail_on)
    verdict = {0: "passed", 1: "failed", 3: "incomplete"}.get(code, str(code))
    counts = ", ".join(f"{n} {s}" for s, n in result.status_counts().items() if n) or "no checks"
    target = " · ".join(str(x) for x in (meta.get("target"), meta.get("policy") and f"policy {meta['policy']}")
                        if x)
    lines = [f"## ragdiag audit: {_cell(name)}", "",
             f"**{_ICON.get(result.worst(), '')} Audit {verdict}** (exit {code}, `--fail-on {fail_on}`): "
             f"{counts}; worst `{result.worst()}`." + (f" Target: {_cell(target)}." if target else ""), "",
             "| # | check | status | finding |", "|---:|---|---|---|"]
    for i, f in enumerate(result.findings, 1):
        mark = " *(gates)*" if gates(f.status, fail_on) else ""
        star = "\\*" if f.is_incomplete else ""
        lines.append(f"| {i} | `{f.check_id}` | {_ICON.get(f.status, '')} {f.status}{star}{mark} | "
                     f"{_cell(f.headline)} |")
    ranked = sorted((f for f in result.findings if f.status != "pass" and f.recommendations),
                    key=lambda f: -SEVERITY[f.status])
    recs = [(f, r) for f in ranked for r in f.recommendations[:1]][:top]
    if recs:
        lines += ["", "### Top recommendations", ""]
        lines += [f"{i}. **`{f.check_id}`** ({f.status}): {_cell(r)}" for i, (f, r) in enumerate(recs, 1)]
    incomplete = [f for f in result.findings if f.is_incomplete]
    if incomplete:
        lines += ["", "\\* incomplete: " + "; ".join(
            f"`{f.check_id}` {f.incomplete.get('failed_requests')} of {f.incomplete.get('requests')} "
            "requests failed" + (f" ({_cell(f.failures[0].reason)})" if f.failures else "")
            for f in incomplete)]
    return "\n".join(lines) + "\n"


def write_summary(result: AuditResult, path: str | Path, *, fail_on: str = "fail") -> Path:
    """Append the summary to `path` (a step-summary file collects every step's Markdown)."""
    p = Path(path)
    from ragdiag.outputs import append_text

    return append_text(p, summary_markdown(result, fail_on=fail_on) + "\n", "summary")
