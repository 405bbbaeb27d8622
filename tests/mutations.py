"""Mutants of the sample system's real input files, and the loaders that must refuse them cleanly.

Shared by `tests/test_input_mutations.py` (a small, seeded corpus in the unit tier) and
`benchmarks/bench_hardening.py` (a larger one). Each `Subject` is one loader with the real
file it reads; `mutants(subject, n, seed)` yields (operator, file bytes, path override)
triples: truncation, bit flips, NUL and control characters, deep nesting, huge numbers,
over-long lines, duplicated and dropped lines, values of the wrong type (parsed, changed
and written back), other encodings, and over-long paths. `outcome(subject, mutant)` runs
the loader on one mutant and classifies what happened:

- ``located``: a `RagdiagError` naming the file and a line (``path:LINE:``), or a filter
  error pointing at its position;
- ``clean``: a `RagdiagError` without a line (e.g. "file not found", a JSON path);
- ``accepted``: the loader returned (the mutant was still valid input);
- ``traceback``: any other exception -- the only outcome that is a bug.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragdiag.errors import RagdiagError

OUTCOMES = ("located", "clean", "accepted", "traceback")
OPERATORS = ("truncate", "bitflip", "nul", "control", "deep", "hugenum", "longline", "dupline",
             "dropline", "wrongtype", "encoding", "longpath")
WRONG_VALUES: tuple[Any, ...] = (None, True, False, 0, -5, 10**30, 1e308, math.nan, math.inf, "",
                                 "lots", "x" * 300, "\x00", [], {}, [1, "a"], {"a": 1}, [[[]]])


@dataclass(frozen=True)
class Subject:
    """One loader and the real input it reads (possibly cut to its first `lines` lines)."""

    name: str
    source: Path  # the real file
    suffix: str  # how the mutant is named (a loader may look at it)
    fmt: str  # toml | yaml | json | jsonl | text
    load: Callable[[Path], Any]  # called with the mutant's path
    lines: int | None = None  # keep only the first lines of a large file
    filename: str | None = None  # the name the mutant must have (checklist specs: the check id)

    def original(self) -> bytes:
        data = self.source.read_bytes()
        if self.lines is not None:
            data = b"".join(data.splitlines(keepends=True)[: self.lines])
        return data


def _sample_dir() -> Path:
    from ragdiag.sample.system import sample_dir

    return sample_dir()


def subjects(workdir: Path, *, legacy: bool = False, base: Path | None = None,
             specs: Path | None = None) -> list[Subject]:
    """Every loader with its real sample input. `workdir` receives files some loaders need
    beside the mutant (the audit config's relative inputs, TREC files made from the goldset).

    `legacy`: for code before ragdiag.inputs.entities/records existed (the benchmark's
    "before" column): entities through ragdiag.audit.entity_matcher, records through the
    parse loop of LocalTarget.from_jsonl. `base` and `specs`: the sample data and checklist
    folders to mutate (default: those of the ragdiag on sys.path).
    """
    from ragdiag.inputs.checklist import load_spec, packaged_checklist_dir
    from ragdiag.inputs.config import load_config
    from ragdiag.inputs.goldset import load_goldset, load_trec_qrels
    from ragdiag.inputs.querylog import load_query_log
    from ragdiag.model.schema import IndexSchema

    if legacy:
        from ragdiag.audit import entity_matcher as load_entities

        def load_records(p: Path, schema: Any) -> Any:
            from ragdiag.errors import InputDataError

            records = []
            for lineno, line in enumerate(p.read_bytes().decode("utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputDataError(f"invalid JSON: {exc.msg}", path=str(p), line=lineno) from exc
            key = schema.key_field.name
            for i, r in enumerate(records):
                if key not in r or r[key] in (None, ""):
                    raise InputDataError(f"record {i} has no key field '{key}'")
            return records
    else:
        from ragdiag.inputs.entities import load_entities
        from ragdiag.inputs.records import load_records
    from ragdiag.odata import parse, validate
    from ragdiag.policy import load_policy

    base = base or _sample_dir()
    workdir.mkdir(parents=True, exist_ok=True)
    # the audit config resolves its inputs relative to itself: mutants live beside copies
    for name in ("goldset.yaml", "query_log.jsonl", "entities.json"):
        if not (workdir / name).exists():
            shutil.copy(base / name, workdir / name)
    if not (workdir / "profiles").exists():
        shutil.copytree(base / "profiles", workdir / "profiles")
    if not (workdir / "client_app").exists():
        (workdir / "client_app").mkdir()
    schema = IndexSchema.load(base / "index" / "schema.json")
    cases = yaml.safe_load((base / "goldset.yaml").read_text(encoding="utf-8"))[:12]
    jsonl = workdir / "goldset-src.jsonl"
    jsonl.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    qrels = workdir / "goldset-src.qrels"
    qrels.write_text("".join(f"{c['id']} 0 {s['key']} {s.get('grade', 1)}\n" for c in cases
                             for s in c.get("expect_sources", [])), encoding="utf-8")
    topics = workdir / "topics.txt"
    topics.write_text("".join(f"<top>\n<num> Number: {c['id']}\n<title> {c['question']}\n</top>\n"
                              for c in cases), encoding="utf-8")
    filters = workdir / "filters.txt"
    if not filters.exists():
        seen: list[str] = []
        for line in (base / "query_log.jsonl").read_text(encoding="utf-8").splitlines()[:400]:
            f = json.loads(line).get("filter")
            if f and f not in seen:
                seen.append(f)
        filters.write_text("\n".join(seen[:20]) + "\n", encoding="utf-8")

    def config(p: Path) -> Any:
        return load_config(p)

    def qrels_with_topics(p: Path) -> Any:
        return load_trec_qrels(p, topics)

    def topics_of(p: Path) -> Any:
        return load_trec_qrels(qrels, p)

    def records(p: Path) -> Any:
        return load_records(p, schema)

    def odata_filters(p: Path) -> Any:
        from ragdiag.errors import InputDataError

        try:
            lines = p.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError, ValueError) as exc:  # the file, not the filters
            raise InputDataError(f"cannot read the filter list: {type(exc).__name__}") from None
        return [validate(parse(line), schema) for line in lines]

    specs = specs or packaged_checklist_dir()
    out = [
        Subject("audit config", base / "audit.toml", ".toml", "toml", config, filename="audit.toml"),
        Subject("profiles", base / "profiles" / "misconfigured.toml", ".toml", "toml", load_policy),
        Subject("profiles (tuned)", base / "profiles" / "tuned.toml", ".toml", "toml", load_policy),
        Subject("goldset YAML", base / "goldset.yaml", ".yaml", "yaml", load_goldset, lines=110),
        Subject("goldset JSONL", jsonl, ".jsonl", "jsonl", load_goldset),
        Subject("TREC qrels", qrels, ".qrels", "text", qrels_with_topics),
        Subject("TREC topics", topics, ".txt", "text", topics_of),
        Subject("query log", base / "query_log.jsonl", ".jsonl", "jsonl", load_query_log, lines=60),
        Subject("entities", base / "entities.json", ".json", "json", load_entities),
        Subject("index schema", base / "index" / "schema.json", ".json", "json", IndexSchema.load),
        Subject("records", base / "index" / "structured.jsonl", ".jsonl", "jsonl", records, lines=25),
        Subject("OData filters", filters, ".txt", "text", odata_filters),
    ]
    out += [Subject(f"checklist spec {p.stem}", p, ".toml", "toml", load_spec, filename=p.name)
            for p in sorted(specs.glob("*.toml"))[:3]]
    return out


# ---- mutation operators -------------------------------------------------------------------------
def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _insert_line(data: bytes, rng: random.Random, line: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines) + 1)
    return b"".join(lines[:i] + [line] + lines[i:])


def _deep(fmt: str, rng: random.Random) -> bytes:
    n = rng.choice((70, 500, 5000, 50000))
    if fmt == "toml":
        opener, closer = rng.choice((("[", "]"), ("{a=", "}")))
        return f"deep_{rng.randrange(99)} = {opener * n}{closer * n}\n".encode()
    if fmt == "yaml":
        return rng.choice((("- " * n + "x\n").encode(), ("[" * n + "]" * n + "\n").encode(),
                           ("- a: " + "{b: " * n + "1" + "}" * n + "\n").encode()))
    opener, closer = rng.choice((("[", "]"), ('{"a":', "}")))
    return (opener * n + "1" + closer * n + "\n").encode()


def _huge_number(data: bytes, rng: random.Random) -> bytes:
    digits = rng.choice((20, 400, 5000, 100000))
    runs = [m for m in re.finditer(rb"\d+", data)]
    big = ("9" * digits).encode()
    if runs and rng.random() < 0.7:
        m = rng.choice(runs)
        return data[:m.start()] + big + data[m.end():]
    return _insert_line(data, rng, b"n = " + big + b"\n")


def _wrong_type(data: bytes, fmt: str, rng: random.Random) -> bytes | None:
    """Parse, replace one value (or key's value) with a value of another type, write back."""
    try:
        text = data.decode("utf-8")
        if fmt == "toml":
            doc: Any = tomllib.loads(text)
        elif fmt == "yaml":
            doc = yaml.safe_load(text)
        elif fmt == "json":
            doc = json.loads(text)
        elif fmt == "jsonl":
            rows = [json.loads(x) for x in text.splitlines() if x.strip()]
            if not rows:
                return None
            i = rng.randrange(len(rows))
            rows[i] = _replace_somewhere(rows[i], rng)
            return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
        else:
            return None
    except Exception:
        return None
    doc = _replace_somewhere(doc, rng)
    try:
        if fmt == "toml":
            import tomli_w

            return tomli_w.dumps(_toml_safe(doc)).encode()
        if fmt == "yaml":
            return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).encode()
        return json.dumps(doc, ensure_ascii=False).encode()
    except Exception:
        return None


def _toml_safe(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _toml_safe(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_toml_safe(x) for x in v if x is not None]
    return v


def _replace_somewhere(doc: Any, rng: random.Random) -> Any:
    """`doc` with one value somewhere replaced by a value from `WRONG_VALUES`."""
    paths: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack and len(paths) < 5000:
        v, p = stack.pop()
        paths.append(p)
        if isinstance(v, dict):
            stack.extend((x, (*p, k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, (*p, i)) for i, x in enumerate(v))
    path = rng.choice(paths)
    new = rng.choice(WRONG_VALUES)
    if not path:
        return new
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = new
    return doc


def mutate(data: bytes, op: str, fmt: str, rng: random.Random) -> bytes | None:
    """One mutant of `data` by operator `op` (None when `op` does not apply)."""
    if op == "truncate":
        return data[: rng.randrange(max(1, len(data)))]
    if op == "bitflip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == "nul":
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\x00" * rng.randint(1, 3) + data[i:]
    if op == "control":
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes([rng.choice((1, 7, 8, 11, 12, 27, 31, 127))]) + data[i:]
    if op == "deep":
        return _insert_line(data, rng, _deep(fmt, rng))
    if op == "hugenum":
        return _huge_number(data, rng)
    if op == "longline":
        return _insert_line(data, rng, b"a" * rng.choice((10_000, 200_000)) + b"\n")
    if op == "dupline":
        lines = _lines(data)
        i = rng.randrange(len(lines))
        return b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])
    if op == "dropline":
        lines = _lines(data)
        del lines[rng.randrange(len(lines))]
        return b"".join(lines)
    if op == "wrongtype":
        return _wrong_type(data, fmt, rng)
    if op == "encoding":
        enc = rng.choice(("utf-16", "latin-1", "utf-32"))
        try:
            return data.decode("utf-8").encode(enc, errors="replace")
        except UnicodeDecodeError:
            return None
    if op == "longpath":
        return data
    raise ValueError(op)


@dataclass(frozen=True)
class Mutant:
    subject: str
    op: str
    data: bytes
    long_path: str | None = None  # the loader is called with this (over-long) path instead


def mutants(subject: Subject, n: int, seed: int = 0) -> Iterator[Mutant]:
    """`n` mutants of the subject's real file, the operators in turn (seeded, reproducible)."""
    rng = random.Random(f"{seed}:{subject.name}")
    data = subject.original()
    made = 0
    i = 0
    while made < n and i < n * 4:
        op = OPERATORS[i % len(OPERATORS)]
        i += 1
        out = mutate(data, op, subject.fmt, rng)
        if out is None:
            continue
        long_path = None
        if op == "longpath":
            long_path = rng.choice(("a" * 300 + subject.suffix, "/".join(["d" * 200] * 30) + subject.suffix,
                                    "bad\x00name" + subject.suffix, "line\nbreak" + subject.suffix))
        made += 1
        yield Mutant(subject.name, op, out, long_path)


_LOCATED = re.compile(r":\d+: ")


def outcome(subject: Subject, mutant: Mutant, workdir: Path) -> tuple[str, str]:
    """(outcome, message) of loading one mutant; see the module docstring."""
    if mutant.long_path is not None:
        path = workdir / mutant.long_path
    else:
        path = workdir / (subject.filename or f"mutant{subject.suffix}")
        path.write_bytes(mutant.data)
    try:
        subject.load(path)
    except RagdiagError as exc:
        msg = str(exc)
        located = (bool(_LOCATED.search(msg.split("\n", 1)[0])) or getattr(exc, "line", None)
                   or getattr(exc, "position", None) is not None)
        return ("located" if located else "clean"), msg
    except Exception as exc:  # the bug this corpus hunts
        import traceback

        return "traceback", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
    return "accepted", ""
