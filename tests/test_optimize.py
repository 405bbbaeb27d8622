"""The profile optimizer on a hand-made world whose best knob setting is known by construction.

Twenty topics, one question each ("What is topicNN?", intent fact, asked by a user in group
'all'). Each topic has four relevant documents whose `vec2` vectors point at the question's
embedding; their `vec` vectors point at another topic, so the baseline's vector field (`vec`)
finds nothing relevant. One relevant document per topic has confidence 0.5, so the baseline's
pre-rerank clause `confidence_score ge 0.85` hides it, and one more relevant document per
topic carries the group 'quarantine', excluded by the security clause
`group_ids/all(g: g ne 'quarantine')` that the optimizer must never drop (dropping it would
raise every metric). The known best setting: field `vec2` and the confidence clause dropped
(or turned into a boost), the security clause kept.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from ragdiag import odata
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.errors import ConfigError
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.model.schema import (
    DOUBLE,
    STRING,
    STRING_COLLECTION,
    VECTOR,
    Field,
    IndexSchema,
    ScoringFunction,
    ScoringProfile,
    VectorSearchProfile,
)
from ragdiag.optimize import (
    KEYS,
    OPTIONAL_KEYS,
    Evaluator,
    SecurityClauseError,
    guard_security,
    load_result,
    optimize_policy,
    plan_optimization,
)
from ragdiag.optimize.splits import split_cases
from ragdiag.policy import Identity, loads_policy
from ragdiag.policy.text import keywords
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder

TOPICS = 20
SECURITY = "group_ids/all(g: g ne 'quarantine')"
POLICY = f"""
[policy]
name = "world"
security_field = "group_ids"
[routes]
fact = "fact"
[profiles.fact]
query_type = "simple"
keyword_text = "none"
filter = "confidence_score ge 0.85 and {SECURITY}"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 50
"""
COMPARE = POLICY.replace('name = "world"', 'name = "other"').replace(
    f'filter = "confidence_score ge 0.85 and {SECURITY}"\n', "")
IDENTITY_CLAUSE = odata.search_in_any("group_ids", ("all",))


def _schema() -> IndexSchema:
    return IndexSchema(
        name="world",
        fields=(Field("key", STRING, key=True, filterable=True, sortable=True),
                Field("content", STRING, searchable=True),
                Field("confidence_score", DOUBLE, filterable=True),
                Field("group_ids", STRING_COLLECTION, filterable=True, retrievable=False),
                Field("vec", VECTOR, dimensions=TOPICS, vector_profile="hnsw"),
                Field("vec2", VECTOR, dimensions=TOPICS, vector_profile="hnsw")),
        scoring_profiles=(ScoringProfile("conf", functions=(ScoringFunction(
            "magnitude", "confidence_score", boost=2.0, boosting_range_start=0.0, boosting_range_end=1.0),)),),
        vector_profiles=(VectorSearchProfile("hnsw", "hnsw-1", m=8),))


def _unit(i: int, j: int = 0, eps: float = 0.0) -> list[float]:
    v = np.zeros(TOPICS)
    v[i % TOPICS] = 1.0
    v[(i + 1) % TOPICS] += eps * j
    return list(v / np.linalg.norm(v))


def question(t: int) -> str:
    return f"What is topic{t:02d}?"


def build_world(path) -> LocalTarget:
    records, vec, vec2 = [], [], []
    for t in range(TOPICS):
        for j in range(5):
            groups = ["all", "quarantine"] if j == 4 else ["all"]
            records.append({"key": f"t{t:02d}d{j}", "content": f"filler words of document {t} {j}",
                            "confidence_score": 0.5 if j == 3 else 0.9, "group_ids": groups})
            vec.append(_unit(t + 7, j, 0.01))
            vec2.append(_unit(t, j, 0.01))
    table = {}
    for t in range(TOPICS):
        table[question(t)] = _unit(t)
        table[keywords(question(t))] = _unit(t)
    spec = LocalIndexSpec("world", _schema(), {}, now="2026-06-30T00:00:00Z")
    return LocalTarget.build(records, spec, index_dir=path, embedder=FakeEmbedder(table, dim=TOPICS),
                             vectors={"vec": np.asarray(vec, dtype=np.float32),
                                      "vec2": np.asarray(vec2, dtype=np.float32)}, progress=False)


def goldset(expect=None) -> Goldset:
    expect = expect or (lambda t: tuple((f"t{t:02d}d{j}", 1) for j in range(5)))
    return Goldset(cases=tuple(GoldCase(id=f"q{t:02d}", question=question(t), intent="fact", as_user="u",
                                        expect_sources=expect(t)) for t in range(TOPICS)), path=None)


def make_ctx(target, gs=None, *, compare=False, budget=None) -> AuditContext:
    return AuditContext(config=None, target=target, runner=Runner(target, budget=budget),
                        policy=loads_policy(POLICY), compare_policy=loads_policy(COMPARE) if compare else None,
                        goldset=gs or goldset(), identities={"u": Identity("u", ("all",))})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("world") / "idx")


class SpyTarget:
    """The world, recording the filter of every request that reaches it."""

    def __init__(self, target) -> None:
        self._t = target
        self.filters: list[str | None] = []
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self._t, name)

    def search(self, request):
        self.calls += 1
        self.filters.append(request.filter)
        vq_filters = [v.filter_override for v in request.vector_queries if v.filter_override]
        self.filters.extend(vq_filters)
        return self._t.search(request)


def test_finds_the_known_best_setting_and_keeps_the_security_clause(world, tmp_path):
    spy = SpyTarget(world)
    ctx = make_ctx(spy, compare=True)
    result = optimize_policy(ctx, seed=1, folds=1)
    fact = result.proposed.profiles["fact"]
    assert fact.vector_queries[0].fields == ("vec2",)
    clauses = [c.text for c in odata.clauses(odata.parse(fact.filter))]
    assert "confidence_score ge 0.85" not in clauses
    assert SECURITY in clauses
    assert fact.security_trimming and fact.vector_queries[0].override_security
    # every request that reached the index carried the identity clause, and every request of the
    # optimized policy the security clause (the compare policy's filter is the identity clause alone)
    assert spy.filters and all(IDENTITY_CLAUSE in f for f in spy.filters)
    ours = [f for f in spy.filters if f != IDENTITY_CLAUSE]
    assert len(spy.filters) - len(ours) <= TOPICS and all(SECURITY in f for f in ours)
    d = result.data
    assert set(KEYS) <= set(d) <= set(KEYS) | set(OPTIONAL_KEYS)
    assert d["decision"]["outcome"] == "proposed" and "proposed" in d["decision"]["message"]
    # 4 of 5 relevant documents reachable (the quarantined one never is): baseline finds none
    assert d["baseline"]["test"]["ndcg@10"] == 0.0
    assert d["proposed"]["test"]["recall@10"] == pytest.approx(0.8)
    assert d["compare"]["policy"] == "other" and d["compare"]["test"]["ndcg@10"] == 0.0
    knobs = {c["knob"] for c in d["changes"]}
    assert "vector query 1: fields" in knobs and "filter clause 'confidence_score ge 0.85'" in knobs
    assert d["requests"] == spy.calls > 0  # every request counted (this runner has no disk cache)
    # the written policy loads and is the proposed one
    prof, res = result.write(tmp_path / "out")
    from ragdiag.policy import load_policy

    loaded = load_policy(prof)
    assert loaded.profiles["fact"] == fact and loaded.security_field == "group_ids"
    assert "# changed by the optimizer" in prof.read_text() and "vector query 1: fields: vec -> vec2" in prof.read_text()
    assert load_result(tmp_path / "out") == d


def test_finds_the_vector_k_that_reaches_every_relevant_document(world):
    """From the right field without the quality clause but k = 2: four relevant documents are
    reachable, so k must grow to at least 4 (every grid value does; the first is kept)."""
    ctx = make_ctx(world)
    fact = ctx.policy.profiles["fact"]
    start = fact.replace(filter=SECURITY, vector_queries=(
        dataclasses.replace(fact.vector_queries[0], fields=("vec2",), k=2),))
    ctx.policy = ctx.policy.with_profile(start)
    result = optimize_policy(ctx, seed=2, folds=1)
    vq = result.proposed.profiles["fact"].vector_queries[0]
    assert vq.k == 20 and vq.fields == ("vec2",)
    assert result.data["changes"][0]["knob"] == "vector query 1: k"
    assert result.data["proposed"]["test"]["recall@10"] == pytest.approx(0.8)
    assert result.data["baseline"]["test"]["recall@10"] == pytest.approx(0.4)


def test_guard_rejects_any_change_of_the_security_clause():
    base = loads_policy(POLICY).profiles["fact"]
    secure = {"group_ids"}
    guard_security(base, base.replace(filter=SECURITY), secure=secure)  # the quality clause may go
    for bad in (base.replace(filter="confidence_score ge 0.85"), base.replace(security_trimming=False),
                base.replace(vector_queries=(dataclasses.replace(base.vector_queries[0], override_security=False),)),
                base.replace(vector_queries=(dataclasses.replace(base.vector_queries[0], filter_override="true"),))):
        with pytest.raises(SecurityClauseError):
            guard_security(base, bad, secure=secure)


def test_no_knob_offers_the_security_clause(world):
    from ragdiag.optimize import knobs_for

    base = loads_policy(POLICY).profiles["fact"]
    names = [k.name for k in knobs_for(base, world.schema(), security_field="group_ids",
                                       role_of=lambda c: "quality")]  # even if misclassified
    assert not any("group_ids" in n for n in names)
    assert "filter clause 'confidence_score ge 0.85'" in names


class RecordingEvaluator(Evaluator):
    """Records which question ids each phase saw."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.seen: dict[str, set[str]] = {"search": set(), "select": set(), "test": set()}
        self.calls: list[tuple[str, frozenset[str]]] = []

    def evaluate(self, profile, cases, *, phase):
        self.seen[phase] |= {c.id for c in cases}
        self.calls.append((phase, frozenset(c.id for c in cases)))
        return super().evaluate(profile, cases, phase=phase)


