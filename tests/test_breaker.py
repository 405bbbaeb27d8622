"""The circuit breaker: a dead service stops the audit within a few requests, not minutes;
SIGINT/SIGTERM stop sending the same way and the partial result says so."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from ragdiag.engine.breaker import CircuitBreaker
from ragdiag.engine.runner import Failure, Runner
from ragdiag.errors import TargetError, TargetUnavailableError
from ragdiag.model import Hit, RankedList, SearchRequest, Trace


# ---- the breaker itself -----------------------------------------------------------------------
def test_opens_after_consecutive_failures_and_a_success_resets_the_count():
    opened = []
    b = CircuitBreaker(3, on_open=opened.append)
    assert not b.failure("refused") and not b.failure("refused")
    b.success()
    assert b.consecutive == 0
    assert not b.failure("a") and not b.failure("b")
    assert b.allow() is None
    assert b.failure("connection refused")
    assert b.is_open and b.kind == "circuit_open"
    assert b.reason == "circuit open after 3 consecutive connection failures: connection refused"
    assert b.allow() == b.reason
    assert opened == [b.reason + "; nothing more is sent"]
    assert not b.failure("later")  # already open: the first reason stays
    b.success()
    assert b.is_open  # an answer does not close an open breaker
    assert b.to_dict()["connection_failures"] == 6
    b.reset()
    assert not b.is_open and b.allow() is None and b.failures == 0


def test_trip_opens_at_once_and_keeps_the_first_reason():
    b = CircuitBreaker()
    b.trip("the audit was interrupted by SIGTERM")
    assert b.kind == "interrupted" and b.reason == "the audit was interrupted by SIGTERM"
    b.trip("again")
    assert b.reason == "the audit was interrupted by SIGTERM"


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "5"])
def test_threshold_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError):
        CircuitBreaker(bad)


def test_thread_safe_counting():
    b = CircuitBreaker(10_000)

    def hammer():
        for _ in range(1000):
            b.failure("x")

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert b.failures == 8000 and not b.is_open


# ---- the runner --------------------------------------------------------------------------------
class DyingTarget:
    """Answers `alive` requests, then every request fails as if the service were gone."""

    name = "dying"

    def __init__(self, alive: int, error: Exception | None = None) -> None:
        self.alive = alive
        self.calls = 0
        self.error = error or TargetUnavailableError("search failed after 5 attempt(s): connection "
                                                     "failed (ServiceRequestError: refused)")
        self.lock = threading.Lock()

    def fingerprint(self) -> str:
        return "dying-v1"

    def search(self, request: SearchRequest) -> Trace:
        with self.lock:
            self.calls += 1
            n = self.calls
        if n > self.alive:
            raise self.error
        key = request.search or "none"
        return Trace(request=request, hits=(Hit(key=key, score=1.0),),
                     pool=RankedList("fused", (key,), (1.0,)), target=self.name)


def _reqs(n: int, prefix: str = "q") -> list[SearchRequest]:
    return [SearchRequest(search=f"{prefix}{i}") for i in range(n)]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_dead_service_costs_threshold_requests_then_nothing_is_sent(concurrency):
    t = DyingTarget(alive=10)
    r = Runner(t, concurrency=concurrency, max_consecutive_failures=5)
    out = r.run(_reqs(500))
    sent_after_outage = t.calls - 10
    assert 5 <= sent_after_outage <= 5 + concurrency  # in-flight requests may still finish
    failures = [o for o in out if isinstance(o, Failure)]
    assert len(failures) == 490
    unsent = [f for f in failures if f.kind == "circuit_open"]
    assert len(unsent) == 500 - t.calls == r.stats.not_sent
    assert unsent[0].reason.startswith("not sent: circuit open after 5 consecutive connection "
                                       "failures: search failed after 5 attempt(s)")
    assert r.breaker.is_open and r.stats.failed == t.calls - 10


def test_requests_the_service_refused_do_not_count():
    """A 4xx that is the request's own fault says nothing about the service being down."""
    t = DyingTarget(alive=0, error=TargetError("the search service rejected the search (HTTP 400): "
                                               "Invalid expression"))
    r = Runner(t, max_consecutive_failures=3)
    r.run(_reqs(50))
    assert t.calls == 50 and not r.breaker.is_open and r.stats.not_sent == 0


