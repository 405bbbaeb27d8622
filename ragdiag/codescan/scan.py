"""Walk a client's code tree and collect everything the checks need; `CodeScan` holds the result.

    scan = scan_path(Path("client_app"))
    scan.summary()                 # counts and the headline facts, JSON-safe
    scan.builders()                # modules building search requests (check 7: centralisation)
    scan.drift()                   # parameters / filter clauses that differ between call sites
    scan.contradictions()          # prompt length rules that disagree (check 4)

The client's code is only read, never imported or executed. Files are visited
in sorted order, so the result is deterministic. A file that cannot be read
or parsed lands in `skipped` with the reason; the scan never raises for a bad
file.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.core import scanner_for
from ragdiag.codescan.model import (
    BudgetConstant,
    Builder,
    CitationCheck,
    Drift,
    GoldsetFile,
    LLMCallSite,
    PromptRule,
    ResolvedValue,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
    jsonable,
)
from ragdiag.codescan.prompts import contradictions, is_prompt_file, prompt_rules
from ragdiag.errors import InputDataError

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hg", ".svn", ".next",
                       ".idea", ".vscode", "site-packages"})
#: Source files that may hold retrieval code but that the scanner cannot read: reported as skipped.
UNSUPPORTED_SUFFIXES = (".java", ".cs", ".go", ".rb", ".php", ".kt", ".scala", ".rs", ".vue", ".svelte",
                        ".swift", ".fs", ".r")
#: Call-site kinds that send Azure AI Search requests (compared by `drift`).
AZURE_KINDS = ("azure_search", "rest_search")


def _kind_of(rel: str) -> str | None:
    """The language scanner's name for `rel`, ``unsupported``, ``prompt`` or None (not a file to read)."""
    scanner = scanner_for(rel)
    if scanner is not None:
        return scanner.name
    lower = rel.lower()
    if lower.endswith(UNSUPPORTED_SUFFIXES):
        return "unsupported"
    if is_prompt_file(rel.rsplit("/", 1)[-1]):
        return "prompt"
    return None


