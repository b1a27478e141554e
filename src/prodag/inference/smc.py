"""Tempered sequential Monte Carlo over ``ω̃``: the variational fits propose, the model weighs.

The pooled mixture inherits the ELBO's choice among modes; refinement
(``prodag.inference.refinement``) moves draws within the modes they start in but cannot move mass
between them. Here a population of particles starts from a broad proposal ``q`` (every contender
fit, each with an equal share, its σ widened by ``WIDEN``) and moves along the tempering path::

    π_β(ω̃, λ) ∝ q(ω̃, λ)^(1−β) · target(ω̃, λ)^β,   β: 0 → 1,
    target(ω̃, λ) = p(λ) · N(ω̃; prior_mean, prior_std²) · p(X | ω(ω̃, λ)),

the model's own posterior (``refinement.log_target``) with ``p(λ)`` uniform over the radii
of the fits (each particle keeps its radius: mass moves between radii by the weights alone).
With learned noise variances (``"estimate"``: one per variable, ``"equal"``: one shared) the
particles also carry ``log σ²`` under the flat prior ``p(σ²) ∝ 1/σ²`` (scale-invariant, as
the fit is; the ELBO's point estimate is this posterior's mode in the large-sample limit), and
``q`` proposes it around each fit's estimate with spread ``NOISE_SPREAD``.

Every step (one temperature): the next ``β`` is chosen by bisection so that the effective
sample size of the incremental weights ``exp((β' − β)(log target − log q))`` is
``ESS_FRACTION`` of the particles (or ``β' = 1`` once that is reached); the particles are
resampled by their weights (systematic resampling) and moved by ``MUTATION_STEPS`` Metropolis
steps that leave ``π_β'`` invariant: refinement's moves (``moves.propose``: one entry, all
entries, an edge reversal) and, with learned noise, a random walk on ``log σ²``. Every particle
is projected exactly in every step, so every draw is an exact DAG.

Independent populations run side by side (one compiled computation, batched over
populations × particles); ``prodag.fit.tempering`` runs them for a fit and
``prodag.posterior.populations`` compares their edge probabilities as
``prodag.posterior.chains.diagnose`` compares chains. The design follows BlackJAX's adaptive
tempered SMC: pure ``init``/``step`` functions over NamedTuple states (``Kernel``); its
pieces come from BlackJAX (``blackjax.smc``: ``resampling.systematic``, the ESS and the
bisection ``solver.dichotomy``), the mutation is prodag's own (Metropolis with the exact
projection). BlackJAX's ``ess.ess_solver`` is not used: the sign of its weights changed
between the versions supported (1.3 on Python 3.10, 1.7 on 3.11+).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import logsumexp

from prodag.inference import refinement
from prodag.inference.kernels import select
from prodag.inference import moves
from prodag.inference.moves import flatten
from prodag.models.base import StructuralEquationModel, Weights
from prodag.projection import Projector

ESS_FRACTION = 0.5
"""Effective sample size, as a share of a population, each temperature's weights keep."""
MUTATION_STEPS = 100
"""Metropolis steps per temperature."""
MIN_TEMPERATURES = 1
"""β grows by at most ``1 / MIN_TEMPERATURES`` a step (more steps where the ESS allows)."""
WIDEN = 2.0
"""Each fit's σ is multiplied by this in the proposal, so mass can reach other modes."""
PRIOR_SHARE = 0.0
"""The proposal's share drawn from the prior (defensive: modes no fit found)."""
NOISE_SPREAD = 0.5
"""Standard deviation of the proposal's ``log σ²`` around each fit's estimate."""
NOISE_SCALES = (0.03, 0.1, 0.3, 1.0)
"""Step sizes of the random walk on ``log σ²`` (divided by √(number of variances))."""
MAX_TEMPERATURES = 500
"""A population that has not reached β = 1 after this many steps is an error."""
MIN_INCREMENT = 1e-6
"""The smallest step of β (so that a run always ends)."""
NOISE = "log_noise"
"""The name of ``log σ²`` among a particle's leaves (learned noise only)."""


