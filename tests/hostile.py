"""A corpus of hostile inputs for every command line entry point, and how to judge each outcome.

Shared by `tests/test_hostile_inputs.py` (a bounded selection in the unit tier) and
`benchmarks/bench_hardening.py --hostile` (all of it, for this checkout and another). Each
`Case` is one command line (``ragdiag <argv>``) whose arguments name hostile files written
by `build(work)`: other encodings, deep nesting, values of the wrong type, empty and
target-less configs, special files (a device, a FIFO, a folder, dangling and escaping
symlinks, a sparse file beyond the size limit), unreadable inputs and code trees (run as an
unprivileged user), unwritable outputs, SQL templates that write, an index definition of
10,000 fields. `judge(case, code, stdout, stderr, timed_out)` says what went wrong, if
anything: an internal error, a hang, an exit code other than the expected one, an input
error that names no file (or no line where the file has lines), a secret of a file outside
the code tree quoted in the output.

Exit codes the cases expect: 2 = your input (a located error), 0/1 = handled input (the
audit ran; 1 when a check failed), 4 = an internal error (never expected).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATEGORIES = ("encoding", "depth", "types", "config", "special", "size", "permissions", "outputs",
              "code tree", "sql", "schema", "names")
MARKER = "RAGDIAG-OUTSIDE-SECRET-7f3a"  # the content of a file outside a scanned code tree
INTERNAL = "internal error"


@dataclass
class Case:
    """One command line and what it must end in."""

    category: str
    entry: str  # the command and option the hostile file reaches, e.g. "search --request"
    name: str
    argv: list[str]
    expect: tuple[int, ...] = (2,)
    culprit: str | None = None  # a file or folder name the error must name
    line: bool = False  # the error must give the culprit's line (path:LINE)
    unprivileged: bool = False  # run as an unprivileged user (permission cases; skipped if impossible)
    check: Callable[[str, str], str | None] | None = None  # (stdout, stderr) -> a problem or None
    timeout: float = 90.0

    @property
    def id(self) -> str:
        return f"{self.category}/{self.entry}/{self.name}"


@dataclass
class Corpus:
    work: Path
    cases: list[Case] = field(default_factory=list)

    def add(self, *args: Any, **kwargs: Any) -> Case:
        case = Case(*args, **kwargs)
        self.cases.append(case)
        return case


def judge(case: Case, code: int | None, stdout: str, stderr: str, timed_out: bool) -> list[str]:
    """What is wrong with one outcome (empty: the case passed)."""
    problems: list[str] = []
    if timed_out:
        return [f"hung (no exit within {case.timeout:g} s)"]
    if INTERNAL in stderr or "Traceback (most recent call last)" in stderr:
        problems.append("internal error: " + _last_line(stderr))
    if code not in case.expect:
        problems.append(f"exit {code}, expected {'/'.join(map(str, case.expect))}: {_last_line(stderr)}")
    elif code == 2:
        if case.culprit and case.culprit not in stderr:
            problems.append(f"the error does not name {case.culprit}: {_last_line(stderr)}")
        elif case.line and case.culprit and not _names_line(stderr, case.culprit):
            problems.append(f"the error gives no line of {case.culprit}: {_last_line(stderr)}")
    if MARKER in stdout or MARKER in stderr:
        problems.append("content of a file outside the input was printed")
    if case.check is not None and not problems:
        extra = case.check(stdout, stderr)
        if extra:
            problems.append(extra)
    return problems


def _names_line(stderr: str, culprit: str) -> bool:
    import re

    return re.search(re.escape(culprit) + r"[^\s:]*:\d+", stderr) is not None


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "(nothing on stderr)")[:240]


# ---- building the corpus ----------------------------------------------------------------------
def _sample() -> Path:
    from ragdiag.sample.system import sample_dir

    return sample_dir()


def build(work: Path, *, unprivileged: bool = True) -> Corpus:
    """Write every hostile file under `work` (made world-traversable, for the unprivileged
    cases) and return the cases. Deterministic: the same files on every call."""
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    c = Corpus(work)
    s = _sample()
    rng = random.Random(23)
    good = _good_files(work, s)
    _file_slots(c, work, good, rng)
    _config_cases(c, work, good, s)
    _output_cases(c, work, good)
    _code_tree_cases(c, work, s)
    _sql_cases(c, work, s)
    _schema_cases(c, work, s)
    if unprivileged:
        _permission_cases(c, work, good)
    for case in c.cases:
        assert case.category in CATEGORIES, case.category
    return c


def _w(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    return path


def _good_files(work: Path, s: Path) -> dict[str, Path]:
    """Valid inputs beside which one hostile file is placed."""
    g = work / "good"
    out: dict[str, Path] = {}
    out["request"] = _w(g / "request.json", json.dumps({"search": "payment terms", "top": 3}))
    chunks = [{"id": f"c{i}", "content": f"Chunk number {i} ends with a full sentence.", "sourcefile": "d.md"}
              for i in range(4)]
    out["chunks"] = _w(g / "chunks.jsonl", "\n".join(json.dumps(r) for r in chunks) + "\n")
    out["source"] = _w(g / "sources.jsonl", json.dumps({"id": "d.md", "text": " ".join(
        r["content"] for r in chunks)}) + "\n")
    findings = {"format_version": 1, "findings": [], "meta": {}}
    try:  # the findings format of the ragdiag that builds the corpus
        from ragdiag.model.findings import AuditResult

        findings = json.loads(AuditResult(findings=(), meta={}).to_json())
    except Exception:  # noqa: BLE001 - an older checkout: the literal above
        pass
    out["findings"] = _w(g / "findings.json", json.dumps(findings))
    out["draft"] = _w(g / "draft.yaml", (s / "goldset.yaml").read_text(encoding="utf-8").split("\n- id: fact-003")[0]
                      + "\n")
    out["gold_into"] = g / "merged.yaml"
    out["code"] = g / "code"
    _w(out["code"] / "app.py", "from azure.search.documents import SearchClient\n\n"
                               "def ask(q):\n    return SearchClient('e', 'i', None).search(q, top=5)\n")
    out["codeonly"] = _w(g / "codeonly.toml", f'[inputs]\nclient_code = "{out["code"]}"\n')
    return out


def _encodings(text: str) -> dict[str, bytes]:
    return {"utf-16": text.encode("utf-16"), "utf-16-be": text.encode("utf-16-be"),
            "utf-32": text.encode("utf-32"),
            "latin-1": text.replace("e", "é", 1).encode("latin-1", "replace")}


def _file_slots(c: Corpus, work: Path, good: dict[str, Path], rng: random.Random) -> None:
    """The same hostile payloads through every entry point that reads a file."""
    s = _sample()
    d = work / "slots"
    sample_cfg = s / "audit.toml"

    def config_with(key: str, value: Path, table: str = "inputs") -> list[str]:
        """`audit CONFIG --plan` with the sample config's `table.key` replaced by `value`."""
        text = sample_cfg.read_text(encoding="utf-8")
        cfg = d / "configs" / f"{key}-{value.name}.toml"
        lines = []
        for ln in text.splitlines():
            k = ln.split("=")[0].strip()
            if "=" in ln and k in ("profiles", "compare_profiles", "goldset", "query_log", "entities",
                                   "client_code") and k != key:
                ln = f'{k} = "{s / ln.split("=", 1)[1].strip().strip(chr(34))}"'
            if k == key:
                continue
            lines.append(ln)
            if ln.strip() == f"[{table}]":
                lines.append(f'{key} = "{value}"')
        _w(cfg, "\n".join(lines) + "\n")
        return ["audit", str(cfg), "--plan"]

    # (entry, suffix, good text, argv builder(path), has lines)
    gold_text = good["draft"].read_text(encoding="utf-8")
    slots: list[tuple[str, str, str, Callable[[Path], list[str]], bool]] = [
        ("search --request", ".json", good["request"].read_text(), lambda p: ["search", "--request", str(p)], True),
        ("chunks (jsonl)", ".jsonl", good["chunks"].read_text(), lambda p: ["chunks", str(p)], True),
        ("chunks (json)", ".json", json.dumps([json.loads(x) for x in good["chunks"].read_text().splitlines()]),
         lambda p: ["chunks", str(p)], True),
        ("chunks (csv)", ".csv", "id,content,sourcefile\nc0,A sentence.,d.md\nc1,Another one.,d.md\n",
         lambda p: ["chunks", str(p)], True),
        ("chunks --source", ".jsonl", good["source"].read_text(),
         lambda p: ["chunks", str(good["chunks"]), "--source", str(p)], True),
        ("diff (old)", ".json", good["findings"].read_text(), lambda p: ["diff", str(p), str(good["findings"])], True),
        ("diff (new)", ".json", good["findings"].read_text(), lambda p: ["diff", str(good["findings"]), str(p)], True),
        ("goldset draft --review", ".yaml", gold_text, lambda p: ["goldset", "draft", "--review", str(p)], True),
        ("goldset merge", ".yaml", gold_text,
         lambda p: ["goldset", "merge", str(p), "--into", str(d / "into" / f"{p.stem}.yaml")], True),
        ("audit config", ".toml", sample_cfg.read_text(encoding="utf-8").replace(
            'profiles = "', f'profiles = "{s}/').replace('goldset = "', f'goldset = "{s}/').replace(
            'query_log = "', f'query_log = "{s}/').replace('entities = "', f'entities = "{s}/').replace(
            'client_code = "', f'client_code = "{s}/'), lambda p: ["audit", str(p), "--plan"], True),
        ("audit [inputs] profiles", ".toml", (s / "profiles" / "misconfigured.toml").read_text(encoding="utf-8"),
         lambda p: config_with("profiles", p), True),
        ("audit [inputs] goldset", ".yaml", gold_text, lambda p: config_with("goldset", p), True),
        ("audit [inputs] query_log", ".jsonl",
         "\n".join((s / "query_log.jsonl").read_text(encoding="utf-8").splitlines()[:20]) + "\n",
         lambda p: config_with("query_log", p), True),
        ("audit [inputs] entities", ".json", (s / "entities.json").read_text(encoding="utf-8"),
         lambda p: config_with("entities", p), True),
        ("audit [inputs] answers", ".jsonl",
         "\n".join((s / "pgvector" / "answers.jsonl").read_text(encoding="utf-8").splitlines()[:10]) + "\n",
         lambda p: config_with("answers", p), True),
        ("init --records", ".jsonl",
         "\n".join((s / "index" / "structured.jsonl").read_text(encoding="utf-8").splitlines()[:5]) + "\n",
         lambda p: ["init", str(d / "init-out" / p.stem), "--records", str(p), "--schema",
                    str(s / "index" / "schema.json"), "--quiet"], True),
        ("init --schema", ".json", (s / "index" / "schema.json").read_text(encoding="utf-8"),
         lambda p: ["init", str(d / "init-out" / ("s-" + p.stem)), "--records", str(good["records5"]),
                    "--schema", str(p), "--quiet"], True),
    ]
    good["records5"] = _w(d / "records5.jsonl", "\n".join(
        (s / "index" / "structured.jsonl").read_text(encoding="utf-8").splitlines()[:5]) + "\n")
    for entry, suffix, text, argv, lined in slots:
        slug = "".join(ch if ch.isalnum() else "-" for ch in entry).strip("-")
        base = d / slug
        for enc, blob in _encodings(text).items():
            p = _w(base / f"enc-{enc}{suffix}", blob)
            c.add("encoding", entry, enc, argv(p), culprit=p.name, line=lined)
        blob = bytes(rng.randrange(256) for _ in range(600))
        p = _w(base / f"binary{suffix}", blob)
        c.add("encoding", entry, "binary", argv(p), culprit=p.name)
        deep = {".json": "[" * 100_000, ".jsonl": '{"a":' * 50_000 + "1" + "}" * 50_000 + "\n",
                ".yaml": "[" * 100_000, ".toml": "a = " + "[" * 100_000, ".csv": "x\n" + "[" * 100_000 + "\n"}[suffix]
        p = _w(base / f"deep{suffix}", deep)
        c.add("depth", entry, "100,000 levels", argv(p), culprit=p.name,
              expect=(0, 2) if suffix == ".csv" else (2,))
        p = _w(base / f"empty{suffix}", b"")
        c.add("special", entry, "empty file", argv(p), expect=(0, 1, 2), culprit=p.name)
        p = base / f"devzero{suffix}"
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.is_symlink():
            p.symlink_to("/dev/zero")
        c.add("special", entry, "/dev/zero (symlink)", argv(p), culprit=p.name, timeout=60)
        p = base / f"fifo{suffix}"
        if not p.exists():
            os.mkfifo(p)
        c.add("special", entry, "FIFO", argv(p), culprit=p.name, timeout=30)
        p = base / f"folder{suffix}"
        p.mkdir(exist_ok=True)
        c.add("special", entry, "a folder", argv(p), culprit=p.name)
        p = base / f"dangling{suffix}"
        if not p.is_symlink():
            p.symlink_to(base / "nowhere" / "x")
        c.add("special", entry, "dangling symlink", argv(p), culprit=p.name)
        p = base / f"sparse{suffix}"
        with open(p, "wb") as fh:
            fh.truncate(20 << 30)  # 20 GiB, sparse: beyond every size limit
        c.add("size", entry, "20 GiB sparse file", argv(p), culprit=p.name, timeout=60)
    # wrong types, per entry point
    req = d / "types" / "request"
    for name, body in [("k is a string", {"search": "x", "vectorQueries": [
                           {"kind": "text", "text": "a", "fields": "content_vector", "k": "x"}]}),
                       ("top is a string", {"search": "x", "top": "5"}),
                       ("search is a number", {"search": 5}),
                       ("a list", [1, 2]),
                       ("filter is a number", {"search": "x", "filter": 7}),
                       ("vectorQueries is an object", {"search": "x", "vectorQueries": {}}),
                       ("top is 1e400", {"search": "x", "top": 1e400}),
                       ("select is a number", {"search": "x", "select": 3})]:
        p = _w(req / f"{name.replace(' ', '-')}.json", json.dumps(body))
        c.add("types", "search --request", name, ["search", "--request", str(p)], culprit=p.name)
    dd = d / "types" / "diff"
    for name, body in [("findings is a number", {"format_version": 1, "findings": 5}),
                       ("check_id is a number", {"format_version": 1, "findings": [{"check_id": 5}]}),
                       ("a list", []), ("schema_version is a string", {"schema_version": "x", "findings": []}),
                       ("a finding is a string", {"format_version": 1, "findings": ["x"]})]:
        p = _w(dd / f"{name.replace(' ', '-')}.json", json.dumps(body))
        c.add("types", "diff", name, ["diff", str(p), str(good["findings"])], culprit=p.name)
    ck = d / "types" / "chunks"
    for name, body, suffix in [
            ("a number per line", "5\n6\n", ".jsonl"),
            ("content is an object", json.dumps({"id": "a", "content": {"x": 1}}) + "\n", ".jsonl"),
            ("content is a number", json.dumps({"id": [1], "content": 5}) + "\n", ".jsonl"),
            ("a document of numbers", json.dumps({"doc": [5, 6]}), ".json"),
            ("a number", "5", ".json"),
            ("NUL in CSV", "id,content\na,x\x00y\n", ".csv"),
            ("a 200,000-character CSV field", "id,content\na," + "x" * 200_000 + "\n", ".csv"),
            ("an unclosed CSV quote", 'id,content\na,"never closed\n', ".csv")]:
        p = _w(ck / f"{name.replace(' ', '-').replace(',', '')}{suffix}", body)
        c.add("types", "chunks", name, ["chunks", str(p)], culprit=p.name, expect=(0, 1, 2))
    gd = d / "types" / "draft"
    for name, body in [("a number", "5\n"), ("id is a list", "- id: [1]\n  question: q\n"),
                       ("a case is a string", "- just text\n")]:
        p = _w(gd / f"{name.replace(' ', '-')}.yaml", body)
        c.add("types", "goldset draft --review", name, ["goldset", "draft", "--review", str(p)], culprit=p.name)
        c.add("types", "goldset merge", name, ["goldset", "merge", str(p), "--into", str(gd / "into.yaml")],
              culprit=p.name)
    # folders of hostile files: checks list --checklist, chunks --source DIR, init --documents
    cl = d / "checklist-fifo"
    cl.mkdir(parents=True, exist_ok=True)
    for spec in (s.parent.parent / "checks" / "specs").glob("*.toml"):
        shutil.copy(spec, cl / spec.name)
    fifo = cl / "zz_fifo.toml"
    if not fifo.exists():
        os.mkfifo(fifo)
    c.add("special", "checks list --checklist", "a FIFO among the specs", ["checks", "list", "--checklist", str(cl)],
          culprit="zz_fifo.toml", timeout=30)
    cl16 = d / "checklist-utf16"
    cl16.mkdir(parents=True, exist_ok=True)
    spec = next(iter(sorted((s.parent.parent / "checks" / "specs").glob("*.toml"))))
    _w(cl16 / spec.name, spec.read_text(encoding="utf-8").encode("utf-16"))
    c.add("encoding", "checks list --checklist", "a UTF-16 spec", ["checks", "list", "--checklist", str(cl16)],
          culprit=spec.name)
    src = d / "source-dir"
    _w(src / "d.md", good["source"].read_text())
    if not (src / "fifo.md").exists():
        os.mkfifo(src / "fifo.md")
    if not (src / "zero.txt").is_symlink():
        (src / "zero.txt").symlink_to("/dev/zero")
    c.add("special", "chunks --source DIR", "a FIFO and /dev/zero in the folder",
          ["chunks", str(good["chunks"]), "--source", str(src)], expect=(0, 1, 2), timeout=30)
    docs = d / "documents"
    _w(docs / "a.md", "# Title\n\nA first paragraph of text. It has two sentences.\n")
    if not (docs / "fifo.md").exists():
        os.mkfifo(docs / "fifo.md")
    _w(docs / "b.txt", "Grüße".encode("latin-1"))
    if not (docs / "zero.md").is_symlink():
        (docs / "zero.md").symlink_to("/dev/zero")
    c.add("special", "init --documents", "a FIFO, /dev/zero and latin-1 among the documents",
          ["init", str(d / "init-docs-out"), "--documents", str(docs), "--quiet"], expect=(0, 2), timeout=60)


