"""Oracles for the DAG projection: brute force over orders, bisection, finite differences."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag import project
from prodag.projection import EXACT_MAX_NODES, acyclic_projection, l1_ball_projection


def random_inputs(seed, batch, p, dtype=np.float32):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(batch, p, p)).astype(dtype)
    W[:, np.arange(p), np.arange(p)] = 0.0
    return W


def brute_force_objective(W):
    """Least ½ backward squared mass over all p! orders, for one (p, p) matrix."""
    p = W.shape[0]
    best = np.inf
    for perm in itertools.permutations(range(p)):
        pos = np.empty(p, int)
        pos[list(perm)] = np.arange(p)
        best = min(best, 0.5 * np.sum((W.astype(np.float64) ** 2)[pos[:, None] > pos[None, :]]))
    return best


def objective(W_tilde, W):
    return 0.5 * np.sum((np.asarray(W_tilde, np.float64) - np.asarray(W, np.float64)) ** 2,
                        axis=(-2, -1))


def is_dag_numpy(W):
    """Kahn-style check: repeatedly strip nodes without incoming edges."""
    adjacency = np.asarray(W) != 0
    remaining = np.ones(adjacency.shape[0], bool)
    while remaining.any():
        indegree = adjacency[np.ix_(remaining, remaining)].sum(axis=0)
        if not (indegree == 0).any():
            return False
        idx = np.flatnonzero(remaining)[indegree == 0]
        remaining[idx] = False
    return True


@pytest.mark.parametrize("p", [1, 2, 4, 6])
def test_exact_matches_brute_force(p):
    W = random_inputs(p, 12, p, np.float64)
    with jax.enable_x64(True):
        projected = np.asarray(acyclic_projection(W, "exact"))
    expected = np.array([brute_force_objective(w) for w in W])
    np.testing.assert_allclose(objective(W, projected), expected, rtol=1e-10, atol=1e-12)
    assert all(is_dag_numpy(w) for w in projected)


@pytest.mark.parametrize("p", [8, 10])
def test_search_close_to_exact(p):
    W = random_inputs(100 + p, 48, p)
    exact = objective(W, acyclic_projection(W, "exact"))
    search = objective(W, acyclic_projection(W, "search"))
    assert np.all(search >= exact - 1e-4 * exact.max())
    assert search.mean() <= 1.01 * exact.mean()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", ["exact", "search", "path"])
def test_output_is_dag_on_support(method, dtype):
    W = random_inputs(7, 16, 7, dtype)
    W[:, 0, 3] = 0.0  # zero entries must stay zero
    with jax.enable_x64(dtype == np.float64):
        projected = np.asarray(project(W, method=method))
    assert projected.dtype == dtype
    assert all(is_dag_numpy(w) for w in projected)
    kept = projected != 0
    np.testing.assert_array_equal(projected[kept], W[kept])
    assert not np.any(kept & (W == 0))


def l1_by_bisection(v, lam):
    v = np.asarray(v, np.float64).ravel()
    if np.abs(v).sum() <= lam:
        return v
    lo, hi = 0.0, np.abs(v).max()
    for _ in range(200):
        theta = 0.5 * (lo + hi)
        if np.maximum(np.abs(v) - theta, 0).sum() > lam:
            lo = theta
        else:
            hi = theta
    return np.sign(v) * np.maximum(np.abs(v) - 0.5 * (lo + hi), 0)


@pytest.mark.parametrize("lam", [0.0, 0.5, 3.0, 100.0, np.inf])
def test_l1_matches_bisection(lam):
    W = random_inputs(3, 5, 4, np.float64)
    with jax.enable_x64(True):
        projected = np.asarray(l1_ball_projection(W, lam))
    for w, out in zip(W, projected):
        np.testing.assert_allclose(out.ravel(), l1_by_bisection(w, lam), atol=1e-9)


def test_l1_zero_radius_gives_exact_zeros_with_tied_magnitudes():
    """Regression: tied float32 magnitudes once left 1e-7 residues at λ = 0."""
    W = np.full((4, 5, 5), 1.4422144, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(l1_ball_projection(W, 0.0)), 0.0)


def finite_difference_check(W, lam):
    """Compare the custom VJP of Σ c ⊙ project(W̃, λ) with central differences in float64."""
    rng = np.random.default_rng(0)
    cotangent = rng.normal(size=W.shape)
    with jax.enable_x64(True):
        @jax.jit
        def loss(w, l):
            return jnp.sum(jnp.asarray(cotangent) * project(w, l, method="exact"))
        grad_w, grad_lam = jax.grad(loss, argnums=(0, 1))(jnp.asarray(W), jnp.float64(lam))
        eps = 1e-6
        numeric = np.zeros_like(W)
        for index in np.ndindex(W.shape):
            step = np.zeros_like(W)
            step[index] = eps
            numeric[index] = (loss(W + step, lam) - loss(W - step, lam)) / (2 * eps)
        numeric_lam = (loss(W, lam + eps) - loss(W, lam - eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(grad_w), numeric, atol=1e-6)
    np.testing.assert_allclose(float(grad_lam), float(numeric_lam), atol=1e-6)
    return np.asarray(grad_w), float(grad_lam)


def test_gradient_binding_matches_finite_differences():
    W = random_inputs(11, 2, 4, np.float64)
    _, grad_lam = finite_difference_check(W, 2.0)
    assert grad_lam != 0.0


def test_gradient_non_binding_is_identity_on_support():
    W = random_inputs(12, 2, 4, np.float64)
    grad_w, grad_lam = finite_difference_check(W, 1e3)
    assert grad_lam == 0.0


def test_nan_and_shape_errors():
    W = random_inputs(0, 2, 3)
    W[0, 1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        project(W)
    with pytest.raises(ValueError, match="square"):
        project(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unknown projection method"):
        project(np.zeros((3, 3)), method="nope")
    with pytest.raises(ValueError, match="nonnegative"):
        project(np.zeros((3, 3)), -1.0)
    with pytest.raises(ValueError, match="nonnegative"):
        project(np.zeros((3, 3)), np.nan)
    with pytest.raises(ValueError, match="search"):
        project(np.zeros((EXACT_MAX_NODES + 1,) * 2), method="exact")


def test_works_under_jit_vmap_grad():
    W = jnp.asarray(random_inputs(5, 6, 5))
    lams = jnp.linspace(0.5, 4.0, 6)
    direct = project(W, lams)
    jitted = jax.jit(lambda w, l: project(w, l))(W, lams)
    mapped = jax.vmap(lambda w, l: project(w, l))(W, lams)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(direct), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(mapped), np.asarray(direct), rtol=1e-6)
    grad_lam = jax.grad(lambda l: jnp.sum(project(W, l) ** 2))(2.0)
    assert np.isfinite(grad_lam) and grad_lam != 0.0
