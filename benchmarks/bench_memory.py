"""Where an audit's memory goes: RSS of a full audit of an N-question sample goldset, broken down.

One process: the sample index open, then `build_context` and the full audit (all checks, the
loss funnel and the ablation included) over the sample goldset grown to N questions the way
`bench_scale.py` grows it (variants "Request <nonce>-<j>: <question>"; a fixed `--nonce` lets
a second run find the variants' query embeddings on disk, so the model is not loaded and the
RSS is the audit's). Printed as one JSON line: RSS before the context and after the audit
(psutil, after `gc.collect()`), the traces the runner holds, the bytes of the distinct numpy
arrays of their stage lists (ids and scores of the keyword leg, vector legs and fused pool),
the most common Python object types, and the sizes of the store's and the target's memos.

    python benchmarks/bench_memory.py 2000 [--nonce memx]
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_memory.py 2000   # that checkout's ragdiag
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", type=int)
    ap.add_argument("--nonce", default="memx")
    args = ap.parse_args()
    import bench_scale

    if os.environ.get("PYTHONPATH"):  # bench_scale put this checkout first: time the other one
        sys.path[:] = [p for p in sys.path if Path(p).resolve() != HERE.parent]
        for name in [m for m in sys.modules if m == "ragdiag" or m.startswith("ragdiag.")]:
            del sys.modules[name]
    import numpy as np
    import psutil

    import ragdiag
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import open_sample_target, sample_dir, sample_embedder

    target = open_sample_target("structured", progress=False)
    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss / 2**20
    ctx = build_context(load_config(sample_dir() / "audit.toml"), progress=False, target=target,
                        cache_dir=Path(tempfile.mkdtemp(prefix="ragdiag-bench-memory-")))
    ctx.goldset = bench_scale.goldset_of(args.questions, args.nonce)
    t0 = time.perf_counter()
    run_checks(ctx)
    wall = time.perf_counter() - t0
    gc.collect()
    rss1 = proc.memory_info().rss / 2**20
    import ctypes
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    try:  # what is live, without the freed memory glibc's heap has not returned yet
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        trimmed = round(proc.memory_info().rss / 2**20, 1)
    except OSError:
        trimmed = None
    seen: set[int] = set()
    by_stage: collections.Counter[str] = collections.Counter()

    def count(arr: object, tag: str) -> None:
        if isinstance(arr, np.ndarray):
            base = arr if arr.base is None or not isinstance(arr.base, np.ndarray) else arr.base
            if id(base) not in seen:
                seen.add(id(base))
                by_stage[tag] += base.nbytes

    memory = ctx.runner._memory
    traces = list(memory.values()) if isinstance(memory, dict) else list(memory.live())
    gold = [entry[1] for entry in getattr(ctx, "_gold_cache", {}).values()]
    gold_traces = {id(r) for run in gold for r in run.results}
    for tr in traces:
        stages = [(getattr(tr, "text", None), "text"), (getattr(tr, "pool", None), "pool")]
        stages += [(v, "vector") for v in (getattr(tr, "vectors", ()) or ())]
        for lst, tag in stages:
            if lst is not None and getattr(lst, "ids", None) is not None:
                count(lst.ids, tag + " ids")
                count(lst.score_array, tag + " scores")
    mapped: collections.Counter[str] = collections.Counter()  # RSS by mapping: the heap, files, libraries
    try:
        name = "?"
        for line in Path("/proc/self/smaps").read_text().splitlines():
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:
                name = head[5] if len(head) > 5 else "[anonymous]"
                name = name if name.startswith("[") else Path(name).name
            elif head and head[0] == "Rss:":
                mapped[name] += int(head[1])
    except OSError:
        pass
    types = collections.Counter(type(o).__name__ for o in gc.get_objects())
    store = ctx.runner.store
    print(json.dumps({
        "ragdiag": str(Path(ragdiag.__file__).parent), "questions": args.questions, "wall_s": round(wall, 1),
        "model_loaded": bool(sample_embedder().loaded),
        "rss_before_mb": round(rss0, 1), "rss_after_mb": round(rss1, 1), "rss_peak_mb": round(peak, 1), "rss_after_trim_mb": trimmed,
        "growth_mb_per_question": round((rss1 - rss0) / args.questions, 4),
        "traces_held": len(traces), "gold_runs_held": len(gold), "gold_traces_held": len(gold_traces),
        "stage_array_mb": {k: round(v / 2**20, 1) for k, v in by_stage.items()},
        "objects": dict(types.most_common(15)),
        "rss_by_mapping_mb": {k: round(v / 1024, 1) for k, v in mapped.most_common(12)},
        "store_memos": {"canonical": len(getattr(store, "_canon", {})), "pack": len(getattr(store, "_seen", {}))},
        "load_1min": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
