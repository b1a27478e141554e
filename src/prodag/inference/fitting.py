"""Fitting at one radius: a configuration's starts and restarts, the data sets its fits see
and batches of members (its compiled kernels: ``prodag.inference.compiled``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.config.spec import PATH_SCREEN, ModelConfig, PathScreen
from prodag.config.starts import takes_two_orders
from prodag.inference import compiled, draws, radius_selection
from prodag.inference.engine import FitResult, Screen, VariationalInference
from prodag.inference.initialization import start_means
from prodag.inference.kernels import Params, stack
from prodag.inputs.diagnostics import without_outlying_rows
from prodag.models.variational import VariationalParams, inverse_softplus
from prodag.progress import Progress

DATA_START_STD = 0.1
"""σ of every weight in the data start: small enough that the start's order survives the
first steps, and the σ of reversed entries regrows towards the prior under the KL."""


def data_start(prior: Params, means: dict[str, np.ndarray]) -> Params:
    """``prior`` with ``q``'s means set to ``means`` (missing names, e.g. biases: 0) and
    σ = ``DATA_START_STD`` everywhere."""
    loc = {name: jnp.asarray(means[name], value.dtype) if name in means
           else jnp.zeros_like(value) for name, value in prior.q.loc.items()}
    rho = jax.tree.map(lambda x: jnp.full_like(x, inverse_softplus(DATA_START_STD)), loc)
    return prior._replace(q=VariationalParams(loc, rho))


def alternate_starts(prior: Params, data_starts: Sequence[Params], n_restarts: int,
                     with_prior: bool = True) -> list[Params]:
    """The ``n_restarts`` starting points: the data starts in turn for restarts 0, 2, 4, … and
    the prior for the others, or, without ``with_prior``, the data starts in turn for every
    restart (they differ in their training keys too); all the prior if there is no data
    start."""
    if not data_starts:
        return [prior] * n_restarts
    if not with_prior:
        return [data_starts[r % len(data_starts)] for r in range(n_restarts)]
    return [data_starts[(r // 2) % len(data_starts)] if r % 2 == 0 else prior
            for r in range(n_restarts)]


def starts(engine: VariationalInference, Z: np.ndarray, noise: np.ndarray, dtype,
           config: ModelConfig, from_data: bool, n_restarts: int) -> list[Params]:
    """The starting points of ``n_restarts`` fits on the rows ``Z (n, p)``: the prior, and with
    ``from_data`` the data starts (``prodag.inference.initialization.start_means``, computed once
    here for every radius fitted on these rows) alternating with it; the linear SEM's data starts
    (the top-down and the searched orders) take every restart in turn, without the prior,
    whose fits land in different optima for different seeds."""
    prior = engine.init_params(Z.shape[1], noise, dtype)
    per_variable = engine.learn_noise_variance and np.size(noise) > 1
    data_starts = []
    if from_data:
        rows = Z if config.likelihood == "gaussian" else without_outlying_rows(Z)
        screened = config.knowledge is not None and config.knowledge.candidates is not None
        support = config.knowledge.allowed_mask() if screened else None
        for means in start_means(rows, np.broadcast_to(noise, Z.shape[1:]), config.sem,
                                 config.hidden_units, config.hidden_layers, per_variable,
                                 support):
            start = data_start(prior, means)
            if config.knowledge is not None:
                start = at_prior_where_forbidden(start, prior, engine.model.edge_weight,
                                                 config.knowledge.forbidden_mask())
            data_starts.append(start)
    with_prior = not takes_two_orders(config.sem, from_data, per_variable)
    return alternate_starts(prior, data_starts, n_restarts, with_prior)


def at_prior_where_forbidden(params: Params, prior: Params, name: str,
                             forbidden: np.ndarray) -> Params:
    """``params`` with the weights of the forbidden edges (``forbidden (p, p)`` over the
    leading axes of the weight ``name``) set to the prior's. The projection zeroes those
    edges, so their likelihood gradient is zero and the KL's is zero at the prior: they stay
    there, fixed, contributing nothing to the ELBO."""
    mask = jnp.asarray(forbidden).reshape(forbidden.shape + (1,) * (params.q.loc[name].ndim - 2))
    loc = {**params.q.loc, name: jnp.where(mask, prior.q.loc[name], params.q.loc[name])}
    rho = {**params.q.rho, name: jnp.where(mask, prior.q.rho[name], params.q.rho[name])}
    return params._replace(q=VariationalParams(loc, rho))


class Rows(NamedTuple):
    """A set of rows that fits see: ``Z (n, p)``, where each variable's equation holds
    (``observed (n, p)`` or None), the starts computed on them and ``model.prepare_data``."""

    Z: np.ndarray
    observed: np.ndarray | None
    starts: list
    data: Any


def rows(engine: VariationalInference, Z: np.ndarray, observed: np.ndarray | None,
         noise: np.ndarray, dtype, config: ModelConfig, from_data: bool,
         n_restarts: int) -> Rows:
    """``Rows`` of ``Z (n, p)``: its ``n_restarts`` starts (``starts``) and prepared data."""
    return Rows(Z, observed, starts(engine, Z, noise, dtype, config, from_data, n_restarts),
                engine.model.prepare_data(jnp.asarray(Z, dtype), observed))


def member_fitter(engine: VariationalInference, rows_of_chain: Sequence[Rows],
                  noise: np.ndarray,
                  progress: Progress | None = None) -> radius_selection.FitMembers:
    """``fit_members(specs, stage, screen)``: every ``radius_selection.MemberSpec`` fitted in
    one batch, spec ``s`` on chain ``s.chain``'s rows ``rows_of_chain[s.chain]`` from its start
    ``s.start`` (chains that share one ``Rows`` share its data in the batch); one
    ``FitResult`` per spec, in order. ``screen``, a ``PathScreen(after, margin, spared)``: a
    member trailing its chain's best by more than ``margin`` from epoch ``after`` on stops,
    unless it is within ``spared`` places of the best's radius (``Screen``);
    ``unplanned``: the fits are beyond the progress bar's total, which gains them."""

    def fit_members(specs: list, stage: str, screen=None, unplanned=False) -> list[FitResult]:
        sets: list[Rows] = []
        for spec in specs:
            if not any(rows_of_chain[spec.chain] is known for known in sets):
                sets.append(rows_of_chain[spec.chain])
        index = [next(i for i, known in enumerate(sets) if known is rows_of_chain[spec.chain])
                 for spec in specs]
        starts = [rows_of_chain[spec.chain].starts[spec.start] for spec in specs]
        dtype = jax.tree.leaves(starts[0])[0].dtype
        members = engine.members([spec.lam for spec in specs], noise, index,
                                 [sets[i].Z.shape[0] for i in index], dtype)
        if progress is not None:
            if unplanned and progress.total is not None:
                progress.set_total(progress.total + len(specs))
            progress.stage(f"{stage}, {len(specs)} fits in a batch")
        if screen is not None:
            chain = np.array([spec.chain for spec in specs])
            lams = np.array([spec.lam for spec in specs])
            places = np.array([np.sum((chain == c) & (lams > lam)) for c, lam in zip(chain, lams)])
            after, margin, spared = screen
            screen = Screen(chain, after, margin, places, spared)
        return engine.fit_members(starts, jnp.stack([spec.key for spec in specs]), members,
                                  stack([known.data for known in sets]), progress, screen)

    return fit_members


