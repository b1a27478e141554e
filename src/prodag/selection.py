"""Choosing the ℓ1 radius λ: the validation split rule, the grid and the selection, as pure
functions (they return the path; nothing is stored on an estimator).

The path: fit with λ = ∞, set ``λ_max`` to the posterior mean of ``‖W‖₁``, fit the radii
``λ_max·k/n_lambdas`` (k = n_lambdas … 1), each from the first start only, and choose the
best by the criterion: ``"elbo"`` (every radius fitted on all rows, highest ELBO) or
``"validation"`` (best expected log-likelihood of held-out rows, then a refit on all rows at
the chosen radius: the paper's protocol). The other starts are fitted at the two best radii
only; each keeps its best fit by the ELBO, and the criterion chooses between them. The ELBO
is the default because the paper's ⌊0.1n⌉ held-out rows are too few to rank radii at n = 100
(``docs/findings.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from prodag.validation import DataError

if TYPE_CHECKING:
    import jax

VALIDATION_FRACTION = 0.1
"""Share of rows held out to choose λ by validation (the paper's protocol)."""
CRITERIA = ("elbo", "validation")
POLISHED_RADII = 2
"""Radii (the best by the criterion after one start each) fitted again from every start."""
N_DRAWS_FOR_LAM_MAX = 1000
"""Posterior draws of the λ = ∞ fit whose mean ``‖W‖₁`` is ``λ_max``."""


def validation_size(n: int, fraction: float = VALIDATION_FRACTION) -> int:
    """Rows held out of ``n``: ``⌊fraction · n⌉``, halves rounded up (the paper's ⌊0.1n⌉)."""
    return math.floor(fraction * n + 0.5)


def split_rows(Z: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of ``Z (n, p)`` (or any array with n rows) into training rows and
    ``validation_size(n)`` held-out rows."""
    n = Z.shape[0]
    n_val = validation_size(n, fraction)
    if n_val < 1 or n - n_val < 2:
        raise DataError(
            f"Choosing lam needs a validation split of {fraction:.0%} of the rows, but n = {n} "
            f"leaves {n_val} validation and {n - n_val} training rows. Pass a fixed lam "
            "(e.g. lam=float('inf')), X_val, or more rows.")
    order = np.random.default_rng(seed).permutation(n)
    return Z[order[n_val:]], Z[order[:n_val]]


def mean_l1_norm(graphs: np.ndarray) -> float:
    """Mean ``‖W‖₁`` of samples ``(L, p, p)``."""
    return float(np.mean(np.sum(np.abs(graphs), axis=(1, 2))))


def lambda_grid(lam_max: float, n_lambdas: int) -> np.ndarray:
    """The radii ``λ_max·k/n_lambdas`` for k = n_lambdas … 1 (largest first), ``(n_lambdas,)``."""
    return lam_max * np.arange(n_lambdas, 0, -1) / n_lambdas


class Selection(NamedTuple):
    """The fits at the chosen radius (best objective first), the radius and the path:
    ``{"lambdas", "criterion", "scores", "lam_max"}`` (and ``"polished"``)."""

    results: list
    lam: float
    path: dict
    path_fits: list = []
    """Every fit at a finite radius of the path (with the ELBO criterion): ``(lam, fit)``."""

    @property
    def result(self):
        """The chosen fit: the best by the objective at the chosen radius."""
        return self.results[0]


def select_lambda(fit_at: Callable[..., Any], lam_max_of: Callable[[Any, jax.Array], float],
                  score: Callable[[Any, float, jax.Array], float], n_lambdas: int,
                  criterion: str, key: jax.Array, n_restarts: int = 1,
                  refit: Callable[..., Any] | None = None) -> Selection:
    """Fit the λ path (module docstring) and return the fits at the chosen radius.

    ``fit_at(lam, key, stage, restarts)`` fits one radius from the starts numbered
    ``restarts`` and returns the fits, best objective first; ``lam_max_of(result, key)`` is
    the mean ``‖W‖₁`` of the λ = ∞ fit's posterior; ``score(result, lam, key)`` rates a fit
    (higher is better); ``refit(lam, key, stage)``, if given, fits the chosen radius again (on
    all rows, from every start) and ends the path. Otherwise the λ = ∞ fit and every radius
    are fitted from the first start only, the other ``n_restarts - 1`` starts are spent on the
    ``POLISHED_RADII`` best radii, and the radius whose best fit scores best is chosen
    (``docs/findings.md``: restarts elsewhere did not change the choice).
    """
    import jax

    fit_key, score_key, sample_key, refit_key = jax.random.split(key, 4)
    first = range(1)
    unbounded = fit_at(math.inf, fit_key, "λ=∞", first)[0]
    lam_max = lam_max_of(unbounded, sample_key)
    grid = lambda_grid(lam_max, n_lambdas)
    scores, results = [], []
    for i, lam in enumerate(grid):
        results.append(fit_at(float(lam), jax.random.fold_in(fit_key, i + 1),
                              f"radius {i + 1}/{n_lambdas} (λ={lam:.3g})", first))
        scores.append(score(results[-1][0], float(lam), score_key))
    path = {"lambdas": grid.tolist(), "criterion": criterion, "scores": scores,
            "lam_max": lam_max}
    if refit is not None:
        lam = float(grid[int(np.nanargmax(scores))])
        return Selection(refit(lam, refit_key, f"λ={lam:.3g} on all rows"), lam, path)
    path_fits = [(float(lam), fit) for lam, fits in zip(grid, results) for fit in fits]
    if n_restarts == 1:
        best = _best_indices(scores, 1)[0]
        return Selection(results[best], float(grid[best]), path, path_fits)
    candidates = []
    for i in _best_indices(scores, POLISHED_RADII):
        lam = float(grid[i])
        others = fit_at(lam, jax.random.fold_in(fit_key, i + 1), f"λ={lam:.3g}",
                        range(1, n_restarts))
        path_fits += [(lam, fit) for fit in others]
        fits = sorted(results[i] + others, key=lambda fit: fit.objective)
        candidates.append((score(fits[0], lam, score_key), lam, fits))
    path["polished"] = [[lam, value] for value, lam, _ in candidates]
    value, lam, fits = max(candidates, key=lambda candidate: candidate[0])
    return Selection(fits, lam, path, path_fits)


def _best_indices(scores: list[float], k: int) -> list[int]:
    """Indices of the ``k`` highest scores (NaN last), best first."""
    order = np.argsort(-np.nan_to_num(np.asarray(scores, float), nan=-np.inf), kind="stable")
    return [int(i) for i in order[:k]]