class Proposal(NamedTuple):
    """``q(ω̃, λ) = Σ_k w_k 1[λ = λ_k] N(ω̃; loc_k, scale_k²)`` over ``K`` components:
    ``loc``/``scale`` dicts of ``(K, ...)`` arrays (with ``NOISE`` when the noise variances
    are learned), ``log_weights (K,)`` and radii ``lams (K,)``."""

    loc: dict
    scale: dict
    log_weights: jax.Array
    lams: jax.Array


class State(NamedTuple):
    """``P`` populations of ``N`` particles as ``P·N`` rows (population-major): ``position``
    (leaves ``(P·N, ...)``), radii, ``log q`` and ``log target`` ``(P·N,)``, and each
    population's ``beta (P,)`` and running log-evidence estimate ``log Ẑ (P,)``."""

    position: Weights
    lams: jax.Array
    log_proposal: jax.Array
    log_target: jax.Array
    beta: jax.Array
    log_evidence: jax.Array


class Info(NamedTuple):
    """One step's ``beta (P,)``, the ESS of its incremental weights as a share of a
    population ``(P,)``, and accepted / proposed counts of every move ``(2, len(MOVES) + 1)``
    (last column: the noise move)."""

    beta: jax.Array
    ess: jax.Array
    counts: jax.Array


class Kernel(NamedTuple):
    """``init(key, proposal, target, n_populations, n_particles) -> State`` and
    ``step(key, state, proposal, target) -> (State, Info)``: pure (``build_kernel``), or
    compiled (``prodag.inference.compiled.smc``; ``n_populations`` and ``n_particles``
    static)."""

    init: Callable
    step: Callable


def proposal_of(fits: list, dtype, prior: tuple[float, float] = (0.0, 1.0),
                widen: float | None = None, prior_share: float | None = None) -> Proposal:
    """The proposal of ``fits [(lam, inference.Params), ...]``: each an equal share of
    ``1 − prior_share``, its σ times ``widen`` (default ``WIDEN``), and the prior
    ``N(prior_mean, prior_std²)`` at each of their radii sharing ``prior_share`` (default
    ``PRIOR_SHARE``); ``log σ²`` with spread ``NOISE_SPREAD`` if the fits learned it (the
    prior's around their mean)."""
    widen = WIDEN if widen is None else widen
    share = PRIOR_SHARE if prior_share is None else prior_share
    radii = sorted({float(lam) for lam, _ in fits}) if share > 0 else []
    names = sorted(fits[0][1].q.loc)

    def stacked(part, extra):
        return jnp.concatenate([jnp.stack([jnp.asarray(part(p), dtype) for _, p in fits]),
                                jnp.broadcast_to(jnp.asarray(extra, dtype),
                                                 (len(radii), *jnp.shape(part(fits[0][1]))))])

    loc = {name: stacked(lambda p: p.q.loc[name], prior[0]) for name in names}
    scale = {name: stacked(lambda p: widen * jax.nn.softplus(p.q.rho[name]), prior[1])
             for name in names}
    if fits[0][1].log_noise_variance is not None:
        centre = np.mean([np.asarray(p.log_noise_variance) for _, p in fits], axis=0)
        loc[NOISE] = stacked(lambda p: p.log_noise_variance, centre)
        scale[NOISE] = jnp.full_like(loc[NOISE], NOISE_SPREAD)
    shares = [(1 - share) / len(fits)] * len(fits) + [share / max(len(radii), 1)] * len(radii)
    return Proposal(loc, scale, jnp.log(jnp.asarray(shares, dtype)),
                    jnp.asarray([lam for lam, _ in fits] + radii, dtype))


def proposal_log_density(proposal: Proposal, position: Weights, lams: jax.Array) -> jax.Array:
    """``log q(ω̃, λ)`` of every particle ``(n,)``."""
    x, mean, scale = (flatten(tree)[0] for tree in (position, proposal.loc, proposal.scale))

    def component(args):
        m, s = args
        return -0.5 * jnp.sum(jnp.square((x - m) / s), 1) - jnp.sum(jnp.log(s))

    log_density = lax.map(component, (mean, scale)).T + proposal.log_weights  # (n, K)
    same = lams[:, None] == proposal.lams[None, :]
    return logsumexp(jnp.where(same, log_density, -jnp.inf), axis=1) \
        - 0.5 * x.shape[1] * np.log(2 * np.pi)


