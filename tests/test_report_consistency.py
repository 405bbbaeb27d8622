"""The report's sentences against its own tables, on three audits: the misconfigured sample, the
tuned sample and a non-sample audit (a BEIR folder made here, through `ragdiag init`).

Rendered with the report's pure renderers (what the notebook prints, without the minutes a PDF
takes). Each rule compares text with the evidence of the same run, never with literals:

- a priority rests on a significant measured improvement, and its effect line prints the same
  numbers the check's effects table prints;
- no recommendation contradicts its check's own measurement (merge a route whose table says it
  earns its upkeep; "the reranker makes ranking worse" on a difference that is not significant);
- no headline prints a non-zero share as 0 %;
- what a headline hides behind "(+N more)" is in findings.json and in the check's section;
- a summary sentence claims nothing the audit did not observe (permission filtering without a
  security field, citations checked in code with no code scanned).
"""

from __future__ import annotations

import re

import pytest

from ragdiag import report as R
from ragdiag.model.findings import AuditResult
from ragdiag.model.messages import render
from ragdiag.report.tables import fmt_number, fmt_p

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def specs():
    from ragdiag.inputs.checklist import load_checklist

    return load_checklist()


def _audit(config):
    from ragdiag.audit import run_audit

    return run_audit(config, progress=False)


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    from ragdiag.sample.system import sample_dir
    from tests.test_init import make_beir, run

    root = tmp_path_factory.mktemp("beir-audit")
    assert run(root / "audit", "--beir", make_beir(root / "beir")) == 0
    return {"sample": _audit(None), "tuned": _audit(sample_dir() / "audit-tuned.toml"),
            "beir": _audit(root / "audit" / "audit.toml")}


NAMES = ("sample", "tuned", "beir")


def _text(html: str) -> str:
    import html as _html

    return " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.mark.parametrize("name", NAMES)
def test_priorities_rest_on_the_effects_their_checks_print(audits, specs, name):
    result = audits[name]
    for p in R.priorities(result, specs):
        if p.finding.priority == "security":
            continue
        assert p.effect is not None and p.effect.significant and p.effect.improves, (name, p)
        section = _text(R.render_check(p.finding, specs[p.finding.check_id], number=p.number))
        for number in (fmt_number(p.effect.before, "en", decimals=3), fmt_number(p.effect.after, "en", decimals=3),
                       fmt_p(p.effect.p, "en")):
            assert number in section, (name, p.finding.check_id, number)
    title = _text(R.render_title(result, "en", specs=specs))
    for f in R.unmeasured_findings(result):  # never a priority, and shown with what was measured
        assert not any(e.significant and e.improves for e in f.effects), (name, f.check_id)
    assert "Priorities" in title


@pytest.mark.parametrize("name", NAMES)
def test_no_recommendation_contradicts_its_own_measurement(audits, name):
    for f in audits[name].findings:
        recs = {m.id: m for m in f.recommendation_msgs}
        if f.check_id == "route_counts" and any(t.key == "route_gain" for t in f.evidence):
            earned = {r["intent"] for r in f.evidence_table("route_gain").records() if r["earns_upkeep"]}
            merged = {m.params["route"] for m in f.recommendation_msgs if m.id == "route_counts.rec_merge_low_traffic"}
            assert not merged & earned, (name, merged & earned)
        if "reranker_scores.rec_reranker_worse" in recs:
            worse = [e for e in f.effects if e.metric == "ndcg@10" and e.action_msg is not None
                     and e.action_msg.id.endswith("eff_rerank_off")]
            assert worse and all(e.significant for e in worse), (name, f.effects)


def _numbers(msg) -> list[float]:
    """Every number among a message's parameters, nested messages and lists included."""
    from ragdiag.model.messages import Message

    out: list[float] = []
    for v in msg.params.values():
        for x in v if isinstance(v, tuple | list) else (v,):
            if isinstance(x, Message):
                out += _numbers(x)
            elif isinstance(x, int | float) and not isinstance(x, bool):
                out.append(x)
    return out


_ZERO_SHARE = re.compile(r"(?<![\d.,])0 ?%")


