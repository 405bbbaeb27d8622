"""``ragdiag chunks``: judge a chunk export's cuts.
"""

from __future__ import annotations

import argparse
import json

from ragdiag.cli.audit import _gates


def cmd_chunks(args: argparse.Namespace) -> int:
    """Judge a chunk export's cuts (against the source when given) and print the verdict."""

    from ragdiag.chunks.export import check_chunk_file, render_text
    from ragdiag.outputs import check_output, write_text

    if args.json:
        check_output(args.json, "chunk verdict")
    verdict = check_chunk_file(args.file, maps=args.map or (), lang=args.lang, source=args.source)
    print(render_text(verdict))
    if args.json:
        write_text(args.json, json.dumps(verdict.to_json(), ensure_ascii=False, indent=1) + "\n", "chunk verdict")
        print(f"\nJSON written to {args.json}")
    return 1 if args.fail_on != "never" and _gates(verdict.status, args.fail_on) else 0
