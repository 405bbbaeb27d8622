"""Tests of ragdiag.inputs.querylog on a hand-written log: loading, shares, cascades, errors with lines."""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragdiag.errors import InputDataError
from ragdiag.inputs.querylog import QueryLog, QueryLogEntry, load_query_log

Q_NOTICE = "What notice period applies to Nordlicht?"
F_STRICT = "category eq 'contract' and year eq 2025"
F_RELAXED = "category eq 'contract'"

LOG = [
    # 1: anna's first attempt, all three channels identical
    {"timestamp": "2026-05-04T09:12:33Z", "user": "anna.sales", "session": "s-0012",
     "question": Q_NOTICE, "route": "fact", "profile": "fact", "keyword_text": Q_NOTICE,
     "vector_text": Q_NOTICE, "semantic_text": Q_NOTICE, "filter": F_STRICT, "top": 10, "k": 50,
     "latency_ms": 412.5, "results": 0, "attempt": 1},
    # 2: 10 s later, relaxed filter (channels identical, vector null -> still shared)
    {"timestamp": "2026-05-04T09:12:43Z", "user": "anna.sales", "session": "s-0012",
     "question": Q_NOTICE, "route": "fact", "profile": "fact", "keyword_text": Q_NOTICE,
     "vector_text": None, "semantic_text": Q_NOTICE, "filter": F_RELAXED, "top": 10, "k": 50,
     "latency_ms": 380, "results": 2, "attempt": 2},
    # 3: 25 s after #2 (chained), no filter at all
    {"timestamp": "2026-05-04T09:13:08Z", "user": "anna.sales", "question": Q_NOTICE.lower(),
     "route": "fact", "keyword_text": "notice period Nordlicht", "vector_text": Q_NOTICE,
     "semantic_text": Q_NOTICE, "filter": None, "latency_ms": 390.0, "attempt": 3},
    # 4: another user, different texts per channel, plus an unknown key
    {"timestamp": "2026-05-04T09:14:00+02:00", "user": "ben.ops", "question": "List all contracts",
     "route": "list", "keyword_text": "contracts", "vector_text": "all contracts",
     "semantic_text": None, "filter": None, "latency_ms": 120, "trace_id": "abc",
     "vector_fields": "text_vector, title_vector", "classification_ms": 35.5},
    # 5: ben repeats the same question with the same filter: a retry, not a cascade
    {"timestamp": "2026-05-04T07:14:05Z", "user": "ben.ops", "question": "List all contracts",
     "route": "list", "keyword_text": "contracts", "filter": None, "latency_ms": 110,
     "classification_ms": 20.5},
    # 6: anna again, same question, 2 minutes later with another filter: outside the window
    {"timestamp": "2026-05-04T09:15:08Z", "user": "anna.sales", "question": Q_NOTICE,
     "route": "fact", "keyword_text": Q_NOTICE, "filter": "year eq 2024", "latency_ms": 400},
    # 7: only one channel: not comparable
    {"timestamp": "2026-05-04T10:00:00", "user": "carl", "question": "Status?", "route": "chat",
     "keyword_text": "status", "latency_ms": 50, "vector_fields": ["v"]},
    # 8: no user, session only (epoch seconds, 12:00 UTC): a two-step cascade within 5.5 s
    {"timestamp": 1777896000, "session": "s-9", "question": "Policy on travel", "route": "fact",
     "filter": "dept eq 'hr'", "latency_ms": 90},
    {"timestamp": 1777896005.5, "session": "s-9", "question": "Policy on travel", "route": "fact",
     "filter": None, "latency_ms": 95},
    # 10: neither user nor session: never part of a cascade
    {"timestamp": "2026-05-04T11:00:00Z", "question": "x", "route": "fact", "filter": "a"},
    {"timestamp": "2026-05-04T11:00:01Z", "question": "x", "route": "fact", "filter": "b"},
]


def write_log(tmp_path: Path, objs, name: str = "queries.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n",
                 encoding="utf-8")
    return p


@pytest.fixture
def log(tmp_path) -> QueryLog:
    return load_query_log(write_log(tmp_path, LOG))


def test_loading(log, tmp_path):
    assert len(log) == 11 and log.path == str(tmp_path / "queries.jsonl")
    e = log.entries[0]
    assert e == QueryLogEntry(
        timestamp=datetime(2026, 5, 4, 9, 12, 33, tzinfo=UTC), question=Q_NOTICE, route="fact",
        user="anna.sales", session="s-0012", profile="fact", keyword_text=Q_NOTICE,
        vector_text=Q_NOTICE, semantic_text=Q_NOTICE, filter=F_STRICT, top=10, k=50,
        latency_ms=412.5, results=0, attempt=1, line=1)
    assert isinstance(log.entries[1].latency_ms, float)
    ben = log.entries[3]
    assert ben.extra == {"trace_id": "abc"}
    assert ben.vector_fields == ("text_vector", "title_vector")
    assert ben.timestamp == datetime(2026, 5, 4, 7, 14, tzinfo=UTC)
    assert log.entries[6].timestamp.tzinfo is not None  # naive -> UTC
    assert log.entries[7].timestamp == datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    assert [e.line for e in log][:3] == [1, 2, 3]


