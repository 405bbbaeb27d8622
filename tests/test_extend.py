"""The extension API (`ragdiag.extend`) is pinned like the top-level API, and it works: a check
that subclasses the exported `Check` runs, judges, draws; the shipped `MockTarget` meets the
target protocol with results checkable by hand."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ragdiag.extend as ext

EXPECTED = [
    "Check", "CheckProtocol", "Verdict", "SkipCheck", "INPUTS", "register_check", "run_check",
    "CheckSpec", "load_spec", "Message",
    "Finding", "Evidence", "Effect", "Location", "AuditResult",
    "plt", "column_values", "figure_text",
    "AuditContext", "SearchRequest", "VectorQuery", "Trace", "Hit", "RankedList", "IndexSchema", "Field",
    "Target", "CAPABILITIES", "CAPABILITY_MEMBERS", "has_capability", "missing_members", "TargetKind", "OptionReader", "register_target_kind",
    "MockTarget",
    "RagdiagError", "ConfigError", "InputDataError", "TargetError",
]

SPEC = """\
id = "word_count"
order = 50

[title]
en = "Word count"
de = "Wortzahl"

[question]
en = "Do the hits carry words?"

[thresholds]
min_words = 2

[messages.pass_words]
en = "{n} hits carry at least {min} words"
de = "{n} Treffer tragen mindestens {min} Wörter"

[messages.few_words]
en = "{key}: {words} words < {min}"
de = "{key}: {words} Wörter < {min}"

[messages.ev_words]
en = "Words per hit"

[messages.fig_title]
en = "Words per hit"
de = "Wörter pro Treffer"

[labels.key]
en = "key"
de = "Schlüssel"

