"""The streaming chunk analyser: `analyse_chunks` reads index records once and builds a `ChunkReport`.

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
"""

from __future__ import annotations

import hashlib
import heapq
import random
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from typing import Any

import numpy as np

from ragdiag.chunks.boundaries import _Chunk, _overlap_words, _summarise
from ragdiag.chunks.cuts import DECISION_CHUNKS, Decisions, judge_document
from ragdiag.chunks.duplicates import batch_numeric, find_duplicates
from ragdiag.chunks.fields import ChunkFields, _order_key, _present
from ragdiag.chunks.histogram import histogram_edges
from ragdiag.chunks.report import ChunkReport
from ragdiag.chunks.structure import fences
from ragdiag.chunks.tokens import _TokenModel, token_counter

MAX_BUFFERED = 20_000
_HTML_TABLE = re.compile(r"</?table\b", re.I)
#: characters of a chunk's raw text kept for the mid-word judgement (its two ends)
RAW_CHARS = 2_400

REOPEN_WINDOW = 64
EXACT_ALL = 10_000
EXACT_EVERY = 20
#: Estimates within this factor range of a size threshold are counted exactly.
BAND = (0.7, 1.4)
EXCERPT_CHARS = 120
DEFAULT_BATCH = 1024


#: document formats with fixed pages: a chunk of one is cited by its page
_PAGED = (".pdf", ".ppt", ".pptx", ".odp", ".djvu", ".ps", ".xps", ".tif", ".tiff", ".epub")


def _paged(name: Any) -> bool:
    """Whether a document name says the document has pages (a PDF, slides, a scan)."""
    if not isinstance(name, str):
        return False
    base = name.split("#", 1)[0].split("?", 1)[0].lower()
    return base.endswith(_PAGED)


def _anchored(name: Any) -> bool:
    """A URL or path with an anchor (``page.html#install``): it cites the place in the page."""
    return isinstance(name, str) and "#" in name and not name.endswith("#") and "page=" not in name


def _excerpt_head(text: str, n: int = EXCERPT_CHARS) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n] + " …"


def _excerpt_tail(text: str, n: int = EXCERPT_CHARS) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else "… " + t[-n:]


