"""What the loss funnel and the ablation add to an audit of the sample (230 questions).

Each run is a fresh process (`python -c ...`) that opens the audit config and runs the whole
checklist, once with the measurements (`AuditContext.measure = True`, what `ragdiag audit`
does) and once without them (the audit of the previous wave), alternating A/B so the noisy,
shared machine treats both alike. Two cache states:

- ``warm``: the index and the trace store hold every trace of both variants (what a second
  `ragdiag audit` sees): the ablation's what-ifs answer from the store;
- ``cold-traces``: the index is warm but the trace store is empty at the start of every run
  (a changed policy, or the first audit after building the index): the ablation's what-ifs
  are searched through the local target's stage caches.

Reported: per variant the median process CPU seconds (user + sys, the load-independent
figure) and wall seconds over the repetitions, and the ratio with / without.

    python benchmarks/bench_funnel.py [--config sample_data/audit-tuned.toml] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = """
import sys
from ragdiag.audit import open_audit, run_checks
ctx = open_audit(sys.argv[1], progress=False)
ctx.measure = sys.argv[2] == "1"
r = run_checks(ctx, stop_on_signals=False)
print(r.worst(), "measured" if r.loss_funnel else "-")
"""


def _run(config: str, measure: bool, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", DRIVER, config, "1" if measure else "0"], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _cold_cache(base: Path) -> Path:
    """A cache folder sharing the warm index and embeddings but with an empty trace store."""
    tmp = Path(tempfile.mkdtemp(prefix="ragdiag-bench-funnel-"))
    for name in ("indexes", "embeddings.sqlite3"):
        if (base / name).exists():
            (tmp / name).symlink_to(base / name)
    return tmp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "sample_data" / "audit-tuned.toml"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "funnel.json"))
    args = ap.parse_args()
    base = Path(os.environ.get("RAGDIAG_CACHE") or Path.home() / ".cache" / "ragdiag")
    env = dict(os.environ)
    for measure in (True, False):  # warm both variants' traces first
        _run(args.config, measure, env)
    results: dict[str, dict[str, list[float]]] = {}
    for state in ("warm", "cold-traces"):
        cpu: dict[str, list[float]] = {"with": [], "without": []}
        wall: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.reps):
            for variant in ("with", "without"):
                run_env = env
                tmp = None
                if state == "cold-traces":
                    tmp = _cold_cache(base)
                    run_env = {**env, "RAGDIAG_CACHE": str(tmp)}
                c, w = _run(args.config, variant == "with", run_env)
                cpu[variant].append(c)
                wall[variant].append(w)
                if tmp is not None:
                    shutil.rmtree(tmp, ignore_errors=True)
        results[state] = {"cpu_with": cpu["with"], "cpu_without": cpu["without"],
                          "wall_with": wall["with"], "wall_without": wall["without"]}
    summary = {}
    for state, r in results.items():
        cw, co = statistics.median(r["cpu_with"]), statistics.median(r["cpu_without"])
        ww, wo = statistics.median(r["wall_with"]), statistics.median(r["wall_without"])
        summary[state] = {"cpu_with_s": round(cw, 2), "cpu_without_s": round(co, 2), "cpu_ratio": round(cw / co, 3),
                          "wall_with_s": round(ww, 2), "wall_without_s": round(wo, 2),
                          "wall_ratio": round(ww / wo, 3)}
        print(f"{state:12s} CPU {cw:6.2f} s with / {co:6.2f} s without = {cw / co:.2f}x;  "
              f"wall {ww:6.2f} / {wo:6.2f} = {ww / wo:.2f}x")
    load = os.getloadavg()[0]
    print(f"load average (1 min) at the end: {load:.1f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"config": Path(args.config).name, "reps": args.reps, "summary": summary,
                               "runs": results, "load_1min_end": load}, indent=1) + "\n")


if __name__ == "__main__":
    main()
