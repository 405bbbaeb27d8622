"""The limits every input loader enforces, and the helpers they share to enforce them.

Every file ragdiag reads (audit config, profiles, goldset, query log, entities, index
schema, records, checklist specs, TREC qrels and topics) goes through these helpers, so a
malformed input is always a `RagdiagError` naming the file (and line) and saying what
was expected, never a Python traceback:

- `excerpt(value)`: the offending value as at most `MAX_EXCERPT` characters (a 412-byte
  YAML file whose aliases expand to megabytes is quoted in one short line);
- `read_text(path, ...)` / `read_bytes`: not found, a folder, a FIFO, a device or a socket
  (refused before opening: a FIFO would block, ``/dev/zero`` never ends), unreadable, a path
  that is too long or holds a NUL, larger than the kind's limit in `MAX_BYTES` (read in
  steps as large as the file really is, so the limit is never allocated), UTF-16/UTF-32 or
  Latin-1 instead of UTF-8 and NUL characters (with the line);
- `load_json(path, ...)`: `read_text` + `loads_json`, for every JSON file a user gives;
- `loads_json(text, ...)`: nesting deeper than `MAX_DEPTH` is refused before parsing,
  integers must fit in 64 bits (`MAX_INT`), every other problem is an "invalid JSON" error;
- `check_tree(data)`: the same depth, node-count (`MAX_NODES`) and integer limits for
  data parsed from TOML or YAML (YAML aliases cannot make a small file huge);
- `path_problem(text)`: why a path written in a config cannot be a path;
- `toml_loads(text, ...)`: tomllib with the limits above and the line of the problem.

The limits are module constants: a test or an unusual client can raise them.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.errors import InputDataError, RagdiagError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_EXCERPT", "MAX_INT", "MAX_LINE_CHARS", "MAX_NAME_BYTES",
           "MAX_NODES", "MAX_PATH_CHARS", "READ_CHUNK", "LinedDict", "LinedList", "TreeProblem", "check_tree",
           "decode", "excerpt", "file_kind", "special_file", "flow_depth_line", "limit_of", "line_at", "lone_surrogate",
           "load_json", "loads_json", "loads_json_lined", "open_regular", "path_problem", "read_bytes", "read_text",
           "short_path", "toml_loads"]

MAX_EXCERPT = 120
"""Characters of an offending value quoted in an error message."""
MAX_DEPTH = 64
"""Deepest nesting of lists and mappings (or arrays and tables) accepted in any input."""
MAX_NODES = 10_000_000
"""Values in one parsed document (bounds YAML alias expansion)."""
MAX_INT = 2**63 - 1
"""Integers must lie in [-2**63, 2**63 - 1] (Azure's Edm.Int64)."""
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255
"""A path is at most 4096 characters; each of its names at most 255 bytes (as on Linux)."""
MAX_LINE_CHARS = 16 * 1024 * 1024
"""Characters in one line of a JSONL file (records, query log, goldset)."""
MAX_BYTES: dict[str, int] = {
    "audit config": 1 << 20,
    "profiles file": 4 << 20,
    "checklist spec": 1 << 20,
    "goldset": 64 << 20,
    "TREC qrels file": 512 << 20,
    "TREC topics file": 64 << 20,
    "query log": 2 << 30,
    "entities lexicon": 16 << 20,
    "index definition": 16 << 20,
    "records file": 8 << 30,
    "request file": 16 << 20,
    "SQL template": 1 << 20,
    "answers file": 256 << 20,
    "findings file": 256 << 20,
    "chunk file": 2 << 30,
    "source documents": 2 << 30,
    "TOML file": 4 << 20,
}
"""File size limit per kind of input, in bytes."""
_DEFAULT_MAX_BYTES = 64 << 20


# ---- excerpts ---------------------------------------------------------------------------------
def excerpt(value: Any, limit: int | None = None) -> str:
    """`value` quoted for an error message: a repr of at most `limit` (~120) characters.

    Long strings and large containers are cut with "…" and say how long they were; an
    integer too large to print says how many digits it has. Never raises, never builds
    the whole repr of a huge (or self-referential) value.
    """
    limit = MAX_EXCERPT if limit is None else max(8, int(limit))
    try:
        out: list[str] = []
        _repr_into(value, out, [limit + 1], 0)
        text = "".join(out)
    except Exception:  # a value whose repr raises: its type is all we can say
        text = f"<{type(value).__name__}>"
    cut = len(text) > limit
    if cut:
        text = text[:limit - 1] + "…"
    size = _size_note(value) if cut else ""
    return f"{text} ({size})" if size else text


def _size_note(value: Any) -> str:
    if isinstance(value, str | bytes):
        return f"{len(value):,} characters" if isinstance(value, str) else f"{len(value):,} bytes"
    if isinstance(value, list | tuple | set | frozenset | Mapping):
        n = len(value)
        noun = ("key" if isinstance(value, Mapping) else "item") + ("" if n == 1 else "s")
        return f"{n:,} {noun}"
    return ""


def _repr_into(value: Any, out: list[str], budget: list[int], depth: int) -> None:
    """Append a repr of `value` to `out` until `budget[0]` characters are spent."""
    if budget[0] <= 0:
        return

    def put(s: str) -> None:
        out.append(s[:max(0, budget[0])])
        budget[0] -= len(s)

    if isinstance(value, bool) or value is None:
        put(repr(value))
    elif isinstance(value, int):
        if value.bit_length() > 256:
            put(f"<an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits>")
        else:
            put(repr(value))
    elif isinstance(value, float):
        put(repr(value))
    elif isinstance(value, str | bytes):
        put(repr(value[:budget[0] + 2]))
        if len(value) > budget[0] + 2:
            put("…")
    elif depth > MAX_DEPTH:
        put("…")
    elif isinstance(value, Mapping):
        put("{")
        for i, (k, v) in enumerate(value.items()):
            if budget[0] <= 0:
                return
            if i:
                put(", ")
            _repr_into(k, out, budget, depth + 1)
            put(": ")
            _repr_into(v, out, budget, depth + 1)
        put("}")
    elif isinstance(value, list | tuple | set | frozenset):
        brackets = "[]" if isinstance(value, list) else "()" if isinstance(value, tuple) else "{}"
        put(brackets[0])
        for i, v in enumerate(value):
            if budget[0] <= 0:
                return
            if i:
                put(", ")
            _repr_into(v, out, budget, depth + 1)
        put(brackets[1])
    else:
        r = repr(value)
        put(r)


def short_path(path: Any, limit: int = 160) -> str:
    """A path for a message: the start and the end of an over-long one."""
    s = str(path)
    if len(s) <= limit:
        return s
    half = (limit - 1) // 2
    return f"{s[:half]}…{s[-half:]}"


def line_at(text: str, index: int) -> int:
    """The 1-based line of character `index` in `text`."""
    return text.count("\n", 0, max(0, index)) + 1


# ---- paths and files --------------------------------------------------------------------------
def path_problem(text: str) -> str | None:
    """Why `text` cannot name a file (NUL, control characters, too long), or None."""
    if "\x00" in text:
        return "contains a NUL character"
    if any(ord(c) < 32 for c in text):
        return "contains a control character (a line break or tab?)"
    if len(text) > MAX_PATH_CHARS:
        return f"is {len(text):,} characters long; a path may have at most {MAX_PATH_CHARS}"
    for name in re.split(r"[/\\]", text):
        n = len(name.encode("utf-8", "surrogatepass"))
        if n > MAX_NAME_BYTES:
            return (f"has a file or folder name of {n:,} bytes ({excerpt(name, 40)}); "
                    f"a name may have at most {MAX_NAME_BYTES}")
    return None


READ_CHUNK = 1 << 20
"""Bytes read per system call when a file is read: the buffer grows with what the file holds,
never to the kind's limit (an 8 GiB limit must not allocate 8 GiB for a 144 KB file)."""
_FILE_KINDS = ((stat.S_ISLNK, "a symlink, which is not followed"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a non-regular file is ("a FIFO (named pipe)", "a character device", ...)."""
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def special_file(path: str | os.PathLike[str]) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a folder (a FIFO, a
    device, a socket: never an input), else None. Follows symlinks, as opening would."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else file_kind(mode)


def limit_of(what: str, max_bytes: int | None = None) -> int:
    """The size limit of a kind of input (`MAX_BYTES`), or `max_bytes` when given."""
    return max_bytes if max_bytes is not None else MAX_BYTES.get(what, _DEFAULT_MAX_BYTES)


def open_regular(path: str | os.PathLike[str], *, what: str,
                 error: Callable[..., RagdiagError] = InputDataError, follow_symlinks: bool = True) -> int:
    """A read-only file descriptor of `path`, which must be a regular file, or `error(...)`.

    A FIFO, a device, a socket or a folder is refused before it is opened (opening a FIFO
    blocks until a writer comes; a device has no end), and again after opening (the path may
    have been replaced in between): the file is opened non-blocking and `fstat`-ed.
    `follow_symlinks=False` refuses a symlink (for files found in a client's tree).
    """
    spath = short_path(path)
    problem = path_problem(str(path))
    if problem:
        raise error(f"the path of the {what} {problem}", path=spath)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        st = os.stat(path, follow_symlinks=follow_symlinks)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"is {file_kind(st.st_mode)}; the {what} must be a regular file", path=spath)
        fd = os.open(path, flags)
    except RagdiagError:
        raise
    except FileNotFoundError:
        raise error(f"{what} not found" + (" (a symlink to a missing file)" if os.path.islink(path) else ""),
                    path=spath) from None
    except PermissionError:
        raise error(f"cannot read the {what}: permission denied", path=spath) from None
    except (OSError, ValueError) as exc:
        if not follow_symlinks and getattr(exc, "errno", None) == errno.ELOOP:
            raise error(f"is a symlink, which is not followed; the {what} must be a regular file",
                        path=spath) from None
        reason = getattr(exc, "strerror", None) or str(exc)
        raise error(f"cannot read the {what}: {excerpt(reason)}", path=spath) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"is {file_kind(st.st_mode)}; the {what} must be a regular file", path=spath)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | os.PathLike[str], *, what: str,
               error: Callable[..., RagdiagError] = InputDataError, max_bytes: int | None = None,
               follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, read in `READ_CHUNK` steps up to the kind's limit.

    The buffer grows with the file's real content: the size the file system reports is a
    hint (0 for a device, stale for a growing file), never trusted for the limit.
    """
    spath = short_path(path)
    limit = limit_of(what, max_bytes)
    fd = open_regular(path, what=what, error=error, follow_symlinks=follow_symlinks)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(f"the {what} is {size:,} bytes; the limit is {limit:,} "
                        f"(ragdiag.inputs.limits.MAX_BYTES[{what!r}])", path=spath)
        buf = bytearray(min(size, limit) + 1)
        view = memoryview(buf)
        got = 0
        while True:
            if got == len(buf):  # the file holds more than it said: grow, up to the limit + 1
                if len(buf) > limit:
                    raise error(f"the {what} is larger than {limit:,} bytes "
                                f"(ragdiag.inputs.limits.MAX_BYTES[{what!r}])", path=spath)
                view.release()
                buf.extend(bytes(min(max(len(buf), READ_CHUNK), limit + 1 - len(buf))))
                view = memoryview(buf)
            n = os.readv(fd, [view[got:got + READ_CHUNK]])
            if n == 0:
                break
            got += n
        view.release()
    except RagdiagError:
        raise
    except PermissionError:
        raise error(f"cannot read the {what}: permission denied", path=spath) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {excerpt(exc.strerror or str(exc))}", path=spath) from None
    except MemoryError:
        raise error(f"the {what} does not fit in memory", path=spath) from None
    finally:
        os.close(fd)
    if got > limit:
        raise error(f"the {what} is larger than {limit:,} bytes "
                    f"(ragdiag.inputs.limits.MAX_BYTES[{what!r}])", path=spath)
    del buf[got:]
    return bytes(buf)


def read_text(path: str | os.PathLike[str], *, what: str,
              error: Callable[..., RagdiagError] = InputDataError,
              max_bytes: int | None = None, follow_symlinks: bool = True) -> str:
    """The UTF-8 text of `path` (a BOM is dropped), or `error(message, path=...)` saying why not:
    not found, a folder, a FIFO or a device, unreadable, larger than the kind's limit in
    `MAX_BYTES` (read in steps, never allocated whole), not UTF-8 (with the line)."""
    blob = read_bytes(path, what=what, error=error, max_bytes=max_bytes, follow_symlinks=follow_symlinks)
    return decode(blob, what=what, path=short_path(path), error=error)


_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
         (b"\xfe\xff", "UTF-16"))


def decode(blob: bytes, *, what: str, path: str | None,
           error: Callable[..., RagdiagError] = InputDataError) -> str:
    """UTF-8 (with or without a BOM) or an error naming the line of the first bad byte; a
    UTF-16 or UTF-32 file (by its byte-order mark, or its NUL bytes) is named as such."""
    bom = next((name for mark, name in _BOMS if blob.startswith(mark)), None)
    if bom is not None:
        raise error(f"the {what} is {bom} text (it starts with a {bom} byte-order mark), not UTF-8; "
                    f"save the file as UTF-8", path=path, line=1)
    nul = blob.find(b"\x00")
    if nul >= 0:  # before decoding: UTF-16 without a byte-order mark is mostly NULs
        line = blob.count(b"\n", 0, nul) + 1
        col = nul - (blob.rfind(b"\n", 0, nul) + 1) + 1
        head = blob[:4096]
        hint = " (UTF-16 text without a byte-order mark?)" if head.count(b"\x00") * 4 > len(head) else ""
        raise error(f"the {what} holds a NUL character at column {col}{hint}; a text input cannot hold "
                    f"one: save the file as UTF-8 text", path=path, line=line)
    try:
        text = blob.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = blob.count(b"\n", 0, exc.start) + 1
        col = exc.start - (blob.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"the {what} is not UTF-8 text: byte 0x{blob[exc.start]:02x} at column {col} "
                    f"cannot be decoded (Latin-1 or Windows-1252?); save the file as UTF-8",
                    path=path, line=line) from None
    return text


# ---- JSON -------------------------------------------------------------------------------------
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


class _NumberTooLarge(ValueError):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 19:
        raise _NumberTooLarge(text)
    value = int(text)
    if not -MAX_INT - 1 <= value <= MAX_INT:
        raise _NumberTooLarge(text)
    return value


def json_depth_problem(text: str) -> tuple[int, int] | None:
    """(depth, index) where JSON `text` first nests deeper than `MAX_DEPTH`, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    bare = _JSON_STRING.sub(lambda m: " " * len(m.group(0)), text) if '"' in text else text
    depth = 0
    for m in _BRACKETS.finditer(bare):
        if m.group(0) in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return depth, m.start()
        else:
            depth -= 1
    return None


def loads_json(text: str, *, path: str | None, line: int | None = None, what: str = "JSON",
               error: Callable[..., RagdiagError] = InputDataError, **kwargs: Any) -> Any:
    """`json.loads` with the nesting and integer limits; errors name `path` and the line.

    `line` is the line of `text` in its file (JSONL); without it the error gives the line
    inside `text`. Extra keyword arguments go to `json.loads` (e.g. a `cls`).
    """
    def where(index: int) -> int:
        return line if line is not None else line_at(text, index)

    deep = json_depth_problem(text)
    if deep is not None:
        raise error(f"{what} nests lists and objects deeper than {MAX_DEPTH} levels "
                    f"(ragdiag.inputs.limits.MAX_DEPTH)", path=path, line=where(deep[1]))
    try:
        data = json.loads(text, parse_int=_bounded_int, **kwargs)
    except _NumberTooLarge as exc:
        raise error(f"{what} holds the integer {excerpt(exc.text, 40)} ({len(exc.text):,} "
                    f"characters); integers must lie between -2**63 and 2**63 - 1",
                    path=path, line=where(text.find(exc.text))) from None
    except json.JSONDecodeError as exc:
        col = f" (column {exc.colno})" if line is not None else ""
        raise error(f"invalid {what}: {exc.msg}{col}", path=path,
                    line=line if line is not None else exc.lineno) from None
    except RecursionError:
        raise error(f"{what} nests too deeply to parse (the limit is {MAX_DEPTH} levels)",
                    path=path, line=line) from None
    except RagdiagError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:
        raise error(f"invalid {what}: {excerpt(str(exc))}", path=path, line=line) from None
    bad = lone_surrogate(text, data)
    if bad is not None:
        at = _SURROGATE_ESCAPE.search(text)
        raise error(f"{what} holds the string {excerpt(bad, 60)} with an unpaired UTF-16 "
                    "surrogate escape (\\ud800-\\udfff), which is not text",
                    path=path, line=where(at.start() if at else 0))
    return data


def load_json(path: str | os.PathLike[str], *, what: str,
              error: Callable[..., RagdiagError] = InputDataError, max_bytes: int | None = None) -> Any:
    """A JSON file a user gave (`read_text` then `loads_json`): every problem is `error` with
    the file and line."""
    return loads_json(read_text(path, what=what, error=error, max_bytes=max_bytes), path=short_path(path),
                      what=what, error=error)


class LinedDict(dict):
    """A JSON object that knows the line it starts on (`loads_json_lined`)."""

    line: int | None = None


class LinedList(list):
    """A JSON array that knows the line it starts on (`loads_json_lined`)."""

    line: int | None = None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> LinedDict:
    out = LinedDict()
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def loads_json_lined(text: str, *, path: str | None, what: str = "JSON",
                     error: Callable[..., RagdiagError] = InputDataError) -> Any:
    """Like `loads_json` for a whole JSON document, with objects and arrays that know their
    line (`LinedDict`, `LinedList`) and duplicate keys refused. Pure Python: for the small
    documents (entity lexicons, index definitions) whose errors should point at a line."""
    import bisect
    import json.decoder as jd
    import json.scanner as js

    loads_json(text, path=path, what=what, error=error)  # limits and syntax, with the line
    newlines = [m.start() for m in re.finditer("\n", text)]

    def lineno(index: int) -> int:
        return bisect.bisect_left(newlines, index) + 1

    class _Context:
        strict = True
        object_hook = None
        object_pairs_hook = staticmethod(_pairs)
        parse_float = float
        parse_int = staticmethod(_bounded_int)
        parse_constant = staticmethod({"NaN": math.nan, "Infinity": math.inf,
                                       "-Infinity": -math.inf}.__getitem__)
        parse_string = staticmethod(jd.scanstring)
        memo: dict[str, str] = {}

        @staticmethod
        def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
            start = s_and_end[1] - 1
            try:
                obj, end = jd.JSONObject(s_and_end, *args)
            except _DuplicateKey as exc:
                raise error(f"{what}: the key {excerpt(exc.key, 60)} is given twice in the object "
                            f"that starts here", path=path, line=lineno(start)) from None
            obj.line = lineno(start)
            return obj, end

        @staticmethod
        def parse_array(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
            start = s_and_end[1] - 1
            values, end = jd.JSONArray(s_and_end, *args)
            out = LinedList(values)
            out.line = lineno(start)
            return out, end

    scan = js.py_make_scanner(_Context())
    index = jd.WHITESPACE.match(text, 0).end()
    try:
        data, _ = scan(text, index)
    except RecursionError:  # pragma: no cover - loads_json refused the depth already
        raise error(f"{what} nests too deeply to parse", path=path) from None
    finally:
        _Context.memo.clear()
    return data


_SURROGATE_ESCAPE = re.compile(r"\\[uU]0{0,4}[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str, data: Any) -> str | None:
    """The first string in `data` (parsed from `text`) holding an unpaired UTF-16 surrogate,
    which no UTF-8 file can hold, or None. Costs nothing unless `text` escapes one."""
    if "\\" not in text or not _SURROGATE_ESCAPE.search(text):
        return None
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii() and _SURROGATE.search(v):
                return v
        elif isinstance(v, Mapping):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return None


_FLOW_SKIP = re.compile(r"""'(?:[^'\n]|'')*'|"(?:[^"\\\n]|\\.)*"|(?:^|(?<=\s))#[^\n]*""", re.M)


def flow_depth_line(text: str) -> int | None:
    """The line where `[` and `{` (outside quoted strings and comments) first nest deeper
    than `MAX_DEPTH`, or None: YAML's scanner is quadratic in flow nesting, so a goldset
    is refused on this count before it is parsed."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    bare = _FLOW_SKIP.sub(lambda m: " " * len(m.group(0)), text)
    depth = 0
    for m in _BRACKETS.finditer(bare):
        if m.group(0) in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line_at(text, m.start())
        elif depth:
            depth -= 1
    return None


# ---- parsed trees -----------------------------------------------------------------------------
class TreeProblem(Exception):
    """What is wrong in parsed data, and where: `keys` (a path of keys and indexes) and the
    source line of the innermost container that knows its line (YAML mappings do)."""

    def __init__(self, message: str, keys: tuple[Any, ...], line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.keys = keys
        self.line = line

    @property
    def dotted(self) -> str:
        text = "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else str(k))
                       for i, k in enumerate(self.keys))
        return text if len(text) <= 80 else f"{text[:60]}…{text[-19:]}"


def check_tree(data: Any, *, max_depth: int | None = None, max_nodes: int | None = None,
               finite: bool = False) -> None:
    """Raise `TreeProblem` when `data` nests deeper than `MAX_DEPTH`, holds more than
    `MAX_NODES` values (counting every alias again), or an integer outside 64 bits
    (`finite`: also NaN or infinity). Iterative: never recurses on the data."""
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_nodes = MAX_NODES if max_nodes is None else max_nodes
    stack: list[tuple[Any, int, tuple[Any, ...], int | None]] = [(data, 0, (), None)]
    nodes = 0
    while stack:
        value, depth, keys, line = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise TreeProblem(f"holds more than {max_nodes:,} values (do YAML aliases repeat a "
                              "large part of the file?)", keys, line)
        if isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        if isinstance(value, int):
            if not -MAX_INT - 1 <= value <= MAX_INT:
                raise TreeProblem(f"holds the integer {excerpt(value, 40)}; integers must lie "
                                  "between -2**63 and 2**63 - 1", keys, line)
            continue
        if isinstance(value, float):
            if finite and not math.isfinite(value):
                raise TreeProblem(f"holds {value!r}; numbers must be finite", keys, line)
            continue
        if isinstance(value, Mapping | list | tuple):
            if depth >= max_depth:
                raise TreeProblem(f"nests lists and tables deeper than {max_depth} levels "
                                  "(ragdiag.inputs.limits.MAX_DEPTH)", keys, line)
            line = getattr(value, "line", None) or line
            if isinstance(value, Mapping):
                items: Any = value.items()
            else:
                items = enumerate(value)
            for k, v in items:
                stack.append((v, depth + 1, (*keys, k), line))


# ---- TOML -------------------------------------------------------------------------------------
_TOML_LINE = re.compile(r"at line (\d+)")
_LONG_NUMBER = re.compile(r"[0-9_]{4000,}")


def toml_loads(text: str, *, path: str | None,
               error: Callable[..., RagdiagError]) -> dict[str, Any]:
    """`tomllib.loads` plus the depth, size and integer limits; errors name the line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = _TOML_LINE.search(msg)
        line = int(m.group(1)) if m else None
        if line is None and "end of document" in msg:
            line = max(1, len(text.splitlines()))
        raise error(f"TOML syntax error: {excerpt(msg, 240)}", path=path, line=line) from None
    except RecursionError:
        raise error(f"arrays or inline tables nest deeper than {MAX_DEPTH} levels "
                    "(ragdiag.inputs.limits.MAX_DEPTH)", path=path, line=_deep_line(text)) from None
    except (ValueError, OverflowError) as exc:  # integers beyond Python's 4,300 digits
        m = _LONG_NUMBER.search(text)
        raise error(f"a number is too large: {excerpt(str(exc), 80)}; integers must lie between "
                    "-2**63 and 2**63 - 1", path=path,
                    line=line_at(text, m.start()) if m else None) from None
    try:
        check_tree(data)
    except TreeProblem as exc:
        raise error(f"'{exc.dotted}' {exc.message}" if exc.keys else exc.message, path=path,
                    line=_key_line(text, exc.keys)) from None
    return data


def _deep_line(text: str) -> int | None:
    """The line where brackets (outside simple strings) first nest deeper than MAX_DEPTH."""
    bare = re.sub(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'', lambda m: " " * len(m.group(0)), text)
    depth = 0
    for m in _BRACKETS.finditer(bare):
        depth += 1 if m.group(0) in "[{" else -1
        if depth > MAX_DEPTH:
            return line_at(text, m.start())
    return None


def _key_line(text: str, keys: tuple[Any, ...]) -> int | None:
    """The line that defines the deepest table or key of `keys` (indexes ignored)."""
    from ragdiag.inputs.tomlfile import TomlLocator

    names: list[str] = []
    for k in keys:
        if not isinstance(k, str):
            break
        names.append(k)
    if not names:
        return None
    try:
        return TomlLocator(text).line(tuple(names[:-1]), names[-1])
    except Exception:  # the locator is a heuristic; no line is better than a crash
        return None
