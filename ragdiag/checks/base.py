"""The check contract: declared inputs, a `Verdict` that collects observations, no pass on nothing.

A built-in check subclasses `Check`, declares the audit inputs it `needs` (enforced by the
registry's `run_check`: a missing input gives ``skipped`` with what to supply, before the
check runs) and implements `evaluate(ctx, spec, v)`, recording into the `Verdict`:

- ``v.observed(what, n)``: positive evidence, something examined and judged (a profile's
  pool measured, a security mechanism verified, a filter clause classified);
- ``v.fail(name, **params)`` / ``v.warn(...)``: faults, as catalogue messages;
- ``v.note(...)``, ``v.recommend(...)``, ``v.metric(...)``, ``v.table(...)``, ``v.location(...)``;
- ``v.effect(metric, before, after, p=..., n=..., action=name, scope=name, **params)``: a
  measured effect of a change (the metric before and after it on the same questions), which
  the report turns into a priority with its number;
- ``v.requests(run)``: the requests it measured (failures are summed across runs, the first
  distinct reasons kept);
- ``v.passed(name, ...)``: the headline of a pass, saying what was observed;
- ``v.nothing_observed(name, ...)``: why there is nothing to judge;
- ``v.skip(name, ...)``: stop now, skipped with a reason.

`Verdict.finish` decides the status in one place:

1. an explicit skip is ``skipped``;
2. more failed requests than the spec's ``max_failed_request_share`` is ``error`` (a
   ``fail`` that was confirmed on what was observed stays ``fail``, marked incomplete);
3. any fail is ``fail``, any warning ``warn``;
4. **``pass`` requires positive evidence**: with no observation the status is ``skipped``
   with the nothing-observed reason.

Texts are `Message` ids resolved in the check's spec (``[messages.<name>]``) and then in
``ragdiag/checks/common.toml`` (``common.<name>``), so a finding renders in any language.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from importlib.resources import files
from typing import Any, ClassVar

from ragdiag.errors import RagdiagError
from ragdiag.model.findings import Effect, Evidence, Finding, Location, RequestFailure
from ragdiag.model.messages import Catalogue, Message, render

__all__ = [
    "INPUTS",
    "Check",
    "Verdict",
    "SkipCheck",
    "common_catalogue",
    "common_labels",
    "catalogue_for",
    "labels_for",
    "missing_inputs",
    "skipped_for_missing",
    "localize",
]

#: Audit inputs a check may declare in `needs`; "a|b" means either one.
INPUTS: tuple[str, ...] = ("target", "profiles", "questions", "goldset", "query_log", "identities",
                           "client_code", "traffic", "traces")
MAX_HEADLINE_PARTS = 3
MAX_FAILURE_REASONS = 5
DEFAULT_MAX_FAILED_SHARE = 0.02


class SkipCheck(Exception):
    """Raised by `Verdict.skip` to end a check early as ``skipped``."""


# ---- catalogues ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _common_tables() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    from ragdiag.inputs.checklist import _text_tables
    from ragdiag.inputs.tomlfile import TomlFile

    path = files("ragdiag.checks") / "common.toml"
    tf = TomlFile.load(str(path))

    def err(message: str, key: str) -> RagdiagError:
        return tf.error(message, "", key)

    return (_text_tables(tf.data.get("messages", {}), "messages", err),
            _text_tables(tf.data.get("labels", {}), "labels", err))


@functools.lru_cache(maxsize=1)
def _observed_tables() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """The texts of observed evidence (ids "observed.<name>", ragdiag/checks/observed.toml)."""
    from ragdiag.inputs.checklist import _text_tables
    from ragdiag.inputs.tomlfile import TomlFile

    tf = TomlFile.load(str(files("ragdiag.checks") / "observed.toml"))

    def err(message: str, key: str) -> RagdiagError:
        return tf.error(message, "", key)

    return (_text_tables(tf.data.get("messages", {}), "messages", err),
            _text_tables(tf.data.get("labels", {}), "labels", err))


def common_catalogue() -> Catalogue:
    cat = Catalogue()
    cat.add("common", _common_tables()[0])
    cat.add("observed", _observed_tables()[0])
    return cat


def common_labels() -> dict[str, dict[str, str]]:
    return {**_observed_tables()[1], **_common_tables()[1]}


def catalogue_for(specs: Iterable[Any]) -> Catalogue:
    """The catalogue of the common messages and every spec's own (ids ``<check_id>.<name>``)."""
    cat = common_catalogue()
    for spec in specs:
        cat.add(spec.id, getattr(spec, "messages", {}) or {})
    return cat


