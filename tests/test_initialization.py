"""The data-driven start of the linear SEM: top-down order and ordered regressions."""

import jax
import numpy as np
import pytest

from prodag import simulate
from prodag.inference.initialization import (additive_start, linear_start, ordered_regression,
                                   top_down_order)


def _positions(order):
    positions = np.empty(len(order), dtype=int)
    positions[order] = np.arange(len(order))
    return positions


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_down_order_is_a_topological_order_of_the_truth_with_plenty_of_data(seed):
    data = simulate.dataset(p=8, s=12, n=20000, seed=seed)
    X = data.X - data.X.mean(axis=0)
    order = top_down_order(X.T @ X / len(X), np.ones(8))
    assert sorted(order) == list(range(8))
    positions = _positions(order)
    parents, children = np.nonzero(data.adjacency)
    assert np.all(positions[parents] < positions[children])


def test_top_down_order_divides_by_the_noise_variance():
    # Two independent variables: the one with less variance per unit of noise comes first.
    covariance = np.diag([4.0, 1.0])
    assert list(top_down_order(covariance, np.array([1.0, 1.0]))) == [1, 0]
    assert list(top_down_order(covariance, np.array([16.0, 1.0]))) == [0, 1]


def test_ordered_regression_is_least_squares_on_the_predecessors():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) @ rng.normal(size=(5, 5))
    X -= X.mean(axis=0)
    order = np.array([3, 0, 4, 1, 2])
    W = ordered_regression(X.T @ X / len(X), order, ridge=0.0)
    for place in range(5):
        child, parents = order[place], order[:place]
        expected = (np.linalg.lstsq(X[:, parents], X[:, child], rcond=None)[0]
                    if place else np.zeros(0))
        np.testing.assert_allclose(W[parents, child], expected, rtol=1e-8, atol=1e-10)
        later = order[place:]
        assert np.all(W[later, child] == 0)  # no backward or self weights


def test_linear_start_recovers_the_weights_with_plenty_of_data():
    data = simulate.dataset(p=6, s=8, n=50000, seed=3)
    start = linear_start(data.X - data.X.mean(axis=0), np.ones(6))
    np.testing.assert_allclose(start, data.weights, atol=0.05)


def test_linear_start_regresses_along_a_given_order():
    data = simulate.dataset(p=5, s=6, n=200, seed=4)
    X = data.X - data.X.mean(axis=0)
    covariance = X.T @ X / X.shape[0]
    np.testing.assert_array_equal(
        linear_start(X, np.ones(5)),
        linear_start(X, np.ones(5), order=top_down_order(covariance, np.ones(5))))
    order = np.array([4, 2, 0, 3, 1])
    np.testing.assert_allclose(linear_start(X, np.ones(5), order=order),
                               ordered_regression(covariance, order, 0.01), rtol=1e-12)


@pytest.mark.parametrize("hidden_units, hidden_layers", [(10, 1), (7, 2), (2, 3)])
def test_relu_network_start_computes_the_linear_start(hidden_units, hidden_layers):
    import jax.numpy as jnp

    from prodag.inference.initialization import relu_network_start
    from prodag.models.mlp import MLPSEM

    rng = np.random.default_rng(0)
    linear, X = rng.normal(size=(5, 5)), rng.normal(size=(9, 5))
    weights = relu_network_start(linear, hidden_units, hidden_layers)
    model = MLPSEM(hidden_units, "relu", bias=False, hidden_layers=hidden_layers)
    assert {k: v.shape for k, v in weights.items()} == model.weight_shapes(5)
    batched = {name: jnp.asarray(value)[None] for name, value in weights.items()}
    np.testing.assert_allclose(model.predict_mean(batched, jnp.asarray(X))[0], X @ linear,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.graph_of(batched)[0], np.abs(linear), rtol=1e-5,
                               atol=1e-6)


