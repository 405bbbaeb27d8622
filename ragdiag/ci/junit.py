"""JUnit XML: one test case per check, for the test tabs of CI systems.

The layout follows the Ant/Jenkins JUnit schema that GitHub test reporters, GitLab, Azure
Pipelines' ``PublishTestResults`` and Jenkins read::

    <testsuites name="ragdiag" tests="10" failures="4" errors="0" skipped="1" time="...">
      <testsuite name="ragdiag audit: NAME" tests="10" failures="4" errors="0" skipped="1"
                 timestamp="..." hostname="..." time="...">
        <properties><property name="fail_on" value="fail"/>...</properties>
        <testcase classname="ragdiag.<target>" name="pool_size" time="0">
          <failure type="fail" message="headline">headline, recommendations, metrics</failure>
        </testcase>
        <testcase ... name="goldset"><skipped message="the reason"/></testcase>
      </testsuite>
    </testsuites>

A status at or above ``--fail-on`` becomes a ``<failure>`` whose ``type`` is the status
(``fail``, ``warn`` or ``error``); ``error`` always does (an errored check makes the audit
incomplete, exit 3). ``skipped`` becomes ``<skipped>`` with its reason; every other status
passes, its headline in ``<system-out>``. ``errors`` stays 0: ragdiag's ``error`` is a
check that could not finish, reported as a failure so no CI system shows it green.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ragdiag.ci import gates
from ragdiag.model.findings import AuditResult, Finding

__all__ = ["junit_xml", "write_junit"]

# XML 1.0 forbids most control characters; a headline quoting client code may carry one
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: Any) -> str:
    return _XML_BAD.sub("\ufffd", str(text))


def _details(f: Finding) -> str:
    lines = [f"[{f.status}] {f.check_id}: {f.headline}"]
    if f.question:
        lines.append(f"question: {f.question}")
    if f.incomplete:
        lines.append("incomplete: " + ", ".join(f"{k} {v}" for k, v in f.incomplete.items())
                     + "".join(f"; {r.reason} ({r.count}x)" for r in f.failures))
    for loc in f.locations:
        lines.append(f"{loc.file}:{loc.line}: {loc.level}: {loc.message}".rstrip(": "))
    if f.recommendations:
        lines.append("recommendations:")
        lines += [f"- {r}" for r in f.recommendations]
    if f.metrics:
        lines.append("metrics: " + ", ".join(f"{k} = {v}" for k, v in f.metrics.items()))
    return "\n".join(lines)


def junit_xml(result: AuditResult, *, fail_on: str = "fail", name: str | None = None) -> str:
    """The JUnit XML text of `result` (UTF-8, with the XML declaration)."""
    meta = result.meta
    suite_name = name or f"ragdiag audit: {(meta.get('config') or {}).get('name') or 'audit'}"
    classname = f"ragdiag.{meta.get('target') or 'audit'}"
    timings = meta.get("timings") if isinstance(meta.get("timings"), dict) else {}
    checks_t = timings.get("checks") if isinstance(timings.get("checks"), dict) else {}
    failures = sum(1 for f in result.findings if f.status != "skipped" and gates(f.status, fail_on))
    skipped = sum(1 for f in result.findings if f.status == "skipped")
    counts = {"tests": str(len(result.findings)), "failures": str(failures), "errors": "0",
              "skipped": str(skipped)}
    total = sum(float(v) for v in checks_t.values() if isinstance(v, int | float))
    root = ET.Element("testsuites", {"name": "ragdiag", **counts, "time": f"{total:.3f}"})
    suite_attrs = {"name": _clean(suite_name), **counts, "time": f"{total:.3f}"}
    if meta.get("date"):
        suite_attrs["timestamp"] = _clean(str(meta["date"])[:19])
    suite = ET.SubElement(root, "testsuite", suite_attrs)
    props = ET.SubElement(suite, "properties")
    for key, value in (("fail_on", fail_on), ("worst", result.worst()),
                       ("ragdiag_version", meta.get("ragdiag_version", "")),
                       ("target", meta.get("target", "")), ("policy", meta.get("policy", "")),
                       ("exit_code", str(result.exit_code(fail_on)))):
        if value not in (None, ""):
            ET.SubElement(props, "property", {"name": key, "value": _clean(value)})
    for f in result.findings:
        t = checks_t.get(f.check_id)
        case = ET.SubElement(suite, "testcase", {
            "name": f.check_id, "classname": classname,
            "time": f"{float(t):.3f}" if isinstance(t, int | float) else "0"})
        if f.status == "skipped":
            ET.SubElement(case, "skipped", {"message": _clean(f.skipped_reason or f.headline)})
        elif gates(f.status, fail_on):
            el = ET.SubElement(case, "failure", {"type": f.status, "message": _clean(f.headline)})
            el.text = _clean(_details(f))
        out = ET.SubElement(case, "system-out")
        out.text = _clean(_details(f))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: AuditResult, path: str | Path, *, fail_on: str = "fail") -> Path:
    p = Path(path)
    from ragdiag.outputs import write_text

    return write_text(p, junit_xml(result, fail_on=fail_on), "JUnit XML")
