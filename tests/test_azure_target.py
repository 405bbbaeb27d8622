"""The live adapter, driven through the real azure-search-documents SDK against the emulator.

Every emulator test runs with both transports: "raw" (the REST body through the SDK
client's pipeline, the default with 12.x) and "sdk" (the SDK's typed models, the fallback).
"""

from __future__ import annotations

import json
import logging
import pickle
import time
from dataclasses import dataclass

import pytest

from ragdiag.engine.runner import Runner
from ragdiag.errors import ConfigError, TargetError
from ragdiag.inputs.config import AuditConfig, TargetConfig
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.targets.emulator import Emulator, Faults
from tests.test_emulator import INDEX, KEY, build_tiny_target

pytest.importorskip("azure.search.documents")
from azure.core.credentials import AccessToken, AzureKeyCredential  # noqa: E402

from ragdiag.targets import azure as azure_mod  # noqa: E402
from ragdiag.targets.azure import (  # noqa: E402
    AzureTarget,
    normalise_result,
    parse_debug_subscores,
)
from ragdiag.targets.azure import target as azure_target_mod  # noqa: E402


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return build_tiny_target(tmp_path_factory.mktemp("az") / "idx")


TRANSPORT = {"name": "raw"}  # the transport of the running test, set by `transport`


@pytest.fixture(params=["raw", "sdk"])
def transport(request):
    """Both ways of sending a search; `_target` builds targets with the current one."""
    TRANSPORT["name"] = request.param
    yield request.param
    TRANSPORT["name"] = "raw"


@pytest.fixture()
def emu(local, transport):
    with Emulator({INDEX: local}, api_key=KEY) as e:
        yield e


def _target(url, **kw):
    kw.setdefault("backoff_s", 0.005)
    kw.setdefault("transport", TRANSPORT["name"])
    t = AzureTarget(url, INDEX, credential=AzureKeyCredential(KEY), api_key_env="RAGDIAG_TEST_KEY",
                    **kw)
    assert t.transport == kw["transport"]
    return t


@pytest.fixture()
def target(emu):
    t = _target(emu.url)
    yield t
    t.close()


def _vq(vector=(1, 0, 0), k=5, **kw):
    return VectorQuery(fields=("vec",), vector=vector, k=k, **kw)


