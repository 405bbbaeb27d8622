"""The exception tree: every error ragdiag raises on purpose is a RagdiagError.

Messages say what was expected, what was found, and the fix. The process exit code tells a
CI pipeline which of three parties went wrong (`exit_code_for`):

- ``EXIT_INPUT`` (2), **your input**: any `RagdiagError` that is not the service's (a config,
  profiles, goldset or request file, credentials, an output path, a missing extra);
- ``EXIT_SERVICE`` (3), **the service**: `TargetUnavailableError` (no usable answer: refused,
  dropped, timed out, throttled or malformed until the retries ran out, a statement
  timeout), and an incomplete audit (an ``error`` finding, too many failed requests, an open
  circuit breaker);
- ``EXIT_INTERNAL`` (4), **ragdiag itself**: any other exception (a bug), and a check that
  crashed.

0 is a clean run, 1 a check at or above ``--fail-on``, 130 / 143 an interrupt (SIGINT / SIGTERM).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_SERVICE = 3
EXIT_INTERNAL = 4

MAX_MESSAGE = 2000
"""Longest message an error keeps (a safety net: loaders quote values through
`ragdiag.inputs.limits.excerpt`, ~120 characters; this bounds whatever else a message holds)."""
FILTER_WINDOW = 60
"""Characters of a filter shown on each side of the position of a filter error."""


def capped(message: str, limit: int = MAX_MESSAGE) -> str:
    """`message` cut in the middle when it is longer than `limit` characters."""
    if len(message) <= limit:
        return message
    keep = (limit - 40) // 2
    return f"{message[:keep]} … [{len(message) - 2 * keep:,} characters cut] … {message[-keep:]}"


class RagdiagError(Exception):
    """Base class of all errors ragdiag raises deliberately."""


class ConfigError(RagdiagError):
    """An audit config, profile file or checklist spec is invalid.

    Carries the file and line so a user can jump to the mistake.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.path = path
        self.line = line
        self.key = key
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(capped(f"{where}{message}"))


class InputValidationError(ConfigError):
    """The inputs do not fit the target: every problem found before any request was sent.

    `problems` holds (path, line, message) triples; the message lists them all (the first
    `SHOWN_PROBLEMS`), each as ``path:line: message``.
    """

    SHOWN_PROBLEMS = 12

    def __init__(self, problems: list[tuple[str | None, int | None, str]]) -> None:
        self.problems = list(problems)
        shown = [_where(p, n) + m for p, n, m in self.problems[:self.SHOWN_PROBLEMS]]
        more = len(self.problems) - len(shown)
        head = (f"{len(self.problems)} input problem{'s' if len(self.problems) != 1 else ''} found "
                "before any request was sent (fix them and run again):")
        message = "\n  ".join([head, *(capped(s, 400) for s in shown)]) + (
            f"\n  ... and {more} more" if more else "")
        first = self.problems[0] if self.problems else (None, None, "")
        Exception.__init__(self, capped(message, 8000))
        self.path, self.line, self.key = first[0], first[1], None


def _where(path: str | None, line: int | None) -> str:
    if not path:
        return ""
    return f"{path}:{line}: " if line else f"{path}: "


class InputDataError(RagdiagError):
    """A goldset, query log, corpus or request file is malformed."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(capped(f"{where}{message}"))


class FilterError(RagdiagError):
    """An OData filter does not parse or refers to fields it may not use."""

    def __init__(self, message: str, *, text: str | None = None, position: int | None = None) -> None:
        self.text = text
        self.position = position
        if text is not None and position is not None:
            # a window of the filter around the position (a long filter is not quoted whole);
            # control characters become spaces so the pointer stays under its character
            start = max(0, position - FILTER_WINDOW)
            end = min(len(text), position + FILTER_WINDOW)
            shown = "".join(c if c >= " " else " " for c in text[start:end])
            lead = "…" if start else ""
            pointer = " " * (len(lead) + position - start) + "^"
            shown = f"{lead}{shown}{'…' if end < len(text) else ''}"
            message = f"{capped(message, 600)} (at position {position})\n  {shown}\n  {pointer}"
        super().__init__(capped(message))


class TargetError(RagdiagError):
    """A search target failed or refused a request."""


class TargetUnavailableError(TargetError):
    """The search service gave no usable answer: connection refused, reset or dropped, a
    timeout (an HTTP one or a database's statement timeout), or 429/5xx/malformed answers until
    the retries ran out; or the runner's circuit breaker is open (nothing was sent).

    `counted` says whether the failures behind it were already reported to the runner's
    circuit breaker (a target with a retry gate reports each attempt itself); `breaker_kind`
    is how the breaker counts it (``connection``, ``timeout``, ``malformed``).
    """

    breaker_kind = "connection"

    def __init__(self, message: str, *, counted: bool = False, kind: str | None = None) -> None:
        self.counted = counted
        if kind is not None:
            self.breaker_kind = kind
        super().__init__(message)


class MalformedAnswerError(TargetUnavailableError):
    """The service answered (HTTP 200) with a body of the wrong shape (``"@search.score":
    "high"``, a result without its key, a list where an object belongs): a failed request,
    never a value for a check."""

    breaker_kind = "malformed"


class AuthRejectedError(TargetError):
    """The service refused the credentials (HTTP 401) or the permission (HTTP 403).

    An input error at the start (the key or role is wrong: exit 2); during an audit, each one
    is a failed request that the runner's circuit breaker counts, so a key that stops
    working does not cost every remaining request. `counted` as for `TargetUnavailableError`.
    """

    breaker_kind = "auth"

    def __init__(self, message: str, *, counted: bool = False) -> None:
        self.counted = counted
        super().__init__(message)


class OutputError(RagdiagError):
    """An output file cannot be written (its folder is a file, it is a folder, no permission,
    the disk is full). Checked before an audit runs wherever possible, so no findings are
    lost at the end."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(capped(f"{path}: {message}" if path else message))


class MissingDependencyError(RagdiagError):
    """An optional dependency (a model, a browser, an SDK) is not available."""


class ModelError(RagdiagError):
    """A model cannot be used, e.g. a cross-encoder with a randomly initialised head."""


class NotebookRunError(RagdiagError):
    """A report notebook failed; carries the failing cell and traceback."""

    def __init__(self, message: str, *, cell_index: int | None = None,
                 traceback: str | None = None) -> None:
        self.cell_index = cell_index
        self.traceback = traceback
        super().__init__(message)


class SecretLeakError(RagdiagError):
    """A report output contains the value of a secret-looking environment variable."""


def exit_code_for(exc: BaseException) -> int:
    """The process exit code of an exception that ended a command (see the module docstring)."""
    if isinstance(exc, TargetUnavailableError):
        return EXIT_SERVICE
    if isinstance(exc, RagdiagError):
        return EXIT_INPUT
    return EXIT_INTERNAL
