"""`ragdiag.codescan.tree`: the code tree as the scanner may read it.

Symlinks (leaving the tree or not), FIFOs and devices are listed and never read; an
unreadable root is an error; an unreadable folder or file is listed and makes every check
that judged the code a warning naming it, never a pass on a smaller code base. The
permission cases run for real as an unprivileged user (root reads everything), and
in-process with `os.scandir` refusing one folder (both ways: readable, then not).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from ragdiag.codescan import scan_path
from ragdiag.codescan.tree import UNREADABLE, CodeUnreadable, check_root, read_code, walk
from ragdiag.errors import InputDataError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_APP = ROOT / "ragdiag" / "sample" / "data" / "client_app"
SECRET = "OUTSIDE-THE-TREE-1b2c"
SEARCH = "from azure.search.documents import SearchClient\n\ndef ask(q):\n    return SearchClient('e', 'i', None).search(q, top=5, filter=F)\n"


@pytest.fixture()
def escaping_tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f"F = '{SECRET}'\n" + SEARCH)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "app.py").write_text("F = 'group_ids/any()'\n" + SEARCH)
    (tree / "out.py").symlink_to(outside / "secret.py")
    (tree / "outdir").symlink_to(outside)
    (tree / "inside.py").symlink_to(tree / "pkg" / "app.py")
    (tree / "zero.py").symlink_to("/dev/zero")
    (tree / "loop.py").symlink_to(tree / "loop.py")
    os.mkfifo(tree / "pipe.py")
    return tree


def test_walk_reads_regular_files_only_and_says_why_not_the_rest(escaping_tree):
    t = walk(escaping_tree)
    assert t.files == ["pkg/app.py"]
    reasons = {s.file: s.reason for s in t.skipped}
    assert reasons["out.py"] == "a symlink to a path outside the code folder: not followed, not read"
    assert reasons["outdir"].startswith("a symlink to a path outside")
    assert reasons["inside.py"].startswith("a symlink to a path inside the code folder: not followed")
    assert reasons["zero.py"].startswith("a symlink to a path outside")
    assert reasons["loop.py"] == "a symlink that loops: not followed"
    assert reasons["pipe.py"] == "a FIFO (named pipe): not a regular file, not read"


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_node_in_the_tree_is_listed_not_read(tmp_path):
    os.mknod(tmp_path / "null.py", 0o600 | 0o020000, os.makedev(1, 3))  # a character device
    (tmp_path / "a.py").write_text("x = 1\n")
    t = walk(tmp_path)
    assert t.files == ["a.py"]
    assert t.skipped[0].reason == "a character device: not a regular file, not read"


def test_scan_never_follows_or_quotes_a_symlink_and_never_blocks_on_a_fifo(escaping_tree):
    done: list = []
    t = threading.Thread(target=lambda: done.append(scan_path(escaping_tree)), daemon=True)
    t.start()
    t.join(60)
    assert done, "the scan blocked (a FIFO opened?)"
    scan = done[0]
    text = json.dumps(scan.to_dict())
    assert SECRET not in text  # the file outside the tree was not read
    assert {s.file for s in scan.skipped} >= {"out.py", "outdir", "inside.py", "zero.py", "loop.py", "pipe.py"}
    assert [s.file for s in scan.search_calls] == ["pkg/app.py"]


def test_read_code_refuses_what_is_not_a_small_regular_file(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x" * 100)
    assert read_code(tmp_path / "a.py", 100) == b"x" * 100
    with pytest.raises(CodeUnreadable, match=r"larger than 99 bytes \(100 bytes\)"):
        read_code(tmp_path / "a.py", 99)
    (tmp_path / "l.py").symlink_to(tmp_path / "a.py")
    with pytest.raises(CodeUnreadable, match="a symlink: not followed"):
        read_code(tmp_path / "l.py", 100)
    os.mkfifo(tmp_path / "f.py")
    with pytest.raises(CodeUnreadable, match="a FIFO"):
        read_code(tmp_path / "f.py", 100)


def test_an_unreadable_folder_is_listed_as_unreadable(tmp_path, monkeypatch):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.py").write_text("x = 1\n")
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "b.py").write_text("y = 2\n")
    assert walk(tmp_path).files == ["ok/a.py", "private/b.py"]
    _refuse_folder(monkeypatch, "private")
    t = walk(tmp_path)
    assert t.files == ["ok/a.py"]
    assert t.skipped[0].file == "private" and t.skipped[0].reason.startswith(f"{UNREADABLE} folder")


def _refuse_folder(monkeypatch, name: str) -> None:
    real = os.scandir

    def scandir(path):
        if Path(path).name == name:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unreadable_part_turns_a_pass_into_a_warning_naming_it(tmp_path, monkeypatch):
    """pool_size passes on the sample client code; with its Python package unreadable the
    same audit must not pass (it judged only the JavaScript front end)."""
    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config

    app = tmp_path / "client_app"
    shutil.copytree(SAMPLE_APP, app)
    cfg = tmp_path / "audit.toml"
    cfg.write_text('[inputs]\nclient_code = "client_app"\n')

    def statuses():
        res = run_checks(build_context(load_config(cfg), progress=False), checks=["pool_size", "call_sites"])
        return {f.check_id: f for f in res.findings}

    whole = statuses()
    assert whole["pool_size"].status == "pass" and whole["call_sites"].status == "fail"
    _refuse_folder(monkeypatch, "muster_assistant")
    part = statuses()
    assert part["pool_size"].status == "warn"
    assert "could not be read (muster_assistant)" in part["pool_size"].headline
    assert part["pool_size"].metrics["unreadable_code_paths"] == 1
    assert part["call_sites"].status == "fail"  # a confirmed fault stays a fault, with the note
    assert "could not be read (muster_assistant)" in part["call_sites"].headline


def test_check_root_refuses_what_is_not_code(tmp_path):
    os.mkfifo(tmp_path / "p")
    with pytest.raises(InputDataError, match="the client code is a FIFO"):
        check_root(tmp_path / "p")
    check_root(tmp_path)  # a readable folder


def _as_unprivileged(argv: list[str], work: Path) -> subprocess.CompletedProcess:
    kw = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(work), "RAGDIAG_CACHE": str(work / "cache")}
    return subprocess.run([sys.executable, "-m", "ragdiag", *argv], capture_output=True, text=True, env=env,
                          cwd=str(work), timeout=180, **kw)


@pytest.fixture()
def unprivileged_work():
    work = Path(tempfile.mkdtemp(prefix="ragdiag-tree-", dir="/tmp"))  # outside pytest's 0700 tree
    os.chmod(work, 0o755)
    if os.geteuid() == 0:
        os.chown(work, 65534, 65534)
    yield work
    for dirpath, dirnames, _ in os.walk(work):
        for d in dirnames:
            os.chmod(Path(dirpath) / d, 0o755)
    shutil.rmtree(work, ignore_errors=True)


def test_an_unreadable_root_is_an_error_for_scan_code_and_audit(unprivileged_work):
    root = unprivileged_work / "code"
    root.mkdir()
    (root / "app.py").write_text(SEARCH)
    cfg = unprivileged_work / "audit.toml"
    cfg.write_text(f'[inputs]\nclient_code = "{root}"\n')
    ok = _as_unprivileged(["scan-code", str(root)], unprivileged_work)
    assert ok.returncode == 0 and "1 files scanned" in ok.stdout
    os.chmod(root, 0)
    for argv in (["scan-code", str(root)], ["audit", str(cfg), "--fail-on", "never", "--quiet"]):
        proc = _as_unprivileged(argv, unprivileged_work)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"{root}: cannot read the client code: permission denied" in proc.stderr


def test_unreadable_sub_folders_and_files_are_reported_as_an_unprivileged_user(unprivileged_work):
    root = unprivileged_work / "code"
    (root / "private").mkdir(parents=True)
    (root / "app.py").write_text(SEARCH)
    (root / "private" / "acl.py").write_text(SEARCH)
    (root / "secret.py").write_text(SEARCH)
    os.chmod(root / "private", 0)
    os.chmod(root / "secret.py", 0)
    proc = _as_unprivileged(["scan-code", str(root), "--json"], unprivileged_work)
    assert proc.returncode == 0, proc.stderr
    skipped = {s["file"]: s["reason"] for s in json.loads(proc.stdout)["skipped"]}
    assert skipped["private"].startswith("unreadable folder: permission denied")
    assert skipped["secret.py"] == "unreadable: permission denied"
