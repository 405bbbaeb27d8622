"""Metric labels: the report's table first, then the check's own spec ``[labels]`` (a plugin's
metric prints by its name, not as a raw key), else the key itself."""

from __future__ import annotations

from ragdiag.report.labels import metric_label


def test_a_spec_label_names_a_metric_the_table_does_not_know():
    labels = {"words_p50": {"en": "words per hit, median", "de": "Wörter pro Treffer, Median"}}
    assert metric_label("words_p50", "de", labels) == "Wörter pro Treffer, Median"
    assert metric_label("words_p50", "fr", labels) == "words per hit, median"  # English when untranslated
    assert metric_label("words_p50", "de") == "words_p50"  # no label anywhere: the key


def test_the_reports_own_label_wins_over_a_spec_column_label():
    assert metric_label("profiles", "de", {"profiles": {"en": "profile", "de": "Profil"}}) == "Profile"
    assert metric_label("median_top1[definition]", "en", {}) == "median top-1 reranker score (definition)"


def test_the_appendix_prints_a_plugin_metric_by_its_spec_label():
    from types import SimpleNamespace

    from ragdiag.report.render import _metrics_html

    spec = SimpleNamespace(labels={"words_p50": {"en": "words per hit, median", "de": "Wörter, Median"}})
    html = _metrics_html({"words_p50": 4}, "de", spec)
    assert "Wörter, Median" in html and "words_p50" not in html
    assert "words_p50" in _metrics_html({"words_p50": 4}, "de")  # without the spec: the raw key