@pytest.mark.parametrize("folds", [1, 4])
def test_held_out_questions_are_never_used_for_selection(world, folds):
    ctx = make_ctx(world)
    ev = RecordingEvaluator(ctx, ctx.policy)
    result = optimize_policy(ctx, seed=3, folds=folds, evaluator=ev)
    splits = split_cases(list(ctx.goldset), lambda c: "fact", seed=3, folds=folds)
    assert result.data["compare"] is None  # no compare_profiles in this context
    split = result.data["proposed"]["split"]
    assert split["folds"] == folds and split["test_is"] == ("one held-out split" if folds == 1 else "out-of-fold")
    assert result.data["baseline"]["test"]["n"] == (len(splits[0].test) if folds == 1 else TOPICS)
    if folds == 1:
        test = set(splits[0].test)
        assert test and not (test & (ev.seen["search"] | ev.seen["select"]))
        assert test <= ev.seen["test"]
    else:
        # every question is held out once; a fold's search never saw its own test questions
        assert sorted(i for s in splits for i in s.test) == sorted(c.id for c in ctx.goldset)
        for s in splits:
            assert not set(s.test) & (set(s.train) | set(s.validation))
        # the calls come fold by fold (search and select, then the fold's test calls: proposal,
        # current, existing profiles, the simple hybrid tuned on the fold's train + validation): no
        # question a fold is tested on was seen by that fold's search or selection
        k, used, tested_k = 0, set(), False
        for phase, ids in ev.calls:
            if k == folds:
                break  # then the written policy's search on all questions (no test part of its own)
            own = set(splits[k].train) | set(splits[k].validation)
            if phase == "test":
                assert ids == set(splits[k].test) and not ids & used
                tested_k = True
                continue
            if tested_k and not ids <= own:  # fold k is over
                k, used, tested_k = k + 1, set(), False
                if k == folds:
                    break
            used |= ids
        assert k == folds
    # behaviourally: scrambling the test questions' judgments does not change the proposal
    if folds == 1:
        test_ids = set(splits[0].test)
        scrambled = goldset(lambda t: ((f"t{(t + 3) % TOPICS:02d}d0", 1),) if f"q{t:02d}" in test_ids
                            else tuple((f"t{t:02d}d{j}", 1) for j in range(5)))
        again = optimize_policy(make_ctx(world, scrambled), seed=3, folds=1)
        assert again.proposed == result.proposed and again.data["changes"] == result.data["changes"]
        assert again.data["proposed"]["test"] != result.data["proposed"]["test"]


