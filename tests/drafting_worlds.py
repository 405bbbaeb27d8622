"""What the draft-agreement tests share: three profiles told apart by `top` alone, and a target whose
ranking is written out per profile, so every agreement figure can be checked by hand."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

TOPS_POLICY = """
[policy]
name = "tops"
[routes]
default = "p10"
[profiles.p10]
top = 10
[profiles.p20]
top = 20
[profiles.p30]
top = 30
"""
#: the request's `top` -> which profile sent it (index into `ByTopTarget.rankings`)
PROFILE_OF_TOP = {10: 0, 20: 1, 30: 2}


def tops_policy() -> Any:
    """Profiles p10, p20, p30 that differ only in `top` (10, 20, 30)."""
    from ragdiag.policy import loads_policy

    return loads_policy(TOPS_POLICY)


class ByTopTarget:
    """Answers each request with the keys `rankings(request)` lists for the profile its `top` names."""

    def rankings(self, request: Any) -> tuple[list[str], list[str], list[str]]:
        raise NotImplementedError

    def search(self, request: Any) -> Any:
        return SimpleNamespace(keys=tuple(self.rankings(request)[PROFILE_OF_TOP[request.top]]))
