"""Every message id the code uses exists in the catalogue in English and German, and every spec
message is used: a misspelt id would otherwise print ``[check.id: params]`` into a client's PDF
while every other test passes.

The code is read, not run: each call that names a message by a string literal is collected
(`v.warn("x")`, `v.table(key, "title", ...)`, `v.effect(..., action="x")`, `msg(spec, "x")`,
`text(ID, "fig_x")`, `Message("check.x")`, ...). An f-string name (``f"supply_{n}"``) must match
at least one catalogue id. Both directions are proven on planted faults.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragdiag.checks.base import _common_tables, _observed_tables
from ragdiag.inputs.checklist import load_checklist

ROOT = Path(__file__).resolve().parents[1] / "ragdiag"
LANGS = ("en", "de")
#: Verdict methods whose first positional argument is a message name
FIRST_ARG = frozenset({"fail", "warn", "note", "recommend", "passed", "nothing_observed", "skip", "error", "msg"})
VERDICT_NAMES = frozenset({"v", "verdict"})


@dataclass(frozen=True)
class Use:
    file: str
    line: int
    owner: str | None  # the check whose spec a bare name resolves in (None: any check's)
    name: str  # a bare name, a dotted id, or a regex (pattern=True)
    pattern: bool = False


def _catalogue() -> dict[str, dict[str, str]]:
    """Message id -> texts by language: every spec's own, the common and the observed ones."""
    out: dict[str, dict[str, str]] = {}
    for spec in load_checklist().values():
        for name, texts in spec.messages.items():
            out[f"{spec.id}.{name}"] = dict(texts)
    for name, texts in _common_tables()[0].items():
        out[f"common.{name}"] = dict(texts)
    for name, texts in _observed_tables()[0].items():
        out[f"observed.{name}"] = dict(texts)
    return out


