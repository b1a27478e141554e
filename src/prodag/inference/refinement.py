"""Metropolis refinement: moving draws of the fitted mixture towards the model's own posterior.

Each component of the variational posterior is a mean-field normal, narrower than the exact
posterior within its mode: on graphs small enough to compute that posterior, a component puts
far more of its draws on one DAG than the model does (``docs/findings.md``). Refinement starts
``n`` draws ``ω̃`` of the fitted mixture, each with its component's radius ``λ`` and noise
variance, and moves every one by ``n_steps`` Metropolis steps that leave the model's posterior
at that radius invariant::

    π(ω̃ | λ) ∝ N(ω̃; prior_mean, prior_std²) · p(X | ω(ω̃, λ)),

with ``ω(ω̃, λ)`` the projected weights (``prodag.models.base``, steps 2-4): the target whose
mean-field approximation the ELBO fits. The refined draws are projected like any other, so
every one is an exact DAG. Each step makes one symmetric proposal of one kind for every draw
(the kind drawn per step), so the acceptance ratio is the target ratio (times a jump's
Jacobian): one entry, every entry, an edge reversal, or with ``Target.frames`` a jump between
the fitted modes (``prodag.inference.moves`` gives each).

The radius stays at the component's. The noise variance stays at its fitted value, unless
the fit learned it (``collapse``: ``"estimate"``, one per variable, or ``"equal"``, shared) and
the SEM is the linear-Gaussian one: then the target is the posterior with ``σ²`` integrated out
under ``p(σ²) ∝ 1/σ²`` (the model's own posterior as ``benchmarks/reference_sampler.py`` and
``prodag.inference.smc`` define it)::

    log p(X | ω) = −½ Σ_k n_k log RSS_k   ("estimate"),   −½ (Σ_k n_k) log Σ_k RSS_k   ("equal"),

up to constants, so Markov-equivalent orientations, which the data cannot tell apart once each
variable has its own variance, keep equal mass (a fixed variance per variable would favour the
fitted orientation); each refined draw then carries its conditional maximiser
``RSS_k / n_k`` (or ``Σ_k RSS_k / Σ_k n_k``) as its noise variance. The kernels
are pure functions over a NamedTuple state, in BlackJAX's form: ``build_kernel`` returns a
``Kernel`` of ``init`` and ``step`` (vectorised over the draws; the step returns its
``StepInfo``) and ``run_steps`` (``lax.fori_loop`` over steps);
``prodag.inference.compiled`` compiles and caches them, and ``refine`` (host side) runs the
compiled kernel in blocks of ``STEPS_PER_CALL`` steps so that a progress bar can follow,
splitting the draws over the local devices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from prodag.inference.engine import member_layout
from prodag.inference.kernels import pad_members, select
from prodag.inference.moves import (KINDS, MOVES, Frames, Movable, accepts, movable,
                                    movable_slots, proposal)
from prodag.models.base import StructuralEquationModel, Weights
from prodag.models.linear import LinearSEM, LinearSEMOnSlots
from prodag.projection import Projector

STEPS_PER_CALL = 100
"""Steps per run of the compiled loop (the host updates the progress bar in between)."""
FULLY_OPTIMISED = {"xla_backend_optimization_level": 3, "xla_cpu_use_fusion_emitters": True}
"""The step loop's compiler options: XLA's defaults, full optimisation, whatever ``XLA_FLAGS``
ask for and in place of the library's faster-compiling ``prodag.xla.CPU_COMPILER_OPTIONS``
(hundreds of steps over a thousand draws: its run time, not its compile time, dominates)."""


class Target(NamedTuple):
    """What fixes ``π``: the prepared data (``model.prepare_data``), each draw's radius
    ``lams (n,)`` and noise variance ``noise (n, p)`` or ``(n, 1)``, and the prior.

    With ``resample (n,)`` (ints), ``data`` holds one prepared data set per bootstrap resample,
    stacked on a leading axis, and draw ``i`` targets the posterior given resample
    ``resample[i]``: a bagged posterior (BayesBag) refined component by component."""

    data: Any
    lams: jax.Array
    noise: jax.Array
    prior_mean: float
    prior_std: float
    resample: jax.Array | None = None
    frames: Frames | None = None
    """The components that draws may jump between (module docstring); None: no jumps."""
    movable: Movable | None = None
    """The entries the moves within a mode change (``moves.Movable``); None: every entry."""


class Refined(NamedTuple):
    """Refined draws: ``weights_tilde`` (numpy pytree, leading axis n) with their radii
    ``lams (n,)`` and noise variances ``noise (n, p | 1)``, and the accepted share of each
    move kind ``acceptance (len(MOVES),)``."""

    weights_tilde: dict[str, np.ndarray]
    lams: np.ndarray
    noise: np.ndarray
    acceptance: np.ndarray
    """``(len(KINDS),)``: the accepted share of each kind's proposals (0 where none was
    made)."""


COLLAPSIBLE = ("estimate", "equal")
"""Learned noise models whose variances refinement integrates out (module docstring)."""


def collapsible(model: StructuralEquationModel, noise_model) -> str | None:
    """``noise_model`` when refinement integrates its variances out (the linear-Gaussian SEM
    with learned noise), else None (the fitted variances stay fixed)."""
    gaussian = getattr(model, "likelihood", "gaussian") == "gaussian"
    linear = hasattr(model, "residual_sum_of_squares")
    return noise_model if (noise_model in COLLAPSIBLE and gaussian and linear) else None


def _per_draw(function, weights: Weights, target: Target) -> jax.Array:
    """``function(w, noise, data)`` of every draw (its resample's data when bagged)."""
    if target.resample is None:
        return jax.vmap(function, (0, 0, None))(weights, target.noise, target.data)
    return jax.vmap(lambda w, noise, r: function(
        w, noise, jax.tree.map(lambda a: a[r], target.data)))(weights, target.noise,
                                                              target.resample)


def _rss(model: StructuralEquationModel, w: Weights, data) -> tuple[jax.Array, jax.Array]:
    """One draw's residual sums of squares ``(p,)`` and their rows ``(p,)``."""
    rss = model.residual_sum_of_squares(jax.tree.map(lambda a: a[None], w), data)[0]
    return rss, jnp.broadcast_to(data["n_rows"], rss.shape).astype(rss.dtype)


def log_target(model: StructuralEquationModel, project: Projector, weights_tilde: Weights,
               target: Target, collapse: str | None = None) -> jax.Array:
    """``log π(ω̃ | λ)`` up to a constant, one value per draw ``(n,)``; with ``collapse``
    (``collapsible``) the noise variances integrated out (module docstring)."""
    weights = project_draws(model, project, weights_tilde, target.lams)[0]

    def one(w, noise, data):
        if collapse is None:
            return model.log_likelihood(jax.tree.map(lambda a: a[None], w), data, noise)[0]
        rss, rows = _rss(model, w, data)
        if collapse == "estimate":
            return -0.5 * jnp.sum(rows * jnp.log(rss))
        return -0.5 * jnp.sum(rows) * jnp.log(jnp.sum(rss))

    log_likelihood = _per_draw(one, weights, target)
    log_prior = sum(-0.5 * jnp.sum(jnp.square((leaf - target.prior_mean) / target.prior_std)
                                   .reshape(leaf.shape[0], -1), axis=1)
                    for leaf in jax.tree.leaves(weights_tilde))
    return log_prior + log_likelihood


class RefineState(NamedTuple):
    """The draws under refinement (every leaf with the leading draw axis n)."""

    weights_tilde: Weights
    log_target: jax.Array
    """``(n,)`` ``log π`` of each draw."""
    counts: jax.Array
    """``(2, len(KINDS))``: the accepted and the proposed moves of each kind, over the draws
    that ``counted`` marks."""
    counted: jax.Array
    """``(n,)`` 1 for a draw, 0 for a copy that pads the draws to the devices."""
    component: jax.Array
    """``(n,)`` int: each draw's component, its frame for jumps (0 without frames)."""


class StepInfo(NamedTuple):
    move: jax.Array
    """The kind of this step's moves (a scalar index into ``MOVES``)."""
    accepted: jax.Array
    """``(n,)`` whether each draw's move was accepted."""


def init(model: StructuralEquationModel, project: Projector, collapse: str | None,
         weights_tilde: Weights, target: Target, counted: jax.Array,
         component: jax.Array | None = None) -> RefineState:
    """The state of draws ``weights_tilde`` (``counted (n,)``, ``component (n,)``: see
    ``RefineState``; None: all 0)."""
    value = log_target(model, project, weights_tilde, target, collapse)
    component = (jnp.zeros(value.shape, jnp.int32) if component is None
                 else jnp.asarray(component, jnp.int32))
    return RefineState(weights_tilde, value, jnp.zeros((2, len(KINDS)), value.dtype),
                       counted.astype(value.dtype), component)


def step(model: StructuralEquationModel, project: Projector, collapse: str | None,
         target: Target, state: RefineState, key: jax.Array) -> tuple[RefineState, StepInfo]:
    """One Metropolis step of every draw (module docstring): one proposal of one kind each,
    accepted with the target ratio (times the jump's Jacobian)."""
    k_propose, k_accept = jax.random.split(key)
    proposed, component, log_jacobian, move = proposal(
        k_propose, state.weights_tilde, state.component, state.log_target, target.frames,
        target.prior_std, target.movable, model.edge_weight,
        isinstance(model, LinearSEMOnSlots))
    value = log_target(model, project, proposed, target, collapse)
    accept = accepts(k_accept, value - state.log_target + log_jacobian)
    moves = jnp.where(move == len(MOVES), component != state.component, True)
    accept = accept & moves
    weights_tilde = select(accept, proposed, state.weights_tilde)
    counts = state.counts.at[:, move].add(jnp.stack([jnp.sum(accept * state.counted),
                                                     jnp.sum(moves * state.counted)]))
    return (RefineState(weights_tilde, jnp.where(accept, value, state.log_target), counts,
                        state.counted, jnp.where(accept, component, state.component)),
            StepInfo(move, accept))


def run_steps(model: StructuralEquationModel, project: Projector, collapse: str | None,
              target: Target, state: RefineState, keys: jax.Array,
              n_steps: jax.Array | None = None) -> RefineState:
    """The first ``n_steps`` (a scalar, traced; None: all) of ``keys (S, 2)``, one step each
    (``lax.fori_loop``): the last state. One compilation serves every count up to ``S``."""
    def one(index, carry):
        return step(model, project, collapse, target, carry, keys[index])[0]

    return lax.fori_loop(0, len(keys) if n_steps is None else n_steps, one, state)


def conditional_noise(model: StructuralEquationModel, project: Projector, collapse: str,
                      weights_tilde: Weights, target: Target) -> jax.Array:
    """Each draw's noise variances given its weights, ``(n, p)`` (``"estimate"``: ``RSS_k /
    n_k``) or ``(n, 1)`` (``"equal"``: ``Σ_k RSS_k / Σ_k n_k``): the maximisers of the
    likelihood that ``collapse`` integrates out."""
    weights = project_draws(model, project, weights_tilde, target.lams)[0]

    def one(w, noise, data):
        rss, rows = _rss(model, w, data)
        return rss / rows if collapse == "estimate" else (jnp.sum(rss) / jnp.sum(rows))[None]

    return _per_draw(one, weights, target)


class Kernel(NamedTuple):
    """The refinement of one model and projection, bound in (``build_kernel``: pure functions;
    ``prodag.inference.compiled.refinement``: compiled). ``init(weights_tilde, target,
    counted, component)``; ``step(target, state, key) -> (RefineState, StepInfo)``;
    ``run_steps(target, state, keys, n_steps)``: the first ``n_steps`` of ``len(keys)``
    steps; ``conditional_noise(weights_tilde, target)`` (None without ``collapse``,
    ``collapsible``); ``project(weights_tilde, lams)``; ``movable(weights_tilde)``: the
    ``Target.movable`` of draws (host side, not compiled);
    ``table``: with draws on candidate parents' slots (``build_slot_kernel``), their
    ``ParentTable`` (None: dense draws)."""

    init: Callable
    step: Callable
    run_steps: Callable
    conditional_noise: Callable | None
    project: Callable
    movable: Callable
    collapse: str | None
    table: Any = None


def build_kernel(model: StructuralEquationModel, project: Projector, noise_model=None,
                 allowed: np.ndarray | None = None) -> Kernel:
    """The refinement ``Kernel`` of ``model`` and ``project``, with the learned
    ``noise_model`` its target integrates out where it can (``collapsible``; None: the fitted
    variances stay fixed) and the ``allowed (p, p)`` edges of the projection (the moves change
    those weights only, ``moves.Movable``; None: every edge may be one)."""
    return _bound(model, project, collapsible(model, noise_model),
                  lambda w: None if allowed is None else movable(w, model.edge_weight, allowed))


def build_slot_kernel(model: StructuralEquationModel, project: Projector,
                      noise_model=None) -> Kernel | None:
    """The refinement ``Kernel`` of the linear-Gaussian SEM on candidate parents with its
    draws on the parents' slots ``{"W": (n, p, K)}`` (``LinearSEMOnSlots``, projected by
    ``project.on_parents``): the target and moves of ``build_kernel`` on the allowed edges,
    each step ``O(p · K)`` a draw; a reversal swaps the slots of ``j → k`` and ``k → j``
    where both are candidates. None where it does not apply (another SEM, or no candidate
    parents)."""
    table = slot_table(model, project)
    if table is None:
        return None
    on_slots = LinearSEMOnSlots(table)
    return _bound(on_slots, project.on_parents, collapsible(on_slots, noise_model),
                  lambda w: movable_slots(table), table)


def slot_table(model: StructuralEquationModel, project: Projector):
    """The candidate parents' ``ParentTable`` on whose slots the refinement of ``model`` and
    ``project`` keeps its draws (the linear-Gaussian SEM on candidate parents), else None."""
    table = getattr(project, "table", None)
    return table if type(model) is LinearSEM and model.parents is not None else None


def _bound(model, project, collapse: str | None, movable_of: Callable, table=None) -> Kernel:
    """The ``Kernel`` of these functions with ``model``, ``project`` and ``collapse`` bound."""
    bind = functools.partial
    return Kernel(bind(init, model, project, collapse), bind(step, model, project, collapse),
                  bind(run_steps, model, project, collapse),
                  None if collapse is None else bind(conditional_noise, model, project,
                                                     collapse),
                  lambda w, lams: project_draws(model, project, w, lams), movable_of, collapse,
                  table)


def refine(kernel: Kernel, weights_tilde: Weights, target: Target, key: jax.Array,
           n_steps: int, on_block: Callable[[int], None] | None = None,
           component: np.ndarray | None = None) -> Refined:
    """Move the draws ``weights_tilde`` (pytree, leading axis n) by ``n_steps`` Metropolis
    steps targeting ``π`` (module docstring) with the compiled ``kernel``, each starting in its
    ``component (n,)`` of ``target.frames``; ``on_block(steps_done)`` after every block of
    ``STEPS_PER_CALL`` steps. With several local devices the draws are split over them
    (padded with copies of the last draw, which the acceptance leaves out)."""
    n = len(target.lams)
    component = np.zeros(n, np.int32) if component is None else component
    draws = (jax.tree.map(jnp.asarray, weights_tilde), target.lams, target.noise,
             target.resample, jnp.asarray(component, jnp.int32))
    if jax.local_device_count() > 1:
        padded, place = member_layout(n)
        draws = place(pad_members(draws, padded - n))
    weights_tilde, lams, noise, resample, component = draws
    target = target._replace(lams=lams, noise=noise, resample=resample,
                             movable=kernel.movable(weights_tilde))
    state = kernel.init(weights_tilde, target, jnp.arange(len(lams)) < n, component)
    done = 0
    while done < n_steps:  # the first ``block`` of STEPS_PER_CALL keys: one compilation;
        # JAX's default (partitionable) threefry splits the same prefix whatever the count
        block = min(STEPS_PER_CALL, n_steps - done)
        keys = jax.random.split(jax.random.fold_in(key, done), STEPS_PER_CALL)
        state = kernel.run_steps(target, state, keys, jnp.asarray(block, jnp.int32))
        done += block
        if on_block is not None:
            on_block(done)
    counts = np.asarray(state.counts)
    noise = (target.noise if kernel.conditional_noise is None
             else kernel.conditional_noise(state.weights_tilde, target))
    return Refined(jax.tree.map(lambda x: np.asarray(x)[:n], state.weights_tilde),
                   np.asarray(target.lams)[:n], np.asarray(noise)[:n],
                   counts[0] / np.maximum(counts[1], 1))


def project_draws(model: StructuralEquationModel, project: Projector, weights_tilde: Weights,
                  lams: jax.Array) -> tuple[Weights, jax.Array]:
    """The projected weights ``ω`` and graphs ``W (n, p, p)`` of draws ``ω̃`` at ``lams (n,)``."""
    graph_tilde = model.graph_of(weights_tilde)
    graph = project(graph_tilde, lams.astype(graph_tilde.dtype))
    return model.apply_projection(weights_tilde, graph_tilde, graph), graph
