"""The full audit through the live adapter (real SDK) against the emulator over the sample.

    .venv/bin/python benchmarks/bench_live.py [--concurrency 1,4,8] [--latency-ms 0,20]
                                              [--out benchmarks/results/live.json]
    .venv/bin/python benchmarks/bench_live.py --client-cpu [--cpu-reps 3] [--cpu-requests N]

(a) Requests per question and profile: what the emulator received during the full
    audit (search requests, and all requests including the index definition read)
    divided by goldset questions x policy profiles, beside what `audit --plan`
    predicted (per check, too). Goal: <= 1.5.
(b) Wall time of the full emulated audit (all ten checks) at each concurrency, with a
    fresh trace cache every time, without and with added service latency
    (`Faults(latency_ms=...)`).

The emulator runs in this process, on the local target that the local audit (run
first, timed as a reference) has warmed: the local target's stage caches (keyword
legs, vector legs, reranker scores) then answer most of the emulator's searches, so
the emulated runs time the HTTP + JSON + SDK path, not the local search engine.
The emulator serialises searches per index behind a lock, and client (SDK model
deserialisation) and server (JSON encoding) share this process's GIL on two cores:
concurrency mostly overlaps HTTP and JSON work. The added latency is slept outside
the index lock, as a real service's network and queueing time would be, so the
latency runs show what concurrency buys against a service that takes time to answer.

(c) `--client-cpu`: client CPU per search request, the raw-JSON transport against the
    SDK's typed path. The emulator runs as a separate process (`ragdiag serve`), so the
    client's CPU (`time.process_time()` of this process: all its threads, including the
    target's event loop) is measured apart from the emulator's (utime + stime of the
    server process, from /proc). One full audit through `AzureTarget` (transport auto)
    records the searches the runner sent; then passes of those searches, one at a time,
    alternate between the variants (`--cpu-variants`: "before" = the SDK's typed path with
    aiohttp's per-request proxy and netrc lookups, as the target sent searches before the
    raw-JSON transport; "sdk" = the typed path now; "raw" = the raw-JSON transport; the
    order reverses every repetition), each on a fresh target after a short untimed
    warm-up, so that all see the same load. Results in `benchmarks/results/live_cpu.json`.

`--tcp-nodelay on` sets TCP_NODELAY on the emulator's accepted sockets (patched in
from here). As shipped, the emulator writes the response headers and the body in two
send() calls; on a keep-alive connection Nagle's algorithm holds the body until the
client ACKs the headers, and the client delays that ACK (~40 ms on Linux): about
45 ms lost per request. `on` shows the figures with that fixed; once
ragdiag/emulator/server.py sets TCP_NODELAY itself both variants measure the same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import secrets
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ENV = "RAGDIAG_BENCH_LIVE_KEY"
INDEX = "muster-structured"


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


@contextlib.contextmanager
def _tcp_nodelay(on: bool):
    """TCP_NODELAY on the emulator's accepted sockets while the block runs (when `on`)."""
    from ragdiag.targets.emulator import server as srv

    if not on:
        yield
        return
    orig = srv._Handler.setup

    def setup(self) -> None:
        orig(self)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    srv._Handler.setup = setup
    try:
        yield
    finally:
        srv._Handler.setup = orig


def _emulated_run(target, base_config: Path, *, concurrency: int, latency_ms: float, key: str,
                  nodelay: bool) -> dict:
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.live import emulated_config
    from ragdiag.targets.emulator import Emulator, Faults

    with tempfile.TemporaryDirectory(prefix="ragdiag-live-") as tmp, _tcp_nodelay(nodelay), \
            Emulator({INDEX: target}, api_key=key, faults=Faults(latency_ms=latency_ms)) as emu:
        cfg = emulated_config(base_config, emu.url, INDEX, ENV, Path(tmp) / "audit-live.toml",
                              concurrency=concurrency, retries=4)
        load = _load()
        marks: list[tuple[str, int, int]] = []
        t0 = time.perf_counter()
        ctx = build_context(load_config(cfg), progress=False, cache_dir=Path(tmp) / "cache")
        try:
            def mark(cid: str) -> None:
                marks.append((cid, ctx.runner.stats.sent, emu.stats()["search_requests"]))

            result = run_checks(ctx, on_check=mark)
            wall = time.perf_counter() - t0
            stats = emu.stats()
            ends = [(s, e) for _, s, e in marks[1:]] + [(ctx.runner.stats.sent, stats["search_requests"])]
            per_check = {cid: {"runner_sent": end[0] - s, "emulator_searches": end[1] - e}
                         for (cid, s, e), end in zip(marks, ends, strict=True)}
            return {
                "concurrency": concurrency, "latency_ms": latency_ms,
                "tcp_nodelay": "forced on" if nodelay else "as shipped", "wall_s": round(wall, 1),
                "load_1min_before": round(load, 2),
                "emulator": {k: stats[k] for k in ("requests", "search_requests", "write_requests",
                                                    "auth_failures")},
                "target_stats": dict(ctx.target.stats),
                "runner": ctx.runner.stats.to_dict(),
                "per_check": per_check,
                "statuses": {f.check_id: f.status for f in result.findings},
            }
        finally:
            ctx.target.close()