def _config_cases(c: Corpus, work: Path, good: dict[str, Path], s: Path) -> None:
    d = work / "configs"
    for name, text, expect in [
            ("empty config", "", (0, 2)),
            ("only [audit]", '[audit]\nname = "x"\n', (0, 2)),
            ("target-less with a goldset", f'[inputs]\ngoldset = "{s / "goldset.yaml"}"\n', (0, 2)),
            ("[target] without kind", "[target]\n", (2,)),
            ("[target] kind is a number", "[target]\nkind = 5\n", (2,)),
            ("a local target without records", '[target]\nkind = "local"\n', (2,)),
            ("[output] dir is a file", f'[output]\ndir = "{good["request"]}"\n', (2,)),
            ("[inputs] client_code is a file", f'[inputs]\nclient_code = "{good["request"]}"\n', (0, 1, 2)),
            ("[inputs] checklist is a file", f'[inputs]\nchecklist = "{good["request"]}"\n', (2,)),
            ("[runner] budget = 0", '[runner]\nbudget = 0\n', (2,))]:
        p = _w(d / f"{name.replace(' ', '-').replace('[', '').replace(']', '')}.toml", text)
        # the goldset's users are not in the (empty) [identities]: the errors point into the goldset
        culprit = "goldset.yaml" if "goldset" in name else p.name
        c.add("config", "audit --plan", name, ["audit", str(p), "--plan"], expect=expect, culprit=culprit)
        if expect != (2,):
            c.add("config", "audit", name, ["audit", str(p), "--quiet", "--fail-on", "never"], expect=expect,
                  culprit=culprit)
    for name, text in [("[target] name with ../", '[target]\nkind = "local"\nrecords = "r.jsonl"\n'
                                                   'schema = "s.json"\nname = "../../etc"\n'),
                       ("[target] name absolute", '[target]\nkind = "local"\nrecords = "r.jsonl"\n'
                                                  'schema = "s.json"\nname = "/tmp/x"\n')]:
        p = _w(d / f"{name.split()[-1].replace('/', 'slash').replace('.', 'dot')}.toml", text)
        _w(d / "r.jsonl", good["records5"].read_text())
        shutil.copy(s / "index" / "schema.json", d / "s.json")
        c.add("names", "audit --plan", name, ["audit", str(p), "--plan"], culprit=p.name, line=True)


