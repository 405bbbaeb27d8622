"""Writing a drafted goldset, the reviewer's sheet, and merging accepted cases.

The draft file is a goldset ragdiag loads as it is (`[inputs] goldset`): each case carries
`draft: true`, the `rule` that made it and the `evidence` it was drawn from. A reviewer
edits the question or sources where needed and marks a case `accepted: true` (or deletes
its `draft: true`); `merge_accepted` appends those cases to the real goldset without the
review marks, and refuses ids or questions the goldset already has.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragdiag.drafting.draft import Draft
from ragdiag.errors import InputDataError
from ragdiag.inputs.goldset import load_goldset, normalise_question

__all__ = ["write_draft", "review_sheet", "merge_accepted", "MergeResult", "accepted_cases"]

REVIEW_KEYS = ("draft", "accepted", "evidence")


def _yaml_cases(cases: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


def write_draft(draft: Draft, path: str | os.PathLike[str], *, source: str = "") -> Path:
    """Write the draft as a goldset YAML file with a header saying how to review it."""
    out = Path(path)
    overlap = draft.overlap_by_rule()
    head = [
        f"# Drafted goldset (ragdiag goldset draft{' ' + source if source else ''}, seed {draft.seed},",
        f"# {draft.per_intent} per intent): {len(draft.cases)} candidate cases made by rules, not by a model.",
        "# Review each case: fix the question or the sources where needed, then set `accepted: true`",
        "# (or delete `draft: true`); delete cases you reject. `ragdiag goldset merge` copies the",
        "# accepted cases into the real goldset. Question words found in the source passage (share of",
        "# content words, per rule):",
    ]
    head += [f"#   {rule}: mean {v['mean']:.2f}, median {v['median']:.2f} over {v['cases']} cases"
             for rule, v in overlap.items()]
    head.append(f"# Cases whose question copies its source above {draft.overlap_cap:.2f} were dropped "
                f"({sum(n for k, n in draft.rejected.items() if 'overlap cap' in k)}); kept above it "
                f"(ids and terms are what they ask about): {', '.join(draft.flagged) or 'none'}.")
    head += [f"# note: {n}" for n in draft.notes]
    text = "\n".join(head) + "\n" + _yaml_cases([c.to_goldset() for c in draft.cases])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    load_goldset(out)  # what we wrote must load as a goldset; a failure here is our bug
    return out


def _read_raw(path: Path) -> list[dict[str, Any]]:
    from ragdiag.inputs.limits import read_text

    load_goldset(path)  # validates with file:line messages (size, encoding, depth, every case)
    text = read_text(path, what="goldset")
    data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else [
        json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(data, list | type(None)) or not all(isinstance(c, dict) for c in data or []):
        raise InputDataError("a drafted goldset must be a list of cases (objects with id and question)",
                             path=str(path))
    return list(data or [])


def review_sheet(path: str | os.PathLike[str], *, width: int = 110) -> str:
    """A compact sheet: one block per case (id, rule, intent, identity, question, answer,
    sources, evidence), with the decision to take."""
    raw = _read_raw(Path(path))
    lines = [f"Review sheet for {path}: {len(raw)} cases. For each: is the question answerable from the",
             "evidence, is the first source the passage that answers it, is the answer right?",
             "Mark `accepted: true` in the file, edit, or delete the case.", ""]
    for i, c in enumerate(raw, 1):
        status = "accepted" if c.get("accepted") or not c.get("draft", False) else "to review"
        who = f" as {c['as_user']}" if c.get("as_user") else ""
        lines.append(f"[{i}] {c['id']}  {c.get('rule', '?')} -> {c.get('intent', 'unknown')}{who}  ({status})")
        lines.append(f"    Q: {c['question']}")
        if c.get("expect") == "refused":
            lines.append("    expect: refused")
        else:
            srcs = ", ".join(f"{s['key']}({s.get('grade', 1)})" if isinstance(s, dict) else str(s)
                             for s in c.get("expect_sources", []))
            lines.append(f"    sources: {srcs}")
        if c.get("expect_answer_contains"):
            lines.append(f"    answer: {'; '.join(map(str, c['expect_answer_contains']))}")
        if c.get("evidence"):
            ev = " ".join(str(c["evidence"]).split())
            lines.append(f"    evidence: {ev[:width] + ('…' if len(ev) > width else '')}")
        lines.append("")
    return "\n".join(lines)


def accepted_cases(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Cases a reviewer accepted (`accepted: true`, or no `draft: true` left), without review marks."""
    out = []
    for c in _read_raw(Path(path)):
        if c.get("accepted") or not c.get("draft", False):
            out.append({k: v for k, v in c.items() if k not in REVIEW_KEYS})
    return out


@dataclass(frozen=True)
class MergeResult:
    added: list[str]
    pending: int  # cases still marked draft and not accepted
    path: Path


def merge_accepted(draft_path: str | os.PathLike[str], goldset_path: str | os.PathLike[str]) -> MergeResult:
    """Append the accepted cases of a draft to a YAML or JSONL goldset (created if missing)."""
    draft_file, gold = Path(draft_path), Path(goldset_path)
    accepted = accepted_cases(draft_file)
    pending = len(_read_raw(draft_file)) - len(accepted)
    existing = load_goldset(gold) if gold.exists() and gold.stat().st_size else None
    ids = {c.id for c in existing} if existing else set()
    questions = {normalise_question(c.question): c.id for c in existing} if existing else {}
    for c in accepted:
        if str(c["id"]) in ids:
            raise InputDataError(f"case id {c['id']!r} is already in the goldset; rename it in the draft "
                                 "before merging", path=str(draft_file))
        q = normalise_question(str(c["question"]))
        if q in questions:
            raise InputDataError(f"case {c['id']!r} asks the same question as {questions[q]!r} of the goldset; "
                                 "delete one of them", path=str(draft_file))
        questions[q] = str(c["id"])
    if accepted:
        if gold.suffix == ".jsonl":
            block = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in accepted)
        elif gold.suffix in (".yaml", ".yml"):
            block = f"# merged from {draft_file.name} (reviewed drafts)\n" + _yaml_cases(accepted)
        else:
            raise InputDataError("the goldset to merge into must be .yaml, .yml or .jsonl", path=str(gold))
        from ragdiag.inputs.limits import read_text

        text = read_text(gold, what="goldset") if gold.exists() else ""
        if text and not text.endswith("\n"):
            text += "\n"
        gold.write_text(text + block, encoding="utf-8")
        load_goldset(gold)  # the merged file must still load
    return MergeResult([str(c["id"]) for c in accepted], pending, gold)
