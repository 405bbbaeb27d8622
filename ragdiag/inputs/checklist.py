"""The checklist: one TOML spec per check, holding its texts and every threshold.

A spec file lives in a checklist folder (the repository's ``checks/`` by
default) and is named after its check: ``checks/pool_size.toml`` holds
``id = "pool_size"``. Checks read their thresholds only from their spec, so a
consultant can copy the folder, tune the numbers per client, and point
ragdiag at the copy (``RAGDIAG_CHECKLIST=/path/to/copy`` or the audit
config's checklist folder).

Format::

    id = "pool_size"                 # required; equals the file stem
    order = 2                        # position in reports (default 1000)
    references = ["https://..."]     # optional list of strings

    [title]                          # required, with "en"; other languages optional
    en = "Post-filter candidate pool"
    de = "Kandidaten-Pool nach Filtern"

    [question]                       # required, with "en"
    [why]                            # optional; "en" required when present
    [status_rules]                   # optional; {threshold_name} or {name:.0%} placeholders
    [remediation]                    # optional

    [thresholds]                     # required; scalars only (number, bool, string)
    min_configured_pool = 50

    [roles]                          # optional: name -> list of strings (field-name hints)
    quality = ["confidence", "score"]

    [extras]                         # optional: free-form check-specific settings

    [messages.configured_below]      # computed texts: one table per message, "en" required
    en = "{profile}: configured pool {pool} < {min}"
    de = "{profile}: konfigurierter Pool {pool} < {min}"

    [labels.pool]                    # evidence column and metric labels, "en" required
    en = "pool"
    de = "Pool"

    [regression.share_below]         # optional, at the end: `ragdiag diff` tolerances per metric
    better = "lower"                 # "higher" or "lower": which way is an improvement
    tolerance = 0.02                 # a move the wrong way by more than this is a regression

The loader is strict: unknown keys, missing required keys, wrong types, an id
that does not match the file name, placeholders naming unknown thresholds, and
(for a copied folder) threshold names that differ from the defaults are all
`ConfigError`s carrying the file, the line and the key.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.inputs.limits import excerpt
from ragdiag.inputs.tomlfile import TomlFile, parse_header

__all__ = [
    "TEXT_FIELDS",
    "CheckSpec",
    "load_spec",
    "load_checklist",
    "default_checklist_dir",
    "packaged_checklist_dir",
    "plugin_spec_files",
    "SPECS_ENTRY_POINT_GROUP",
    "checklist_table_markdown",
    "format_threshold",
]

ENV_VAR = "RAGDIAG_CHECKLIST"
#: Plugins ship their checks' specs through this entry-point group: the value names a package
#: (``"ragdiag_acme.specs"``) whose ``<check_id>.toml`` files join every checklist.
SPECS_ENTRY_POINT_GROUP = "ragdiag.specs"
TEXT_FIELDS: tuple[str, ...] = ("title", "question", "why", "status_rules", "remediation")
REQUIRED_TEXT = ("title", "question")
TOP_LEVEL_KEYS: tuple[str, ...] = ("id", "order", "references", *TEXT_FIELDS, "thresholds",
                                   "roles", "extras", "messages", "labels", "regression", "evidence")
#: Keys of a ``[regression.<metric>]`` table and the directions ``better`` may name.
REGRESSION_KEYS: tuple[str, ...] = ("better", "tolerance")
REGRESSION_DIRECTIONS: tuple[str, ...] = ("higher", "lower")
DEFAULT_ORDER = 1000
#: Module names inside `ragdiag.checks` that a check id may not take.
RESERVED_IDS = frozenset({"registry", "base", "figures"})

_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LANG_RE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")
# a format spec of at most 3 digits of width and 2 of precision ({x:>999999999} would build a GB)
_FORMAT_SPEC_RE = re.compile(r"(.?[<>=^])?[-+ ]?z?#?0?\d{0,3}[,_]?(\.\d{1,2})?[bcdeEfFgGnosxX%]?")
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}")

Threshold = float | int | bool | str


def format_threshold(value: Threshold, spec: str | None = None) -> str:
    """A threshold as prose: ``true``/``false``, ``0.1``, ``50000``; `spec` is a format spec."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if spec:
        return format(value, spec)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _toml_literal(value: Threshold) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return format_threshold(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "table"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _suggest(name: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


@dataclass(frozen=True)
class CheckSpec:
    """One check's spec: texts per language, thresholds, references, and where it came from."""

    id: str
    order: int
    title: Mapping[str, str]
    question: Mapping[str, str]
    why: Mapping[str, str] = field(default_factory=dict)
    status_rules: Mapping[str, str] = field(default_factory=dict)
    remediation: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    path: Path | None = None
    roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)
    key_lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    #: message name -> {lang: template}; ids in findings are "<check_id>.<name>"
    messages: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)
    #: label key (evidence column, metric) -> {lang: text}
    labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)
    #: metric name -> {"better": "higher" | "lower", "tolerance": number >= 0}, for `ragdiag diff`
    regression: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, compare=False)
    #: message name -> the conditions its fixed sentence asserts (`ragdiag.report.evidence`)
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def has_threshold(self, name: str) -> bool:
        return name in self.thresholds

    # -- texts --------------------------------------------------------------

    def text(self, field_name: str, lang: str = "en") -> str:
        """The text of `field_name` in `lang`, falling back to English, then to ""."""
        if field_name not in TEXT_FIELDS:
            raise ValueError(f"unknown text field {field_name!r}; expected one of {', '.join(TEXT_FIELDS)}")
        texts: Mapping[str, str] = getattr(self, field_name)
        return texts.get(lang) or texts.get("en", "")

    @property
    def languages(self) -> tuple[str, ...]:
        """Languages that have a title (``en`` first)."""
        return tuple(sorted(self.title, key=lambda lang: (lang != "en", lang)))

    def render_rules(self, lang: str = "en") -> str:
        """`status_rules` in `lang` with every ``{threshold}`` replaced by its value."""
        return _PLACEHOLDER_RE.sub(
            lambda m: format_threshold(self.threshold(m.group(1)), m.group(2)),
            self.text("status_rules", lang))

    # -- thresholds ---------------------------------------------------------

    def _where(self, key: str) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "line": _line_of(self.key_lines, key),
                "key": key}

    def threshold(self, name: str, kind: type | None = None) -> Any:
        """The value of threshold `name`; `kind` (int, float, bool, str) checks its type.

        Raises `ConfigError` naming the spec file and the thresholds it has.
        """
        if name not in self.thresholds:
            available = ", ".join(sorted(self.thresholds)) or "(none)"
            raise ConfigError(
                f"check '{self.id}' has no threshold '{name}'{_suggest(name, self.thresholds)}; "
                f"available: {available}. Add `{name} = ...` under [thresholds]",
                **self._where("thresholds"))
        value = self.thresholds[name]
        if kind is None:
            return value
        ok = False
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif kind is int:
            ok = (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and value.is_integer())
            value = int(value) if ok else value
        elif kind is str:
            ok = isinstance(value, str)
        else:
            raise ValueError(f"threshold kind must be int, float, bool or str, got {kind!r}")
        if not ok:
            raise ConfigError(f"threshold '{name}' of check '{self.id}' must be "
                              f"{'an integer' if kind is int else 'a ' + _PY_KIND[kind]}, "
                              f"got {_toml_literal(self.thresholds[name])}",
                              **self._where(f"thresholds.{name}"))
        return value

    def with_thresholds(self, **overrides: Threshold) -> CheckSpec:
        """A copy with some thresholds changed (for notebooks); names and kinds must match."""
        new = dict(self.thresholds)
        for name, value in overrides.items():
            if name not in self.thresholds:
                self.threshold(name)  # raises with the helpful message
            old = self.thresholds[name]
            if _kind(value) != _kind(old):
                raise ConfigError(f"threshold '{name}' of check '{self.id}' is a {_kind(old)}, "
                                  f"got {_kind(value)} {value!r}", key=f"thresholds.{name}")
            new[name] = value
        return replace(self, thresholds=new)

    # -- display ------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "order": self.order, "references": list(self.references),
                **{f: dict(getattr(self, f)) for f in TEXT_FIELDS},
                "thresholds": dict(self.thresholds),
                "roles": {k: list(v) for k, v in self.roles.items()}, "extras": dict(self.extras),
                "messages": {k: dict(v) for k, v in self.messages.items()},
                "labels": {k: dict(v) for k, v in self.labels.items()},
                "regression": {k: dict(v) for k, v in self.regression.items()},
                "evidence": {k: list(v) for k, v in self.evidence.items()},
                "path": str(self.path) if self.path else None}

    def __repr__(self) -> str:
        return f"<CheckSpec {self.order}. {self.id}: {self.text('title')!r}>"

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(_toml_literal(v))}</td></tr>"
                       for k, v in self.thresholds.items())
        return (f"<div><b>{self.order}. {html.escape(self.text('title'))}</b> "
                f"<code>{html.escape(self.id)}</code><p><i>{html.escape(self.text('question'))}</i></p>"
                f"<p>{html.escape(self.render_rules())}</p>"
                f"<table><thead><tr><th>threshold</th><th>value</th></tr></thead><tbody>{rows}</tbody>"
                "</table></div>")


