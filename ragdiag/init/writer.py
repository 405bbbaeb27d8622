"""Write a `Draft` as an audit folder and read it back with the loaders the audit uses.

Files: ``audit.toml`` (the config `ragdiag audit` reads), ``profiles.toml`` (the policy),
``schema.json`` (an Azure index definition, REST shape), ``records.jsonl`` (local routes),
``goldset.yaml`` (questions with judged sources) or ``goldset.template.yaml`` (cases to fill
in), and ``README.md`` (what was read, what was inferred, what to edit). A non-empty folder
is refused unless `force`. After writing, every file is loaded again through ragdiag's own
loaders, so a folder init wrote is one the audit can open.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import yaml

from ragdiag.errors import ConfigError
from ragdiag.init.draft import Draft

ROUTE_OPTIONS = {"beir": "--beir", "trec": "--trec-docs/--trec-topics/--qrels", "documents": "--documents",
                 "records": "--records", "azure": "--azure-endpoint/--azure-index"}


def check_outdir(outdir: Path, force: bool) -> None:
    """Refuse a non-empty folder (or a file) unless `force`: init never mixes its files into others."""
    if outdir.exists() and not outdir.is_dir():
        raise ConfigError(f"{outdir} exists and is not a folder; name a new or empty folder for the audit")
    if outdir.is_dir() and any(outdir.iterdir()) and not force:
        raise ConfigError(f"{outdir} is not empty; name a new or empty folder, or pass --force to write "
                          "the audit files into it (files of the same name are replaced)")


def _q(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def local_index_name(schema_name: str, outdir: Path) -> str:
    """The local index's cache name: the schema name plus the folder, so two folders never share
    (and keep rebuilding) one cached index."""
    digest = hashlib.sha256(str(outdir.resolve()).encode("utf-8")).hexdigest()[:8]
    return f"{schema_name}-{digest}"


def audit_toml(draft: Draft, outdir: Path) -> str:
    goldset = "goldset.yaml" if draft.cases else None
    lines = [f"# Written by `ragdiag init {ROUTE_OPTIONS[draft.route]}` from {draft.source}.",
             "# README.md says what was read, what was inferred and what to edit.",
             "[audit]", f"name = {_q('Retrieval audit: ' + draft.schema.name)}", "client = \"\"",
             f"system = {_q(draft.source)}", f"language = {_q(draft.language)}   # {draft.language_note}", "",
             "[target]"]
    if draft.target is not None:
        lines.append("kind = \"azure\"")
        lines += [f"{k} = {_q(v)}" for k, v in draft.target.items()]
        lines.append("# the key is read from that environment variable; never write it into a file")
    else:
        lines += ["kind = \"local\"", "records = \"records.jsonl\"", "schema = \"schema.json\"",
                  "vector_sources = { " + ", ".join(f"{k} = [{', '.join(_q(s) for s in v)}]"
                                                    for k, v in draft.vector_sources.items()) + " }",
                  f"name = {_q(local_index_name(draft.schema.name, outdir))}   # the cached index's name"]
    if draft.field_roles and draft.target is None:
        lines.append("fields = { " + ", ".join(f"{r} = {_q(f)}" for r, f in draft.field_roles.items())
                     + " }   # chunk roles the name detection would miss")
    if draft.roles:
        lines.append("# field roles inferred: " + ", ".join(f"{r} = {f}" for r, f in draft.roles.items()))
    lines += ["", "[inputs]", "profiles = \"profiles.toml\""]
    if goldset:
        lines.append(f"goldset = {_q(goldset)}")
    else:
        lines.append("# goldset = \"goldset.yaml\"   # fill in goldset.template.yaml, rename it, then uncomment")
    lines += ["", "[identities]"]
    if draft.identities:
        lines += [f"{_q(u)} = [{', '.join(_q(g) for g in gs)}]" for u, gs in draft.identities.items()]
    else:
        lines.append("# \"anna\" = [\"all-staff\", \"sales\"]   # who asks the goldset's as_user questions")
    return "\n".join(lines) + "\n"


def readme(draft: Draft, outdir: Path) -> str:
    s = draft.schema
    out = [f"# Audit folder: {s.name}", "",
           f"Drafted by `ragdiag init {ROUTE_OPTIONS[draft.route]}` from {draft.source}.", "",
           "Run it:", "", "```bash", f"ragdiag audit {outdir / 'audit.toml'}", "```", "",
           "## What was read", ""]
    out += [f"- {k}: {v:,}" for k, v in draft.counts.items()]
    out += [f"- language: {draft.language_note}", "", "## Files", "",
            "| file | what it is | edit when |", "|---|---|---|",
            "| audit.toml | the audit config: target, inputs, identities | your target, identities or "
            "budgets differ |",
            "| profiles.toml | the retrieval policy: profiles and routes | your system searches differently "
            "(fields, k, filters, semantic ranker) |",
            "| schema.json | the index definition (Azure REST shape) | fields, analyzers or vector profiles "
            "differ from your index |"]
    if draft.records is not None:
        out.append("| records.jsonl | the documents as index records, one JSON object per line | never by "
                   "hand: re-run init on changed sources |")
    if draft.cases:
        out.append("| goldset.yaml | questions with their judged sources (grades) | you have more or better "
                   "judgments |")
    if draft.template:
        out.append("| goldset.template.yaml | goldset cases to fill in: questions, intents, identities, "
                   "expected sources | before the first audit: without a goldset the goldset check fails |")
    fields = [f"`{f.name}` ({f.type}{', key' if f.key else ''}{', searchable' if f.searchable else ''}"
              f"{', analyzer ' + f.analyzer if f.analyzer else ''}"
              f"{', ' + str(f.dimensions) + ' dimensions' if f.dimensions else ''})" for f in s.fields]
    out += ["", "## Index fields", "", *[f"- {x}" for x in fields]]
    if draft.vector_sources:
        out += ["", "Vector fields are embedded locally with the bundled all-MiniLM-L6-v2 (English) from: "
                + "; ".join(f"`{k}` <- {', '.join(v)}" for k, v in draft.vector_sources.items()) + "."]
    if draft.roles:
        out += ["", "## Field roles inferred", "", "| role | field |", "|---|---|",
                *[f"| {r} | `{f}` |" for r, f in draft.roles.items()],
                "", "Check them: the chunk analysis reads documents, pages and positions from these fields."]
    out += ["", "## What to edit", "",
            "- `profiles.toml`: make each profile search as your system does (search fields, `top`, vector `k`, "
            "filters, the semantic configuration) and map your question intents in `[routes]`"
            + ("; switch `[routes] default` to `keyword` or `vector` to measure one leg alone"
               if draft.records is not None else ""),
            "- `audit.toml`: `[identities]` (the users the goldset's `as_user` names, with their groups), "
            "`[budgets] context_tokens` (the context your system sends the model), `[inputs] client_code` "
            "(your application's code, for the code checks), `[inputs] query_log`",
            "- the goldset: " + ("add refusal cases (`expect: refused`) and cases asked as restricted users"
                                 if draft.cases else "fill in goldset.template.yaml (see its header)")]
    if draft.notes:
        out += ["", "## Read before the first audit", "", *[f"- {n}" for n in draft.notes]]
    return "\n".join(out) + "\n"


def _yaml(cases: list[dict], header: str) -> str:
    return header + yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=1000)


def write_folder(draft: Draft, outdir: str | Path, *, force: bool = False,
                 log: Callable[[str], None] | None = None) -> list[Path]:
    """Write the folder, verify it loads, and return the files written."""
    outdir = Path(outdir)
    check_outdir(outdir, force)
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = outdir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)

    put("schema.json", json.dumps(draft.schema.to_azure(), indent=2, ensure_ascii=False) + "\n")
    if draft.records is not None:
        with (outdir / "records.jsonl").open("w", encoding="utf-8") as fh:
            for i, rec in enumerate(draft.records):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                if log and i and i % 50_000 == 0:
                    log(f"  {i:,} records written")
        written.append(outdir / "records.jsonl")
    put("profiles.toml", draft.policy)
    if draft.cases:
        put("goldset.yaml", _yaml(draft.cases, f"# Goldset drafted by ragdiag init from {draft.source}.\n"))
    if draft.template:
        put("goldset.template.yaml", _yaml(draft.template, (
            "# Goldset template: replace each question and its expected sources with real ones (keys of\n"
            "# records in the index), set intent to a route of profiles.toml and as_user to an identity of\n"
            "# audit.toml (or remove it). Then rename to goldset.yaml and uncomment it in audit.toml.\n")))
    put("audit.toml", audit_toml(draft, outdir))
    put("README.md", readme(draft, outdir))
    verify_folder(outdir, draft)
    return written


def verify_folder(outdir: Path, draft: Draft) -> None:
    """Load every written file through the audit's own loaders; a problem here is a bug of init."""
    from ragdiag.inputs.config import load_config
    from ragdiag.inputs.goldset import load_goldset
    from ragdiag.inputs.records import load_records
    from ragdiag.model.schema import IndexSchema
    from ragdiag.policy import load_policy

    config = load_config(outdir / "audit.toml")
    schema = IndexSchema.load(outdir / "schema.json")
    policy = load_policy(outdir / "profiles.toml")
    if draft.records is not None:
        load_records(outdir / "records.jsonl", schema)
    if config.goldset is not None:
        load_goldset(config.goldset)
    if draft.template:
        load_goldset(outdir / "goldset.template.yaml")
    problems = [p for p in policy.validate_against(schema)
                if not (not schema.security_fields and re.search(r"security field '[^']+' is not in", p))]
    if problems:
        raise ConfigError("ragdiag init drafted a policy the index cannot serve (please report): "
                          + "; ".join(problems))
