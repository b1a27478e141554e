"""Additive SEM: the sufficient-statistics likelihood against a direct per-node computation,
the projection acting on the strengths only, and a fit that needs the nonlinear shape."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from prodag import ProDAG, TrainingOptions, project
from prodag.models import LinearSEM, make_model
from prodag.models.additive import AdditiveSEM


def _weights(seed=0, p=4, L=3):
    rng = np.random.default_rng(seed)
    upper = np.triu(np.ones((p, p)), 1)
    return {"W": rng.standard_normal((L, p, p)) * upper,
            "V": rng.standard_normal((L, p, p, 2)), "b": rng.standard_normal((L, p))}


def _direct_mean(weights, X):
    """``Σ_j W_jk (u_jk1 x_j + u_jk2 |x_j|) + b_k`` with ``u = (e₁ + v) / ‖e₁ + v‖``, by
    loops over samples and nodes, ``(L, n, p)``."""
    L, p = weights["b"].shape
    mean = np.zeros((L,) + X.shape)
    for sample in range(L):
        for k in range(p):
            mean[sample, :, k] = weights["b"][sample, k]
            for j in range(p):
                u = weights["V"][sample, j, k] + np.array([1.0, 0.0])
                u = u / np.linalg.norm(u)
                mean[sample, :, k] += weights["W"][sample, j, k] * (u[0] * X[:, j]
                                                                    + u[1] * np.abs(X[:, j]))
    return mean


def test_predict_mean_matches_the_equation_node_by_node():
    X = np.random.default_rng(1).standard_normal((20, 4))
    weights = _weights()
    with jax.enable_x64(True):
        got = AdditiveSEM().predict_mean(jax.tree.map(jnp.asarray, weights), jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), _direct_mean(weights, X), rtol=1e-10)


@pytest.mark.parametrize("with_mask", [False, True])
def test_log_likelihood_from_sufficient_statistics_is_the_gaussian_density(with_mask):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 4)) + 0.5
    noise = rng.uniform(0.5, 2.0, 4)
    observed = rng.random((30, 4)) > 0.3 if with_mask else np.ones((30, 4), bool)
    weights = _weights(3)
    model = AdditiveSEM()
    with jax.enable_x64(True):
        data = model.prepare_data(jnp.asarray(X), observed if with_mask else None)
        got = model.log_likelihood(jax.tree.map(jnp.asarray, weights), data,
                                   jnp.asarray(noise))
    density = stats.norm.logpdf(X - _direct_mean(weights, X), scale=np.sqrt(noise))
    np.testing.assert_allclose(np.asarray(got), (density * observed).sum(axis=(1, 2)),
                               rtol=1e-10)


def test_with_flat_shapes_and_no_intercepts_it_is_the_linear_sem():
    X = np.random.default_rng(4).standard_normal((25, 4))
    weights = {**_weights(5), "V": np.zeros((3, 4, 4, 2)), "b": np.zeros((3, 4))}
    with jax.enable_x64(True):
        additive = AdditiveSEM().log_likelihood(
            jax.tree.map(jnp.asarray, weights), AdditiveSEM().prepare_data(jnp.asarray(X)),
            jnp.ones(4))
        linear = LinearSEM().log_likelihood({"W": jnp.asarray(weights["W"])},
                                            LinearSEM().prepare_data(jnp.asarray(X)),
                                            jnp.ones(4))
    np.testing.assert_allclose(np.asarray(additive), np.asarray(linear), rtol=1e-10)


def test_the_graph_is_the_projected_strength_and_shapes_pass_through():
    model = make_model("additive")
    weights = jax.tree.map(jnp.asarray, _weights(6))
    dense = {**weights, "W": weights["W"] + jnp.swapaxes(weights["W"], 1, 2)}  # cyclic
    graph = project(model.graph_of(dense), 1.0)
    projected = model.apply_projection(dense, model.graph_of(dense), graph)
    assert model.weight_shapes(4) == {"W": (4, 4), "V": (4, 4, 2), "b": (4,)}
    assert projected["W"] is graph
    assert projected["V"] is dense["V"] and projected["b"] is dense["b"]


def test_features_scale_with_the_data():
    """Both basis functions are positively homogeneous: a common unit change scales the
    likelihood's sufficient statistics, as for the linear SEM."""
    X = np.random.default_rng(7).standard_normal((15, 3))
    model = AdditiveSEM()
    with jax.enable_x64(True):
        small, large = (model.prepare_data(jnp.asarray(c * X)) for c in (1.0, 1e3))
    np.testing.assert_allclose(np.asarray(large["cross"])[:-1],
                               1e6 * np.asarray(small["cross"])[:-1], rtol=1e-12)


@pytest.mark.slow
def test_a_v_shaped_edge_is_found_where_the_linear_model_sees_nothing():
    """``y = 1.5 |x| + ε``: x and y are uncorrelated, so the linear SEM's weights between them
    stay near 0, while the additive SEM turns the edge's shape to the V and its strength to
    about 1.5 in the direction x → y (the reverse direction cannot explain the V)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal(400)
    X = np.column_stack([x, 1.5 * np.abs(x) + 0.5 * rng.standard_normal(400)])
    options = dict(lam=3.0, seed=0, progress=False, max_epochs=300, n_chains=1,
                   training=TrainingOptions(n_restarts=1))
    additive = ProDAG(sem="additive", **options).fit(X)
    strength = np.abs(additive.sample(400)).mean(axis=0)
    assert strength[0, 1] > 1.2 and strength[1, 0] < 0.3
    assert additive.edge_probabilities(400)[0, 1] > 0.9
    linear = np.abs(ProDAG(sem="linear", **options).fit(X).sample(400)).mean(axis=0)
    assert linear[0, 1] < 0.2 and linear[1, 0] < 0.2


def test_a_fit_samples_dags_and_reloads_exactly(tmp_path):
    from prodag import simulate
    from prodag.graph import is_dag

    data = simulate.dataset(6, 6, 80, sem="mlp", seed=3)
    fitted = ProDAG(sem="additive", lam=2.0, seed=0, progress=False, max_epochs=20,
                    n_samples=8, n_chains=1, training=TrainingOptions(n_restarts=1)).fit(data.X)
    assert np.all(is_dag(fitted.sample(300) != 0))
    fitted.save(tmp_path / "additive.npz")
    loaded = ProDAG.load(tmp_path / "additive.npz")
    np.testing.assert_array_equal(loaded.sample(300), fitted.sample(300))
    np.testing.assert_allclose(loaded.predict(data.X[:5]), fitted.predict(data.X[:5]))
