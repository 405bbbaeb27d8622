"""Who asks: an `Identity` is a caller name and the groups the security clause admits.

Its own module because targets, checks and configs use identities without
needing profiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragdiag.errors import InputDataError


@dataclass(frozen=True)
class Identity:
    """A caller: a name (for reports) and the groups that the security clause admits."""

    name: str
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        g = self.groups
        if isinstance(g, str) or not all(isinstance(x, str) for x in g):
            raise InputDataError(
                f"identity '{self.name}': groups must be a list of strings, got {g!r}")
        object.__setattr__(self, "groups", tuple(g))