def test_relu_network_start_needs_a_pair_of_units():
    from prodag.inference.initialization import relu_network_start

    with pytest.raises(ValueError, match="hidden_units"):
        relu_network_start(np.eye(3), 1, 1)


def test_additive_start_is_the_ridge_regression_on_the_features_of_the_placed_variables():
    """Oracle: node k's start reproduces (``coefficients``) the least-squares fit of x_k on
    ``(x_j, |x_j|)`` of every variable placed before it plus an intercept, and a V-shaped
    child ``y = 2|x| + ε`` comes after x with strength ≈ 2 on the |x| feature."""
    import jax.numpy as jnp
    from prodag.models.additive import coefficients, features

    rng = np.random.default_rng(3)
    x = rng.standard_normal(3000)
    z = 0.8 * x + rng.standard_normal(3000)
    y = 2.0 * np.abs(x) + rng.standard_normal(3000)
    X = np.column_stack([y, x, z])
    X = X - X.mean(axis=0)
    start = additive_start(X, np.ones(3), ridge=0.0)
    with jax.enable_x64(True):
        theta = np.asarray(coefficients({k: jnp.asarray(v)[None] for k, v in start.items()}))[0]
    F = features(X, xp=np)
    order = np.argsort((theta[:-1] != 0).sum(axis=0))  # the k-th placed has 2k coefficients
    assert list(order) == [1, 2, 0] or list(order) == [1, 0, 2]
    for place, k in enumerate(order):
        columns = [2 * j + a for j in order[:place] for a in (0, 1)] + [2 * X.shape[1]]
        expected = np.linalg.lstsq(F[:, columns], X[:, k], rcond=None)[0]
        np.testing.assert_allclose(theta[columns, k], expected, atol=1e-9)
    assert abs(start["W"][1, 0]) == pytest.approx(2.0, abs=0.1)
    assert abs(theta[3, 0]) == pytest.approx(2.0, abs=0.1)  # the |x| feature of x → y
    assert abs(linear_start(X, np.ones(3))[1, 0]) < 0.2      # the linear start misses it


def test_additive_weights_of_inverts_coefficients():
    import jax.numpy as jnp
    from prodag.models.additive import coefficients, weights_of

    theta = np.random.default_rng(4).standard_normal((9, 4))
    theta[2:4, 1] = 0.0  # a zero pair: no edge 1 → 1's column, W = 0 and V = 0
    weights = weights_of(theta)
    assert weights["W"][1, 1] == 0 and np.all(weights["V"][1, 1] == 0)
    assert np.all(weights["V"][..., 0] + 1 >= 0)  # shapes on the prior's side, u₁ ≥ 0
    with jax.enable_x64(True):
        back = coefficients({k: jnp.asarray(v)[None] for k, v in weights.items()})
    np.testing.assert_allclose(np.asarray(back)[0], theta, atol=1e-12)


def test_on_candidates_each_variable_regresses_on_its_earlier_candidate_parents():
    from prodag.inference.initialization import linear_start, ordered_regression

    rng = np.random.default_rng(2)
    p, n = 7, 60
    X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
    X -= X.mean(axis=0)
    covariance = X.T @ X / n
    order = rng.permutation(p)
    candidates = rng.random((p, p)) < 0.5
    np.fill_diagonal(candidates, False)
    W = ordered_regression(covariance, order, 0.0, candidates)
    for place, child in enumerate(order):
        parents = [j for j in order[:place] if candidates[j, child]]
        expected = np.zeros(p)
        if parents:
            expected[parents] = np.linalg.lstsq(X[:, parents], X[:, child], rcond=None)[0]
        np.testing.assert_allclose(W[:, child], expected, atol=1e-10)
    every = ~np.eye(p, dtype=bool)
    np.testing.assert_allclose(linear_start(X, np.ones(p), candidates=every),
                               linear_start(X, np.ones(p)), rtol=1e-9, atol=1e-12)
