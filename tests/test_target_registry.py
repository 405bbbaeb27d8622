"""Target kinds behind a registry: each validates its own [target] keys; plugins join by entry
point; a code-only audit (no [target]) opens nothing and sends no request."""

from __future__ import annotations

import importlib.metadata

import pytest

from ragdiag.errors import ConfigError
from ragdiag.inputs.config import load_config
from ragdiag.targets import registry
from ragdiag.targets.base import missing_members


def _write(tmp_path, text):
    p = tmp_path / "audit.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_builtin_kinds_resolve_lazily():
    assert {"sample", "local", "azure"} <= set(registry.kinds())
    assert registry.get_kind("sample").keys == ("variant", "fields")
    with pytest.raises(ConfigError, match="no target kind named 'nope'; available: .*azure.*local.*sample"):
        registry.get_kind("nope")


def test_each_kind_validates_its_own_keys(tmp_path):
    cfg = load_config(_write(tmp_path, '[target]\nkind = "sample"\nvariant = "naive"\n'))
    assert cfg.target.kind == "sample" and cfg.target.variant == "naive" and cfg.target.endpoint is None
    with pytest.raises(ConfigError, match=r"audit.toml:3: 'variant' must be one of structured, naive"):
        load_config(_write(tmp_path, '[target]\nkind = "sample"\nvariant = "wide"\n'))
    with pytest.raises(ConfigError, match=r"audit.toml:3: unknown key 'variant' in \[target\]; allowed: kind, "
                                          r"endpoint, index"):
        load_config(_write(tmp_path, '[target]\nkind = "azure"\nvariant = "x"\n'))
    cfg = load_config(_write(tmp_path, '[target]\nkind = "azure"\nendpoint = "https://x.search.windows.net"\n'
                                       'index = "i"\n'))
    assert cfg.target.credential == "api_key" and cfg.target.api_key_env == "AZURE_SEARCH_API_KEY"
    assert cfg.describe()["target"]["endpoint"] == "https://x.search.windows.net"


class _EchoTarget:
    name = "echo"
    capabilities = frozenset()

    def __init__(self, size):
        self.size = size

    def fingerprint(self):
        return f"echo:{self.size}"

    def schema(self):  # pragma: no cover - not used here
        raise NotImplementedError

    def search(self, request):  # pragma: no cover
        raise NotImplementedError

    def count(self, filter=None):
        return self.size


class EchoKind:
    name = "echo"
    keys = ("size",)

    def validate(self, options):
        size = options.table.get("size", 3)
        if not isinstance(size, int) or size < 1:
            raise options.error("'size' must be a positive integer", "size")
        return {"size": size}

    def open(self, options, config, *, log, progress):
        return _EchoTarget(options["size"])


class _EP:
    name = "echo"
    value = "tests.test_target_registry:EchoKind"

    def load(self):
        return EchoKind


def test_a_plugin_kind_joins_through_the_entry_point_group(tmp_path, monkeypatch):
    fresh = registry._Registry()
    monkeypatch.setattr(registry, "_DEFAULT", fresh)
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [_EP()] if kw.get("group") == "ragdiag.targets" else real(**kw))
    cfg = load_config(_write(tmp_path, '[target]\nkind = "echo"\nsize = 7\n'))
    assert cfg.target.size == 7
    with pytest.raises(ConfigError, match=r"audit.toml:3: 'size' must be a positive integer"):
        load_config(_write(tmp_path, '[target]\nkind = "echo"\nsize = 0\n'))
    from ragdiag.audit import open_target

    assert open_target(cfg).count() == 7


def test_protocol_members_are_checked():
    class Half:
        name = "half"
        capabilities = frozenset({"documents", "teleport"})

        def search(self, r):  # pragma: no cover
            ...

    missing = missing_members(Half())
    assert "fingerprint" in missing and "schema" in missing and "count" in missing
    assert any("teleport" in m for m in missing)
    assert any("iter_documents" in m for m in missing)


def test_code_only_audit_opens_no_target_and_sends_nothing(tmp_path, monkeypatch):
    import ragdiag.sample.system as system
    from ragdiag.audit import build_context, run_checks

    def refuse(*a, **k):  # pragma: no cover - the point is that it is never called
        raise AssertionError("a code-only audit must not open the sample")

    monkeypatch.setattr(system, "open_sample_target", refuse)
    app = tmp_path / "app"
    app.mkdir()
    (app / "search.py").write_text(
        "from azure.search.documents import SearchClient\n"
        "client = SearchClient('https://x', 'idx', None)\n"
        "def find(q):\n    return client.search(search_text=q, top=5)\n", encoding="utf-8")
    cfg = load_config(_write(tmp_path, '[inputs]\nclient_code = "app"\n'))
    assert cfg.target is None
    ctx = build_context(cfg, progress=False)
    assert ctx.target is None and not ctx.has("target")
    result = run_checks(ctx)
    assert ctx.runner.stats.sent == 0
    by_id = {f.check_id: f for f in result.findings}
    for cid in ("reranker_scores", "pool_size", "chunk_boundaries"):
        assert by_id[cid].status == "skipped", (cid, by_id[cid].headline)


