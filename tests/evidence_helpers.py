"""Helpers for the ported checks' tests: bend a finding's evidence to test figure binding,
and look for English message text in a finding rendered in German."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ragdiag.checks.base import catalogue_for
from ragdiag.inputs.checklist import load_checklist


def retitled(finding: Any, key: str, title: str = "Renamed by the test") -> Any:
    """`finding` with evidence `key` under another title (figures read keys, never titles)."""
    ev = tuple(replace(e, title=title, title_msg=None) if e.key == key else e for e in finding.evidence)
    return replace(finding, evidence=ev)


def column_renamed(finding: Any, key: str, column: str) -> Any:
    """`finding` with column `column` of evidence `key` renamed (a figure must see it)."""
    def bend(e: Any) -> Any:
        keys = tuple(f"{c}_renamed" if c == column else c for c in e.column_keys)
        return replace(e, column_keys=keys)
    return replace(finding, evidence=tuple(bend(e) if e.key == key else e for e in finding.evidence))


def english_left(finding_de: Any, check_id: str) -> list[str]:
    """English templates of the check's own messages (longer than 2 words) found verbatim in the
    German headline, recommendations, evidence titles and column labels."""
    spec = load_checklist()[check_id]
    cat = catalogue_for([spec])
    texts = [finding_de.headline, *finding_de.recommendations]
    for e in finding_de.evidence:
        texts += [e.title, e.note, *e.columns]
    english = []
    for mid in cat.ids():
        if not mid.startswith(f"{check_id}."):
            continue
        t = cat.templates(mid)
        en, de = t.get("en", ""), t.get("de", "")
        # the literal parts of the English template (between placeholders)
        for part in _literal_parts(en):
            if len(part.split()) >= 3 and part not in de and any(part in x for x in texts):
                english.append(part)
    for label in spec.labels.values():
        if label.get("en") != label.get("de") and any(label["en"] == c for e in finding_de.evidence
                                                      for c in e.columns):
            english.append(label["en"])
    return english


def _literal_parts(template: str) -> list[str]:
    import string

    return [lit.strip(" ,;:()") for lit, *_ in string.Formatter().parse(template) if lit and lit.strip()]