def labels_for(specs: Iterable[Any]) -> dict[str, dict[str, str]]:
    """Label key -> texts: the common labels, overridden by each spec's own."""
    out = common_labels()
    for spec in specs:
        out.update(getattr(spec, "labels", {}) or {})
    return out


def localize(result: Any, lang: str, specs: Mapping[str, Any] | Iterable[Any] | None = None) -> Any:
    """A `Finding` or `AuditResult` with every computed text rendered in `lang`.

    Each finding's column labels come from its own spec first, then the common labels
    (two checks may label the same key differently).
    """
    from ragdiag.model.findings import AuditResult

    if specs is None:
        from ragdiag.inputs.checklist import load_checklist

        specs = load_checklist()
    items = list(specs.values()) if isinstance(specs, Mapping) else list(specs)
    by_id = {s.id: s for s in items}
    cat = catalogue_for(items)

    def one(f: Finding) -> Finding:
        own = by_id.get(f.check_id)
        return f.localized(lang, cat, labels_for([own] if own is not None else []))

    if isinstance(result, AuditResult):
        return replace(result, findings=tuple(one(f) for f in result.findings))
    return one(result)


# ---- inputs ----------------------------------------------------------------------------------
def _alternatives(need: str) -> list[str]:
    return [n.strip() for n in need.split("|") if n.strip()]


def missing_inputs(needs: Sequence[str], ctx: Any) -> list[str]:
    """The requirements of `needs` the context cannot meet ("a|b" is met by either)."""
    has = getattr(ctx, "has", None)
    if not callable(has):
        return []
    return [need for need in needs if not any(has(n) for n in _alternatives(need))]


def skipped_for_missing(check_id: str, missing: Sequence[str], lang: str = "en",
                        catalogue: Catalogue | None = None) -> Finding:
    """The ``skipped`` finding for inputs a check needs and the audit lacks: what to supply."""
    cat = catalogue or common_catalogue()
    reasons = [Message(f"common.input_missing_{n}") if f"common.input_missing_{n}" in cat
               else Message("common.input_missing", {"input": n})
               for need in missing for n in _alternatives(need)[:1]]
    names = list(dict.fromkeys(n for need in missing for n in _alternatives(need)))  # each input once
    supply = [Message(f"common.supply_{n}") if f"common.supply_{n}" in cat
              else Message("common.supply_input", {"input": n})
              for n in names]
    reason = Message("common.skipped_missing", {"reasons": tuple(reasons)})
    recs = (Message("common.to_run_supply", {"what": tuple(supply)}),)
    return Finding(check_id=check_id, status="skipped",
                   headline=render(Message("common.skipped", {"reason": reason}), lang, cat),
                   recommendations=tuple(render(r, lang, cat) for r in recs),
                   skipped_reason=render(reason, lang, cat),
                   headline_msgs=(Message("common.skipped", {"reason": reason}),),
                   recommendation_msgs=recs, skipped_msg=reason)


