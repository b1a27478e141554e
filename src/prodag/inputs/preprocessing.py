"""The data's units: the scale every fit divides by, and the check that the columns share one.

A fit sees ``Z = (X − mean) / scale``. Which ``scale (p,)`` depends on the noise model:

- ``standardize=True``: each column's own standard deviation (invariant to every column's
  unit; pair it with ``noise_variance="estimate"``);
- a named noise model (``"equal"``, ``"estimate"``, ``"quietest"``): one common scale, the
  root mean of the column variances, so ``X·c + b`` gives the same ``Z`` for any unit
  ``c > 0`` and shift ``b``, hence the same posterior (linear, additive and MLP SEMs alike);
- a fixed noise variance (the paper's unit noise): 1, the data's own units, which the fixed
  variance refers to.

A common scale cannot make columns in different units comparable: one column in grams among
columns in kilograms dominates any scale-dependent fit. ``warn_column_scales`` names such
columns before the fit.
"""

from __future__ import annotations

import warnings

import numpy as np

COLUMN_SCALE_RATIO = 100.0
"""Columns whose variance differs from the median column's by more than this factor (either
way) are named in a ``ColumnScaleWarning``."""


LEARNED_NOISE = ("equal", "estimate")
"""Noise models whose variances are learned (one shared, one per variable)."""
NOISE_MODELS = (*LEARNED_NOISE, "quietest")
"""Named noise models; ``"quietest"`` fixes every variance at the quietest column's variance
on the common scale (``quietest_variance``)."""


def resolved_noise(noise_variance, sem: str):
    """``noise_variance`` with ``"auto"`` resolved: ``"quietest"`` for the additive SEM, whose
    learned shared variance absorbs what its shapes cannot fit and weakens every edge
    (``docs/findings.md``), ``"equal"`` for the others. Anything else is returned as given."""
    if isinstance(noise_variance, str) and noise_variance == "auto":
        return "quietest" if sem == "additive" else "equal"
    return noise_variance


def learns_noise(noise_variance) -> bool:
    """Whether the fit learns the noise variances (``LEARNED_NOISE``)."""
    return isinstance(noise_variance, str) and noise_variance in LEARNED_NOISE


def on_common_scale(noise_variance) -> bool:
    """Whether the data are divided by one common scale: every named noise model (a number
    or array fixes the variances in the data's own units)."""
    return isinstance(noise_variance, str)


def quietest_variance(Z: np.ndarray, robust: bool = False) -> float:
    """The smallest column variance of ``Z (n, p)`` (with ``robust``, of the robust spread):
    an upper bound on the smallest noise variance, equal to it where that column is a source.
    Fixing every noise variance there keeps a nonlinear SEM's misfit from inflating a learned
    variance (which weakens every edge), and it moves with a common unit of the data."""
    return float(np.min(column_spread(Z, robust) ** 2))  # spreads are shift-invariant


class ColumnScaleWarning(UserWarning):
    """Some columns vary on a very different scale from the rest (different units, an ID)."""


def fit_scale(data: np.ndarray, standardize: bool, common: bool,
              robust: bool = False) -> np.ndarray:
    """The scale ``(p,)`` the centred data ``(n, p)`` are divided by (module docstring). With
    ``robust`` (heavy-tailed noise) the common scale comes from each column's median absolute
    deviation, so a few gross outliers do not set the unit of every column."""
    p = data.shape[1]
    if standardize:
        return data.std(axis=0)
    if common:
        return np.full(p, float(np.sqrt(np.mean(column_spread(data, robust) ** 2))))
    return np.ones(p)


def column_spread(data: np.ndarray, robust: bool) -> np.ndarray:
    """Each column's standard deviation ``(p,)``; with ``robust``, 1.4826 times its median
    absolute deviation (the standard deviation of Gaussian data), or the standard deviation
    where that is 0."""
    if not robust:
        return data.std(axis=0)
    deviation = np.abs(data - np.median(data, axis=0))
    spread = 1.4826 * np.median(deviation, axis=0)
    return np.where(spread > 0, spread, data.std(axis=0))


def warn_column_scales(data: np.ndarray, names: list[str],
                       ratio: float = COLUMN_SCALE_RATIO) -> list[str]:
    """Warn (``ColumnScaleWarning``) about the columns of ``data (n, p)`` whose variance is
    more than ``ratio`` times larger or smaller than the median column variance, and return
    their names. Every SEM here compares columns on one scale (a shared noise variance, one
    prior on every weight), so such columns take or lose edges because of their unit alone."""
    variance = data.var(axis=0)
    median = float(np.median(variance))
    if median <= 0:
        return []
    off = np.flatnonzero((variance > ratio * median) | (variance < median / ratio))
    if off.size == 0:
        return []
    listed = ", ".join(f"{names[k]} (variance {variance[k]:.3g})" for k in off[:8])
    more = f" and {off.size - 8} more" if off.size > 8 else ""
    warnings.warn(
        f"column(s) {listed}{more} vary on a scale more than {ratio:g} times away from the "
        f"median column variance ({median:.3g}): different units, or an identifier column? "
        "The posterior compares all columns on one scale, so these would gain or lose edges "
        "through their unit alone. Drop identifier columns; if the columns have different "
        "units, standardise them (standardize=True with noise_variance='estimate'; prodag fit "
        "--standardize --noise-variance estimate).", ColumnScaleWarning, stacklevel=3)
    return [names[k] for k in off]


def check_own_units(Z: np.ndarray, names: list[str], largest: float) -> None:
    """Refuse ``Z (n, p)``, the data in their own units (a fixed noise variance divides them by
    nothing), when its sum of squares reaches ``largest``, the fit's largest number (float32's
    3.4e38 unless JAX has x64 enabled): it is the likelihood's sum of squared residuals of the
    empty graph, and would be infinite, as would every fit's objective. Names the columns that
    hold at least 1% of it. A named noise model divides by a common scale first, so it never
    meets this."""
    from prodag.inputs.validation import DataError

    with np.errstate(over="ignore"):
        squares = np.square(Z).sum(axis=0)
        total = squares.sum()
    if total < largest:
        return
    large = np.flatnonzero(~(squares < total / 100))
    shown = ", ".join(repr(names[k]) for k in large[:8]) + (
        f" and {large.size - 8} more" if large.size > 8 else "")
    raise DataError(
        "With a fixed noise variance the fit works in the data's own units, and the data are "
        f"too large for its arithmetic: their sum of squares, mostly from column(s) {shown}, "
        f"reaches {total:.3g}, past its largest number {largest:.3g}. Rescale the data by a "
        "power of ten (and the noise variance by its square), or learn the noise variance on "
        "a common scale (noise_variance='equal'; prodag fit --noise-variance equal).")