def _output_cases(c: Corpus, work: Path, good: dict[str, Path]) -> None:
    d = work / "outputs"
    afile = _w(d / "a-file", "x")
    folder = d / "a-folder"
    folder.mkdir(parents=True, exist_ok=True)
    cfg = str(good["codeonly"])
    for opt in ("--json", "--junit", "--sarif", "--summary"):
        c.add("outputs", f"audit {opt}", "parent is a file",
              ["audit", cfg, opt, str(afile / "out.x"), "--fail-on", "never"], culprit="a-file",
              check=_no_audit_ran)
        c.add("outputs", f"audit {opt}", "a folder", ["audit", cfg, opt, str(folder), "--fail-on", "never"],
              culprit="a-folder", check=_no_audit_ran)
    c.add("outputs", "audit --json", "/dev/full", ["audit", cfg, "--json", "/dev/full", "--fail-on", "never"],
          expect=(2,), culprit="/dev/full")
    c.add("outputs", "chunks --json", "parent is a file",
          ["chunks", str(good["chunks"]), "--json", str(afile / "v.json")], culprit="a-file")
    c.add("outputs", "diff --summary", "parent is a file",
          ["diff", str(good["findings"]), str(good["findings"]), "--summary", str(afile / "s.md")], culprit="a-file")
    c.add("outputs", "init OUTDIR", "a file", ["init", str(afile), "--records", str(good["records5"]), "--schema",
                                               str(_sample() / "index" / "schema.json"), "--quiet"],
          culprit="a-file")
    c.add("outputs", "goldset merge --into", "a folder", ["goldset", "merge", str(good["draft"]), "--into",
                                                          str(folder)], culprit="a-folder")