def sample_proposal(key: jax.Array, proposal: Proposal, n: int) -> tuple[Weights, jax.Array]:
    """``n`` draws of ``q``: positions (leaves ``(n, ...)``) and radii ``(n,)``."""
    k_component, k_noise = jax.random.split(key)
    component = jax.random.categorical(k_component, proposal.log_weights, shape=(n,))
    position = {name: loc[component] + proposal.scale[name][component] * jax.random.normal(
        jax.random.fold_in(k_noise, i), (n, *loc.shape[1:]), loc.dtype)
        for i, (name, loc) in enumerate(sorted(proposal.loc.items()))}
    return position, proposal.lams[component]


def next_beta(beta: jax.Array, increments: jax.Array, ess_fraction: float,
              max_step: float = 1.0) -> jax.Array:
    """The next inverse temperature of one population: the largest ``β' ≤ min(1, β +
    max_step)`` whose weights ``exp((β' − β) · increments (N,))`` keep an ESS of
    ``ess_fraction · N`` (BlackJAX's bisection, ``blackjax.smc.solver.dichotomy``, on its
    ``log_ess``), at least ``MIN_INCREMENT``; 1 once within ``MIN_INCREMENT`` of it."""
    from blackjax.smc import ess, solver  # on first use: blackjax loads all its samplers

    target = jnp.log(ess_fraction * increments.shape[0])

    def excess(delta):  # log ESS above the target: positive while the step keeps enough
        return ess.log_ess(jnp.where(delta > 0, delta * increments, 0.0)) - target

    remaining = jnp.minimum(1.0 - beta, max_step)
    step = jnp.maximum(solver.dichotomy(excess, jnp.zeros_like(remaining), remaining),
                       MIN_INCREMENT)
    return jnp.where(beta + step >= 1.0 - MIN_INCREMENT, 1.0, beta + step)


