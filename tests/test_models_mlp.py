"""Unit tests of the MLP structural equation model (paper Section 5, Proposition 2)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, stats

from prodag.models.mlp import MLPSEM, safe_group_norm


def random_weights(model, p, n_samples, seed):
    """A pytree of standard normal weights with a leading sample axis."""
    rng = np.random.default_rng(seed)
    return {name: jnp.asarray(rng.standard_normal((n_samples, *shape)), dtype=jnp.float32)
            for name, shape in model.weight_shapes(p).items()}


def dag_mask(p, rng):
    """A random strictly-forward mask under a random order: (p, p) of 0/1."""
    order = rng.permutation(p)
    rank = np.empty(p, int)
    rank[order] = np.arange(p)
    return (rank[:, None] < rank[None, :]).astype(float) * (rng.random((p, p)) < 0.7)


def reference_predict_mean(weights, X, model):
    """f_ω(X) node by node and sample by sample in plain numpy, the oracle for the einsums."""
    act = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh,
           "sigmoid": lambda v: 1 / (1 + np.exp(-v))}[model.activation]
    w = {name: np.asarray(value, dtype=float) for name, value in weights.items()}
    out_layer = model.hidden_layers + 1
    n_samples, p = w["W1"].shape[0], w["W1"].shape[1]
    mean = np.zeros((n_samples, X.shape[0], p))
    for sample in range(n_samples):
        for k in range(p):
            h = X @ w["W1"][sample, :, k, :] + (w["b1"][sample, k] if model.bias else 0)
            h = act(h)
            for layer in range(2, out_layer):
                h = act(h @ w[f"W{layer}"][sample, k] + (w[f"b{layer}"][sample, k]
                                                         if model.bias else 0))
            mean[sample, :, k] = h @ w[f"W{out_layer}"][sample, k] + (
                w[f"b{out_layer}"][sample, k] if model.bias else 0)
    return mean


# ---------------------------------------------------------------------------- construction
def test_weight_shapes_follow_layers_and_bias():
    assert MLPSEM(hidden_units=3).weight_shapes(4) == {
        "W1": (4, 4, 3), "b1": (4, 3), "W2": (4, 3), "b2": (4,)}
    assert MLPSEM(hidden_units=3, bias=False, hidden_layers=2).weight_shapes(4) == {
        "W1": (4, 4, 3), "W2": (4, 3, 3), "W3": (4, 3)}


@pytest.mark.parametrize("kwargs, message", [
    ({"hidden_units": 0}, "hidden_units"),
    ({"hidden_layers": 0}, "hidden_layers"),
    ({"activation": "swishy"}, "activation"),
])
def test_invalid_options_are_rejected_with_a_clear_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MLPSEM(**kwargs)


# ---------------------------------------------------------------------------- forward pass
@pytest.mark.parametrize("activation, bias, hidden_layers", [
    ("relu", True, 1), ("tanh", False, 1), ("sigmoid", True, 2)])
def test_predict_mean_matches_a_per_node_loop(activation, bias, hidden_layers):
    model = MLPSEM(hidden_units=4, activation=activation, bias=bias, hidden_layers=hidden_layers)
    weights = random_weights(model, p=5, n_samples=3, seed=1)
    X = np.random.default_rng(2).standard_normal((7, 5))
    got = model.predict_mean(weights, jnp.asarray(X, dtype=jnp.float32))
    assert got.shape == (3, 7, 5)
    np.testing.assert_allclose(got, reference_predict_mean(weights, X, model),
                               rtol=1e-4, atol=1e-4)


def test_log_likelihood_is_the_gaussian_density_summed_over_rows():
    model = MLPSEM(hidden_units=3)
    weights = random_weights(model, p=4, n_samples=2, seed=3)
    X = np.random.default_rng(4).standard_normal((6, 4))
    noise_variance = np.array([0.5, 1.0, 2.0, 1.5])
    got = model.log_likelihood(weights, model.prepare_data(jnp.asarray(X, jnp.float32)),
                               jnp.asarray(noise_variance, jnp.float32))
    mean = reference_predict_mean(weights, X, model)
    want = stats.norm.logpdf(X[None], mean, np.sqrt(noise_variance)).sum(axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5)


# ---------------------------------------------------------------------------- graph
def test_graph_of_is_the_group_norm_and_has_finite_gradient_at_zero():
    model = MLPSEM(hidden_units=3)
    weights = random_weights(model, p=3, n_samples=1, seed=5)
    W1 = weights["W1"].at[0, 0, 1].set(0.0)
    graph = model.graph_of({**weights, "W1": W1})
    np.testing.assert_allclose(graph, np.linalg.norm(np.asarray(W1), axis=-1), rtol=1e-6)
    assert graph[0, 0, 1] == 0
    gradient = jax.grad(lambda w: model.graph_of({"W1": w}).sum())(W1)
    assert np.all(np.isfinite(gradient))
    np.testing.assert_array_equal(gradient[0, 0, 1], 0.0)
    np.testing.assert_allclose(gradient[0, 1, 2], W1[0, 1, 2] / graph[0, 1, 2], rtol=1e-6)


def test_safe_group_norm_second_derivative_is_finite_at_zero():
    hessian = jax.hessian(lambda v: safe_group_norm(v))(jnp.zeros(3))
    assert np.all(np.isfinite(hessian))


def test_apply_projection_rescales_first_layer_groups_only():
    model = MLPSEM(hidden_units=4, hidden_layers=2)
    weights = random_weights(model, p=4, n_samples=2, seed=6)
    graph_tilde = model.graph_of(weights)
    rng = np.random.default_rng(7)
    graph = graph_tilde * jnp.asarray(dag_mask(4, rng) * rng.uniform(0.2, 1.0, (4, 4)),
                                      jnp.float32)
    projected = model.apply_projection(weights, graph_tilde, graph)
    np.testing.assert_allclose(model.graph_of(projected), graph, rtol=1e-5, atol=1e-6)
    directions = np.asarray(projected["W1"]) / np.maximum(
        np.asarray(graph)[..., None], 1e-30)
    kept = np.asarray(graph) > 0
    np.testing.assert_allclose(directions[kept],
                               (np.asarray(weights["W1"]) / np.asarray(graph_tilde)[..., None])[kept],
                               rtol=1e-5)
    for name in ("b1", "W2", "b2", "W3", "b3"):
        assert projected[name] is weights[name]


def test_apply_projection_is_differentiable_through_the_rescaling():
    """Autodiff through graph_of → (a smooth stand-in for the projection) → rescaling vs FD."""
    model = MLPSEM(hidden_units=3, activation="tanh")
    mask = jnp.asarray(dag_mask(3, np.random.default_rng(8)))
    X = jnp.asarray(np.random.default_rng(9).standard_normal((5, 3)))
    with jax.enable_x64(True):
        weights = {k: jnp.asarray(v, jnp.float64)
                   for k, v in random_weights(model, p=3, n_samples=1, seed=10).items()}
        weights["W1"] = weights["W1"].at[0, 2, 0].set(0.0)  # one zero group on the support

        def objective(W1):
            w_tilde = {**weights, "W1": W1}
            graph_tilde = model.graph_of(w_tilde)
            graph = mask * graph_tilde ** 2 / (1 + graph_tilde)
            w = model.apply_projection(w_tilde, graph_tilde, graph)
            data = model.prepare_data(jnp.asarray(X, jnp.float64))
            return model.log_likelihood(w, data, jnp.ones(3)).sum()

        W1 = weights["W1"]
        gradient = np.asarray(jax.grad(objective)(W1))
        assert np.all(np.isfinite(gradient))
        rng = np.random.default_rng(11)
        for _ in range(4):
            direction = jnp.asarray(rng.standard_normal(W1.shape)) * (W1 != 0)
            eps = 1e-6
            fd = (objective(W1 + eps * direction) - objective(W1 - eps * direction)) / (2 * eps)
            np.testing.assert_allclose(np.sum(gradient * np.asarray(direction)), fd, rtol=1e-5)


# ---------------------------------------------------------------------------- Jacobian
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_network_jacobian_is_zero_exactly_where_the_adjacency_is_zero(activation):
    p = 6
    model = MLPSEM(hidden_units=5, activation=activation)
    weights = random_weights(model, p=p, n_samples=3, seed=12)
    rng = np.random.default_rng(13)
    masks = jnp.asarray(np.stack([dag_mask(p, rng) for _ in range(3)]), jnp.float32)
    graph_tilde = model.graph_of(weights)
    projected = model.apply_projection(weights, graph_tilde, graph_tilde * masks)
    adjacency = np.asarray(model.graph_of(projected))

    def f(x):  # (p,) → (L, p)
        return model.predict_mean(projected, x[None])[:, 0]

    points = rng.standard_normal((8, p)).astype(np.float32)
    # jac[point, l, k, j] = ∂f_k/∂x_j; as an adjacency: [l, j, k]
    jac = np.stack([np.asarray(jax.jacfwd(f)(jnp.asarray(x))) for x in points])
    dependence = np.abs(jac).transpose(0, 1, 3, 2)
    np.testing.assert_array_equal(dependence[:, adjacency == 0], 0.0)
    # generically nonzero on the support: at every point for tanh, at some point for relu
    on_support = dependence[:, adjacency > 0]
    reduce = np.all if activation == "tanh" else np.any
    assert np.all(reduce(on_support > 0, axis=0))


# ---------------------------------------------------------------------------- Proposition 2
def l1_ball_projection(v, radius):
    """Euclidean projection of a nonnegative vector onto {‖u‖₁ ≤ radius} by sorting."""
    if v.sum() <= radius:
        return v
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - radius
    rho = np.nonzero(u - cumulative / np.arange(1, len(u) + 1) > 0)[0][-1]
    return np.maximum(v - cumulative[rho] / (rho + 1), 0)


def matrix_projection_by_orders(graph_tilde, radius):
    """pro_λ(W̃) for tiny p: best over all orders of (forward entries, then the ℓ1 ball)."""
    p = graph_tilde.shape[0]
    best, best_value = None, np.inf
    for order in itertools.permutations(range(p)):
        rank = np.argsort(order)
        forward = rank[:, None] < rank[None, :]
        W = np.zeros_like(graph_tilde)
        W[forward] = l1_ball_projection(graph_tilde[forward], radius)
        value = 0.5 * np.sum((graph_tilde - W) ** 2)
        if value < best_value:
            best, best_value = W, value
    return best


def grouped_projection_by_orders(omega_tilde, radius):
    """The grouped projection (paper eq. nn_projection) solved directly with SLSQP.

    For each order, minimise ½Σ‖ω̃_jk − ω_jk‖² over the forward groups subject to
    Σ‖ω_jk‖₂ ≤ radius (backward groups are 0); return the best ω over all orders.
    """
    p, _, d = omega_tilde.shape
    best, best_value = None, np.inf
    for order in itertools.permutations(range(p)):
        rank = np.argsort(order)
        forward = np.argwhere(rank[:, None] < rank[None, :])
        start = omega_tilde[forward[:, 0], forward[:, 1]].ravel()

        def objective(x, start=start):
            return 0.5 * np.sum((x - start) ** 2), x - start

        def slack(x):
            return radius - np.sum(np.sqrt(np.sum(x.reshape(-1, d) ** 2, axis=1) + 1e-14))

        constraints = [] if np.isinf(radius) else [{"type": "ineq", "fun": slack}]
        result = optimize.minimize(objective, np.zeros_like(start), jac=True, method="SLSQP",
                                   constraints=constraints,
                                   options={"ftol": 1e-14, "maxiter": 1000})
        omega = np.zeros_like(omega_tilde)
        omega[forward[:, 0], forward[:, 1]] = result.x.reshape(-1, d)
        value = 0.5 * np.sum((omega_tilde - omega) ** 2)
        if value < best_value:
            best, best_value = omega, value
    return best


# seed 3: one forward group is shrunk exactly to zero by the ball
@pytest.mark.parametrize("seed, radius_fraction", [(0, np.inf), (1, 0.6), (2, 0.25), (3, 0.1)])
def test_proposition_2_matches_a_direct_solution_of_the_grouped_projection(seed,
                                                                           radius_fraction):
    p, d = 3, 4
    model = MLPSEM(hidden_units=d)
    rng = np.random.default_rng(seed)
    omega_tilde = rng.standard_normal((p, p, d)) * rng.uniform(0.2, 1.5, (p, p, 1))
    graph_tilde = np.linalg.norm(omega_tilde, axis=-1)
    radius = radius_fraction * graph_tilde.sum() / 2
    graph = matrix_projection_by_orders(graph_tilde, radius)
    weights_tilde = {"W1": jnp.asarray(omega_tilde[None], jnp.float32)}
    got = model.apply_projection(weights_tilde, model.graph_of(weights_tilde),
                                 jnp.asarray(graph[None], jnp.float32))["W1"][0]
    want = grouped_projection_by_orders(omega_tilde, radius)
    np.testing.assert_allclose(got, want, atol=2e-4)
    if np.isfinite(radius):
        assert abs(np.linalg.norm(want, axis=-1).sum() - radius) < 1e-4  # the ball binds


def test_estimator_passes_hidden_layers_to_the_model():
    from prodag.models import make_model

    model = make_model("mlp", hidden_units=3, hidden_layers=2, bias=False)
    assert model.weight_shapes(4) == MLPSEM(hidden_units=3, hidden_layers=2,
                                            bias=False).weight_shapes(4)
    assert "W3" in model.weight_shapes(4)
