"""Deterministic fault injection for the emulator: latency, throttling, outages, broken bodies.

Each search request draws one number from a seeded generator and is answered
with at most one fault: 429 (with `Retry-After` and `retry-after-ms`), 503, a
200 whose JSON body is cut short, or a connection closed without a response.
The sequence of decisions depends only on the seed and the order in which
requests arrive, so a single-threaded test sees the same faults every run.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

from ragdiag.errors import ConfigError

FAULT_KINDS = ("429", "503", "malformed", "drop", "semantic_partial")


@dataclass(frozen=True)
class Faults:
    """What share of search requests fail, and how.

    `retry_after_s` is the `Retry-After` the emulator sends with 429 and 503
    answers. Azure sends whole seconds; fractions (e.g. 0.05) are allowed so
    tests stay fast, and `retry-after-ms` carries the exact value.
    `rate_semantic_partial` answers semantic requests with base results
    (`@search.semanticPartialResponseType: baseResults`), as Azure does when the
    semantic ranker is overloaded.
    """

    latency_ms: float = 0.0
    rate_429: float = 0.0
    rate_503: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    rate_semantic_partial: float = 0.0
    retry_after_s: float | None = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        rates = {"rate_429": self.rate_429, "rate_503": self.rate_503,
                 "rate_malformed": self.rate_malformed, "rate_drop": self.rate_drop,
                 "rate_semantic_partial": self.rate_semantic_partial}
        for name, value in rates.items():
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"fault {name} must be a share between 0 and 1, got {value}")
        total = self.rate_429 + self.rate_503 + self.rate_malformed + self.rate_drop
        if total > 1.0 + 1e-9:
            raise ConfigError(f"fault rates 429 + 503 + malformed + drop add up to {total:.3f}; "
                              "they must not exceed 1")
        if self.latency_ms < 0:
            raise ConfigError(f"latency_ms must be >= 0, got {self.latency_ms}")
        if self.retry_after_s is not None and self.retry_after_s < 0:
            raise ConfigError(f"retry_after_s must be >= 0, got {self.retry_after_s}")

    @property
    def active(self) -> bool:
        return bool(self.latency_ms or self.rate_429 or self.rate_503 or self.rate_malformed
                    or self.rate_drop or self.rate_semantic_partial)


class FaultInjector:
    """Draws the fault of each search request from a seeded generator (thread-safe)."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self._rng = random.Random(faults.seed)
        self._lock = threading.Lock()

    def draw(self) -> str | None:
        """The fault for the next search request: '429', '503', 'malformed', 'drop' or None."""
        f = self.faults
        with self._lock:
            u = self._rng.random()
        edge = 0.0
        for kind, rate in (("429", f.rate_429), ("503", f.rate_503),
                           ("malformed", f.rate_malformed), ("drop", f.rate_drop)):
            edge += rate
            if u < edge:
                return kind
        return None

    def semantic_partial(self) -> bool:
        if not self.faults.rate_semantic_partial:
            return False
        with self._lock:
            return self._rng.random() < self.faults.rate_semantic_partial

    def retry_after_headers(self) -> dict[str, str]:
        s = self.faults.retry_after_s
        if s is None:
            return {}
        whole = float(s).is_integer()
        return {"Retry-After": str(int(s)) if whole else f"{s:g}",
                "retry-after-ms": str(int(round(s * 1000)))}
