"""The full audit through the live adapter and the real SDK, against the emulator over the sample.

One module-scoped emulated audit (all ten checks, concurrency 4, with injected
429/503 faults) is compared with the local audit of the same sample config and
then inspected by the other tests: fault handling, read-only-ness, secrecy of
the key, the CLI (`--json` and `--plan` as subprocesses) and a wrong key.
Run time: about the local audit (shared with other tests through the
`misconfigured_ctx` fixture) plus about 1.5-2 minutes for the emulated audit.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("azure.search.documents")

from ragdiag.sample.live import PREVIEW_API_VERSION, emulated_config  # noqa: E402
from ragdiag.targets.emulator import Emulator, Faults  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ENV = "RAGDIAG_LIVE_TEST_KEY"
INDEX = "muster-structured"
CHECKS = ("reranker_scores", "pool_size", "prerank_filters", "shared_query_text", "chunk_boundaries",
          "route_counts", "call_sites", "context_budgets", "acl_trimming", "goldset")
# 25 % of searches fail with 429 or 503; retries = 10 makes an exhausted request
# (0.25 ** 11 per request, ~2,300 requests) practically impossible.
FAULTS = Faults(rate_429=0.2, rate_503=0.05, retry_after_s=0.05, seed=20260630)
RETRIES = 10
CONCURRENCY = 4

# Metrics that legitimately differ between the local and the emulated audit. A live
# trace carries only the returned hits (Azure exposes no pre-rerank pool), whereas a
# local trace keeps the whole fused pool; and the live target cannot name the reranker.
# Measured on the sample (misconfigured policy), statuses equal throughout:
# - reranker_scores: `reranker` is the local reranker's name, None live (AzureTarget has
#   no `reranker` attribute; Azure's semantic ranker is not introspectable).
# - pool_size: `measured_pool_median` is 233 locally (fused pool before the top-50 cut),
#   50 live: the check falls back to len(hits) when a trace has no pool. Still `fail`.
# - prerank_filters: `removed_relevant_share[fact_template: confidence_score ge 0.85]` is
#   14/123 locally and 13/123 live: the unfiltered run's relevant document that ranks
#   beyond the returned top 50 is visible in the local pool only. Still `fail`.
# - acl_trimming: `security_values_read_via` (when the check reports it) says how the
#   security values of returned documents were read: from the index records locally;
#   live (group_ids is not retrievable) by filtering on the key and the negated identity
#   clause.
LIVE_DIFFERENCES = {
    "reranker_scores": ("reranker",),
    "pool_size": ("measured_pool_median",),
    "prerank_filters": ("removed_relevant_share[",),
    "acl_trimming": ("security_values_read_via",),
}
# Checks whose requests the plan cannot predict: acl_trimming's leak probes search with
# questions taken from documents it lists per foreign group (iter_documents); the plan's
# dry run lists no documents, so it counts none of those probes (on the sample, fewer
# are planned than sent, locally and live alike).
PLAN_GAPS = ("acl_trimming",)


@dataclass
class LiveRun:
    ctx: Any
    result: Any
    config: Path
    cache_dir: Path
    seconds: float
    emu_before: dict[str, Any]
    emu_after: dict[str, Any]
    logs: str
    output: str
    searches_per_check: dict[str, int]


class _Collect(logging.Handler):
    """Every record, formatted with its traceback (caplog cannot be module-scoped)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module")
def api_key():
    key = secrets.token_hex(16)  # 32 characters
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV, key)
        yield key


@pytest.fixture(scope="module")
def local_result(misconfigured_ctx):
    """The local audit of sample_data/audit.toml (also warms the target's stage caches)."""
    from ragdiag.audit import run_checks

    return run_checks(misconfigured_ctx)


@pytest.fixture(scope="module")
def emulator(sample_target, api_key):
    with Emulator({INDEX: sample_target}, api_key=api_key, faults=FAULTS) as emu:
        yield emu


@pytest.fixture(scope="module")
def clean_emulator(sample_target, api_key):
    """No faults: request counts are exact (a retried count would be a second search)."""
    with Emulator({INDEX: sample_target}, api_key=api_key) as emu:
        yield emu


