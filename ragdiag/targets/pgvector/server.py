"""An embedded PostgreSQL 16 with pgvector for the sample and the tests, run without side effects.

The PyPI wheel `pgserver` bundles PostgreSQL 16 and the `vector` extension (``pginstall/``);
ragdiag runs those binaries itself. The wheel's own orchestration, run as root, created a
system user with ``useradd`` (writing /etc/passwd, /etc/group, /etc/shadow), made every
parent of the data folder and of the wheel group- and world-readable (with the default
cache: the home folder) and kept a lock file in the user's runtime folder. Here:

- the data folder is ``<cache>/pgvector/<name>`` (`default_data_dir`), made by ``initdb`` in a
  process-unique staging folder beside it and renamed into place; the server listens on a
  Unix socket inside it only (mode 0700, no TCP port), trusted, reachable by its owner;
- as a normal user, the server runs as that user;
- as root (PostgreSQL refuses to run as root), in a **user namespace**
  (``unshare --user --map-user=65534 --map-group=65534``): inside it the server is uid 65534,
  outside every file it writes belongs to root, so no user is created and nothing changes
  owner or mode. Where user namespaces are not allowed (some containers), as the existing
  unprivileged user **nobody**, and only when nobody can already reach the data folder and
  the binaries (checked by running ``test`` as nobody, never chmod'ed): the data folder,
  ragdiag's own, is then owned by nobody. Otherwise a `TargetError` says what to do.
  ``RAGDIAG_PG_RUNAS=userns|nobody`` picks one (the tests run both);
- processes share a server: ``<name>.lock`` (an flock beside the data folder) serialises
  start and stop, ``<name>.users`` lists the processes using it, and the last one to exit
  stops it (at exit, or `EmbeddedPostgres.stop`);
- the server is started only when a command needs it: never for ``ragdiag audit --plan``
  (`ragdiag.targets.pgvector.kind.PgvectorKind.plan_target`).

A data folder made by an older ragdiag through the wheel as root (owned by its user
``pgserver``) is given back to whoever runs the server now (it is ragdiag's own folder); the
``pgserver`` user that older runs created, and the permissions they widened, are not undone.

What remains outside the cache: the processes themselves while they run, the shared memory
PostgreSQL takes (released when it stops), and, as root, the user namespace it runs in. The
socket name must fit a Unix socket path (107 bytes): a cache folder whose path is longer is
refused with the fix (a shorter ``RAGDIAG_CACHE``), never moved elsewhere.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import MissingDependencyError, TargetError

__all__ = ["EmbeddedPostgres", "RunAs", "default_data_dir", "run_as", "start"]

_LOCK = threading.Lock()
_RUNNING: dict[Path, EmbeddedPostgres] = {}
NOBODY = 65534
SOCKET_NAME = ".s.PGSQL.5432"
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


@dataclass
class RunAs:
    """How the server's commands run: as this user, in a user namespace, or as nobody."""

    mode: str  # "self" | "userns" | "nobody"
    prefix: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def argv(self, argv: list[str]) -> list[str]:
        return [*self.prefix, *argv]


@dataclass
class EmbeddedPostgres:
    """A running embedded server: its data folder, process id and how it runs."""

    data_dir: Path
    pid: int
    runas: RunAs
    process: subprocess.Popen[bytes] | None = None  # when this process started it
    _released: bool = False

    @property
    def uri(self) -> str:
        """A secret-free connection URI: the socket folder is the (private) data folder."""
        from urllib.parse import quote

        return f"postgresql://postgres:@/postgres?host={quote(str(self.data_dir), safe='/')}"

    def stop(self) -> None:
        """Release this process's use of the server; the last user stops it (the data stays)."""
        with _LOCK:
            _RUNNING.pop(self.data_dir, None)
            if self._released:
                return
            self._released = True
            try:
                with _file_lock(self.data_dir):
                    if not _users(self.data_dir, remove=os.getpid()):
                        _stop_server(self.data_dir, self.pid, self.process)
            except OSError as exc:
                raise TargetError(f"could not stop the embedded PostgreSQL in {self.data_dir}: {exc}") from exc


def default_data_dir(name: str = "sample") -> Path:
    """`<cache>/pgvector/<name>`: where the sample's embedded database lives."""
    from ragdiag.cache import cache_dir

    path = cache_dir() / "pgvector"
    path.mkdir(parents=True, exist_ok=True)
    return path / name