# ---- the verdict -----------------------------------------------------------------------------
class Verdict:
    """Collects what a check observed and decides status, headline and recommendations."""

    def __init__(self, check_id: str, spec: Any = None, *, lang: str = "en",
                 catalogue: Catalogue | None = None, labels: Mapping[str, Mapping[str, str]] | None = None
                 ) -> None:
        self.check_id = check_id
        self.spec = spec
        self.lang = lang
        if catalogue is None:
            catalogue = catalogue_for([spec] if spec is not None and hasattr(spec, "messages") else [])
        self.catalogue = catalogue
        self.labels = dict(labels) if labels is not None else labels_for([spec] if spec is not None else [])
        self._fails: list[Message] = []
        self._warns: list[Message] = []
        self._notes: list[Message] = []
        self._recs: list[Message] = []
        self._passed: Message | None = None
        self._nothing: Message | None = None
        self._skip: Message | None = None
        self._error: Message | None = None
        self.metrics: dict[str, Any] = {}
        self._tables: list[Evidence] = []
        self._locations: list[Location] = []
        self._effects: list[Effect] = []
        self.observations: Counter[str] = Counter()
        self._requested = 0
        self._failed = 0
        self._reasons: Counter[tuple[str, str | None]] = Counter()
        self.figures: tuple[str, ...] = ()

    # -- messages --------------------------------------------------------------------------------
    def msg(self, name: str, /, **params: Any) -> Message:
        """A message of this check (``name``) or a common one (``common.name``)."""
        if "." in name:
            return Message(name, params)
        own = f"{self.check_id}.{name}"
        if own in self.catalogue or f"common.{name}" not in self.catalogue:
            return Message(own, params)
        return Message(f"common.{name}", params)

    def text(self, m: Message) -> str:
        return render(m, self.lang, self.catalogue)

    # -- what was observed -------------------------------------------------------------------------
    def observed(self, what: str, n: int = 1) -> None:
        """Count positive evidence: `n` items of kind `what` were examined and judged."""
        if n > 0:
            self.observations[what] += int(n)

    @property
    def has_observations(self) -> bool:
        return sum(self.observations.values()) > 0

    def fail(self, name: str, /, **params: Any) -> Message:
        m = self.msg(name, **params)
        self._fails.append(m)
        return m

    def warn(self, name: str, /, **params: Any) -> Message:
        m = self.msg(name, **params)
        self._warns.append(m)
        return m

    def note(self, name: str, /, **params: Any) -> Message:
        """A remark appended to the headline (a part that did not run, a scope limit)."""
        m = self.msg(name, **params)
        self._notes.append(m)
        return m

    def recommend(self, name: str, /, **params: Any) -> Message:
        m = self.msg(name, **params)
        if m not in self._recs:
            self._recs.append(m)
        return m

    def passed(self, name: str, /, **params: Any) -> None:
        """The headline if the check passes: what was observed and judged."""
        self._passed = self.msg(name, **params)

    def nothing_observed(self, name: str, /, **params: Any) -> None:
        """Why there is nothing to judge (the skip reason when no observation is made)."""
        self._nothing = self.msg(name, **params)

    def skip(self, name: str, /, **params: Any) -> None:
        """End the check now as ``skipped`` with this reason."""
        self._skip = self.msg(name, **params)
        raise SkipCheck(name)

    # -- observed evidence (ragdiag.checks._observed) ------------------------------------------------
    @property
    def skipped(self) -> bool:
        return self._skip is not None

    def unskip(self) -> None:
        """Forget an explicit skip: observed traffic judges what the other inputs could not."""
        self._skip = None

    @property
    def has_pass_headline(self) -> bool:
        return self._passed is not None

    def retract(self, *names: str, when: Callable[[Message], bool] | None = None) -> list[Message]:
        """Withdraw the fails and warnings with these message names (those `when` accepts, by their
        parameters), e.g. a code-derived fault that the observed traffic contradicts; returns what
        was withdrawn. Locations named ``loc_<name>`` go with them (all of them, without `when`)."""
        ids = {n if "." in n else f"{self.check_id}.{n}" for n in names}

        def hit(m: Message) -> bool:
            return m.id in ids and (when is None or when(m))

        gone = [m for m in self._fails + self._warns if hit(m)]
        self._fails = [m for m in self._fails if not hit(m)]
        self._warns = [m for m in self._warns if not hit(m)]
        if gone:
            loc_ids = {i.replace(".", ".loc_", 1) for i in ids}
            self._locations = [loc for loc in self._locations if loc.message_msg is None
                               or loc.message_msg.id not in loc_ids
                               or (when is not None and not when(loc.message_msg))]
        return gone

    def error(self, name: str, /, **params: Any) -> None:
        """The check could not finish (status ``error``), e.g. the target refused what it needs."""
        self._error = self.msg(name, **params)

    @property
    def fails(self) -> tuple[Message, ...]:
        return tuple(self._fails)

    @property
    def warns(self) -> tuple[Message, ...]:
        return tuple(self._warns)

    # -- metrics, evidence, locations ----------------------------------------------------------------
    def metric(self, name: str, value: Any) -> None:
        self.metrics[name] = value

    def table(self, key: str, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
              note: str | None = None, **params: Any) -> Evidence:
        """An evidence table: stable `key`, title message `title`, column label keys `columns`.

        Column labels come from the catalogue's labels (``[labels.<key>]``), formatted with
        `params`, so they render in the audit's language; the key is what figures read.
        """
        cols = tuple(columns)
        title_msg = self.msg(title, **params)
        note_msg = self.msg(note, **params) if note else None
        grid: list[tuple[Any, ...]] = []
        cell_msgs: list[tuple[int, int, Message]] = []
        for i, row in enumerate(rows):  # cells may be messages: rendered now, re-rendered per language
            cells = list(row)
            for j, cell in enumerate(cells):
                if isinstance(cell, Message):
                    cell_msgs.append((i, j, cell))
                    cells[j] = self.text(cell)
            grid.append(tuple(cells))
        ev = Evidence(title=self.text(title_msg), columns=tuple(self._label(c, params) for c in cols),
                      rows=tuple(grid), note=self.text(note_msg) if note_msg else "",
                      key=key, column_keys=cols, title_msg=title_msg, note_msg=note_msg,
                      cell_msgs=tuple(cell_msgs))
        self._tables = [t for t in self._tables if t.key != key] + [ev]
        return ev

    def _label(self, key: str, params: Mapping[str, Any]) -> str:
        texts = self.labels.get(key) or {}
        template = texts.get(self.lang) or texts.get("en")
        if not template:
            return key
        try:
            return template.format(**{k: v for k, v in params.items()})
        except (KeyError, ValueError, IndexError):
            return template

    def effect(self, metric: str, before: Any, after: Any, *, action: str, scope: str | None = None,
               p: Any = None, n: int | None = None, delta: Any = None, test: str = "paired_ttest",
               scope_params: Mapping[str, Any] | None = None, **params: Any) -> Effect:
        """Record a measured effect: `metric` `before` and `after` a change, on the same questions.

        `action` names the message saying what the change is (with `params`), `scope` the
        message saying where it was measured (with `scope_params`, default `params` plus `n`);
        `p` is the paired test's p-value, `n` the number of paired questions, `delta` after -
        before (computed when omitted).
        """
        a = self.msg(action, **params)
        sp = dict(scope_params) if scope_params is not None else {"n": n, **params}
        sc = self.msg(scope, **sp) if scope else None
        e = Effect(metric=metric, before=before, after=after, delta=delta, p=p, n=n, test=test,
                   action=self.text(a), scope=self.text(sc) if sc else "", action_msg=a, scope_msg=sc)
        self._effects.append(e)
        return e

    @property
    def effects(self) -> tuple[Effect, ...]:
        return tuple(self._effects)

    def location(self, file: str, line: int, name: str | None = None, /, *, level: str = "warning",
                 **params: Any) -> None:
        """A code location this finding points at (SARIF `physicalLocation`)."""
        m = self.msg(name, **params) if name else None
        self._locations.append(Location(file=str(file), line=int(line or 1), message=self.text(m) if m else "",
                                        level=level, message_msg=m))

    # -- requests --------------------------------------------------------------------------------
    def requests(self, results: Any, profiles: Sequence[str | None] | None = None) -> None:
        """Record executed requests: a `GoldRun` (profiles from its queries) or a list of results.

        Counts are summed over every call, so a check's incompleteness covers all its runs.
        """
        from ragdiag.engine.runner import Failure

        if hasattr(results, "queries") and hasattr(results, "results"):
            pairs = [(q.profile, r) for q, r in zip(results.queries, results.results, strict=True)]
        else:
            items = list(results)
            profs = list(profiles) if profiles is not None else [None] * len(items)
            pairs = list(zip(profs, items, strict=True))
        for profile, r in pairs:
            self._requested += 1
            if isinstance(r, Failure):
                self._failed += 1
                self._reasons[(r.reason, profile)] += 1

    def count_requests(self, requested: int, failed: int = 0, reason: str | None = None,
                       profile: str | None = None) -> None:
        """Record requests measured elsewhere (e.g. the audit's ablation) as this check's own:
        `failed` of `requested` failed, for `reason`."""
        self._requested += int(requested)
        if failed:
            self._failed += int(failed)
            self._reasons[(reason or "request failed", profile)] += int(failed)

    @property
    def failed_share(self) -> float:
        return self._failed / self._requested if self._requested else 0.0

    def _max_failed_share(self) -> float:
        spec = self.spec
        if spec is not None and getattr(spec, "has_threshold", None) and spec.has_threshold(
                "max_failed_request_share"):
            return float(spec.threshold("max_failed_request_share"))
        return DEFAULT_MAX_FAILED_SHARE

    # -- the decision -------------------------------------------------------------------------------
    def finish(self, *, figures: Sequence[str] = ()) -> Finding:
        """The finding: status decided by the rules in the module docstring."""
        incomplete: dict[str, int] = {}
        failures: tuple[RequestFailure, ...] = ()
        if self._failed:
            incomplete = {"failed_requests": self._failed, "requests": self._requested}
            failures = tuple(RequestFailure(reason, profile, n) for (reason, profile), n
                             in self._reasons.most_common(MAX_FAILURE_REASONS))
        over = bool(self._failed) and self.failed_share > self._max_failed_share()
        if over:
            incomplete["above_threshold"] = 1
        parts: list[Message]
        skipped: Message | None = None
        if self._skip is not None:
            status, skipped = "skipped", self._skip
            parts = [self.msg("common.skipped", reason=self._skip)]
        elif self._error is not None:
            status, parts = "error", [self._error]
        elif over and not self._fails:
            status = "error"
            parts = [self._failed_message()] + self._limited(self._warns)
        elif self._fails:
            status, parts = "fail", self._limited(self._fails)
            if over:
                parts = [self._failed_message()] + parts
        elif self._warns:
            status, parts = "warn", self._limited(self._warns)
        elif not self.has_observations:
            status = "skipped"
            skipped = self._nothing or self.msg("common.nothing_observed")
            parts = [self.msg("common.skipped", reason=skipped)]
        else:
            status = "pass"
            parts = [self._passed or self.msg("common.passed_generic", what=self._observed_text())]
        if status not in ("skipped",):
            parts = parts + self._notes
        if self._failed and not over and status != "skipped":
            parts.append(self.msg("common.some_requests_failed", failed=self._failed,
                                  requests=self._requested))
        recs = tuple(self._recs) if status != "skipped" or self._skip is None else ()
        if status == "skipped" and not recs:
            recs = ()
        effects = tuple(self._effects) if status != "skipped" else ()
        return Finding(
            check_id=self.check_id, status=status,
            headline="; ".join(self.text(m) for m in parts),
            metrics=self.metrics, evidence=tuple(self._tables),
            recommendations=tuple(dict.fromkeys(self.text(m) for m in recs)),
            incomplete=incomplete, failures=failures,
            skipped_reason=self.text(skipped) if skipped else "",
            figures=tuple(figures) or self.figures,
            observed=dict(self.observations), locations=tuple(self._locations),
            headline_msgs=tuple(parts), recommendation_msgs=recs, skipped_msg=skipped,
            more_msgs=tuple(getattr(self, "_more", ())) if status in ("fail", "warn", "error") else (),
            effects=effects, priority=self._priority(status, effects),
        )

    def _priority(self, status: str, effects: tuple[Effect, ...]) -> str:
        """``security`` when a failure is one the spec marks as a security fault (``[extras]
        security_failures``: message names, or ``["*"]`` for every failure of the check);
        ``measured`` with a significant improving effect; else ``unmeasured`` (fail, warn) or
        ``none``."""
        marked = (getattr(self.spec, "extras", None) or {}).get("security_failures") or ()
        if status == "fail" and marked:
            names = {m.id.split(".", 1)[-1] for m in self._fails}
            if "*" in marked or names & set(marked):
                return "security"
        if status not in ("fail", "warn"):
            return "none"
        return "measured" if any(e.improves and e.significant for e in effects) else "unmeasured"

    def _limited(self, msgs: list[Message]) -> list[Message]:
        """The headline's first parts and "(+N more)"; the parts cut go to `Finding.more_msgs`."""
        if len(msgs) <= MAX_HEADLINE_PARTS:
            return list(msgs)
        self._more = list(msgs[MAX_HEADLINE_PARTS:])
        return list(msgs[:MAX_HEADLINE_PARTS]) + [self.msg("common.and_more", n=len(msgs) - MAX_HEADLINE_PARTS)]

    def _failed_message(self) -> Message:
        reasons = tuple(f"{reason}" + (f" ({profile})" if profile else "")
                        for (reason, profile), _n in self._reasons.most_common(2))
        return self.msg("common.requests_failed", failed=self._failed, requests=self._requested,
                        reasons=reasons)

    def _observed_text(self) -> str:
        return ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in self.observations.items())