_PY_KIND = {bool: "boolean", float: "number", int: "integer", str: "string"}


# ---------------------------------------------------------------------------
# line numbers (tomllib reports none for valid files)

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_KEY_RE = re.compile(rf"^\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=(.*)$")


def _norm_key(raw: str) -> str:
    parts = re.findall(_KEY_PART, raw)
    return ".".join(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _scan_lines(text: str) -> dict[str, int]:
    """Map dotted keys (``thresholds.max_k``, ``title``) to the 1-based line that defines them."""
    lines: dict[str, int] = {}
    table = ""
    in_multiline: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if in_multiline:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = parse_header(line) if line.lstrip().startswith("[") else None
        if header is not None and not header[0]:
            table = ".".join(header[1])
            lines.setdefault(table, lineno)
            continue
        key = _KEY_RE.match(line)
        if key:
            dotted = _norm_key(key.group(1))
            lines.setdefault(f"{table}.{dotted}" if table else dotted, lineno)
            value = key.group(2)
            for delim in ('"""', "'''"):
                if value.count(delim) % 2 == 1:
                    in_multiline = delim
                    break
    return lines


def _line_of(lines: Mapping[str, int], key: str) -> int | None:
    parts = key.split(".")
    while parts:
        found = lines.get(".".join(parts))
        if found:
            return found
        parts.pop()
    return None


# ---------------------------------------------------------------------------
# loading


def load_spec(path: str | Path) -> CheckSpec:
    """Load and validate one spec file; every problem is a `ConfigError` with file and line."""
    p = Path(path)
    tf = TomlFile.load(p, what="checklist spec")  # read, parse and limits, with file and line
    text, data = tf.text, tf.data
    return _build(data, path=p, lines=_scan_lines(text), n_lines=len(text.splitlines()))


def _build(data: Mapping[str, Any], *, path: Path, lines: Mapping[str, int],
           n_lines: int) -> CheckSpec:
    def err(message: str, key: str) -> ConfigError:
        line = _line_of(lines, key)
        if line is None:  # a missing key: 'id' belongs at the top, a table can be appended
            line = 1 if key in ("id", "order", "references") else max(n_lines, 1)
        return ConfigError(message, path=str(path), line=line, key=key)

    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise err(f"unknown key {excerpt(key, 60)}{_suggest(key, TOP_LEVEL_KEYS)}; a spec may contain "
                      f"{', '.join(TOP_LEVEL_KEYS)} (check-specific settings go under [extras])", key)

    # id
    if "id" not in data:
        raise err(f'missing required key \'id\'; add `id = "{path.stem}"` at the top', "id")
    check_id = data["id"]
    if not isinstance(check_id, str):
        raise err(f"'id' must be a string, got {_kind(check_id)} {excerpt(check_id)}", "id")
    if not _ID_RE.match(check_id):
        raise err(f"'id' must be lowercase letters, digits and underscores starting with a letter "
                  f"(it names a Python module), got {excerpt(check_id)}", "id")
    if check_id in RESERVED_IDS:
        raise err(f"'id' {excerpt(check_id)} is reserved (a module of ragdiag.checks); choose another name", "id")
    if check_id != path.stem:
        raise err(f"id {excerpt(check_id)} does not match the file name {excerpt(path.name)}; rename the file to "
                  f"'{check_id}.toml' or set id = \"{path.stem}\"", "id")

    # order
    order = data.get("order", DEFAULT_ORDER)
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise err(f"'order' must be a positive integer, got {_kind(order)} {excerpt(order)}", "order")

    # texts
    texts: dict[str, dict[str, str]] = {}
    for name in TEXT_FIELDS:
        if name not in data:
            if name in REQUIRED_TEXT:
                raise err(f"missing required table [{name}] with an 'en' entry; add\n  [{name}]\n"
                          f'  en = "..."', name)
            texts[name] = {}
            continue
        table = data[name]
        if not isinstance(table, dict):
            raise err(f"'{name}' must be a table of texts per language ([{name}] with en = \"...\"), "
                      f"got {_kind(table)}", name)
        for lang, value in table.items():
            if not _LANG_RE.match(lang):
                raise err(f"[{name}] key '{lang}' is not a language code such as 'en' or 'de'",
                          f"{name}.{lang}")
            if not isinstance(value, str) or not value.strip():
                raise err(f"[{name}] {lang} must be a non-empty string, got {_kind(value)} {excerpt(value)}",
                          f"{name}.{lang}")
        if "en" not in table:
            raise err(f"[{name}] needs an 'en' entry (the fallback language); it has "
                      f"{', '.join(table) or 'none'}", name)
        texts[name] = {lang: " ".join(v.split()) if name in ("title",) else v.strip()
                       for lang, v in table.items()}

    # thresholds
    if "thresholds" not in data:
        raise err("missing required table [thresholds] (scalars: numbers, booleans or strings)",
                  "thresholds")
    thresholds = data["thresholds"]
    if not isinstance(thresholds, dict):
        raise err(f"'thresholds' must be a table, got {_kind(thresholds)}", "thresholds")
    for name, value in thresholds.items():
        key = f"thresholds.{name}"
        if not _NAME_RE.match(name):
            raise err(f"threshold name {excerpt(name)} must be a Python identifier (letters, digits, _)", key)
        if not isinstance(value, bool | int | float | str):
            hint = (" Lists of field names belong in [roles], other settings in [extras]."
                    if isinstance(value, list | dict) else "")
            raise err(f"threshold '{name}' must be a number, boolean or string, got {_kind(value)}.{hint}",
                      key)

    # references
    references = data.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, str) and r for r in references):
        raise err("'references' must be a list of non-empty strings (URLs or citations)", "references")

    # roles
    roles_in = data.get("roles", {})
    if not isinstance(roles_in, dict):
        raise err(f"'roles' must be a table of string lists, got {_kind(roles_in)}", "roles")
    roles: dict[str, tuple[str, ...]] = {}
    for role, names in roles_in.items():
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise err(f"[roles] {role} must be a list of non-empty strings, e.g. {role} = [\"date\"]",
                      f"roles.{role}")
        roles[role] = tuple(names)

    extras = data.get("extras", {})
    if not isinstance(extras, dict):
        raise err(f"'extras' must be a table, got {_kind(extras)}", "extras")

    messages = _text_tables(data.get("messages", {}), "messages", err)
    labels = _text_tables(data.get("labels", {}), "labels", err)
    regression = _regression(data.get("regression", {}), err)
    evidence = _evidence(data.get("evidence", {}), messages, err)

    # placeholders in status_rules must name thresholds and format
    for lang, rule in texts["status_rules"].items():
        for m in _PLACEHOLDER_RE.finditer(rule):
            name, spec = m.group(1), m.group(2)
            if name not in thresholds:
                raise err(f"[status_rules] {lang} refers to {{{name}}}, which is not a threshold"
                          f"{_suggest(name, thresholds)}; thresholds: {', '.join(thresholds) or '(none)'}",
                          f"status_rules.{lang}")
            if spec and not _FORMAT_SPEC_RE.fullmatch(spec):
                raise err(f"[status_rules] {lang}: {excerpt(m.group(0), 60)} has an unusual format "
                          "spec; use a short one such as {name:.0%} or {name:,}", f"status_rules.{lang}")
            try:
                format_threshold(thresholds[name], spec)
            except (ValueError, TypeError) as exc:
                raise err(f"[status_rules] {lang}: cannot format {m.group(0)} with value "
                          f"{_toml_literal(thresholds[name])}: {exc}", f"status_rules.{lang}") from None

    return CheckSpec(
        id=check_id, order=order, title=texts["title"], question=texts["question"],
        why=texts["why"], status_rules=texts["status_rules"], remediation=texts["remediation"],
        thresholds=dict(thresholds), references=tuple(references), path=path, roles=roles,
        extras=dict(extras), key_lines=dict(lines), messages=messages, labels=labels,
        regression=regression, evidence=evidence,
    )


