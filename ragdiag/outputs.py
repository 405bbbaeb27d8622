"""Output files: checked before the work that fills them, written whole or not at all.

An audit used to run for minutes and crash only when it wrote its findings into a folder
that was a file, or could not be written: the findings were lost. Now:

- `check_output(path, what)` refuses, before any work, an output that is a folder, whose
  folder is a file, or that cannot be written (a probe file is created in its nearest
  existing folder and removed, so permissions, read-only mounts and ACLs all count; nothing
  is created, so a refused run leaves no folder behind);
- `write_text(path, text, what)` writes a regular file atomically: a process-unique
  temporary file beside it, then `os.replace`, so two audits writing one findings file never
  interleave and a reader never sees half of one. An existing non-regular destination
  (``/dev/stdout``, ``/dev/null``, a FIFO) is written in place, never replaced by a file;
- `check_output_dir(path, what)`: the same for a folder of outputs (``--out DIR``);
- `append_text(path, text, what)` appends (``--summary``, ``$GITHUB_STEP_SUMMARY``).

Every failure is an `OutputError` naming the path (exit 2): the path is the user's input.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ragdiag.errors import OutputError

__all__ = ["append_text", "check_output", "check_output_dir", "write_text"]


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_output(path: str | os.PathLike[str], what: str = "output") -> Path:
    """`path` as a `Path` once it is known to be writable, else `OutputError` (nothing is created)."""
    from ragdiag.inputs.limits import path_problem, short_path

    text = str(path)
    problem = path_problem(text)
    if problem:
        raise OutputError(f"the path of the {what} {problem}", path=short_path(text))
    p = Path(path)
    shown = short_path(p)
    st = _stat(p, what, shown, " there")
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"is a folder; the {what} needs a file path (e.g. {p / 'out'})", path=shown)
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not os.access(p, os.W_OK):
            raise OutputError(f"cannot write the {what}: permission denied", path=shown)
        return p  # a device or a pipe the user chose: written in place at the end
    if st is not None and not os.access(p, os.W_OK):
        raise OutputError(f"cannot write the {what}: permission denied", path=shown)
    # the nearest folder that exists: the end of the run creates the rest below it, then the file
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write the {what}: its folder {short_path(parent)} is a file", path=shown)
    try:  # what the end of the run will do: create a file (or folder) there; nothing is left behind
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".ragdiag-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write the {what} into {short_path(parent)}: {_reason(exc)}", path=shown) from None
    return p


def check_output_dir(path: str | os.PathLike[str], what: str = "outputs") -> Path:
    """The folder `path` once files can be written into it, else `OutputError` (nothing is created)."""
    from ragdiag.inputs.limits import short_path

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"is a file; the {what} need a folder", path=short_path(p))
    check_output(p / ".ragdiag-folder-probe", what)
    return p


def _stat(p: Path, what: str, shown: str, where: str = "") -> os.stat_result | None:
    """`p`'s status, None when it does not exist yet; `OutputError` when it cannot be asked (ENOTDIR:
    a folder on the way is a file)."""
    try:
        return p.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(f"cannot write the {what}{where}: {_reason(exc)}{_file_parent(p)}", path=shown) from None


def _file_parent(p: Path, always: bool = False) -> str:
    """", its folder X is a file" when an ancestor of `p` is a regular file."""
    for anc in p.parents:
        try:
            if anc.is_file():
                return f"{'' if always else ', '}its folder {anc} is a file"
        except OSError:
            continue
    return "a folder on the way is a file" if always else ""


def write_text(path: str | os.PathLike[str], text: str, what: str = "output") -> Path:
    """Write `text` (UTF-8) to `path` atomically (see the module docstring)."""
    p = Path(path)
    shown = str(p)
    st = _stat(p, what, shown)
    data = text.encode("utf-8")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(f"is a folder; the {what} needs a file path", path=shown)
        try:
            with open(p, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise OutputError(f"cannot write the {what}: {_reason(exc)}", path=shown) from None
        return p
    tmp = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise OutputError(f"cannot write the {what}: {_reason(exc)}{_file_parent(p)}", path=shown) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def append_text(path: str | os.PathLike[str], text: str, what: str = "output") -> Path:
    """Append `text` (UTF-8) to `path`, creating it (and its folder) when missing."""
    p = Path(path)
    try:
        if p.is_dir():
            raise OutputError(f"is a folder; the {what} needs a file path", path=str(p))
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the {what}: {_reason(exc)}{_file_parent(p)}", path=str(p)) from None
    return p
