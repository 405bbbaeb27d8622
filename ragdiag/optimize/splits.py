"""Splitting the goldset: train (search), validation (selection), test (held out for the comparison).

Stratified by route (the profile a question goes to), shuffled with the seed, so each profile
is tuned and selected on its own questions. One split is 60 / 20 / 20; with `folds` = K >= 2
each question is in the test part of exactly one fold, and the rest of that fold is split
75 / 25 into train and validation. A route with fewer than `MIN_ROUTE_CASES` questions is
not tuned: its questions are only ever test questions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdiag.errors import ConfigError

MIN_ROUTE_CASES = 3
TRAIN_SHARE, VALIDATION_SHARE = 0.6, 0.2
FOLD_VALIDATION_SHARE = 0.25
AUTO_FOLDS = 5
#: below this many goldset questions `folds=None` means k-fold (AUTO_FOLDS), above it one split
SMALL_GOLDSET = 100


@dataclass(frozen=True)
class Split:
    """Case ids of one split (or one fold) by role."""

    train: tuple[str, ...]
    validation: tuple[str, ...]
    test: tuple[str, ...]

    def role_of(self, case_id: str) -> str | None:
        for role in ("train", "validation", "test"):
            if case_id in getattr(self, role):
                return role
        return None


def resolve_folds(folds: int | None, n_cases: int) -> int:
    """The number of folds to use: `folds` checked, or the automatic choice when None."""
    if folds is None:
        return AUTO_FOLDS if n_cases < SMALL_GOLDSET else 1
    if not isinstance(folds, int) or isinstance(folds, bool) or folds < 1:
        raise ConfigError(f"--folds must be 1 (one train/validation/test split) or K >= 2 (k-fold), "
                          f"got {folds!r}")
    if folds > 1 and folds > n_cases:
        raise ConfigError(f"--folds {folds} needs at least {folds} goldset questions, the goldset has "
                          f"{n_cases}; use fewer folds")
    return folds


def _strata(cases: Sequence[Any], route_of: Callable[[Any], str], seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for c in cases:
        out.setdefault(route_of(c), []).append(c.id)
    for ids in out.values():
        ids.sort()
        rng.shuffle(ids)
    return dict(sorted(out.items()))


def _train_validation(ids: Sequence[str], validation_share: float) -> tuple[list[str], list[str]]:
    n_val = max(1, round(len(ids) * validation_share)) if len(ids) >= 2 else 0
    return list(ids[n_val:]), list(ids[:n_val])


def split_cases(cases: Sequence[Any], route_of: Callable[[Any], str], *, seed: int = 0,
                folds: int = 1) -> list[Split]:
    """One `Split` (folds = 1) or K folds, stratified by route and reproducible from the seed."""
    strata = _strata(cases, route_of, seed)
    if folds == 1:
        train: list[str] = []
        val: list[str] = []
        test: list[str] = []
        for ids in strata.values():
            if len(ids) < MIN_ROUTE_CASES:
                test += ids
                continue
            n_test = max(1, round(len(ids) * (1 - TRAIN_SHARE - VALIDATION_SHARE)))
            n_val = max(1, round(len(ids) * VALIDATION_SHARE))
            test += ids[:n_test]
            val += ids[n_test:n_test + n_val]
            train += ids[n_test + n_val:]
        return [Split(tuple(train), tuple(val), tuple(test))]
    out = []
    for k in range(folds):
        train, val, test = [], [], []
        for ids in strata.values():
            held = [x for i, x in enumerate(ids) if i % folds == k]
            rest = [x for i, x in enumerate(ids) if i % folds != k]
            test += held
            if len(ids) < MIN_ROUTE_CASES:
                continue  # too few to tune: only ever test questions
            t, v = _train_validation(rest, FOLD_VALIDATION_SHARE)
            train += t
            val += v
        out.append(Split(tuple(train), tuple(val), tuple(test)))
    return out


def final_split(cases: Sequence[Any], route_of: Callable[[Any], str], *, seed: int = 0) -> Split:
    """Every question in train or validation (75 / 25): the split the written k-fold policy is
    searched on after the folds estimated how well the procedure generalises."""
    train: list[str] = []
    val: list[str] = []
    for ids in _strata(cases, route_of, seed).values():
        if len(ids) < MIN_ROUTE_CASES:
            continue
        t, v = _train_validation(ids, FOLD_VALIDATION_SHARE)
        train += t
        val += v
    return Split(tuple(train), tuple(val), ())


__all__ = ["AUTO_FOLDS", "MIN_ROUTE_CASES", "SMALL_GOLDSET", "Split", "final_split", "resolve_folds",
           "split_cases"]
