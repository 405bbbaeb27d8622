"""Parse Azure AI Search `$filter` text into a syntax tree.

A hand-written tokenizer plus recursive-descent parser, so every error can say
where it happened and what was expected. Precedence, high to low:
`not` > comparisons > `and` > `or`. Keywords are lower case only, as in Azure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache

from ragdiag.errors import FilterError
from ragdiag.odata.ast import (
    COMPARISON_OPS,
    RANGE_OPS,
    REVERSED_OP,
    And,
    BoolLiteral,
    Comparison,
    Constant,
    Expr,
    FieldRef,
    Lambda,
    Not,
    Or,
    SearchIn,
    Target,
    VarRef,
)

MAX_DEPTH = 100
"""Deepest nesting of parentheses / `not` / lambdas accepted (guards the recursion)."""
MAX_NUMBER_CHARS = 400
"""Longest number literal accepted (Python refuses integers of more than 4,300 digits)."""

KEYWORDS = frozenset({"and", "or", "not", "true", "false", "null", *COMPARISON_OPS})
UNSUPPORTED_FUNCTIONS = frozenset({
    "search.ismatch", "search.ismatchscoring", "search.score",
    "geo.distance", "geo.intersects",
})
_OPS_TEXT = "(eq, ne, gt, ge, lt, le)"

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<str>'(?:[^']|'')*')
  | (?P<dt>\d{4}-\d\d-\d\d(?P<time>[Tt]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?(?P<zone>[Zz]|[+-]\d\d:\d\d)?)
  | (?P<num>-?\d+(?P<frac>\.\d+)?(?P<exp>[eE][+-]?\d+)?|-INF)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<punct>[(),:/])
    """,
    re.VERBOSE | re.DOTALL,
)
_DT_PARTS = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(?:[Zz]|([+-])(\d\d):(\d\d))"
)
_GLUED = re.compile(r"[A-Za-z0-9_.'\-:]")


@dataclass(frozen=True)
class Token:
    kind: str  # str num dt ident ( ) , : / eof
    value: object
    pos: int
    text: str


def parse(text: str) -> Expr:
    """Parse filter text; raises FilterError with the position and what was expected."""
    if not isinstance(text, str):
        raise FilterError(f"a filter must be a string, not {type(text).__name__}")
    return _parse_cached(text)


@lru_cache(maxsize=2048)
def _parse_cached(text: str) -> Expr:
    return _Parser(text).parse()


def tokenize(text: str) -> list[Token]:
    """Split filter text into tokens; literals are converted to Python values."""
    tokens: list[Token] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch == "'":
                raise FilterError("unterminated string literal (a quote inside a string is written '')",
                                  text=text, position=pos)
            if ch == "-":
                raise FilterError("'-' must start a number (e.g. -5, -INF)", text=text, position=pos)
            raise FilterError(f"unexpected character {ch!r}", text=text, position=pos)
        kind = m.lastgroup
        raw = m.group(0)
        end = m.end()
        if kind == "ws":
            pos = end
            continue
        if kind in ("num", "dt") and end < n and _GLUED.match(text, end):
            raise FilterError(f"malformed number or date-time starting {text[pos:end + 1]!r}",
                              text=text, position=pos)
        if kind == "str":
            tokens.append(Token("str", raw[1:-1].replace("''", "'"), pos, raw))
        elif kind == "num":
            if len(raw) > MAX_NUMBER_CHARS:
                raise FilterError(f"a number literal of {len(raw):,} characters; the limit is "
                                  f"{MAX_NUMBER_CHARS}", text=text, position=pos)
            tokens.append(Token("num", _number(m, raw), pos, raw))
        elif kind == "dt":
            tokens.append(Token("dt", _datetime(m, raw, text, pos), pos, raw))
        elif kind == "ident":
            if raw == "NaN":
                tokens.append(Token("num", float("nan"), pos, raw))
            elif raw == "INF":
                tokens.append(Token("num", float("inf"), pos, raw))
            else:
                tokens.append(Token("ident", raw, pos, raw))
        else:
            tokens.append(Token(raw, raw, pos, raw))
        pos = end
    tokens.append(Token("eof", None, n, ""))
    return tokens


