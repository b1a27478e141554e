"""What orients a posterior's edges: agreement with sorting by variance and by R².

In data simulated from a linear SEM whose noises share one variance, a variable's marginal
variance tends to grow along the causal order, so sorting the variables by variance finds
the order ("varsortability", Reisach, Seiler & Weichwald 2021, "Beware of the simulated
DAG!"). A likelihood with equal noise variances prefers exactly that direction: it orients
edges from the quieter to the noisier variable, which is right when the columns share one
unit and their noises truly have one variance, and an artefact of the units otherwise.
Sorting by R² (each variable regressed on all others; Reisach et al. 2023, "A scale-invariant
sorting criterion to find a causal order in additive noise models") does not depend on the
units at all.

For a posterior we weigh edges by their probability:

    sortability(s) = Σ_{j≠k} P(j → k) · agree(s_j, s_k) / Σ_{j≠k} P(j → k),

with ``agree`` 1 when ``s_k > s_j``, 1/2 for a tie (within a relative ``TIE_TOLERANCE``), 0
otherwise. (Reisach et al. count every directed path of one graph; the edges are what the
posterior's table shows.) 1: every edge points from the lower score to the higher; 0.5: no
relation, or all tied, as the variances of standardised data are; 0: the reverse.
``docs/guide/assumptions.md`` explains how to read the numbers. Pure numpy.
"""

from __future__ import annotations

import warnings

import numpy as np

TIE_TOLERANCE = 1e-9
"""Scores within this relative difference are tied (Reisach et al.'s tolerance)."""
SCALE_ORIENTED = 0.9
"""``warn_scale_orientation`` warns from this varsortability (in the model's units) on."""
MIN_EXPECTED_EDGES = 2.0
"""Below this many expected edges the sortabilities are not warned about."""
SCALE_NOISE_MODELS = ("equal", "quietest")
"""Noise models that give every variable one noise variance (as does a fixed number)."""


def sortability(probabilities: np.ndarray, scores: np.ndarray,
                tolerance: float = TIE_TOLERANCE) -> float | None:
    """The share of the expected edges of ``probabilities (p, p)`` (``[j, k]``: P(j → k))
    that point from a lower to a higher score of ``scores (p,)`` (module docstring), or None
    when the posterior has no edge."""
    scores = np.asarray(scores, float)
    probabilities = np.asarray(probabilities, float) * (1 - np.eye(len(scores)))
    total = probabilities.sum()
    if total <= 0:
        return None
    difference = scores[None, :] - scores[:, None]  # [j, k]: s_k - s_j
    size = tolerance * np.maximum(np.abs(scores[None, :]), np.abs(scores[:, None]))
    agree = np.where(difference > size, 1.0, np.where(difference < -size, 0.0, 0.5))
    return float((probabilities * agree).sum() / total)


def r_squared(data: np.ndarray) -> np.ndarray:
    """The R² ``(p,)`` of each column of ``data (n, p)`` regressed (with an intercept) on all
    the others: ``1 − 1 / (C⁻¹)_jj`` for the correlation matrix ``C``; 1 everywhere when
    ``n ≤ p`` (every column then fits exactly). A constant column has R² 0 and explains
    nothing of the others."""
    n, p = data.shape
    if p == 1:
        return np.zeros(1)
    if n <= p:
        return np.ones(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.corrcoef(data, rowvar=False)
    correlation = np.where(np.isfinite(correlation), correlation, 0.0)
    np.fill_diagonal(correlation, 1.0)
    precision = np.linalg.pinv(correlation, hermitian=True)
    with np.errstate(divide="ignore"):
        return np.clip(1 - 1 / np.diag(precision), 0.0, 1.0)


def orientation_report(probabilities: np.ndarray, Z: np.ndarray, scale: np.ndarray) -> dict:
    """What orients the edges of ``probabilities (p, p)``, JSON-ready: the expected number of
    edges, the varsortability in the units the model saw (of ``Z (n, p)``) and in the data's
    (of ``Z · scale``; ``scale (p,)`` the fit divided the data by), and the R²-sortability
    (the same in any units)."""
    variance = Z.var(axis=0)
    return {"expected_edges": float(np.sum(probabilities * (1 - np.eye(len(variance))))),
            "varsortability": sortability(probabilities, variance),
            "varsortability_data_units": sortability(probabilities, variance * scale ** 2),
            "r2_sortability": sortability(probabilities, r_squared(Z))}


def scale_orients(report: dict, standardize: bool, noise_variance) -> bool:
    """Whether the edges' directions may follow from the data's scale alone: unstandardised
    data, one noise variance for every variable (``SCALE_NOISE_MODELS`` or a fixed one), at
    least ``MIN_EXPECTED_EDGES`` and a varsortability of ``SCALE_ORIENTED`` or more."""
    one_variance = (noise_variance in SCALE_NOISE_MODELS if isinstance(noise_variance, str)
                    else np.ptp(np.asarray(noise_variance, float)) == 0)
    value = report["varsortability"]
    return bool(not standardize and one_variance and value is not None
                and report["expected_edges"] >= MIN_EXPECTED_EDGES and value >= SCALE_ORIENTED)


def describe(report: dict | None) -> str | None:
    """One sentence of the report for the closing lines of a fit (None without one)."""
    if report is None or report["varsortability"] is None:
        return None
    model, data, r2 = (report[key] for key in ("varsortability", "varsortability_data_units",
                                               "r2_sortability"))
    units = ("" if abs(model - data) < 0.005 else f" ({data:.2f} in the data's units)")
    return (f"Orientation: {model:.2f} of the expected edges point from the lower to the "
            f"higher variance as the model saw the data{units}, {r2:.2f} from the lower to "
            "the higher R² (varsortability and R²-sortability; 0.5: no relation; "
            "docs/guide/assumptions.md#what-orients-the-edges).")


def warn_scale_orientation(report: dict, standardize: bool, noise_variance) -> bool:
    """Warn (``prodag.inputs.assumptions.AssumptionWarning``) when ``scale_orients``; returns
    whether it warned."""
    if not scale_orients(report, standardize, noise_variance):
        return False
    from prodag.inputs.assumptions import GUIDE, AssumptionWarning

    warnings.warn(
        f"{report['varsortability']:.2f} of the posterior's expected edges point from the "
        "variable with the smaller variance to the one with the larger: with one noise "
        "variance for every variable, the data's scale alone can orient them, so directions "
        "not fixed by interventions or knowledge are right only if all columns share one "
        "unit and their noises truly vary alike. Compare "
        "with a fit on standardised data (prodag fit --standardize; "
        "ProDAG(standardize=True); add --noise-variance estimate if the columns have units "
        "of their own) and trust only the directions both fits share. See "
        f"{GUIDE}#what-orients-the-edges.", AssumptionWarning, stacklevel=5)
    return True