def fit_lambda_path(engine: VariationalInference, config: ModelConfig,
                    fit_members: radius_selection.FitMembers, validation_rows: Sequence[tuple],
                    noise, keys: list, criterion: str, n_lambdas: int, n_restarts: int,
                    refit: radius_selection.FitMembers | None = None, narrow=None,
                    screen: PathScreen = PATH_SCREEN) -> list[radius_selection.Selection]:
    """``prodag.inference.radius_selection.select_lambda`` for every chain (chain ``c`` from
    ``keys[c]``) with ``fit_members`` (``member_fitter``) and the criterion's score: the ELBO,
    or the expected log-likelihood of chain ``c``'s held-out rows ``validation_rows[c] =
    (Z_val, observed_val)`` (``observed_val``: None, or where each variable's equation
    holds). ``narrow`` and ``screen``: ``select_lambda``'s."""
    if criterion == "validation":
        val_data = [engine.model.prepare_data(
            jnp.asarray(Z_val, jax.dtypes.canonicalize_dtype(np.float64)), observed_val)
            for Z_val, observed_val in validation_rows]

    def score(chain: int, result: FitResult, lam: float, key: jax.Array) -> float:
        if criterion != "validation":
            return -result.objective
        return engine.expected_log_likelihood(result.params, key, val_data[chain], lam, noise)

    def lam_max_of(chain: int, result: FitResult, key: jax.Array) -> float:
        """The mean ``‖W‖₁`` of the λ = ∞ fit's draws (on the candidate slots where there
        are candidates), without the required weights (they lie outside the ℓ1 ball)."""
        required = None if config.knowledge is None else config.knowledge.required_mask()
        return draws.l1_norm_mean(compiled.l1_norms(config), result.params, key,
                                  radius_selection.N_DRAWS_FOR_LAM_MAX, math.inf, required)

    return radius_selection.select_lambda(fit_members, lam_max_of, score, n_lambdas, criterion,
                                          keys, n_restarts, refit, narrow, screen)
