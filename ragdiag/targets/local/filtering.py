"""OData filters as boolean row masks over the index's records, compiled and cached per text.

A filter's top-level conjunctions and negations are combined from the masks of their parts,
each part cached by its own text: a what-if that drops one clause of a profile's filter, or
the same clauses under another identity, reuses the other clauses' masks instead of running
the whole filter over every record again. The evaluator is two-valued (a comparison with
null is false), so `a and b` is exactly `mask(a) & mask(b)`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragdiag import odata
from ragdiag.errors import FilterError
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
        try:
            m = self._combined(expr)
        except FilterError:
            # a part that the whole filter's short-circuit would never have reached on some
            # record: evaluate the filter as written
            m = self._rows(expr)
        self._remember(text, m)
        return m

    def _combined(self, expr: Any) -> np.ndarray:
        if isinstance(expr, odata.And):
            out = self._combined(expr.items[0]).copy()
            for item in expr.items[1:]:
                out &= self._combined(item)
            return out
        if isinstance(expr, odata.Not):
            return ~self._combined(expr.operand)
        key = odata.render(expr)
        m = self._masks.get(key)
        if m is None:
            m = self._rows(expr)
            self._remember(key, m)
        else:
            self._masks.move_to_end(key)
        return m

    def _rows(self, expr: Any) -> np.ndarray:
        fn = odata.compile_filter(expr)
        m = np.fromiter((fn(r) for r in self._records), dtype=bool, count=len(self._records))
        m.flags.writeable = False
        return m

    def _remember(self, key: str, m: np.ndarray) -> None:
        m.flags.writeable = False
        self._masks[key] = m
        if len(self._masks) > MASK_CACHE:
            self._masks.popitem(last=False)

    def clear(self) -> None:
        self._masks.clear()
