"""Checks, before a fit, that the data look like what the model assumes.

The model assumes independent, identically distributed rows of continuous variables, each a
function of its parents plus its own noise (``docs/guide/assumptions.md``). Tables as people
bring them break that in a few recurring ways, each of which the fit turns into confident
edges without a word: a binary or few-valued column, an index or calendar column, rows in
time order, two columns that are nearly copies, a column whose variance is one spike.
``warn_assumptions`` names the columns of each and what to do, in one
``AssumptionWarning`` per kind, before any fitting. Pure numpy: no JAX.

The thresholds are set so that data from the model never trip them: the simulator's linear
and MLP data (p 5-50, n 50-2000, five seeds) and the Sachs cells, raw or log-transformed,
with their experimental conditions (``tests/test_assumptions.py``;
``python -m benchmarks.studies.assumptions`` prints every statistic beside its threshold).
"""

from __future__ import annotations

import re
import warnings

import numpy as np

GUIDE = "docs/guide/assumptions.md"
"""The user-guide page every warning points to (with the anchor of its section)."""
_SHOWN = 8

FEW_VALUES = 5
"""A column with at most this many distinct values (and at most a quarter as many as rows)
is few-valued: binary, a category code or a rating, not a continuous variable."""
CALENDAR_WORDS = frozenset({"year", "yr", "quarter", "qtr", "month", "week", "weekday", "day",
                            "date", "datetime", "timestamp", "id", "index", "idx"})
"""Words of a column name (split at non-letters and at camelCase) that mark an index or a
calendar column. Not ``time``: a duration (survival time, reaction time) is a variable."""
SPIKE_SHARE = 0.95
"""A column of at least ``SPIKE_MIN_ROWS`` rows one of whose values makes up this share of
its sum of squared deviations is a spike: a constant column with one other value reaches
(n − 1)/n, one gross value in a continuous column nearly 1. The simulator's columns reach
0.66 (exponential noise, n = 50), the raw Sachs intensities 0.41; a lognormal column
(σ = 1) of 50 rows passes 0.95 with probability 0.001."""
SPIKE_MIN_ROWS = 25
LAG1_FLOOR = 0.4
"""``warn_assumptions`` calls the rows time-ordered when the median over columns of the
absolute lag-1 autocorrelation exceeds ``max(LAG1_FLOOR, LAG1_SDS / sqrt(n))``."""
LAG1_SDS = 4.0
"""In rows in random order each column's lag-1 autocorrelation is about N(0, 1/n), so the
median of their absolute values exceeds 4/√n with probability below 1e-4 even for a single
column (the simulator's data reach 1.8/√n); the floor keeps weaker order effects of long
tables quiet: the raw Sachs cells, without their conditions, reach 0.30 (their nine
experiments come in blocks; log-transformed 0.56, warned). Time series reach 0.8-1.0."""
NEAR_DUPLICATE = 0.999
"""Columns whose absolute correlation is at least this (but not exactly 1, which
``prodag.inputs.diagnostics.warn_collinear`` names) are near-duplicates. The simulator's data reach
0.93, the Sachs cells 0.99."""


class AssumptionWarning(UserWarning):
    """The data look unlike what the model assumes (``docs/guide/assumptions.md``)."""


def name_words(name: str) -> list[str]:
    """The lower-case words of a column name: ``"patientID_2"`` → ``["patient", "id", "2"]``."""
    return [word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]


def calendar_columns(data: np.ndarray, names: list[str]) -> dict[int, str]:
    """The index-like and calendar columns of ``data (n, p)``, each with the reason: a name
    with a ``CALENDAR_WORDS`` word, values sorted over the rows (more than ``FEW_VALUES``
    distinct), or distinct integers filling a range not much wider than the rows (a row
    number or an ID, shuffled or not)."""
    n = data.shape[0]
    found = {}
    for j, name in enumerate(names):
        column = data[:, j]
        steps = np.diff(column)
        distinct = len(np.unique(column))
        if CALENDAR_WORDS.intersection(name_words(str(name))):
            found[j] = "named like a calendar or an index"
        elif distinct > FEW_VALUES and (np.all(steps >= 0) or np.all(steps <= 0)):
            found[j] = "sorted over the rows"
        elif (n >= 10 and distinct == n and np.all(column == np.round(column))
              and np.ptp(column) < 1.5 * n):
            found[j] = "distinct integers, like a row number or an ID"
    return found


