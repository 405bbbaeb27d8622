"""`ragdiag.outputs`: outputs refused before the work, written whole or not at all, and the CLI
that checks them before an audit runs (so its findings are never lost at the end)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ragdiag.cli as cli
from ragdiag.errors import OutputError
from ragdiag.outputs import append_text, check_output, check_output_dir, write_text

ROOT = Path(__file__).resolve().parents[1]


def test_check_output_refuses_a_folder_a_file_as_folder_and_accepts_a_new_path(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(OutputError, match=r"dir: is a folder; the findings needs a file path"):
        check_output(tmp_path / "dir", "findings")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputError, match="its folder .*afile is a file"):
        check_output(tmp_path / "afile" / "out.json", "findings")
    before = sorted(tmp_path.iterdir())
    ok = check_output(tmp_path / "new" / "sub" / "out.json", "findings")
    assert not ok.parent.exists() and sorted(tmp_path.iterdir()) == before  # nothing made, nothing left
    with pytest.raises(OutputError, match="is a file; the report files need a folder"):
        check_output_dir(tmp_path / "afile", "report files")
    assert not check_output_dir(tmp_path / "reports", "report files").exists()


def test_write_text_replaces_atomically_and_keeps_the_mode(tmp_path):
    p = tmp_path / "findings.json"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_text(p, "new text")
    assert p.read_text() == "new text" and (p.stat().st_mode & 0o777) == 0o640
    assert [x.name for x in tmp_path.iterdir()] == ["findings.json"]  # no temporary file left


def test_concurrent_writers_never_interleave(tmp_path):
    p = tmp_path / "findings.json"
    texts = [json.dumps({"writer": i, "pad": str(i) * 200_000}) for i in range(6)]
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            if p.exists():
                seen.append(p.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write_text, args=(p, t)) for t in texts * 3]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    stop.set()
    reader.join()
    assert p.read_text() in texts
    assert seen and all(s in texts for s in seen)  # every read is one writer's whole text


def test_a_device_is_written_in_place_never_replaced_by_a_file():
    write_text("/dev/null", "discarded")
    assert Path("/dev/null").is_char_device()
    with pytest.raises(OutputError, match="/dev/full: cannot write the findings: No space left on device"):
        write_text("/dev/full", "x" * 100_000, "findings")


def test_append_text_appends_and_refuses_a_folder(tmp_path):
    p = tmp_path / "summary.md"
    append_text(p, "a\n")
    append_text(p, "b\n")
    assert p.read_text() == "a\nb\n"
    with pytest.raises(OutputError, match="is a folder"):
        append_text(tmp_path, "x")


# ---- the CLI: refused before the audit, the findings kept when a later output fails ----------
def _code_only(tmp_path: Path) -> Path:
    code = tmp_path / "code"
    code.mkdir()
    (code / "app.py").write_text("def f():\n    return 1\n")
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[inputs]\nclient_code = "{code}"\n')
    return cfg


@pytest.mark.parametrize("option", ["--json", "--junit", "--sarif", "--summary"])
def test_an_unwritable_output_is_refused_before_the_audit_runs(tmp_path, capsys, monkeypatch, option):
    import ragdiag.audit as audit

    cfg = _code_only(tmp_path)
    (tmp_path / "afile").write_text("x")
    ran = []
    monkeypatch.setattr(audit, "run_checks", lambda *a, **k: ran.append(1))
    assert cli.main(["audit", str(cfg), option, str(tmp_path / "afile" / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "afile is a file" in err and not ran
    assert cli.main(["audit", str(cfg), option, str(tmp_path), "--quiet"]) == 2  # a folder
    assert "is a folder" in capsys.readouterr().err and not ran


def test_a_failing_output_at_the_end_keeps_the_others_and_exits_2(tmp_path, capsys):
    cfg = _code_only(tmp_path)
    out = tmp_path / "findings.json"
    code = cli.main(["audit", str(cfg), "--json", str(out), "--junit", "/dev/full", "--fail-on", "never",
                     "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "/dev/full: cannot write the JUnit XML: No space left on device" in err
    assert json.loads(out.read_text())["findings"]  # the findings were written all the same


def test_a_read_only_folder_is_refused_before_the_audit_as_an_unprivileged_user():
    """Run as nobody when the tests run as root (root may write anywhere), else as this user."""
    import shutil
    import tempfile

    kw = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}
    work = Path(tempfile.mkdtemp(prefix="ragdiag-outputs-", dir="/tmp"))  # outside pytest's 0700 tree
    try:
        cfg = _code_only(work)
        ro = work / "ro"
        ro.mkdir()
        os.chmod(ro, 0o555)
        os.chmod(work, 0o755)
        if kw:
            os.chown(work, 65534, 65534)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(work), "RAGDIAG_CACHE": str(work / "cache")}
        proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--json", str(ro / "f.json")],
                              capture_output=True, text=True, env=env, cwd=str(work), timeout=120, **kw)
        assert proc.returncode == 2, proc.stderr
        assert "cannot write the findings into" in proc.stderr and "Permission denied" in proc.stderr
        assert "running" not in proc.stderr  # no check ran
    finally:
        os.chmod(work / "ro", 0o755)
        shutil.rmtree(work, ignore_errors=True)