def test_builtin_connection_errors_of_a_plugin_target_count():
    t = DyingTarget(alive=0, error=ConnectionRefusedError(111, "Connection refused"))
    r = Runner(t, max_consecutive_failures=2)
    out = r.run(_reqs(10))
    assert t.calls == 2 and all(isinstance(o, Failure) for o in out)
    assert "ConnectionRefusedError" in out[0].reason


def test_a_success_between_failures_keeps_the_circuit_closed():
    class Flaky(DyingTarget):
        def search(self, request):
            with self.lock:
                self.calls += 1
                n = self.calls
            if n % 3 == 0:  # every third request answers
                return Trace(request=request, hits=(), target=self.name)
            raise self.error

    t = Flaky(alive=0)
    r = Runner(t, max_consecutive_failures=3)
    r.run(_reqs(60))
    assert t.calls == 60 and not r.breaker.is_open


def test_cached_traces_still_answer_while_open():
    t = DyingTarget(alive=3)
    r = Runner(t, max_consecutive_failures=2)
    first = r.run(_reqs(3))
    r.run(_reqs(5, "x"))
    assert r.breaker.is_open
    again = r.run(_reqs(3))
    assert [o.keys for o in again] == [o.keys for o in first]


def test_a_target_with_a_retry_gate_gets_the_breaker():
    class Gated(DyingTarget):
        capabilities = frozenset({"retries"})  # declared: the runner never guesses from the attribute
        retry_gate = None

    t = Gated(alive=1)
    r = Runner(t)
    assert t.retry_gate is r.breaker

    class Undeclared(DyingTarget):
        retry_gate = None

    u = Undeclared(alive=1)
    Runner(u)
    assert u.retry_gate is None


