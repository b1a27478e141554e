"""Units of the data: the learned noise variances follow the data's scale, so a fit is
equivariant to a common change of units (``noise_variance="equal"``) and, with
``standardize=True``, to a change of units of every column on its own."""

import copy
import functools

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from montecarlo import assert_means_agree, assert_probabilities_agree, seed_spread
from prodag import ProDAG, TrainingOptions
from prodag.fit import prepare
from prodag.inference.initialization import noise_variance_start
from prodag.models.linear import LinearSEM

NAMES = ["a", "b", "c", "d"]
SEEDS = (0, 1)
"""A change of units must move a fit no more than a change of seed does (plus sampling
error): the fits are chaotic, so on another CPU rounding alone moves them that far."""
N_DRAWS = 1000
LOG_FLOOR = 0.05
"""Least relative change of a learned noise variance allowed, and least change of a mean
weight (in X's units, whose columns have standard deviations 1 to 1.6): two seeds may agree more
closely than a third fit does (over seeds 0-3 the noise variances spread by up to 6%, the mean
weights by up to 0.03)."""


def _data(n=300, seed=0):
    """a → b → c, a → d with unit noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    X[:, 1] += 0.9 * X[:, 0]
    X[:, 2] += -0.8 * X[:, 1]
    X[:, 3] += 1.2 * X[:, 0]
    return X


def _fit(X, **options):
    settings = {"lam": 3.0, "seed": 0, "progress": False, "max_epochs": 20, "n_samples": 20,
                "training": TrainingOptions(n_restarts=1), **options}
    return ProDAG(**settings).fit(pd.DataFrame(X, columns=NAMES))


@functools.cache
def _equal_noise_fit(seed):
    """The fit of ``_data()`` with a learned shared noise variance, by seed (shared by the
    equivariance test and the round trip; neither changes it)."""
    return _fit(_data(), noise_variance="equal", seed=seed)


def test_noise_variance_start_scales_with_the_data():
    X = _data()
    X = X - X.mean(axis=0)
    start = noise_variance_start(X)
    assert 0.7 < start < 1.3  # every equation has unit noise
    assert noise_variance_start(X * 1e3) == pytest.approx(start * 1e6, rel=1e-9)


def test_a_shared_variance_is_the_same_as_equal_variances_per_variable():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 3))
    model = LinearSEM()
    data = model.prepare_data(jnp.asarray(X))
    weights = {"W": jnp.asarray(np.triu(rng.standard_normal((2, 3, 3)), k=1))}
    shared = model.log_likelihood(weights, data, jnp.asarray([0.7]))
    each = model.log_likelihood(weights, data, jnp.full(3, 0.7))
    np.testing.assert_allclose(shared, each, rtol=1e-12)


def test_equal_noise_fit_is_equivariant_to_a_common_change_of_units():
    X = _data()
    bases = [_equal_noise_fit(seed) for seed in SEEDS]
    base = bases[0]
    in_data_units = base.noise_variance_ * base.scale_ ** 2
    assert np.all(in_data_units == in_data_units[0])
    assert 0.6 < in_data_units[0] < 1.5
    log_spread = seed_spread([np.log(b.noise_variance_ * b.scale_ ** 2) for b in bases])
    probability_spread = seed_spread([b.edge_probabilities(N_DRAWS) for b in bases])
    for factor, shift in ((1e-4, 3.0), (1e5, -2e6)):
        other = _fit(X * factor + shift, noise_variance="equal")
        # exact up to rounding: the model sees the same data
        np.testing.assert_allclose(other.scale_, base.scale_ * factor, rtol=1e-9)
        # the learned variance, in data units, moves by factor² and otherwise within the fit's
        # own spread over seeds
        moved = np.log(other.noise_variance_ * other.scale_ ** 2 / factor ** 2)
        assert np.all(np.abs(moved - np.log(in_data_units)) <= log_spread + LOG_FLOOR)
        assert_probabilities_agree(other.edge_probabilities(N_DRAWS),
                                   base.edge_probabilities(N_DRAWS), N_DRAWS,
                                   probability_spread, f"units x{factor}")


def test_the_paper_protocol_is_not_equivariant():
    """Unit noise variance in the data's units: the same data in other units change the
    answer (the reason for the default ``noise_variance="equal"``)."""
    X = _data()
    base = _fit(X, noise_variance=1.0)
    other = _fit(X * 1e-3, noise_variance=1.0)
    assert np.abs(other.edge_probabilities() - base.edge_probabilities()).max() > 0.5


def test_standardised_fit_is_invariant_to_units_of_each_column():
    """Exact where the arithmetic is exact (the standardised data, the mapping of one fit's
    draws to data units); within Monte Carlo error and the seeds' spread for the fits."""
    X = _data()
    factors, shifts = np.array([1e-3, 5.0, 1e3, 0.02]), np.array([1.0, -50.0, 1e4, 7.0])
    Y = X * factors + shifts
    settings = ProDAG(noise_variance="estimate", standardize=True, seed=0)
    seen, seen_other = (prepare.preprocess(settings, pd.DataFrame(data, columns=NAMES), None,
                                             None, None) for data in (X, Y))
    np.testing.assert_allclose(seen_other.Z, seen.Z, rtol=0, atol=1e-9)
    np.testing.assert_allclose(seen_other.scale, seen.scale * factors, rtol=1e-12)

    bases = [_fit(X, noise_variance="estimate", standardize=True, seed=seed) for seed in SEEDS]
    base, other = bases[0], _fit(Y, noise_variance="estimate", standardize=True)
    assert_probabilities_agree(other.edge_probabilities(N_DRAWS),
                               base.edge_probabilities(N_DRAWS), N_DRAWS,
                               seed_spread([b.edge_probabilities(N_DRAWS) for b in bases]),
                               "standardised fit in other units")
    log_spread = seed_spread([np.log(b.noise_variance_) for b in bases])
    assert np.all(np.abs(np.log(other.noise_variance_ / base.noise_variance_))
                  <= log_spread + LOG_FLOOR)

    # weights come back in the units of the data: w_jk scales by factor_k / factor_j. Exact
    # for the draws of one fit: the same standardised draws, mapped back with X's scales
    ratio = factors[None, :] / factors[:, None]
    in_units_of_X = copy.copy(other)
    in_units_of_X.posterior_ = other.posterior_._replace(scale=base.scale_, mean=base.mean_)
    np.testing.assert_allclose(other.sample(50, seed=3) / ratio,
                               in_units_of_X.sample(50, seed=3), rtol=1e-9, atol=1e-15)
    # and the posterior of the weights agrees with the fit in X's units
    assert_means_agree(other.sample(N_DRAWS) / ratio, base.sample(N_DRAWS),
                       seed_spread([b.sample(N_DRAWS).mean(axis=0) for b in bases]) + LOG_FLOOR,
                       "mean weights in X's units")


def test_equal_noise_round_trips(tmp_path):
    fit = _equal_noise_fit(0)
    fit.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.noise_variance_, fit.noise_variance_)
    np.testing.assert_array_equal(loaded.edge_probabilities(), fit.edge_probabilities())
