"""A reference posterior for small graphs: a long parallel-tempering Metropolis run on the SAME
model as a linear ProDAG fit at a fixed radius, to measure how far the variational posterior's
edge probabilities are from the exact ones (DiBS and BayesDAG validate the same way at 5 nodes).
The study ``benchmarks.studies.reference`` compares fits with it; ``tests/test_reference.py``
checks it against brute-force posteriors.

Target, over the off-diagonal entries of ``W̃ (p, p)``::

    π(W̃) ∝ N(W̃; prior_mean, prior_std²) · p(X | W = project(W̃, λ, method="exact")),

the linear-Gaussian SEM ``x = Wᵀx + ε``, ``ε ~ N(0, σ² I)`` with ``σ²`` fixed (as
``ProDAG(noise_variance=σ²)``), and ``X`` centred column-wise as ``ProDAG.fit`` centres it. The
diagonal of ``W̃`` is left out (held at 0): the projection zeroes it, so under the fit's model
it carries only its own prior factor, independent of everything else.

Learned noise (``noise_variance="equal"``: one ``σ²`` shared by every variable;
``"estimate"``: one ``σ_k²`` per variable). The variational fit keeps a point estimate of
``log σ²`` (``inference.Params.log_noise_variance``, no prior: the ELBO's maximiser); as the
model's own posterior we take ``σ²`` under the scale-invariant prior ``p(σ²) ∝ 1/σ²``
(flat in ``log σ²``, so the posterior moves with a common unit of the data as the fit does,
and its mode in ``log σ²`` is the ELBO's point estimate as n grows). Integrated out
analytically, the likelihood becomes ``RSS^(−n·p/2)`` (equal, ``RSS = Σ_k RSS_k``) or
``Π_k RSS_k^(−n/2)`` (per variable), up to constants: with per-variable variances the
posterior over ``W̃`` is then nearly score-equivalent, so Markov-equivalent orientations
share its mass (``prodag.inference.smc`` samples the same posterior with ``log σ²`` in its state).

Sampler: ``T`` temperatures ``β_1 = 1 > … > β_T = beta_min`` (geometric) act on the likelihood
only, ``π_β ∝ prior · likelihood^β``, in each of ``R`` independent replicas. Every step,
each of the ``R·T`` chains makes one symmetric Metropolis proposal of one of ``MOVES`` (the
kind is drawn once per step for all chains, so that only its random numbers are drawn):

* ``site``: one off-diagonal entry moves by ``s·z``, ``s`` drawn from ``SITE_SCALES``;
* ``joint``: every off-diagonal entry moves by ``s·z``, ``s`` from ``JOINT_SCALES``;
* ``reverse``: ``W̃_jk`` and ``W̃_kj`` trade places for one random pair (an edge reversal);
* ``transpose``: ``W̃ → W̃ᵀ`` (every edge reversed);

then neighbouring temperatures propose to swap their states (even pairs on even steps, odd
pairs on odd steps). Each move is an involution or a symmetric random walk, so the acceptance
ratio is the target ratio. The whole run is one ``jax.jit``'d ``lax.scan`` over steps,
vectorised over the ``R·T`` chains (the exact projection is traceable).

Output (``sample``): the cold chain's draws of ``W̃`` per replica, edge probabilities
``P(|W_jk| > 0)`` pooled over replicas, their Monte Carlo error (the standard error between the
independent replicas, and by batch means), acceptance per temperature and move, swap rates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from prodag.posterior import negligible
from prodag.projection import project

MOVES = ("site", "joint", "reverse", "transpose")
MOVE_PROBABILITIES = (0.6, 0.25, 0.1, 0.05)
SITE_SCALES = (0.03, 0.1, 0.3, 1.0, 3.0)
JOINT_SCALES = (0.01, 0.03, 0.1)


@dataclass(frozen=True)
class Tempering:
    """Run length and temperature ladder. ``n_steps`` steps per chain are kept after
    ``burn_in`` (both multiples of ``thin``), every ``thin``-th state of the cold chain."""

    n_replicas: int = 8
    n_temperatures: int = 8
    beta_min: float = 0.01
    n_steps: int = 100_000
    burn_in: int = 10_000
    thin: int = 10

    def betas(self) -> np.ndarray:
        """The inverse temperatures ``(T,)``, geometric from 1 down to ``beta_min``."""
        if self.n_temperatures == 1:
            return np.ones(1)
        return self.beta_min ** (np.arange(self.n_temperatures) / (self.n_temperatures - 1))


class Reference(NamedTuple):
    """A finished run: the cold chain's draws and what they say."""

    W_tilde: np.ndarray
    """Cold-chain draws of ``W̃``, ``(R, S, p, p)`` (replica, kept step)."""
    log_likelihood: np.ndarray
    """``log p(X | project(W̃))`` of each draw, ``(R, S)``."""
    edge_probabilities: np.ndarray
    """``P(|W_jk| > 0)`` pooled over replicas, ``(p, p)``."""
    replica_error: np.ndarray
    """Standard error of ``edge_probabilities`` between the replicas, ``(p, p)``."""
    batch_error: np.ndarray
    """Standard error by batch means (10 batches per replica), ``(p, p)``."""
    acceptance: np.ndarray
    """Accepted share of each move at each temperature, ``(T, len(MOVES))`` (burn-in
    included)."""
    swap_rate: np.ndarray
    """Accepted share of swaps between temperatures ``t`` and ``t + 1``, ``(T - 1,)``."""
    betas: np.ndarray
    lam: float
    seconds: float

    @property
    def mc_error(self) -> np.ndarray:
        """The larger of the two standard errors, entry by entry, ``(p, p)``."""
        return np.maximum(self.replica_error, self.batch_error)