def test_bad_input_is_a_clear_error(world):
    with pytest.raises(ConfigError, match="--folds"):
        optimize_policy(make_ctx(world), folds=0)
    ctx = make_ctx(world)
    ctx.goldset = None
    with pytest.raises(ConfigError, match="goldset"):
        optimize_policy(ctx)
    with pytest.raises(ConfigError, match="budget of 3 cannot pay"):
        optimize_policy(make_ctx(world), budget=3, folds=1)


def test_plan_sends_nothing(world):
    spy = SpyTarget(world)
    plan = plan_optimization(make_ctx(spy), folds=1)
    assert spy.filters == []
    row = plan["rows"][0]
    assert row["profile"] == "fact" and row["train"] + row["validation"] + row["test"] == TOPICS
    assert plan["max_candidates"] >= row["candidates_per_pass"] > 0
    assert plan["max_requests"] >= TOPICS


# ---- against the emulator: the request budget ---------------------------------------------------


def test_budget_is_respected_against_the_emulator(world):
    pytest.importorskip("azure.search.documents")
    from azure.core.credentials import AzureKeyCredential

    from ragdiag.targets.azure import AzureTarget
    from ragdiag.targets.emulator import Emulator

    key = "opt-test-key-0c41"
    with Emulator({"world": world}, api_key=key) as emu:
        live = AzureTarget(emu.url, "world", credential=AzureKeyCredential(key), backoff_s=0.005)
        try:
            plan = plan_optimization(make_ctx(live), budget=40, folds=1)
            assert emu.stats()["search_requests"] == 0  # the plan reads the schema, searches nothing
            budget = plan["reserve"] + 15  # enough for the comparison and a few candidates, not all
            ctx = make_ctx(live)
            result = optimize_policy(ctx, budget=budget, folds=1)
            searched = emu.stats()["search_requests"]
            assert searched <= budget
            assert result.data["requests"] == ctx.runner.stats.sent == searched
            assert result.data["proposed"]["budget_reached"] is True
            assert ctx.runner.stats.over_budget == 0  # nothing was refused: the search stopped first
            assert not math.isnan(result.data["proposed"]["test"]["ndcg@10"])
        finally:
            live.close()


