"""Variational inference for projected DAG posteriors: the ELBO and the optimiser loop.

Generic over any ``StructuralEquationModel`` (``prodag.models.base``) and any differentiable
projection ``project(W̃ (L, p, p), lam) -> W (L, p, p)`` (``prodag.projection.make_projector``).

Objective (to minimise), per row of data::

    f(θ) = ( −(1/L) Σ_l log p(X | ω_l) + KL(q_θ(ω̃) ‖ p(ω̃)) ) / n,
    ω_l = model.apply_projection(ω̃_l, W̃_l, project(W̃_l, λ)),  ω̃_l ~ q_θ (reparameterised).

Optimiser: Adam. An *epoch* is ``steps_per_epoch`` full-batch Adam steps (the data enter
through sufficient statistics or as a whole, so one step already sees every row); the epoch's
objective is the mean of its steps' Monte Carlo objectives, which averages out most of their
noise. Training stops after ``patience`` consecutive epochs whose objective is not below the
best so far by more than ``min_delta`` (absolute, per row), or after ``max_epochs`` epochs.

The whole loop runs on the device: a ``lax.while_loop`` over epochs, each a ``lax.scan`` over
steps, with early stopping decided inside; the host wakes up between runs of epochs to update
the progress bar (``prodag.progress.Progress``; one bar can span many fits). The first run is
one epoch, so a large fit shows its first epoch as soon as it is done; after that each run is
sized from the last one's seconds per epoch to take about ``SECONDS_PER_CALL``, at most
``epochs_per_call`` epochs (small fits wake the host rarely). The epoch limit is an argument
of the compiled loop, so the sizes change nothing but when the host looks: the same epochs,
the same keys, the same result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from prodag import variational
from prodag.models.base import StructuralEquationModel, Weights
from prodag.progress import Progress  # noqa: F401  (re-exported: the fit imports it here)
from prodag.projection import Projector

SECONDS_PER_CALL = 1.0
"""Target seconds between two progress updates of a fit (see the module docstring)."""
SCORE_STREAM = 2 ** 31 - 1
"""``fold_in`` index of the key stream that scores a finished fit (apart from its steps')."""



@dataclass(frozen=True)
class OptimiserOptions:
    """Optimiser and stopping settings (see the module docstring for epochs and patience)."""

    n_samples: int = 100
    max_epochs: int = 1000
    patience: int = 5
    lr: float = 0.1
    steps_per_epoch: int = 10
    min_delta: float = 1e-3
    epochs_per_call: int = 20


SCORE_CHUNK = 10
"""Batches of draws per run of the compiled scoring program (``negative_elbo``)."""


class Params(NamedTuple):
    """Everything the ELBO is optimised over: ``q``'s parameters and, when the noise variance
    is learned, its logarithm ``(p,)`` (else ``None``)."""

    q: variational.VariationalParams
    log_noise_variance: jax.Array | None = None


class FitResult(NamedTuple):
    """Outcome of one optimisation: final parameters, the per-epoch objective history and a
    low-noise estimate of the final objective (``VariationalInference.negative_elbo``)."""

    params: Params
    history: np.ndarray
    """Objective of every epoch run, shape ``(n_epochs,)``."""
    objective: float
    """Negative ELBO per row at ``params``: the score for comparing restarts and radii."""


class TrainState(NamedTuple):
    params: Params
    opt_state: Any
    key: jax.Array
    epoch: jax.Array
    best: jax.Array
    wait: jax.Array
    history: jax.Array


def projected_draw(model: StructuralEquationModel, project: Projector, params: Params,
                   key: jax.Array, n_samples: int, lam: jax.Array) -> tuple[Weights, jax.Array]:
    """``n_samples`` projected draws: the weights ``ω`` (pytree, leading axis L) and ``W (L, p, p)``.

    The draws use the first half of ``split(key)`` (so fits reproduce those of earlier
    versions, which spent the second half on a learned radius); ``lam`` is a scalar or one
    radius per draw ``(L,)``.
    """
    key_weights, _ = jax.random.split(key)
    return model.draw(params.q, key_weights, n_samples, project, lam)


def noise_variance_of(params: Params, fixed: jax.Array) -> jax.Array:
    """The learned per-variable noise variance if ``params`` has one, else ``fixed (p,)``."""
    if params.log_noise_variance is not None:
        return jnp.exp(params.log_noise_variance)
    return fixed


class VariationalInference:
    """Compiled ELBO optimisation for one model, projection, prior and set of options.

    The compiled functions take the data, ``lam`` and the fixed noise variance as arguments,
    so a λ path or a refit on new data of the same shape reuses one compilation.
    """

    def __init__(self, model: StructuralEquationModel, project: Projector,
                 options: OptimiserOptions = OptimiserOptions(), prior_mean: float = 0.0,
                 prior_std: float = 1.0, learn_noise_variance: bool = False):
        self.model = model
        self.project = project
        self.options = options
        self.prior_mean = prior_mean
        self.prior_std = prior_std
        self.learn_noise_variance = learn_noise_variance
        self.optimizer = optax.adam(options.lr)
        self._run_epochs = jax.jit(self._run_epochs_impl, static_argnums=(0,))
        self._expected_log_likelihood = jax.jit(self._expected_log_likelihood_impl)
        self._objectives = jax.jit(self._objectives_impl)

    # ---- parameters and objective -------------------------------------------------------

    def init_params(self, p: int, noise_variance: np.ndarray, dtype=jnp.float32) -> Params:
        """Variational parameters at the prior, plus the log noise variances (start
        ``noise_variance``) when they are learned."""
        q = variational.init_at_prior(self.model.weight_shapes(p), self.prior_mean,
                                      self.prior_std, dtype)
        if not self.learn_noise_variance:
            return Params(q)
        return Params(q, jnp.log(jnp.asarray(noise_variance, dtype)))

    def objective(self, params: Params, key: jax.Array, data: Any, n_rows: jax.Array,
                  lam: jax.Array, noise_variance: jax.Array) -> jax.Array:
        """The Monte Carlo negative ELBO per row (a scalar), differentiable in ``params``."""
        weights, _ = projected_draw(self.model, self.project, params, key,
                                    self.options.n_samples, lam)
        log_lik = self.model.log_likelihood(weights, data,
                                            noise_variance_of(params, noise_variance))
        kl = variational.kl_to_prior(params.q, self.prior_mean, self.prior_std)
        return (kl - jnp.mean(log_lik)) / n_rows

    def _expected_log_likelihood_impl(self, params, key, data, lam, noise_variance):
        weights, _ = projected_draw(self.model, self.project, params, key,
                                    self.options.n_samples, lam)
        return jnp.mean(self.model.log_likelihood(weights, data,
                                                  noise_variance_of(params, noise_variance)))

    def expected_log_likelihood(self, params: Params, key: jax.Array, data: Any, lam: float,
                                noise_variance: np.ndarray) -> float:
        """``E_q[log p(data | ω)]`` estimated with ``n_samples`` draws (a float)."""
        return float(self._expected_log_likelihood(params, key, data, _scalar(lam, params),
                                                   jnp.asarray(noise_variance)))

    def _objectives_impl(self, params, keys, data, n_rows, lam, noise_variance):
        # One batch after another (lax.map), not vmap: the same values, and a smaller
        # program to compile (notably for the MLP).
        return lax.map(lambda key: self.objective(params, key, data, n_rows, lam,
                                                  noise_variance), keys)

    def negative_elbo(self, params: Params, key: jax.Array, data: Any, n_rows: int, lam: float,
                      noise_variance: np.ndarray, n_batches: int = SCORE_CHUNK) -> float:
        """The objective (negative ELBO per row) at ``params``, averaged over ``n_batches``
        independent batches of ``n_samples`` draws: a low-noise score for comparing fits
        (radii, restarts) on the same data.

        The batches run ``SCORE_CHUNK`` at a time (the last chunk padded with copies of the
        first key, whose values are dropped), so every ``n_batches`` shares one compiled
        program."""
        keys = jax.random.split(key, n_batches)
        padded = jnp.concatenate([keys, jnp.repeat(keys[:1], (-n_batches) % SCORE_CHUNK, axis=0)])
        args = (data, jnp.asarray(n_rows, _dtype(params)), _scalar(lam, params),
                jnp.asarray(noise_variance, _dtype(params)))
        values = jnp.concatenate([self._objectives(params, chunk, *args)
                                  for chunk in jnp.split(padded, len(padded) // SCORE_CHUNK)])
        return float(jnp.mean(values[:n_batches]))

    # ---- the device loop ----------------------------------------------------------------

    def _step(self, carry, key, data, n_rows, lam, noise_variance):
        params, opt_state = carry
        value, grads = jax.value_and_grad(self.objective)(params, key, data, n_rows, lam,
                                                          noise_variance)
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), value

    def _epoch(self, state: TrainState, data, n_rows, lam, noise_variance) -> TrainState:
        key, sub = jax.random.split(state.key)
        step_keys = jax.random.split(sub, self.options.steps_per_epoch)
        (params, opt_state), values = lax.scan(
            lambda carry, k: self._step(carry, k, data, n_rows, lam, noise_variance),
            (state.params, state.opt_state), step_keys)
        value = jnp.mean(values)
        improved = value < state.best - self.options.min_delta
        return TrainState(params, opt_state, key, state.epoch + 1,
                          jnp.where(improved, jnp.minimum(value, state.best), state.best),
                          jnp.where(improved, 0, state.wait + 1),
                          state.history.at[state.epoch].set(value))

    def _run_epochs_impl(self, max_epochs: int, state: TrainState, epoch_limit, data, n_rows,
                         lam, noise_variance) -> TrainState:
        del max_epochs  # static: fixes the history length, hence one compilation per value

        def running(s):
            return (s.epoch < epoch_limit) & (s.wait < self.options.patience)

        return lax.while_loop(running,
                              lambda s: self._epoch(s, data, n_rows, lam, noise_variance),
                              state)

    def fit(self, params: Params, data: Any, n_rows: int, lam: float, noise_variance: np.ndarray,
            key: jax.Array, progress: Progress | None = None) -> FitResult:
        """Optimise ``params`` (e.g. from ``init_params`` or a warm start) on ``data``.

        ``data`` is ``model.prepare_data(X)``; ``n_rows`` the number of rows of ``X``;
        ``noise_variance`` a ``(p,)`` array (the start value when it is learned).
        """
        opts = self.options
        dtype = jax.tree.leaves(params)[0].dtype
        state = TrainState(params, self.optimizer.init(params), key, jnp.asarray(0),
                           jnp.asarray(jnp.inf, dtype), jnp.asarray(0),
                           jnp.full((opts.max_epochs,), jnp.nan, dtype))
        args = (data, jnp.asarray(n_rows, dtype), _scalar(lam, params),
                jnp.asarray(noise_variance, dtype))
        epoch, chunk = 0, 1
        while True:
            limit = min(epoch + chunk, opts.max_epochs)
            began = time.perf_counter()
            state = self._run_epochs(opts.max_epochs, state, jnp.asarray(limit), *args)
            done, (epoch, wait) = int(state.epoch) - epoch, (int(state.epoch), int(state.wait))
            chunk = epochs_per_call(time.perf_counter() - began, done, opts.epochs_per_call)
            if progress is not None:
                progress.update(epoch, float(state.history[epoch - 1]))
            if wait >= opts.patience or epoch >= opts.max_epochs:
                break
        if progress is not None:
            progress.fit_done()
        history = np.asarray(state.history[:epoch])
        objective = self.negative_elbo(state.params, jax.random.fold_in(key, SCORE_STREAM),
                                       data, n_rows, lam, noise_variance)
        return FitResult(state.params, history, objective)


def epochs_per_call(seconds: float, epochs: int, most: int) -> int:
    """Epochs for the next run of the device loop, given that the last run took ``seconds``
    for ``epochs`` epochs: about ``SECONDS_PER_CALL`` worth, between 1 and ``most``."""
    if epochs <= 0 or seconds <= 0:
        return most
    return max(1, min(most, int(SECONDS_PER_CALL * epochs / seconds)))


def _dtype(params: Params):
    return jax.tree.leaves(params)[0].dtype


def _scalar(lam: float, params: Params) -> jax.Array:
    return jnp.asarray(lam, _dtype(params))

