"""The exception tree: every error ragdiag raises on purpose is a RagdiagError.

Messages say what was expected, what was found, and the fix.
"""

from __future__ import annotations


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
        super().__init__(f"{where}{message}")


class InputDataError(RagdiagError):
    """A goldset, query log, corpus or request file is malformed."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"{where}{message}")


class FilterError(RagdiagError):
    """An OData filter does not parse or refers to fields it may not use."""

    def __init__(self, message: str, *, text: str | None = None, position: int | None = None) -> None:
        self.text = text
        self.position = position
        if text is not None and position is not None:
            pointer = " " * position + "^"
            message = f"{message} (at position {position})\n  {text}\n  {pointer}"
        super().__init__(message)


class TargetError(RagdiagError):
    """A search target failed or refused a request."""


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