def _no_audit_ran(stdout: str, stderr: str) -> str | None:
    return "the audit ran before the output was refused" if "findings" in stdout.lower() and "0 skipped" in stdout \
        else None


def _code_tree_cases(c: Corpus, work: Path, s: Path) -> None:
    d = work / "code"
    outside = _w(work / "outside" / "secret.py",
                 f"from azure.search.documents import SearchClient\nTOKEN = '{MARKER}'\n"
                 f"def leak(q):\n    return SearchClient('e', 'i', None).search(q, filter=TOKEN)\n")
    tree = d / "escaping"
    _w(tree / "app.py", "def f():\n    return 1\n")
    for name, target in (("link.py", outside), ("dir", outside.parent), ("zero.py", Path("/dev/zero")),
                         ("loop.py", tree / "loop.py")):
        if not (tree / name).is_symlink():
            (tree / name).symlink_to(target)
    if not (tree / "pipe.py").exists():
        os.mkfifo(tree / "pipe.py")

    def listed(stdout: str, stderr: str) -> str | None:
        try:
            data = json.loads(stdout)
        except ValueError:
            return "scan-code --json printed no JSON"
        skipped = json.dumps(data.get("skipped", data.get("files_skipped", "")))
        missing = [n for n in ("link.py", "zero.py", "pipe.py") if n not in skipped]
        return f"not listed as skipped: {', '.join(missing)}" if missing else None

    c.add("code tree", "scan-code", "symlinks out of the tree, /dev/zero, a FIFO, a loop",
          ["scan-code", str(tree), "--json"], expect=(0,), timeout=60, check=listed)
    cfg = _w(d / "escaping.toml", f'[inputs]\nclient_code = "{tree}"\n')
    c.add("code tree", "audit [inputs] client_code", "symlinks out of the tree, /dev/zero, a FIFO",
          ["audit", str(cfg), "--fail-on", "never", "--quiet"], expect=(0,), timeout=60)
    big = d / "big"
    _w(big / "huge.py", "x = '" + "a" * (30 << 20) + "'\n")
    _w(big / "app.py", (s / "client_app" / "muster_assistant" / "chat.py").read_text(encoding="utf-8"))
    c.add("code tree", "scan-code", "a 30 MB one-line file", ["scan-code", str(big)], expect=(0,), timeout=120)


