"""The sample client apps: the faulty one trips every code check, the sound one none; READMEs agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ragdiag.codescan as codescan
from ragdiag.codescan import CodeScan, scan_path

SAMPLE = Path(__file__).resolve().parents[1] / "ragdiag" / "sample" / "data"
FAULTY = SAMPLE / "client_app"
SOUND = SAMPLE / "client_app_sound"
LOCATION = re.compile(r"`([\w./-]+\.(?:py|ts|txt|md|yaml)):(\d+)`")


@pytest.fixture(scope="module")
def faulty() -> CodeScan:
    return scan_path(FAULTY)


@pytest.fixture(scope="module")
def sound() -> CodeScan:
    return scan_path(SOUND)


def all_locations(scan: CodeScan) -> set[str]:
    groups = (scan.search_calls, scan.vector_queries, scan.llm_calls, scan.budget_constants,
              scan.citation_checks, scan.prompt_rules, scan.security_filters)
    return {item.location for group in groups for item in group}


def readme_locations(root: Path) -> list[str]:
    return [f"{m.group(1)}:{m.group(2)}" for m in LOCATION.finditer((root / "README.md").read_text())]


# ---- the faulty app ----------------------------------------------------------------------------


def test_faulty_scattered_call_sites_and_builders(faulty):
    assert not faulty.skipped
    assert len(faulty.search_calls) >= 15
    kinds = {c.kind for c in faulty.search_calls}
    assert {"azure_search", "rest_search"} <= kinds
    assert any(c.is_async for c in faulty.search_calls)
    assert any(c.language == "typescript" for c in faulty.search_calls)
    assert len(faulty.vector_queries) >= 2
    assert len(faulty.builder_modules()) >= 2
    assert "muster_assistant.templates.fact" in faulty.builder_modules()
    assert "muster_assistant.agents.search_agent" in faulty.builder_modules()
    definition = next(c for c in faulty.search_calls if c.file.endswith("templates/definition.py"))
    assert definition.builder == "muster_assistant.knowledge_base:template_params"


def test_faulty_drift_on_confidence_clause_and_exhaustive(faulty):
    drift = {d.param: d for d in faulty.drift()}
    conf = drift["filter: confidence_score ge 0.85"]
    assert conf.role == "quality" and conf.kind == "filter_clause"
    present, absent = set(conf.values["present"]), set(conf.values["absent"])
    assert "muster_assistant/templates/fact.py:15" in present
    assert "muster_assistant/templates/definition.py:10" in present     # through the builder helper
    agent = {c.location for c in faulty.search_calls if c.file.endswith("agents/search_agent.py")}
    assert agent and agent <= absent
    assert set(drift["exhaustive"].values["true"]) == {"muster_assistant/legacy/old_templates.py:15",
                                                       "muster_assistant/legacy/old_templates.py:30"}
    assert drift["security filter"].kind == "security_clause"
    assert "muster_assistant/agents/search_agent.py:67" in drift["security filter"].values["absent"]
    assert {"top", "k"} <= set(drift)


def test_faulty_shared_text_and_prompt_rules(faulty):
    kb = next(c for c in faulty.search_calls if c.location == "muster_assistant/knowledge_base.py:40")
    assert kb.shared_text
    assert kb.channel_vars == {"search_text": "query", "semantic_query": "query", "vector_text": "query"}
    assert len(faulty.shared_text_sites()) >= 2
    sole = faulty.sole_input_rules()
    assert [r.location for r in sole] == ["muster_assistant/prompts/query_writer.txt:3"]
    assert "SOLE input to ALL THREE stages" in sole[0].text
    pairs = faulty.contradictions()
    assert len(pairs) == 1
    ranges = {pairs[0][0].word_range, pairs[0][1].word_range}
    assert ranges == {(2, 7), (5, 12)}


def test_faulty_unbounded_llm_unvalidated_citations_injection_no_goldset(faulty):
    unbounded = {c.location for c in faulty.unbounded_llm_calls()}
    assert "muster_assistant/chat.py:35" in unbounded
    assert not faulty.budget_constants
    assert faulty.citation_checks and faulty.citations_validated() is False
    risks = {s.location: s for s in faulty.injection_risks()}
    api = risks["muster_assistant/api.py:23"]
    assert api.fstring and api.from_request and not api.escaped and not api.uses_search_in
    assert "request.user_group" in api.expression
    assert faulty.goldset_files == ()


# ---- the sound app -----------------------------------------------------------------------------------


def test_sound_one_builder_no_drift_no_shared_text(sound):
    assert not sound.skipped
    assert sound.builder_modules() == ("muster_assistant.retrieval.profiles",)
    assert sound.search_calls and all(c.builder == "muster_assistant.retrieval.profiles:build_request"
                                      for c in sound.search_calls)
    assert sound.drift() == []
    assert sound.shared_text_sites() == ()
    site = sound.search_calls[0]
    assert site.channel_vars == {"search_text": "keywords", "semantic_query": "question",
                                 "vector_text": "question"}
    assert site.value("scoring_profile") == "quality_boost"
    assert "confidence_score" not in (site.param("filter").value or "")


def test_sound_budget_citations_security_goldset(sound):
    with_context = [c for c in sound.llm_calls if c.retrieved_context]
    assert with_context and all(c.context_bounded for c in with_context)
    assert "fit_to_budget" in next(c for c in with_context if c.file.endswith("chat.py")).bound_evidence
    assert sound.unbounded_llm_calls() == ()
    assert {b.name for b in sound.budget_constants} == {"MAX_CONTEXT_TOKENS", "MAX_SOURCES", "MAX_CHARS_PER_SOURCE"}
    assert sound.citations_validated() is True
    (sec,) = sound.security_filters
    assert sec.uses_search_in and sec.escaped and sec.from_identity and not sec.from_request
    assert sound.injection_risks() == ()
    assert [g.path for g in sound.goldset_files] == ["eval/goldset.yaml"]
    assert sound.contradictions() == [] and sound.sole_input_rules() == ()


# ---- READMEs, API, output ------------------------------------------------------------------------------


@pytest.mark.parametrize("root", [FAULTY, SOUND], ids=["faulty", "sound"])
def test_readme_locations_match_the_scan(root, faulty, sound):
    scan = faulty if root == FAULTY else sound
    listed = readme_locations(root)
    assert listed
    found = all_locations(scan)
    assert set(listed) <= found, sorted(set(listed) - found)
    for loc in listed:
        file, line = loc.rsplit(":", 1)
        assert int(line) <= len((root / file).read_text().splitlines())
    # every search call site is listed
    assert {c.location for c in scan.search_calls} <= set(listed)
    if root == FAULTY:
        assert {c.location for c in scan.vector_queries} <= set(listed)
        assert {c.location for c in scan.unbounded_llm_calls()} <= set(listed)
        assert {s.location for s in scan.injection_risks()} <= set(listed)


def test_public_api():
    assert sorted(codescan.__all__) == sorted(
        ["LLM_KINDS", "PARAM_NAMES", "SEARCH_KINDS", "SITE_CLASSES", "AclSite", "AgentGraph", "BudgetConstant",
         "BudgetUnitIssue", "Builder", "CitationCheck", "ClientThreshold", "CodeScan", "DelegatedRetrieval",
         "Drift", "FailOpen", "FrontendDefault", "GoldsetFile", "LLMCallSite", "LanguageScanner", "PromptRule",
         "ResolvedValue", "SearchCallSite", "SecurityFilterSite", "Skipped", "contradictions", "prompt_rules",
         "scan_path"])
    for name in codescan.__all__:
        assert hasattr(codescan, name)


def test_sample_scans_are_json_safe(faulty, sound):
    for scan in (faulty, sound):
        data = scan.to_dict()
        assert json.loads(json.dumps(data)) == data
        assert set(scan.summary()) >= {"search_calls", "builder_modules", "drift", "goldset_files"}
    assert faulty.summary()["search_calls"] == 15
    assert sound.summary()["search_calls"] == 2
