"""A full audit of the sample with a larger goldset: memory per question, first vs warm audit.

The goldset is the sample's 230 questions, repeated as variants until it has N: variant j of
a question is "Request <nonce>-<j>: <question>" (same intent, user and expected sources). The
nonce is new for every invocation, so the first audit really embeds every variant's texts.

Each audit is the full audit (all ten checks) in a fresh subprocess with an empty trace
store; the sample index is open and its corpus embeddings cached. Per run: wall time, the
query texts embedded, RSS before the context is built and after the audit (psutil), and the
growth per question.

* **first**: the variants' texts were never embedded (the model is loaded and embeds them);
* **warm**: the same goldset again, its query embeddings now on disk, empty trace store.

    python benchmarks/bench_scale.py [--sizes 1000,2000] [--out benchmarks/results/scale.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def goldset_of(n: int, nonce: str):
    from dataclasses import replace

    from ragdiag.inputs.goldset import Goldset, load_goldset
    from ragdiag.sample.system import sample_dir

    base = list(load_goldset(sample_dir() / "goldset.yaml"))
    cases = []
    j = 0
    while len(cases) < n:
        for c in base:
            if len(cases) >= n:
                break
            q = c.question if j == 0 else f"Request {nonce}-{j}: {c.question}"
            cases.append(replace(c, id=c.id if j == 0 else f"{c.id}~{j}", question=q))
        j += 1
    return Goldset(cases=tuple(cases), path=None)


def one(n: int, nonce: str) -> dict:
    import tempfile

    import psutil

    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import open_sample_target, sample_dir, sample_embedder

    target = open_sample_target("structured", progress=False)
    emb = sample_embedder()
    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss / 2**20
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        ctx = build_context(load_config(sample_dir() / "audit.toml"), progress=False, target=target,
                            cache_dir=Path(tmp))
        ctx.goldset = goldset_of(n, nonce)
        calls0, encoded0 = emb.n_model_calls, emb.n_encoded
        spent = {"embed_wall_s": 0.0, "embed_cpu_s": 0.0}  # in Embedder.embed: model load and inference
        plain_embed = emb.embed

        def timed_embed(*a, **kw):
            w, c = time.perf_counter(), time.process_time()
            try:
                return plain_embed(*a, **kw)
            finally:
                spent["embed_wall_s"] += time.perf_counter() - w
                spent["embed_cpu_s"] += time.process_time() - c

        emb.embed = timed_embed
        result = run_checks(ctx)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        gc.collect()
        rss1 = proc.memory_info().rss / 2**20
        store_mb = sum(p.stat().st_size for p in Path(tmp).rglob("*.rdts")) / 2**20
    return {"questions": n, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            **{k: round(v, 1) for k, v in spent.items()}, "model_calls": emb.n_model_calls - calls0,
            "texts_embedded": emb.n_encoded - encoded0, "model_loaded": bool(emb.loaded),
            "searches": ctx.runner.stats.sent, "rss_before_mb": round(rss0, 1), "rss_after_mb": round(rss1, 1),
            "rss_growth_mb": round(rss1 - rss0, 1), "growth_mb_per_question": round((rss1 - rss0) / n, 4),
            "store_file_mb": round(store_mb, 1), "statuses": {f.check_id: f.status for f in result.findings},
            "load_1min": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,2000")
    ap.add_argument("--first", default="1000", help="sizes that also get a first (never embedded) run")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "scale.json"))
    ap.add_argument("--worker", nargs=2)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.worker:
        print(json.dumps(one(int(args.worker[0]), args.worker[1])))
        return
    runs = []
    firsts = {int(s) for s in args.first.split(",") if s}
    for n in [int(s) for s in args.sizes.split(",")]:
        nonce = secrets.token_hex(3)
        for label in (("first", "warm") if n in firsts else ("warm", "warm again")):
            out = subprocess.run([sys.executable, __file__, "--worker", str(n), nonce], check=True,
                                 capture_output=True, text=True).stdout.strip().splitlines()[-1]
            res = {"run": label, **json.loads(out)}
            runs.append(res)
            print(json.dumps(res), flush=True)
    summary = {}
    for n in sorted({r["questions"] for r in runs}):
        mine = {r["run"]: r for r in runs if r["questions"] == n}
        warm = mine.get("warm again") or mine["warm"]  # embeddings on disk, model not loaded
        summary[n] = {"warm_growth_mb_per_question": warm["growth_mb_per_question"],
                      "warm_rss_after_mb": warm["rss_after_mb"], "warm_wall_s": warm["wall_s"]}
        if "first" in mine:
            summary[n]["first_over_warm"] = round(mine["first"]["wall_s"] / mine["warm"]["wall_s"], 2)
            summary[n]["first_over_warm_cpu"] = round(mine["first"]["cpu_s"] / mine["warm"]["cpu_s"], 2)
    sizes = sorted(summary)
    if len(sizes) >= 2:
        a, b = sizes[0], sizes[-1]
        # the run with embeddings on disk and the model not loaded ("warm again" where there is one)
        def steady(n: int) -> dict:
            mine = {r["run"]: r for r in runs if r["questions"] == n}
            return mine.get("warm again") or mine["warm"]

        ra, rb = steady(a), steady(b)
        summary["slope_mb_per_question"] = round((rb["rss_after_mb"] - ra["rss_after_mb"]) / (b - a), 4)
    doc = {"runs": runs, "summary": summary}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
