"""The batched variational fit as pure kernels over NamedTuple states (optax/BlackJAX style).

Objective (to minimise), per row of data::

    f(θ) = ( −(1/L) Σ_l log p(X | ω_l) + KL(q_θ(ω̃) ‖ p(ω̃)) ) / n,
    ω_l = model.apply_projection(ω̃_l, W̃_l, project(W̃_l, λ)),  ω̃_l ~ q_θ (reparameterised).

A whole fit's independent optimisations — chains × starts × radii, and bootstrap resamples —
are *members* of one batch with a leading member axis M: ``init_state(optimizer, params,
keys, max_epochs) -> FitState``; ``epoch`` (one epoch of every active member) and
``run_epochs`` (epochs until none runs, one compiled loop); ``negative_elbos`` (scores).
``build_kernels`` binds them to one model, projection, prior and set of options (BlackJAX's
form: a NamedTuple of pure functions), ``prodag.inference.compiled`` compiles and caches
them, and ``prodag.inference.engine`` runs them from the host. The
optimiser is an ``optax.GradientTransformation`` passed in and applied to each member. An
*epoch* is ``steps_per_epoch`` full-batch Adam steps; its objective is the mean of its steps'
Monte Carlo objectives. Each member stops on its own after ``patience`` consecutive epochs
whose objective is not below its best by more than ``min_delta`` (absolute, per row), not
counting epochs that end within its first ``warmup_steps`` steps (Adam's early overshoot), or
after ``max_epochs``; a stopped member's state is frozen (its updates are masked).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from prodag.config.spec import OptimiserOptions
from prodag.models import variational
from prodag.models.base import StructuralEquationModel, draw_log_likelihood
from prodag.projection import Projector
from prodag.xla import power_of_two


class Params(NamedTuple):
    """Everything the ELBO is optimised over: ``q``'s parameters and, when the noise variance
    is learned, its logarithm ``(p,)`` or ``(1,)`` (else ``None``)."""

    q: variational.VariationalParams
    log_noise_variance: jax.Array | None = None


class Members(NamedTuple):
    """What each member of a batched fit fits, fixed through the fit (leading axis M)."""

    lam: jax.Array
    """``(M,)`` ℓ1 radius (``inf``: none)."""
    noise_variance: jax.Array
    """``(M, k)`` fixed noise variances, or (learned) the start, ``k`` = 1 or p."""
    data_index: jax.Array
    """``(M,)`` int: which of the stacked data sets the member fits."""
    n_rows: jax.Array
    """``(M,)`` rows of that data set."""


class FitState(NamedTuple):
    """The state of a batched fit (every leaf with the leading member axis M)."""

    params: Params
    opt_state: Any
    key: jax.Array
    """``(M, 2)`` each member's key, split once per epoch."""
    epoch: jax.Array
    """``(M,)`` epochs run."""
    best: jax.Array
    """``(M,)`` best epoch objective so far."""
    wait: jax.Array
    """``(M,)`` epochs since the last improvement."""
    history: jax.Array
    """``(M, max_epochs)`` every epoch's objective (NaN after the last)."""


def noise_variance_of(params: Params, fixed: jax.Array) -> jax.Array:
    """The learned per-variable noise variance if ``params`` has one, else ``fixed (p,)``."""
    if params.log_noise_variance is not None:
        return jnp.exp(params.log_noise_variance)
    return fixed


def elbo_loss(model: StructuralEquationModel, project: Projector, n_samples: int,
              prior_mean: float, prior_std: float, params: Params, key: jax.Array, data: Any,
              n_rows: jax.Array, lam: jax.Array, noise_variance: jax.Array) -> jax.Array:
    """One member's Monte Carlo negative ELBO per row (a scalar), differentiable in
    ``params``, from ``n_samples`` projected draws at radius ``lam``."""
    log_lik = draw_log_likelihood(model, params.q, key, n_samples, project, lam, data,
                                  noise_variance_of(params, noise_variance))
    kl = variational.kl_to_prior(params.q, prior_mean, prior_std)
    return (kl - jnp.mean(log_lik)) / n_rows


def expected_log_likelihood(model: StructuralEquationModel, project: Projector,
                            n_samples: int, params: Params, key: jax.Array, data: Any,
                            lam: jax.Array, noise_variance: jax.Array) -> jax.Array:
    """``E_q[log p(data | ω)]`` of one fit, estimated with ``n_samples`` projected draws."""
    return jnp.mean(draw_log_likelihood(model, params.q, key, n_samples, project, lam, data,
                                         noise_variance_of(params, noise_variance)))


