"""Citations shown under an answer."""

from __future__ import annotations

import re

CITATION_RE = re.compile(r"\[(doc-[\w-]+)\]")


def extract_citations(answer: str) -> list[str]:
    """The source ids the model cited, in order of first appearance."""
    return list(dict.fromkeys(CITATION_RE.findall(answer)))


def attach_citations(answer: str, hits: list[dict]) -> list[dict]:
    """Citations for the UI, with the title of each cited source."""
    titles = {h["id"]: h.get("title", "") for h in hits}
    return [{"id": cited, "title": titles.get(cited, cited)} for cited in extract_citations(answer)]
