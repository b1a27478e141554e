"""Tests for benchmarks.suite.peers: the helpers always, a tiny DAGMA fit when dagma is installed.

DiBS is not fitted here (its compile time alone exceeds this file's budget); it is exercised by
``python -m benchmarks.suite.peers dibs --quick``.
"""

import numpy as np
import pytest
from scipy.stats import norm

from benchmarks.suite import peers


def test_validation_log_likelihood_matches_scipy():
    rng = np.random.default_rng(0)
    X_val, predicted = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    expected = norm.logpdf(X_val, loc=predicted, scale=1.0).sum()
    assert peers.gaussian_validation_log_likelihood(X_val, predicted) == pytest.approx(expected)


def test_select_by_validation_takes_the_best():
    candidates = [np.full((2, 2), value) for value in range(4)]
    chosen = peers.select_by_validation(candidates, [-5.0, -1.0, -3.0, -1.0])
    assert chosen is candidates[1]
    with pytest.raises(ValueError):
        peers.select_by_validation(candidates, [-1.0])


def test_systematic_resample_keeps_weights_to_one_draw():
    samples = np.arange(5)
    weights = np.array([0.5, 0.0, 0.123, 0.3, 0.077])
    for seed in range(5):
        draws = peers.systematic_resample(samples, weights, 1000, seed=seed)
        counts = np.bincount(draws, minlength=5)
        assert counts.sum() == 1000
        assert np.all(np.abs(counts - 1000 * weights) < 1.0 + 1e-9)


def test_unknown_peer_and_missing_package(monkeypatch):
    with pytest.raises(ValueError, match="unknown peer 'bayesdag'"):
        peers.is_available("bayesdag")
    monkeypatch.setattr(peers.importlib.util, "find_spec", lambda name: None)
    assert not peers.is_available("dagma")
    with pytest.raises(peers.PeerUnavailable, match="torch==2.13.0"):
        peers.fit_dagma(np.eye(3), np.eye(3), 0)
    with pytest.raises(peers.PeerUnavailable, match="dibs-lib"):
        peers.fit_dibs(np.eye(3), None, 0)


def test_sem_checked():
    with pytest.raises(ValueError, match="sem must be"):
        peers._check_sem("gp")


@pytest.mark.skipif(not peers.is_available("dagma"), reason="dagma not installed")
def test_dagma_recovers_an_easy_chain():
    rng = np.random.default_rng(0)
    n = 600
    x0 = rng.normal(size=n)
    x1 = 1.5 * x0 + rng.normal(size=n)
    x2 = -1.5 * x1 + rng.normal(size=n)
    X = np.column_stack([x0, x1, x2]) + 3.0  # an offset: DAGMA centres, validation must too
    samples = peers.fit_dagma(X[:500], X[500:], 0, lambdas=[0.01, 1.0],
                              fit_options={"warm_iter": 3000, "max_iter": 6000})
    assert samples.shape == (1, 3, 3)
    skeleton = (samples[0] != 0) | (samples[0] != 0).T
    expected = np.zeros((3, 3), dtype=bool)
    expected[0, 1] = expected[1, 0] = expected[1, 2] = expected[2, 1] = True
    np.testing.assert_array_equal(skeleton, expected)  # λ = 1 gives the empty graph: not chosen


def test_dibs_plus_reuses_the_dibs_run_on_the_same_data(monkeypatch):
    runs = []

    def fake_run(X, seed, sem, n_particles, steps, edges_per_node, mask=None):
        runs.append(seed if mask is None else (seed, int(mask.sum())))
        graphs = np.zeros((n_particles, X.shape[1], X.shape[1]), dtype=np.int64)
        return graphs, np.full(n_particles, 1.0 / n_particles)

    monkeypatch.setattr(peers, "_run_dibs", fake_run)
    monkeypatch.setattr(peers, "_last_dibs_run", {})
    X = np.random.default_rng(0).normal(size=(20, 4))
    assert peers.fit_dibs(X, None, 0).shape == (peers.DIBS_PARTICLES, 4, 4)
    assert peers.fit_dibs_plus(X, None, 0).shape == (peers.DIBS_PLUS_DRAWS, 4, 4)
    assert runs == [0]
    peers.fit_dibs(X, None, 1)
    peers.fit_dibs(X + 1.0, None, 1)
    assert runs == [0, 1, 1]
    targets = np.zeros((20, 4), dtype=bool)
    targets[:5, 2] = True
    peers.fit_dibs(X + 1.0, None, 1, interventions=targets)
    peers.fit_dibs_plus(X + 1.0, None, 1, interventions=targets)
    assert runs == [0, 1, 1, (1, 5)]


@pytest.mark.skipif(not peers.is_available("dibs"), reason="dibs-lib not installed")
def test_dibs_leaves_the_intervened_entries_out_of_its_likelihood():
    from dibs.models import LinearGaussian
    import jax.numpy as jnp

    # The check behind peers' interventions: DiBS's interv_mask drops exactly the masked
    # entries from the Gaussian log-likelihood, the perfect-intervention model of prodag.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    mask = np.zeros((30, 3), dtype=int)
    mask[:10, 1] = 1
    model = LinearGaussian(n_vars=3, obs_noise=1.0)
    g = jnp.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    theta = jnp.array([[0.0, 0.7, 0.0], [0.0, 0.0, -0.4], [0.0, 0.0, 0.0]])
    full = float(model.log_likelihood(x=jnp.asarray(X), theta=theta, g=g,
                                      interv_targets=jnp.asarray(mask)))
    residual = X - X @ np.asarray(theta)
    entries = -0.5 * (residual ** 2 + np.log(2 * np.pi))
    np.testing.assert_allclose(full, entries[mask == 0].sum(), rtol=1e-5)