def member_data(data: Any, index: jax.Array) -> Any:
    """Data set ``index`` of the stacked data (every leaf with a leading set axis)."""
    return jax.tree.map(lambda leaf: leaf[index], data)


def init_state(optimizer: optax.GradientTransformation, params: Params, keys: jax.Array,
               max_epochs: int) -> FitState:
    """The batched fit's start: ``params`` (leaves ``(M, ...)``), the optimiser's state of
    each member and the members' keys ``(M, 2)``."""
    n_members = keys.shape[0]
    dtype = jax.tree.leaves(params)[0].dtype
    return FitState(params, jax.vmap(optimizer.init)(params), keys,
                    jnp.zeros(n_members, jnp.int32), jnp.full(n_members, jnp.inf, dtype),
                    jnp.zeros(n_members, jnp.int32),
                    jnp.full((n_members, max_epochs), jnp.nan, dtype))


def running(state: FitState, patience: int, epoch_limit: jax.Array) -> jax.Array:
    """``(M,)`` whether each member still runs: below the epoch limit and still improving."""
    return (state.epoch < epoch_limit) & (state.wait < patience)


def epoch(loss, optimizer: optax.GradientTransformation, options: OptimiserOptions,
          state: FitState, members: Members, data: Any, active: jax.Array) -> FitState:
    """One epoch of every member; members not ``active (M,)`` are left as they were."""

    def one(params, opt_state, key, lam, noise, index, n_rows):
        key, sub = jax.random.split(key)
        own = member_data(data, index)

        def step(carry, step_key):
            params, opt_state = carry
            value, grads = jax.value_and_grad(loss)(params, step_key, own, n_rows, lam, noise)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), value

        (params, opt_state), values = lax.scan(
            step, (params, opt_state), jax.random.split(sub, options.steps_per_epoch))
        return params, opt_state, key, jnp.mean(values)

    params, opt_state, keys, value = over_members(
        one, options.member_batch, active, state.params, state.opt_state, state.key,
        members.lam, members.noise_variance, members.data_index, members.n_rows)
    improved = value < state.best - options.min_delta
    warming = (state.epoch + 1) * options.steps_per_epoch <= options.warmup_steps
    stepped = FitState(params, opt_state, keys, state.epoch + 1,
                       jnp.where(improved, jnp.minimum(value, state.best), state.best),
                       jnp.where(improved | warming, 0, state.wait + 1),
                       state.history.at[jnp.arange(value.shape[0]), state.epoch].set(value))
    return select(active, stepped, state)


def over_members(function, member_batch: int, active: jax.Array, *args):
    """``function`` of one member applied to every member of ``args`` (leading axis M):
    ``vmap`` over all (``member_batch`` 0) or over batches of ``member_batch`` run one after
    another; with one member at a time, the members not ``active (M,)`` are skipped (their
    outputs then are their inputs, and NaN for the last, the objective)."""
    if member_batch == 0:
        return jax.vmap(function)(*args)
    if member_batch > 1:
        return lax.map(lambda a: function(*a), args, batch_size=member_batch)

    def one_or_skip(a):
        *inputs, is_active = a
        return lax.cond(is_active, lambda x: function(*x),
                        lambda x: (*x[:3], jnp.full((), jnp.nan, x[3].dtype)), inputs)

    return lax.map(one_or_skip, (*args, active))


def run_epochs(loss, optimizer: optax.GradientTransformation, options: OptimiserOptions,
               state: FitState, members: Members, data: Any,
               epoch_limit: jax.Array) -> FitState:
    """Epochs until no member runs (``running``) at ``epoch_limit``: one compiled loop."""

    def body(state):
        return epoch(loss, optimizer, options, state, members, data,
                     running(state, options.patience, epoch_limit))

    return lax.while_loop(lambda s: jnp.any(running(s, options.patience, epoch_limit)),
                          body, state)