# ---- one set of registry rules for checks and target kinds (ragdiag.plugins) ---------------------
class _FakeEP:
    def __init__(self, name, value, obj):
        self.name, self.value, self._obj = name, value, obj

    def load(self):
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def _with_entry_points(monkeypatch, eps, group="ragdiag.targets"):
    fresh = registry._Registry()
    monkeypatch.setattr(registry, "_DEFAULT", fresh)
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: eps if kw.get("group") == group else real(**kw))
    return fresh


def test_a_different_kind_under_a_taken_name_is_an_error_like_a_check(monkeypatch):
    fresh = _with_entry_points(monkeypatch, [])
    fresh.register(EchoKind)
    fresh.register(EchoKind)  # the same definition again (a reload): replaced silently

    class Other(EchoKind):
        pass

    with pytest.raises(ConfigError, match=r"a target kind named 'echo' is already registered "
                                          r"\(tests.test_target_registry.EchoKind\); pass replace_existing=True"):
        fresh.register(Other)
    fresh.register(Other, replace_existing=True)
    assert isinstance(fresh.get("echo"), Other)


def test_broken_ignored_and_misnamed_plugins_are_reported_and_do_not_stop_the_rest(monkeypatch):
    fresh = _with_entry_points(monkeypatch, [
        _FakeEP("broken", "acme:Broken", ImportError("no module named acme")),
        _FakeEP("sample", "acme:Sample", EchoKind),  # a built-in's name: the built-in wins
        _FakeEP("wrong", "acme:Echo", EchoKind),  # loads a kind named "echo"
        _FakeEP("echo", "tests.test_target_registry:EchoKind", EchoKind),
    ])
    assert "echo" in fresh.names()
    errors = fresh.load_errors()
    assert errors["broken"] == "plugin acme:Broken failed to load: ImportError: no module named acme"
    assert errors["sample"] == "plugin acme:Sample ignored: a target kind named 'sample' is already registered"
    assert "the entry-point name must equal the kind's name" in errors["wrong"]
    with pytest.raises(ConfigError, match="target kind 'broken' could not be loaded: plugin acme:Broken failed"):
        fresh.get("broken")
    assert fresh.get("sample").keys == ("variant", "fields")  # the built-in, untouched


def test_the_check_registry_words_the_same_faults_the_same_way(monkeypatch):
    from ragdiag.checks.registry import Registry

    eps = [_FakeEP("broken", "acme:Broken", ImportError("no module named acme"))]
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: eps if kw.get("group") == "ragdiag.checks" else real(**kw))
    reg = Registry(builtin_package=None)
    reg.discover()
    assert reg.load_errors()["broken"] == "plugin acme:Broken failed to load: ImportError: no module named acme"


def test_declared_capabilities_are_checked_when_the_target_is_opened():
    from ragdiag.extend import MockTarget
    from ragdiag.targets.base import has_capability

    class Liar(_EchoTarget):
        capabilities = frozenset({"prepare", "embedder"})  # promises prepare() and an embedder, has neither

    assert missing_members(Liar(3)) == ["prepare() (promised by capability 'prepare')",
                                        "embedder (promised by capability 'embedder')"]
    assert missing_members(MockTarget([{"id": "a"}])) == []
    assert has_capability(MockTarget([{"id": "a"}]), "documents")
    assert not has_capability(MockTarget([{"id": "a"}], capabilities=()), "documents")
    assert not has_capability(None, "documents")
    with pytest.raises(ValueError, match="unknown target capability 'teleport'"):
        has_capability(MockTarget([{"id": "a"}]), "teleport")


def test_an_undeclared_member_is_never_used(tmp_path):
    """A target with a `prepare` it does not declare is not asked to prepare (nothing is discovered)."""
    from ragdiag.engine.runner import Runner
    from ragdiag.extend import MockTarget, SearchRequest

    calls = []

    class Quiet(MockTarget):
        def prepare(self, requests):  # pragma: no cover - the point is that it is never called
            calls.append(requests)

    Runner(Quiet([{"id": "a"}])).prepare([SearchRequest(search="a")])
    assert calls == []
    loud = Quiet([{"id": "a"}], capabilities=("prepare",))
    Runner(loud).prepare([SearchRequest(search="a")])
    assert len(calls) == 1
