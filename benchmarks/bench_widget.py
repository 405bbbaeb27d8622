"""Benchmark of the profile tuner's round trip (`ragdiag.tuner.ProfileTuner`) on the sample.

One round trip = setting a control's `.value` through the widget API until every output
(status, metrics, pool histogram, score histogram, drill-down) holds its new HTML: the
observer runs synchronously in the kernel, so this is the kernel side of a slider move
(the browser adds a comm message each way).

Measured on the misconfigured sample policy, profile `definition` (34 goldset questions):

* cold: the first change (k 20 -> 50) in a fresh process with an empty trace cache, so
  the target's stage caches (filter masks, query embeddings, HNSW index, reranker scores)
  are filled by the baseline run only; repeated in `--cold-reps` fresh subprocesses;
* warm, new k: after that first change, `--reps` changes to k values not seen before
  (each re-runs 34 requests; vector legs recomputed, the rest from the stage caches);
* warm, new weight: changes of the vector-query weight (vector legs cached, fusion and
  reranking of the changed window only);
* warm, revisited: changes back to settings seen before (the tuner's result memo);
* a cProfile breakdown of one warm new-k change (`--profile`).

    python benchmarks/bench_widget.py [--reps 10] [--cold-reps 3] [--profile]
        [--out benchmarks/results/widget.json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))


def _context(cache_dir: Path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    return build_context(load_config(sample_dir() / "audit.toml"), progress=False, cache_dir=cache_dir)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def _set(widget, value):
    def go():
        widget.value = value
    return go


def cold_once() -> dict[str, float]:
    """In this (fresh) process: context, tuner construction, first change."""
    from ragdiag.tuner import ProfileTuner

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ctx = _context(Path(tmp))
        ctx_ms = (time.perf_counter() - t0) * 1000
        tuner_box = {}
        construct_ms = _timed(lambda: tuner_box.setdefault("t", ProfileTuner(ctx, "definition")))
        tuner = tuner_box["t"]
        first_ms = _timed(_set(tuner.k_slider, 50))
        assert tuner.result.profile.vector_queries[0].k == 50
        return {"context_ms": ctx_ms, "construct_ms": construct_ms, "first_change_ms": first_ms,
                "first_change_requests": tuner.result.sent}


def warm(reps: int, profile: bool) -> dict[str, object]:
    from ragdiag.tuner import ProfileTuner

    with tempfile.TemporaryDirectory() as tmp:
        ctx = _context(Path(tmp))
        tuner = ProfileTuner(ctx, "definition")
        tuner.k_slider.value = 50  # the first change (cold) is measured separately
        new_k = [_timed(_set(tuner.k_slider, k)) for k in range(51, 51 + reps)]
        sent = tuner.result.sent
        weights = [round(1.0 + 0.1 * (i + 1), 1) for i in range(reps)]
        new_w = [_timed(_set(tuner.weight_sliders[0], w)) for w in weights]
        tuner.weight_sliders[0].value = 1.0
        seen = [50, 51, 52, 53, 54] * 2
        revisit = [_timed(_set(tuner.k_slider, k)) for k in seen[:reps]]
        out: dict[str, object] = {
            "questions": len(tuner.result.cases),
            "requests_per_new_k": sent,
            "warm_new_k_ms": new_k,
            "warm_new_weight_ms": new_w,
            "warm_revisit_ms": revisit,
        }
        if profile:
            pr = cProfile.Profile()
            pr.enable()
            tuner.k_slider.value = 51 + reps + 7
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(30)
            out["profile"] = s.getvalue()
        return out


def _median(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--cold-reps", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "widget.json"))
    ap.add_argument("--cold-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cold_child:
        print(json.dumps(cold_once()))
        return

    # make sure the sample index exists before timing anything
    from ragdiag.sample.system import open_sample_target

    open_sample_target("structured", progress=True)
    colds = []
    for _ in range(args.cold_reps):
        res = subprocess.run([sys.executable, __file__, "--cold-child"], capture_output=True, text=True,
                             check=True)
        colds.append(json.loads(res.stdout.strip().splitlines()[-1]))
    w = warm(args.reps, args.profile)
    summary = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": __import__("os").cpu_count(),
        "questions": w["questions"],
        "requests_per_new_k": w["requests_per_new_k"],
        "cold": colds,
        "cold_first_change_median_ms": _median([c["first_change_ms"] for c in colds]),
        "construct_median_ms": _median([c["construct_ms"] for c in colds]),
        "warm_new_k_median_ms": _median(w["warm_new_k_ms"]),
        "warm_new_weight_median_ms": _median(w["warm_new_weight_ms"]),
        "warm_revisit_median_ms": _median(w["warm_revisit_ms"]),
        "raw": {k: v for k, v in w.items() if k.endswith("_ms")},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(f"| round trip (profile `definition`, {summary['questions']} questions) | median ms |")
    print("|---|---|")
    print(f"| tuner construction (baseline run, fresh process) | {summary['construct_median_ms']:.0f} |")
    print(f"| cold: first change k 20 → 50 (fresh process) | {summary['cold_first_change_median_ms']:.0f} |")
    print(f"| warm: k to a new value ({summary['requests_per_new_k']} requests) | "
          f"{summary['warm_new_k_median_ms']:.0f} |")
    print(f"| warm: vector weight to a new value | {summary['warm_new_weight_median_ms']:.0f} |")
    print(f"| warm: back to a setting seen before | {summary['warm_revisit_median_ms']:.1f} |")
    if args.profile:
        print(w["profile"])


if __name__ == "__main__":
    main()