@pytest.fixture(scope="module")
def live_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("live")


@pytest.fixture(scope="module")
def live_config(emulator, live_dir):
    from ragdiag.sample.system import sample_dir

    return emulated_config(sample_dir() / "audit.toml", emulator.url, INDEX, ENV,
                           live_dir / "audit-live.toml", concurrency=CONCURRENCY, retries=RETRIES)


@pytest.fixture(scope="module")
def live_run(local_result, emulator, live_config, live_dir):
    """The full audit through AzureTarget (real SDK) against the faulty emulator."""
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config

    cache_dir = live_dir / "cache"
    handler = _Collect()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    out = io.StringIO()
    before = emulator.stats()
    marks: list[tuple[str, int]] = []
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            ctx = build_context(load_config(live_config), progress=False, cache_dir=cache_dir)
            result = run_checks(ctx, on_check=lambda cid: marks.append((cid, ctx.runner.stats.sent)))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    seconds = time.perf_counter() - t0
    ends = [n for _, n in marks[1:]] + [ctx.runner.stats.sent]
    per_check = {cid: end - start for (cid, start), end in zip(marks, ends, strict=True)}
    run = LiveRun(ctx=ctx, result=result, config=live_config, cache_dir=cache_dir, seconds=seconds,
                  emu_before=before, emu_after=emulator.stats(), logs="\n".join(handler.lines),
                  output=out.getvalue(), searches_per_check=per_check)
    yield run
    ctx.target.close()


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)  # carries ENV (monkeypatched by the api_key fixture)
    env.update({"COLUMNS": "200", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONPATH": str(ROOT)})
    env.update(extra)
    return env


def _differing_metrics(a: Any, b: Any) -> list[str]:
    out = []
    for name in sorted(set(a.metrics) | set(b.metrics)):
        x, y = a.metrics.get(name), b.metrics.get(name)
        if isinstance(x, float) and isinstance(y, float) and math.isclose(x, y, rel_tol=1e-9):
            continue
        if x != y:
            out.append(name)
    return out


# ---- parity -------------------------------------------------------------------------


def test_emulated_audit_matches_local_verdicts(local_result, live_run):
    live = live_run.result
    assert tuple(f.check_id for f in local_result.findings) == CHECKS
    assert tuple(f.check_id for f in live.findings) == CHECKS
    table = []
    for lf in local_result.findings:
        ef = live[lf.check_id]
        diff = _differing_metrics(lf, ef)
        table.append(f"{lf.check_id:18} {lf.status:8} {ef.status:8} {', '.join(diff)}")
        allowed = LIVE_DIFFERENCES.get(lf.check_id, ())
        unexpected = [m for m in diff if not m.startswith(allowed)] if allowed else diff
        assert not unexpected, f"{lf.check_id}: metrics differ beyond the pool-dependent ones: " + \
            "; ".join(f"{m}: {lf.metrics.get(m)!r} local vs {ef.metrics.get(m)!r} live" for m in unexpected)
    print(f"\nemulated audit: {live_run.seconds:.0f} s, {live_run.ctx.target.stats}")
    print("check              local    emulated differing metrics\n" + "\n".join(table))
    assert {f.check_id: f.status for f in live.findings} == \
        {f.check_id: f.status for f in local_result.findings}


# Checks re-run through the SDK's typed path (semantic ranking, filters, the goldset).
TYPED_PATH_CHECKS = ("reranker_scores", "prerank_filters", "goldset")


def test_typed_transport_gives_the_same_findings(clean_emulator, live_run, live_dir, api_key):
    """The emulated audit above used the raw-JSON transport (the default with SDK 12.x);
    the SDK's typed path, the documented fallback, yields identical findings."""
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir
    from ragdiag.targets.azure import AzureTarget

    assert live_run.ctx.target.transport == "raw"
    cfg = load_config(emulated_config(sample_dir() / "audit.toml", clean_emulator.url, INDEX, ENV,
                                      live_dir / "audit-typed.toml", concurrency=CONCURRENCY))
    t = cfg.target
    target = AzureTarget.from_env(t.endpoint, t.index, api_key_env=t.api_key_env,
                                  api_version=t.api_version, concurrency=CONCURRENCY, transport="sdk")
    ctx = build_context(cfg, progress=False, target=target, cache_dir=live_dir / "cache-typed")
    try:
        typed = run_checks(ctx, checks=list(TYPED_PATH_CHECKS))
    finally:
        target.close()
    assert target.transport == "sdk" and target.stats["failures"] == 0
    for cid in TYPED_PATH_CHECKS:
        a, b = live_run.result[cid], typed[cid]
        assert a.status == b.status, cid
        assert _differing_metrics(a, b) == [], cid


# ---- faults, read-only, metadata -------------------------------------------------------


def test_audit_completes_under_faults(live_run, emulator):
    result, target = live_run.result, live_run.ctx.target
    assert not [f.check_id for f in result.findings if f.status == "error"]
    assert live_run.ctx.runner.stats.failed == 0 and result.meta["runner"]["failed"] == 0
    assert target.stats["failures"] == 0
    faults = live_run.emu_after["faults_injected"]
    injected = faults.get("429", 0) + faults.get("503", 0)
    assert injected > 100 and set(faults) <= {"429", "503"}
    # every injected fault was seen as throttling and retried; nothing else went wrong
    assert target.stats["throttled"] == injected
    assert target.stats["retries"] == injected > 0
    assert result.meta["target_stats"] == target.stats
    assert result.meta["target_stats"]["retries"] > 0
    # every HTTP attempt of the target reached the emulator, and nothing else did
    sent = live_run.emu_after["requests"] - live_run.emu_before["requests"]
    assert sent == target.stats["requests"]
    # preview API version: maxTextRecallSize and filterOverride were sent, nothing unsent
    assert target.effective_api_version == PREVIEW_API_VERSION
    assert "unsent_parameters" not in result.meta
    assert live_run.emu_after["write_requests"] == 0


def test_unsent_parameters_reach_the_audit_meta(clean_emulator, live_dir, api_key):
    """With a GA API version, preview-only parameters are not sent, and the audit says so."""
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config
    from ragdiag.model import SearchRequest
    from ragdiag.sample.system import sample_dir

    cfg = emulated_config(sample_dir() / "audit.toml", clean_emulator.url, INDEX, ENV,
                          live_dir / "audit-ga.toml", api_version="2026-04-01", retries=0)
    ctx = build_context(load_config(cfg), progress=False, cache_dir=live_dir / "cache-ga")
    try:
        ctx.runner.execute(SearchRequest(search="payment terms", top=5, max_text_recall_size=100))
        result = run_checks(ctx, checks=["call_sites"])  # static: no further search
    finally:
        ctx.target.close()
    assert result.meta["unsent_parameters"] == {"maxTextRecallSize": 1}
    assert result.meta["target_stats"]["failures"] == 0
    assert clean_emulator.stats()["write_requests"] == 0


# ---- the key stays secret ---------------------------------------------------------------


def test_api_key_appears_nowhere(live_run, api_key):
    assert len(api_key) == 32
    text = live_run.config.read_text(encoding="utf-8")
    assert api_key not in text and f'api_key_env = "{ENV}"' in text
    assert api_key not in live_run.result.to_json()
    assert "retry" in live_run.logs  # the DEBUG records were captured (retries are logged)
    assert api_key not in live_run.logs
    assert api_key not in live_run.output
    assert api_key not in repr(live_run.ctx.target)
    for f in live_run.cache_dir.rglob("*"):
        if f.is_file():
            assert api_key.encode() not in f.read_bytes(), f"key found in {f}"


def test_cli_audit_json_subprocess(live_run, local_result, emulator, api_key, tmp_path):
    """`ragdiag audit CONFIG --json PATH` in a fresh process with the key in the environment.

    It shares the emulated run's trace cache (RAGDIAG_CACHE), so the searches answer from
    disk; the index definition, the count and the document listings still go over HTTP
    (with faults), and the CLI prints and writes everything it would in a cold run.
    """
    out = tmp_path / "findings.json"
    before = emulator.stats()
    proc = subprocess.run(
        [sys.executable, "-m", "ragdiag", "audit", str(live_run.config), "--json", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env=_env(RAGDIAG_CACHE=str(live_run.cache_dir)))
    # the default --fail-on fail: the sample's failing checks gate the exit code
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert api_key not in proc.stdout and api_key not in proc.stderr
    text = out.read_text(encoding="utf-8")
    assert api_key not in text
    data = json.loads(text)
    assert {f["check_id"]: f["status"] for f in data["findings"]} == \
        {f.check_id: f.status for f in local_result.findings}
    assert data["meta"]["target_stats"]["failures"] == 0
    assert data["meta"]["runner"]["disk_hits"] > 0
    assert re.search(r"^target: requests \d+, retries \d+, failures 0, throttled \d+", proc.stdout, re.M), \
        proc.stdout[-2000:]
    after = emulator.stats()
    assert after["requests"] > before["requests"]  # it did talk to the emulator
    assert after["write_requests"] == 0


def test_wrong_key_is_a_clear_error_naming_the_variable(clean_emulator, live_dir, api_key,
                                                       monkeypatch, capsys):
    from ragdiag.cli import main
    from ragdiag.sample.system import sample_dir

    cfg = emulated_config(sample_dir() / "audit.toml", clean_emulator.url, INDEX, ENV,
                          live_dir / "audit-wrong-key.toml", retries=2)
    wrong = secrets.token_hex(16)
    monkeypatch.setenv(ENV, wrong)
    before = clean_emulator.stats()
    code = main(["audit", str(cfg), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2
    assert ENV in captured.err and "403" in captured.err and "rejected the credentials" in captured.err
    for secret in (wrong, api_key):
        assert secret not in captured.err and secret not in captured.out
    after = clean_emulator.stats()
    assert after["auth_failures"] == before["auth_failures"] + 1  # not retried
    assert after["search_requests"] == before["search_requests"]


# ---- the plan sends nothing ---------------------------------------------------------------


def test_cli_plan_subprocess_sends_no_searches(clean_emulator, live_run, live_dir, api_key):
    from ragdiag.sample.system import sample_dir

    cfg = emulated_config(sample_dir() / "audit.toml", clean_emulator.url, INDEX, ENV,
                          live_dir / "audit-plan.toml", concurrency=CONCURRENCY, retries=RETRIES)
    before = clean_emulator.stats()
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--plan"],
                          capture_output=True, text=True, timeout=600, cwd=live_dir,
                          env=_env(RAGDIAG_CACHE=str(live_dir / "cache-plan")))
    after = clean_emulator.stats()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert api_key not in proc.stdout and api_key not in proc.stderr
    rows = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
            re.finditer(r"^\W*(\w+)\W+(\d+)\W+(\d+)\W*$", proc.stdout, re.M)}
    measurements = ("ablation", "loss_funnel")  # measured before the checks, one plan row each
    assert set(CHECKS) | set(measurements) <= set(rows), proc.stdout
    assert rows["total"][0] == sum(rows[c][0] for c in (*measurements, *CHECKS))
    # the plan predicted exactly the searches each check sent through the runner in the
    # emulated audit, except where the live requests depend on what came back (PLAN_GAPS); the
    # funnel probes only the cases whose sources missed the top, and a dry run answers nothing:
    # the plan is its upper bound
    assert live_run.searches_per_check["ablation"] == rows["ablation"][0]
    assert live_run.searches_per_check["loss_funnel"] <= rows["loss_funnel"][0]
    for cid in CHECKS:
        if cid in PLAN_GAPS:
            assert live_run.searches_per_check[cid] >= rows[cid][0], cid
        else:
            assert live_run.searches_per_check[cid] == rows[cid][0], (cid, rows[cid][0])
    assert "per question and profile" in proc.stdout
    # only the index definition (a GET) and one count (a search with top=0) reached the service
    assert after["search_requests"] - before["search_requests"] <= 1
    assert after["requests"] - before["requests"] <= 2
    assert after["write_requests"] == 0
