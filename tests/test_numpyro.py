"""prodag.numpyro: the projected prior inside a NumPyro model (sites, import error, SVI fit)."""

import importlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

numpyro = pytest.importorskip("numpyro")

import numpyro.distributions as dist  # noqa: E402
from numpyro import handlers  # noqa: E402
from numpyro.infer import SVI, Predictive, Trace_ELBO, init_to_value  # noqa: E402
from numpyro.infer.autoguide import AutoNormal  # noqa: E402

from prodag import project  # noqa: E402
from prodag.graph import is_dag  # noqa: E402
from prodag.numpyro import projected_dag  # noqa: E402

P, N, LAM, PRUNE = 4, 200, 3.0, 0.1
TRUE_W = np.zeros((P, P))
TRUE_W[0, 1], TRUE_W[1, 2], TRUE_W[2, 3] = 1.0, -1.0, 1.0  # chain 0 → 1 → 2 → 3


def linear_sem_model(X):
    """Projected prior on W, unit-variance Gaussian linear SEM: X_j ~ N(X @ W[:, j], 1)."""
    W = projected_dag("W", jnp.zeros((P, P)), 0.5 * jnp.ones((P, P)), lam=LAM, prune=PRUNE)
    with numpyro.plate("rows", X.shape[0]):
        numpyro.sample("X", dist.Normal(X @ W, 1.0).to_event(1), obs=X)


def test_sites_are_a_gaussian_sample_and_its_projection():
    X = jnp.zeros((3, P))
    trace = handlers.trace(handlers.seed(linear_sem_model, 0)).get_trace(X)
    tilde, W = trace["W_tilde"], trace["W"]
    assert tilde["type"] == "sample" and not tilde["is_observed"]
    assert tilde["fn"].event_shape == (P, P) and tilde["fn"].batch_shape == ()
    assert W["type"] == "deterministic"
    expected = project(tilde["value"], LAM)
    expected = jnp.where(jnp.abs(expected) > PRUNE, expected, 0.0)
    np.testing.assert_array_equal(W["value"], expected)
    assert is_dag(np.asarray(W["value"]))
    with pytest.raises(ValueError, match=r"\(\.\.\., p, p\)"):
        handlers.seed(projected_dag, 0)("V", jnp.zeros(P), 1.0)


def test_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpyro", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "prodag.numpyro")
    with pytest.raises(ImportError, match=r"pip install 'prodag\[numpyro\]'"):
        importlib.import_module("prodag.numpyro")


def test_svi_posterior_is_dags_and_recovers_the_chain():
    rng = np.random.default_rng(0)
    X = np.zeros((N, P))
    for j in range(P):  # columns in topological order; unit noise
        X[:, j] = X @ TRUE_W[:, j] + rng.standard_normal(N)
    X = jnp.asarray(X, jnp.float32)

    start = init_to_value(values={"W_tilde": jnp.zeros((P, P))})  # restarts differ by key only
    guide = AutoNormal(linear_sem_model, init_loc_fn=start)
    svi = SVI(linear_sem_model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())

    @jax.jit
    def fit(keys):  # a few restarts in one compiled call: the ELBO has local optima (orders)
        def one(key):
            state = svi.init(key, X)
            state, losses = jax.lax.scan(lambda s, _: svi.update(s, X), state, None, length=400)
            return svi.get_params(state), losses[-100:].mean()
        return jax.vmap(one)(keys)

    params, final_losses = fit(jax.random.split(jax.random.PRNGKey(0), 3))
    best = jax.tree.map(lambda a: a[int(jnp.argmin(final_losses))], params)
    predictive = Predictive(linear_sem_model, guide=guide, params=best, num_samples=200,
                            return_sites=["W"])
    W = np.asarray(predictive(jax.random.PRNGKey(1), X)["W"])

    assert W.shape == (200, P, P)
    assert is_dag(W).all()
    edge, non_edge = TRUE_W != 0, TRUE_W == 0
    probabilities, magnitude = (W != 0).mean(0), np.abs(W).mean(0)
    assert probabilities[edge].min() >= 0.9, probabilities
    assert probabilities[non_edge].max() <= 0.5, probabilities  # reversed edges included
    assert magnitude[edge].min() >= 0.5, magnitude
    assert magnitude[edge].min() > 5 * magnitude[non_edge].max(), magnitude
    np.testing.assert_array_equal(np.sign(W.mean(0))[edge], np.sign(TRUE_W[edge]))
