"""SARIF 2.1.0: the code locations of an audit's findings, for code-scanning views.

One run, tool ``ragdiag``; ``rules`` are the checks (id, title as ``shortDescription``,
question as ``fullDescription``, remediation as ``help``, the first reference as
``helpUri``); one result per `Location` of a finding, with ``physicalLocation``
(``artifactLocation.uri`` relative to the audited client code, ``uriBaseId`` ``CLIENT_CODE``,
and ``region.startLine``). Findings without a location, and skipped ones, give no result:
SARIF is about places in code; the JSON, JUnit and summary carry the rest.

Level of a result: the location's own level (``error``, ``warning``, ``note``), capped by
the finding's status: ``fail`` and ``error`` keep it, ``warn`` caps it at ``warning``,
``pass`` gives ``note``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragdiag import __version__
from ragdiag.model.findings import AuditResult

__all__ = ["SARIF_SCHEMA_URI", "sarif_log", "write_sarif", "result_level"]

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/ragdiag/"
_LEVELS = ("none", "note", "warning", "error")
_CAP = {"fail": "error", "error": "error", "warn": "warning", "pass": "note", "skipped": "none"}


def result_level(location_level: str, status: str) -> str:
    """The SARIF level of a location of a finding with `status` (see the module docstring)."""
    level = location_level if location_level in _LEVELS else "warning"
    cap = _CAP.get(status, "warning")
    return level if _LEVELS.index(level) <= _LEVELS.index(cap) else cap


def _artifact(file: str) -> dict[str, str]:
    """``artifactLocation``: a relative path under ``CLIENT_CODE``, or an absolute file URI."""
    from urllib.parse import quote

    path = Path(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(file.replace("\\", "/"), safe="/-._~"), "uriBaseId": "CLIENT_CODE"}


def _rule(check_id: str, spec: Any, finding: Any, lang: str) -> dict[str, Any]:
    title = (spec.text("title", lang) if spec is not None else "") or getattr(finding, "title", "")
    question = (spec.text("question", lang) if spec is not None else "") or getattr(finding, "question", "")
    rule: dict[str, Any] = {"id": check_id, "name": "".join(p.title() for p in check_id.split("_"))}
    if title:
        rule["shortDescription"] = {"text": title}
    if question:
        rule["fullDescription"] = {"text": question}
    remediation = spec.text("remediation", lang) if spec is not None else ""
    if remediation:
        rule["help"] = {"text": remediation}
    refs = list(getattr(spec, "references", ()) or ())
    if refs and refs[0].startswith(("http://", "https://")):
        rule["helpUri"] = refs[0]
    rule["properties"] = {"tags": ["rag", "retrieval"]}
    return rule


def sarif_log(result: AuditResult, specs: Mapping[str, Any] | None = None, *, lang: str = "en",
              client_code: str | Path | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log of `result` as a dict (`specs`: check id -> CheckSpec, for rules)."""
    specs = dict(specs or {})
    ids = [f.check_id for f in result.findings]
    ids += [cid for cid in specs if cid not in ids]
    by_id = {f.check_id: f for f in result.findings}
    rules = [_rule(cid, specs.get(cid), by_id.get(cid), lang) for cid in ids]
    index = {cid: i for i, cid in enumerate(ids)}
    results: list[dict[str, Any]] = []
    for f in result.findings:
        if f.status == "skipped":
            continue
        for loc in f.locations:
            results.append({
                "ruleId": f.check_id,
                "ruleIndex": index[f.check_id],
                "level": result_level(loc.level, f.status),
                "message": {"text": loc.message or f.headline or f.check_id},
                "locations": [{"physicalLocation": {
                    "artifactLocation": _artifact(loc.file),
                    "region": {"startLine": max(int(loc.line), 1)},
                }}],
                "properties": {"status": f.status},
            })
    code = client_code or ((result.meta.get("config") or {}).get("client_code"))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "ragdiag", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": rules}},
        "results": results,
        "invocations": [{"executionSuccessful": not result.incomplete}],
        "properties": {"worst": result.worst(), "summary": result.status_counts()},
    }
    if code and Path(str(code)).is_absolute():  # SARIF wants an absolute URI here
        run["originalUriBaseIds"] = {"CLIENT_CODE": {"uri": Path(str(code)).as_uri().rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write_sarif(result: AuditResult, path: str | Path, specs: Mapping[str, Any] | None = None, *,
                lang: str = "en") -> Path:
    from ragdiag.outputs import write_text

    return write_text(Path(path), json.dumps(sarif_log(result, specs, lang=lang), indent=2, ensure_ascii=False)
                      + "\n", "SARIF log")
