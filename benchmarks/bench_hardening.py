"""Hardening benchmark: mutated inputs per loader, and an audit whose search service dies.

1. Mutants: `tests/mutations.py` makes N seeded mutants of each of the sample's real input
   files (truncation, bit flips, NULs, control characters, deep nesting, huge numbers,
   long lines, duplicated/dropped lines, wrong types, other encodings, over-long paths) and
   classifies each load: a clean error with a location, another clean error, accepted, or
   a traceback. Run for this checkout and, with ``--before DIR``, for another checkout
   (e.g. main) in a child process with the same mutants.
2. Outage: `ragdiag audit` (a subprocess, the real SDK, concurrency 4, retries 4) against
   the emulator over the sample index; after 40 searches the service dies: every request
   is answered by dropping its connection (the listening socket stays open, so every
   attempt is counted). Measured: seconds from the outage to the process exit, HTTP
   attempts after the outage, exit code, findings written. The old code is given
   ``--window`` seconds and then extrapolated from its attempt rate.
3. SIGTERM after 30 searches: seconds to exit, exit code, findings written, searches after.
4. Hostile entry points (``--hostile``): every case of `tests/hostile.py` (other encodings,
   deep nesting, wrong types, empty and target-less configs, devices, FIFOs, folders and
   symlinks, sparse files beyond the limits, unreadable inputs and code as an unprivileged
   user, unwritable outputs, SQL that writes, a 10,000-field schema) as a ``ragdiag``
   process under a 6 GB address-space limit, for this checkout and ``--before``: exit code,
   internal errors, hangs, errors that name no file, per category.

    python benchmarks/bench_hardening.py [--mutants 200] [--before /work/main] [--window 120]
    python benchmarks/bench_hardening.py --hostile [--before DIR] [--only CATEGORY,...]

Results: `benchmarks/results/hardening.json` (and the tables on stdout).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = "RAGDIAG_BENCH_KEY"
INDEX = "muster-structured"
CONCURRENCY = 4
RETRIES = 4


# ---- 1. mutants -------------------------------------------------------------------------------
def _tests_module(name: str) -> Any:
    """`tests/<name>.py` of this checkout, loaded without the tests package."""
    spec = importlib.util.spec_from_file_location(f"ragdiag_bench_{name}", ROOT / "tests" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def child_mutations(n: int, legacy: bool) -> dict[str, Any]:
    """Run in the checkout on sys.path: outcome counts per subject (and first tracebacks)."""
    m = _tests_module("mutations")
    work = Path(tempfile.mkdtemp(prefix="ragdiag-mutants-"))
    out: dict[str, Any] = {}
    for s in m.subjects(work, legacy=legacy, base=ROOT / "ragdiag" / "sample" / "data",
                        specs=ROOT / "ragdiag" / "checks" / "specs"):
        counts: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        longest = 0
        t0 = time.perf_counter()
        for mutant in m.mutants(s, n, seed=2026):
            result, message = m.outcome(s, mutant, work)
            counts[result] += 1
            if result == "traceback":
                kinds[f"{mutant.op}: {message.splitlines()[0].split(':')[0]}"] += 1
            elif result != "accepted":
                longest = max(longest, len(message))
        out[s.name] = {"counts": dict(counts), "tracebacks": dict(kinds.most_common(8)),
                       "longest_message": longest, "seconds": round(time.perf_counter() - t0, 2)}
    return out


def run_mutations(code: Path, n: int, legacy: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, __file__, "--child-mutations", str(n)]
                          + (["--legacy"] if legacy else []), capture_output=True, text=True, env=env,
                          cwd=str(code), timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"mutation child failed ({code}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _is_legacy(code: Path) -> bool:
    return not (code / "ragdiag" / "inputs" / "entities.py").exists()


# ---- 2./3. the live audit against a dying or signalled run ------------------------------------
class _Counting:
    """Replaces Emulator.handle: the service is dead, every request's connection is dropped."""

    def __init__(self) -> None:
        self.n = 0
        self.lock = threading.Lock()

    def __call__(self, handler: Any, method: str) -> None:
        with self.lock:
            self.n += 1
        handler.drop()


