"""``ragdiag goldset draft|merge``: goldset cases without an LLM.
"""

from __future__ import annotations

import argparse
import json

from ragdiag.cli._common import _console, _log, _print_table


def cmd_goldset_draft(args: argparse.Namespace) -> int:
    """Draft goldset cases by rules (no LLM), or print the review sheet of a draft."""
    from ragdiag.drafting import DEFAULT_PER_INTENT, draft_for_config, review_sheet, write_draft
    from ragdiag.errors import ConfigError

    if args.review:
        print(review_sheet(args.review))
        return 0
    if not args.out:
        raise ConfigError("goldset draft needs --out FILE (where to write the drafted cases), "
                          "or --review FILE to print the sheet of an existing draft")
    per_intent = DEFAULT_PER_INTENT if args.per_intent is None else args.per_intent
    if per_intent < 1:
        raise ConfigError(f"--per-intent must be at least 1, got {per_intent}")
    from ragdiag.outputs import check_output

    check_output(args.out, "drafted goldset")
    draft = draft_for_config(args.config or None, per_intent=per_intent, seed=args.seed, log=_log,
                             agreement=not args.no_agreement)
    path = write_draft(draft, args.out, source=args.config or "")
    summary = draft.summary()
    if args.json:
        print(json.dumps({"path": str(path), **summary}, indent=2, ensure_ascii=False))
        return 0
    con = _console()
    overlap = summary["overlap"]
    rows = [[rule, str(n), f"{overlap[rule]['mean']:.2f}" if rule in overlap else "-",
             f"{overlap[rule]['median']:.2f}" if rule in overlap else "-"]
            for rule, n in summary["per_rule"].items()]
    _print_table(con, f"{summary['cases']} drafted cases in {path} (seed {args.seed})",
                 ["rule", "cases", "overlap mean", "overlap median"], rows, right=["cases", "overlap mean",
                                                                                   "overlap median"])
    con.print(f"overlap: share of a question's content words found in its source (title, section, text); "
              f"cap {summary['overlap_cap']:.2f}: {sum(n for k, n in summary['rejected'].items() if 'overlap cap' in k)} "
              f"dropped above it, {len(summary['above_cap_flagged'])} kept and flagged (ids, terms)")
    for note in summary["notes"]:
        con.print(f"note: {note}", markup=False, highlight=False)  # notes name [identities]: not markup
    con.print(f"review: ragdiag goldset draft --review {path}; merge: ragdiag goldset merge {path} --into GOLDSET")
    return 0


def cmd_goldset_merge(args: argparse.Namespace) -> int:
    """Append a draft's accepted cases to a goldset."""
    from ragdiag.drafting import merge_accepted

    result = merge_accepted(args.draft, args.into)
    print(f"merged {len(result.added)} accepted case(s) into {result.path}; {result.pending} still marked draft "
          "(not merged)")
    return 0