def test_blank_lines_keep_line_numbers(tmp_path):
    p = write_log(tmp_path, [LOG[0], "", LOG[1]])
    assert [e.line for e in load_query_log(p)] == [1, 3]


def test_routes_and_shares(log):
    assert log.routes() == Counter({"fact": 8, "list": 2, "chat": 1})
    shares = log.share_by_route()
    assert list(shares) == ["fact", "list", "chat"]
    assert shares == {"fact": pytest.approx(8 / 11), "list": pytest.approx(2 / 11),
                      "chat": pytest.approx(1 / 11)}
    assert "fact 73%" in repr(log)
    assert QueryLog(entries=()).share_by_route() == {}


def test_shared_text_share(log):
    flags = [e.shares_text for e in log]
    # 1 all equal; 2 two equal (vector null); 3 keyword differs; 4 differs; 5, 7-11 one or no channel
    # 6 one channel
    assert flags == [True, True, False, False, None, None, None, None, None, None, None]
    assert log.shared_text_share() == pytest.approx(2 / 4)
    assert math.isnan(QueryLog(entries=log.entries[4:]).shared_text_share())


def test_cascades(log):
    cascades = log.cascades()
    assert len(cascades) == 2
    anna = cascades[0]
    assert anna.user == "anna.sales" and anna.question == Q_NOTICE
    assert anna.filters == (F_STRICT, F_RELAXED, None)
    assert anna.attempts == (1, 2, 3)
    assert anna.lines == (1, 2, 3)
    assert anna.duration_s == 35.0
    travel = cascades[1]
    assert travel.user == "s-9" and travel.filters == ("dept eq 'hr'", None)
    assert travel.attempts == (None, None) and travel.duration_s == 5.5
    assert anna.to_dict()["filters"] == [F_STRICT, F_RELAXED, None]


def test_cascade_window(log):
    # with a 15 s window the chain breaks after #2 (the next gap is 25 s)
    narrow = log.cascades(window_s=15)
    assert [c.lines for c in narrow] == [(1, 2), (8, 9)]
    # with a 10 minute window #6 joins anna's chain
    wide = log.cascades(window_s=600)
    assert wide[0].lines == (1, 2, 3, 6)
    assert log.cascades(window_s=1) == []


def test_latency_by_route(log):
    lat = log.latency_by_route()
    assert lat["list"]["n"] == 2 and lat["list"]["mean"] == pytest.approx(115.0)
    cls = log.latency_by_route("classification_ms")
    assert set(cls) == {"list"} and cls["list"]["p50"] == pytest.approx(28.0)


def test_to_dataframe(log):
    df = log.to_dataframe()
    assert len(df) == 11
    assert df.loc[3, "extra"] == {"trace_id": "abc"}
    assert list(df["line"])[:2] == [1, 2]
    assert "<table>" in log._repr_html_()


GOOD = {"timestamp": "2026-05-04T09:12:33Z", "question": "q", "route": "fact"}


@pytest.mark.parametrize(("bad", "fragment"), [
    ('{"timestamp": "2026-05-04T09:12:33Z", "question": ', "invalid JSON"),
    ('["not", "an", "object"]', "must be a JSON object"),
    ({"question": "q", "route": "fact"}, "missing required key(s) timestamp"),
    ({"timestamp": "2026-05-04T09:12:33Z", "question": "q"}, "missing required key(s) route"),
    ({"timestamp": "2026-05-04T09:12:33Z", "question": None, "route": "r"}, "question"),
    (GOOD | {"top": "10"}, "'top' must be an integer"),
    (GOOD | {"k": 5.0}, "'k' must be an integer"),
    (GOOD | {"top": True}, "'top' must be an integer"),
    (GOOD | {"latency_ms": "fast"}, "'latency_ms' must be a number"),
    (GOOD | {"timestamp": "yesterday"}, "unparseable timestamp 'yesterday'"),
    (GOOD | {"timestamp": "2026-13-04T09:12:33Z"}, "unparseable timestamp"),
    (GOOD | {"route": 3}, "'route' must be a string"),
    (GOOD | {"filter": ["a"]}, "'filter' must be a string or null"),
    (GOOD | {"vector_fields": [1]}, "vector_fields"),
])
def test_errors_carry_the_line(tmp_path, bad, fragment):
    p = write_log(tmp_path, [GOOD, "", bad])
    with pytest.raises(InputDataError) as info:
        load_query_log(p)
    exc = info.value
    assert fragment in str(exc)
    assert exc.line == 3 and exc.path == str(p)
    assert str(exc).startswith(f"{p}:3: ")


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(InputDataError, match="no entries"):
        load_query_log(write_log(tmp_path, [""]))
    with pytest.raises(InputDataError, match="not found"):
        load_query_log(tmp_path / "missing.jsonl")
