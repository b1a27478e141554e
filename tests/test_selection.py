"""The λ path of prodag.selection with stand-in fits: which starts run where, and which
radius is kept."""

import math

import jax
import numpy as np
import pytest

from prodag import selection


class Fit:
    def __init__(self, lam, restarts, objective):
        self.lam, self.restarts, self.objective = lam, tuple(restarts), objective


def _path(objective_of, n_restarts, n_lambdas=5, refit=None):
    """Run ``select_lambda`` with fits whose objective is ``objective_of(lam, restart)``;
    returns the selection and every ``fit_at`` call as ``(lam, restarts)``."""
    calls = []

    def fit_at(lam, key, stage, restarts=None):
        restarts = tuple(range(n_restarts) if restarts is None else restarts)
        calls.append((lam, restarts))
        return sorted((Fit(lam, [r], objective_of(lam, r)) for r in restarts),
                      key=lambda fit: fit.objective)

    chosen = selection.select_lambda(
        fit_at, lambda result, key: 10.0, lambda result, lam, key: -result.objective,
        n_lambdas, "elbo", jax.random.PRNGKey(0), n_restarts, refit)
    return chosen, calls


def test_the_path_fits_one_start_per_radius_and_every_start_at_the_two_best():
    # The first start's objective is lowest at λ = 6 and 8; the third start at λ = 6 is
    # better still, and the second start at λ = 2 (never polished) best of all.
    first = {10.0: 5.0, 8.0: 3.0, 6.0: 4.0, 4.0: 6.0, 2.0: 7.0}
    other = {(6.0, 2): 1.0, (2.0, 1): 0.0}

    def objective(lam, restart):
        return first.get(lam, 9.0) if restart == 0 else other.get((lam, restart), 8.0)

    chosen, calls = _path(objective, n_restarts=3)
    assert calls[0] == (math.inf, (0,))
    assert calls[1:6] == [(lam, (0,)) for lam in (10.0, 8.0, 6.0, 4.0, 2.0)]
    assert calls[6:] == [(8.0, (1, 2)), (6.0, (1, 2))]
    assert chosen.lam == 6.0 and chosen.result.restarts == (2,)
    assert [fit.restarts for fit in chosen.results] == [(2,), (0,), (1,)]  # every start
    assert chosen.path["scores"] == [-5.0, -3.0, -4.0, -6.0, -7.0]
    assert chosen.path["polished"] == [[8.0, -3.0], [6.0, -1.0]]


def test_a_polished_radius_keeps_its_first_fit_when_no_other_start_beats_it():
    chosen, calls = _path(lambda lam, restart: lam / 10 + restart, n_restarts=2)
    assert calls[6:] == [(2.0, (1,)), (4.0, (1,))]
    assert chosen.lam == 2.0 and chosen.result.restarts == (0,)


def test_one_start_fits_the_path_once_and_keeps_its_best_radius():
    chosen, calls = _path(lambda lam, restart: abs(lam - 4.0), n_restarts=1)
    assert len(calls) == 6 and all(restarts == (0,) for _, restarts in calls)
    assert chosen.lam == 4.0 and "polished" not in chosen.path


def test_the_validation_refit_runs_at_the_best_scored_radius_only():
    refits = []

    def refit(lam, key, stage):
        refits.append(lam)
        return [Fit(lam, [0], 0.0)]

    chosen, calls = _path(lambda lam, restart: abs(lam - 8.0), n_restarts=3, refit=refit)
    assert len(calls) == 6 and refits == [8.0] and chosen.lam == 8.0


@pytest.mark.parametrize("lam_max, n, expected", [(10.0, 5, [10, 8, 6, 4, 2]),
                                                  (3.0, 1, [3.0])])
def test_the_grid_runs_from_lam_max_down(lam_max, n, expected):
    np.testing.assert_allclose(selection.lambda_grid(lam_max, n), expected)
