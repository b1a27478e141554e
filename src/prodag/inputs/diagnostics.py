"""Warnings about data that can be fitted but whose posterior deserves a look: outlying
values, identical or perfectly collinear columns, few rows for the number of variables, and
data whose scale contradicts a fixed noise variance.

Each ``warn_*`` function takes the checked data ``(n, p)`` (``prodag.inputs.validation.check_data``)
and the column names, warns naming the rows, columns and values concerned and what to do, and
returns what it found. Pure numpy: importing this module does not start JAX.
"""

from __future__ import annotations

import warnings

import numpy as np

_MAX_SHOWN = 8

OUTLIER_ROBUST_SDS = 10.0
"""``warn_outliers`` flags values farther than this many robust standard deviations from
their column's median."""


class OutlierWarning(UserWarning):
    """Some values lie far outside the rest of their column."""


def outliers(data: np.ndarray, limit: float = OUTLIER_ROBUST_SDS) -> np.ndarray:
    """``(row, column)`` index pairs ``(m, 2)`` of the values of ``data (n, p)`` farther than
    ``limit`` robust standard deviations from their column's median. The robust standard
    deviation is 1.4826 × the median absolute deviation, or, where half a column or more
    shares one value, IQR / 1.349 (columns where that is 0 too are not checked)."""
    median = np.median(data, axis=0)
    spread = 1.4826 * np.median(np.abs(data - median), axis=0)
    q75, q25 = np.percentile(data, [75, 25], axis=0)
    spread = np.where(spread > 0, spread, (q75 - q25) / 1.349)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(data - median) / spread
    far = np.where(spread > 0, distance, 0.0) > limit
    return np.argwhere(far)


def without_outlying_rows(Z: np.ndarray) -> np.ndarray:
    """The rows of ``Z (n, p)`` with no value among ``outliers`` (all of them if fewer than
    ``p + 1`` would remain): the data start of a heavy-tailed fit, whose covariance one gross
    outlier would otherwise dominate."""
    far_rows = np.unique(outliers(Z)[:, 0])
    kept = np.delete(Z, far_rows, axis=0)
    return kept if len(kept) > Z.shape[1] else Z


def warn_outliers(data: np.ndarray, names: list[str], limit: float = OUTLIER_ROBUST_SDS,
                  heavy_tailed: bool = False) -> np.ndarray:
    """Warn (``OutlierWarning``) naming the rows and columns of ``outliers(data, limit)``; a
    Gaussian SEM bends its weights towards such values (``heavy_tailed``: the fit's Student-t
    noise down-weights them, and the warning says so). Returns those pairs."""
    found = outliers(data, limit)
    if len(found):
        shown = ", ".join(f"row {i} column {names[j]} ({data[i, j]:.4g})"
                          for i, j in found[:_MAX_SHOWN])
        more = f" and {len(found) - _MAX_SHOWN} more" if len(found) > \
            _MAX_SHOWN else ""
        columns = np.unique(found[:, 1])
        skewed = bool(np.all(data[:, columns] > 0))
        advice = ("The Student-t likelihood down-weights them; check them all the same"
                  if heavy_tailed else
                  "The Gaussian model bends towards such values (a spurious or a lost "
                  "edge); check them, drop those rows, or fit with likelihood='student' "
                  "(prodag fit --likelihood student), before trusting the posterior")
        warnings.warn(f"{len(found)} value(s) lie more than {limit:g} robust standard "
                      f"deviations from their column's median: {shown}{more}. {advice}"
                      + ("; for positive data spanning orders of magnitude, fit their "
                         "logarithms (prodag fit --log-transform)." if skewed else "."),
                      OutlierWarning, stacklevel=3)
    return found



class CollinearityWarning(UserWarning):
    """Some columns are exact copies or exact linear combinations of others."""


class SmallSampleWarning(UserWarning):
    """Too few rows for the number of variables: the posterior stays near the prior."""


COLLINEAR_TOLERANCE = 1e-8
"""Columns whose correlation is within this of ±1, or whose standardised values another
combination of columns reproduces this closely (relative), count as perfectly collinear."""
FEW_ROWS = 10
"""``warn_few_rows`` warns below this many rows, or below one row per variable."""