def build_kernel(model: StructuralEquationModel, project: Projector,
                 mutation_steps: int = MUTATION_STEPS, ess_fraction: float = ESS_FRACTION,
                 min_temperatures: int = MIN_TEMPERATURES) -> Kernel:
    """The SMC kernel of one model and projection (module docstring), pure functions."""

    def log_target(position, lams, target):
        weights = {name: value for name, value in position.items() if name != NOISE}
        n = lams.shape[0]
        noise = (jnp.exp(position[NOISE]) if NOISE in position else
                 jnp.broadcast_to(target.noise, (n, target.noise.shape[-1])))
        return refinement.log_target(model, project, weights,
                                     target._replace(lams=lams, noise=noise))

    def metropolis(key, candidate, carry, lams, beta, proposal, target):
        position, log_q, log_t = carry
        new_q = proposal_log_density(proposal, candidate, lams)
        new_t = log_target(candidate, lams, target)
        log_alpha = (1 - beta) * (new_q - log_q) + beta * (new_t - log_t)
        accept = moves.accepts(key, log_alpha)
        position = select(accept, candidate, position)
        return (position, jnp.where(accept, new_q, log_q), jnp.where(accept, new_t, log_t)), \
            jnp.sum(accept)

    def mutate(carry, key, lams, beta, proposal, target):
        (position, log_q, log_t), counts = carry
        k_move, k_accept, k_noise, k_noise_accept = jax.random.split(key, 4)
        weights = {name: value for name, value in position.items() if name != NOISE}
        moved, move = moves.propose(k_move, weights, model.edge_weight, target.prior_std)
        state, accepted = metropolis(k_accept, {**position, **moved}, (position, log_q, log_t),
                                     lams, beta, proposal, target)
        counts = counts.at[:, move].add(jnp.stack([accepted, lams.shape[0]]).astype(counts.dtype))
        if NOISE in position:
            log_noise = state[0][NOISE]
            k_scale, k_step = jax.random.split(k_noise)
            scale = jnp.asarray(NOISE_SCALES, log_noise.dtype)[jax.random.randint(
                k_scale, (log_noise.shape[0], 1), 0, len(NOISE_SCALES))]
            candidate = {**state[0], NOISE: log_noise + scale / np.sqrt(log_noise.shape[1])
                         * jax.random.normal(k_step, log_noise.shape, log_noise.dtype)}
            state, accepted = metropolis(k_noise_accept, candidate, state, lams, beta,
                                         proposal, target)
            counts = counts.at[:, -1].add(jnp.stack([accepted, lams.shape[0]])
                                          .astype(counts.dtype))
        return (state, counts), None

    def init(key, proposal, target, n_populations, n_particles):
        position, lams = sample_proposal(key, proposal, n_populations * n_particles)
        zeros = jnp.zeros(n_populations, proposal.log_weights.dtype)
        return State(position, lams, proposal_log_density(proposal, position, lams),
                     log_target(position, lams, target), zeros, zeros)

    def step(key, state, proposal, target):
        from blackjax.smc import ess, resampling  # on first use (``next_beta``)

        k_resample, k_mutate = jax.random.split(key)
        n_populations = state.beta.shape[0]
        n = state.lams.shape[0] // n_populations
        increments = (state.log_target - state.log_proposal).reshape(n_populations, n)
        increments = jnp.where(jnp.isnan(increments), -jnp.inf, increments)
        beta = jax.vmap(lambda b, i: next_beta(b, i, ess_fraction, 1.0 / min_temperatures))(
            state.beta, increments)
        delta = (beta - state.beta)[:, None]
        log_weights = jnp.where(delta > 0, delta * increments, 0.0)
        log_evidence = state.log_evidence + logsumexp(log_weights, axis=1) - np.log(n)
        weights = jax.nn.softmax(log_weights, axis=1)
        ancestors = jax.vmap(lambda k, w: resampling.systematic(k, w, n))(
            jax.random.split(k_resample, n_populations), weights)
        rows = (ancestors + n * jnp.arange(n_populations)[:, None]).reshape(-1)
        position, lams, log_q, log_t = jax.tree.map(
            lambda a: a[rows], (state.position, state.lams, state.log_proposal,
                                state.log_target))
        counts = jnp.zeros((2, len(refinement.MOVES) + 1), log_q.dtype)
        per_particle = jnp.repeat(beta, n)
        ((position, log_q, log_t), counts), _ = lax.scan(
            lambda c, k: mutate(c, k, lams, per_particle, proposal, target),
            ((position, log_q, log_t), counts), jax.random.split(k_mutate, mutation_steps))
        effective = jax.vmap(ess.ess)(log_weights) / n
        return (State(position, lams, log_q, log_t, beta, log_evidence),
                Info(beta, effective, counts))

    return Kernel(init, step)


def run(kernel: Kernel, key: jax.Array, proposal: Proposal, target: refinement.Target,
        n_populations: int, n_particles: int,
        on_step: Callable[[int, float], None] | None = None) -> tuple[State, list[Info]]:
    """Run every population from ``q`` to β = 1: the final state and each step's ``Info``;
    ``on_step(steps, smallest β)`` after every step."""
    state = kernel.init(jax.random.fold_in(key, 0), proposal, target, n_populations, n_particles)
    infos: list[Info] = []
    while not bool(jnp.all(state.beta >= 1.0)):
        if len(infos) == MAX_TEMPERATURES:
            raise RuntimeError(f"the tempered SMC did not reach β = 1 in {MAX_TEMPERATURES} "
                               f"temperatures (β = {np.asarray(state.beta)}): the proposal "
                               "misses the posterior by far; fit more starts or chains.")
        state, info = kernel.step(jax.random.fold_in(key, len(infos) + 1), state, proposal,
                                  target)
        infos.append(info)
        if on_step is not None:
            on_step(len(infos), float(jnp.min(state.beta)))
    return state, infos