def score_key_chunks(keys: jax.Array, n_batches: int, chunk: int) -> tuple:
    """The batch keys of a score in chunks of ``chunk``, each ``(M, chunk, 2)``: member ``m``'s
    ``split(keys[m], n_batches)``, padded with copies of its first to a multiple of ``chunk``."""
    batch = jax.vmap(lambda key: jax.random.split(key, n_batches))(keys)
    padded = jnp.concatenate([batch, jnp.repeat(batch[:, :1], (-n_batches) % chunk, axis=1)],
                             axis=1)
    return tuple(jnp.split(padded, padded.shape[1] // chunk, axis=1))


def negative_elbos(loss, member_batch: int, params: Params, keys: jax.Array, members: Members,
                   data: Any) -> jax.Array:
    """``(M, B)``: every member's objective at each of its ``B`` batch keys ``keys (M, B, 2)``
    (batches one after another, ``lax.map``: a smaller program than a vmap over them)."""

    def one(params, member_keys, lam, noise, index, n_rows):
        own = member_data(data, index)
        return lax.map(lambda key: loss(params, key, own, n_rows, lam, noise), member_keys)

    args = (params, keys, members.lam, members.noise_variance, members.data_index,
            members.n_rows)
    if member_batch == 0:
        return jax.vmap(one)(*args)
    return lax.map(lambda a: one(*a), args, batch_size=member_batch)


def compacted_size(n_running: int, batch_size: int) -> int:
    """The size a batch of ``batch_size`` members with ``n_running`` still running shrinks to:
    the smallest power of two that holds them, once that is smaller than the batch (else the
    batch stays as it is). The sizes recur, so their compiled programs are reused."""
    return min(power_of_two(n_running), batch_size)


def pad_members(tree: Any, padding: int) -> Any:
    """``tree`` (every leaf with the leading member axis) with ``padding`` copies of its last
    member appended (copied on the host, ``on_device``)."""
    def pad(leaf):
        host = np.asarray(leaf)
        return on_device(np.concatenate([host, np.repeat(host[-1:], padding, axis=0)]))

    return jax.tree.map(pad, tree)


def stack(trees: list) -> Any:
    """Pytrees of equal structure stacked along a new leading axis (on the host,
    ``on_device``)."""
    return jax.tree.map(lambda *leaves: on_device(np.stack([np.asarray(x) for x in leaves])),
                        *trees)


def take_members(tree: Any, index: np.ndarray) -> Any:
    """``tree`` (every leaf with the leading member axis) at the members ``index (m,)``, in
    that order (gathered on the host, ``on_device``)."""
    return jax.tree.map(lambda x: on_device(np.asarray(x)[index]), tree)


def on_device(array: np.ndarray) -> jax.Array:
    """A host array placed on the default device as it is. The copies above are made with
    NumPy, not ``jnp``: an eager ``jnp`` operation compiles an XLA program for every new
    shape, and a fit meets many (each batch size of each stage), where a copy costs little."""
    return jax.device_put(array)


def select(mask: jax.Array, new: Any, old: Any) -> Any:
    """``new`` where ``mask (n,)`` holds, else ``old``: pytrees of equal structure whose leaves
    lead with the axis n (members, draws or particles)."""
    return jax.tree.map(
        lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (jnp.ndim(a) - 1)), a, b),
        new, old)


class VariationalKernels(NamedTuple):
    """The batched fit's kernels of one model, projection, prior and set of options, bound in
    (``build_kernels``: pure functions; ``prodag.inference.compiled.jit_variational``: the
    same compiled). ``loss(params, key, data, n_rows, lam, noise)``: one member's objective;
    ``init(params, keys, max_epochs) -> FitState`` (``max_epochs`` static); ``step(state,
    members, data, active) -> FitState``: one ``epoch``; ``run(state, members, data,
    epoch_limit) -> FitState``: epochs until none runs; ``scores(params, keys, members, data)``
    (``negative_elbos``); ``score_keys(keys, n_batches, chunk)`` (both ints static);
    ``expected_log_likelihood(params, key, data, lam, noise)``; ``optimizer``: the gradient
    transformation they step with (not a function: compiling leaves it)."""

    loss: Callable
    init: Callable
    step: Callable
    run: Callable
    scores: Callable
    score_keys: Callable
    expected_log_likelihood: Callable
    optimizer: optax.GradientTransformation


def build_kernels(model: StructuralEquationModel, project: Projector, options: OptimiserOptions,
                  prior_mean: float, prior_std: float,
                  optimizer: optax.GradientTransformation) -> VariationalKernels:
    """The ``VariationalKernels`` of ``model`` and ``project`` with the prior ``N(prior_mean,
    prior_std²)``, ``options`` and the gradient transformation ``optimizer``."""
    bind = functools.partial
    loss = bind(elbo_loss, model, project, options.n_samples, prior_mean, prior_std)
    return VariationalKernels(
        loss, bind(init_state, optimizer), bind(epoch, loss, optimizer, options),
        bind(run_epochs, loss, optimizer, options),
        bind(negative_elbos, loss, options.member_batch), score_key_chunks,
        bind(expected_log_likelihood, model, project, options.n_samples), optimizer)
