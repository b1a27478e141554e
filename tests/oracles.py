"""Brute-force posteriors of the linear SEM on two and three nodes: the oracles the samplers
(``benchmarks.reference_sampler``, ``prodag.inference.refinement``, ``prodag.inference.smc``)
are tested against.

p = 2: exactly one edge survives the projection (the larger of ``|W̃_12|``, ``|W̃_21|``,
clipped at λ), so ``P(1 → 2)`` is a 1-D integral after integrating the smaller entry out:
``∝ ∫ N(a) (2Φ(|a|) − 1) p(X | W_12 = clip(a, λ)) da``, done on a fine grid.
p = 3: self-normalised importance sampling from the prior with an independent projection
(all 6 orders enumerated, the ℓ1 ball by sorting); few rows keep its effective sample large.
"""

import itertools

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm


def chain_data(p: int) -> np.ndarray:
    """Six seeded rows of the chain ``x1 → x2 → x3`` (weights 0.8 and −0.7, unit noise), its
    first ``p`` columns ``(6, p)``."""
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


def three_node_oracle(X, lam, noise_variance=1.0, n_draws=300_000, centre=True,
                      allowed=None):
    """Edge probabilities ``(3, 3)`` and their standard errors by importance sampling (of the
    rows ``X`` as given with ``centre=False``, e.g. a resample of centred rows; with
    ``allowed (3, 3)``, the projection onto the DAGs inside it).
    ``noise_variance="equal"`` / ``"estimate"``: learned, one shared or one per variable,
    integrated out under ``p(σ²) ∝ 1/σ²`` (the likelihood becomes ``RSS^(−n·p/2)`` or
    ``Π_k RSS_k^(−n/2)``)."""
    X = X - X.mean(axis=0) if centre else X
    p = X.shape[1]
    W_tilde = np.random.default_rng(1).standard_normal((n_draws, p, p))
    W_tilde[:, np.arange(p), np.arange(p)] = 0
    if allowed is not None:
        W_tilde = np.where(allowed, W_tilde, 0.0)
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