def spike_columns(data: np.ndarray, share: float = SPIKE_SHARE) -> dict[int, int]:
    """``{column: row}`` of the columns of ``data (n, p)`` one of whose values (in that row)
    makes up at least ``share`` of the column's sum of squared deviations (none below
    ``SPIKE_MIN_ROWS`` rows)."""
    if data.shape[0] < SPIKE_MIN_ROWS:
        return {}
    squares = (data - data.mean(axis=0)) ** 2
    rows = np.argmax(squares, axis=0)
    largest = squares[rows, np.arange(data.shape[1])] / squares.sum(axis=0)
    return {int(j): int(rows[j]) for j in np.flatnonzero(largest >= share)}


def few_valued_columns(data: np.ndarray) -> dict[int, np.ndarray]:
    """``{column: its distinct values}`` of the columns of ``data (n, p)`` with at most
    ``FEW_VALUES`` distinct values and at most a quarter as many as rows."""
    n = data.shape[0]
    found = {}
    for j in range(data.shape[1]):
        values = np.unique(data[:, j])
        if len(values) <= FEW_VALUES and len(values) <= n / 4:
            found[j] = values
    return found


def near_duplicate_pairs(data: np.ndarray,
                         limit: float = NEAR_DUPLICATE) -> list[tuple[int, int, float]]:
    """``(j, k, correlation)``, ``j < k``, of the column pairs of ``data (n, p)`` whose
    absolute correlation is at least ``limit`` but not 1 within
    ``prodag.inputs.diagnostics.COLLINEAR_TOLERANCE`` (exact copies are named there)."""
    from prodag.inputs.diagnostics import COLLINEAR_TOLERANCE

    centred = data - data.mean(axis=0)
    scaled = centred / np.linalg.norm(centred, axis=0)
    correlation = scaled.T @ scaled
    strength = np.abs(correlation)
    near = (strength >= limit) & (strength <= 1 - COLLINEAR_TOLERANCE)
    j, k = np.nonzero(np.triu(near, 1))
    return [(int(a), int(b), float(correlation[a, b])) for a, b in zip(j, k)]


