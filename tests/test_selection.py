"""The λ path of prodag.inference.radius_selection with stand-in fits: which starts run where,
and which radius is kept."""

import math

import jax
import numpy as np
import pytest

from prodag.config.spec import PATH_SCREEN, SCREENED_PATH_SCREEN
from prodag.inference import radius_selection


class Fit:
    def __init__(self, lam, restarts, objective):
        self.lam, self.restarts, self.objective = lam, tuple(restarts), objective


def _path(objective_of, n_restarts, n_lambdas=5, refit=None, n_chains=1, narrow=None,
          screen=PATH_SCREEN):
    """Run ``select_lambda`` with fits whose objective is ``objective_of(lam, restart)``;
    returns chain 0's selection and every batch of chain 0's fits as ``(lam, restarts)``
    (the starts of one radius grouped, in order)."""
    calls, batches = [], []
    _path.screens = []  # each batch's screen argument

    def fit_members(specs, stage, screen=None, unplanned=False):
        batches.append(specs)
        _path.screens.append(screen)
        for spec in specs:
            if spec.chain == 0 and (not calls or calls[-1][0] != spec.lam
                                    or spec.start <= calls[-1][1][-1]
                                    or len(batches) != calls[-1][2]):
                calls.append((spec.lam, (spec.start,), len(batches)))
            elif spec.chain == 0:
                calls[-1] = (spec.lam, calls[-1][1] + (spec.start,), len(batches))
        return [Fit(spec.lam, [spec.start], objective_of(spec.lam, spec.start))
                for spec in specs]

    keys = [jax.random.PRNGKey(c) for c in range(n_chains)]
    chosen = radius_selection.select_lambda(
        fit_members, lambda chain, result, key: 10.0,
        lambda chain, result, lam, key: -result.objective,
        n_lambdas, "elbo", keys, n_restarts, refit, narrow, screen)
    assert len(chosen) == n_chains
    return chosen[0], [(lam, restarts) for lam, restarts, _ in calls], batches


def test_the_path_fits_one_start_per_radius_and_every_start_at_the_two_best():
    # The first start's objective is lowest at λ = 6 and 8; the third start at λ = 6 is
    # better still, and the second start at λ = 2 (never polished) best of all.
    first = {10.0: 5.0, 8.0: 3.0, 6.0: 4.0, 4.0: 6.0, 2.0: 7.0}
    other = {(6.0, 2): 1.0, (2.0, 1): 0.0}

    def objective(lam, restart):
        return first.get(lam, 9.0) if restart == 0 else other.get((lam, restart), 8.0)

    chosen, calls, _ = _path(objective, n_restarts=3)
    assert calls[0] == (math.inf, (0,))
    assert calls[1:6] == [(lam, (0,)) for lam in (10.0, 8.0, 6.0, 4.0, 2.0)]
    assert calls[6:] == [(8.0, (1, 2)), (6.0, (1, 2))]
    assert chosen.lam == 6.0 and chosen.result.restarts == (2,)
    assert [fit.restarts for fit in chosen.results] == [(2,), (0,), (1,)]  # every start
    assert chosen.path["scores"] == [-5.0, -3.0, -4.0, -6.0, -7.0]
    assert chosen.path["polished"] == [[8.0, -3.0], [6.0, -1.0]]


def test_only_the_radii_compared_by_their_elbo_are_screened():
    _path(lambda lam, restart: abs(lam - 6.0), n_restarts=2)
    assert _path.screens == [None, PATH_SCREEN, None]  # λ = ∞, the radii, the polished starts
    _path(lambda lam, restart: abs(lam - 6.0), n_restarts=2, screen=SCREENED_PATH_SCREEN)
    assert _path.screens == [None, SCREENED_PATH_SCREEN, None]
    _path(lambda lam, restart: lam, n_restarts=2, refit=lambda specs, stage: [
        Fit(spec.lam, [spec.start], 0.0) for spec in specs])
    assert _path.screens == [None, None]  # the validation criterion compares held-out rows


def test_a_polished_radius_keeps_its_first_fit_when_no_other_start_beats_it():
    # the grid's smallest radius, 2, scores best: 1 and 0.5 are tried below it, and lose
    chosen, calls, _ = _path(lambda lam, restart: (lam / 10 if lam >= 2 else 1.0) + restart,
                             n_restarts=2)
    assert calls[6:] == [(1.0, (0,)), (0.5, (0,)), (2.0, (1,)), (4.0, (1,))]
    assert chosen.lam == 2.0 and chosen.result.restarts == (0,)


