"""Mean-field Gaussian family: initialisation, reparameterised sampling, closed-form KL."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag.models import variational


def test_inverse_softplus_inverts_softplus():
    y = jnp.array([1e-4, 0.3, 1.0, 7.0, 30.0])
    np.testing.assert_allclose(jax.nn.softplus(variational.inverse_softplus(y)), y, rtol=1e-5)


def test_init_at_prior_has_prior_moments_and_zero_kl():
    params = variational.init_at_prior({"W": (3, 3), "b": (4,)}, prior_mean=0.5, prior_std=2.0)
    np.testing.assert_allclose(params.loc["b"], 0.5)
    np.testing.assert_allclose(variational.stddev(params)["W"], 2.0, rtol=1e-6)
    assert abs(float(variational.kl_to_prior(params, 0.5, 2.0))) < 1e-5


def test_kl_of_one_element_matches_hand_computation():
    # q = N(1, 0.5²), p = N(0, 2²): log(2/0.5) + (0.25 + 1)/8 − 1/2
    params = variational.VariationalParams(
        loc={"w": jnp.array([1.0])}, rho={"w": variational.inverse_softplus(jnp.array([0.5]))})
    expected = np.log(4.0) + 1.25 / 8 - 0.5
    np.testing.assert_allclose(variational.kl_to_prior(params, 0.0, 2.0), expected, rtol=1e-5)


def test_kl_matches_monte_carlo():
    key_loc, key_rho, key_draw = jax.random.split(jax.random.PRNGKey(0), 3)
    params = variational.VariationalParams(loc={"W": jax.random.normal(key_loc, (2, 3))},
                                           rho={"W": jax.random.normal(key_rho, (2, 3)) - 1.0})
    prior_mean, prior_std = 0.3, 1.5
    draws = jax.jit(variational.sample, static_argnums=2)(params, key_draw, 100_000)["W"]
    loc, scale = params.loc["W"], variational.stddev(params)["W"]

    def log_normal(x, m, s):
        return -0.5 * ((x - m) / s) ** 2 - jnp.log(s) - 0.5 * jnp.log(2 * jnp.pi)

    log_ratio = jnp.sum(log_normal(draws, loc, scale) - log_normal(draws, prior_mean, prior_std),
                        axis=(1, 2))
    monte_carlo = float(jnp.mean(log_ratio))
    standard_error = float(jnp.std(log_ratio)) / np.sqrt(draws.shape[0])
    closed = float(variational.kl_to_prior(params, prior_mean, prior_std))
    assert abs(monte_carlo - closed) < 5 * standard_error


def test_sample_is_reparameterised_with_the_right_moments():
    params = variational.init_at_prior({"W": (2, 2)}, 1.0, 0.5)
    draws = variational.sample(params, jax.random.PRNGKey(1), 50_000)["W"]
    assert draws.shape == (50_000, 2, 2)
    np.testing.assert_allclose(jnp.mean(draws, 0), 1.0, atol=0.02)
    np.testing.assert_allclose(jnp.std(draws, 0), 0.5, atol=0.02)
    # d(sample)/d(loc) = 1 for every draw: the reparameterisation carries gradients
    grad = jax.grad(lambda p: jnp.sum(variational.sample(p, jax.random.PRNGKey(1), 7)["W"]))(params)
    np.testing.assert_allclose(grad.loc["W"], 7.0)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_float_precision_is_preserved(dtype):
    with jax.enable_x64(dtype == jnp.float64):
        params = variational.init_at_prior({"W": (2, 2)}, 0.0, 1.0, dtype=dtype)
        draws = variational.sample(params, jax.random.PRNGKey(0), 3)["W"]
        assert draws.dtype == dtype
        assert variational.kl_to_prior(params, 0.0, 1.0).dtype == dtype
