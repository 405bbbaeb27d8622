"""CI outputs of an audit: JUnit XML, SARIF 2.1.0, a Markdown step summary, and `diff`.

Each writer reads only an `AuditResult` (and, for texts such as rule descriptions, the
checklist specs), so a saved findings JSON renders the same files as the live audit::

    ragdiag audit cfg.toml --json out/findings.json --junit out/junit.xml \\
        --sarif out/ragdiag.sarif --summary "$GITHUB_STEP_SUMMARY"
    ragdiag diff baseline/findings.json out/findings.json --fail-on-regression
"""

from __future__ import annotations

from ragdiag.model.findings import FAIL_ON, SEVERITY

__all__ = ["gates", "DEFAULT_FAIL_ON"]

#: The CLI's default ``--fail-on``: a pipeline that forgets the flag still goes red on a
#: confirmed ``fail`` (or an ``error``, which also makes the audit incomplete, exit 3).
DEFAULT_FAIL_ON = "fail"


def gates(status: str, fail_on: str) -> bool:
    """True when `status` is at or above `fail_on` (the statuses that make the exit code 1).

    ``error`` always gates: an errored check cannot vouch for anything, and the audit
    exits 3 (incomplete) whatever `fail_on` says.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if status == "error":
        return True
    if fail_on == "never":
        return False
    threshold = SEVERITY["warn"] if fail_on == "warn" else SEVERITY["error"]
    return SEVERITY[status] >= threshold
