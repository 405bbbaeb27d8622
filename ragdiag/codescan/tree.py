"""The client's code tree as the scanner may read it: regular files inside the root, nothing else.

A client's code folder is input, so the walk trusts nothing in it:

- `walk(root)`: the relative paths of the regular files under `root` (sorted, vendored and
  build folders pruned), and a `Skipped` entry for everything it did not read and why: a
  symlink (never followed: one leaving the tree would read, and quote, files that are not the
  client's code; one inside it names a file the walk reaches under its own path), a FIFO, a
  device or a socket (opening a FIFO blocks, ``/dev/zero`` never ends), a folder or file it
  may not read (`UNREADABLE`: the checks that use the code say so; a smaller code base must
  never pass for the whole one);
- `check_root(root)`: an `InputDataError` when the root itself cannot be read (an error,
  not an empty code base);
- `read_code(path, limit)`: the bytes of one file, opened without following a symlink and
  without blocking, checked to be a regular file, read up to `limit` bytes; `CodeUnreadable`
  with the reason otherwise.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.codescan.model import Skipped
from ragdiag.errors import InputDataError

__all__ = ["UNREADABLE", "CodeUnreadable", "Tree", "check_root", "read_code", "unreadable", "walk"]

UNREADABLE = "unreadable"
"""The first word of the reason of every `Skipped` entry the scanner could not read."""


class CodeUnreadable(Exception):
    """A file of the code tree that is not read: `reason` says why (a `Skipped` reason)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Tree:
    files: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _kind(mode: int) -> str:
    from ragdiag.inputs.limits import file_kind

    return file_kind(mode)


def _symlink_reason(path: Path, root: Path) -> str:
    try:
        target = path.resolve(strict=False)
        inside = target.is_relative_to(root)
    except (OSError, RuntimeError):  # a loop
        return "a symlink that loops: not followed"
    if inside:
        return "a symlink to a path inside the code folder: not followed (its target is scanned under its own path)"
    return "a symlink to a path outside the code folder: not followed, not read"


def walk(root: Path, *, skip_dirs: frozenset[str] = frozenset()) -> Tree:
    """Regular files under `root` and what was not read (see the module docstring)."""
    root = Path(root)
    real_root = root.resolve()
    tree = Tree()
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = root / rel_dir if rel_dir else root
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except PermissionError:
            tree.skipped.append(Skipped(rel_dir or ".", f"{UNREADABLE} folder: permission denied; its files "
                                                       "were not scanned"))
            continue
        except OSError as exc:
            tree.skipped.append(Skipped(rel_dir or ".", f"{UNREADABLE} folder: {exc.strerror or exc}; its files "
                                                       "were not scanned"))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                tree.skipped.append(Skipped(rel, f"{UNREADABLE}: {exc.strerror or exc}"))
                continue
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                tree.skipped.append(Skipped(rel, _symlink_reason(root / rel, real_root)))
            elif stat.S_ISDIR(mode):
                if entry.name not in skip_dirs and not entry.name.endswith(".egg-info"):
                    subdirs.append(rel)
            elif stat.S_ISREG(mode):
                tree.files.append(rel)
            else:
                tree.skipped.append(Skipped(rel, f"{_kind(mode)}: not a regular file, not read"))
        stack.extend(reversed(subdirs))
    tree.files.sort()
    tree.skipped.sort(key=lambda s: s.file)
    return tree


def check_root(root: Path) -> None:
    """An `InputDataError` when the code folder (or file) `root` cannot be read at all."""
    root = Path(root)
    try:
        st = root.stat()
    except OSError as exc:
        raise InputDataError(f"cannot read the client code: {exc.strerror or exc}", path=str(root)) from None
    try:
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(root) as it:
                next(it, None)
        elif stat.S_ISREG(st.st_mode):
            os.close(os.open(root, os.O_RDONLY | os.O_NONBLOCK))
        else:
            raise InputDataError(f"the client code is {_kind(st.st_mode)}; give the folder of the client's code",
                                 path=str(root))
    except PermissionError:
        raise InputDataError("cannot read the client code: permission denied (an unreadable code folder is "
                             "not an empty one; give ragdiag read access, e.g. run as its owner)",
                             path=str(root)) from None
    except OSError as exc:
        raise InputDataError(f"cannot read the client code: {exc.strerror or exc}", path=str(root)) from None


def read_code(path: Path, limit: int) -> bytes:
    """The bytes of one code file (at most `limit`), or `CodeUnreadable` saying why not."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise CodeUnreadable(f"{UNREADABLE}: permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CodeUnreadable("a symlink: not followed") from None
        raise CodeUnreadable(f"{UNREADABLE}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CodeUnreadable(f"{_kind(st.st_mode)}: not a regular file, not read")
        if st.st_size > limit:
            raise CodeUnreadable(f"larger than {limit:,} bytes ({st.st_size:,} bytes)")
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > limit:
            raise CodeUnreadable(f"larger than {limit:,} bytes (it grew while read)")
        return b"".join(chunks)
    except OSError as exc:
        raise CodeUnreadable(f"{UNREADABLE}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def unreadable(skipped: tuple[Skipped, ...] | list[Skipped]) -> list[Skipped]:
    """The entries of `skipped` the scanner could not read (permissions, I/O errors)."""
    return [s for s in skipped if s.reason.startswith(UNREADABLE)]
