"""Target kind ``sample``: the embedded Muster AG index (``variant = "structured" | "naive"``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.targets.registry import OptionReader

VARIANTS = ("structured", "naive")


class SampleKind:
    name = "sample"
    keys = ("variant", "fields")

    def validate(self, options: OptionReader) -> dict[str, Any]:
        from ragdiag.chunks.fields import read_field_roles

        return {"variant": options.string("variant", "structured", choices=VARIANTS),
                "fields": read_field_roles(options)}

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        from ragdiag.sample.system import open_sample_target

        return open_sample_target(options.get("variant", "structured"), progress=progress, log=log)

    def describe(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"variant": options.get("variant", "structured")}
