"""Units of the data: the learned noise variances follow the data's scale, so a fit is
equivariant to a common change of units (``noise_variance="equal"``) and, with
``standardize=True``, to a change of units of every column on its own."""

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions
from prodag.initialization import noise_variance_start
from prodag.models.linear import LinearSEM

NAMES = ["a", "b", "c", "d"]


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
    base = _fit(X, noise_variance="equal")
    in_data_units = base.noise_variance_ * base.scale_ ** 2
    assert np.all(in_data_units == in_data_units[0])
    assert 0.6 < in_data_units[0] < 1.5
    for factor, shift in ((1e-4, 3.0), (1e5, -2e6)):
        other = _fit(X * factor + shift, noise_variance="equal")
        np.testing.assert_allclose(other.noise_variance_ * other.scale_ ** 2,
                                   in_data_units * factor ** 2, rtol=1e-3)
        np.testing.assert_allclose(other.edge_probabilities(), base.edge_probabilities(),
                                   atol=0.02)


def test_the_paper_protocol_is_not_equivariant():
    """Unit noise variance in the data's units: the same data in other units change the
    answer (the reason for the default ``noise_variance="equal"``)."""
    X = _data()
    base = _fit(X, noise_variance=1.0)
    other = _fit(X * 1e-3, noise_variance=1.0)
    assert np.abs(other.edge_probabilities() - base.edge_probabilities()).max() > 0.5


def test_standardised_fit_is_invariant_to_units_of_each_column():
    X = _data()
    base = _fit(X, noise_variance="estimate", standardize=True)
    factors = np.array([1e-3, 5.0, 1e3, 0.02])
    other = _fit(X * factors + np.array([1.0, -50.0, 1e4, 7.0]),
                 noise_variance="estimate", standardize=True)
    np.testing.assert_allclose(other.edge_probabilities(), base.edge_probabilities(), atol=0.02)
    np.testing.assert_allclose(other.noise_variance_, base.noise_variance_, rtol=1e-3)
    # weights come back in the units of the data: w_jk scales by factor_k / factor_j
    ratio = factors[None, :] / factors[:, None]
    np.testing.assert_allclose(other.sample(50, seed=3), base.sample(50, seed=3) * ratio,
                               rtol=1e-3, atol=1e-9)


def test_equal_noise_round_trips(tmp_path):
    fit = _fit(_data(), noise_variance="equal")
    fit.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.noise_variance_, fit.noise_variance_)
    np.testing.assert_array_equal(loaded.edge_probabilities(), fit.edge_probabilities())