# ---- the target -------------------------------------------------------------------------------


def log_likelihood(W: jax.Array, gram: jax.Array, n_rows, noise_variance) -> jax.Array:
    """Gaussian ``log p(X | W)`` of the linear SEM from ``gram = XᵀX (p, p)``: shape ``(...)``
    for ``W (..., p, p)``; ``noise_variance`` a scalar or ``(p,)``."""
    p = W.shape[-1]
    A = jnp.eye(p, dtype=W.dtype) - W
    rss = jnp.einsum("...ik,ij,...jk->...k", A, gram, A)
    variance = jnp.broadcast_to(jnp.asarray(noise_variance, W.dtype), (p,))
    return -0.5 * (jnp.sum(rss / variance, axis=-1)
                   + n_rows * jnp.sum(jnp.log(2 * jnp.pi * variance)))


NOISE_MODES = {"fixed": 0, "estimate": 1, "equal": 2}
"""The noise models of ``sample`` and their codes in its jitted target."""


def collapsed_log_likelihood(W: jax.Array, gram: jax.Array, n_rows, mode) -> jax.Array:
    """``log ∫ p(X | W, σ²) p(σ²) dσ²`` (``p(σ²) ∝ 1/σ²``) up to a constant, ``(...)`` for
    ``W (..., p, p)``: ``mode`` 1 (``"estimate"``): ``−n/2 Σ_k log RSS_k``; 2 (``"equal"``):
    ``−n·p/2 log Σ_k RSS_k``."""
    p = W.shape[-1]
    A = jnp.eye(p, dtype=W.dtype) - W
    rss = jnp.einsum("...ik,ij,...jk->...k", A, gram, A)
    return jnp.where(mode == 1, -0.5 * n_rows * jnp.sum(jnp.log(rss), axis=-1),
                     -0.5 * n_rows * p * jnp.log(jnp.sum(rss, axis=-1)))


def _log_prior(W_tilde, off, prior_mean, prior_std):
    z = (W_tilde - prior_mean) / prior_std
    return -0.5 * jnp.sum(jnp.where(off, z * z, 0.0), axis=(-2, -1))


def _parts(W_tilde, target):
    """``(log prior, log likelihood)`` of ``W̃ (..., p, p)``, each ``(...)``."""
    gram, n_rows, noise_variance, lam, prior_mean, prior_std, mode = target
    p = W_tilde.shape[-1]
    off = ~jnp.eye(p, dtype=bool)
    W = project(W_tilde, lam, method="exact")
    return (_log_prior(W_tilde, off, prior_mean, prior_std),
            jnp.where(mode == 0, log_likelihood(W, gram, n_rows, noise_variance),
                      collapsed_log_likelihood(W, gram, n_rows, mode)))


