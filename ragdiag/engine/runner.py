"""The runner: executes requests once, stores every trace, and records what it could not run.

Checks ask for (question x profile x identity x probe) results; all of them end
up as `SearchRequest`s. The runner deduplicates by request fingerprint, keeps
traces in memory and in the trace store (`ragdiag.engine.store`: compact, one
append-only file per target fingerprint, so a changed index never answers from a
stale cache and an interrupted audit resumes where it stopped), honours a request
budget, lets the target prepare a batch (one embedding call for all its query
texts), runs a bounded number of requests at once (for live targets), shows
progress, stops sending when the service stops answering (a circuit breaker,
`ragdiag.engine.breaker`: every unsent request becomes a `Failure` saying why), and
fuses multi-request probes (split channels) client-side with RRF.

Every trace the runner returns comes from the store (`TraceStore.put` hands back the
stored form: float32 scores), so a trace executed now and one loaded by a resumed
run are the same, value for value.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdiag.engine.breaker import DEFAULT_THRESHOLD, CircuitBreaker
from ragdiag.engine.store import TraceStore, store_path
from ragdiag.errors import AuthRejectedError, RagdiagError, TargetUnavailableError
from ragdiag.model import Hit, RankedList, SearchRequest, Trace
from ragdiag.model.fusion import rrf
from ragdiag.targets.base import has_capability

#: traces a runner holds by strong reference, the most recently used; an older trace is still
#: found while anything else holds it (a check's gold run) and is otherwise read back from the
#: trace store. Unbounded, a 2,000-question audit held all of its 51,561 traces (~500 MB;
#: benchmarks/README.md, "Speed, wave 6").
MEMORY_TRACES = 2048


class TraceMemory:
    """The runner's traces by request fingerprint: the last `limit` used held, the rest weakly.

    Thread-safe: a runner with `concurrency` > 1 stores and reads traces from several threads."""

    __slots__ = ("limit", "_recent", "_alive", "_lock")

    def __init__(self, limit: int = MEMORY_TRACES) -> None:
        self.limit = max(0, int(limit))
        self._recent: OrderedDict[str, Trace] = OrderedDict()
        self._alive: weakref.WeakValueDictionary[str, Trace] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, fp: str) -> Trace | None:
        with self._lock:
            trace = self._recent.get(fp)
            if trace is not None:
                self._recent.move_to_end(fp)
                return trace
            trace = self._alive.get(fp)
            if trace is not None:
                self._hold(fp, trace)
            return trace

    def __setitem__(self, fp: str, trace: Trace) -> None:
        with self._lock:
            self._alive[fp] = trace
            self._hold(fp, trace)

    def _hold(self, fp: str, trace: Trace) -> None:  # under the lock
        self._recent[fp] = trace
        self._recent.move_to_end(fp)
        while len(self._recent) > self.limit:
            self._recent.popitem(last=False)

    def __contains__(self, fp: object) -> bool:
        with self._lock:
            return fp in self._recent or fp in self._alive

    def __len__(self) -> int:
        return len(self._alive)

    def live(self) -> list[Trace]:
        """Every trace still in memory (held here or elsewhere)."""
        with self._lock:
            return list(self._alive.values())


@dataclass(frozen=True)
class Failure:
    """A request that was not executed or failed: why, and whether it was retried."""

    request: SearchRequest
    reason: str
    kind: str = "error"  # error | budget | no_target | circuit_open | interrupted

    @property
    def ok(self) -> bool:
        return False


@dataclass
class RunnerStats:
    sent: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    failed: int = 0
    over_budget: int = 0
    retried: int = 0
    partial: int = 0
    not_sent: int = 0  # refused while the circuit breaker was open (or the audit interrupted)
    failures: list[Failure] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"sent": self.sent, "memory_hits": self.memory_hits, "disk_hits": self.disk_hits,
                "failed": self.failed, "over_budget": self.over_budget, "retried": self.retried,
                "partial": self.partial, "not_sent": self.not_sent}


def target_fingerprint(target: Any) -> str | None:
    """The target's `fingerprint()` (what it would answer); None when it has none.

    There is deliberately no fallback to the target's name: a name-keyed cache would
    answer a changed index from stale traces. Without a fingerprint nothing is cached on disk.
    """
    fp = getattr(target, "fingerprint", None)
    return str(fp()) if callable(fp) else None


class Runner:
    """Executes requests against one target with caching, budget, concurrency and progress."""

    def __init__(self, target: Any, *, cache_dir: str | Path | None = None, budget: int | None = None,
                 concurrency: int = 1, progress: bool = False,
                 on_progress: Callable[[int, int], None] | None = None,
                 max_consecutive_failures: int = DEFAULT_THRESHOLD,
                 breaker: CircuitBreaker | None = None,
                 store: TraceStore | None = None, flush_each_run: bool = True) -> None:
        self.target = target
        # stops sending after consecutive connection failures (see ragdiag.engine.breaker);
        # a target with its own retries gets it as its retry gate, so it stops retrying too
        self.breaker = breaker if breaker is not None else CircuitBreaker(max_consecutive_failures)
        if has_capability(target, "retries"):
            target.retry_gate = self.breaker
        self.budget = budget
        self.concurrency = max(1, int(concurrency))
        self.progress = progress
        self.on_progress = on_progress
        self.stats = RunnerStats()
        self._memory = TraceMemory()
        self._target_fp = target_fingerprint(target)
        if store is None:
            compact = has_capability(target, "compact_traces")
            path = (store_path(cache_dir, self._target_fp)
                    if cache_dir and self._target_fp is not None else None)
            store = TraceStore(path, target_fingerprint=self._target_fp or "",
                               key_table=target.key_table if compact else None,
                               records=target.record if compact else None)
        self.store = store
        # an audit writes every batch (an interrupted audit resumes from what it wrote); a
        # what-if runner leaves its traces pending until the store's own batch size is reached
        self.flush_each_run = flush_each_run
        self._lock = threading.Lock()

    # ---- single requests ---------------------------------------------------------
    def cached(self, request: SearchRequest) -> Trace | None:
        """The trace of `request` if this runner or its store has it (nothing is sent)."""
        fp = request.fingerprint()
        hit = self._memory.get(fp)
        return hit if hit is not None else self.store.get(fp, request)

    def execute(self, request: SearchRequest) -> Trace | Failure:
        """One request, from memory or the store when possible; failures are returned, not raised."""
        fp = request.fingerprint()
        hit = self._memory.get(fp)
        if hit is not None:
            self.stats.memory_hits += 1
            return hit
        trace = self.store.get(fp, request)
        if trace is not None:
            self.stats.disk_hits += 1
            self._memory[fp] = trace
            return trace
        if self.target is None:
            failure = Failure(request, "no search target: this audit has no [target] (code-only)", kind="no_target")
            with self._lock:
                self.stats.failures.append(failure)
            return failure
        stop = self.breaker.allow()
        if stop is not None:
            failure = Failure(request, f"not sent: {stop}", kind=self.breaker.kind or "circuit_open")
            with self._lock:
                self.stats.not_sent += 1
                self.stats.failures.append(failure)
            return failure
        with self._lock:
            if self.budget is not None and self.stats.sent >= self.budget:
                self.stats.over_budget += 1
                failure = Failure(request, f"request budget of {self.budget} exhausted", kind="budget")
                self.stats.failures.append(failure)
                return failure
            self.stats.sent += 1
        try:
            trace = self.target.search(request)
        except (RagdiagError, ConnectionError, TimeoutError) as exc:
            reason = str(exc) if isinstance(exc, RagdiagError) else f"{type(exc).__name__}: {exc}"
            with self._lock:
                self.stats.failed += 1
                failure = Failure(request, reason)
                self.stats.failures.append(failure)
            # a service failure the target did not report to the breaker itself (no answer,
            # a statement timeout, a malformed answer, rejected credentials)
            if isinstance(exc, ConnectionError | TimeoutError):
                self.breaker.failure(reason)
            elif isinstance(exc, TargetUnavailableError | AuthRejectedError) and not exc.counted:
                self.breaker.failure(reason, exc.breaker_kind)
            return failure
        self.breaker.success()
        if trace.partial_reason and request.is_semantic:
            self.stats.partial += 1
        trace = self.store.put(fp, trace)
        self._memory[fp] = trace
        return trace

    def flush(self) -> None:
        """Write pending traces to the trace store's file (run() does this after every batch)."""
        self.store.flush()

    def prepare(self, requests: Iterable[SearchRequest]) -> None:
        """Let the target prepare the requests not yet stored (e.g. embed all their query texts
        in one call); optional for targets, and never an error."""
        if not has_capability(self.target, "prepare"):
            return
        prep = self.target.prepare
        fresh: dict[str, SearchRequest] = {}
        for r in requests:
            fp = r.fingerprint()
            if fp not in self._memory and fp not in self.store:
                fresh.setdefault(fp, r)
        todo = list(fresh.values())
        if self.budget is not None:
            todo = todo[:max(0, self.budget - self.stats.sent)]
        if todo:
            try:
                prep(todo)
            except RagdiagError:
                pass  # the requests themselves report what is wrong

    # ---- batches -------------------------------------------------------------------
    def run(self, requests: Iterable[SearchRequest], *, label: str = "requests") -> list[Trace | Failure]:
        """Execute a batch: each distinct request once, results in input order."""
        reqs = list(requests)
        distinct: dict[str, SearchRequest] = {}
        for r in reqs:
            distinct.setdefault(r.fingerprint(), r)
        results: dict[str, Trace | Failure] = {}
        for fp in distinct:
            held = self._memory.get(fp)
            if held is not None:
                results[fp] = held
        todo = [r for fp, r in distinct.items() if fp not in results]
        self.stats.memory_hits += len(reqs) - len(todo)
        self.prepare(todo)
        bar = None
        if self.progress and len(todo) > 20:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=label, leave=False, disable=None)  # None: off unless stderr is a TTY
        done = 0

        def one(r: SearchRequest) -> tuple[str, Trace | Failure]:
            return r.fingerprint(), self.execute(r)

        def tick() -> None:
            nonlocal done
            done += 1
            if bar is not None:
                bar.update(1)
            if self.on_progress:
                self.on_progress(done, len(todo))

        if self.concurrency > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                for fp, res in pool.map(one, todo):
                    results[fp] = res
                    tick()
        else:
            for r in todo:
                fp, res = one(r)
                results[fp] = res
                tick()
        if bar is not None:
            bar.close()
        if self.flush_each_run:
            self.store.flush()
        return [results[r.fingerprint()] for r in reqs]

    def run_fused(self, groups: Sequence[Sequence[SearchRequest]], *, top: int | None = None,
                  label: str = "requests") -> list[Trace | Failure]:
        """Execute groups of requests and fuse each group client-side (RRF over final rankings)."""
        flat = [r for g in groups for r in g]
        results = self.run(flat, label=label)
        out: list[Trace | Failure] = []
        i = 0
        for g in groups:
            part = results[i:i + len(g)]
            i += len(g)
            failed = [p for p in part if isinstance(p, Failure)]
            if failed:
                out.append(failed[0])
            elif len(part) == 1:
                out.append(part[0])
            else:
                out.append(fuse_traces(part, top=top))  # type: ignore[arg-type]
        return out


def fuse_traces(traces: Sequence[Trace], *, top: int | None = None) -> Trace:
    """Client-side RRF over several traces' final rankings (used by split-channel probes)."""
    lists = [(t.keys, 1.0) for t in traces]
    fused = rrf(lists)
    top = top if top is not None else max(t.request.top for t in traces)
    by_key: dict[str, Hit] = {}
    for t in traces:
        for h in t.hits:
            best = by_key.get(h.key)
            if best is None or (h.reranker_score or -1) > (best.reranker_score or -1):
                by_key[h.key] = h
    hits = tuple(replace(by_key[k], score=s) for k, s in fused[:top])
    pool_keys = tuple(dict.fromkeys(k for t in traces for k in (t.pool.keys if t.pool else t.keys)))
    return Trace(request=traces[0].request, hits=hits,
                 pool=RankedList("client-fused", pool_keys, tuple(0.0 for _ in pool_keys)),
                 reranked=any(t.reranked for t in traces), target=traces[0].target,
                 partial_reason=next((t.partial_reason for t in traces if t.partial_reason), None))
