"""Run the sample audits and write docs/sample-audit.md from their findings (no figure typed by hand).

    .venv/bin/python scripts/sample-figures.py [--audits misconfigured,tuned,pgvector]
                                               [--findings DIR] [--keep DIR] [--out docs/sample-audit.md]

Each audit runs as ``ragdiag audit [config] --json <file>`` in a subprocess (exit 1 is the
sample's deliberate verdict, not a failure; 2 and above stop the script), then
`ragdiag.sample.figures.render` turns the findings into Markdown stamped with the ragdiag
version, the package versions and the digest of the fingerprint's instrument. ``--findings DIR``
renders ``DIR/<audit>.json`` files written earlier instead of running the audits; ``--keep
DIR`` keeps the findings the run wrote. Regenerate after anything that changes the
instrument (ragdiag's code, a package, the model): the stamp says which build the page holds for.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run_audit(name: str, config: str | None, out: Path) -> dict:
    """``ragdiag audit`` of one sample config into `out`; its findings."""
    cmd = [sys.executable, "-m", "ragdiag", "audit"]
    if config:
        cmd.append(str(ROOT / "sample_data" / config))
    cmd += ["--json", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print(f"{name}: {' '.join(cmd[2:])}", flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not out.exists():
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-4000:])
        raise SystemExit(f"{name}: ragdiag audit exited {proc.returncode}")
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> int:
    from ragdiag.sample.figures import AUDITS, render

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", default=",".join(AUDITS), help=f"comma-separated, of {', '.join(AUDITS)}")
    ap.add_argument("--findings", type=Path, help="render DIR/<audit>.json instead of running the audits")
    ap.add_argument("--keep", type=Path, help="keep the findings of the run in this folder")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "sample-audit.md")
    args = ap.parse_args()
    names = [n.strip() for n in args.audits.split(",") if n.strip()]
    unknown = [n for n in names if n not in AUDITS]
    if unknown:
        ap.error(f"unknown audit(s) {', '.join(unknown)}; known: {', '.join(AUDITS)}")
    audits: dict[str, dict] = {}
    if args.findings:
        for name in names:
            audits[name] = json.loads((args.findings / f"{name}.json").read_text(encoding="utf-8"))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.keep or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            for name in names:
                audits[name] = run_audit(name, AUDITS[name], folder / f"{name}.json")
    args.out.write_text(render(audits), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