def _plan(target, base_config: Path, key: str) -> dict:
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.plan import plan_audit
    from ragdiag.sample.live import emulated_config
    from ragdiag.targets.emulator import Emulator

    with tempfile.TemporaryDirectory(prefix="ragdiag-plan-") as tmp, \
            Emulator({INDEX: target}, api_key=key) as emu:
        cfg = emulated_config(base_config, emu.url, INDEX, ENV, Path(tmp) / "audit-live.toml")
        ctx = build_context(load_config(cfg), progress=False, cache_dir=Path(tmp) / "cache")
        try:
            rows, summary = plan_audit(ctx)
        finally:
            ctx.target.close()
        stats = emu.stats()
    return {"summary": summary, "per_check": {r.check_id: {"searches": r.searches, "other": r.other}
                                              for r in rows},
            "emulator_during_plan": {k: stats[k] for k in ("requests", "search_requests")}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _proc_cpu_s(pid: int) -> float:
    """utime + stime of another process, in seconds (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _serve(key: str):
    """`ragdiag serve` in a subprocess on a free port; yields (url, pid)."""
    import subprocess

    port = _free_port()
    env = {**os.environ, ENV: key, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ragdiag", "serve", "--port", str(port),
                             "--api-key-env", ENV, "--index", f"{INDEX}=structured"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if "emulator on" not in line:
            raise RuntimeError(f"ragdiag serve did not start: {line!r}")
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def client_cpu(args: argparse.Namespace) -> int:
    """(c): client CPU per request, raw-JSON transport vs the SDK's typed path."""
    from azure.core.credentials import AzureKeyCredential

    from ragdiag import __version__
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.live import PREVIEW_API_VERSION, emulated_config
    from ragdiag.sample.system import sample_dir
    from ragdiag.targets.azure import AzureTarget, sdk_version

    key = secrets.token_hex(16)
    os.environ[ENV] = key
    with _serve(key) as (url, pid), tempfile.TemporaryDirectory(prefix="ragdiag-cpu-") as tmp:
        cfg = emulated_config(sample_dir() / "audit.toml", url, INDEX, ENV, Path(tmp) / "a.toml",
                              concurrency=4, retries=4)
        ctx = build_context(load_config(cfg), progress=False, cache_dir=Path(tmp) / "cache")
        requests = []
        search = ctx.target.search

        def recording(req):
            requests.append(req)
            return search(req)

        ctx.target.search = recording
        load0, c0, t0 = _load(), time.process_time(), time.perf_counter()
        run_checks(ctx)
        audit = {"transport": ctx.target.transport, "searches": len(requests),
                 "http_requests": ctx.target.stats["requests"],
                 "wall_s": round(time.perf_counter() - t0, 1),
                 "client_cpu_s": round(time.process_time() - c0, 1), "load_1min_before": round(load0, 2)}
        ctx.target.close()
        print(f"recorded {len(requests)} searches from the full audit: {audit}", flush=True)
        if args.cpu_requests and args.cpu_requests < len(requests):
            step = len(requests) / args.cpu_requests
            requests = [requests[int(i * step)] for i in range(args.cpu_requests)]

        variants = [v.strip() for v in args.cpu_variants.split(",")]
        passes = []
        for rep in range(args.cpu_reps):
            for variant in (variants if rep % 2 == 0 else variants[::-1]):
                transport = "sdk" if variant == "before" else variant
                t = AzureTarget(url, INDEX, credential=AzureKeyCredential(key), api_key_env=ENV,
                                api_version=PREVIEW_API_VERSION, transport=transport)
                if variant == "before":  # the typed path as it was: aiohttp's env lookups on
                    t._env_settings = True
                try:
                    for req in requests[:20]:  # warm-up: connection, schema, code paths
                        t.search(req)
                    load, e0 = _load(), _proc_cpu_s(pid)
                    c0, t0 = time.process_time(), time.perf_counter()
                    hits = sum(len(t.search(req).hits) for req in requests)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    emu_cpu = _proc_cpu_s(pid) - e0
                finally:
                    t.close()
                n = len(requests)
                row = {"rep": rep + 1, "variant": variant, "transport": transport,
                       "use_env_settings": t._env_settings, "requests": n, "hits": hits,
                       "client_cpu_ms_per_request": round(1000 * cpu / n, 3),
                       "emulator_cpu_ms_per_request": round(1000 * emu_cpu / n, 3),
                       "wall_ms_per_request": round(1000 * wall / n, 3),
                       "load_1min_before": round(load, 2)}
                passes.append(row)
                print(row, flush=True)
    summary: dict = {}
    for variant in variants:
        mine = [p for p in passes if p["variant"] == variant]
        summary[variant] = {k: round(statistics.median(p[k] for p in mine), 3) for k in
                            ("client_cpu_ms_per_request", "emulator_cpu_ms_per_request",
                             "wall_ms_per_request")}
    if "raw" in variants:
        for variant in variants:
            if variant == "raw":
                continue
            ratios = []
            for rep in range(1, args.cpu_reps + 1):
                by = {p["variant"]: p for p in passes if p["rep"] == rep}
                ratios.append(by[variant]["client_cpu_ms_per_request"]
                              / by["raw"]["client_cpu_ms_per_request"])
            summary[f"ratio_{variant}_to_raw_client_cpu"] = {
                "per_rep": [round(r, 2) for r in ratios], "median": round(statistics.median(ratios), 2)}
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "ragdiag": __version__,
                       "azure_search_documents": ".".join(map(str, sdk_version()))},
           "api_version": PREVIEW_API_VERSION, "recording_audit": audit, "passes": passes,
           "summary": summary}
    path = Path(args.cpu_out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))
    print(f"written to {path}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", default="1,4,8")
    ap.add_argument("--latency-ms", default="0,20")
    ap.add_argument("--tcp-nodelay", default="off,on",
                    help="off (the emulator as shipped), on (TCP_NODELAY patched in), or both")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "live.json"))
    ap.add_argument("--client-cpu", action="store_true",
                    help="only (c): client CPU per request, raw-JSON vs typed SDK transport")
    ap.add_argument("--cpu-reps", type=int, default=3, help="(c): passes per transport")
    ap.add_argument("--cpu-requests", type=int, default=0,
                    help="(c): replay an evenly spaced subset of this many searches (0: all)")
    ap.add_argument("--cpu-variants", default="before,sdk,raw",
                    help="(c): before (the typed path with aiohttp's per-request proxy/netrc "
                         "lookups, as on main), sdk (the typed path now), raw (the raw-JSON path)")
    ap.add_argument("--cpu-out", default=str(ROOT / "benchmarks" / "results" / "live_cpu.json"))
    args = ap.parse_args()
    if args.client_cpu:
        return client_cpu(args)
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    latencies = [float(x) for x in args.latency_ms.split(",")]
    nodelays = [{"off": False, "on": True}[x.strip()] for x in args.tcp_nodelay.split(",")]

    from ragdiag import __version__
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import open_sample_target, sample_dir
    from ragdiag.targets.azure import sdk_version

    key = secrets.token_hex(16)
    os.environ[ENV] = key
    base = sample_dir() / "audit.toml"
    t0 = time.perf_counter()
    target = open_sample_target("structured", progress=False)
    open_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory(prefix="ragdiag-local-") as tmp:
        load = _load()
        t0 = time.perf_counter()
        lctx = build_context(load_config(base), progress=False, cache_dir=Path(tmp))
        local = run_checks(lctx)
        local_s = time.perf_counter() - t0
    print(f"local audit: {local_s:.1f} s (load {load:.1f}), {lctx.runner.stats.sent} requests", flush=True)
    local_statuses = {f.check_id: f.status for f in local.findings}

    plan = _plan(target, base, key)
    qp = plan["summary"]["questions"] * plan["summary"]["profiles"]
    print(f"plan: {plan['summary']}", flush=True)

    runs = []
    for nodelay in nodelays:
        for latency in latencies:
            for conc in concurrencies:
                run = _emulated_run(target, base, concurrency=conc, latency_ms=latency, key=key,
                                    nodelay=nodelay)
                run["statuses_equal_local"] = run["statuses"] == local_statuses
                runs.append(run)
                print(f"{run['tcp_nodelay']}, latency {latency:g} ms, concurrency {conc}: {run['wall_s']} s "
                      f"(load {run['load_1min_before']}), emulator {run['emulator']}", flush=True)

    first = runs[0]
    ratio = {
        "questions": plan["summary"]["questions"], "profiles": plan["summary"]["profiles"],
        "emulator_search_requests": first["emulator"]["search_requests"],
        "emulator_requests_all": first["emulator"]["requests"],
        "per_question_and_profile_received": round(first["emulator"]["search_requests"] / qp, 3),
        "per_question_and_profile_received_all": round(first["emulator"]["requests"] / qp, 3),
        "plan_total_requests": plan["summary"]["total_requests"],
        "per_question_and_profile_planned": round(plan["summary"]["total_requests"] / qp, 3),
        "goal": 1.5,
        "same_count_every_run": len({r["emulator"]["search_requests"] for r in runs}) == 1,
    }
    out = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "ragdiag": __version__, "azure_search_documents": ".".join(map(str, sdk_version()))},
        "open_index_s": round(open_s, 1),
        "local_audit": {"wall_s": round(local_s, 1), "load_1min_before": round(load, 2),
                        "runner_sent": lctx.runner.stats.sent, "statuses": local_statuses},
        "plan": plan,
        "requests_per_question_and_profile": ratio,
        "runs": runs,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(ratio, indent=2))
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
