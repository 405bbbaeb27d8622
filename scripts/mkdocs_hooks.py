"""MkDocs hooks: pages generated from the code at build time, so they cannot drift from it.

- ``<!-- checklist:generated -->`` in a page becomes the checklist, one section per check, read
  from the shipped specs (title, question, why, status rules, thresholds, remediation);
- ``<!-- capabilities:generated -->`` becomes the table of target capabilities and the members
  each promises (`ragdiag.targets.base.CAPABILITY_MEMBERS`);
- ``<!-- extend-api:generated -->`` becomes the list of names `ragdiag.extend` exports.
"""

from __future__ import annotations

from typing import Any


def _checklist() -> str:
    from ragdiag.inputs.checklist import format_threshold, load_checklist

    out = []
    specs = load_checklist()
    out.append(f"The shipped checklist has **{len(specs)} checks**, in report order.\n")
    out.append("| # | Check | Question |\n|---|---|---|")
    for s in specs.values():
        out.append(f"| {s.order} | [`{s.id}`](#{s.id.replace('_', '-')}) | {' '.join(s.text('question').split())} |")
    for s in specs.values():
        out.append(f"\n## {s.text('title')} {{ #{s.id.replace('_', '-')} }}\n")
        out.append(f"`{s.id}` · order {s.order}\n")
        out.append(f"**Question.** {' '.join(s.text('question').split())}\n")
        for name, label in (("why", "Why it matters"), ("status_rules", "Status rules"),
                            ("remediation", "Remediation")):
            text = s.render_rules() if name == "status_rules" else s.text(name)
            if text:
                out.append(f"**{label}.** {' '.join(text.split())}\n")
        if s.thresholds:
            out.append("| Threshold | Default |\n|---|---|")
            out.extend(f"| `{k}` | `{format_threshold(v)}` |" for k, v in s.thresholds.items())
            out.append("")
        if s.references:
            out.append("References: " + ", ".join(f"<{r}>" for r in s.references) + "\n")
    return "\n".join(out) + "\n"


def _capabilities() -> str:
    from ragdiag.targets.base import CAPABILITY_MEMBERS

    rows = ["| Capability | Members it promises |", "|---|---|"]
    rows += [f"| `{c}` | {', '.join(f'`{m}`' for m in ms) or '(none: a property of its traces)'} |"
             for c, ms in CAPABILITY_MEMBERS.items()]
    return "\n".join(rows) + "\n"


def _extend_api() -> str:
    import ragdiag.extend as ext

    return "\n".join(f"- `{name}` (`{ext._EXPORTS[name]}`)" for name in ext.__all__) + "\n"


GENERATED = {"<!-- checklist:generated -->": _checklist, "<!-- capabilities:generated -->": _capabilities,
             "<!-- extend-api:generated -->": _extend_api}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    for marker, make in GENERATED.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
