"""What the contract tests of the ported checks share: a target whose every request fails,
and the assertions for figure binding and German rendering."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ragdiag.checks.base import catalogue_for, localize
from ragdiag.checks.figures import FigureDataError, figure
from ragdiag.errors import TargetError
from ragdiag.inputs.checklist import load_checklist
from ragdiag.model.messages import render


class FailingTarget:
    """Another target, except that every search raises `TargetError(reason)`."""

    def __init__(self, inner: Any, reason: str = "index offline (test)") -> None:
        self._inner, self.reason = inner, reason

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def fingerprint(self) -> str:
        return "failing-" + self._inner.fingerprint()

    def search(self, request: Any) -> Any:
        raise TargetError(self.reason)


def assert_failures_make_error(finding: Any, reason: str) -> None:
    assert finding.status == "error", finding.headline
    d = finding.to_dict()
    assert d["failures"] and all(f["reason"] == reason for f in d["failures"])
    assert d["incomplete"]["failed_requests"] == d["incomplete"]["requests"] > 0
    assert reason in finding.headline


def assert_figure_binding(finding: Any, table: str, column: str) -> None:
    """Drawn from the finding's own table; a renamed title keeps it, a renamed column raises."""
    import matplotlib.figure
    import matplotlib.pyplot as plt

    fig = figure(finding)
    assert isinstance(fig, matplotlib.figure.Figure)
    retitled = replace(finding, evidence=tuple(replace(e, title="Renamed", title_msg=None) if e.key == table else e
                                               for e in finding.evidence))
    assert isinstance(figure(retitled), matplotlib.figure.Figure)
    keys = lambda e: tuple(f"{k}_renamed" if k == column else k for k in e.column_keys)  # noqa: E731
    renamed = replace(finding, evidence=tuple(replace(e, column_keys=keys(e)) if e.key == table else e
                                              for e in finding.evidence))
    with pytest.raises(FigureDataError):
        figure(renamed)
    plt.close("all")


def assert_german(finding: Any) -> Any:
    """Headline, recommendations, evidence titles and column labels render in German."""
    specs = load_checklist()
    cat = catalogue_for(specs.values())
    de = localize(finding, "de", specs)
    assert finding.headline_msgs, "the finding carries no messages"
    for m in finding.headline_msgs + finding.recommendation_msgs:
        en, ger = render(m, "en", cat), render(m, "de", cat)
        assert en != ger, f"{m.id} renders the same in English and German"
        assert en not in de.headline and en not in de.recommendations
    assert de.headline == "; ".join(render(m, "de", cat) for m in finding.headline_msgs)
    for en_ev, de_ev in zip(finding.evidence, de.evidence, strict=True):
        if en_ev.title_msg is not None:
            assert de_ev.title == render(en_ev.title_msg, "de", cat) != en_ev.title
        labels = {**specs[finding.check_id].labels}
        for key, en_col, de_col in zip(en_ev.column_keys, en_ev.columns, de_ev.columns, strict=True):
            texts = labels.get(key) or {}
            if texts.get("de") and texts.get("de") != texts.get("en"):
                assert de_col == texts["de"] != en_col
    return de