# ---- the check base --------------------------------------------------------------------------
class Check:
    """Base of the built-in checks: declared inputs, `evaluate` into a `Verdict`, a figure.

    Subclasses set ``id``, ``needs`` (input names from `INPUTS`; "a|b" for either) and
    implement `evaluate`. With ``figure_id`` set, `draw(finding, lang)` returns a matplotlib
    figure drawn from the finding's evidence tables (read by key), or None.

    This is the class extensions subclass (``ragdiag.extend.Check``); a plugin that does not
    subclass it needs ``id``, ``needs`` and ``run(ctx, spec) -> Finding`` (`CheckProtocol`).
    """

    id: ClassVar[str] = ""
    needs: ClassVar[tuple[str, ...]] = ()
    #: inputs used when present (documentation, and the plan)
    uses: ClassVar[tuple[str, ...]] = ()
    figure_id: ClassVar[str | None] = None

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        """Judge what the audit offers, recording observations, faults and texts into `v`."""
        raise NotImplementedError(f"check '{self.id}' ({type(self).__qualname__}) must implement "
                                  "evaluate(ctx, spec, v)")

    def run(self, ctx: Any, spec: Any) -> Finding:
        lang = getattr(ctx, "lang", "en")
        v = Verdict(self.id, spec, lang=lang)
        if self.figure_id:
            v.figures = (self.figure_id,)
        reads = getattr(ctx, "code_scan_reads", 0)
        try:
            self.evaluate(ctx, spec, v)
        except SkipCheck:
            pass
        if getattr(ctx, "code_scan_reads", 0) > reads:  # the check judged the client's code
            _note_unreadable_code(v, getattr(ctx, "_scan", None))
        if getattr(ctx, "observed", None) is not None:
            self.observe(ctx, spec, v)
        return v.finish()

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:
        """Add what the application was observed sending (recorded traffic, traces) to the verdict;
        checks that traffic informs override this (`ragdiag.checks._observed`)."""

    def draw(self, finding: Finding, lang: str = "en") -> Any:
        """The check's figure from its finding's evidence, or None (no figure)."""
        return None


def _note_unreadable_code(v: Verdict, scan: Any) -> None:
    """Parts of the client's code the scanner could not read make a check's verdict a warning
    naming them (or a note beside a failure): a verdict on a smaller code base is not one on the
    whole code."""
    if scan is None:
        return
    from ragdiag.codescan.tree import unreadable

    parts = unreadable(getattr(scan, "skipped", ()))
    if not parts:
        return
    names = ", ".join(s.file for s in parts[:5]) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")
    v.metric("unreadable_code_paths", len(parts))
    if v.fails:
        v.note("common.code_unreadable", n=len(parts), paths=names)
    else:
        v.warn("common.code_unreadable", n=len(parts), paths=names)