# ---- the report section and the command line ------------------------------------------------


def test_report_section_shows_the_path_and_is_absent_without_a_result(world, tmp_path):
    from ragdiag.report import render_optimization
    from ragdiag.report.notebook import _parameters

    result = optimize_policy(make_ctx(world, compare=True), seed=1, folds=1)
    assert render_optimization(None) == ""
    en = render_optimization(result.data, "en")
    assert "From the current to the proposed policy" in en and "vector query 1: fields" in en
    assert "comparison" in en and "&#x27;other&#x27;" in en
    de = render_optimization(result.data, "de")
    assert "Von der aktuellen zur vorgeschlagenen Policy" in de and "Stellschraube" in de
    assert _parameters(None, "en", None, None, None, None)["optimize_json"] == ""
    result.write(tmp_path)
    assert _parameters(None, "en", None, None, None, None, tmp_path)["optimize_json"] == str(tmp_path.resolve())


def test_cli_bad_input_exits_2(tmp_path, capsys):
    from ragdiag.cli import main

    cfg = tmp_path / "audit.toml"
    cfg.write_text('[audit]\nname = "x"\n')
    assert main(["optimize", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "needs the current policy" in capsys.readouterr().err
    (tmp_path / "p.toml").write_text(POLICY)
    cfg.write_text('[audit]\nname = "x"\n[inputs]\nprofiles = "p.toml"\n')
    assert main(["optimize", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "needs a goldset" in capsys.readouterr().err
    assert main(["optimize", str(cfg), "--out", str(tmp_path / "o"), "--budget", "-1"]) == 2
    assert "--budget must be" in capsys.readouterr().err
    assert main(["optimize", str(cfg)]) == 2
    assert "needs --out DIR" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_load_result_rejects_other_json(tmp_path):
    from ragdiag.errors import InputDataError

    (tmp_path / "optimize.json").write_text('{"findings": []}')
    with pytest.raises(InputDataError, match="expected the keys baseline"):
        load_result(tmp_path)


# ---- the full sample (slow) -----------------------------------------------------------------------


@pytest.mark.slow
def test_sample_misconfigured_policy_improves_on_held_out_questions(misconfigured_ctx, tmp_path):
    ctx = misconfigured_ctx
    result = optimize_policy(ctx, seed=0, folds=1, log=lambda m: None)
    d = result.data
    assert d["proposed"]["test"]["ndcg@10"] > d["baseline"]["test"]["ndcg@10"]
    assert d["p_value"] is not None and d["p_value"] < 0.05
    assert d["compare"]["policy"] == "tuned" and d["compare"]["test"]["n"] == d["baseline"]["test"]["n"]
    for name, before in ctx.policy.profiles.items():
        after = result.proposed.profiles[name]
        guard_security(before, after, secure={"group_ids"})
    prof, _ = result.write(tmp_path)
    from ragdiag.policy import load_policy

    loaded = load_policy(prof)
    assert loaded.validate_against(ctx.target.schema()) == []
    assert loaded.routes == ctx.policy.routes and loaded.security_field == ctx.policy.security_field


@pytest.mark.slow
def test_cli_plan_on_the_sample(capsys):
    from ragdiag.cli import main
    from ragdiag.sample.system import sample_dir

    assert main(["optimize", str(sample_dir() / "audit.toml"), "--plan", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ragdiag optimize --plan" in out and "fact_template" in out and "nothing is sent" in out


@pytest.mark.notebook
def test_report_picks_up_optimize_json_in_its_folder(world, tmp_path):
    """The report template's optional cell: an optimize.json in --out adds the section."""
    from ragdiag import report as R
    from ragdiag.model.findings import AuditResult, Finding

    findings = tmp_path / "findings.json"
    AuditResult(findings=(Finding("pool_size", "fail", "definition: configured pool 20 < 50"),),
                meta={"date": "2026-06-30T10:00:00+00:00", "target": "world", "policy": "world"}).to_json(findings)
    out = tmp_path / "out"
    optimize_policy(make_ctx(world, compare=True), seed=1, folds=1).write(out)
    paths = R.build_report(None, out, findings_json=findings, progress=False, log=None)
    html = paths.html.read_text(encoding="utf-8")
    assert "From the current to the proposed policy" in html and "vector query 1: fields" in html
    nb = json.loads(paths.ipynb.read_text(encoding="utf-8"))
    assert nb["metadata"]["papermill"]["parameters"]["optimize_json"] == str((out / "optimize.json").resolve())


# ---- the whole space and never proposing worse ------------------------------------------------
# A keyword world: each topic's three relevant documents hold the topic's word, while every
# vector points at another topic. The hybrid policy fuses the wrong vector neighbours in, so the
# optimum is the keyword leg alone (reachable by removing the vector query, weight 0, or the
# legs knob) and the quarantine clause must survive it.
KW_POLICY = f"""
[policy]
name = "kw"
security_field = "group_ids"
[routes]
fact = "hybrid"
[profiles.hybrid]
filter = "{SECURITY}"
  [[profiles.hybrid.vector_queries]]
  fields = ["vec"]
  k = 50
"""


def build_keyword_world(path) -> LocalTarget:
    records, vec = [], []
    for t in range(TOPICS):
        for j in range(4):
            groups = ["all", "quarantine"] if j == 3 else ["all"]
            records.append({"key": f"t{t:02d}d{j}", "content": f"topic{t:02d} notes part {j}",
                            "confidence_score": 0.9, "group_ids": groups})
            vec.append(_unit(t + 7, j, 0.01))
    table = {}
    for t in range(TOPICS):
        table[question(t)] = _unit(t)
        table[keywords(question(t))] = _unit(t)
    spec = LocalIndexSpec("kw", _schema(), {}, now="2026-06-30T00:00:00Z")
    vectors = np.asarray(vec, dtype=np.float32)
    return LocalTarget.build(records, spec, index_dir=path, embedder=FakeEmbedder(table, dim=TOPICS),
                             vectors={"vec": vectors, "vec2": vectors}, progress=False)


@pytest.fixture(scope="module")
def keyword_world(tmp_path_factory):
    return build_keyword_world(tmp_path_factory.mktemp("kw") / "idx")


def kw_ctx(target, policy=KW_POLICY) -> AuditContext:
    gs = Goldset(cases=tuple(GoldCase(id=f"q{t:02d}", question=question(t), intent="fact", as_user="u",
                                      expect_sources=tuple((f"t{t:02d}d{j}", 1) for j in range(4)))
                             for t in range(TOPICS)), path=None)
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(policy),
                        compare_policy=None, goldset=gs, identities={"u": Identity("u", ("all",))})


class ProfileSpy(Evaluator):
    """Records every profile evaluated (every candidate of the search and of the decision)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.profiles = []

    def evaluate(self, profile, cases, *, phase):
        self.profiles.append(profile)
        return super().evaluate(profile, cases, phase=phase)


def test_a_keyword_only_optimum_is_found_and_the_security_clause_kept(keyword_world, tmp_path):
    spy = SpyTarget(keyword_world)
    ctx = kw_ctx(spy)
    ev = ProfileSpy(ctx, ctx.policy)
    result = optimize_policy(ctx, seed=0, folds=1, evaluator=ev)
    prof = result.proposed.profiles["hybrid"]
    assert prof.vector_queries == () and prof.keyword_text != "none"  # the vector leg removed
    assert SECURITY in [c.text for c in odata.clauses(odata.parse(prof.filter))]
    d = result.data
    assert d["decision"]["outcome"] == "proposed"
    # 3 of 4 relevant documents are readable (the quarantined one never is), all of them found first
    assert d["proposed"]["test"]["recall@10"] == pytest.approx(0.75)
    assert d["proposed"]["test"]["ndcg@10"] > d["baseline"]["test"]["ndcg@10"]
    # the simple tuned hybrid finds the same optimum (keyword only), so the proposal only ties it
    assert d["alternatives"]["tuned_hybrid"]["weights"] == {"hybrid": "keyword only"}
    assert d["alternatives"]["tuned_hybrid"]["test"]["ndcg@10"] == pytest.approx(d["proposed"]["test"]["ndcg@10"])
    # the security clause is untouched in every candidate evaluated, and on every request sent
    base = ctx.policy.profiles["hybrid"]
    from ragdiag.optimize.space import security_differs

    assert len(ev.profiles) > 10
    assert all(security_differs(base, p, {"group_ids"}) == [] for p in ev.profiles)
    assert spy.filters and all(IDENTITY_CLAUSE in f and SECURITY in f for f in spy.filters)
    prof_file, _ = result.write(tmp_path)
    assert prof_file is not None and prof_file.exists()


def test_an_existing_keyword_profile_is_a_candidate_of_the_route(keyword_world):
    policy = KW_POLICY + f'[profiles.keyword]\nfilter = "{SECURITY}"\n'
    ctx = kw_ctx(keyword_world, policy)
    from ragdiag.optimize import knobs_for

    knobs = {k.name: k for k in knobs_for(ctx.policy.profiles["hybrid"], keyword_world.schema(),
                                          security_field="group_ids", role_of=lambda c: "quality",
                                          existing=ctx.policy.profiles)}
    assert knobs["profile"].options == ("hybrid", "keyword")
    assert knobs["legs"].options == ("as is", "keyword only", "vector only")
    assert 0.0 in knobs["vector query 1: weight"].options
    result = optimize_policy(ctx, seed=0, folds=1)
    first = result.data["changes"][0]
    assert (first["knob"], first["to"]) in {("profile", "keyword"), ("legs", "keyword only"),
                                            ("vector query 1: weight", 0.0)}
    assert result.data["decision"]["validation"]["best_existing"] == "keyword"
    # the proposal ties the keyword profile on validation, so it is not written: the keyword profile is named
    assert result.outcome == "existing_profile" and result.data["decision"]["profile"] == "keyword"
    assert "use the existing profile 'keyword'" in result.message and 'fact = "keyword"' in result.message


def test_with_folds_the_decision_rests_on_out_of_fold_figures(keyword_world):
    policy = KW_POLICY + f'[profiles.keyword]\nfilter = "{SECURITY}"\n'
    result = optimize_policy(kw_ctx(keyword_world, policy), seed=0, folds=4)
    d = result.data["decision"]
    assert d["validation"]["basis"] == "out-of-fold (every question)" and d["validation"]["n"] == TOPICS
    # keyword only is the optimum and an existing profile: the proposal cannot beat it, it is named
    assert d["validation"]["existing"]["keyword"] >= d["validation"]["proposed"] - 1e-9
    assert result.outcome == "existing_profile" and d["profile"] == "keyword"
    assert d["test"]["outcome"]["ndcg@10"] == pytest.approx(d["test"]["existing"]["keyword"]["ndcg@10"])
    assert "out-of-fold nDCG@10 (20 questions)" in result.message


def test_an_existing_profile_with_another_security_clause_is_not_offered(keyword_world):
    policy = KW_POLICY + "[profiles.open]\nsecurity_trimming = false\n"
    ctx = kw_ctx(keyword_world, policy)
    from ragdiag.optimize import knobs_for

    names = [k.name for k in knobs_for(ctx.policy.profiles["hybrid"], keyword_world.schema(),
                                       security_field="group_ids", role_of=lambda c: "quality",
                                       existing=ctx.policy.profiles)]
    assert "profile" not in names


def test_a_proposal_worse_on_validation_is_not_written(world, tmp_path, monkeypatch):
    """The search returns (by construction) a step that sends the vector leg to the wrong field:
    worse than the current policy on validation, so nothing is proposed and no profiles.toml is
    written (a stale one is removed)."""
    import ragdiag.optimize.run as run_mod
    from ragdiag.optimize.search import Step

    good = f"""
[policy]
name = "good"
security_field = "group_ids"
[routes]
fact = "fact"
[profiles.fact]
keyword_text = "none"
filter = "{SECURITY}"
  [[profiles.fact.vector_queries]]
  fields = ["vec2"]
  k = 50
"""
    ctx = AuditContext(config=None, target=world, runner=Runner(world), policy=loads_policy(good),
                       compare_policy=None, goldset=goldset(), identities={"u": Identity("u", ("all",))})
    base = ctx.policy.profiles["fact"]
    worse = base.replace(vector_queries=(dataclasses.replace(base.vector_queries[0], fields=("vec",)),))

    def fake_descend(evaluator, baseline, train, validation, **kw):
        tr = evaluator.evaluate(worse, train, phase="search").aggregate
        va = evaluator.evaluate(worse, validation, phase="select").aggregate
        return [Step(baseline, "", None, None, {"ndcg@10": 0.0}, {"ndcg@10": 0.0}),
                Step(worse, "vector query 1: fields", "vec2", "vec", dict(tr), dict(va))], 1

    monkeypatch.setattr(run_mod, "descend", fake_descend)
    monkeypatch.setattr(run_mod, "select", lambda steps: len(steps) - 1)  # the selection is fooled too
    (tmp_path / "profiles.toml").write_text("stale")
    result = optimize_policy(ctx, seed=1, folds=1)
    d = result.data["decision"]
    assert d["validation"]["proposed"] < d["validation"]["current"]
    assert result.outcome == "keep" and result.message.startswith("keep the current policy")
    prof, res = result.write(tmp_path)
    assert prof is None and not (tmp_path / "profiles.toml").exists() and res.exists()
    assert load_result(tmp_path)["decision"]["outcome"] == "keep"


def test_guard_allows_removing_a_leg_but_not_touching_the_clause():
    base = loads_policy(POLICY).profiles["fact"]
    secure = {"group_ids"}
    guard_security(base, base.replace(vector_queries=(), keyword_text="verbatim"), secure=secure)
    for bad in (base.replace(filter="confidence_score ge 0.85 and group_ids/any(g: g eq 'x')"),
                base.replace(filter=f"{SECURITY} and group_ids/any(g: g eq 'extra')")):
        with pytest.raises(SecurityClauseError):
            guard_security(base, bad, secure=secure)


def test_a_pair_of_changes_that_only_helps_together_is_found(world):
    """Only each topic's low-confidence document (d3) is relevant and the vector query has k = 4:
    the vector field must move to vec2 AND the confidence clause must go. Either change alone
    finds nothing (nDCG@10 and recall@50 stay 0: on vec the 4 neighbours are another topic's,
    on vec2 the clause hides d3), so coordinate descent stops; the pair round combines the near
    misses and finds it."""
    from ragdiag.optimize.search import BudgetGuard, descend
    from ragdiag.optimize.space import security_fields

    gs = goldset(lambda t: ((f"t{t:02d}d3", 1),))
    ctx = make_ctx(world, gs)
    ev = Evaluator(ctx, ctx.policy)
    cases = list(gs)
    fact = ctx.policy.profiles["fact"]
    base = fact.replace(vector_queries=(dataclasses.replace(fact.vector_queries[0], k=4),))
    ctx.policy = ctx.policy.with_profile(base)
    kw = dict(schema=world.schema(), security_field="group_ids", role_of=lambda c: "quality",
              guard=BudgetGuard(ctx.runner, None, lambda: 0), existing=ctx.policy.profiles)
    alone, _ = descend(ev, base, cases[:14], cases[14:], pairs=False, **kw)
    assert len(alone) == 1  # no single change raised train nDCG@10
    steps, _ = descend(ev, base, cases[:14], cases[14:], **kw)
    assert len(steps) >= 2 and " + " in steps[1].knob, [s.knob for s in steps]
    assert steps[1].train["ndcg@10"] > 0 and steps[-1].validation["ndcg@10"] > 0
    found = steps[1].profile
    assert "confidence_score ge 0.85" not in (found.filter or "")
    assert any("vec2" in vq.fields for vq in found.vector_queries)
    assert guard_security(base, found, secure=security_fields(world.schema(), "group_ids")) is None
