"""The reference sampler (``benchmarks.reference_sampler``) against brute-force posteriors
(``oracles``: quadrature on two nodes, importance sampling on three). Tolerances come from
both Monte Carlo errors; each test also checks that a wrong target (the other radius, or
another noise variance) lies outside them, so the comparison can fail.
"""

import numpy as np
import pytest

from benchmarks import reference_sampler
from oracles import chain_data, three_node_oracle, two_node_oracle

TWO = reference_sampler.Tempering(n_replicas=4, n_temperatures=3, beta_min=0.1,
                                  n_steps=20000, burn_in=2000, thin=5)
THREE = reference_sampler.Tempering(n_replicas=4, n_temperatures=3, beta_min=0.1,
                                    n_steps=30000, burn_in=3000, thin=5)


@pytest.mark.parametrize("lam, wrong", [
    pytest.param(np.inf, {"lam": 0.3}, marks=pytest.mark.slow), (0.3, {"lam": np.inf}),
    pytest.param(np.inf, {"noise_variance": 2.0}, marks=pytest.mark.slow)])
def test_two_nodes_match_quadrature(lam, wrong):
    X = chain_data(2)
    run = reference_sampler.sample(X, lam, tempering=TWO)
    estimate, error = run.edge_probabilities[0, 1], run.mc_error[0, 1]
    tolerance = 4 * error + 0.005
    assert abs(run.edge_probabilities[0, 1] + run.edge_probabilities[1, 0] - 1) < 1e-9
    assert abs(estimate - two_node_oracle(X, lam)) < tolerance
    assert abs(estimate - two_node_oracle(X, **{"lam": lam, **wrong})) > tolerance


@pytest.mark.parametrize("noise", ["equal", "estimate"])
def test_two_nodes_with_learned_noise_match_quadrature_over_it(noise):
    """The noise variance integrated out (shared, or one per variable); the other learned
    model must lie outside the tolerance."""
    X = chain_data(2)
    run = reference_sampler.sample(X, 0.5, noise, tempering=TWO)
    estimate, error = run.edge_probabilities[0, 1], run.mc_error[0, 1]
    tolerance = 4 * error + 0.005
    assert abs(estimate - two_node_oracle(X, 0.5, noise)) < tolerance
    other = "estimate" if noise == "equal" else "equal"
    assert abs(estimate - two_node_oracle(X, 0.5, other)) > tolerance


@pytest.mark.parametrize("lam, wrong_lam", [pytest.param(np.inf, 1.0, marks=pytest.mark.slow),
                                            (1.0, np.inf)])
def test_three_nodes_match_importance_sampling(lam, wrong_lam):
    X = chain_data(3)
    run = reference_sampler.sample(X, lam, tempering=THREE)
    oracle, oracle_error = three_node_oracle(X, lam)
    off = ~np.eye(3, dtype=bool)
    tolerance = 4 * np.sqrt(run.mc_error ** 2 + oracle_error ** 2) + 0.005
    assert np.all(np.abs(run.edge_probabilities - oracle)[off] < tolerance[off])
    wrong, _ = three_node_oracle(X, wrong_lam)
    assert np.any(np.abs(run.edge_probabilities - wrong)[off] > tolerance[off])


def test_edge_probabilities_of_saved_draws_count_projected_edges():
    W_tilde = np.random.default_rng(0).standard_normal((2, 50, 3, 3))
    W = reference_sampler.graphs(W_tilde, 1.0)
    edges = W != 0
    assert np.allclose(reference_sampler.edge_probabilities(edges),
                       edges.reshape(-1, 3, 3).mean(axis=0))
    assert np.all(np.abs(W).sum(axis=(-2, -1)) <= 1.0 + 1e-5)
    assert np.allclose(reference_sampler.replica_edge_probabilities(edges).mean(axis=0),
                       reference_sampler.edge_probabilities(edges))


def test_the_reference_counts_edges_as_the_fit_does():
    """Two nodes, ``x_2 = w x_1 + ε``: with unit noise the edge's effect size is ``|w|``, so
    0.1 is negligible and 0.5 is an edge; with noise learned per variable the draw's noise is
    its residual variance, so the same weights count against the data's noise."""
    W = np.zeros((2, 2, 2))
    W[0, 0, 1], W[1, 0, 1] = 0.1, 0.5
    counted = reference_sampler.counted_edges(W, np.zeros((10, 2)), 1.0)
    assert counted[:, 0, 1].tolist() == [False, True]
    assert not counted[:, 1, 0].any()
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal(400)
    X = np.column_stack([x1, 0.5 * x1 + 0.1 * rng.standard_normal(400)])
    variances = reference_sampler.draw_noise_variances(W, X, "estimate")
    centred = X - X.mean(axis=0)
    residual = centred[:, 1] - W[1, 0, 1] * centred[:, 0]
    np.testing.assert_allclose(variances[1], [np.mean(centred[:, 0] ** 2),
                                              np.mean(residual ** 2)])
    # the second variable's noise is about 0.01: both weights are effects against it
    assert reference_sampler.counted_edges(W, X, "estimate")[:, 0, 1].tolist() == [True, True]
    shared = reference_sampler.draw_noise_variances(W, X, "equal")
    np.testing.assert_allclose(shared, variances.mean(axis=-1, keepdims=True).repeat(2, -1))
