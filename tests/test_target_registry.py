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