def _number(m: re.Match[str], raw: str) -> int | float:
    if raw == "-INF":
        return float("-inf")
    if m.group("frac") or m.group("exp"):
        return float(raw)
    return int(raw)


def _datetime(m: re.Match[str], raw: str, text: str, pos: int) -> datetime:
    if not m.group("time"):
        raise FilterError(f"{raw!r} is a date without a time; Azure needs a full date-time with a "
                          f"time zone, e.g. {raw}T00:00:00Z", text=text, position=pos)
    if not m.group("zone"):
        raise FilterError(f"date-time {raw!r} has no time zone; add 'Z' (UTC) or an offset like "
                          f"'+02:00'", text=text, position=pos)
    p = _DT_PARTS.fullmatch(raw)
    if p is None:  # pragma: no cover - the token regex already guarantees the shape
        raise FilterError(f"malformed date-time {raw!r}", text=text, position=pos)
    year, month, day, hour, minute, second, frac, sign, oh, om = p.groups()
    try:
        offset = timedelta(hours=int(oh), minutes=int(om)) if sign else timedelta(0)
        if offset >= timedelta(hours=24):
            raise ValueError("offset out of range")
        tz = timezone(-offset if sign == "-" else offset) if offset else UTC
        micro = int((frac or "0")[:6].ljust(6, "0"))
        return datetime(int(year), int(month), int(day), int(hour), int(minute),
                        int(second or 0), micro, tzinfo=tz)
    except ValueError as exc:
        raise FilterError(f"invalid date-time {raw!r}: {exc}", text=text, position=pos) from None


def _describe(tok: Token) -> str:
    return "the end of the filter" if tok.kind == "eof" else repr(tok.text)