def collinear_columns(data: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """``(pairs, dependent)`` for ``data (n, p)``: the column pairs ``(j, k)``, ``j < k``,
    with correlation ±1 (identical up to shift and scale), and, when there are none and
    ``n > p``, the columns that are an exact linear combination of others (the ones a pivoted
    QR of the standardised data ranks last, beyond its numerical rank)."""
    n, p = data.shape
    centred = data - data.mean(axis=0)
    scaled = centred / np.linalg.norm(centred, axis=0)
    correlation = scaled.T @ scaled
    j, k = np.nonzero(np.triu(np.abs(correlation) > 1 - COLLINEAR_TOLERANCE, 1))
    pairs = list(zip(j.tolist(), k.tolist()))
    if pairs or n <= p:
        return pairs, []
    from scipy.linalg import qr

    _, r, pivots = qr(scaled, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    rank = int(np.sum(diagonal > COLLINEAR_TOLERANCE * diagonal[0]))
    return [], sorted(pivots[rank:].tolist())


def warn_collinear(data: np.ndarray, names: list[str]) -> tuple[list, list]:
    """Warn (``CollinearityWarning``) naming the columns of ``collinear_columns``: a
    deterministic relation has no noise, which the SEM's noise model cannot express, so the
    fit reports it as an ordinary, very probable edge in an arbitrary direction."""
    pairs, dependent = collinear_columns(data)
    if pairs:
        shown = ", ".join(f"{names[j]!r} and {names[k]!r}" for j, k in pairs[:_MAX_SHOWN])
        more = f" and {len(pairs) - _MAX_SHOWN} more pairs" if len(pairs) > _MAX_SHOWN else ""
        found = f"identical columns (up to shift and scale): {shown}{more}"
    elif dependent:
        found = ("columns that are exact linear combinations of the others: "
                 + ", ".join(repr(names[j]) for j in dependent[:_MAX_SHOWN]))
    else:
        return pairs, dependent
    warnings.warn(f"The data have {found}. A deterministic relation has no noise, which the "
                  "model assumes every variable has, so it shows up as a near-certain edge in "
                  "an arbitrary direction: drop the duplicates (or the derived columns) before "
                  "fitting.", CollinearityWarning, stacklevel=3)
    return pairs, dependent


def warn_few_rows(n: int, p: int) -> bool:
    """Warn (``SmallSampleWarning``) when ``n`` rows are few for ``p`` variables (fewer than
    ``FEW_ROWS`` or than ``p``): the data then say little and the posterior's edge
    probabilities mostly reflect the prior and the starts. Returns whether it warned."""
    if n >= max(FEW_ROWS, p):
        return False
    warnings.warn(f"Only {n} rows for {p} variables: the data say little about the graph "
                  f"({'fewer rows than variables' if n < p else f'fewer than {FEW_ROWS} rows'}), so the "
                  "edge probabilities mostly reflect the prior; treat them as uninformative "
                  f"and collect at least {max(FEW_ROWS, p)} rows.", SmallSampleWarning,
                  stacklevel=3)
    return True


class NoiseScaleWarning(UserWarning):
    """The data's variances contradict the fixed noise variance: wrong units for the model."""


NOISE_SCALE_FACTOR = 10.0
"""``warn_noise_scale`` warns when the quietest variable's variance is more than this factor
away from its fixed noise variance, either way."""
NOISE_SCALE_MIN_ROWS = 20
"""Below this many rows a source's sample variance is too noisy for ``warn_noise_scale``."""


def warn_noise_scale(data: np.ndarray, noise_variance: np.ndarray, names: list[str],
                     factor: float = NOISE_SCALE_FACTOR) -> float | None:
    """Warn (``NoiseScaleWarning``) when the data ``(n, p)``, as the model sees them, cannot
    have the fixed noise variances ``(p,)``; returns the offending ratio, else None.

    Under a SEM with independent noise every variable varies at least as much as its noise,
    and a variable without parents (every DAG has one) exactly as much. So the smallest
    ratio of a column's variance to its noise variance is close to 1 whatever the graph:
    far below 1, some variable varies less than its noise can; far above, none is as quiet
    as a source must be. Either way the data are not in the units the noise variance
    assumes, and the edges and their directions come out wrong. Not checked below
    ``NOISE_SCALE_MIN_ROWS`` rows."""
    if data.shape[0] < NOISE_SCALE_MIN_ROWS:
        return None
    variance = data.var(axis=0)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), variance.shape)
    ratio = variance / noise
    quietest = int(np.argmin(ratio))
    if 1 / factor <= ratio[quietest] <= factor:
        return None
    import warnings

    warnings.warn(f"the noise variance is fixed at {noise[quietest]:.4g} (noise_variance), "
                  f"but the quietest variable, {names[quietest]}, has variance "
                  f"{variance[quietest]:.4g}, {ratio[quietest]:.3g} times "
                  "it. Under the model every variable varies at least as much as its noise and "
                  "one without parents exactly as much, so the data are not in the units the "
                  "noise variance assumes and the posterior will be wrong. If all columns share "
                  "one unit, learn the noise variance (noise_variance='equal'; prodag fit "
                  "--noise-variance equal); if each has its own, use standardize=True with "
                  "noise_variance='estimate' (--standardize --noise-variance estimate); or "
                  "rescale the data so that the noise has the variance you fix.",
                  NoiseScaleWarning, stacklevel=3)
    return float(ratio[quietest])
