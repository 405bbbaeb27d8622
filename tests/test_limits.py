"""`ragdiag.inputs.limits` reading: only regular files, in steps as large as the file, UTF-8 only.

Each refusal is shown beside an accepted input of the same kind, so neither the reading nor
the refusing can pass by doing nothing.
"""

from __future__ import annotations

import os
import threading
import time
import tracemalloc

import pytest

from ragdiag.errors import ConfigError, InputDataError
from ragdiag.inputs import limits


def test_a_small_file_under_a_huge_limit_allocates_what_it_holds_not_the_limit(tmp_path):
    p = tmp_path / "records.jsonl"
    p.write_bytes(b'{"key": "a"}\n' * 11_000)  # 143 KB, as in the issue
    tracemalloc.start()
    try:
        blob = limits.read_bytes(p, what="records file", max_bytes=8 << 30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(blob) == 143_000
    assert peak < 4 * 143_000  # the file, a copy, slack; the old read allocated the 8 GiB limit


def test_the_limit_is_the_content_read_not_the_size_the_file_system_reports(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_bytes(b"x" * 1000)
    assert len(limits.read_bytes(p, what="goldset", max_bytes=1000)) == 1000
    with pytest.raises(InputDataError, match=r"g.yaml: the goldset is 1,000 bytes; the limit is 999"):
        limits.read_bytes(p, what="goldset", max_bytes=999)
    # a device reports size 0 and never ends: refused before it is read
    with pytest.raises(InputDataError, match=r"/dev/zero: is a character device; the goldset must be a regular file"):
        limits.read_bytes("/dev/zero", what="goldset")


def test_a_fifo_is_refused_at_once_and_never_opened_blocking(tmp_path):
    fifo = tmp_path / "q.jsonl"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            limits.read_text(fifo, what="query log")
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            done.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():  # unblock the reader so the test process can end, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert isinstance(done[0], InputDataError) and "is a FIFO (named pipe)" in str(done[0])


def test_a_folder_a_dangling_symlink_and_a_symlink_when_not_followed(tmp_path):
    (tmp_path / "d.json").mkdir()
    with pytest.raises(InputDataError, match="is a folder; the entities lexicon must be a regular file"):
        limits.read_text(tmp_path / "d.json", what="entities lexicon")
    (tmp_path / "gone.json").symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(InputDataError, match=r"not found \(a symlink to a missing file\)"):
        limits.read_text(tmp_path / "gone.json", what="entities lexicon")
    real = tmp_path / "real.md"
    real.write_text("text", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(real)
    assert limits.read_text(tmp_path / "link.md", what="document") == "text"  # a user's own symlink: followed
    with pytest.raises(InputDataError, match="is a symlink, which is not followed"):
        limits.read_text(tmp_path / "link.md", what="document", follow_symlinks=False)


@pytest.mark.parametrize("encoding, message", [
    ("utf-16", "is UTF-16 text (it starts with a UTF-16 byte-order mark)"),
    ("utf-32", "is UTF-32 text (it starts with a UTF-32 byte-order mark)"),
    ("utf-16-le", "holds a NUL character at column 2 (UTF-16 text without a byte-order mark?)"),
    ("latin-1", "byte 0xfc at column 12 cannot be decoded (Latin-1 or Windows-1252?)"),
])
def test_other_encodings_are_named_with_the_line(tmp_path, encoding, message):
    p = tmp_path / "a.json"
    text = '{"a": 1,\n "name": "Müller"}'
    p.write_bytes(text.encode(encoding))
    with pytest.raises(InputDataError) as err:
        limits.read_text(p, what="request file")
    assert message in str(err.value) and str(err.value).startswith(f"{p}:")
    assert err.value.line == (2 if encoding == "latin-1" else 1)
    p.write_bytes(text.encode("utf-8-sig"))  # the same text as UTF-8 (with a BOM) is read
    assert limits.read_text(p, what="request file") == text


def test_the_error_class_is_the_callers(tmp_path):
    with pytest.raises(ConfigError, match="SQL template not found"):
        limits.read_text(tmp_path / "missing.sql", what="SQL template", error=ConfigError)


def test_load_json_applies_the_depth_limit_with_the_file(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(InputDataError, match=r"deep.json:1: findings file nests lists and objects deeper than 64"):
        limits.load_json(p, what="findings file")
    assert time.perf_counter() - t0 < 5
    p.write_text("[" * 10 + "]" * 10, encoding="utf-8")
    assert limits.load_json(p, what="findings file") == [[[[[[[[[[]]]]]]]]]]


def test_special_file_names_what_is_not_a_file_or_folder(tmp_path):
    os.mkfifo(tmp_path / "f")
    assert limits.special_file(tmp_path / "f") == "a FIFO (named pipe)"
    assert limits.special_file("/dev/null") == "a character device"
    assert limits.special_file(tmp_path) is None and limits.special_file(tmp_path / "missing") is None