[labels.words]
en = "words"
de = "Wörter"
"""


class WordCount(ext.Check):
    """Counts the words of each hit of one search; fails a hit below ``min_words``."""

    id = "word_count"
    needs = ("target",)
    figure_id = "word_count"

    def evaluate(self, ctx, spec, v):
        trace = ctx.target.search(ext.SearchRequest(search="frist monate", select=("id", "content")))
        rows = []
        for h in trace.hits:
            words = len(str(h.fields.get("content", "")).split())
            rows.append((h.key, words))
            v.observed("hits")
            if words < spec.threshold("min_words"):
                v.fail("few_words", key=h.key, words=words, min=spec.threshold("min_words"))
        v.table("words", "ev_words", ("key", "words"), rows)
        v.passed("pass_words", n=len(rows), min=spec.threshold("min_words"))

    def draw(self, finding, lang="en"):
        rows = ext.column_values(finding, "words", "key", "words")
        fig, ax = ext.plt().subplots()
        ax.bar([r[0] for r in rows], [r[1] for r in rows])
        ax.set_title(ext.figure_text(self.id, "fig_title", lang))
        return fig


class _Ctx:
    lang = "en"

    def __init__(self, target):
        self.target = target

    def has(self, name):
        return name == "target" and self.target is not None


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "word_count.toml"
    p.write_text(SPEC, encoding="utf-8")
    return ext.load_spec(p)


RECORDS = [{"id": "a", "content": "Kündigungsfrist drei Monate"},
           {"id": "b", "content": "Frist"},
           {"id": "c", "content": "Urlaub im Sommer"}]


def test_the_extension_api_is_pinned():
    assert ext.__all__ == EXPECTED


def test_every_name_resolves_and_is_the_internal_object():
    from ragdiag.checks.base import Check
    from ragdiag.checks.registry import register
    from ragdiag.targets.registry import register_kind

    for name in EXPECTED:
        assert getattr(ext, name) is not None, name
    assert ext.Check is Check and ext.register_check is register and ext.register_target_kind is register_kind
    with pytest.raises(AttributeError, match="no_such"):
        ext.no_such  # noqa: B018


def test_importing_the_extension_api_is_cheap():
    code = ("import sys, ragdiag.extend; heavy = [m for m in ('numpy', 'torch', 'faiss', 'matplotlib') "
            "if m in sys.modules]; assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ragdiag_checks_check_is_the_base_class_not_a_protocol():
    import ragdiag.checks

    assert ragdiag.checks.Check is ext.Check
    assert callable(ext.Check.evaluate) and callable(ext.Check.run)


def test_a_subclass_of_check_runs_fails_and_passes(spec):
    fail = ext.run_check(WordCount(), _Ctx(ext.MockTarget(RECORDS)), spec)
    assert fail.status == "fail" and fail.headline == "b: 1 words < 2"  # "Frist": one word
    assert fail.title == "Word count"
    sound = [dict(r, content=r["content"] + " gilt") for r in RECORDS]
    ok = ext.run_check(WordCount(), _Ctx(ext.MockTarget(sound)), spec)
    assert ok.status == "pass" and ok.headline == "2 hits carry at least 2 words"
    assert ok.evidence_table("words").column("words") == [4, 2]


def test_a_subclass_without_evaluate_is_an_error_naming_what_to_implement(spec):
    class Empty(ext.Check):
        id = "word_count"
        needs = ("target",)

    f = ext.run_check(Empty(), _Ctx(ext.MockTarget(RECORDS)), spec)
    assert f.status == "error" and "must implement evaluate(ctx, spec, v)" in f.headline


def test_a_protocol_subclass_returning_nothing_says_what_to_do(spec):
    class NoRun(ext.CheckProtocol):
        id = "word_count"
        needs = ()

        def run(self, ctx, spec):
            return None

    f = ext.run_check(NoRun(), _Ctx(None), spec)
    assert f.status == "error" and "subclass ragdiag.extend.Check" in f.headline


def test_draw_takes_the_finding_and_the_language(spec, monkeypatch):
    pytest.importorskip("matplotlib")
    from ragdiag.checks import figures, registry

    reg = registry.Registry(builtin_package=None, entry_point_group=None)
    reg.register(WordCount)
    monkeypatch.setattr(registry, "_DEFAULT", reg)
    f = ext.run_check(WordCount(), _Ctx(ext.MockTarget(RECORDS)), spec)
    monkeypatch.setattr(ext, "figure_text", lambda cid, name, lang="en", **p: f"{cid}.{name}:{lang}")
    fig = figures.figure(f, "de")
    assert fig.axes[0].get_title() == "word_count.fig_title:de"
    assert ext.Check.draw(WordCount(), f, "de") is None  # the base draws nothing, with the same signature


def test_mock_target_meets_the_protocol_with_hand_checkable_results():
    t = ext.MockTarget(RECORDS)
    assert isinstance(t, ext.Target) and ext.missing_members(t) == []
    assert t.capabilities == {"documents", "get_document"}
    tr = t.search(ext.SearchRequest(search="frist drei", select=("id", "content"), count=True))
    # "a" holds both terms? no: "Kündigungsfrist" is one word, so a: {drei}=1, b: {frist}=1 -> tie by key
    assert tr.keys == ("a", "b") and [h.score for h in tr.hits] == [1.0, 1.0] and tr.count == 2
    assert t.search(ext.SearchRequest(search="urlaub sommer")).hits[0].score == 2.0
    assert t.search(ext.SearchRequest(search="*", filter="id ne 'a'", top=1)).keys == ("b",)
    assert t.count("id eq 'c'") == 1 and t.get_document("c")["content"] == "Urlaub im Sommer"
    assert [d["id"] for d in t.iter_documents(select=("id",))] == ["a", "b", "c"]
    assert t.schema().key_field.name == "id"
    assert len(t.requests) == 3  # every request is kept for tests to read
    bare = ext.MockTarget(RECORDS, capabilities=(), text=False)
    assert bare.capabilities == frozenset() and bare.search(ext.SearchRequest(search="frist")).hits[0].fields == {
        "id": "b"}
    assert bare.fingerprint() != t.fingerprint()
    with pytest.raises(ValueError, match="distinct"):
        ext.MockTarget([{"id": "a"}, {"id": "a"}])