def _literals(node: ast.AST | None) -> Iterator[tuple[str, bool]]:
    """(name, is_pattern) for a string literal, an f-string, or either branch of ``a if c else b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value, False
    elif isinstance(node, ast.JoinedStr):
        parts = [re.escape(v.value) if isinstance(v, ast.Constant) else r"\w+" for v in node.values]
        yield "".join(parts), True
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):  # "when_" + sem
        yield re.escape(node.left.value) + r"\w+", True


def _module_owner(tree: ast.Module, path: Path, spec_ids: set[str]) -> str | None:
    for stmt in tree.body:  # ID = "pool_size"
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ID" for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant) and stmt.value.value in spec_ids:
            return stmt.value.value
    return path.stem if path.stem in spec_ids else None


def uses_in(source: str, path: Path, spec_ids: set[str]) -> list[Use]:
    """Every message name `source` uses by a literal."""
    tree = ast.parse(source)
    owner = _module_owner(tree, path, spec_ids)
    out: list[Use] = []

    def add(node: ast.AST | None, line: int, own: str | None = owner) -> None:
        for name, pattern in _literals(node):
            out.append(Use(str(path), line, own, name, pattern))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f, args, kw = node.func, node.args, {k.arg: k.value for k in node.keywords}
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in VERDICT_NAMES:
            if f.attr in FIRST_ARG and args:
                add(args[0], node.lineno)
            elif f.attr == "table":
                add(args[1] if len(args) > 1 else kw.get("title"), node.lineno)
                add(kw.get("note"), node.lineno)
            elif f.attr == "effect":
                add(kw.get("action"), node.lineno)
                add(kw.get("scope"), node.lineno)
            elif f.attr == "location" and len(args) > 2:
                add(args[2], node.lineno)
            elif f.attr == "retract":
                for a in args:
                    add(a, node.lineno)
        elif isinstance(f, ast.Name) and f.id == "Message" and args:
            for name, pattern in _literals(args[0]):
                if "." in name:
                    out.append(Use(str(path), node.lineno, None, name, pattern))
        elif isinstance(f, ast.Name) and f.id in ("msg", "text") and len(args) > 1:
            if f.id == "msg" and path.name == "export.py":  # chunks/export.py: the chunk check's spec
                add(args[1], node.lineno, "chunk_boundaries")
            elif f.id == "text" and isinstance(args[0], ast.Name) and args[0].id == "ID":
                add(args[1], node.lineno)
        elif isinstance(f, ast.Name) and f.id == "locate" and len(args) > 2:  # checks/_code_evidence.py
            add(args[2], node.lineno)
    return out


def resolves(use: Use, ids: set[str], spec_ids: set[str]) -> bool:
    """Whether `use` names a catalogue id the way `Verdict.msg` resolves it."""
    if "." in use.name and not use.pattern:
        return use.name in ids
    owners = [use.owner] if use.owner else sorted(spec_ids)
    candidates = [f"{o}.{use.name}" for o in owners] + [f"common.{use.name}", f"observed.{use.name}"]
    if use.pattern:
        rx = [re.compile(use.name)] + [re.compile(rf"{re.escape(o)}\.{use.name}") for o in owners] + [
            re.compile(rf"(common|observed)\.{use.name}")]
        return any(r.fullmatch(i) for r in rx for i in ids)
    return any(c in ids for c in candidates)


def all_uses(files: Iterable[Path], spec_ids: set[str]) -> list[Use]:
    return [u for p in files for u in uses_in(p.read_text(encoding="utf-8"), p, spec_ids)]


def unknown(uses: Iterable[Use], ids: set[str], spec_ids: set[str]) -> list[str]:
    return [f"{Path(u.file).relative_to(ROOT.parent) if Path(u.file).is_absolute() else u.file}:{u.line}: "
            f"{u.name!r}" for u in uses if not resolves(u, ids, spec_ids)]


#: The report picks a check's client sentences by name (``client_<status>[_<variant>]``,
#: `ragdiag.report.evidence.client_sentence_id`): a convention, not a literal in code.
CONVENTION = re.compile(r"client_(pass|warn|fail|skipped|error|action)(_\w+)?")


def unused(ids: Iterable[str], uses: Iterable[Use], source_strings: set[str]) -> list[str]:
    """Spec messages no code names: not a literal use, not matched by an f-string use, and not a
    report sentence named by the `CONVENTION`."""
    uses = list(uses)
    patterns = [re.compile(u.name) for u in uses if u.pattern]
    used = {u.name for u in uses if not u.pattern} | source_strings
    out = []
    for i in ids:
        check, _, name = i.partition(".")
        if check in ("common", "observed"):
            continue  # shared texts: used through the catalogue by name from several places
        if i in used or name in used or CONVENTION.fullmatch(name) \
                or any(p.fullmatch(name) or p.fullmatch(i) for p in patterns):
            continue
        out.append(i)
    return sorted(out)


def _source_strings(files: Iterable[Path]) -> set[str]:
    """Every string constant in the code (ids built in tables, dicts and tuples count as uses)."""
    out: set[str] = set()
    for p in files:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


@pytest.fixture(scope="module")
def world():
    specs = load_checklist()
    spec_ids = set(specs)
    ids = _catalogue()
    files = sorted(ROOT.rglob("*.py"))
    return spec_ids, ids, files, all_uses(files, spec_ids)


def test_the_scan_sees_the_checks_messages(world):
    spec_ids, ids, files, uses = world
    assert len(uses) > 500  # hundreds of literal uses: the scan reads the calls it claims to
    assert {u.owner for u in uses} >= spec_ids  # every check's module is read with its spec


def test_every_message_id_used_in_code_exists(world):
    spec_ids, ids, files, uses = world
    assert unknown(uses, set(ids), spec_ids) == []


def test_every_said_condition_names_a_message_of_its_spec(world):
    """``[evidence]`` conditions ``said:NAME`` name a message of the same spec (the report's
    sentence would otherwise never hold)."""
    _spec_ids, ids, _files, _uses = world
    bad = [f"{s.id}.{sentence}: {c}" for s in load_checklist().values() for sentence, conds in s.evidence.items()
           for alt in conds for c in alt.split("|") if c.strip().lstrip("!").startswith("said:")
           and f"{s.id}.{c.strip().lstrip('!').split(':', 1)[1]}" not in ids]
    assert bad == []


def test_every_message_has_english_and_german(world):
    _spec_ids, ids, _files, _uses = world
    missing = [f"{i}: {lang}" for i, texts in ids.items() for lang in LANGS if not texts.get(lang)]
    assert missing == []


def test_every_spec_message_is_used(world):
    spec_ids, ids, files, uses = world
    assert unused(ids, uses, _source_strings(files)) == []


def test_a_misspelt_id_fails(world):
    spec_ids, ids, _files, _uses = world
    planted = ('ID = "pool_size"\n'
               'def evaluate(ctx, spec, v):\n'
               '    v.warn("configured_belwo", profile="p")\n'     # misspelt
               '    v.warn("configured_below", profile="p")\n'     # right
               '    v.table("k", "ev_nope", ("a",), [])\n'         # misspelt table title
               '    v.msg("common.skiped")\n'                      # misspelt common id
               '    v.recommend(f"rec_nothing_{x}")\n'             # an f-string matching nothing
               '    text(ID, "fig_nope", "en")\n')
    found = unknown(uses_in(planted, Path("planted.py"), spec_ids), set(ids), spec_ids)
    assert [f.split(": ", 1)[1] for f in found] == ["'configured_belwo'", "'ev_nope'", "'common.skiped'",
                                                     "'rec_nothing_\\\\w+'", "'fig_nope'"]


def test_an_unused_spec_message_fails(world):
    spec_ids, ids, files, uses = world
    planted = dict(ids, **{"pool_size.never_said": {"en": "never said", "de": "nie gesagt"}})
    assert unused(planted, uses, _source_strings(files)) == ["pool_size.never_said"]


def test_a_message_without_german_fails():
    ids = {"pool_size.x": {"en": "x"}}
    assert [f"{i}: {lang}" for i, t in ids.items() for lang in LANGS if not t.get(lang)] == ["pool_size.x: de"]