def lag1_autocorrelation(data: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Each column's lag-1 autocorrelation over the rows of ``data (n, p)`` ``(p,)``; with
    ``groups (n,)`` (integer codes), centred within each group and over successive rows of
    the same group only (rows of different experiments need not be alike)."""
    centred = data - data.mean(axis=0)
    if groups is not None:
        for group in np.unique(groups):
            centred[groups == group] -= centred[groups == group].mean(axis=0)
    same = (np.ones(len(data) - 1, bool) if groups is None else groups[1:] == groups[:-1])
    products = (centred[:-1] * centred[1:])[same].sum(axis=0)
    squares = (centred ** 2).sum(axis=0)
    return np.where(squares > 0, products / np.where(squares > 0, squares, 1.0), np.nan)


def time_order(data: np.ndarray, groups: np.ndarray | None = None) -> float | None:
    """The median absolute lag-1 autocorrelation over the columns of ``data (n, p)``
    (``lag1_autocorrelation``; columns constant within every group left out) when it
    exceeds ``max(LAG1_FLOOR, LAG1_SDS / sqrt(n))`` (module constants), else None."""
    values = np.abs(lag1_autocorrelation(data, groups))
    values = values[np.isfinite(values)]
    median = float(np.median(values)) if values.size else 0.0
    return median if median > max(LAG1_FLOOR, LAG1_SDS / np.sqrt(len(data))) else None


def warn_assumptions(data: np.ndarray, names: list[str], groups: np.ndarray | None = None,
                     mask: np.ndarray | None = None, knowledge=None) -> dict:
    """Warn (``AssumptionWarning``, one per kind) about the index and calendar columns, the
    spikes, the few-valued columns (each column named once, in that order; not those the
    ``prodag.inputs.knowledge.Knowledge`` puts in the first tier, where nothing measured can cause
    them), the near-duplicate pairs and time-ordered rows of ``data (n, p)``, checked as
    ``prodag.inputs.validation.check_data`` returns them. Rows are compared for time order within
    ``groups (n,)`` (the experimental conditions' codes) or, without them, within each set of
    intervention targets of ``mask (n, p)``. Returns what was found, by kind."""
    if groups is None and mask is not None:
        groups = np.unique(mask, axis=0, return_inverse=True)[1].reshape(-1)
    first_tier = set() if knowledge is None else set(np.flatnonzero(knowledge.tier_of() == 0))
    calendar = calendar_columns(data, names)
    spikes = {j: row for j, row in spike_columns(data).items() if j not in calendar}
    few = {j: values for j, values in few_valued_columns(data).items()
           if j not in calendar and j not in spikes and j not in first_tier}
    found = {"calendar": calendar, "spikes": spikes, "few_valued": few,
             "near_duplicates": near_duplicate_pairs(data), "lag1": time_order(data, groups)}
    for kind, message in _messages(found, data, names).items():
        warnings.warn(f"{message} See {GUIDE}#{kind}.", AssumptionWarning, stacklevel=4)
    return found


def _listed(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _messages(found: dict, data: np.ndarray, names: list[str]) -> dict[str, str]:
    """The warning of every kind found, keyed by its section of ``GUIDE``."""
    messages = {}
    if found["calendar"]:
        listed = _listed([f"{names[j]} ({why})" for j, why in found["calendar"].items()])
        messages["index-and-calendar-columns"] = (
            f"Column(s) {listed} look like an index or a calendar, not a variable: nothing "
            "causes a row number, and a date only stands for whatever changed over time, so "
            "the fit gives them confident edges that mean nothing. Drop them before fitting "
            "(if the rows were merely sorted by a real variable, ignore this for that "
            "column).")
    if found["spikes"]:
        listed = _listed([f"{names[j]} (row {row}: {data[row, j]:.4g})"
                          for j, row in found["spikes"].items()])
        messages["spikes"] = (
            f"Almost all the variance of column(s) {listed} comes from one value: the fit "
            "explains that one row, not the variable, and can give the column a near-certain "
            "edge (and the scale check may call it an identifier). Check the value: fix it or "
            "drop the row (or the column); for positive data spanning orders of magnitude, "
            "fit their logarithms (prodag fit --log-transform).")
    if found["few_valued"]:
        listed = _listed([f"{names[j]} ({len(v)} values: {', '.join(f'{x:g}' for x in v)})"
                          for j, v in found["few_valued"].items()])
        messages["binary-and-few-valued-columns"] = (
            f"Column(s) {listed} take at most {FEW_VALUES} distinct values, but the model "
            "treats every variable as continuous with Gaussian noise: a binary or coded "
            "column then tends to become the child of many variables. If nothing measured can "
            "cause it (sex, treatment group), put it in the first tier (prodag fit --tiers; "
            "ProDAG(tiers=...)); otherwise leave it out, or read its edges with care.")
    if found["near_duplicates"]:
        listed = _listed([f"{names[j]} and {names[k]} ({r:.5f})"
                          for j, k, r in found["near_duplicates"]])
        messages["near-duplicate-columns"] = (
            f"Column pairs {listed} have an absolute correlation of at least "
            f"{NEAR_DUPLICATE:g}: nearly copies. One then explains the other almost without "
            "noise, so the fit puts a near-certain edge between them in a direction the data "
            "barely decide, and the edges of one can land on the other. Keep one of each "
            "pair (or their mean) unless the near-copy is the point.")
    if found["lag1"] is not None:
        messages["time-ordered-rows"] = (
            f"Successive rows are alike (median absolute lag-1 autocorrelation over the "
            f"columns {found['lag1']:.2f}): the rows look like a time series, but the model "
            "assumes independent rows, and variables that merely trend together get confident "
            "edges. Time series are not supported; if the rows come in blocks from different "
            "experiments or batches, give each row its condition (prodag fit --conditions; "
            "fit(conditions=...)); if they were only sorted by a variable, this is harmless.")
    return messages
