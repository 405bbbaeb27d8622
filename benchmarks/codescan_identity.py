"""Proof that a speed change left the code scanner's output unchanged, byte for byte.

    .venv/bin/python benchmarks/codescan_identity.py --save DIR ROOT...      # before a change
    .venv/bin/python benchmarks/codescan_identity.py --compare DIR ROOT...   # after it: exit 1 on any difference

For each ROOT (a client code tree: langchain-community, the realapps snapshots,
the sample client apps) it writes the JSON `ragdiag scan-code --json` prints
(`CodeScan.to_dict()`: every site, fact, builder, drift and gap), sorted, plus
`summary()`, once as scanned by default and once with `check_syntax=True`
(which parses every file, the path a byte pre-filter must not change).
`--compare` writes nothing into DIR; it scans anew and reports the first
differing line per root. The trees are fetched public code outside the
repository: never commit them or the saved JSON.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragdiag.codescan import scan_path  # noqa: E402

SAMPLE_APPS = ("client_app", "client_app_sound", "pgvector/client_app", "pgvector/client_app_leaky")


def _dump(root: Path, check_syntax: bool) -> str:
    scan = scan_path(root, check_syntax=check_syntax)
    doc = {"scan": scan.to_dict(), "summary": scan.summary()}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def _name(root: Path) -> str:
    return "+".join(root.resolve().parts[-2:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path, help="write each root's scan JSON into this folder")
    mode.add_argument("--compare", type=Path, help="compare each root's scan against the JSON saved here")
    ap.add_argument("--samples", action="store_true", help="also the sample client apps of ragdiag/sample/data")
    ap.add_argument("roots", nargs="*", type=Path, help="code trees (a folder of snapshot folders is expanded)")
    args = ap.parse_args(argv)
    roots: list[Path] = []
    for r in args.roots:
        subs = sorted(p for p in r.iterdir() if p.is_dir() and (p / ".snapshot_commit").exists())
        roots += subs if subs and not (r / ".snapshot_commit").exists() else [r]
    if args.samples:
        roots += [ROOT / "ragdiag" / "sample" / "data" / a for a in SAMPLE_APPS]
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    differ = 0
    for root in roots:
        for check_syntax in (False, True):
            file = f"{_name(root)}{'.syntax' if check_syntax else ''}.json"
            t = time.process_time()
            text = _dump(root, check_syntax)
            cpu = time.process_time() - t
            if args.save:
                (args.save / file).write_text(text)
                print(f"saved {file} ({cpu:.2f} CPU s)", flush=True)
                continue
            before = (args.compare / file).read_text()
            if before == text:
                print(f"same  {file} ({cpu:.2f} CPU s)", flush=True)
                continue
            differ += 1
            diff = list(difflib.unified_diff(before.splitlines(), text.splitlines(), "before", "after", n=2,
                                             lineterm=""))
            print(f"DIFF  {file}:\n  " + "\n  ".join(diff[:30]), flush=True)
    if args.compare:
        print(f"{len(roots) * 2 - differ} of {len(roots) * 2} scans identical")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
