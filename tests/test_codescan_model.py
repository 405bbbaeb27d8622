"""The code scanner's records: one serialiser, `from_dict(to_dict())` is the record again.

Every record class of `ragdiag.codescan.model` is filled field by field with a value of the
field's type that differs from its default (so a field the serialiser dropped or misread shows),
and must come back equal; the keys stay in declaration order with the derived ones last.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ragdiag.codescan import model, scan_path

RECORDS = sorted((cls for _, cls in inspect.getmembers(model, inspect.isclass)
                  if issubclass(cls, model._Record) and cls is not model._Record and dataclasses.is_dataclass(cls)),
                 key=lambda c: c.__name__)
SAMPLE_CLIENT = Path(__file__).resolve().parents[1] / "sample_data" / "client_app"


def _example(tp: Any, name: str) -> Any:
    """A value of type `tp` that no field has as its default."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return {"nested": [1, "two", None]}
    if origin in (typing.Union, types.UnionType):
        return _example(next(a for a in args if a is not type(None)), name)
    if origin is tuple:
        return (_example(args[0], name), _example(args[0], name + "2"))
    if origin in (Mapping, dict):
        return {f"{name}_key": _example(args[1], name)}
    if tp is bool:
        return True
    if tp is int:
        return 7
    if tp is float:
        return 0.25
    if tp is str:
        return f"{name}-value"
    if isinstance(tp, type) and issubclass(tp, model._Record):
        return _filled(tp)
    raise AssertionError(f"no example for {tp!r} ({name}): teach _example the new type")


def _filled(cls: type) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _example(hints[f.name], f.name) for f in dataclasses.fields(cls)})


def test_every_record_class_is_covered():
    names = {c.__name__ for c in RECORDS}
    assert {"ResolvedValue", "SearchCallSite", "LLMCallSite", "Gap", "Drift", "DelegatedRetrieval",
            "AgentGraph", "FrontendDefault", "ClientThreshold"} <= names
    assert len(RECORDS) >= 19, sorted(names)  # a new record class is found by the same rule


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_filled_record_round_trips(cls):
    rec = _filled(cls)
    for f in dataclasses.fields(cls):  # the example really differs from every default
        if f.default is not dataclasses.MISSING:
            assert getattr(rec, f.name) != f.default, f.name
    data = rec.to_dict()
    assert json.loads(json.dumps(data)) == data  # JSON-safe
    assert list(data) == [f.name for f in dataclasses.fields(cls)] + list(cls._derived)
    back = cls.from_dict(json.loads(json.dumps(data)))
    assert back == rec
    assert back.to_dict() == data


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_record_with_only_its_required_fields_round_trips(cls):
    hints = typing.get_type_hints(cls)
    required = {f.name: _example(hints[f.name], f.name) for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    rec = cls(**required)
    assert cls.from_dict(rec.to_dict()) == rec


def test_derived_keys_are_written_and_ignored_when_read():
    rv = model.ResolvedValue(4, True, "library_default:langchain k")
    assert rv.to_dict()["outcome"] == "library_default"
    assert model.ResolvedValue.from_dict({**rv.to_dict(), "outcome": "unresolved"}) == rv


def test_nested_records_come_back_as_records():
    site = model.SearchCallSite("app.py", 3, "azure_search", "f", "app",
                                params={"top": model.ResolvedValue(5, True, "literal")})
    back = model.SearchCallSite.from_dict(json.loads(json.dumps(site.to_dict())))
    assert isinstance(back.params["top"], model.ResolvedValue) and back.value("top") == 5
    drift = model.Drift("top", {"5": ("a.py:1", "b.py:2"), "<unset>": ("c.py:3",)})
    assert model.Drift.from_dict(drift.to_dict()).values == {"5": ("a.py:1", "b.py:2"), "<unset>": ("c.py:3",)}


def test_every_record_of_the_sample_clients_scan_round_trips():
    s = scan_path(SAMPLE_CLIENT)
    fields = {f.name: f for f in dataclasses.fields(s)}
    n = 0
    for name, f in fields.items():
        for rec in getattr(s, name) if str(f.type).startswith("tuple[") else ():
            data = json.loads(json.dumps(rec.to_dict()))
            assert type(rec).from_dict(data).to_dict() == data, rec
            n += 1
    assert n >= 40 and s.search_calls  # the sample's client has search sites, LLM calls, ACL sites...