def _sql_cases(c: Corpus, work: Path, s: Path) -> None:
    d = work / "sql"
    base = (s / "audit-pgvector.toml").read_text(encoding="utf-8")
    good_sql = (s / "pgvector" / "retrieval.sql").read_text(encoding="utf-8")
    bad: list[tuple[str, str | None]] = [
        ("a folder", None),
        ("a Cyrillic letter", good_sql.replace("c.content", "c.cоntent")),  # U+043E
        ("INSERT", "insert into chunks (id) select id from chunks where embedding <=> :embedding < 1"),
        ("UPDATE", "update chunks set content = 'x' where embedding <=> :embedding < 1"),
        ("DELETE", "delete from chunks where embedding <=> :embedding < 1"),
        ("DROP", "drop table chunks"),
        ("a CTE that deletes", "with gone as (delete from chunks returning id) select id from gone "
                               "order by :embedding::vector <=> :embedding::vector"),
        ("SELECT INTO", "select id into copy_of_chunks from chunks order by embedding <=> :embedding"),
        ("SELECT FOR UPDATE", "select id from chunks order by embedding <=> :embedding limit 5 for update"),
        ("two statements", "select 1 from chunks order by embedding <=> :embedding; delete from chunks"),
        ("COPY", "copy chunks to '/tmp/x'"),
        ("a 20 MB template", "select id from chunks order by embedding <=> :embedding -- " + "x" * (20 << 20)),
        ("UTF-16", None),
    ]
    for name, sql in bad:
        slug = name.replace(" ", "-")
        if sql is None and name == "a folder":
            p = d / f"{slug}.sql"
            p.mkdir(parents=True, exist_ok=True)
        elif name == "UTF-16":
            p = _w(d / f"{slug}.sql", good_sql.encode("utf-16"))
        else:
            p = _w(d / f"{slug}.sql", sql or "")
        cfg = _w(d / f"{slug}.toml", base.replace('embedded = "sample"', 'dsn_env = "RAGDIAG_HOSTILE_NO_DSN"')
                 .replace('sql = "pgvector/retrieval.sql"', f'sql = "{p}"').replace(
                     'profiles = "', f'profiles = "{s}/').replace('goldset = "', f'goldset = "{s}/').replace(
                     'answers = "', f'answers = "{s}/').replace('client_code = "', f'client_code = "{s}/'))
        # a Cyrillic letter is a valid identifier (PostgreSQL answers "no such column" per query):
        # what stops this case is the unset DSN variable, which the config names
        c.add("sql", "audit [target] sql", name, ["audit", str(cfg), "--plan"],
              culprit="RAGDIAG_HOSTILE_NO_DSN" if "Cyrillic" in name else p.name)


