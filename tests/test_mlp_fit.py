"""Fitting the MLP SEM end to end through ``ProDAG(sem="mlp")``: recovery, sampling, predict,
save/load. One short fit is shared by the API tests (module fixture) to keep compile time low;
the statistical check fits longer and is marked slow."""

import jax.numpy as jnp
import numpy as np
import pytest

from prodag import NetworkOptions, ProDAG, TrainingOptions
from prodag.graph import is_dag
from prodag.models.mlp import MLPSEM

HIDDEN_UNITS = 4
LAM = 3.0


def nonlinear_chain(n, seed):
    """x0 → x1 → x2 with saturating and convex links; x0 and x2 are independent given x1."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-2, 2, n)
    x1 = 2 * np.tanh(2 * x0) + 0.3 * rng.standard_normal(n)
    x2 = np.exp(0.7 * x1) + 0.3 * rng.standard_normal(n)
    return np.column_stack([x0, x1, x2])


@pytest.fixture(scope="module")
def chain():
    return nonlinear_chain(200, seed=0)


@pytest.fixture(scope="module")
def fitted(chain):
    """A short fit for the API's mechanics (the statistical checks fit longer, below)."""
    return ProDAG(sem="mlp", network=NetworkOptions(hidden_units=HIDDEN_UNITS), lam=LAM,
                  n_samples=8, noise_variance=0.1, max_epochs=5, n_chains=1, seed=0,
                  progress=False, training=TrainingOptions(n_restarts=1)).fit(chain)


@pytest.mark.slow
def test_recovers_the_skeleton_of_a_nonlinear_chain_and_predicts_it(chain):
    # the ELBO has local optima (orders); restarts keep the fit with the best objective
    fitted = ProDAG(sem="mlp", network=NetworkOptions(hidden_units=HIDDEN_UNITS), lam=LAM,
                    n_samples=16, noise_variance=0.1, max_epochs=80, n_chains=1, seed=0,
                    progress=False, training=TrainingOptions(patience=10, n_restarts=4)
                    ).fit(chain)
    probabilities = fitted.edge_probabilities(200)
    either_way = probabilities + probabilities.T
    assert either_way[0, 1] > 0.9 and either_way[1, 2] > 0.9, probabilities
    assert either_way[0, 2] < 0.3, probabilities
    # x2 ≈ exp(0.7 x1) is learned: the prediction beats the mean by a wide margin
    residual = chain[:, 2] - fitted.predict(chain, n_samples=50, seed=2)[:, 2]
    assert np.mean(residual ** 2) < 0.3 * np.var(chain[:, 2])


def test_samples_are_dags_whose_entries_are_the_first_layer_group_norms(fitted):
    graphs, weights = fitted.sample(200, seed=1), fitted.sample_weights(200, seed=1)
    assert graphs.shape == (200, 3, 3)
    assert weights["W1"].shape == (200, 3, 3, HIDDEN_UNITS)
    assert all(is_dag(g) for g in graphs)
    np.testing.assert_allclose(graphs, np.linalg.norm(weights["W1"], axis=-1), rtol=1e-5,
                               atol=1e-6)
    assert np.all(np.abs(graphs).sum(axis=(1, 2)) <= LAM * (1 + 1e-5))


def test_predict_is_the_mean_of_the_sampled_networks(fitted, chain):
    X = chain[:7]
    got = fitted.predict(X, n_samples=50, seed=2)
    weights = fitted.sample_weights(50, seed=2)
    model = MLPSEM(hidden_units=HIDDEN_UNITS)
    Z = jnp.asarray(X - fitted.mean_, jnp.float32)
    means = model.predict_mean({k: jnp.asarray(v) for k, v in weights.items()}, Z)
    np.testing.assert_allclose(got, np.asarray(means).mean(axis=0) + fitted.mean_, rtol=1e-4,
                               atol=1e-4)


def test_save_load_round_trip_samples_and_predicts_identically(fitted, chain, tmp_path):
    path = tmp_path / "mlp_posterior.npz"
    fitted.save(path)
    loaded = ProDAG.load(path)
    assert loaded.sem == "mlp" and loaded.network.hidden_units == HIDDEN_UNITS
    graphs, weights = fitted.sample(20, seed=3), fitted.sample_weights(20, seed=3)
    graphs_loaded = loaded.sample(20, seed=3)
    weights_loaded = loaded.sample_weights(20, seed=3)
    np.testing.assert_array_equal(graphs, graphs_loaded)
    for name in weights:
        np.testing.assert_array_equal(weights[name], weights_loaded[name])
    np.testing.assert_array_equal(fitted.predict(chain[:5], n_samples=10, seed=4),
                                  loaded.predict(chain[:5], n_samples=10, seed=4))
