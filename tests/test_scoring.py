"""Scoring-profile functions: hand-checkable boosts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ragdiag.errors import InputDataError
from ragdiag.model.schema import ScoringFunction, ScoringProfile
from ragdiag.targets.local.scoring import document_boost, parse_duration, parse_scoring_parameters

NOW = datetime(2026, 6, 30, tzinfo=UTC)


def test_freshness_is_linear_in_age():
    fn = ScoringFunction("freshness", "last_updated", boost=3.0, boosting_duration="P10D")
    prof = ScoringProfile("p", functions=(fn,))
    five_days = (NOW - timedelta(days=5)).isoformat()
    # g = 1 - 5/10 = 0.5, boost = 1 + (3 - 1) * 0.5 = 2.0
    assert document_boost(prof, {"last_updated": five_days}, {}, NOW) == pytest.approx(2.0)
    assert document_boost(prof, {"last_updated": "2020-01-01T00:00:00Z"}, {}, NOW) == 1.0
    assert document_boost(prof, {}, {}, NOW) == 1.0


def test_tag_uses_scoring_parameters():
    fn = ScoringFunction("tag", "entity_keys", boost=2.0, tags_parameter="entities")
    prof = ScoringProfile("p", functions=(fn,))
    params = parse_scoring_parameters(["entities-ENT-A,ENT-B"])
    assert params == {"entities": ["ENT-A", "ENT-B"]}
    assert document_boost(prof, {"entity_keys": ["ENT-B"]}, params, NOW) == 2.0
    assert document_boost(prof, {"entity_keys": ["ENT-C"]}, params, NOW) == 1.0


def test_sum_of_functions_and_interpolations():
    mag = ScoringFunction("magnitude", "c", boost=1.5, boosting_range_start=0.5, boosting_range_end=1.0)
    quad = ScoringFunction("magnitude", "c", boost=2.0, boosting_range_start=0.5, boosting_range_end=1.0,
                           interpolation="quadratic")
    prof = ScoringProfile("p", functions=(mag, quad))
    # c = 0.75: g = 0.5 (linear) and 1 - 0.5**2 = 0.75 (quadratic): 1 + 0.5*0.5 + 1.0*0.75
    assert document_boost(prof, {"c": 0.75}, {}, NOW) == pytest.approx(2.0)
    assert document_boost(prof, {"c": 0.2}, {}, NOW) == 1.0  # below the range
    beyond = ScoringFunction("magnitude", "c", boost=2.0, boosting_range_start=0.0, boosting_range_end=0.5,
                             constant_boost_beyond_range=True)
    assert document_boost(ScoringProfile("q", functions=(beyond,)), {"c": 0.9}, {}, NOW) == 2.0


def test_bad_inputs_are_clear():
    assert parse_duration("P1DT2H") == timedelta(days=1, hours=2)
    with pytest.raises(InputDataError, match="P365D"):
        parse_duration("365 days")
    with pytest.raises(InputDataError, match="name-value"):
        parse_scoring_parameters(["novalue"])