def _schema_cases(c: Corpus, work: Path, s: Path) -> None:
    d = work / "schema"
    schema = json.loads((s / "index" / "schema.json").read_text(encoding="utf-8"))
    wide = dict(schema, name="wide", fields=[{"name": "id", "type": "Edm.String", "key": True,
                                              "searchable": True, "filterable": True}]
                + [{"name": f"f{i}", "type": "Edm.String", "searchable": True} for i in range(10_000)])
    wide.pop("semantic", None)
    wide.pop("vectorSearch", None)
    wide.pop("scoringProfiles", None)
    p = _w(d / "wide.json", json.dumps(wide))
    _w(d / "wide.jsonl", "\n".join(json.dumps({"id": f"d{i}", "f1": "text"}) for i in range(3)) + "\n")
    cfg = _w(d / "wide.toml", f'[target]\nkind = "local"\nrecords = "wide.jsonl"\nschema = "{p.name}"\n')
    c.add("schema", "audit [target] schema", "10,000 searchable fields", ["audit", str(cfg), "--quiet",
                                                                          "--fail-on", "never"],
          expect=(0, 2), culprit=p.name, timeout=300)
    for name, index_name in (("name with ../", "../../../tmp/ragdiag-hostile-escape"),
                             ("absolute name", "/tmp/ragdiag-hostile-absolute")):
        sch = dict(schema, name=index_name)
        p = _w(d / f"{name.split()[0]}-{len(index_name)}.json", json.dumps(sch))
        cfg = _w(d / f"{p.stem}.toml", f'[target]\nkind = "local"\nrecords = "{s / "index" / "structured.jsonl"}"\n'
                                       f'schema = "{p.name}"\n'
                                       'vector_sources = {content_vector = ["content"], summary_vector = ["summary"], '
                                       'title_vector = ["title", "section_title"]}\n')

        def confined(stdout: str, stderr: str, escaped: str = index_name) -> str | None:
            outside = Path("/tmp/ragdiag-hostile-escape" if ".." in escaped else escaped)
            return f"an index was written to {outside}" if outside.exists() else None

        c.add("names", "audit [target] schema name", name, ["audit", str(cfg), "--plan"], expect=(0,),
              check=confined, timeout=900)