# ---- the sampler ------------------------------------------------------------------------------


class _State(NamedTuple):
    W_tilde: jax.Array        # (R, T, p, p)
    log_prior: jax.Array      # (R, T)
    log_lik: jax.Array        # (R, T)
    step: jax.Array           # ()
    accepted: jax.Array       # (T, n_moves)
    proposed: jax.Array       # (T, n_moves)
    swaps: jax.Array          # (T - 1,)
    swap_tries: jax.Array     # (T - 1,)


def _propose(key, W):
    """One symmetric proposal for every chain of ``W (R, T, p, p)``, all of the same move
    (drawn per step, so that only that move's random numbers are drawn); returns it and the
    move's index (a scalar)."""
    p = W.shape[-1]
    k_move, k_site, k_scale, k_noise = jax.random.split(key, 4)
    shape = W.shape[:2]
    off = ~np.eye(p, dtype=bool)
    basis = jnp.asarray(np.eye(p * p, dtype=bool)[np.flatnonzero(off)].reshape(-1, p, p))
    move = jax.random.choice(k_move, len(MOVES), p=jnp.asarray(MOVE_PROBABILITIES))

    def site(W):
        entry = basis[jax.random.randint(k_site, shape, 0, len(basis))]
        scale = jnp.asarray(SITE_SCALES, W.dtype)[
            jax.random.randint(k_scale, shape, 0, len(SITE_SCALES))]
        step = scale * jax.random.normal(k_noise, shape, W.dtype)
        return W + jnp.where(entry, step[..., None, None], 0.0)

    def joint(W):
        scale = jnp.asarray(JOINT_SCALES, W.dtype)[
            jax.random.randint(k_scale, shape, 0, len(JOINT_SCALES))]
        z = jax.random.normal(k_noise, W.shape, W.dtype)
        return W + jnp.where(off, scale[..., None, None] * z, 0.0)

    def reverse(W):
        entry = basis[jax.random.randint(k_site, shape, 0, len(basis))]
        return jnp.where(entry | jnp.swapaxes(entry, -1, -2), jnp.swapaxes(W, -1, -2), W)

    def transpose(W):
        return jnp.swapaxes(W, -1, -2)

    return lax.switch(move, (site, joint, reverse, transpose), W), move


def _swap(key, state: _State, betas):
    """Swap proposals between neighbouring temperatures (pairs of the step's parity)."""
    T = betas.shape[0]
    index = jnp.arange(T)
    parity = state.step % 2
    lower = ((index - parity) % 2 == 0) & (index + 1 < T)
    upper = ((index - 1 - parity) % 2 == 0) & (index >= 1)
    partner = jnp.where(lower, index + 1, jnp.where(upper, index - 1, index))
    log_lik = state.log_lik
    log_alpha = (betas - betas[partner]) * (log_lik[:, partner] - log_lik)
    u = jax.random.uniform(key, log_lik.shape)
    u = jnp.where(lower, u, u[:, partner])      # one draw per pair, read by both members
    accept = jnp.log(u) < log_alpha
    source = jnp.where(accept, partner, index)  # (R, T): which temperature's state comes here
    take = partial(jnp.take_along_axis, indices=source, axis=1)
    W = jnp.take_along_axis(state.W_tilde, source[..., None, None], axis=1)
    tried = lower[:-1].astype(state.swaps.dtype) * log_lik.shape[0]
    done = jnp.sum(accept & lower, axis=0)[:-1].astype(state.swaps.dtype)
    return state._replace(W_tilde=W, log_prior=take(state.log_prior), log_lik=take(log_lik),
                          swaps=state.swaps + done, swap_tries=state.swap_tries + tried)