def _evidence(value: Any, messages: Mapping[str, Any], err: Any) -> dict[str, tuple[str, ...]]:
    """[evidence]: message name -> conditions (each a string, `ragdiag.report.evidence`)."""
    from ragdiag.report.evidence import condition_problem

    if not isinstance(value, dict):
        raise err("'evidence' must be a table: message name = [\"observed:NAME\", ...]", "evidence")
    out: dict[str, tuple[str, ...]] = {}
    for name, conditions in value.items():
        if name not in messages:
            raise err(f"[evidence] {name} names no message of this spec{_suggest(name, messages)}",
                      f"evidence.{name}")
        if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
            raise err(f"[evidence] {name} must be a list of conditions such as [\"observed:leak_probe_requests\"]",
                      f"evidence.{name}")
        for c in conditions:
            problem = condition_problem(c)
            if problem:
                raise err(f"[evidence] {name}: {problem}", f"evidence.{name}")
        out[name] = tuple(conditions)
    return out


def _regression(value: Any, err: Any) -> dict[str, dict[str, Any]]:
    """[regression.<metric>]: better = "higher" | "lower" (required), tolerance = number >= 0."""
    if not isinstance(value, dict):
        raise err(f"'regression' must be a table of tables ([regression.<metric>] with better = "
                  f"\"higher\" or \"lower\"), got {_kind(value)}", "regression")
    out: dict[str, dict[str, Any]] = {}
    for metric, table in value.items():
        where = f"regression.{metric}"
        if not isinstance(table, dict):
            raise err(f"[regression] {metric!r} must be a table with better = \"higher\" or \"lower\" "
                      f"and an optional tolerance, got {_kind(table)}", where)
        for key in table:
            if key not in REGRESSION_KEYS:
                raise err(f"[{where}] unknown key '{key}'{_suggest(key, REGRESSION_KEYS)}; a regression "
                          f"table may contain {', '.join(REGRESSION_KEYS)}", f"{where}.{key}")
        if "better" not in table:
            raise err(f"[{where}] needs better = \"higher\" or \"lower\" (which way the metric improves)",
                      where)
        better = table["better"]
        if better not in REGRESSION_DIRECTIONS:
            got = _toml_literal(better) if isinstance(better, bool | int | float | str) else _kind(better)
            raise err(f"[{where}] better must be \"higher\" or \"lower\", got {got}", f"{where}.better")
        tolerance = table.get("tolerance", 0)
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            raise err(f"[{where}] tolerance must be a number >= 0 (in the metric's own unit), got "
                      f"{_kind(tolerance)} {tolerance!r}", f"{where}.tolerance")
        out[metric] = {"better": better, "tolerance": tolerance}
    return out