def test_radii_below_the_grid_are_tried_while_its_smallest_scores_best():
    """The ELBO peaks at 0.6, below the grid 10 … 2: round one tries 1 and 0.5, round two
    0.25 and 0.125; 0.5 stays best, so the rounds end and 0.5 and 0.25 are polished."""
    chosen, calls, batches = _path(lambda lam, restart: abs(lam - 0.6) + restart, n_restarts=2)
    assert chosen.path["lambdas"] == [10.0, 8.0, 6.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.125]
    assert chosen.path["lam_max"] == 10.0 and chosen.lam == 0.5
    assert [len(batch) for batch in batches] == [1, 5, 2, 2, 2]
    assert chosen.path["polished"] == [[0.5, pytest.approx(-0.1)], [0.25, pytest.approx(-0.35)]]
    # always improving: at most BELOW_GRID_ROUNDS rounds
    chosen, _, batches = _path(lambda lam, restart: lam + restart, n_restarts=1)
    assert len(chosen.path["lambdas"]) == 5 + radius_selection.BELOW_GRID_ROUNDS * len(
        radius_selection.BELOW_GRID) and chosen.lam == 0.125
    # one radius only: nothing to compare, nothing below
    chosen, _, _ = _path(lambda lam, restart: lam, n_restarts=1, n_lambdas=1)
    assert chosen.path["lambdas"] == [10.0]


def test_one_start_fits_the_path_once_and_keeps_its_best_radius():
    chosen, calls, _ = _path(lambda lam, restart: abs(lam - 4.0), n_restarts=1)
    assert len(calls) == 6 and all(restarts == (0,) for _, restarts in calls)
    assert chosen.lam == 4.0 and "polished" not in chosen.path


def test_the_validation_refit_runs_at_the_best_scored_radius_only():
    refits = []

    def refit(specs, stage):
        refits.extend((spec.lam, spec.start) for spec in specs)
        return [Fit(spec.lam, [spec.start], float(spec.start)) for spec in specs]

    chosen, calls, _ = _path(lambda lam, restart: abs(lam - 8.0), n_restarts=3, refit=refit)
    assert len(calls) == 6 and refits == [(8.0, 0), (8.0, 1), (8.0, 2)] and chosen.lam == 8.0
    assert [fit.restarts for fit in chosen.results] == [(0,), (1,), (2,)]


def test_every_stage_of_every_chain_is_one_batch():
    """Three chains: the λ = ∞ fits, the radii and the polished starts are three batches,
    each with every chain's members; each chain keeps its own best radius."""
    chosen, _, batches = _path(lambda lam, restart: abs(lam - 4.0) + restart, n_restarts=3,
                               n_chains=3)
    assert [len(batch) for batch in batches] == [3, 3 * 5, 3 * 2 * 2]
    assert [{spec.chain for spec in batch} for batch in batches] == [{0, 1, 2}] * 3
    keys = {tuple(np.asarray(jax.random.key_data(spec.key)).ravel()) for batch in batches
            for spec in batch}
    assert len(keys) == 3 + 15 + 12  # every fit trains with its own key
    assert chosen.lam == 4.0


def _spec_keys(batches, lam):
    """``{start: key data}`` of chain 0's members at radius ``lam`` over ``batches``."""
    return {spec.start: tuple(np.asarray(jax.random.key_data(spec.key)).ravel())
            for batch in batches for spec in batch if spec.chain == 0 and spec.lam == lam}


def test_narrowing_runs_the_deciding_starts_at_both_radii_and_the_others_at_the_named_one():
    """With ``narrow`` (the near-tie rule), the first ``DECIDING_STARTS`` starts run at both
    polished radii (8 and 6), ``narrow`` names one from their best fits, and the other
    starts run there only, with the keys they have without narrowing: the named radius ends
    with the same fits either way."""
    deciding, n_restarts = radius_selection.DECIDING_STARTS, radius_selection.DECIDING_STARTS + 2

    def objective(lam, restart):  # 8 best after one start each; 6 best once polished
        return {8.0: 3.0, 6.0: 4.0}.get(lam, 9.0) - (3.0 if (lam, restart) == (6.0, 2) else 0.0)

    told = []

    def narrow(chain, scored):
        told.append((chain, scored))
        return min(lam for lam, _ in scored)

    plain, _, plain_batches = _path(objective, n_restarts)
    chosen, calls, batches = _path(objective, n_restarts, narrow=narrow)
    assert told == [(0, [(8.0, -3.0), (6.0, -1.0)])]  # after the deciding starts
    assert calls[6:] == [(8.0, tuple(range(1, deciding))), (6.0, tuple(range(1, deciding))),
                         (6.0, tuple(range(deciding, n_restarts)))]
    assert [len(batch) for batch in batches] == [1, 5, 2 * (deciding - 1),
                                                 n_restarts - deciding]
    assert _spec_keys(batches, 6.0) == _spec_keys(plain_batches, 6.0)
    assert sorted(fit.restarts for fit in chosen.results) == [(r,) for r in range(n_restarts)]
    assert chosen.lam == plain.lam == 6.0 and chosen.result.restarts == (2,)
    assert chosen.path["polished"] == plain.path["polished"]
    # with no more starts than decide, narrowing changes nothing
    for n in (2, deciding):
        assert _path(objective, n, narrow=narrow)[1] == _path(objective, n)[1]