def _audit(code: Path, cfg: Path, out: Path, key: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, ENV: key, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--json", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(cwd))


def _wait_searches(emu: Any, proc: subprocess.Popen, n: int) -> None:
    while emu.stats()["search_requests"] < n:
        if proc.poll() is not None:
            raise SystemExit(f"the audit ended early: {proc.communicate()[1][-2000:]}")
        time.sleep(0.05)


def _config(emu_url: str, tmp: Path, name: str) -> Path:
    from ragdiag.sample.live import emulated_config

    return emulated_config(ROOT / "ragdiag" / "sample" / "data" / "audit.toml", emu_url, INDEX, ENV,
                           tmp / f"{name}.toml", concurrency=CONCURRENCY, retries=RETRIES, cache=False)


def run_outage(target: Any, code: Path, window: float, tmp: Path, planned: int) -> dict[str, Any]:
    from ragdiag.targets.emulator import Emulator

    key = secrets.token_hex(16)
    emu = Emulator({INDEX: target}, api_key=key)
    emu.start()
    cfg = _config(emu.url, tmp, f"outage-{code.name}")
    out = tmp / f"outage-{code.name}.json"
    proc = _audit(code, cfg, out, key, tmp)
    _wait_searches(emu, proc, 40)
    before = emu.stats()
    dead = _Counting()
    emu.handle = dead
    t0 = time.perf_counter()
    try:
        proc.wait(timeout=window)
        finished = True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        finished = False
    seconds = time.perf_counter() - t0
    emu.stop()
    res: dict[str, Any] = {"code": str(code), "finished": finished, "seconds_after_outage": round(seconds, 1),
                           "exit_code": proc.returncode, "attempts_after_outage": dead.n,
                           "searches_before_outage": before["search_requests"],
                           "findings_written": out.exists()}
    if out.exists():
        meta = json.loads(out.read_text(encoding="utf-8"))["meta"]
        res["runner"] = meta.get("runner")
        res["circuit_breaker"] = meta.get("circuit_breaker")
    if not finished:
        rate = dead.n / seconds
        remaining = max(0, planned - before["search_requests"])
        per_request = RETRIES + 1
        res["attempts_per_second"] = round(rate, 2)
        res["estimated_attempts_to_finish"] = remaining * per_request
        res["estimated_seconds_to_finish"] = round(remaining * per_request / rate) if rate else None
    return res


def run_sigterm(target: Any, code: Path, tmp: Path) -> dict[str, Any]:
    from ragdiag.targets.emulator import Emulator

    key = secrets.token_hex(16)
    with Emulator({INDEX: target}, api_key=key) as emu:
        cfg = _config(emu.url, tmp, f"sigterm-{code.name}")
        out = tmp / f"sigterm-{code.name}.json"
        proc = _audit(code, cfg, out, key, tmp)
        _wait_searches(emu, proc, 30)
        at = emu.stats()["search_requests"]
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        seconds = time.perf_counter() - t0
        after = emu.stats()["search_requests"] - at
    res = {"code": str(code), "exit_code": proc.returncode, "seconds_to_exit": round(seconds, 1),
           "searches_after_signal": after, "findings_written": out.exists(),
           "stderr_tail": (proc.stderr.read() if proc.stderr else "")[-300:]}
    if out.exists():
        res["interrupted"] = json.loads(out.read_text(encoding="utf-8"))["meta"].get("interrupted")
    return res


def planned_searches() -> int:
    """Searches the sample audit sends (the plan of the local sample, nothing is searched)."""
    import ragdiag.engine.context as context
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.plan import plan_audit

    if not hasattr(context, "run_checks"):  # plan.py imports it from there (broken on this base)
        context.run_checks = run_checks

    ctx = build_context(load_config(ROOT / "ragdiag" / "sample" / "data" / "audit.toml"), progress=False)
    _, summary = plan_audit(ctx)
    return int(summary["searches"])


# ---- 4. hostile entry points -------------------------------------------------------------------
ADDRESS_SPACE = 6 << 30  # the limit: a loader that allocates its whole size limit fails
NOBODY = 65534


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_case(case: Any, code: Path, work: Path, cache: Path, nobody_home: Path) -> dict[str, Any]:
    """One case as a ragdiag process of checkout `code`: exit code, output, time."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "RAGDIAG_CACHE": str(cache), "COLUMNS": "200", "RAGDIAG_HOSTILE_NO_DSN": ""}
    env.pop("RAGDIAG_HOSTILE_NO_DSN")
    kw: dict[str, Any] = {}
    if case.unprivileged:
        if os.geteuid() != 0:
            return {"skipped": "needs root to run as an unprivileged user"}
        kw = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
        env.update(HOME=str(nobody_home), RAGDIAG_CACHE=str(nobody_home / "cache"))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "ragdiag", *case.argv], capture_output=True, text=True,
                              env=env, cwd=str(work), timeout=case.timeout, preexec_fn=_limit_memory,
                              errors="replace", **kw)
        code_, out, err, hung = proc.returncode, proc.stdout, proc.stderr, False
    except subprocess.TimeoutExpired as exc:
        code_, hung = None, True
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    seconds = time.perf_counter() - t0
    return {"exit": code_, "hung": hung, "seconds": round(seconds, 2), "stdout": out[-20000:],
            "stderr": err[-4000:]}


def run_hostile(codes: dict[str, Path], only: list[str] | None) -> dict[str, Any]:
    hostile = _tests_module("hostile")
    work = Path(tempfile.mkdtemp(prefix="ragdiag-hostile-"))
    os.chmod(work, 0o755)
    nobody_home = work / "nobody-home"
    nobody_home.mkdir()
    if os.geteuid() == 0:
        os.chown(nobody_home, NOBODY, NOBODY)
    corpus = hostile.build(work / "corpus", unprivileged=os.geteuid() == 0)
    cases = [k for k in corpus.cases if not only or k.category in only]
    cache = Path(os.environ.get("RAGDIAG_CACHE") or Path.home() / ".cache" / "ragdiag")
    out: dict[str, Any] = {"cases": len(cases), "per_checkout": {}}
    for label, code in codes.items():
        rows = []
        t0 = time.perf_counter()
        for case in cases:
            r = run_case(case, code, work, cache, nobody_home)
            if "skipped" in r:
                rows.append({"id": case.id, "category": case.category, **r})
                continue
            problems = hostile.judge(case, r["exit"], r["stdout"], r["stderr"], r["hung"])
            rows.append({"id": case.id, "category": case.category, "exit": r["exit"], "hung": r["hung"],
                         "seconds": r["seconds"], "problems": problems,
                         "internal": hostile.INTERNAL in r["stderr"],
                         "stderr_tail": r["stderr"].strip().splitlines()[-1][:300] if r["stderr"].strip() else ""})
            print(f"[{label}] {case.id}: exit {r['exit']}{' HUNG' if r['hung'] else ''} {r['seconds']:.1f} s"
                  + (f" -- {problems[0][:160]}" if problems else ""), file=sys.stderr)
        out["per_checkout"][label] = {"seconds": round(time.perf_counter() - t0), "rows": rows}
    hostile.chmod_back(work)
    shutil.rmtree(work, ignore_errors=True)
    return out


def hostile_table(res: dict[str, Any]) -> str:
    labels = list(res["per_checkout"])
    cats: dict[str, Counter[str]] = {}
    for lab in labels:
        for r in res["per_checkout"][lab]["rows"]:
            cats.setdefault(r["category"], Counter())
    head = ("| category | cases | " + " | ".join(
        f"{lab}: exit codes | {lab}: internal / hung / unlocated / other wrong" for lab in labels) + " |")
    lines = [head, "|---|---|" + "---|---|" * len(labels)]
    totals = {lab: Counter() for lab in labels}
    for cat in cats:
        cells = []
        n = 0
        for lab in labels:
            rows = [r for r in res["per_checkout"][lab]["rows"] if r["category"] == cat and "skipped" not in r]
            n = len(rows)
            exits = Counter("hung" if r["hung"] else str(r["exit"]) for r in rows)
            internal = sum(1 for r in rows if r["internal"])
            hung = sum(1 for r in rows if r["hung"])
            unlocated = sum(1 for r in rows if any("does not name" in p or "gives no line" in p
                                                   for p in r["problems"]))
            wrong = sum(1 for r in rows if r["problems"]) - internal - hung - unlocated
            totals[lab].update({"n": n, "internal": internal, "hung": hung, "unlocated": unlocated,
                                "wrong": max(0, wrong), **{f"exit {k}": v for k, v in exits.items()}})
            cells.append(", ".join(f"{k}: {v}" for k, v in sorted(exits.items())))
            cells.append(f"{internal} / {hung} / {unlocated} / {max(0, wrong)}")
        lines.append(f"| {cat} | {n} | " + " | ".join(cells) + " |")
    cells = []
    for lab in labels:
        t = totals[lab]
        cells.append(", ".join(f"{k[5:]}: {v}" for k, v in sorted(t.items()) if k.startswith("exit ")))
        cells.append(f"{t['internal']} / {t['hung']} / {t['unlocated']} / {t['wrong']}")
    lines.append(f"| **all** | {totals[labels[0]]['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---- report ------------------------------------------------------------------------------------
def mutation_table(results: dict[str, dict[str, Any]]) -> str:
    labels = list(results)
    head = "| loader | " + " | ".join(f"{lab}: located / other clean / accepted / traceback" for lab in labels) + " |"
    lines = [head, "|---|" + "---|" * len(labels)]
    names = list(next(iter(results.values())))
    total = {lab: Counter() for lab in labels}
    for name in names:
        cells = []
        for lab in labels:
            c = results[lab].get(name, {}).get("counts", {})
            total[lab].update(c)
            cells.append(f"{c.get('located', 0)} / {c.get('clean', 0)} / {c.get('accepted', 0)} / "
                         f"**{c.get('traceback', 0)}**")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **all** | " + " | ".join(
        f"{t['located']} / {t['clean']} / {t['accepted']} / **{t['traceback']}**" for t in total.values()) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=200, help="mutants per loader (default 200)")
    ap.add_argument("--before", help="another checkout to measure the same way (e.g. /work/main)")
    ap.add_argument("--window", type=float, default=120.0,
                    help="seconds the old code may run after the outage before it is extrapolated")
    ap.add_argument("--skip-live", action="store_true", help="mutants only")
    ap.add_argument("--hostile", action="store_true", help="only the hostile entry-point corpus (tests/hostile.py)")
    ap.add_argument("--only", help="with --hostile: comma-separated categories")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "hardening.json"))
    ap.add_argument("--child-mutations", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--legacy", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_mutations:
        print(json.dumps(child_mutations(args.child_mutations, args.legacy)))
        return

    codes = {"this branch": ROOT}
    if args.before:
        codes["before"] = Path(args.before).resolve()
    if args.hostile:
        out = Path(args.out if args.out != ap.get_default("out") else ROOT / "benchmarks" / "results" / "hostile.json")
        res = run_hostile(codes, args.only.split(",") if args.only else None)
        res["machine"] = f"{platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at end"
        print(hostile_table(res))
        for lab, per in res["per_checkout"].items():
            bad = [r for r in per["rows"] if r.get("problems")]
            print(f"\n{lab}: {len(bad)} of {len(per['rows'])} cases wrong ({per['seconds']} s)")
            for r in bad:
                print(f"  {r['id']}: {r['problems'][0][:200]}")
        for per in res["per_checkout"].values():
            for r in per["rows"]:
                r.pop("stdout", None)
                if not r.get("problems"):
                    r.pop("stderr_tail", None)  # kept where something went wrong
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=1), encoding="utf-8")
        print(f"\nwritten to {out}", file=sys.stderr)
        return
    load = os.getloadavg()[0]
    report: dict[str, Any] = {"machine": f"{platform.python_version()}, {os.cpu_count()} CPUs, "
                                         f"load {load:.1f} at start", "mutants_per_loader": args.mutants}
    mutations = {}
    for label, code in codes.items():
        t0 = time.perf_counter()
        mutations[label] = run_mutations(code, args.mutants, _is_legacy(code))
        print(f"mutants on {label}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    report["mutations"] = mutations
    print(mutation_table(mutations))
    for label, res in mutations.items():
        kinds = Counter()
        for r in res.values():
            kinds.update(r["tracebacks"])
        if kinds:
            print(f"\ntracebacks on {label}, by operator and exception: " +
                  ", ".join(f"{k} {v}" for k, v in kinds.most_common(12)))
        print(f"longest error message on {label}: {max(r['longest_message'] for r in res.values()):,} characters")

    if not args.skip_live:
        from ragdiag.sample.system import open_sample_target

        target = open_sample_target("structured", progress=False)
        planned = planned_searches()
        report["planned_searches"] = planned
        tmp = Path(tempfile.mkdtemp(prefix="ragdiag-bench-"))
        report["outage"] = {}
        report["sigterm"] = {}
        for label, code in codes.items():
            report["outage"][label] = run_outage(target, code, args.window, tmp, planned)
            print(f"outage on {label}: {json.dumps(report['outage'][label])}", file=sys.stderr)
            report["sigterm"][label] = run_sigterm(target, code, tmp)
            print(f"sigterm on {label}: {json.dumps(report['sigterm'][label])}", file=sys.stderr)
        print("\n| run | outage to exit (s) | HTTP attempts after the outage | exit | findings written |")
        print("|---|---|---|---|---|")
        for label, r in report["outage"].items():
            secs = (f"{r['seconds_after_outage']}" if r["finished"] else
                    f"> {r['seconds_after_outage']} (killed; ~{r.get('estimated_seconds_to_finish')} estimated)")
            att = (f"{r['attempts_after_outage']}" if r["finished"] else
                   f"{r['attempts_after_outage']} in the window (~{r.get('estimated_attempts_to_finish')} to finish)")
            print(f"| {label} | {secs} | {att} | {r['exit_code']} | {r['findings_written']} |")
        print("\n| run | SIGTERM to exit (s) | searches after the signal | exit | findings written |")
        print("|---|---|---|---|---|")
        for label, r in report["sigterm"].items():
            print(f"| {label} | {r['seconds_to_exit']} | {r['searches_after_signal']} | {r['exit_code']} | "
                  f"{r['findings_written']} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