def _text_tables(value: Any, name: str, err: Any) -> dict[str, dict[str, str]]:
    """[messages] / [labels]: name -> {lang: non-empty text}, "en" required, placeholders alike."""
    if not isinstance(value, dict):
        raise err(f"'{name}' must be a table of tables ([{name}.<name>] with en = \"...\")", name)
    out: dict[str, dict[str, str]] = {}
    for key, texts in value.items():
        where = f"{name}.{key}"
        if not _NAME_RE.match(key):
            raise err(f"[{name}] name {excerpt(key)} must be an identifier (letters, digits, _)", where)
        if not isinstance(texts, dict) or "en" not in texts:
            raise err(f"[{where}] must be a table with at least en = \"...\"", where)
        fields_en = None
        for lang, text in texts.items():
            if not _LANG_RE.match(lang) or not isinstance(text, str) or not text.strip():
                raise err(f"[{where}] {lang} must be a language code with a non-empty text", f"{where}.{lang}")
            names = {m.group(1) for m in _PLACEHOLDER_RE.finditer(text)}
            for m in _PLACEHOLDER_RE.finditer(text):
                if m.group(2) and not _FORMAT_SPEC_RE.fullmatch(m.group(2)):
                    raise err(f"[{where}] {lang}: {excerpt(m.group(0), 60)} has an unusual format spec; "
                              "use a short one such as {n:.0%} or {n:,}", f"{where}.{lang}")
            if lang == "en":
                fields_en = names
        for lang, text in texts.items():
            names = {m.group(1) for m in _PLACEHOLDER_RE.finditer(text)}
            if fields_en is not None and names != fields_en:
                raise err(f"[{where}] {lang} uses placeholders {sorted(names)} but en uses "
                          f"{sorted(fields_en)}; every language must fill the same ones", f"{where}.{lang}")
        out[key] = {lang: " ".join(text.split()) for lang, text in texts.items()}
    return out