def bin_dir() -> Path:
    """The wheel's PostgreSQL binaries, found without importing `pgserver` (its import sets up
    a lock in the user's runtime folder)."""
    spec = importlib.util.find_spec("pgserver")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for loc in locations:
        b = Path(loc) / "pginstall" / "bin"
        if (b / "postgres").is_file():
            return b
    raise MissingDependencyError("the embedded PostgreSQL needs the pgserver wheel (PostgreSQL 16 + pgvector). "
                                 "Fix: pip install 'ragdiag[pgvector]'")


# ---- who runs the server --------------------------------------------------------------------
def _userns_works() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        return subprocess.run([unshare, "--user", f"--map-user={NOBODY}", f"--map-group={NOBODY}", "--", "true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _nobody_reaches(paths: list[Path]) -> list[Path]:
    """The paths the unprivileged user nobody cannot reach (`test -x`, run as nobody)."""
    missing = []
    for p in paths:
        try:
            ok = subprocess.run(["test", "-x", str(p)], user=NOBODY, group=NOBODY, extra_groups=[],
                                capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if not ok:
            missing.append(p)
    return missing


def run_as(data_dir: Path, binaries: Path) -> RunAs:
    """How to run the server for `data_dir` (see the module docstring); nothing is changed here."""
    if os.geteuid() != 0:
        return RunAs("self")
    wanted = os.environ.get("RAGDIAG_PG_RUNAS", "").strip().lower() or None
    if wanted not in (None, "userns", "nobody"):
        raise TargetError(f"RAGDIAG_PG_RUNAS must be 'userns' or 'nobody', got {wanted!r}")
    if wanted in (None, "userns") and _userns_works():
        unshare = shutil.which("unshare") or "unshare"
        return RunAs("userns", (unshare, "--user", f"--map-user={NOBODY}", f"--map-group={NOBODY}", "--"))
    if wanted == "userns":
        raise TargetError("RAGDIAG_PG_RUNAS=userns, but this system does not allow a user namespace "
                          "(unshare --user failed)")
    unreachable = _nobody_reaches([data_dir.parent, binaries / "postgres"])
    if unreachable:
        raise TargetError(
            "the embedded PostgreSQL cannot run as root, user namespaces are not available here, and the "
            f"unprivileged user nobody cannot reach {', '.join(map(str, unreachable))}. ragdiag does not "
            "create users or change permissions outside its own folder. Fix: run ragdiag as a normal user, "
            "or set RAGDIAG_CACHE to a folder below a path every user may traverse (e.g. /var/cache/ragdiag), "
            "or use [target] dsn_env with a PostgreSQL server of your own")
    return RunAs("nobody", (), {"user": NOBODY, "group": NOBODY, "extra_groups": []})


# ---- the data folder --------------------------------------------------------------------------
@contextlib.contextmanager
def _file_lock(data_dir: Path) -> Iterator[None]:
    import fcntl

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir.parent / f"{data_dir.name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not a server
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _users(data_dir: Path, *, add: int | None = None, remove: int | None = None) -> list[int]:
    """The live processes using the server (`<name>.users`), after adding/removing one."""
    path = data_dir.parent / f"{data_dir.name}.users"
    try:
        pids = [int(p) for p in json.loads(path.read_text(encoding="ascii"))]
    except (OSError, ValueError, TypeError):
        pids = []
    pids = [p for p in dict.fromkeys(pids) if p != remove and _alive(p)]
    if add is not None and add not in pids:
        pids.append(add)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(pids), encoding="ascii")
    os.replace(tmp, path)
    return pids


def _running_pid(data_dir: Path) -> int | None:
    """The pid of a server running on `data_dir` and ready (from postmaster.pid), else None."""
    try:
        lines = (data_dir / "postmaster.pid").read_text(encoding="utf-8", errors="replace").splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    ready = len(lines) >= 8 and lines[7].strip() == "ready"
    return pid if ready and _alive(pid) and (data_dir / SOCKET_NAME).exists() else None


def _initdb(data_dir: Path, binaries: Path, runas: RunAs) -> None:
    staging = data_dir.parent / f".{data_dir.name}.init-{os.getpid()}-{secrets.token_hex(4)}"
    staging.mkdir(mode=0o700)
    try:
        if runas.mode == "nobody":
            os.chown(staging, NOBODY, NOBODY)  # ragdiag's own folder, made just now
        proc = subprocess.run(runas.argv([str(binaries / "initdb"), "-D", str(staging), "--auth=trust",
                                          "--auth-local=trust", "--encoding=utf8", "-U", "postgres"]),
                              capture_output=True, text=True, timeout=300, env=_env(), **runas.kwargs)
        if proc.returncode != 0:
            raise TargetError(f"initdb failed for the embedded PostgreSQL in {data_dir}: "
                              f"{(proc.stderr or proc.stdout).strip()[-800:]}")
        if data_dir.exists():
            data_dir.rmdir()  # empty (checked by the caller): a folder made by an older version
        os.replace(staging, data_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _own(data_dir: Path, runas: RunAs) -> None:
    """The data folder must belong to whoever runs the server. One made by an older ragdiag as
    root (owned by the wheel's user ``pgserver``) is given back: it is ragdiag's own folder."""
    want = {"userns": 0, "nobody": NOBODY}.get(runas.mode, os.geteuid())
    if data_dir.stat().st_uid == want:
        return
    if os.geteuid() != 0:
        raise TargetError(f"{data_dir} belongs to another user; delete it to start afresh")
    for dirpath, dirnames, filenames in os.walk(data_dir):
        for name in [".", *dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), want, want)


def _env() -> dict[str, str]:
    """The environment of the server's commands: ours without PG* variables (a PGDATA or
    PGHOST of the user's would point them elsewhere)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _start_server(data_dir: Path, binaries: Path, runas: RunAs) -> tuple[int, subprocess.Popen[bytes]]:
    argv = runas.argv([str(binaries / "postgres"), "-D", str(data_dir), "-c", "listen_addresses=",
                       "-c", f'unix_socket_directories="{data_dir}"', "-c", "unix_socket_permissions=0700"])
    with open(data_dir / "log", "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env(),
                                start_new_session=True, **runas.kwargs)  # a SIGINT to ragdiag is not its
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        pid = _running_pid(data_dir)
        if pid is not None:
            return pid, proc
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    tail = ""
    with contextlib.suppress(OSError):
        tail = (data_dir / "log").read_text(encoding="utf-8", errors="replace")[-800:].strip()
    raise TargetError(f"the embedded PostgreSQL in {data_dir} did not start within {START_TIMEOUT_S:g} s "
                      f"(as {runas.mode}); its log ends: {tail or '(empty)'}; delete the folder to start afresh")


def _stop_server(data_dir: Path, pid: int, process: subprocess.Popen[bytes] | None) -> None:
    """Fast shutdown (SIGINT to the postmaster), then SIGQUIT; waits until it is gone."""
    for sig, wait in ((signal.SIGINT, STOP_TIMEOUT_S), (signal.SIGQUIT, 10.0), (signal.SIGKILL, 5.0)):
        if process is not None and process.poll() is not None:
            return
        if not _alive(pid):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.1)
                if process.poll() is not None:
                    return
            elif not _alive(pid):
                return
            else:
                time.sleep(0.1)


# ---- starting ---------------------------------------------------------------------------------
def start(data_dir: Path | None = None) -> EmbeddedPostgres:
    """Start (or join) the embedded server on `data_dir`, with the pgvector extension created."""
    import psycopg

    data_dir = Path(data_dir or default_data_dir()).resolve()
    binaries = bin_dir()
    sock = data_dir / SOCKET_NAME
    if len(str(sock).encode()) > MAX_SOCKET_PATH:
        raise TargetError(f"the embedded PostgreSQL's socket {sock} would be longer than the {MAX_SOCKET_PATH} "
                          "bytes a Unix socket path may have; set RAGDIAG_CACHE to a shorter folder")
    with _LOCK:
        if data_dir in _RUNNING:
            return _RUNNING[data_dir]
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(data_dir):
            runas = run_as(data_dir, binaries)
            if not (data_dir / "PG_VERSION").exists():
                if data_dir.exists() and any(data_dir.iterdir()):
                    raise TargetError(f"{data_dir} exists but holds no PostgreSQL data folder; delete it to "
                                      "start afresh")
                _initdb(data_dir, binaries, runas)
            pid = _running_pid(data_dir)
            process = None
            if pid is None:
                _own(data_dir, runas)
                pid, process = _start_server(data_dir, binaries, runas)
            _users(data_dir, add=os.getpid())
        srv = EmbeddedPostgres(data_dir, pid, runas, process)
        atexit.register(srv.stop)
        try:
            with psycopg.connect(srv.uri, autocommit=True, connect_timeout=20) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            srv.stop()
            raise TargetError(f"the embedded PostgreSQL in {data_dir} started but refused a connection: "
                              f"{str(exc).strip()[:300]}") from None
        _RUNNING[data_dir] = srv
        return srv