@pytest.mark.parametrize("select_by, narrow", [("elbo", None),
                                               ("elbo-sparse", lambda c, scored: scored[0][0])])
def test_the_plan_counts_the_fits_of_the_path_narrowed_or_not(select_by, narrow):
    """``prodag.fit.plan.n_fits`` (the progress bar's total) against the fits the path runs
    for two chains, with ``narrow`` where the fit passes it (``select_by="elbo-sparse"``)."""
    from prodag import ProDAG, TrainingOptions
    from prodag.config.spec import resolve
    from prodag.fit.plan import n_fits

    n_restarts = radius_selection.DECIDING_STARTS + 2
    spec = resolve(ProDAG(n_chains=2, training=TrainingOptions(
        n_lambdas=5, n_restarts=n_restarts, select_by=select_by)), None, 4)
    _, _, batches = _path(lambda lam, restart: abs(lam - 6.0), n_restarts, n_chains=2,
                          narrow=narrow)
    assert sum(len(batch) for batch in batches) == n_fits(spec, False)


@pytest.mark.parametrize("lam_max, n, expected", [(10.0, 5, [10, 8, 6, 4, 2]),
                                                  (3.0, 1, [3.0])])
def test_the_grid_runs_from_lam_max_down(lam_max, n, expected):
    np.testing.assert_allclose(radius_selection.lambda_grid(lam_max, n), expected)


def test_the_sparse_rule_takes_the_smallest_polished_radius_within_the_contender_margin():
    """``select_by="elbo-sparse"`` (``prodag.fit.chains.sparse_fits``): of the polished radii
    whose best ELBO is within ``CONTENDER_NATS`` of the best, the smallest; the path's fits at
    larger radii are not pooled, those at smaller ones are (their evidence decides)."""
    from prodag.fit.chains import sparse_fits
    from prodag.inference.radius_selection import Selection
    from prodag.posterior.chains import CONTENDER_NATS

    fits = [(129.5, "a"), (108.5, "b"), (108.5, "c"), (86.8, "d"), (86.8, "e"), (65.1, "f")]
    path = {"lambdas": [129.5, 108.5, 86.8, 65.1], "scores": [-126.0, -124.8, -125.0, -127.0]}
    gap = 0.9 * CONTENDER_NATS / 100  # per row, at n = 100: a near-tie
    tied = Selection([], 108.5, {**path, "polished": [[108.5, -124.6], [86.8, -124.6 - gap]]},
                     fits)
    assert [name for _, name in sparse_fits(tied, 100)] == ["d", "e", "f"]
    clear = Selection([], 108.5, {**path, "polished": [[108.5, -124.6],
                                                       [86.8, -124.6 - 2 * gap]]}, fits)
    assert [name for _, name in sparse_fits(clear, 100)] == ["b", "c", "d", "e", "f"]
    unpolished = Selection([], 108.5, path, fits)  # one start: the path's own scores
    assert [name for _, name in sparse_fits(unpolished, 1000)] == ["b", "c", "d", "e", "f"]
    assert [name for _, name in sparse_fits(unpolished, 100)] == ["d", "e", "f"]


@pytest.mark.parametrize("select_by, p, expected", [
    ("auto", 99, "elbo"), ("auto", 100, "elbo-sparse"), ("elbo", 500, "elbo"),
    ("elbo-sparse", 20, "elbo-sparse"), ("validation", 100, "validation")])
def test_the_default_criterion_is_the_sparse_rule_from_100_variables_on(select_by, p, expected):
    """``select_by="auto"`` resolves by p (``prodag.config.spec.resolved_select_by``); a named
    criterion stays what it is, and the fit's spec carries the criterion its path records."""
    from prodag import ProDAG, TrainingOptions
    from prodag.config.spec import resolve

    spec = resolve(ProDAG(training=TrainingOptions(select_by=select_by)), None, p)
    assert spec.select_by == expected
