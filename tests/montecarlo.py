"""Comparing two fits the way the statistics allow: within their Monte Carlo error.

Two fits of data that differ only by rounding (a change of units, a shift that the model
removes) follow the same optimisation in exact arithmetic, but the optimiser is chaotic: on
another CPU or package version the rounding differences grow, and the fits end as far apart
as fits with different seeds. So the tests allow, beside the sampling error of the draws,
the spread that a change of seed gives on the machine that runs them.
"""

import itertools

import numpy as np

Z = 4.0
"""Standard errors allowed: a false failure about once in 16,000 per compared number."""


def seed_spread(values) -> np.ndarray:
    """The largest difference between any two of ``values`` (a list of equal-shape arrays,
    one per seed), elementwise: how far a change of seed moves each number."""
    return np.max([np.abs(a - b) for a, b in itertools.combinations(values, 2)], axis=0)


def assert_probabilities_agree(actual, expected, n_draws: int, spread=0.0, what=""):
    """Edge probabilities ``(p, p)``, each the share of ``n_draws`` draws, agree within
    ``Z`` standard errors of their difference plus ``spread`` (``seed_spread``)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    variance = (actual * (1 - actual) + expected * (1 - expected)) / n_draws
    allowed = Z * np.sqrt(variance) + spread + 1.0 / n_draws
    gap = np.abs(actual - expected)
    assert np.all(gap <= allowed), (
        f"{what}: edge probabilities differ by up to {gap.max():.3f} "
        f"(allowed {allowed[np.unravel_index(np.argmax(gap - allowed), gap.shape)]:.3f})\n"
        f"{np.round(actual, 3)}\n{np.round(expected, 3)}")


def assert_means_agree(actual_draws, expected_draws, spread=0.0, what=""):
    """The means over the first axis of two sets of draws agree within ``Z`` standard
    errors of their difference plus ``spread``."""
    actual_draws, expected_draws = np.asarray(actual_draws), np.asarray(expected_draws)
    standard_error = np.sqrt(actual_draws.var(axis=0) / len(actual_draws)
                             + expected_draws.var(axis=0) / len(expected_draws))
    gap = np.abs(actual_draws.mean(axis=0) - expected_draws.mean(axis=0))
    allowed = Z * standard_error + spread
    assert np.all(gap <= allowed + 1e-12), (
        f"{what}: means differ by up to {gap.max():.4g} where at most "
        f"{allowed.ravel()[np.argmax(gap - allowed)]:.4g} is allowed")