def _permission_cases(c: Corpus, work: Path, good: dict[str, Path]) -> None:
    """Run as an unprivileged user: unreadable inputs and code, unwritable outputs."""
    d = work / "perm"
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)
    secret = _w(d / "unreadable.json", good["request"].read_text())
    os.chmod(secret, 0)
    c.add("permissions", "search --request", "unreadable file", ["search", "--request", str(secret)],
          culprit=secret.name, unprivileged=True)
    ch = _w(d / "unreadable.jsonl", good["chunks"].read_text())
    os.chmod(ch, 0)
    c.add("permissions", "chunks", "unreadable file", ["chunks", str(ch)], culprit=ch.name, unprivileged=True)
    cfg = _w(d / "unreadable.toml", good["codeonly"].read_text())
    os.chmod(cfg, 0)
    c.add("permissions", "audit", "unreadable config", ["audit", str(cfg)], culprit=cfg.name, unprivileged=True)
    # code trees
    root = d / "code-root"
    _w(root / "app.py", good["code"].joinpath("app.py").read_text())
    os.chmod(root, 0)
    c.add("permissions", "scan-code", "unreadable root", ["scan-code", str(root)], culprit=root.name,
          unprivileged=True)
    rcfg = _w(d / "code-root.toml", f'[inputs]\nclient_code = "{root}"\n')
    c.add("permissions", "audit [inputs] client_code", "unreadable root",
          ["audit", str(rcfg), "--fail-on", "never", "--quiet"], culprit=root.name, unprivileged=True)
    sub = d / "code-sub"
    _w(sub / "app.py", good["code"].joinpath("app.py").read_text())
    _w(sub / "private" / "acl.py", "def trim(docs, user):\n    return [d for d in docs if user in d['groups']]\n")
    _w(sub / "secret.py", "x = 1\n")
    os.chmod(sub / "private", 0)
    os.chmod(sub / "secret.py", 0)

    def warned(stdout: str, stderr: str) -> str | None:
        try:
            data = json.loads(stdout)
        except ValueError:
            return "scan-code --json printed no JSON"
        text = json.dumps(data)
        missing = [n for n in ("private", "secret.py") if n not in text]
        return f"unreadable parts not reported: {', '.join(missing)}" if missing else None

    c.add("permissions", "scan-code", "unreadable sub-folder and file", ["scan-code", str(sub), "--json"],
          expect=(0,), unprivileged=True, check=warned)
    out = d / "readonly-out"
    out.mkdir(exist_ok=True)
    os.chmod(out, 0o555)
    for opt in ("--json", "--junit", "--sarif", "--summary"):
        c.add("permissions", f"audit {opt}", "read-only folder",
              ["audit", str(good["codeonly"]), opt, str(out / "x.out"), "--fail-on", "never"],
              culprit="readonly-out", unprivileged=True, check=_no_audit_ran)


def chmod_back(work: Path) -> None:
    """Make every file under `work` removable again (the permission cases took rights away)."""
    for dirpath, dirnames, filenames in os.walk(work):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            if not p.is_symlink():
                try:
                    mode = p.lstat().st_mode
                    if stat.S_ISDIR(mode):
                        os.chmod(p, 0o755)
                    elif stat.S_ISREG(mode):
                        os.chmod(p, 0o644)
                except OSError:
                    pass
    for dirpath, dirnames, _ in os.walk(work):
        for n in dirnames:
            try:
                os.chmod(Path(dirpath) / n, 0o755)
            except OSError:
                pass


def select(cases: Sequence[Case], *, categories: Sequence[str] | None = None,
           entries: Sequence[str] | None = None) -> list[Case]:
    return [k for k in cases if (categories is None or k.category in categories)
            and (entries is None or k.entry in entries)]