REQUESTS = {
    "text": SearchRequest(search="alpha", top=5),
    "vector": SearchRequest(vector_queries=(_vq(exhaustive=True),), top=5),
    "text_vector": SearchRequest(vector_queries=(VectorQuery(fields=("vec",), text="alpha", k=5),)),
    "hybrid": SearchRequest(search="alpha", vector_queries=(_vq((0.8, 0.6, 0), weight=2.0),), top=5),
    "semantic": SearchRequest(search="alpha", query_type="semantic", captions="extractive|highlight-true",
                              answers="extractive|count-2", top=5, count=True),
    "boosted": SearchRequest(search="alpha", query_type="semantic", scoring_profile="conf", top=5),
    "debug": SearchRequest(search="alpha", vector_queries=(_vq(k=3),), debug="vector",
                           scoring_profile="conf", top=5),
    "select": SearchRequest(search="alpha", select=("content",), top=2, skip=1, count=True),
    "post_filter": SearchRequest(vector_queries=(_vq(k=10),), filter="category eq 'rare'",
                                 vector_filter_mode="postFilter"),
    "pre_filter": SearchRequest(vector_queries=(_vq(k=10),), filter="category eq 'rare'"),
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_round_trip_matches_local(target, local, name):
    req = REQUESTS[name]
    remote, here = target.search(req), local.search(req)
    assert remote.keys == here.keys
    assert remote.count == here.count
    assert remote.partial_reason is None
    for r, h in zip(remote.hits, here.hits, strict=True):
        assert r.score == pytest.approx(h.score)
        assert r.reranker_score == (pytest.approx(h.reranker_score) if h.reranker_score is not None
                                    else None)
        assert r.reranker_boosted_score == (pytest.approx(h.reranker_boosted_score)
                                            if h.reranker_boosted_score is not None else None)
        assert dict(r.fields) == dict(h.fields)
        assert r.captions == h.captions
        if req.debug:
            assert r.text_score == (pytest.approx(h.text_score) if h.text_score is not None else None)
            assert r.vector_similarities == pytest.approx(dict(h.vector_similarities))
            assert r.document_boost == pytest.approx(h.document_boost)
    if name == "post_filter":
        assert remote.keys == ()
    if name == "semantic":
        assert remote.reranked and remote.rerank_window == remote.keys
    if name == "boosted":
        assert any(h.reranker_boosted_score for h in remote.hits)
    if name == "select":
        assert all(set(h.fields) == {"content"} for h in remote.hits)  # key used, not returned


def test_schema_etag_fingerprint_and_counts(target, local, emu):
    from tests.test_emulator import without_vectorizers

    assert without_vectorizers(target.schema()) == local.schema()
    assert target.schema().field_vectorizer("vec") is not None  # the emulator's vectorizer
    assert [f.name for f in target.schema().security_fields] == ["group_ids"]
    assert target.schema().field("group_ids").permission_filter == "groupIds"
    fp = target.fingerprint()
    assert fp.startswith(f"azure:{emu.url}/indexes/{INDEX}@\"0x")
    assert target.count() == 64
    assert target.count("category eq 'rare'") == 5
    assert target.get_document("a", ["content"]) == {"content": "alpha. Alpha is first."}
    assert not any(hasattr(target, m) for m in (
        "upload_documents", "merge_documents", "delete_documents", "index_documents",
        "create_index", "delete_index", "create_or_update_index"))


def test_iter_documents_pages_by_key_range(target, monkeypatch):
    monkeypatch.setattr(azure_target_mod, "PAGE_SIZE", 7)
    monkeypatch.setattr(azure_target_mod, "MAX_SKIP", 20)
    docs = list(target.iter_documents(select=["content"], filter="page eq 1"))
    assert len(docs) == 64 and all(set(d) == {"content"} for d in docs)
    keys = [d["key"] for d in target.iter_documents(select=["key"])]
    assert keys == sorted(keys) and len(set(keys)) == 64


def test_wrong_key_is_a_clear_error_without_the_key(emu):
    bad = AzureTarget(emu.url, INDEX, credential=AzureKeyCredential("not-the-key-123"),
                      api_key_env="RAGDIAG_TEST_KEY", transport=TRANSPORT["name"])
    try:
        with pytest.raises(TargetError) as err:
            bad.search(SearchRequest(search="alpha"))
    finally:
        bad.close()
    msg = str(err.value)
    assert "rejected the credentials (HTTP 403)" in msg
    assert "RAGDIAG_TEST_KEY" in msg and "Search Index Data Reader" in msg
    assert "not-the-key-123" not in msg and KEY not in msg
    assert bad.stats["failures"] == 1 and bad.stats["retries"] == 0


def test_key_never_leaks(emu, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    for name in ("azure", "azure.core.pipeline.policies.http_logging_policy", "ragdiag"):
        caplog.set_level(logging.DEBUG, logger=name)
    t = _target(emu.url, api_version="2025-11-01-preview")
    try:
        traces = [t.search(r) for r in REQUESTS.values()]
        t.schema()
        t.count()
        with pytest.raises(TargetError):
            t.search(SearchRequest(search="alpha", filter="nope eq"))
        with pytest.raises(TypeError):
            pickle.dumps(t)
        blob = pickle.dumps(traces)
        rendered = [repr(t), str(vars(t)), json.dumps([tr.to_dict() for tr in traces], default=str),
                    json.dumps(emu.stats())]
    finally:
        t.close()
    out = capsys.readouterr()
    assert "'api-key': 'REDACTED'" in caplog.text  # the SDK logged requests, header redacted
    for text in [caplog.text, out.out, out.err, *rendered]:
        assert KEY not in text
    assert KEY.encode() not in blob
    assert "RAGDIAG_TEST_KEY" in repr(t)


def test_from_config_and_env(monkeypatch, tmp_path, emu):
    cfg = AuditConfig(path=tmp_path / "a.toml", name="n", client="", system="", language="en",
                      target=TargetConfig(kind="azure", endpoint=emu.url, index=INDEX,
                                          api_key_env="RAGDIAG_TEST_KEY", transport=TRANSPORT["name"]),
                      concurrency=2, retries=1, budget=50)
    monkeypatch.delenv("RAGDIAG_TEST_KEY", raising=False)
    with pytest.raises(TargetError) as err:
        AzureTarget.from_config(cfg)
    assert "RAGDIAG_TEST_KEY" in str(err.value)
    monkeypatch.setenv("RAGDIAG_TEST_KEY", KEY)
    t = AzureTarget.from_config(cfg)
    try:
        assert (t.concurrency, t.retries, t.budget, t.transport) == (2, 1, 50, TRANSPORT["name"])
        assert t.search(SearchRequest(search="alpha")).keys
        assert KEY not in repr(t)
        assert all(v != KEY for v in vars(t).values())
    finally:
        t.close()
    with pytest.raises(ConfigError):
        AzureTarget(emu.url, INDEX, credential=KEY)  # a literal key is refused
    with pytest.raises(ConfigError):
        AzureTarget("http://search.example.com", INDEX, credential=AzureKeyCredential(KEY))


@dataclass
class _FakeAsyncToken:
    token: str
    calls: int = 0

    async def get_token(self, *scopes, **kwargs):
        self.calls += 1
        return AccessToken(self.token, int(time.time()) + 3600)

    async def close(self):
        pass


def test_token_credential_over_loopback(local, transport):
    with Emulator({INDEX: local}, api_key=None, token="tok-xyz") as e:
        cred = _FakeAsyncToken("tok-xyz")
        t = AzureTarget(e.url, INDEX, credential=cred, transport=transport)
        try:
            assert t.search(SearchRequest(search="alpha")).keys
            assert t.schema().name == INDEX
        finally:
            t.close()
        assert cred.calls >= 1
        wrong = AzureTarget(e.url, INDEX, credential=_FakeAsyncToken("other"), transport=transport)
        try:
            with pytest.raises(TargetError, match="Search Index Data Reader"):
                wrong.search(SearchRequest(search="alpha"))
        finally:
            wrong.close()


# ---- robustness -----------------------------------------------------------------------------


@pytest.mark.slow
def test_runner_survives_throttling(local, transport):
    faults = Faults(rate_429=0.2, rate_503=0.05, retry_after_s=0.05, seed=3)
    with Emulator({INDEX: local}, api_key=KEY, faults=faults) as e:
        t = _target(e.url, retries=8, concurrency=4)
        try:
            runner = Runner(t, concurrency=4)
            reqs = [SearchRequest(search="alpha", top=1 + i % 5, skip=i // 5) for i in range(60)]
            results = runner.run(reqs)
        finally:
            t.close()
        assert runner.stats.failed == 0
        assert all(r.__class__.__name__ == "Trace" for r in results)
        assert t.stats["retries"] > 0 and t.stats["throttled"] == t.stats["retries"]
        assert t.stats["failures"] == 0
        stats = e.stats()
        assert stats["write_requests"] == 0
        assert stats["search_requests"] == 60 + t.stats["retries"]
        assert stats["faults_injected"].get("429", 0) + stats["faults_injected"].get("503", 0) \
            == t.stats["retries"]


def test_malformed_and_dropped_are_retried_then_counted(local, transport):
    with Emulator({INDEX: local}, api_key=KEY,
                  faults=Faults(rate_malformed=0.3, rate_drop=0.2, seed=5)) as e:
        t = _target(e.url, retries=8)
        try:
            for i in range(12):
                assert t.search(SearchRequest(search="alpha", top=1 + i)).keys
        finally:
            t.close()
        injected = e.stats()["faults_injected"]
        assert injected.get("malformed", 0) > 0 and injected.get("drop", 0) > 0
        assert t.stats["retries"] == sum(injected.values())
        assert t.stats["throttled"] == 0
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(rate_drop=1.0)) as e:
        t = _target(e.url, retries=2)
        try:
            t.schema()  # definition reads are not faulted
            with pytest.raises(TargetError, match="failed after 3 attempt"):
                t.search(SearchRequest(search="alpha"))
        finally:
            t.close()
        assert t.stats["failures"] == 1 and t.stats["retries"] == 2


def test_timeout_is_retried_then_fails(local, transport):
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(latency_ms=400)) as e:
        t = _target(e.url, retries=1, timeout_s=0.1)
        try:
            t.schema()
            with pytest.raises(TargetError, match="no answer within 0.1 s"):
                t.search(SearchRequest(search="alpha"))
        finally:
            t.close()


def test_request_budget_stops_sending(emu):
    t = _target(emu.url, budget=3)
    try:
        t.search(SearchRequest(search="alpha"))  # definition read + search
        t.search(SearchRequest(search="beta"))
        before = emu.stats()["search_requests"]
        with pytest.raises(TargetError, match="request budget exhausted"):
            t.search(SearchRequest(search="gamma"))
        assert emu.stats()["search_requests"] == before == 2
        runner = Runner(t)
        assert runner.run([SearchRequest(search="delta")])[0].reason.startswith("request budget")
    finally:
        t.close()


# ---- semantic partial responses -----------------------------------------------------------


def test_base_results_mean_no_reranker_scores(local, tmp_path, transport):
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(rate_semantic_partial=1.0)) as e:
        t = _target(e.url)
        try:
            tr = t.search(REQUESTS["semantic"])
        finally:
            t.close()
    assert tr.partial_reason == ("semantic ranking did not run: the service returned base results "
                                 "(capacityOverloaded)")
    assert tr.hits and all(h.reranker_score is None for h in tr.hits)
    assert not tr.reranked
    plain = build_tiny_target(tmp_path / "norerank", reranker=None)
    with Emulator({INDEX: plain}, api_key=KEY) as e:
        t = _target(e.url)
        try:
            tr = t.search(REQUESTS["semantic"])
            star = t.search(SearchRequest(search="*", query_type="semantic", top=3))
        finally:
            t.close()
    assert tr.partial_reason and "(transient)" in tr.partial_reason
    assert all(h.reranker_score is None for h in tr.hits)
    assert star.partial_reason == ("semantic ranking did not run: `*` or empty search text "
                                   "disables semantic ranking")


# ---- preview parameters ----------------------------------------------------------------------


def test_preview_parameters_sent_only_with_preview_api(emu, local):
    req = SearchRequest(search="alpha", max_text_recall_size=1,
                        vector_queries=(_vq(k=3, filter_override="category eq 'rare'"),),
                        filter="page eq 1")
    ga = _target(emu.url)
    preview = _target(emu.url, api_version="2025-11-01-preview")
    try:
        sent = preview.search(req)
        unsent = ga.search(req)
    finally:
        ga.close()
        preview.close()
    assert sent.keys == local.search(req).keys
    assert preview.unsent_parameters == {}
    assert unsent.keys == local.search(req.replace(
        max_text_recall_size=None, vector_queries=(_vq(k=3),))).keys
    assert unsent.keys != sent.keys
    assert ga.unsent_parameters == {"maxTextRecallSize": 1, "filterOverride": 1}


# ---- normalisation (SDK versions) -------------------------------------------------------------


def test_normalise_11x_result():
    item = {"@search.score": 0.03, "@search.reranker_score": 2.5, "@search.highlights": None,
            "@search.captions": [type("Caption", (), {"text": "a caption", "highlights": None})()],
            "key": "a", "content": "alpha"}
    n = normalise_result(item)
    assert (n.score, n.reranker_score, n.reranker_boosted_score) == (0.03, 2.5, None)
    assert n.captions == ("a caption",) and n.debug is None
    assert n.fields == {"key": "a", "content": "alpha"}


def test_normalise_12x_result_prefers_raw_keys():
    debug = {"vectors": {"subscores": {"text": {"searchScore": 1.5}, "documentBoost": 2.0,
                                       "vectors": [{"v1": {"searchScore": 0.9, "vectorSimilarity": 0.8}},
                                                   {"v1": {"searchScore": 0.5, "vectorSimilarity": 0.1},
                                                    "v2": {"searchScore": 0.7,
                                                           "vectorSimilarity": 0.6}}]}}}
    item = {"@search.score": 0.5, "@search.rerankerScore": 3.0, "@search.reranker_score": 3.0,
            "@search.rerankerBoostedScore": 6.0, "@search.reranker_boosted_score": 6.0,
            "@search.documentDebugInfo": debug, "@search.document_debug_info": debug,
            "@search.captions": [{"text": "c", "highlights": "<em>c</em>"}], "key": "k"}
    n = normalise_result(item, raw=None)
    assert (n.reranker_score, n.reranker_boosted_score, n.captions) == (3.0, 6.0, ("c",))
    assert parse_debug_subscores(n.debug) == (1.5, {"v1": 0.8, "v2": 0.6}, 2.0)
    snake = {"vectors": {"subscores": {"text": {"search_score": 1.0}, "document_boost": 1.0,
                                       "vectors": [{"v1": {"vector_similarity": 0.5}}]}}}
    assert parse_debug_subscores(snake) == (1.0, {"v1": 0.5}, 1.0)
    # 11.6 drops debug info from the dict: the raw item fills it in
    n11 = normalise_result({"@search.score": 0.5, "@search.reranker_score": 3.0, "key": "k"},
                           raw={"@search.score": 0.5, "@search.rerankerScore": 3.0,
                                "@search.documentDebugInfo": debug, "key": "k"})
    assert n11.debug == debug and n11.fields == {"key": "k"}


def test_retry_after_parsing():
    ra = azure_mod._retry_after
    assert ra({"Retry-After": "2"}) == 2.0
    assert ra({"retry-after-ms": "50", "Retry-After": "1"}) == 0.05
    assert ra({"x-ms-retry-after-ms": "1500"}) == 1.5
    assert ra({}) is None and ra(None) is None
    assert ra({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0


def test_transport_timeouts_read_like_the_attempt_timeout():
    from azure.core.exceptions import ServiceRequestTimeoutError, ServiceResponseTimeoutError

    from ragdiag.targets.azure.retry import Retryable, classify

    kw = {"endpoint": "http://127.0.0.1:1", "credentials_hint": "", "timeout_s": 0.1}
    err = classify(ServiceResponseTimeoutError("read timeout"), "search", **kw)
    assert isinstance(err, Retryable) and err.reason.startswith("no answer within 0.1 s")
    err = classify(ServiceRequestTimeoutError("connect timeout"), "search", **kw)
    assert isinstance(err, Retryable) and err.reason.startswith("no connection within 0.1 s")


def test_no_output_by_default(emu, capsys):
    t = _target(emu.url)
    try:
        t.search(SearchRequest(search="alpha"))
    finally:
        t.close()
    out = capsys.readouterr()
    assert out.out == "" and KEY not in out.err


def test_default_credential_is_lazy_and_reopens_after_close(emu, monkeypatch):
    pytest.importorskip("azure.identity")
    t = AzureTarget.from_env(emu.url, INDEX, credential="default")
    assert t.credential_kind == "token" and "token credential" in repr(t)
    t.close()  # never used: nothing to close, no token requested
    k = _target(emu.url)
    try:
        assert k.search(SearchRequest(search="alpha")).keys
        k.close()
        assert k.search(SearchRequest(search="beta")).keys  # a closed target reopens its loop
    finally:
        k.close()


# ---- the two transports ------------------------------------------------------------------


def _bodies_received(local, monkeypatch, transport, requests, api_version=None):
    """The JSON bodies the emulator received for `requests` sent with `transport`."""
    seen = []
    real = Emulator._search_payload

    def spy(self, target, index, body):
        seen.append(json.loads(json.dumps(body)))
        return real(self, target, index, body)

    monkeypatch.setattr(Emulator, "_search_payload", spy)
    with Emulator({INDEX: local}, api_key=KEY) as e:
        t = _target(e.url, transport=transport, api_version=api_version)
        try:
            for r in requests:
                t.search(r)
            t.count("category eq 'rare'")
            list(t.iter_documents(select=["content"], filter="page eq 1"))
        finally:
            t.close()
    monkeypatch.setattr(Emulator, "_search_payload", real)
    return seen, dict(t.unsent_parameters)


PREVIEW_REQUEST = SearchRequest(search="alpha", max_text_recall_size=1, query_language="en-us",
                                query_rewrites="generative|count-3", query_type="semantic",
                                vector_queries=(_vq(k=3, filter_override="category eq 'rare'"),),
                                filter="page eq 1", answers="extractive|count-2,threshold-0.5")


@pytest.mark.parametrize("api_version", [None, "2025-11-01-preview"])
def test_both_transports_send_the_same_bodies(local, monkeypatch, api_version):
    requests = [*REQUESTS.values(), PREVIEW_REQUEST]
    raw, raw_unsent = _bodies_received(local, monkeypatch, "raw", requests, api_version)
    sdk, sdk_unsent = _bodies_received(local, monkeypatch, "sdk", requests, api_version)
    assert len(raw) == len(sdk) == len(requests) + 2
    for i, (a, b) in enumerate(zip(raw, sdk, strict=True)):
        assert a == b, f"request #{i}: raw {a} != sdk {b}"
    assert raw_unsent == sdk_unsent
    if api_version is None:
        assert raw_unsent == {"maxTextRecallSize": 1, "filterOverride": 1, "queryRewrites": 1,
                              "queryLanguage": 1}
        assert "hybridSearch" not in raw[-3]
    else:
        assert raw_unsent == {}
        assert raw[-3]["hybridSearch"] == {"maxTextRecallSize": 1}
        assert raw[-3]["vectorQueries"][0]["filterOverride"] == "category eq 'rare'"


def test_transport_choice(emu, monkeypatch, tmp_path):
    from ragdiag.targets.azure.kind import AzureKind
    from ragdiag.targets.registry import OptionReader

    auto = AzureTarget(emu.url, INDEX, credential=AzureKeyCredential(KEY))
    assert auto.transport == ("raw" if auto.sdk_version >= (12,) else "sdk")
    with pytest.raises(ConfigError, match="transport must be one of auto, raw, sdk"):
        AzureTarget(emu.url, INDEX, credential=AzureKeyCredential(KEY), transport="http")
    # an SDK without a pipeline that carries the key (11.x): auto falls back, raw is refused
    monkeypatch.setattr(azure_target_mod, "sdk_version", lambda: (11, 6, 0))
    assert AzureTarget(emu.url, INDEX, credential=AzureKeyCredential(KEY)).transport == "sdk"
    with pytest.raises(ConfigError, match="needs azure-search-documents 12"):
        AzureTarget(emu.url, INDEX, credential=AzureKeyCredential(KEY), transport="raw")
    # the [target] key
    kind = AzureKind()
    table = {"endpoint": emu.url, "index": INDEX}
    assert kind.validate(OptionReader(table, kind="azure"))["transport"] == "auto"
    assert kind.validate(OptionReader({**table, "transport": "sdk"}, kind="azure"))["transport"] == "sdk"
    with pytest.raises(ConfigError, match="'transport' must be one of auto, raw, sdk"):
        kind.validate(OptionReader({**table, "transport": "fast"}, kind="azure"))


def test_env_proxy_lookups_only_where_there_is_something_to_find(monkeypatch, tmp_path):
    from ragdiag.targets.azure.runtime import needs_env_settings

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NETRC"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert needs_env_settings() is False
    (tmp_path / ".netrc").write_text("machine example.com login a password b\n")
    assert needs_env_settings() is True
    (tmp_path / ".netrc").unlink()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert needs_env_settings() is True
    t = AzureTarget("https://x.search.windows.net", INDEX, credential=AzureKeyCredential(KEY))
    assert t._client_kwargs()["use_env_settings"] is True
