"""Choosing the ℓ1 radius λ: the validation split rule, the grid and the selection, as pure
functions (they return the path; nothing is stored on an estimator).

The path: fit with λ = ∞, set ``λ_max`` to the posterior mean of ``‖W‖₁``, fit the radii
``λ_max·k/n_lambdas`` (k = n_lambdas … 1), each from the first start only, and choose the
best by the criterion: ``"elbo"`` (every radius fitted on all rows, highest ELBO; radii
below the grid are tried while its smallest scores best, ``BELOW_GRID``) or
``"validation"`` (best expected log-likelihood of held-out rows, then a refit on all rows at
the chosen radius: the paper's protocol). With the ELBO, a radius that trails its chain's
best by a margin stops early, unless it is near the best (the fit's
``prodag.config.spec.PathScreen``).
The other starts are fitted at the two best radii only; each keeps its best fit by the ELBO,
and the criterion chooses between them. Where only one of the two radii's fits will count
(``narrow``: the near-tie rule of ``select_by="elbo-sparse"``), the starts beyond the first
``DECIDING_STARTS`` run at the radius those decided on only. The ELBO
is the default because the paper's ⌊0.1n⌉ held-out rows are too few to rank radii at n = 100
(``docs/findings.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from prodag.config.parameters import VALIDATION_FRACTION
from prodag.config.spec import PATH_SCREEN, PathScreen
from prodag.inputs.validation import DataError

POLISHED_RADII = 2
"""Radii (the best by the criterion after one start each) fitted again from every start."""
DECIDING_STARTS = 4
"""Starts at each polished radius that decide between them where the fit narrows the choice
(``select_lambda``'s ``narrow``: ``select_by="elbo-sparse"``); the starts beyond go to the
radius they decided on only, as the fits of the other radius are not pooled there
(``docs/findings.md``). A default fit on candidate parents takes twice as many starts
(``prodag.config.starts.SCREENED_RESTARTS``): four at each radius, then four at the decided one."""
BELOW_GRID = (0.5, 0.25)
"""With the ELBO criterion, where a chain's smallest radius scores best, the radii tried below
it (as shares of it), from the first start, while the smallest still scores best (at most
``BELOW_GRID_ROUNDS`` times): at p = 100 the ELBO still improves below ``λ_max/10``, whose
draws' ‖W‖₁ is mostly their spread over p² entries (``docs/findings.md``)."""
BELOW_GRID_ROUNDS = 2
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


def l1_norms(graphs: np.ndarray) -> np.ndarray:
    """``‖W‖₁`` ``(L,)`` of each of the samples ``graphs (L, p, p)``."""
    return np.sum(np.abs(graphs), axis=(1, 2))


def mean_l1_norm(graphs: np.ndarray) -> float:
    """Mean ``‖W‖₁`` of samples ``(L, p, p)``."""
    return float(np.mean(l1_norms(graphs)))


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


class MemberSpec(NamedTuple):
    """One fit of a batch: chain ``chain``'s start number ``start`` at radius ``lam``,
    trained with ``key``."""

    chain: int
    lam: float
    start: int
    key: Any


FitMembers = Callable[..., list]
"""``fit_members(specs, stage, screen=None, unplanned=False)``: fit every ``MemberSpec`` (one
batch) and return one fit per spec, in order; ``stage`` names the batch on the progress bar;
``screen``, a ``prodag.config.spec.PathScreen``, stops the members trailing their chain's best
(``prodag.inference.Screen``); ``unplanned``: fits the plan's count
(``prodag.fit.plan.n_fits``) leaves out, which the progress bar's total gains when they run."""


def select_lambda(fit_members: FitMembers, lam_max_of: Callable[[int, Any, Any], float],
                  score: Callable[[int, Any, float, Any], float], n_lambdas: int,
                  criterion: str, keys: list, n_restarts: int = 1,
                  refit: FitMembers | None = None,
                  narrow: Callable[[int, list[tuple[float, float]]], float] | None = None,
                  screen: PathScreen = PATH_SCREEN) -> list[Selection]:
    """Fit the λ path (module docstring) of every chain at once and return each chain's fits
    at its chosen radius. Chain ``c`` trains from ``keys[c]``.

    Each stage is one batch of members over the chains (``fit_members``): the λ = ∞ fits; then
    every radius of every chain's grid from the first start; then the other
    ``n_restarts - 1`` starts at each chain's ``POLISHED_RADII`` best radii, and each chain
    keeps the radius whose best fit scores best (``docs/findings.md``: restarts elsewhere did
    not change the choice). ``lam_max_of(c, fit, key)`` is the mean ``‖W‖₁`` of the λ = ∞
    fit's posterior; ``score(c, fit, lam, key)`` rates a fit (higher is better);
    ``refit(specs, stage)``, if given, fits each chain's chosen radius again (on all rows,
    from every start) and ends the path. ``narrow(c, scored)``, if given, names the radius of
    chain ``c``'s polished ``[(lam, score), ...]`` whose fits count: then only the first
    ``DECIDING_STARTS`` starts run at every polished radius, and the others at the radius
    ``narrow`` names after them. ``screen``: when the path's radii that trail their chain's
    best stop (with the ELBO criterion only).
    """
    import jax

    chains = range(len(keys))
    fit_key, score_key, sample_key, refit_key = zip(*(jax.random.split(k, 4) for k in keys))
    unbounded = fit_members([MemberSpec(c, math.inf, 0, jax.random.fold_in(fit_key[c], 0))
                          for c in chains], "λ=∞")
    grids = [lambda_grid(lam_max_of(c, unbounded[c], sample_key[c]), n_lambdas)
             for c in chains]

    def radius_key(c: int, i: int, start: int):
        return jax.random.fold_in(jax.random.fold_in(fit_key[c], i + 1), start)

    firsts = fit_members([MemberSpec(c, float(lam), 0, radius_key(c, i, 0))
                       for c in chains for i, lam in enumerate(grids[c])],
                      f"{n_lambdas} radii", screen
                      if criterion != "validation" and refit is None else None)
    results = [[[firsts[c * n_lambdas + i]] for i in range(n_lambdas)] for c in chains]
    scores = [[score(c, results[c][i][0], float(lam), score_key[c])
               for i, lam in enumerate(grids[c])] for c in chains]
    lam_max = [float(grids[c][0]) for c in chains]
    for _ in range(BELOW_GRID_ROUNDS if refit is None and n_lambdas > 1 else 0):
        low = [c for c in chains if _best_indices(scores[c], 1)[0] == len(grids[c]) - 1]
        if not low:
            break
        below = [(c, len(grids[c]) + j, float(grids[c][-1] * share))
                 for c in low for j, share in enumerate(BELOW_GRID)]
        fits = fit_members([MemberSpec(c, lam, 0, radius_key(c, i, 0)) for c, i, lam in below],
                        "radii below the grid", unplanned=True)
        for (c, _, lam), fit in zip(below, fits):
            grids[c] = np.append(grids[c], lam)
            results[c].append([fit])
            scores[c].append(score(c, fit, lam, score_key[c]))
    paths = [{"lambdas": grids[c].tolist(), "criterion": criterion, "scores": scores[c],
              "lam_max": lam_max[c]} for c in chains]
    if refit is not None:
        chosen = [float(grids[c][int(np.nanargmax(scores[c]))]) for c in chains]
        fits = refit([MemberSpec(c, chosen[c], r, jax.random.fold_in(refit_key[c], r))
                      for c in chains for r in range(n_restarts)], "chosen λ on all rows")
        return [Selection(_by_objective(fits[c * n_restarts:(c + 1) * n_restarts]), chosen[c],
                          paths[c]) for c in chains]
    path_fits = [[(float(lam), fit) for lam, fits in zip(grids[c], results[c]) for fit in fits]
                 for c in chains]
    if n_restarts == 1:
        best = [_best_indices(scores[c], 1)[0] for c in chains]
        return [Selection(results[c][best[c]], float(grids[c][best[c]]), paths[c],
                          path_fits[c]) for c in chains]
    polished = [(c, i) for c in chains for i in _best_indices(scores[c], POLISHED_RADII)]
    deciding = n_restarts if narrow is None else min(n_restarts, DECIDING_STARTS)
    others = fit_members([MemberSpec(c, float(grids[c][i]), r, radius_key(c, i, r))
                       for c, i in polished for r in range(1, deciding)],
                      f"{POLISHED_RADII} radii × {deciding - 1} starts")
    fits_at = {(c, i): results[c][i] + others[number * (deciding - 1):
                                              (number + 1) * (deciding - 1)]
               for number, (c, i) in enumerate(polished)}
    if deciding < n_restarts:
        chosen = [_narrowed(c, polished, fits_at, grids, score, score_key, narrow)
                  for c in chains]
        more = fit_members([MemberSpec(c, float(grids[c][chosen[c]]), r,
                                       radius_key(c, chosen[c], r))
                            for c in chains for r in range(deciding, n_restarts)],
                           f"{n_restarts - deciding} more starts at the chosen radius")
        for c in chains:
            fits_at[c, chosen[c]] = fits_at[c, chosen[c]] + more[
                c * (n_restarts - deciding):(c + 1) * (n_restarts - deciding)]
    selections = []
    for c in chains:
        candidates = []
        for chain, i in polished:
            if chain != c:
                continue
            lam = float(grids[c][i])
            path_fits[c] += [(lam, fit) for fit in fits_at[c, i][1:]]
            fits = _by_objective(fits_at[c, i])
            candidates.append((score(c, fits[0], lam, score_key[c]), lam, fits))
        paths[c]["polished"] = [[lam, value] for value, lam, _ in candidates]
        value, lam, fits = max(candidates, key=lambda candidate: candidate[0])
        selections.append(Selection(fits, lam, paths[c], path_fits[c]))
    return selections


def _narrowed(c: int, polished: list, fits_at: dict, grids: list, score, score_key: list,
              narrow) -> int:
    """The index of chain ``c``'s polished radius that ``narrow`` names from the scores of
    their best fits so far."""
    indices = [i for chain, i in polished if chain == c]
    scored = [(float(grids[c][i]),
               score(c, _by_objective(fits_at[c, i])[0], float(grids[c][i]), score_key[c]))
              for i in indices]
    lam = narrow(c, scored)
    return next(i for i in indices if float(grids[c][i]) == lam)


def _by_objective(fits: list) -> list:
    """Fits sorted by their final objective, best first."""
    return sorted(fits, key=lambda fit: fit.objective)


def _best_indices(scores: list[float], k: int) -> list[int]:
    """Indices of the ``k`` highest scores (NaN last), best first."""
    order = np.argsort(-np.nan_to_num(np.asarray(scores, float), nan=-np.inf), kind="stable")
    return [int(i) for i in order[:k]]
