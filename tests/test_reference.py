"""The reference sampler (``benchmarks.studies.reference``) against brute-force posteriors.

p = 2: exactly one edge survives the projection (the larger of ``|W̃_12|``, ``|W̃_21|``,
clipped at λ), so ``P(1 → 2)`` is a 1-D integral after integrating the smaller entry out:
``∝ ∫ N(a) (2Φ(|a|) − 1) p(X | W_12 = clip(a, λ)) da``, done on a fine grid.
p = 3: self-normalised importance sampling from the prior with an independent projection
(all 6 orders enumerated, the ℓ1 ball by sorting); few rows keep its effective sample large.
Tolerances come from both Monte Carlo errors; each test also checks that a wrong target (the
other radius, or another noise variance) lies outside them, so the comparison can fail.
"""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from benchmarks.studies import reference

TWO = reference.Tempering(n_replicas=4, n_temperatures=3, beta_min=0.1, n_steps=20000,
                          burn_in=2000, thin=5)
THREE = reference.Tempering(n_replicas=4, n_temperatures=3, beta_min=0.1, n_steps=30000,
                            burn_in=3000, thin=5)


def _data(p: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal(6)
    x2 = 0.8 * x1 + rng.standard_normal(6)
    x3 = -0.7 * x2 + rng.standard_normal(6)
    return np.c_[x1, x2, x3][:, :p]


def two_node_oracle(X, lam, noise_variance=1.0) -> float:
    """``P(1 → 2)`` for p = 2 by quadrature over the kept entry; a learned
    ``noise_variance`` (``"equal"``, ``"estimate"``) integrated out under ``p(σ²) ∝ 1/σ²``."""
    X = X - X.mean(axis=0)
    a = np.linspace(-8, 8, 40001)
    w = np.sign(a) * np.minimum(np.abs(a), lam)
    log_mass = []
    n = len(X)
    for parent, child in ((0, 1), (1, 0)):
        source = X[:, parent] @ X[:, parent]
        residual = ((X[:, child][None] - w[:, None] * X[:, parent][None]) ** 2).sum(axis=1)
        log_lik = (-n * np.log(source + residual) if noise_variance == "equal" else
                   -0.5 * n * np.log(source * residual) if noise_variance == "estimate" else
                   -0.5 * (source + residual) / noise_variance)
        log_mass.append(logsumexp(norm.logpdf(a) + np.log(2 * norm.cdf(np.abs(a)) - 1 + 1e-300)
                                  + log_lik))
    return float(1 / (1 + np.exp(log_mass[1] - log_mass[0])))


def _l1_ball(W: np.ndarray, lam: float) -> np.ndarray:
    """Projection of each flattened ``(S, p, p)`` slice onto the ℓ1 ball by sorting."""
    if not np.isfinite(lam):
        return W
    S = W.shape[0]
    v = np.abs(W.reshape(S, -1))
    u = -np.sort(-v, axis=1)
    cumulative = np.cumsum(u, axis=1)
    k = np.arange(1, v.shape[1] + 1)
    last = v.shape[1] - 1 - np.argmax((u * k > cumulative - lam)[:, ::-1], axis=1)
    theta = (cumulative[np.arange(S), last] - lam) / (last + 1)
    theta = np.where(v.sum(axis=1) > lam, theta, 0.0)
    return (np.sign(W.reshape(S, -1)) * np.maximum(v - theta[:, None], 0)).reshape(W.shape)


def three_node_oracle(X, lam, noise_variance=1.0, n_draws=300_000, centre=True):
    """Edge probabilities ``(3, 3)`` and their standard errors by importance sampling (of the
    rows ``X`` as given with ``centre=False``, e.g. a resample of centred rows).
    ``noise_variance="equal"`` / ``"estimate"``: learned, one shared or one per variable,
    integrated out under ``p(σ²) ∝ 1/σ²`` (the likelihood becomes ``RSS^(−n·p/2)`` or
    ``Π_k RSS_k^(−n/2)``)."""
    X = X - X.mean(axis=0) if centre else X
    p = X.shape[1]
    W_tilde = np.random.default_rng(1).standard_normal((n_draws, p, p))
    W_tilde[:, np.arange(p), np.arange(p)] = 0
    best_mass, best_mask = np.full(n_draws, np.inf), np.zeros(W_tilde.shape, bool)
    for order in itertools.permutations(range(p)):
        positions = np.empty(p, int)
        positions[list(order)] = np.arange(p)
        forward = positions[:, None] < positions[None, :]
        mass = np.where(forward, 0, W_tilde ** 2).sum(axis=(1, 2))
        better = mass < best_mass
        best_mass = np.where(better, mass, best_mass)
        best_mask[better] = forward
    W = _l1_ball(np.where(best_mask, W_tilde, 0), lam)
    A = np.eye(p) - W
    rss = np.einsum("sik,ij,sjk->sk", A, X.T @ X, A)
    n = len(X)
    log_lik = (-0.5 * n * p * np.log(rss.sum(axis=1)) if noise_variance == "equal" else
               -0.5 * n * np.log(rss).sum(axis=1) if noise_variance == "estimate" else
               -0.5 * rss.sum(axis=1) / noise_variance)
    weights = np.exp(log_lik - log_lik.max())
    weights /= weights.sum()
    edges = W != 0
    probabilities = np.tensordot(weights, edges, axes=1)
    error = np.sqrt(np.tensordot(weights ** 2, (edges - probabilities) ** 2, axes=1))
    return probabilities, error


@pytest.mark.parametrize("lam, wrong", [
    pytest.param(np.inf, {"lam": 0.3}, marks=pytest.mark.slow), (0.3, {"lam": np.inf}),
    pytest.param(np.inf, {"noise_variance": 2.0}, marks=pytest.mark.slow)])
def test_two_nodes_match_quadrature(lam, wrong):
    X = _data(2)
    run = reference.sample(X, lam, tempering=TWO)
    estimate, error = run.edge_probabilities[0, 1], run.mc_error[0, 1]
    tolerance = 4 * error + 0.005
    assert abs(run.edge_probabilities[0, 1] + run.edge_probabilities[1, 0] - 1) < 1e-9
    assert abs(estimate - two_node_oracle(X, lam)) < tolerance
    assert abs(estimate - two_node_oracle(X, **{"lam": lam, **wrong})) > tolerance


@pytest.mark.parametrize("noise", ["equal", "estimate"])
def test_two_nodes_with_learned_noise_match_quadrature_over_it(noise):
    """The noise variance integrated out (shared, or one per variable); the other learned
    model must lie outside the tolerance."""
    X = _data(2)
    run = reference.sample(X, 0.5, noise, tempering=TWO)
    estimate, error = run.edge_probabilities[0, 1], run.mc_error[0, 1]
    tolerance = 4 * error + 0.005
    assert abs(estimate - two_node_oracle(X, 0.5, noise)) < tolerance
    other = "estimate" if noise == "equal" else "equal"
    assert abs(estimate - two_node_oracle(X, 0.5, other)) > tolerance


@pytest.mark.parametrize("lam, wrong_lam", [pytest.param(np.inf, 1.0, marks=pytest.mark.slow),
                                            (1.0, np.inf)])
def test_three_nodes_match_importance_sampling(lam, wrong_lam):
    X = _data(3)
    run = reference.sample(X, lam, tempering=THREE)
    oracle, oracle_error = three_node_oracle(X, lam)
    off = ~np.eye(3, dtype=bool)
    tolerance = 4 * np.sqrt(run.mc_error ** 2 + oracle_error ** 2) + 0.005
    assert np.all(np.abs(run.edge_probabilities - oracle)[off] < tolerance[off])
    wrong, _ = three_node_oracle(X, wrong_lam)
    assert np.any(np.abs(run.edge_probabilities - wrong)[off] > tolerance[off])


def test_edge_probabilities_of_saved_draws_count_projected_edges():
    W_tilde = np.random.default_rng(0).standard_normal((2, 50, 3, 3))
    W = reference.graphs(W_tilde, 1.0)
    edges = W != 0
    assert np.allclose(reference.edge_probabilities(edges), edges.reshape(-1, 3, 3).mean(axis=0))
    assert np.all(np.abs(W).sum(axis=(-2, -1)) <= 1.0 + 1e-5)
    assert np.allclose(reference.replica_edge_probabilities(edges).mean(axis=0),
                       reference.edge_probabilities(edges))


def test_the_reference_counts_edges_as_the_fit_does():
    """Two nodes, ``x_2 = w x_1 + ε``: with unit noise the edge's effect size is ``|w|``, so
    0.1 is negligible and 0.5 is an edge; with noise learned per variable the draw's noise is
    its residual variance, so the same weights count against the data's noise."""
    W = np.zeros((2, 2, 2))
    W[0, 0, 1], W[1, 0, 1] = 0.1, 0.5
    counted = reference.counted_edges(W, np.zeros((10, 2)), 1.0)
    assert counted[:, 0, 1].tolist() == [False, True]
    assert not counted[:, 1, 0].any()
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal(400)
    X = np.column_stack([x1, 0.5 * x1 + 0.1 * rng.standard_normal(400)])
    variances = reference.draw_noise_variances(W, X, "estimate")
    centred = X - X.mean(axis=0)
    residual = centred[:, 1] - W[1, 0, 1] * centred[:, 0]
    np.testing.assert_allclose(variances[1], [np.mean(centred[:, 0] ** 2),
                                              np.mean(residual ** 2)])
    # the second variable's noise is about 0.01: both weights are effects against it
    assert reference.counted_edges(W, X, "estimate")[:, 0, 1].tolist() == [True, True]
    shared = reference.draw_noise_variances(W, X, "equal")
    np.testing.assert_allclose(shared, variances.mean(axis=-1, keepdims=True).repeat(2, -1))
