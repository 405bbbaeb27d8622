"""OData filters as boolean row masks over the index's records, compiled and cached per text."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragdiag import odata
from ragdiag.model.schema import IndexSchema

MASK_CACHE = 512


class FilterMasks:
    """`mask(text)`: which rows pass the filter (validated against the schema first)."""

    def __init__(self, records: Sequence[Mapping[str, Any]], schema: IndexSchema) -> None:
        self._records = records
        self._schema = schema
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()

    def mask(self, text: str) -> np.ndarray:
        m = self._masks.get(text)
        if m is not None:
            self._masks.move_to_end(text)
            return m
        expr = odata.parse(text)
        odata.validate(expr, self._schema)
        fn = odata.compile_filter(expr)
        m = np.fromiter((fn(r) for r in self._records), dtype=bool, count=len(self._records))
        m.flags.writeable = False
        self._masks[text] = m
        if len(self._masks) > MASK_CACHE:
            self._masks.popitem(last=False)
        return m

    def clear(self) -> None:
        self._masks.clear()