def test_the_config_sets_the_threshold(tmp_path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    p = tmp_path / "audit.toml"
    p.write_text("[runner]\nmax_consecutive_failures = 2\ncache = false\n", encoding="utf-8")
    ctx = build_context(load_config(p), progress=False)
    assert ctx.runner.breaker.threshold == 2


# ---- run_checks: the breaker and signals on a hand-made world --------------------------------------------
@pytest.fixture()
def world_ctx(tmp_path):
    from tests.test_checks_minimal import BAD_SCORES, FAULTY, _ctx

    return _ctx(tmp_path, FAULTY, BAD_SCORES)


class _Dying:
    """Wraps a target: after `alive` searches the service is gone."""

    def __init__(self, inner, alive):
        self.inner, self.alive, self.calls = inner, alive, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def search(self, request):
        self.calls += 1
        if self.calls > self.alive:
            raise TargetUnavailableError("search failed after 5 attempt(s): connection refused")
        return self.inner.search(request)


CHECKS = ["pool_size", "prerank_filters", "reranker_scores", "shared_query_text"]


def test_run_checks_after_an_outage_is_incomplete_and_says_why(world_ctx):
    from ragdiag.audit import run_checks
    from ragdiag.cli import _audit_exit_code

    dying = _Dying(world_ctx.target, alive=1)
    world_ctx.target = dying
    world_ctx.runner = Runner(dying, max_consecutive_failures=2)
    result = run_checks(world_ctx, checks=CHECKS)
    assert dying.calls == 1 + 2  # two connection failures, then nothing was sent
    cb = result.meta["circuit_breaker"]
    assert cb["open"] and cb["reason"].startswith("circuit open after 2 consecutive connection failures")
    assert result.meta["runner"]["not_sent"] > 0
    assert any(f.is_incomplete for f in result.findings)
    # every failure the runner recorded after the outage says why it was not sent
    unsent = [f for f in world_ctx.runner.stats.failures if f.kind == "circuit_open"]
    assert unsent and all(f.reason.startswith("not sent: circuit open after 2") for f in unsent)
    # exit 3 even where a check (on the old contract) does not mark itself above threshold
    assert _audit_exit_code(result, "never") == 3
    assert "interrupted" not in result.meta


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_sigint_stops_sending_finishes_the_running_check_and_marks_the_rest(world_ctx):
    from ragdiag.audit import run_checks
    from ragdiag.cli import _audit_exit_code

    before = signal.getsignal(signal.SIGINT)
    seen = []

    def on_check(cid):
        if cid not in CHECKS:  # "ablation", "loss_funnel": the measurements before the checks
            return
        seen.append(cid)
        if len(seen) == 2:
            os.kill(os.getpid(), signal.SIGINT)

    sent_before = []
    result = run_checks(world_ctx, checks=CHECKS, on_check=lambda c: (on_check(c), c in CHECKS and sent_before.append(
        world_ctx.runner.stats.sent)))
    assert signal.getsignal(signal.SIGINT) is before  # the handler is restored
    intr = result.meta["interrupted"]
    assert intr == {"signal": "SIGINT", "exit_code": 130, "during": CHECKS[1], "not_run": CHECKS[2:]}
    assert [f.check_id for f in result.findings] == CHECKS
    assert result.findings[0].status != "error"  # finished before the signal
    for f in result.findings[2:]:
        assert f.status == "error" and "not run: the audit was interrupted by SIGINT" in f.headline
    # the interrupted check sent nothing after the signal: its requests failed as not sent
    assert world_ctx.runner.stats.sent == sent_before[1]
    assert _audit_exit_code(result, "never") == 130
    # a new run is not interrupted (the breaker is reset)
    again = run_checks(world_ctx, checks=CHECKS[:1])
    assert "interrupted" not in again.meta and again.findings[0].status != "error"


# ---- the Azure target's retry gate (nothing listens on the port: every attempt is refused) ------
def _closed_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _azure(retries: int, **kw):
    pytest.importorskip("azure.search.documents")
    from azure.core.credentials import AzureKeyCredential

    from ragdiag.targets.azure import AzureTarget
    from tests.fakes import tiny_schema

    t = AzureTarget(f"http://127.0.0.1:{_closed_port()}", "idx", credential=AzureKeyCredential("k"),
                    retries=retries, timeout_s=5, **kw)
    t._schema = tiny_schema()  # as if the definition had been read before the service died
    return t


def test_an_open_gate_ends_the_azure_targets_retries():
    t = _azure(retries=10, backoff_s=0.01, max_backoff_s=0.02)
    r = Runner(t, max_consecutive_failures=3)
    assert t.retry_gate is r.breaker
    try:
        out = r.execute(SearchRequest(search="x"))
    finally:
        t.close()
    assert isinstance(out, Failure) and "not sent: circuit open after 3 consecutive" in out.reason
    assert t.stats["requests"] == 3  # not retries + 1 = 11
    assert r.breaker.is_open
    again = r.execute(SearchRequest(search="y"))
    assert again.kind == "circuit_open" and t.stats["requests"] == 3


def test_a_back_off_sleep_wakes_when_the_gate_closes():
    import time

    t = _azure(retries=5, backoff_s=20.0, max_backoff_s=20.0)  # each retry would wait 10-20 s
    gate = CircuitBreaker(100)
    t.retry_gate = gate
    threading.Timer(0.5, gate.trip, args=("the audit was interrupted by SIGTERM",)).start()
    t0 = time.monotonic()
    try:
        with pytest.raises(TargetUnavailableError, match="not sent: the audit was interrupted"):
            t.search(SearchRequest(search="x"))
    finally:
        t.close()
    assert time.monotonic() - t0 < 5 and t.stats["requests"] == 1


# ---- authentication failures, statement timeouts, malformed answers ------------------------------
@pytest.mark.parametrize("error, kind_text", [
    ("auth", "authentication failures (HTTP 401/403)"),
    ("timeout", "statement timeouts"),
    ("malformed", "malformed answers"),
])
def test_each_kind_of_service_failure_opens_the_breaker_and_is_named(error, kind_text):
    from ragdiag.errors import AuthRejectedError, MalformedAnswerError

    exc = {"auth": AuthRejectedError("the search service rejected the credentials (HTTP 403): check the key"),
           "timeout": TargetUnavailableError("query cancelled after the statement timeout of 50 ms",
                                             kind="timeout"),
           "malformed": MalformedAnswerError("'@search.score' must be a number, found 'high'")}[error]
    t = DyingTarget(alive=3, error=exc)
    r = Runner(t, max_consecutive_failures=5)
    out = r.run(_reqs(200))
    assert t.calls == 3 + 5  # five failures in a row, then nothing is sent
    assert r.breaker.is_open and r.stats.not_sent == 200 - 8
    assert r.breaker.reason.startswith(f"circuit open after 5 consecutive {kind_text}: ")
    assert sum(isinstance(o, Failure) for o in out) == 197


def test_mixed_failures_in_a_row_are_service_failures_and_a_success_resets_them():
    b = CircuitBreaker(3)
    b.failure("403", "auth")
    b.failure("refused")
    b.success()
    b.failure("403", "auth")
    b.failure("timeout", "timeout")
    assert not b.is_open
    assert b.failure("refused")
    assert b.reason == "circuit open after 3 consecutive service failures: refused"


def test_a_rejected_request_of_its_own_still_does_not_count():
    """401/403 count; a 400 (the request's own fault, a bad filter) never does."""
    t = DyingTarget(alive=0, error=TargetError("the search service rejected the search (HTTP 400): bad filter"))
    r = Runner(t, max_consecutive_failures=2)
    r.run(_reqs(20))
    assert t.calls == 20 and not r.breaker.is_open


# ---- the Azure target against the emulator: 403 on every search, wrong-shaped 200 answers -----------
@pytest.fixture()
def emulated(tmp_path):
    pytest.importorskip("azure.search.documents")
    from ragdiag.targets.emulator import Emulator
    from tests.test_emulator import INDEX, KEY, build_tiny_target

    local = build_tiny_target(tmp_path / "idx")
    with Emulator({INDEX: local}, api_key=KEY) as emu:
        yield emu, INDEX, KEY


def _live(url, index, key, **kw):
    from azure.core.credentials import AzureKeyCredential

    from ragdiag.targets.azure import AzureTarget

    return AzureTarget(url, index, credential=AzureKeyCredential(key), backoff_s=0.001, max_backoff_s=0.002, **kw)


@pytest.mark.parametrize("status", [401, 403])
def test_401_or_403_on_every_search_with_a_readable_definition_opens_the_breaker(emulated, monkeypatch, status):
    from ragdiag.targets.emulator import server as emu_server

    emu, index, key = emulated
    t = _live(emu.url, index, key, retries=2)
    t.schema()  # the definition is readable
    refused = []

    def reject(self, target, index, body):
        refused.append(1)
        raise emu_server._HTTPError(status, "Forbidden", "the key was revoked")

    monkeypatch.setattr(emu_server.Emulator, "_search_payload", reject)
    r = Runner(t, max_consecutive_failures=5)
    try:
        out = r.run(_reqs(100))
    finally:
        t.close()
    assert len(refused) == 5  # not 100 (and no retries: a 401/403 is not retried)
    assert r.breaker.is_open and "consecutive authentication failures (HTTP 401/403)" in r.breaker.reason
    assert all(isinstance(o, Failure) for o in out) and r.stats.not_sent == 95


@pytest.mark.parametrize("transport", ["raw", "sdk"])
@pytest.mark.parametrize("body", [
    {"value": [{"id": "a", "@search.score": "high"}]},
    {"value": {"id": "a"}},
    {"value": ["a"]},
    {"value": [{"id": "a", "@search.score": 1.0}], "@odata.count": "many"},
    {"value": [{"id": "a", "@search.score": 1.0, "@search.rerankerScore": [1]}]},
])
def test_a_wrong_shaped_200_answer_is_a_failed_request_not_a_crash(emulated, monkeypatch, transport, body):
    from ragdiag.targets.emulator import server as emu_server

    emu, index, key = emulated
    t = _live(emu.url, index, key, retries=1, transport=transport)
    t.schema()
    monkeypatch.setattr(emu_server.Emulator, "_search_payload", lambda self, target, index, b: body)
    r = Runner(t, max_consecutive_failures=4)
    try:
        out = r.run(_reqs(30))
    finally:
        t.close()
    failed = [o for o in out if isinstance(o, Failure)]
    assert len(failed) == 30 and r.stats.failed == 4  # counted as failed requests, then the breaker
    assert "malformed body" in failed[0].reason
    assert r.breaker.is_open and "consecutive malformed answers" in r.breaker.reason


def test_a_sound_answer_still_passes_through_the_shape_checks(emulated):
    emu, index, key = emulated
    t = _live(emu.url, index, key)
    r = Runner(t)
    try:
        out = r.run([SearchRequest(search="alpha", count=True)])
    finally:
        t.close()
    assert not isinstance(out[0], Failure) and out[0].hits and out[0].count is not None
    assert r.stats.failed == 0 and not r.breaker.is_open