@pytest.mark.parametrize("name", NAMES)
def test_no_headline_prints_a_non_zero_share_as_zero(audits, specs, name):
    from ragdiag.checks.base import catalogue_for

    cat = catalogue_for(list(specs.values()))
    for f in audits[name].findings:
        for m in (*f.headline_msgs, *f.more_msgs):
            text = render(m, "en", cat)
            zeros = [v for v in _numbers(m) if v == 0]
            if _ZERO_SHARE.search(text):
                assert zeros, (name, f.check_id, text, m.params)


@pytest.mark.parametrize("name", NAMES)
def test_nothing_behind_and_more_is_missing(audits, specs, name):
    result = audits[name]
    back = AuditResult.from_dict(result.to_dict())
    for f, g in zip(result.findings, back.findings, strict=True):
        more = [m for m in f.headline_msgs if m.id == "common.and_more"]
        if not more:
            continue
        assert len(f.more_msgs) == more[0].params["n"] and g.more_msgs == f.more_msgs, (name, f.check_id)
        section = _text(R.render_check(f, specs[f.check_id]))
        from ragdiag.checks.base import catalogue_for

        cat = catalogue_for([specs[f.check_id]])
        for m in f.more_msgs:
            assert " ".join(render(m, "en", cat).split()) in section, (name, f.check_id, m)


def test_the_non_sample_summary_claims_nothing_it_did_not_observe(audits, specs):
    result = audits["beir"]
    summary = _text(R.render_summary(result, "en", specs=specs))
    assert not (result.meta.get("config") or {}).get("client_code")
    assert "citations are checked in code" not in summary
    acl = next(f for f in result.findings if f.check_id == "acl_trimming")
    if not acl.observed.get("leak_probe_requests"):
        assert "Permission filtering works" not in summary and "permission filtering works" not in summary
    title = _text(R.render_title(result, "en", specs=specs))
    # a priority names only what this system has: no reranker where no profile is semantic
    from ragdiag.policy import load_policy

    cfg = result.meta.get("config") or {}
    policy = load_policy(cfg["profiles"]) if cfg.get("profiles") else None
    if policy is not None and not any(p.query_type == "semantic" for p in policy.profiles.values()):
        prios = [p.action for p in R.priorities(result, specs)]
        assert not [a for a in prios if "rerank" in a.lower()], prios
    assert "Priorities" in title


def _german_html(result, specs) -> str:
    from ragdiag.checks.base import localize

    de = localize(result, "de", specs)
    parts = [R.render_title(de, "de", specs=specs), R.render_summary(de, "de", specs)]
    parts += [R.render_check(f, specs.get(f.check_id), "de", number=n, total=len(de.findings), figures=False)
              for n, f in enumerate(de.findings, start=1)]
    parts.append(R.render_appendix(None, de, "de", specs=specs))
    return "".join(parts)


@pytest.mark.parametrize("name", NAMES)
def test_german_report_of_each_audit_holds_no_english_catalogue_phrase(audits, specs, name):
    """The German body and appendix (table cells and evidence labels included) of all three audits,
    the non-sample one too, against every English catalogue template of three words or more."""
    from tests.test_report_notebook import english_in, english_patterns, html_text

    text = html_text(_german_html(audits[name], specs))
    assert "Prioritäten" in text
    found = english_in(text, specs, english_patterns(specs))
    assert not found, (name, found[:10])


def test_german_figure_labels_hold_no_english_catalogue_phrase(audits, specs):
    """Every text of every figure (titles, axis labels, legends, ticks) drawn in German: none is
    an English catalogue text of two words or more (data values such as route names are exempt)."""
    from ragdiag.checks.figures import figure
    from tests.test_report_notebook import english_templates

    english = {" ".join(t.split()).lower() for _, t in english_templates(specs)
               if "{" not in t and len(t.split()) >= 2}
    from ragdiag.checks.base import localize

    drawn = 0
    for f in localize(audits["sample"], "de", specs).findings:  # what the report draws from
        fig = figure(f, "de")
        if fig is None:
            continue
        drawn += 1
        texts = [" ".join(a.get_text().split()) for a in fig.findobj(lambda a: hasattr(a, "get_text"))]
        leaks = [t for t in texts if t.lower() in english]
        assert not leaks, (f.check_id, leaks)
    assert drawn >= 5