def list_files(root: Path) -> list[str]:
    """Relative POSIX paths of all files under `root` (sorted), skipping vendored/build folders."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        base = Path(dirpath).relative_to(root).as_posix()
        for name in filenames:
            out.append(name if base == "." else f"{base}/{name}")
    return sorted(out)


def scan_file(project: C.Project, rel: str) -> C.FileResult:
    """Scan one file of `project`; never raises (problems become `Skipped`)."""
    kind = _kind_of(rel)
    if kind is None:
        return C.FileResult(scanned=False)
    result = C.FileResult(scanned=False)
    if kind == "unsupported":
        result.skipped.append(Skipped(rel, f"unsupported language ({Path(rel).suffix}): not scanned"))
        return result
    path = project.root / rel
    try:
        size = path.stat().st_size
        if size > project.max_file_bytes:
            result.skipped.append(Skipped(rel, f"larger than {project.max_file_bytes:,} bytes ({size:,} bytes)"))
            return result
        data = path.read_bytes()
    except OSError as exc:
        result.skipped.append(Skipped(rel, f"unreadable: {exc.strerror or exc}"))
        return result
    if b"\x00" in data[:8192]:
        result.skipped.append(Skipped(rel, "binary file"))
        return result
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.skipped.append(Skipped(rel, f"not UTF-8 (invalid byte at offset {exc.start})"))
        return result
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        scanner = scanner_for(rel) if kind != "prompt" else None
        if scanner is not None:
            return scanner.scan(project, rel, text)
        result = C.FileResult(scanned=True)
        result.prompt_rules.extend(prompt_rules(text, file=rel))
        return result
    except Exception as exc:  # noqa: BLE001 - a bad file must never stop the scan
        result = C.FileResult(scanned=False)
        result.skipped.append(Skipped(rel, f"analysis error: {type(exc).__name__}: {exc}"[:300]))
        return result


# ---- parallel workers ---------------------------------------------------------------------

_WORKER_PROJECT: C.Project | None = None


def _init_worker(root: str, files: list[str], max_file_bytes: int, check_syntax: bool) -> None:
    global _WORKER_PROJECT
    _WORKER_PROJECT = C.Project(Path(root), files, max_file_bytes, check_syntax)


def _worker_scan(rel: str) -> C.FileResult:
    assert _WORKER_PROJECT is not None
    return scan_file(_WORKER_PROJECT, rel)


def scan_path(root: str | os.PathLike[str], *, max_file_bytes: int = 1_000_000,
              workers: int = 1, check_syntax: bool = False) -> CodeScan:
    """Scan the code tree at `root` (a folder, or a single file).

    `workers` > 1 scans files in that many processes (worth it above a few
    thousand files); the result is the same and in the same order.
    Python files containing no trigger word at all (nothing the scanner looks
    for could be in them) are not parsed, so a syntax error in such a file is
    not reported; `check_syntax=True` parses every file and reports them all.
    """
    base = Path(root)
    if base.is_file():
        files = [base.name]
        base = base.parent
    elif base.is_dir():
        files = list_files(base)
    else:
        raise InputDataError("client code folder not found: give the folder holding the client's code",
                             path=str(root))
    project = C.Project(base, files, max_file_bytes, check_syntax)
    candidates = [f for f in files if _kind_of(f) is not None]
    if workers > 1 and len(candidates) >= 2 * workers:
        from concurrent.futures import ProcessPoolExecutor

        chunk = max(1, min(64, len(candidates) // (workers * 4)))
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                                 initargs=(str(base), files, max_file_bytes, check_syntax)) as pool:
            results = list(pool.map(_worker_scan, candidates, chunksize=chunk))
    else:
        results = [scan_file(project, rel) for rel in candidates]
    merged = C.FileResult()
    scanned = 0
    for res in results:
        scanned += res.scanned
        merged.search_calls.extend(res.search_calls)
        merged.vector_queries.extend(res.vector_queries)
        merged.llm_calls.extend(res.llm_calls)
        merged.budget_constants.extend(res.budget_constants)
        merged.citation_checks.extend(res.citation_checks)
        merged.prompt_rules.extend(res.prompt_rules)
        merged.security_filters.extend(res.security_filters)
        merged.skipped.extend(res.skipped)
    goldset: list[GoldsetFile] = []
    if len(files) > 1 or base.is_dir():
        from ragdiag.inputs.goldset import find_goldset_files

        goldset = [GoldsetFile(p.relative_to(base).as_posix()) for p in find_goldset_files(base)
                   if p.relative_to(base).as_posix() in project.fileset]

    def order(items: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(sorted(items, key=lambda r: (r.file, r.line, getattr(r, "kind", ""))))

    return CodeScan(
        root=base.as_posix(), files_scanned=scanned,
        search_calls=order(merged.search_calls), vector_queries=order(merged.vector_queries),
        llm_calls=order(merged.llm_calls), budget_constants=order(merged.budget_constants),
        citation_checks=order(merged.citation_checks), prompt_rules=order(merged.prompt_rules),
        security_filters=order(merged.security_filters), goldset_files=tuple(goldset),
        skipped=tuple(sorted(merged.skipped, key=lambda s: s.file)))


# ---- the result -------------------------------------------------------------------------------


def _render(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(value)
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(jsonable(value), sort_keys=True)


@dataclass(frozen=True)
class _FilterState:
    clauses: list[C.FilterClause] | None   # None: unknown
    complete: bool
    security: str | None                   # "present", "absent" or None (unknown)


def _filter_state(site: SearchCallSite) -> _FilterState:
    p = site.params.get("filter")
    if p is None:
        return _FilterState([], True, "absent")
    if isinstance(p.value, str):
        clauses, _ = C.filter_clauses(p.value)
        # an opaque part named like a security filter (`{acl_filter}`) is taken to be just that
        complete = all(not c.opaque or C.SECURITY_NAME_RE.search(c.text) for c in clauses)
        sec = any(C.clause_role(c.fields, c.text) == "security"
                  or (c.opaque and C.SECURITY_NAME_RE.search(c.text)) for c in clauses)
        return _FilterState(clauses, complete, "present" if sec else ("absent" if complete else None))
    if C.SECURITY_NAME_RE.search(p.expression or "") or C.SECURITY_NAME_RE.search(p.source or ""):
        return _FilterState(None, False, "present")
    return _FilterState(None, False, None)


@dataclass(frozen=True)
class CodeScan:
    """Everything found in a client's code tree (see the module docstring)."""

    root: str
    files_scanned: int
    search_calls: tuple[SearchCallSite, ...] = ()
    vector_queries: tuple[SearchCallSite, ...] = ()
    llm_calls: tuple[LLMCallSite, ...] = ()
    budget_constants: tuple[BudgetConstant, ...] = ()
    citation_checks: tuple[CitationCheck, ...] = ()
    prompt_rules: tuple[PromptRule, ...] = ()
    security_filters: tuple[SecurityFilterSite, ...] = ()
    goldset_files: tuple[GoldsetFile, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- views ----------------------------------------------------------------------------
    def all_call_sites(self) -> tuple[SearchCallSite, ...]:
        """Search calls and vector-query constructions, in file/line order."""
        return tuple(sorted((*self.search_calls, *self.vector_queries), key=lambda s: (s.file, s.line)))

    def builders(self) -> tuple[Builder, ...]:
        """Modules that build search requests: those holding a call site or a helper feeding one."""
        if "builders" in self._cache:
            return self._cache["builders"]
        mods: dict[str, dict[str, set[str]]] = {}

        def add(module: str, file: str | None, function: str | None, site: str) -> None:
            m = mods.setdefault(module, {"files": set(), "functions": set(), "sites": set()})
            if file:
                m["files"].add(file)
            if function:
                m["functions"].add(function)
            m["sites"].add(site)

        for s in self.all_call_sites():
            add(s.module, s.file, s.function, s.location)
            if s.builder:
                module, _, qual = s.builder.partition(":")
                add(module, None, qual, s.location)
        files_by_module = {s.module: s.file for s in self.all_call_sites()}
        out = []
        for module in sorted(mods):
            m = mods[module]
            files = m["files"] or ({files_by_module[module]} if module in files_by_module else set())
            out.append(Builder(module, tuple(sorted(files)), tuple(sorted(m["functions"])),
                               tuple(sorted(m["sites"], key=_site_key))))
        result = tuple(out)
        self._cache["builders"] = result
        return result

    def builder_modules(self) -> tuple[str, ...]:
        return tuple(b.module for b in self.builders())

    def drift(self) -> list[Drift]:
        """Filter clauses, the security clause and parameters that differ between call sites.

        Compared over Azure request sites (SDK and REST). A literal filter
        clause present at some sites and absent at others drifts; so does the
        security clause; `top` and `query_type` drift when two sites resolve
        to different values (``<unset>`` counts as a value); `k` and
        `exhaustive` over the vector queries (``exhaustive`` unset = false).
        Unresolvable values are left out rather than guessed.
        """
        if "drift" in self._cache:
            return list(self._cache["drift"])
        sites = [s for s in self.search_calls if s.kind in AZURE_KINDS]
        states = {s.location: _filter_state(s) for s in sites}
        out: list[Drift] = []
        # literal filter clauses
        clause_fields: dict[str, tuple[str, ...]] = {}
        for st in states.values():
            for c in st.clauses or ():
                if c.literal:
                    clause_fields.setdefault(c.text, c.fields)
        for text in sorted(clause_fields):
            present, absent = [], []
            for loc, st in states.items():
                if st.clauses is None:
                    continue
                if any(c.text == text for c in st.clauses):
                    present.append(loc)
                elif st.complete:
                    absent.append(loc)
            if present and absent:
                role = C.clause_role(clause_fields[text], text)
                out.append(Drift(f"filter: {text}", {"present": tuple(present), "absent": tuple(absent)},
                                 "security_clause" if role == "security" else "filter_clause", role))
        # the security clause as such
        sec: dict[str, list[str]] = {}
        for loc, st in states.items():
            if st.security is not None:
                sec.setdefault(st.security, []).append(loc)
        if len(sec) > 1:
            out.append(Drift("security filter", {k: tuple(v) for k, v in sorted(sec.items(), reverse=True)},
                             "security_clause", "security"))
        # plain parameters
        for name in ("top", "query_type"):
            values: dict[str, list[str]] = {}
            for s in sites:
                p = s.params.get(name)
                if p is None:
                    values.setdefault("<unset>", []).append(s.location)
                elif p.resolved:
                    values.setdefault(_render(p.value), []).append(s.location)
            if len(values) > 1:
                out.append(Drift(name, {k: tuple(v) for k, v in sorted(values.items())}))
        vector_sites = list(self.vector_queries) + [
            s for s in self.search_calls
            if s.kind in AZURE_KINDS and any(
                (s.params.get(n) is not None and not s.params[n].source.startswith("vector_query@"))
                for n in ("k", "exhaustive"))]
        for name, default in (("k", "<unset>"), ("exhaustive", "false")):
            values = {}
            for s in vector_sites:
                p = s.params.get(name)
                if p is None:
                    values.setdefault(default, []).append(s.location)
                elif p.resolved:
                    values.setdefault(_render(p.value), []).append(s.location)
            if len(values) > 1:
                out.append(Drift(name, {k: tuple(v) for k, v in sorted(values.items())}))
        self._cache["drift"] = tuple(out)
        return out

    def contradictions(self) -> list[tuple[PromptRule, PromptRule]]:
        """Pairs of prompt length rules whose word ranges differ."""
        return contradictions(self.prompt_rules)

    def sole_input_rules(self) -> tuple[PromptRule, ...]:
        return tuple(r for r in self.prompt_rules if r.kind == "sole_input")

    def shared_text_sites(self) -> tuple[SearchCallSite, ...]:
        """Call sites where one variable feeds the keyword text and a vector text or the semantic query."""
        return tuple(s for s in self.search_calls if s.shared_text)

    def unbounded_llm_calls(self) -> tuple[LLMCallSite, ...]:
        """LLM calls that receive retrieved context with no visible bound."""
        return tuple(c for c in self.llm_calls if c.retrieved_context and not c.context_bounded)

    def citations_validated(self) -> bool | None:
        """True if some citation handler validates ids, False if handlers exist but none does, None if none."""
        if not self.citation_checks:
            return None
        return any(c.validated for c in self.citation_checks)

    def injection_risks(self) -> tuple[SecurityFilterSite, ...]:
        """Security filters built by interpolation without escaping."""
        return tuple(s for s in self.security_filters if s.injection_risk)

    # -- output ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files_scanned": self.files_scanned,
            "search_calls": [s.to_dict() for s in self.search_calls],
            "vector_queries": [s.to_dict() for s in self.vector_queries],
            "llm_calls": [c.to_dict() for c in self.llm_calls],
            "budget_constants": [b.to_dict() for b in self.budget_constants],
            "citation_checks": [c.to_dict() for c in self.citation_checks],
            "prompt_rules": [r.to_dict() for r in self.prompt_rules],
            "security_filters": [s.to_dict() for s in self.security_filters],
            "goldset_files": [g.path for g in self.goldset_files],
            "skipped": [s.to_dict() for s in self.skipped],
            "builders": [b.to_dict() for b in self.builders()],
            "drift": [d.to_dict() for d in self.drift()],
            "contradictions": [[a.location, b.location] for a, b in self.contradictions()],
        }

    def summary(self) -> dict[str, Any]:
        """Counts and headline facts (JSON-safe) for a report or a quick look."""
        by_kind: dict[str, int] = {}
        for s in self.search_calls:
            by_kind[s.kind] = by_kind.get(s.kind, 0) + 1
        return {
            "root": self.root,
            "files_scanned": self.files_scanned,
            "search_calls": len(self.search_calls),
            "search_calls_by_kind": dict(sorted(by_kind.items())),
            "vector_queries": len(self.vector_queries),
            "builder_modules": list(self.builder_modules()),
            "drift": [d.param for d in self.drift()],
            "shared_text_sites": [s.location for s in self.shared_text_sites()],
            "llm_calls": len(self.llm_calls),
            "unbounded_llm_calls": [c.location for c in self.unbounded_llm_calls()],
            "budget_constants": [b.name for b in self.budget_constants],
            "citations_validated": self.citations_validated(),
            "prompt_contradictions": len(self.contradictions()),
            "sole_input_rules": [r.location for r in self.sole_input_rules()],
            "security_filters": len(self.security_filters),
            "injection_risks": [s.location for s in self.injection_risks()],
            "goldset_files": [g.path for g in self.goldset_files],
            "skipped": len(self.skipped),
        }

    def __repr__(self) -> str:
        s = self.summary()
        return (f"CodeScan({self.root!r}: {s['files_scanned']} files, {s['search_calls']} search calls, "
                f"{len(s['builder_modules'])} builder modules, {len(s['drift'])} drifting, "
                f"{s['llm_calls']} LLM calls, {s['skipped']} skipped)")

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                       f"<td style='text-align:left'>{html.escape(_render(v))}</td></tr>"
                       for k, v in self.summary().items())
        return f"<table><caption>Code scan</caption>{rows}</table>"


def _site_key(loc: str) -> tuple[str, int]:
    file, _, line = loc.rpartition(":")
    return (file, int(line) if line.isdigit() else 0)


__all__ = ["CodeScan", "ResolvedValue", "list_files", "scan_file", "scan_path"]
