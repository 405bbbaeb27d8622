"""The embedded PostgreSQL has no side effects outside ragdiag's cache (`ragdiag.targets.pgvector.server`).

A child process starts the server in a temporary HOME and cache, uses it and stops it, with
an audit hook recording every file it opens for writing, every chmod, chown, rename,
removal and every command it runs. The commands' own effects (initdb, postgres) are checked
by snapshots: /etc/passwd, /etc/group and /etc/shadow, the mode and owner of every parent of
the cache and of the wheel's binaries, the user's runtime folder. As root both ways to run
the server without root (a user namespace; the user nobody) are exercised; and
``ragdiag audit --plan`` on the embedded sample starts nothing at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("pgserver")

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_FILES = ("/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow")

CHILD = r"""
import json, os, sys
events = []
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

def hook(event, args):
    if event == "open":
        path, mode, flags = args
        if isinstance(path, (str, bytes, os.PathLike)) and (
                (isinstance(mode, str) and any(c in mode for c in "wax+")) or (flags or 0) & WRITE):
            events.append(["write", os.fsdecode(path)])
    elif event in ("os.chmod", "os.chown", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate",
                   "os.symlink", "os.link", "shutil.rmtree", "os.lchown"):
        p = args[0]
        if isinstance(p, int):
            return
        events.append([event, os.fsdecode(p)])
        if event == "os.rename":
            events.append([event, os.fsdecode(args[1])])
    elif event == "subprocess.Popen":
        events.append(["run", [os.fsdecode(a) for a in args[1]]])

sys.addaudithook(hook)
from pathlib import Path
import psycopg
from ragdiag.targets.pgvector.server import start, default_data_dir
srv = start(default_data_dir("sample"))
with psycopg.connect(srv.uri, autocommit=True) as conn:
    conn.execute("CREATE TABLE IF NOT EXISTS t (id int, v vector(2))")
    conn.execute("INSERT INTO t VALUES (1, '[1,2]')")
    n = conn.execute("SELECT count(*) FROM t").fetchone()[0]
srv.stop()
print(json.dumps({"events": events, "rows": n, "mode": srv.runas.mode, "pid": srv.pid}))
"""


def _digest(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _ancestors(p: Path) -> list[Path]:
    return [p, *p.parents]


def _modes(paths: list[Path]) -> dict[str, tuple[int, int, int]]:
    out = {}
    for p in paths:
        st = p.stat()
        out[str(p)] = (st.st_mode, st.st_uid, st.st_gid)
    return out


def _bin_dir() -> Path:
    from ragdiag.targets.pgvector.server import bin_dir

    return bin_dir()


MODES = ["userns", "nobody"] if os.geteuid() == 0 else ["self"]


@pytest.fixture()
def home():
    # under /tmp itself (every user may traverse it), not pytest's 0700 tree: the nobody way needs that
    h = Path(tempfile.mkdtemp(prefix="ragdiag-pghome-", dir="/tmp"))
    os.chmod(h, 0o755)
    yield h
    shutil.rmtree(h, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_nothing_outside_the_cache_is_written_or_re_permissioned(home, mode):
    from ragdiag.targets.pgvector.server import _userns_works

    if mode == "userns" and not _userns_works():
        pytest.skip("this system allows no user namespace")
    cache = home / "cache"
    wheel = _bin_dir()
    watched = _ancestors(home) + _ancestors(wheel) + _ancestors(wheel.parent / "lib")
    before_modes = _modes(watched)
    before_files = {f: _digest(f) for f in SYSTEM_FILES}
    runtime = Path(f"/tmp/runtime-{os.getuid()}")
    runtime_before = runtime.exists() and sorted(p.name for p in runtime.iterdir())
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR",)}
    env.update(HOME=str(home), RAGDIAG_CACHE=str(cache), PYTHONPATH=str(ROOT), RAGDIAG_PG_RUNAS=mode
               if mode != "self" else "")
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["rows"] >= 1 and out["mode"] == mode
    for kind, what in out["events"]:
        if kind == "run":
            assert not any(Path(a).name in ("useradd", "adduser", "groupadd", "usermod", "chmod", "chown")
                           for a in what), what
            continue
        path = Path(os.path.abspath(what))
        if str(path) == "/dev/null":  # the commands' stdin/stdout
            continue
        assert path.is_relative_to(cache), (kind, what)  # every write, chmod, chown, rename: inside the cache
    assert _modes(watched) == before_modes  # no parent of the cache or of the wheel was re-permissioned
    assert {f: _digest(f) for f in SYSTEM_FILES} == before_files  # no user or group was created
    assert (runtime.exists() and sorted(p.name for p in runtime.iterdir())) == runtime_before
    assert sorted(p.name for p in home.iterdir()) == ["cache"]
    assert not _pid_alive(out["pid"])  # stopped: the last user was this process


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.mark.skipif(os.geteuid() != 0, reason="the ways around root only apply to root")
def test_as_root_without_a_way_around_it_is_a_clear_error_and_changes_nothing(home, monkeypatch):
    from ragdiag.errors import TargetError
    from ragdiag.targets.pgvector import server

    private = home / "private"
    private.mkdir(mode=0o700)  # nobody cannot traverse it, and user namespaces are "not available"
    monkeypatch.setattr(server, "_userns_works", lambda: False)
    before = _modes(_ancestors(private))
    with pytest.raises(TargetError, match="the unprivileged user nobody cannot reach .*private.* ragdiag does not "
                                          "create users or change permissions"):
        server.run_as(private / "pgvector" / "sample", _bin_dir())
    assert _modes(_ancestors(private)) == before


def test_audit_plan_never_starts_the_embedded_server(home):
    cache = home / "cache"
    env = {**os.environ, "HOME": str(home), "RAGDIAG_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    cfg = ROOT / "ragdiag" / "sample" / "data" / "audit-pgvector.toml"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--plan"], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "total" in proc.stdout and "Nothing was sent" in proc.stdout
    assert not (cache / "pgvector").exists()  # no data folder, no server
    assert not (cache / "traces").exists()  # a plan writes no trace store either


def test_two_processes_share_one_server_and_the_last_one_stops_it(home):
    """The first process to start the server must not stop it under the second one's feet."""
    script = r"""
import sys, time, psycopg
from ragdiag.targets.pgvector.server import start, default_data_dir
srv = start(default_data_dir("shared"))
print(srv.pid, flush=True)
sys.stdin.readline()
with psycopg.connect(srv.uri) as c:
    print(c.execute("select 1").fetchone()[0], flush=True)
srv.stop()
"""
    env = {**os.environ, "HOME": str(home), "RAGDIAG_CACHE": str(home / "cache"), "PYTHONPATH": str(ROOT)}
    a = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=env)
    pid_a = int(a.stdout.readline())
    b = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=env)
    pid_b = int(b.stdout.readline())
    assert pid_a == pid_b  # one server
    a.stdin.write("\n")
    a.stdin.flush()
    assert a.stdout.readline().strip() == "1"
    a.wait(60)
    assert _pid_alive(pid_a)  # b still uses it
    b.stdin.write("\n")
    b.stdin.flush()
    assert b.stdout.readline().strip() == "1"
    b.wait(60)
    assert not _pid_alive(pid_a)
