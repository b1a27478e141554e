"""Summaries of causal effects over posterior draws: one pair's (``EffectSummary``,
``summarize``) and the table of every ordered pair (``effect_table``, built from
``effect_rows`` a few causes at a time where the draws are large, and ``ranked_effects``).
Pure functions of arrays; ``prodag.effects`` computes the draws and names these as its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from prodag.inputs.units import in_units, standardized

LEVEL = 0.9
"""Default probability of the credible interval."""


@dataclass(frozen=True)
class EffectSummary:
    """The posterior of one total effect, in data units per unit of the cause, or with
    ``units="standardized"`` in standard deviations of the effect per one of the cause."""

    cause: str
    effect: str
    mean: float
    sd: float
    lower: float
    upper: float
    level: float
    p_nonzero: float
    """Share of draws with a directed path cause → effect."""
    p_positive: float
    n: int
    mc_error: float
    """Monte Carlo standard error of ``mean`` over the ``n`` draws (sd / √n)."""
    units: str = "data"

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        percent = f"{100 * self.level:g}%"
        per = ("unit" if self.units == "data" else
               f"standard deviation (standardised units: in sds of {self.effect})")
        return (f"Total effect of {self.cause} on {self.effect} (change in {self.effect} per "
                f"{per} of {self.cause} under do({self.cause}), {self.n} posterior draws):\n"
                f"  mean {self.mean:.4g}  sd {self.sd:.4g}  {percent} interval "
                f"[{self.lower:.4g}, {self.upper:.4g}]\n"
                f"  P(effect != 0) = {self.p_nonzero:.3f} (share of draws with a directed "
                f"path)   P(effect > 0) = {self.p_positive:.3f}")


def summarize(values: np.ndarray, paths: np.ndarray, level: float = LEVEL, cause: str = "",
              effect: str = "", units: str = "data") -> EffectSummary:
    """``EffectSummary`` of the draws ``values (n,)`` of one effect (in ``units``) and
    ``paths (n,)`` bool (a directed path in that draw); the interval is equal-tailed."""
    values = np.asarray(values, dtype=float)
    lower, upper = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    sd = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return EffectSummary(cause, effect, float(values.mean()), sd, float(lower), float(upper),
                         float(level), float(np.mean(paths)), float(np.mean(values > 0)),
                         int(values.size), float(sd / np.sqrt(values.size)), units)


def effect_table(draws: np.ndarray, paths: np.ndarray, names, level: float = LEVEL,
                 sd=None, units: str = "data") -> pd.DataFrame:
    """One row per ordered pair (cause ≠ effect) of ``draws (n, p, p)`` (data units) and
    ``paths (n, p, p)``: the columns of ``EffectSummary`` in ``units`` (``effect_rows``),
    ranked as ``ranked_effects`` ranks them."""
    return ranked_effects(effect_rows(draws, paths, names, level, sd, units),
                          draws.mean(axis=0), sd)


def effect_rows(draws: np.ndarray, paths: np.ndarray, names, level: float = LEVEL, sd=None,
                units: str = "data", first: int = 0) -> list[dict]:
    """``EffectSummary.as_dict()`` of each pair (cause ≠ effect), cause by cause, of the
    effects ``draws (n, c, p)`` (data units) and ``paths (n, c, p)`` of the ``c`` causes
    ``first, first + 1, …`` (all of them when ``c = p``), in ``units``."""
    c, p = draws.shape[1:]
    draws = in_units(draws, sd, units, slice(first, first + c))
    return [summarize(draws[:, i, k], paths[:, i, k], level, names[j], names[k], units).as_dict()
            for i, j in enumerate(range(first, first + c)) for k in range(p) if j != k]


def ranked_effects(rows: list[dict], means: np.ndarray, sd=None) -> pd.DataFrame:
    """``rows`` of every ordered pair (``effect_rows`` of all causes, in order) as a table
    ranked by the mean effects ``means (p, p)`` (data units): by their standardised |mean|
    given the columns' standard deviations ``sd (p,)`` (the same order in either units, and
    whatever the columns' units; ``prodag.inputs.units``), else by |mean|."""
    p = means.shape[0]
    size = np.abs(means if sd is None else standardized(means, sd))[~np.eye(p, dtype=bool)]
    return pd.DataFrame(rows).iloc[np.argsort(-size, kind="stable")].reset_index(drop=True)