def _case_hint(word: str) -> str:
    low = word.lower()
    if low in KEYWORDS and word != low:
        return f"; OData keywords are lower case: write '{low}', not '{word}'"
    return ""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0
        self.scope: list[str] = []  # bound lambda range variables, innermost last

    # ---- helpers ---------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> FilterError:
        t = tok or self.tok
        return FilterError(message, text=self.text, position=t.pos)

    def is_kw(self, word: str, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "ident" and t.value == word

    def is_op(self, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "ident" and t.value in COMPARISON_OPS

    def expect(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what}, found {_describe(self.tok)}")
        return self.advance()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"the filter nests deeper than {MAX_DEPTH} levels")

    # ---- grammar ---------------------------------------------------------------
    def parse(self) -> Expr:
        if self.tok.kind == "eof":
            raise self.error("the filter is empty")
        expr = self.or_expr()
        if self.tok.kind != "eof":
            hint = _case_hint(self.tok.text) if self.tok.kind == "ident" else ""
            if self.tok.kind == ")":
                raise self.error("unbalanced ')': no matching '('")
            raise self.error(f"expected 'and', 'or' or the end of the filter, found "
                             f"{_describe(self.tok)}{hint}")
        return expr

    def or_expr(self) -> Expr:
        items = [self.and_expr()]
        while self.is_kw("or"):
            self.advance()
            items.append(self.and_expr())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self) -> Expr:
        items = [self.unary()]
        while self.is_kw("and"):
            self.advance()
            items.append(self.unary())
        return items[0] if len(items) == 1 else And(tuple(items))

    def unary(self) -> Expr:
        if self.is_kw("not"):
            return self.not_expr()
        return self.comparison()

    def not_expr(self) -> Expr:
        not_tok = self.advance()
        self.enter()
        if self.is_kw("not"):
            operand = self.not_expr()
        else:
            operand_tok = self.tok
            operand = self.not_operand()
            if self.is_op():
                op_tok = self.tok
                rhs = self.peek()
                rhs_text = rhs.text if rhs.kind != "eof" else "..."
                shown = f"{self.text[operand_tok.pos:op_tok.pos].strip()} {op_tok.text} {rhs_text}"
                raise self.error(
                    "'not' binds tighter than comparisons, so Azure rejects a bare comparison "
                    f"after 'not'; write 'not ({shown})'",
                    not_tok,
                )
        self.depth -= 1
        return Not(operand)

    def not_operand(self) -> Expr:
        """An operand that is itself boolean: (expr), field, var, lambda, search.in, true/false."""
        t = self.tok
        if t.kind == "(":
            return self.group()
        if t.kind == "ident":
            if t.value in ("true", "false"):
                self.advance()
                return BoolLiteral(t.value == "true")
            if "." in t.text:
                return self.function()
            if t.value in KEYWORDS:
                raise self.error(f"expected a condition after 'not', found {_describe(t)}")
            return self.path_expr()
        raise self.error(f"expected a condition after 'not' (a boolean field, '(', a lambda, "
                         f"search.in, true or false), found {_describe(t)}")

    def group(self) -> Expr:
        open_tok = self.advance()
        self.enter()
        expr = self.or_expr()
        if self.tok.kind != ")":
            hint = _case_hint(self.tok.text) if self.tok.kind == "ident" else ""
            raise self.error(f"expected ')' to close the '(' at position {open_tok.pos}, found "
                             f"{_describe(self.tok)}{hint}")
        self.advance()
        self.depth -= 1
        if self.is_op():
            raise self.error("a parenthesised expression cannot be compared; compare a field "
                             "with a constant")
        return expr

    def comparison(self) -> Expr:
        t = self.tok
        if t.kind == "(":
            return self.group()
        if t.kind in ("str", "num", "dt") or (t.kind == "ident" and t.value in ("true", "false", "null")):
            if t.kind == "ident" and t.value in ("true", "false") and not self.is_op(self.peek()):
                self.advance()
                return BoolLiteral(t.value == "true")
            return self.constant_first()
        if t.kind == "ident":
            if "." in t.text:
                expr = self.function()
                if self.is_op():
                    raise self.error(f"the result of {t.text}() cannot be compared; use it as a "
                                     "condition on its own")
                return expr
            if t.value in KEYWORDS:
                raise self.error(f"expected a condition, found the keyword {_describe(t)}")
            return self.field_first()
        hint = " (a field comparison, a boolean field, not, '(', a lambda or search.in)"
        raise self.error(f"expected a condition{hint}, found {_describe(t)}")

    def field_first(self) -> Expr:
        start = self.tok
        target = self.path_expr()
        if isinstance(target, Lambda):
            if self.is_op():
                raise self.error("the result of any()/all() cannot be compared; use it as a "
                                 "condition on its own")
            return target
        if self.is_op():
            op = self.advance().value
            value = self.constant(after=f"'{op}'")
            return self.make_comparison(target, str(op), value)
        nxt = self.tok
        if nxt.kind in ("eof", ")") or self.is_kw("and", nxt) or self.is_kw("or", nxt):
            return target  # a bare boolean field
        hint = _case_hint(nxt.text) if nxt.kind == "ident" else _case_hint(target.name)
        raise self.error(f"expected a comparison operator {_OPS_TEXT} after field "
                         f"'{self.text[start.pos:nxt.pos].strip()}', found {_describe(nxt)}{hint}")

    def constant_first(self) -> Expr:
        const_tok = self.tok
        value = self.constant(after=None)
        if not self.is_op():
            raise self.error(f"expected a comparison operator {_OPS_TEXT} after the constant "
                             f"{const_tok.text}, found {_describe(self.tok)}")
        op = str(self.advance().value)
        t = self.tok
        if t.kind != "ident" or t.value in KEYWORDS or "." in t.text:
            what = "another constant" if t.kind in ("str", "num", "dt") or t.value in KEYWORDS else _describe(t)
            raise self.error(f"expected a field after '{const_tok.text} {op}', found {what}; a "
                             "comparison needs a field on one side and a constant on the other")
        target = self.path_expr()
        if isinstance(target, Lambda):
            raise self.error("the result of any()/all() cannot be compared", t)
        return self.make_comparison(target, REVERSED_OP[op], value, op_tok=const_tok)

    def make_comparison(self, target: Target, op: str, value: Constant,
                        op_tok: Token | None = None) -> Comparison:
        if value.value is None and op in RANGE_OPS:
            raise self.error(f"'{op}' cannot compare with null; only 'eq null' and 'ne null' are "
                             "allowed", op_tok or self.tokens[self.i - 1])
        return Comparison(target, op, value)  # type: ignore[arg-type]

    def constant(self, *, after: str | None) -> Constant:
        t = self.tok
        if t.kind in ("str", "num", "dt"):
            self.advance()
            return Constant(t.value)  # type: ignore[arg-type]
        if t.kind == "ident" and t.value in ("true", "false", "null"):
            self.advance()
            return Constant(None if t.value == "null" else t.value == "true")
        if t.kind == "ident" and t.value not in KEYWORDS and "." not in t.text and after:
            raise self.error(f"expected a constant after {after}, found the field {_describe(t)}; "
                             "comparing two fields is not supported by Azure AI Search")
        raise self.error(f"expected a constant (a 'string', number, true, false, null or "
                         f"date-time) after {after or 'here'}, found {_describe(t)}")

    def path_expr(self) -> FieldRef | VarRef | Lambda:
        """`a/b/c`, `x/sub`, or a lambda `path/any(...)` / `path/all(...)`."""
        first = self.expect("ident", "a field name")
        if "." in first.text:
            raise self.error(f"field paths use '/', not '.': write {first.text.replace('.', '/')!r}",
                             first)
        segments = [str(first.value)]
        while self.tok.kind == "/":
            self.advance()
            seg = self.tok
            if seg.kind != "ident" or "." in seg.text:
                raise self.error(f"expected a field name or any/all after '/', found {_describe(seg)}")
            self.advance()
            if seg.value in ("any", "all") and self.tok.kind == "(":
                return self.lambda_expr(self.make_target(segments, first), str(seg.value), seg)
            segments.append(str(seg.value))
        return self.make_target(segments, first)

    def make_target(self, segments: list[str], first: Token) -> FieldRef | VarRef:
        if segments[0] in self.scope:
            return VarRef(segments[0], tuple(segments[1:]))
        return FieldRef(tuple(segments))

    def lambda_expr(self, source: Target, kind: str, kind_tok: Token) -> Lambda:
        self.advance()  # (
        if self.tok.kind == ")":
            self.advance()
            if kind == "all":
                raise self.error(f"all() needs a condition, e.g. {source.name}/all(x: x ne 'a')",
                                 kind_tok)
            return Lambda("any", source)
        var_tok = self.tok
        if var_tok.kind != "ident" or "." in var_tok.text or var_tok.value in KEYWORDS:
            raise self.error(f"expected a range variable after '{kind}(' (e.g. "
                             f"{source.name}/{kind}(x: x eq 'a')), found {_describe(var_tok)}")
        var = str(var_tok.value)
        if var in self.scope:
            raise self.error(f"range variable '{var}' is already in use by an enclosing lambda",
                             var_tok)
        self.advance()
        self.expect(":", f"':' after the range variable '{var}'")
        self.enter()
        self.scope.append(var)
        body = self.or_expr()
        self.scope.pop()
        self.depth -= 1
        if self.tok.kind != ")":
            hint = _case_hint(self.tok.text) if self.tok.kind == "ident" else ""
            raise self.error(f"expected ')' to close {kind}(, found {_describe(self.tok)}{hint}")
        self.advance()
        return Lambda(kind, source, var, body)  # type: ignore[arg-type]

    def function(self) -> SearchIn:
        name_tok = self.advance()
        name = str(name_tok.value)
        if name in UNSUPPORTED_FUNCTIONS:
            raise self.error(f"{name}() is not supported by ragdiag's evaluator", name_tok)
        if name != "search.in":
            if self.tok.kind != "(":
                raise self.error(f"field paths use '/', not '.': write {name.replace('.', '/')!r}",
                                 name_tok)
            raise self.error(f"unknown function {name}(); ragdiag supports search.in()", name_tok)
        self.expect("(", "'(' after search.in")
        t = self.tok
        if t.kind != "ident" or "." in t.text or t.value in KEYWORDS:
            raise self.error("expected a field or range variable as the first argument of "
                             f"search.in, found {_describe(t)}")
        target = self.path_expr()
        if isinstance(target, Lambda):
            raise self.error("search.in needs a field or range variable, not a lambda", t)
        self.expect(",", "',' after the first argument of search.in")
        values = self.expect("str", "a quoted list of values as the second argument of search.in")
        delims: str | None = None
        if self.tok.kind == ",":
            self.advance()
            delims = str(self.expect("str", "a quoted delimiter string as the third argument of "
                                            "search.in").value)
        self.expect(")", "')' to close search.in(")
        return SearchIn(target, str(values.value), delims)
