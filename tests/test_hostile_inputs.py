"""Every entry point on the hostile corpus of `tests/hostile.py`: each case ends in the exit code
it should (2 with the file, and the line where it has lines; 0/1 for handled input), never an
internal error, never a hang, never a file from outside the input quoted.

In-process through `ragdiag.cli.main` (fast; a FIFO is refused before it is opened, so
nothing can block). The unprivileged cases run as subprocesses in test_codescan_tree.py and
test_outputs.py; the slow ones (a 10,000-field index, index names that build the sample
index, a 30 MB file) in `benchmarks/bench_hardening.py --hostile`, which runs every case as
a process under a 6 GB address-space limit.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tests import hostile

SLOW = {"schema", "names"}


@pytest.fixture(scope="module")
def corpus():
    work = Path(tempfile.mkdtemp(prefix="ragdiag-hostile-test-", dir="/tmp"))
    c = hostile.build(work / "corpus", unprivileged=False)
    yield c
    hostile.chmod_back(work)
    shutil.rmtree(work, ignore_errors=True)


def _run(case: hostile.Case, cwd: Path) -> tuple[int, str, str]:
    import ragdiag.cli as cli

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(case.argv)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def test_every_entry_point_handles_the_hostile_corpus(corpus, monkeypatch):
    monkeypatch.delenv("RAGDIAG_HOSTILE_NO_DSN", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    cases = [k for k in corpus.cases if k.category not in SLOW and "30 MB" not in k.name]
    assert len(cases) >= 250
    wrong: list[str] = []
    outcome: Counter[int] = Counter()
    for case in cases:
        code, stdout, stderr = _run(case, corpus.work)
        outcome[code] += 1
        problems = hostile.judge(case, code, stdout, stderr, timed_out=False)
        if problems:
            wrong.append(f"{case.id}: {problems[0]}")
    assert not wrong, f"{len(wrong)} of {len(cases)} cases wrong:\n" + "\n".join(wrong[:25])
    assert outcome[2] > 0.8 * len(cases) and not outcome[3] and not outcome[4]


def test_the_judge_fails_what_it_should():
    """The corpus' judge is not a test that cannot fail."""
    case = hostile.Case("encoding", "search --request", "utf-16", ["search"], culprit="r.json", line=True)
    assert hostile.judge(case, 2, "", "ragdiag: error: /x/r.json:1: the request file is UTF-16 text", False) == []
    assert hostile.judge(case, 2, "", "ragdiag: error: the request file is UTF-16 text", False)[0].startswith(
        "the error does not name r.json")
    assert "gives no line" in hostile.judge(case, 2, "", "ragdiag: error: /x/r.json: bad", False)[0]
    assert hostile.judge(case, 4, "", "ragdiag: internal error (a bug in ragdiag, exit 4): X", False)[0].startswith(
        "internal error")
    assert hostile.judge(case, None, "", "", True) == ["hung (no exit within 90 s)"]
    assert "outside the input" in hostile.judge(case, 2, hostile.MARKER, "r.json:1: x", False)[0]