def _step(state: _State, key, target, betas):
    k_propose, k_accept, k_swap = jax.random.split(key, 3)
    proposal, move = _propose(k_propose, state.W_tilde)
    log_prior, log_lik = _parts(proposal, target)
    log_alpha = log_prior - state.log_prior + betas * (log_lik - state.log_lik)
    accept = jnp.log(jax.random.uniform(k_accept, log_alpha.shape)) < log_alpha
    one_hot = jax.nn.one_hot(move, len(MOVES), dtype=state.accepted.dtype)  # (M,)
    state = state._replace(
        W_tilde=jnp.where(accept[..., None, None], proposal, state.W_tilde),
        log_prior=jnp.where(accept, log_prior, state.log_prior),
        log_lik=jnp.where(accept, log_lik, state.log_lik),
        accepted=state.accepted + jnp.sum(accept, axis=0)[:, None] * one_hot,
        proposed=state.proposed + accept.shape[0] * one_hot)
    state = _swap(k_swap, state, betas)
    return state._replace(step=state.step + 1)


@partial(jax.jit, static_argnames=("n_records", "thin"))
def _run(state: _State, key, target, betas, n_records: int, thin: int):
    """``n_records`` records of the cold chain ``(W̃ (n_records, R, p, p), log-lik (n_records,
    R))``, one every ``thin`` steps, and the final state."""

    def record(state, key):
        state = lax.fori_loop(0, thin, lambda i, s: _step(s, jax.random.fold_in(key, i),
                                                          target, betas), state)
        return state, (state.W_tilde[:, 0], state.log_lik[:, 0])

    return lax.scan(record, state, jax.random.split(key, n_records))


