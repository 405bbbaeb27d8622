"""The scanned tree (`Project`: file list, safe reading, parse caches) and what one file yields (`FileResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragdiag.codescan.model import (
    BudgetConstant,
    CitationCheck,
    LLMCallSite,
    PromptRule,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
)


@dataclass
class FileResult:
    """What one file yields (picklable, merged by the walker)."""

    search_calls: list[SearchCallSite] = field(default_factory=list)
    vector_queries: list[SearchCallSite] = field(default_factory=list)
    llm_calls: list[LLMCallSite] = field(default_factory=list)
    budget_constants: list[BudgetConstant] = field(default_factory=list)
    citation_checks: list[CitationCheck] = field(default_factory=list)
    prompt_rules: list[PromptRule] = field(default_factory=list)
    security_filters: list[SecurityFilterSite] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    acl_sites: list[Any] = field(default_factory=list)
    fail_open: list[Any] = field(default_factory=list)
    delegated: list[Any] = field(default_factory=list)
    thresholds: list[Any] = field(default_factory=list)
    budget_units: list[Any] = field(default_factory=list)
    agent_graphs: list[Any] = field(default_factory=list)
    frontend_defaults: list[Any] = field(default_factory=list)
    functions: list[Any] = field(default_factory=list)   # the call-graph nodes of the file (reach.FuncNode)
    arg_origins: list[Any] = field(default_factory=list)  # (callee, keyword, file, line, function, text)
    gaps: list[Any] = field(default_factory=list)        # what the file holds that could not be read (model.Gap)
    llm_wrappers: list[Any] = field(default_factory=list)  # (function name, qual, file, line): the app's model client
    scanned: bool = True


class Project:
    """The scanned tree: relative file list, safe reading, per-process caches of parsed modules."""

    def __init__(self, root: Any, files: list[str], max_file_bytes: int, check_syntax: bool = False) -> None:
        from pathlib import Path

        self.root = Path(root)
        self.check_syntax = check_syntax
        self.files = files
        self.fileset = frozenset(files)
        self.max_file_bytes = max_file_bytes
        self.cache: dict[Any, Any] = {}
        self._py_modules: dict[str, str] | None = None
        self._py_suffix: dict[str, list[str]] | None = None

    def read_text(self, rel: str) -> str | None:
        """The file's text, or None when it is missing, too large, binary or not UTF-8."""
        from ragdiag.codescan.tree import CodeUnreadable, read_code

        try:
            data = read_code(self.root / rel, self.max_file_bytes)
        except CodeUnreadable:
            return None
        if b"\x00" in data[:8192]:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def py_modules(self) -> dict[str, str]:
        """Dotted module name -> relative path, for every `.py` file."""
        if self._py_modules is None:
            self._py_modules = {module_name(f): f for f in self.files if f.endswith(".py")}
        return self._py_modules

    def find_py_module(self, dotted: str) -> str | None:
        """The file of module `dotted`: exact, else the unique module whose name ends with it."""
        if not dotted:
            return None
        mods = self.py_modules
        if dotted in mods:
            return mods[dotted]
        if self._py_suffix is None:
            suffix: dict[str, list[str]] = {}
            for name, rel in mods.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    suffix.setdefault(".".join(parts[i:]), []).append(rel)
            self._py_suffix = suffix
        hits = self._py_suffix.get(dotted, [])
        return hits[0] if len(hits) == 1 else None


def module_name(rel: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`; `web/src/a.ts` -> `web.src.a`."""
    stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
    parts = [p for p in stem.split("/") if p]
    strip = ("__init__",) if rel.endswith(".py") else ("index",)
    if parts and parts[-1] in strip and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)

