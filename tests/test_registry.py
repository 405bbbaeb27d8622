"""Tests of the check registry: lookup, registration, placeholders, lazy discovery."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ragdiag.checks as checks
from ragdiag.checks import registry
from ragdiag.checks.registry import (
    BrokenCheck,
    CheckProtocol,
    PlaceholderCheck,
    Registry,
    run_check,
)
from ragdiag.errors import RagdiagError
from ragdiag.inputs.checklist import CheckSpec, load_checklist
from ragdiag.model.findings import Finding

REPO = Path(__file__).resolve().parents[1]


def _spec(check_id: str, order: int = 1) -> CheckSpec:
    return CheckSpec(id=check_id, order=order, title={"en": f"Title {check_id}"},
                     question={"en": f"Question {check_id}?"}, thresholds={"limit": 3})


class DummyCheck:
    id = "dummy"
    needs = ("target",)

    def run(self, ctx, spec):
        status = "fail" if ctx > spec.threshold("limit") else "pass"
        return Finding(self.id, status, f"{ctx} against limit {spec.threshold('limit')}")


class OtherCheck(DummyCheck):
    id = "other"


def _isolated() -> Registry:
    """A registry that sees no built-in modules and no plugins."""
    return Registry(builtin_package=None, entry_point_group=None)


@pytest.fixture
def no_plugins(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])


# -- registration and lookup ----------------------------------------------------

def test_register_and_get():
    reg = _isolated()
    assert reg.register(DummyCheck) is DummyCheck  # usable as a class decorator
    check = reg.get("dummy")
    assert isinstance(check, DummyCheck) and isinstance(check, CheckProtocol)
    assert check.run(5, _spec("dummy")).status == "fail"
    assert reg.available() == ("dummy",)
    assert [c.id for c in reg.all_checks()] == ["dummy"]


def test_register_as_decorator_and_instance():
    reg = _isolated()

    @reg.register
    class Decorated(DummyCheck):
        id = "decorated"

    instance = OtherCheck()
    assert reg.register(instance) is instance
    assert reg.available() == ("decorated", "other")
    assert reg.get("other") is instance


def test_unknown_id_lists_available():
    reg = _isolated()
    reg.register(DummyCheck)
    reg.register(OtherCheck)
    with pytest.raises(RagdiagError, match=r"^no check named 'nope'; available: dummy, other$"):
        reg.get("nope")
    with pytest.raises(RagdiagError, match=r"available: \(none\)"):
        _isolated().get("nope")


def test_duplicate_id_is_an_error_unless_replaced():
    reg = _isolated()
    reg.register(DummyCheck)
    reg.register(DummyCheck)  # the same class again (a module reload) is fine

    class Impostor(DummyCheck):
        pass

    with pytest.raises(RagdiagError, match="already registered"):
        reg.register(Impostor)
    reg.register(Impostor, replace_existing=True)
    assert isinstance(reg.get("dummy"), Impostor)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"id": "Bad-Id", "needs": ()}, "needs an `id`"),
    ({"id": "ok", "needs": ["target"]}, "tuple of input names"),
    ({"id": "ok", "needs": (), "run": None}, "no run"),
])
def test_register_validates(attrs, message):
    cls = type("C", (), {"run": lambda self, ctx, spec: None, **attrs})
    with pytest.raises(RagdiagError, match=message):
        _isolated().register(cls)


# -- placeholders and safe running -------------------------------------------

def test_spec_without_implementation_is_a_placeholder(no_plugins):
    reg = Registry()  # real built-in package: there is no module ragdiag.checks.zz_unwritten
    spec = _spec("zz_unwritten")
    check = reg.resolve(spec)
    assert isinstance(check, PlaceholderCheck)
    finding = check.run(None, spec)
    assert finding.status == "skipped"
    assert finding.skipped_reason == "not implemented yet"
    assert finding.title == "Title zz_unwritten"
    assert not reg.is_implemented("zz_unwritten")
    with pytest.raises(RagdiagError, match="no check named 'zz_unwritten'"):
        reg.get("zz_unwritten")


def test_run_check_turns_crashes_into_error_findings():
    class Crashing(DummyCheck):
        id = "dummy"

        def run(self, ctx, spec):
            raise ZeroDivisionError("boom")

    spec = _spec("dummy")
    f = run_check(Crashing(), None, spec)
    assert f.status == "error" and "ZeroDivisionError: boom" in f.headline
    assert f.title == "Title dummy"
    ok = run_check(DummyCheck(), 1, spec)
    assert ok.status == "pass" and ok.question == "Question dummy?"
    missing = run_check(DummyCheck(), 1, CheckSpec(id="dummy", order=1, title={"en": "t"},
                                                    question={"en": "q"}))
    assert missing.status == "error" and "no threshold 'limit'" in missing.headline


def test_checks_table_marks_implemented():
    reg = _isolated()

    @reg.register
    class Pool(DummyCheck):
        id = "pool_size"

    specs = load_checklist(REPO / "ragdiag" / "checks" / "specs")
    rows = reg.checks_table(specs)
    assert [r[0] for r in rows] == list(specs)
    assert rows[1] == ("pool_size", 2, "Post-filter candidate pool", "yes",
                       specs["pool_size"].text("question"))
    assert {r[3] for r in rows if r[0] != "pool_size"} == {"no"}
    assert reg.checks_table(specs, lang="de")[1][2] == "Kandidaten-Pool nach Filtern"
    assert registry.CHECKS_TABLE_COLUMNS == ("id", "order", "title", "implemented", "question")


# -- lazy discovery -----------------------------------------------------------

class FakeEntryPoint:
    def __init__(self, name, obj, calls):
        self.name, self.value, self.group = name, f"fake_plugin:{name}", "ragdiag.checks"
        self._obj, self._calls = obj, calls

    def load(self):
        self._calls.append(("load", self.name))
        return self._obj


def test_entry_points_load_lazily_on_first_lookup(monkeypatch):
    calls: list = []

    class PluginCheck(DummyCheck):
        id = "plugin_check"

    def fake_entry_points(**kw):
        calls.append(("entry_points", kw.get("group")))
        return [FakeEntryPoint("plugin_check", PluginCheck, calls)]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    reg = Registry(builtin_package=None)
    reg.register(DummyCheck)
    assert reg.get("dummy").id == "dummy"  # a registered id needs no plugin scan
    assert calls == []
    check = reg.get("plugin_check")
    assert isinstance(check, PluginCheck)
    assert calls == [("entry_points", "ragdiag.checks"), ("load", "plugin_check")]
    reg.get("plugin_check")
    reg.available()
    assert len(calls) == 2  # loaded once


def test_broken_plugin_becomes_a_broken_check(monkeypatch):
    calls: list = []

    class WrongId(DummyCheck):
        id = "not_the_name"

    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [FakeEntryPoint("named", WrongId, calls)])
    reg = Registry(builtin_package=None)
    with pytest.raises(RagdiagError, match="could not be loaded: .*entry-point name must equal"):
        reg.get("named")
    check = reg.resolve(_spec("named"))
    assert isinstance(check, BrokenCheck)
    assert check.run(None, _spec("named")).status == "error"
    assert "named" in reg.load_errors()


def test_import_does_not_scan_plugins_or_modules():
    code = textwrap.dedent("""
        import importlib.metadata, sys
        calls = []
        importlib.metadata.entry_points = lambda **kw: calls.append(kw) or []
        import ragdiag.checks
        from ragdiag.checks import register, get, available
        assert calls == [], calls
        loaded = sorted(m for m in sys.modules if m.startswith("ragdiag.checks."))
        assert loaded == ["ragdiag.checks.base", "ragdiag.checks.registry"], loaded
        available()
        assert calls == [{"group": "ragdiag.checks"}], calls
    """)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package of check modules: one good, one broken, one that registers nothing."""
    name = f"fakechecks_{tmp_path.name.replace('-', '_')}"
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "alpha.py").write_text(textwrap.dedent("""
        from ragdiag.checks import register
        from ragdiag.model.findings import Finding

        @register
        class Alpha:
            id = "alpha"
            needs = ("target",)

            def run(self, ctx, spec):
                return Finding(self.id, "pass", "fine")
    """))
    (pkg / "broken.py").write_text("import does_not_exist_anywhere\n")
    (pkg / "silent.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(builtin_package=name, entry_point_group=None)
    monkeypatch.setattr(registry, "_DEFAULT", reg)  # modules register into the default registry
    yield name, reg
    for mod in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[mod]


def test_builtin_modules_imported_lazily(fake_package):
    name, reg = fake_package
    assert f"{name}.alpha" not in sys.modules
    assert checks.get("alpha").id == "alpha"  # module-level API uses the default registry
    assert f"{name}.alpha" in sys.modules
    assert f"{name}.broken" not in sys.modules  # only the module asked for


def test_builtin_discovery_reports_broken_modules(fake_package):
    name, reg = fake_package
    assert checks.available() == ("alpha",)
    errors = checks.load_errors()
    assert "ModuleNotFoundError" in errors["broken"]
    assert "registers no check" in errors["silent"]
    assert isinstance(checks.resolve(_spec("broken")), BrokenCheck)
    assert isinstance(checks.resolve(_spec("alpha")), CheckProtocol)
    assert isinstance(checks.resolve(_spec("gamma")), PlaceholderCheck)
    rows = {r[0]: r[3] for r in checks.checks_table([_spec("alpha"), _spec("broken", 2), _spec("gamma", 3)])}
    assert rows == {"alpha": "yes", "broken": "error", "gamma": "no"}


def test_public_surface():
    from ragdiag.checks import base

    assert sorted(set(checks.__all__) - {"Check", "Verdict"}) == sorted(registry.__all__)
    for name in registry.__all__:
        assert getattr(checks, name) is getattr(registry, name)
    assert checks.Check is base.Check and checks.Verdict is base.Verdict  # the base class, not the protocol
