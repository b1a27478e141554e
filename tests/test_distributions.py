"""ProjectedNormal: shapes, DAG samples, and reparameterised gradients vs finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag import ProjectedNormal
from prodag.graph import is_dag


def test_shapes_and_samples_are_dags():
    loc = np.zeros((3, 4, 4), np.float32)
    dist = ProjectedNormal(loc, 1.0, lam=2.0)
    assert dist.batch_shape == (3,) and dist.event_shape == (4, 4)
    W_tilde, W = dist.sample_with_continuous(jax.random.PRNGKey(0), (5,))
    assert W.shape == W_tilde.shape == (5, 3, 4, 4)
    assert W.dtype == jnp.float32
    W = np.asarray(W)
    assert is_dag(W).all()
    assert np.all(np.abs(W).sum((-2, -1)) <= 2.0 + 1e-5)
    assert not np.any((W != 0) & (np.asarray(W_tilde) == 0))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="positive"):
        ProjectedNormal(np.zeros((3, 3)), 0.0)
    with pytest.raises(ValueError, match=r"\(\.\.\., p, p\)"):
        ProjectedNormal(np.zeros((3, 4)), 1.0)


def test_gradients_reach_loc_scale_and_lam_and_match_finite_differences():
    p = 4
    rng = np.random.default_rng(3)
    with jax.enable_x64(True):
        loc = jnp.asarray(rng.normal(size=(p, p)))
        scale = jnp.asarray(rng.uniform(0.2, 0.5, size=(p, p)))
        weights = jnp.asarray(rng.normal(size=(p, p)))
        key = jax.random.PRNGKey(1)

        @jax.jit
        def expected_loss(loc, scale, lam):
            W = ProjectedNormal(loc, scale, lam, method="exact").sample(key, (3,))
            return jnp.sum(weights * W) + jnp.sum(W ** 2)

        grads = jax.grad(expected_loss, argnums=(0, 1, 2))(loc, scale, 3.0)
        eps = 1e-6
        for argnum, (value, grad) in enumerate(zip((loc, scale), grads[:2])):
            numeric = np.zeros((p, p))
            for index in np.ndindex(p, p):
                step = jnp.zeros((p, p)).at[index].set(eps)
                args_plus = [loc, scale, 3.0]
                args_minus = [loc, scale, 3.0]
                args_plus[argnum] = value + step
                args_minus[argnum] = value - step
                numeric[index] = (expected_loss(*args_plus) - expected_loss(*args_minus)) / (2 * eps)
            np.testing.assert_allclose(np.asarray(grad), numeric, atol=1e-5)
            assert np.any(np.asarray(grad) != 0)
        numeric_lam = (expected_loss(loc, scale, 3.0 + eps) - expected_loss(loc, scale, 3.0 - eps)) / (2 * eps)
        np.testing.assert_allclose(float(grads[2]), float(numeric_lam), atol=1e-5)
        assert float(grads[2]) != 0.0


def test_per_sample_radii_give_the_exponential_prior_on_lambda():
    """One radius per draw (the paper's λ ~ Exponential prior): each draw obeys its own ball,
    and the gradient reaches every radius."""
    key_lam, key_draw = jax.random.split(jax.random.PRNGKey(0))
    lam = 2.0 * jax.random.exponential(key_lam, (6,))
    loc = np.full((4, 4), 1.0, np.float32)
    W = ProjectedNormal(loc, 0.5, lam).sample(key_draw, (6,))
    assert W.shape == (6, 4, 4) and is_dag(np.asarray(W)).all()
    assert np.all(np.abs(np.asarray(W)).sum((-2, -1)) <= np.asarray(lam) + 1e-5)
    grad = jax.grad(lambda r: jnp.sum(ProjectedNormal(loc, 0.5, r).sample(key_draw, (6,))))(lam)
    assert grad.shape == (6,) and np.all(np.asarray(grad) != 0)


def test_prune_zeroes_small_entries_and_radii_must_broadcast():
    W = ProjectedNormal(np.zeros((3, 3)), 1.0, prune=0.5).sample(jax.random.PRNGKey(2), (50,))
    assert not np.any((np.asarray(W) != 0) & (np.abs(np.asarray(W)) <= 0.5))
    with pytest.raises(ValueError, match="broadcast"):
        ProjectedNormal(np.zeros((2, 3, 3)), 1.0, lam=np.ones(3))
