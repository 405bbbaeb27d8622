"""The runner's circuit breaker: stop sending once the search service is evidently gone or refuses us.

A search service that dies mid-audit used to cost every remaining request its full
retries (about 5.6 s each with the default 4 retries), so an audit of a few thousand
requests took tens of minutes to end all-failed. The breaker counts **consecutive
connection failures** and opens after `threshold` of them (``[runner]
max_consecutive_failures``, default 5). Once open:

- the runner sends nothing more: every request not yet sent (and not in the trace cache)
  is returned as a `Failure` with the reason ("not sent: circuit open after 5 consecutive
  connection failures: <the last one>"), so the checks finish with what was measured and
  report ``error``/incomplete through the usual `Verdict` contract;
- a target with its own retries stops retrying: the runner installs the breaker as the
  target's ``retry_gate`` (when the target has that attribute), and the target asks
  `allow()` before every attempt and wakes from a back-off sleep when the gate closes.

What counts (`failure(reason, kind)`), each kind a way the service stops being usable:

- ``connection``: an attempt that got no answer at all (connection refused, reset or
  dropped; a timeout), reported by a gated target per attempt, and, for a target without a
  gate, a request that raised `TargetUnavailableError` (or the built-in ConnectionError /
  TimeoutError); a gated target also counts a request whose retries ran out on
  429/5xx/malformed answers;
- ``auth``: HTTP 401/403 (`AuthRejectedError`): a key that was revoked or a role that was
  removed mid-audit refuses every request alike;
- ``timeout``: a database's statement timeout (the pgvector target: every cancelled
  statement costs the whole timeout, about 2.7 hours for the sample at the default);
- ``malformed``: an HTTP 200 whose body has the wrong shape (`MalformedAnswerError`).

What does not count: a 4xx that is the request's own fault (a bad filter, an unknown
field), an exhausted request budget. Any usable answer from the service (`success`) resets
the count. The reason names the kind when all failures in a row share one ("5 consecutive
authentication failures (HTTP 401/403)"), else "service failures".

`trip(reason)` opens the breaker at once: `run_checks` does so on SIGINT/SIGTERM, so an
interrupted audit stops sending the same way. `reset()` closes it (a new audit run).
Thread-safe: the runner's worker threads and a target's event loop call it concurrently.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["DEFAULT_THRESHOLD", "CircuitBreaker"]

DEFAULT_THRESHOLD = 5
KINDS = {"connection": "connection failures", "auth": "authentication failures (HTTP 401/403)",
         "timeout": "statement timeouts", "malformed": "malformed answers"}


class CircuitBreaker:
    """Opens after `threshold` consecutive connection failures, or when tripped."""

    def __init__(self, threshold: int = DEFAULT_THRESHOLD, *,
                 on_open: Callable[[str], None] | None = None) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
        self.threshold = threshold
        self.on_open = on_open
        self._lock = threading.Lock()
        self._consecutive = 0
        self._last: str | None = None
        self._reason: str | None = None
        self._kind: str | None = None
        self.opened_at: float | None = None  # time.monotonic() when it opened
        self.failures = 0  # failures counted since the last reset
        self._streak: set[str] = set()  # the kinds of the current run of consecutive failures

    # ---- state ---------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """Why nothing is sent any more, or None while closed."""
        return self._reason

    @property
    def kind(self) -> str | None:
        """"circuit_open" (connection failures) or "interrupted" (tripped), None while closed."""
        return self._kind

    @property
    def consecutive(self) -> int:
        return self._consecutive

    # ---- what the runner and gated targets report -------------------------------------
    def allow(self) -> str | None:
        """None to go ahead, else the reason not to send (the retry gate of a target)."""
        return self._reason

    def success(self) -> None:
        """The service answered: the consecutive count starts again."""
        if self._consecutive:
            with self._lock:
                self._consecutive = 0
                self._streak.clear()

    def failure(self, reason: str, kind: str = "connection") -> bool:
        """One failure of the service (`kind`: see the module docstring); True when this one
        opened the breaker."""
        with self._lock:
            self.failures += 1
            self._consecutive += 1
            self._last = reason
            self._streak.add(kind if kind in KINDS else "connection")
            if self._reason is not None or self._consecutive < self.threshold:
                return False
            what = KINDS[next(iter(self._streak))] if len(self._streak) == 1 else "service failures"
            self._reason = f"circuit open after {self._consecutive} consecutive {what}: {reason}"
            self._kind = "circuit_open"
            self.opened_at = time.monotonic()
            message = self._reason
        self._notify(message)
        return True

    def trip(self, reason: str, kind: str = "interrupted") -> None:
        """Open now (an interrupt); a breaker already open keeps its first reason.

        Safe in a signal handler: it takes the lock only briefly and does not call
        `on_open` (the caller says what happened)."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason, self._kind, self.opened_at = reason, kind, time.monotonic()

    def reset(self) -> None:
        with self._lock:
            self._consecutive = 0
            self._last = self._reason = self._kind = None
            self.opened_at = None
            self.failures = 0
            self._streak.clear()

    def _notify(self, message: str) -> None:
        if self.on_open is not None:
            try:
                self.on_open(f"{message}; nothing more is sent")
            except Exception:  # a failing log callback must not fail a request
                pass

    def to_dict(self) -> dict[str, Any]:
        return {"open": self.is_open, "kind": self._kind, "reason": self._reason,
                "threshold": self.threshold, "consecutive_failures": self._consecutive,
                "connection_failures": self.failures, "last_failure": self._last}

    def __repr__(self) -> str:
        state = f"open ({self._kind})" if self.is_open else f"closed, {self._consecutive} in a row"
        return f"CircuitBreaker(threshold={self.threshold}, {state})"
