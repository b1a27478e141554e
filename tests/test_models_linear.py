"""Linear-Gaussian SEM: the sufficient-statistics likelihood against a direct computation."""

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from prodag.models import LinearSEM, make_model


def _problem(seed=0, n=30, p=4, L=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    W = rng.standard_normal((L, p, p)) * np.triu(np.ones((p, p)), 1)
    return X, W, rng.uniform(0.5, 2.0, p)


def test_log_likelihood_matches_direct_gaussian_density():
    X, W, noise = _problem()
    model = LinearSEM()
    with jax.enable_x64(True):
        got = model.log_likelihood({"W": jnp.asarray(W)}, model.prepare_data(jnp.asarray(X)),
                                   jnp.asarray(noise))
    expected = [stats.norm.logpdf(X - X @ W_l, scale=np.sqrt(noise)).sum() for W_l in W]
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10)


def test_predict_mean_is_X_times_W():
    X, W, _ = _problem(1)
    got = LinearSEM().predict_mean({"W": jnp.asarray(W, jnp.float32)}, jnp.asarray(X, jnp.float32))
    assert got.shape == (W.shape[0], X.shape[0], X.shape[1])
    np.testing.assert_allclose(np.asarray(got), np.einsum("ni,lij->lnj", X, W), rtol=1e-4,
                               atol=1e-5)


def test_projection_and_graph_are_the_weight_matrix():
    model = make_model("linear")
    W = jnp.ones((2, 3, 3))
    assert model.weight_shapes(3) == {"W": (3, 3)}
    assert model.graph_of({"W": W}) is W
    assert model.apply_projection({"W": W}, W, 2 * W)["W"][0, 0, 0] == 2


def test_unknown_sem_is_rejected():
    import pytest

    with pytest.raises(ValueError, match="not a known model"):
        make_model("quadratic")