def _in_context(end: str, start: str, n: int = EXCERPT_CHARS // 2) -> str:
    """A cut in context: the end of one chunk, ' ⟂ ', the start of the next (either may be
    missing: the first or last chunk of its document)."""
    if not end:
        return _excerpt_head(start)
    if not start:
        return _excerpt_tail(end)
    return f"{_excerpt_tail(end, n)} ⟂ {_excerpt_head(start, n)}"


def _overlap_excerpt(head: str, k: int) -> str:
    return f"{k} words: " + _excerpt_head(" ".join(head.split()[:k]), 100)


def _key_hash(text: str, seed: int) -> float:
    d = hashlib.blake2b(f"{seed}|{text}".encode(), digest_size=8).digest()
    return int.from_bytes(d, "big") / 2**64


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
                 exact: str, min_tokens: int, max_tokens: int, n_examples: int, seed: int,
                 lang: str = "auto") -> None:
        self.f = fields
        self.lang = lang
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
        # short chunks without sentence punctuation: cut tails in punctuated text, but whole short
        # records (titles) in normalised text; decided over the whole index in `report`
        self.short_unpunct_start = self.short_unpunct_end = 0
        self.pairs = self.pairs_overlap = 0
        self.overlap_words: list[int] = []
        self.table_chunks = self.split_table = self.heading_sep = self.list_cut = 0
        self.present = [0, 0, 0, 0, 0]  # document id, page, position, parent id, section title
        self.missing_citation = 0
        self.lacking: dict[str, int] = {}  # citation role -> chunks lacking it where it is needed
        self.unpunctuated = 0
        self.punctuation_moved = 0
        # mid-word cuts (the judgement of `ragdiag chunks`): found through the neighbours'
        # overlap, plus pairs whose raw texts meet letter to letter -- a split word only when the
        # export keeps the whitespace at its cuts, decided over all chunks in `report`
        self.mid_word = 0
        self.split_code = 0
        self.judged_start = self.judged_end = 0
        # the first DECISION_CHUNKS chunk texts decide language, punctuation, whitespace and
        # vocabulary, as in `ragdiag chunks`; documents that close before are judged after
        self.window: list[str] = []
        self.decisions: Decisions | None = None
        self.deferred: list[list[_Chunk]] = []
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
        if self.decisions is None:
            self.window.extend(b[3] for b in batch[: DECISION_CHUNKS - len(self.window)])
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
            # citable by what the corpus has (decided per document when it closes, `_cite`)
            has_sec = bool(sf) and present(rec.get(sf))
            name = doc if doc is not None else (rec.get(df) if df else None)
            cite = (key, has_doc, has_page, has_sec or _anchored(name) or _anchored(key), _paged(name))
            if not s:
                self.empty += 1
                self.start_classes["empty"] = self.start_classes.get("empty", 0) + 1
                self.end_classes["empty"] = self.end_classes.get("empty", 0) + 1
                self._cite([cite])
                continue
            c = _summarise(base + i, order, key, s)
            c.cite = cite
            raw = batch[i][3]
            # the two ends suffice for word edges; an HTML table is kept whole (its tags balance)
            marks = fences(raw)
            if len(raw) <= RAW_CHARS or _HTML_TABLE.search(raw):
                c.raw = raw
            else:
                c.raw = raw[:RAW_CHARS // 2] + "\n\n" + raw[-RAW_CHARS // 2:]
                # fence offsets into the shortened text (those of the dropped middle at its seam)
                drop = len(raw) - len(c.raw)
                marks = [(o if o < RAW_CHARS // 2 else max(RAW_CHARS // 2, o - drop), ch, n, info)
                         for o, ch, n, info in marks]
            c.marks = marks
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
        if sf:
            n_sec = sum(present(b[4].get(sf)) for b in batch)
        for j, v in enumerate((n_doc, n_page, n_pos, n_par, n_sec)):
            self.present[j] += v
        if self.decisions is None and len(self.window) >= DECISION_CHUNKS:
            self._decide()
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
        if self.decisions is None:
            self._decide()
        for doc, buf in self.open.items():
            self.closed.add(doc)
            self._finish(buf)
        self.open.clear()
        self.buffered = 0

    # -- one document's chunks, in position order ------------------------------------
    def _decide(self) -> None:
        """Decide language, punctuation, whitespace and vocabulary on the window (as `ragdiag
        chunks` does on the same records) and judge the documents that waited for it."""
        self.decisions = Decisions.of(self.window, self.lang)
        self.window = []
        deferred, self.deferred = self.deferred, []
        for chunks in deferred:
            self._finish(chunks)

    def _finish(self, chunks: list[_Chunk]) -> None:
        if self.decisions is None:
            self.deferred.append(chunks)
            return
        if len(chunks) > 1:
            chunks.sort(key=lambda c: (_order_key(c.order), c.seq))
        for prev, cur in zip(chunks, chunks[1:], strict=False):
            self.pairs += 1
            prev.next_first, cur.prev_last = cur.first_line, prev.last_line
            k = _overlap_words(prev.tail, cur.head)
            cur.overlap = k
            if k:
                self.pairs_overlap += 1
                self.overlap_words.append(k)
                self.example("overlap", cur.key, partial(_overlap_excerpt, cur.head, k))
            # the chunker moved the full stop to the next chunk (LangChain's keep_separator="start"
            # with ". " as separator): the sentence ended, its punctuation is misplaced
            f = cur.first_line
            if prev.end in ("mid", "heading") and f[:1] in ".!?" and (len(f) == 1 or f[1] in " \\t"):
                prev.end = cur.start = "sentence"
                self.punctuation_moved += 1
                self.example("punctuation_moved", cur.key, partial(_excerpt_head, f))
            # a "heading" at the end that the next chunk continues was a cut sentence
            if prev.end == "heading" and cur.start == "mid":
                prev.end = "mid"
            if prev.ends_table and cur.starts_table and not cur.table_header:
                prev.split_table = prev.split_table or _excerpt_tail(prev.last_line)
                cur.split_table = cur.split_table or _excerpt_head(cur.first_line)
            if prev.end == "list" and (cur.start == "mid" or (
                    cur.first_number is not None and prev.last_number is not None
                    and cur.first_number == prev.last_number + 1)):
                prev.list_cut = prev.list_cut or _excerpt_tail(prev.last_line)
                cur.list_cut = cur.list_cut or _excerpt_head(cur.first_line)
        self._cite([c.cite for c in chunks])
        flags = self._cuts(chunks)
        starts, ends, example = self.start_classes, self.end_classes, self.example
        for j, (c, fl) in enumerate(zip(chunks, flags, strict=True)):
            starts[c.start] = starts.get(c.start, 0) + 1
            ends[c.end] = ends.get(c.end, 0) + 1
            if c.header_no_body and not c.split_table:
                c.split_table = "header without body: " + _excerpt_tail(c.last_line)
            if c.unpunct:
                self.unpunctuated += 1
            if fl.start_mid_sentence is not None:
                self.judged_start += 1
            if fl.end_mid_sentence is not None:
                self.judged_end += 1
            if fl.start_mid_sentence:
                self.mid_start += 1
                example("mid_sentence_start", c.key, partial(_in_context, c.prev_last, c.first_line))
            if fl.end_mid_sentence:
                self.mid_end += 1
                example("mid_sentence_end", c.key, partial(_in_context, c.last_line, c.next_first))
            elif (c.end == "heading" and j + 1 < len(chunks)) or c.heading_only or fl.heading_only:
                self.heading_sep += 1
                example("heading_separated", c.key, partial(_excerpt_tail, c.last_line))
            if fl.end_mid_word:
                self.mid_word += 1
                example("mid_word", c.key, partial(_in_context, c.last_line, c.next_first))
            if fl.end_split_code or fl.start_split_code:
                self.split_code += 1
                example("split_code", c.key, partial(_in_context, c.prev_last if fl.start_split_code and not
                                                     fl.end_split_code else c.last_line,
                                                     c.first_line if fl.start_split_code and not fl.end_split_code
                                                     else c.next_first))
            if c.split_table:
                self.split_table += 1
                example("split_table", c.key, c.split_table)
            if c.list_cut:
                self.list_cut += 1
                example("list_cut", c.key, c.list_cut)

    def _cite(self, cites: list[tuple[str, bool, bool, bool, bool]]) -> None:
        """Citation metadata of one document's chunks, by what the corpus has: the document id,
        and the page where the document has pages (its name says so, or another of its chunks has
        a page), else the section or a URL anchor (Markdown, web pages), unless the document is one
        chunk. A position orders chunks but cites nothing."""
        paged = any(c[2] or c[4] for c in cites) or (self.f.page is not None and not self.f.section_title)
        # a document held in one chunk is cited by its id: there is no place inside it to name
        whole = len(cites) == 1
        for key, has_doc, has_page, has_place, _ in cites:
            what = [] if has_doc else ["document id"]
            if paged and not has_page:
                what.append("page")
            elif not paged and not has_place and not whole:
                what.append("section or anchor")
            if what:
                self.missing_citation += 1
                for w in what:
                    self.lacking[w] = self.lacking.get(w, 0) + 1
                self.example("missing_citation", key, "missing " + ", ".join(what))

    def _cuts(self, chunks: list[_Chunk]) -> list[Any]:
        """Each chunk's cut flags, by the analyser of `ragdiag chunks` (`ragdiag.chunks.cuts`) on
        the document's chunks in order, with the decisions of the whole stream: one judgement."""
        d = self.decisions
        texts = [c.raw for c in chunks]
        flags = judge_document(texts, [c.key for c in chunks], lang=d.lang, vocab=d.vocab,
                               keeps_whitespace=d.keeps_whitespace, punctuated=d.punctuated, wrapped=d.wrapped,
                               marks=[c.marks for c in chunks])
        for c, f in zip(chunks, flags, strict=True):
            # an HTML table cut across chunks (Markdown tables are this analyser's own)
            if f.split_table and not c.split_table and _HTML_TABLE.search(c.raw):
                c.split_table = "HTML table cut: " + (_excerpt_tail(c.last_line) if c.ends_table or
                                                      "<table" in c.raw.lower() else _excerpt_head(c.first_line))
        return flags

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
        edges = histogram_edges(self.max_tokens)  # one width: the bars compare
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
        unpunct, mid_start, mid_end = self.unpunctuated, self.mid_start, self.mid_end
        mid_word = self.mid_word
        d = self.decisions
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
            mid_sentence_start=mid_start, mid_sentence_start_share=_share(mid_start, self.judged_start),
            mid_sentence_end=mid_end, mid_sentence_end_share=_share(mid_end, self.judged_end),
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
            unpunctuated=unpunct, unpunctuated_share=_share(unpunct, n),
            punctuation_moved=self.punctuation_moved, punctuation_moved_share=_share(self.punctuation_moved, n),
            mid_word=mid_word, mid_word_share=_share(mid_word, n),
            citation_lacking=dict(self.lacking),
            split_code=self.split_code, split_code_share=_share(self.split_code, n),
            sentences_judged=bool(d.punctuated) if d is not None else False,
            language=d.lang if d is not None else "",
        )

    def _duplicates(self, h: np.ndarray) -> tuple[int, int, int]:
        exact, groups, near, exact_examples, near_examples = find_duplicates(
            h, self.sigs, self.keys, self.n_examples)
        for ex in exact_examples:
            self.example("exact_duplicate", *ex)
        for ex in near_examples:
            self.example("near_duplicate", *ex)
        return exact, groups, near


def analyse_chunks(records: Iterable[Mapping[str, Any]], *, fields: ChunkFields | None = None,
                   tokenizer: Any = None, max_chunks: int | None = None, sample_seed: int = 0,
                   total_hint: int | None = None, min_tokens: int = 20, max_tokens: int = 512,
                   exact_tokens: bool | None = None, examples: int = 5,
                   batch_size: int = DEFAULT_BATCH, threads: bool = True, lang: str = "auto") -> ChunkReport:
    """Stream `records` once and measure their chunk boundaries (see the package docstring).

    `fields`: which record fields to read (default: the sample's names; see
    `ChunkFields.from_schema`). `tokenizer`: see `token_counter`.
    `exact_tokens`: True counts every chunk with the tokenizer; None (auto)
    counts the first `EXACT_ALL` chunks exactly, then every `EXACT_EVERY`-th
    chunk and every chunk whose estimate lies near `min_tokens` or
    `max_tokens`, and estimates the rest with a model fitted on the exact
    counts; False only estimates. `total_hint` (chunk records in the stream,
    e.g. from ``target.count(filter)``) lets the analysis sample whole
    documents at rate ``max_chunks / total_hint`` instead of stopping after
    the first `max_chunks` chunks. `threads=False` tokenises in the calling thread. `lang`
    (en, de or auto: detected on the first chunks) sets the sentence rules.
    """
    fields = fields or ChunkFields()
    if not fields.content:
        raise ValueError("ChunkFields.content is None: the index has no content field to analyse")
    counter, label, is_exact = token_counter(tokenizer)
    mode = "none" if not is_exact or exact_tokens is False else "all" if exact_tokens else "auto"
    an = _Analyser(fields, counter, mode, int(min_tokens), int(max_tokens), examples, sample_seed, lang)
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