def sample(X, lam=np.inf, noise_variance=1.0, tempering: Tempering = Tempering(), seed: int = 0,
           prior_mean: float = 0.0, prior_std: float = 1.0) -> Reference:
    """Run the sampler on the data ``X (n, p)`` (centred here, as ``ProDAG.fit`` does) at the
    radius ``lam`` (``inf``: no ℓ1 step) and the fixed ``noise_variance`` (scalar or ``(p,)``),
    or the learned one (``"estimate"``, ``"equal"``; module docstring) integrated out."""
    X = np.asarray(X, dtype=float)
    X = X - X.mean(axis=0)
    n, p = X.shape
    if tempering.n_steps % tempering.thin or tempering.burn_in % tempering.thin:
        raise ValueError(f"n_steps ({tempering.n_steps}) and burn_in ({tempering.burn_in}) "
                         f"must be multiples of thin ({tempering.thin}).")
    dtype = jnp.zeros(()).dtype
    learned = isinstance(noise_variance, str)
    mode = NOISE_MODES[noise_variance] if learned else 0
    target = (jnp.asarray(X.T @ X, dtype), jnp.asarray(n, dtype),
              jnp.asarray(1.0 if learned else noise_variance, dtype), jnp.asarray(lam, dtype),
              jnp.asarray(prior_mean, dtype), jnp.asarray(prior_std, dtype), jnp.asarray(mode))
    betas = jnp.asarray(tempering.betas(), dtype)
    R, T = tempering.n_replicas, tempering.n_temperatures
    key_start, key_run = jax.random.split(jax.random.PRNGKey(seed))
    off = ~np.eye(p, dtype=bool)
    W0 = jnp.where(off, prior_mean + prior_std * jax.random.normal(key_start, (R, T, p, p),
                                                                      dtype), 0.0)
    log_prior, log_lik = _parts(W0, target)
    state = _State(W0, log_prior, log_lik, jnp.asarray(0), jnp.zeros((T, len(MOVES))),
                   jnp.zeros((T, len(MOVES))), jnp.zeros(max(T - 1, 0)),
                   jnp.zeros(max(T - 1, 0)))
    start = time.perf_counter()
    n_records = (tempering.burn_in + tempering.n_steps) // tempering.thin
    state, (W_tilde, log_liks) = _run(state, key_run, target, betas, n_records, tempering.thin)
    W_tilde = np.asarray(W_tilde)[tempering.burn_in // tempering.thin:].swapaxes(0, 1)
    log_liks = np.asarray(log_liks)[tempering.burn_in // tempering.thin:].swapaxes(0, 1)
    seconds = time.perf_counter() - start
    edges = graphs(W_tilde, lam) != 0
    per_replica = replica_edge_probabilities(edges)
    acceptance = np.asarray(state.accepted) / np.maximum(np.asarray(state.proposed), 1)
    swap_rate = np.asarray(state.swaps) / np.maximum(np.asarray(state.swap_tries), 1)
    return Reference(W_tilde, log_liks, per_replica.mean(axis=0),
                     replica_standard_error(per_replica), batch_means_error(edges),
                     acceptance, swap_rate, np.asarray(betas), float(lam), seconds)


# ---- edge probabilities on saved draws --------------------------------------------------------


def graphs(W_tilde, lam) -> np.ndarray:
    """The projected DAGs ``project(W̃, λ, "exact")`` of draws ``W̃ (..., p, p)``."""
    W_tilde = np.asarray(W_tilde)
    p = W_tilde.shape[-1]
    flat = W_tilde.reshape(-1, p, p)
    return np.asarray(project(flat, lam, method="exact")).reshape(W_tilde.shape)


def edge_probabilities(edges: np.ndarray) -> np.ndarray:
    """The share of draws holding each edge, ``(p, p)``, of ``edges (..., p, p)`` (bool; every
    leading axis pooled)."""
    return edges.reshape(-1, *edges.shape[-2:]).mean(axis=0)


def replica_edge_probabilities(edges: np.ndarray) -> np.ndarray:
    """Edge probabilities of each replica of ``edges (R, S, p, p)`` (bool): ``(R, p, p)``."""
    return edges.mean(axis=1)


def replica_standard_error(per_replica: np.ndarray) -> np.ndarray:
    """Standard error of the pooled mean of independent replica estimates ``(R, p, p)``."""
    R = per_replica.shape[0]
    return per_replica.std(axis=0, ddof=1) / np.sqrt(R) if R > 1 else np.full(
        per_replica.shape[1:], np.nan)


def batch_means_error(edges: np.ndarray, n_batches: int = 10) -> np.ndarray:
    """Standard error of the pooled edge probabilities by batch means: each replica's draws
    ``edges (R, S, p, p)`` (bool) cut into ``n_batches`` consecutive batches, ``(p, p)``."""
    R, S = edges.shape[:2]
    size = S // n_batches
    batches = edges[:, :size * n_batches].reshape(R * n_batches, size, *edges.shape[2:])
    return batches.mean(axis=1).std(axis=0, ddof=1) / np.sqrt(R * n_batches)


def draw_noise_variances(W: np.ndarray, X: np.ndarray, noise_variance) -> np.ndarray:
    """Each draw's noise variances ``(..., p)`` for DAGs ``W (..., p, p)``: the fixed
    ``noise_variance`` (scalar or ``(p,)``), or for learned noise its maximiser given the draw's
    ``W`` and the centred data ``X (n, p)``: ``RSS_k / n`` (``"estimate"``) or
    ``Σ_k RSS_k / (n·p)`` (``"equal"``), as the fit's point estimate maximises its ELBO."""
    W = np.asarray(W, dtype=float)
    p = W.shape[-1]
    if not isinstance(noise_variance, str):
        return np.broadcast_to(np.asarray(noise_variance, dtype=float), W.shape[:-1])
    X = np.asarray(X, dtype=float)
    X = X - X.mean(axis=0)
    residuals = np.einsum("ij,...jk->...ik", X, np.eye(p) - W)
    rss = np.einsum("...ik,...ik->...k", residuals, residuals)
    if noise_variance == "estimate":
        return rss / len(X)
    return np.broadcast_to(rss.sum(axis=-1, keepdims=True) / (len(X) * p), rss.shape)


def counted_edges(W: np.ndarray, X: np.ndarray, noise_variance) -> np.ndarray:
    """The edges of DAGs ``W (..., p, p)`` as a fitted linear ProDAG counts them, ``(..., p,
    p)`` bool: the nonzero entries without those of negligible effect
    (``prodag.posterior.negligible``, at each draw's ``draw_noise_variances``)."""
    W = np.asarray(W)
    p = W.shape[-1]
    flat = W.reshape(-1, p, p)
    noise = draw_noise_variances(flat, X, noise_variance)
    small = negligible.negligible(flat, noise)
    return ((flat != 0) & ~small).reshape(W.shape)