def packaged_checklist_dir() -> Path:
    """The checklist shipped with ragdiag: the package data folder ``ragdiag/checks/specs``."""
    from importlib.resources import files

    return Path(str(files("ragdiag.checks") / "specs"))


def default_checklist_dir() -> Path:
    """``$RAGDIAG_CHECKLIST`` if set, else the shipped ``checks/`` folder."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    return packaged_checklist_dir()


def load_checklist(folder: str | Path | None = None, *,
                   compare_to_defaults: bool = True) -> dict[str, CheckSpec]:
    """Load every ``*.toml`` spec in `folder` (default: `default_checklist_dir()`), sorted by order.

    When `folder` is not the shipped checklist and `compare_to_defaults` is true,
    each spec that has a shipped counterpart must carry the same threshold names
    with values of the same kind, so a typo in a tuned copy is caught at load
    time instead of when the check runs.
    """
    root = Path(folder).expanduser() if folder is not None else default_checklist_dir()
    if not root.is_dir():
        hint = f" (set by ${ENV_VAR})" if folder is None and os.environ.get(ENV_VAR) else ""
        raise ConfigError(f"checklist folder does not exist{hint}; expected a folder of <check_id>.toml "
                          "spec files, e.g. a copy of ragdiag's checks/", path=str(root))
    files = sorted(root.glob("*.toml"))
    if not files:
        raise ConfigError("checklist folder contains no *.toml spec files", path=str(root))
    own = {f.stem for f in files}  # a folder's own spec wins over a plugin's (a tuned copy)
    files += [f for f in plugin_spec_files() if f.stem not in own]
    specs = [load_spec(f) for f in files]
    specs.sort(key=lambda s: (s.order, s.id))
    result = {s.id: s for s in specs}

    packaged = packaged_checklist_dir()
    if compare_to_defaults and packaged.is_dir() and root.resolve() != packaged.resolve():
        for spec in specs:
            ref_path = packaged / f"{spec.id}.toml"
            if ref_path.is_file():
                _compare(spec, load_spec(ref_path))
    return result


def plugin_spec_files() -> list[Path]:
    """The spec files plugins ship (entry-point group ``ragdiag.specs``), sorted by name.

    A broken entry point raises `ConfigError` naming it: a plugin's check without its spec
    would silently not run.
    """
    import importlib.metadata
    from importlib.resources import files as resource_files

    out: dict[str, Path] = {}
    for ep in sorted(importlib.metadata.entry_points(group=SPECS_ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            folder = Path(str(resource_files(ep.value)))
        except (ImportError, TypeError, ValueError) as exc:
            raise ConfigError(f"plugin spec entry point '{ep.name}' = {ep.value!r} (group "
                              f"{SPECS_ENTRY_POINT_GROUP}) names no importable package: "
                              f"{type(exc).__name__}: {exc}") from None
        for f in sorted(folder.glob("*.toml")):
            out.setdefault(f.stem, f)
    return [out[k] for k in sorted(out)]


def _compare(spec: CheckSpec, ref: CheckSpec) -> None:
    """A tuned spec must keep the shipped threshold names and kinds."""
    for name, ref_value in ref.thresholds.items():
        if name not in spec.thresholds:
            raise ConfigError(
                f"check '{spec.id}' lacks threshold '{name}', which its implementation reads; the "
                f"shipped default is `{name} = {_toml_literal(ref_value)}` ({ref.path}). Add it under "
                "[thresholds]", path=str(spec.path), line=_line_of(spec.key_lines, "thresholds"),
                key=f"thresholds.{name}")
        value = spec.thresholds[name]
        compatible = _kind(value) == _kind(ref_value) and not (
            isinstance(ref_value, int) and not isinstance(ref_value, bool)
            and isinstance(value, float) and not value.is_integer())
        if not compatible:
            expected = "an integer" if isinstance(ref_value, int) and not isinstance(ref_value, bool) \
                else f"a {_kind(ref_value)}"
            raise ConfigError(
                f"threshold '{name}' of check '{spec.id}' must be {expected} like the shipped default "
                f"{_toml_literal(ref_value)}, got {_toml_literal(value)}", path=str(spec.path),
                line=_line_of(spec.key_lines, f"thresholds.{name}"), key=f"thresholds.{name}")
    for name in spec.thresholds:
        if name not in ref.thresholds:
            raise ConfigError(
                f"check '{spec.id}' has unknown threshold '{name}'{_suggest(name, ref.thresholds)}; "
                f"known: {', '.join(ref.thresholds)}", path=str(spec.path),
                line=_line_of(spec.key_lines, f"thresholds.{name}"), key=f"thresholds.{name}")


# ---------------------------------------------------------------------------
# documentation


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def checklist_table_markdown(specs: Mapping[str, CheckSpec] | Iterable[CheckSpec], lang: str = "en") -> str:
    """A Markdown table of the checks: order, id, title, question, default thresholds.

    ``checks/README.md`` embeds this table between ``<!-- checks-table:start -->``
    and ``<!-- checks-table:end -->``; a test keeps the two equal.
    """
    items = list(specs.values()) if isinstance(specs, Mapping) else list(specs)
    items.sort(key=lambda s: (s.order, s.id))
    out = ["| # | Check | Title | Question | Default thresholds |",
           "|---|---|---|---|---|"]
    for s in items:
        thresholds = "<br>".join(f"`{k} = {_toml_literal(v)}`" for k, v in s.thresholds.items())
        out.append(f"| {s.order} | `{s.id}` | {_md_cell(s.text('title', lang))} | "
                   f"{_md_cell(s.text('question', lang))} | {_md_cell(thresholds)} |")
    return "\n".join(out) + "\n"
