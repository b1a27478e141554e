"""The host loop of the batched variational fit: it runs the compiled kernels
(``prodag.inference.kernels.build_kernels``, compiled and cached by
``prodag.inference.compiled``) and compiles nothing itself.

``VariationalInference`` holds the compiled kernels of one model, projection, prior and set
of options, and ``fit_members`` runs a batch of members: one compiled loop advances all of them
(``jax.vmap`` over the member axis, each member's Monte Carlo batch inside), stopped members
leave the batch as it shrinks (``compacted_size``), and on several devices the member axis is
split over them (``member_layout``). The host wakes up between runs of epochs to update the
progress bar (``prodag.progress.Progress``): the first run is one epoch; after that each run
is sized from the last one's seconds per epoch to take about ``SECONDS_PER_CALL``, at most
``epochs_per_call`` epochs, and no run goes past the next multiple of ``COMPACT_EVERY``
epochs or a screen's epoch, the only epochs where the batch shrinks. The epoch limit is an
argument of the compiled loop, so the sizes change nothing but when the host looks: a
member's batches, and with them its numbers to the last bit (XLA may round a batch of
another shape otherwise), do not depend on how long a run took.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.models import variational
from prodag.config.spec import OptimiserOptions
from prodag.inference.kernels import (Members, Params, VariationalKernels, compacted_size,
                                      pad_members, running, stack, take_members)
from prodag.models.base import StructuralEquationModel
from prodag.progress import Progress
from prodag.streams import SCORE_STREAM

SECONDS_PER_CALL = 1.0
"""Target seconds between two progress updates of a fit (see the module docstring)."""
COMPACT_EVERY = 2
"""Epochs between the points where stopped members may leave the batch (fixed epochs, so
that the fit does not depend on the seconds a run took); a screen's epoch (``Screen.after``)
is one too."""
SCORE_MEMBERS = 8
"""Scored members are padded to a multiple of this (``VariationalInference.negative_elbos``)."""
SCORE_CHUNK = 10
"""Batches of draws per run of the compiled scoring program (``negative_elbos``)."""
MEMBER_MEMORY_BYTES = 2 ** 31
"""Memory one batched call may give its members (about ``MEMORY_FACTOR`` arrays of ``L``
draws and ``PARAMETER_COPIES`` of the variational means per member): more members run in
several calls."""
MEMORY_FACTOR = 16
PARAMETER_COPIES = 12
"""Arrays of the size of a member's variational means it holds in a call: the means and
scales, their gradients, Adam's two moments of each, the best epoch's."""


class FitResult(NamedTuple):
    """Outcome of one member's optimisation: final parameters, the per-epoch objective history
    and a low-noise estimate of the final objective (``negative_elbos``)."""

    params: Params
    history: np.ndarray
    """Objective of every epoch run, shape ``(n_epochs,)``."""
    objective: float
    """Negative ELBO per row at ``params``: the score for comparing restarts and radii."""


class Screen(NamedTuple):
    """Members stopped early for trailing their group: from epoch ``after`` on, a running
    member whose best epoch objective (negative ELBO per row) is more than ``margin`` above
    the best of its group (``groups (M,)``: members fitting the same data) stops as if it had
    converged, unless its place ``positions (M,)`` in the group (a λ path's radii in order) is
    within ``spared`` of the place of the group's leader (the member holding that best). For a
    λ path's radii, whose ELBOs are compared: one that trails its chain's best by that much
    does not end up among the best, except next to the best, where a smaller radius can trail
    early and end level (``docs/findings.md``)."""

    groups: np.ndarray
    after: int
    margin: float
    positions: np.ndarray | None = None
    spared: int = 0

    def trailing(self, best: np.ndarray, member_at: np.ndarray, still: np.ndarray,
                 group_best: np.ndarray, leader: np.ndarray) -> np.ndarray:
        """``(S,)`` which running slots of the batch (holding the members ``member_at (S,)``,
        their ``best (S,)``) trail their group; ``group_best (G,)`` and its holder
        ``leader (G,)`` (a member) are updated with ``best``."""
        group = self.groups[member_at]
        for g in np.unique(group):
            slot = int(np.argmin(np.where(group == g, best, np.inf)))
            if best[slot] < group_best[g]:
                group_best[g], leader[g] = best[slot], member_at[slot]
        stopped = still & (best > group_best[group] + self.margin)
        if self.positions is None or self.spared == 0:
            return stopped
        places = np.asarray(self.positions)
        return stopped & (np.abs(places[member_at] - places[leader[group]]) > self.spared)

    def part(self, members: slice) -> Screen:
        """The screen of the members ``members`` of the batch."""
        return self._replace(groups=np.asarray(self.groups)[members],
                             positions=None if self.positions is None
                             else np.asarray(self.positions)[members])


class VariationalInference:
    """The host side of the batched fit of one model: ``kernels`` are its compiled
    ``VariationalKernels`` (``prodag.inference.compiled.variational_inference`` builds one,
    ``prodag.inference.compiled.variational`` caches one per configuration), ``options`` the
    optimiser's options they were built with, ``N(prior_mean, prior_std²)`` their prior.

    The compiled functions take the data, the radii and the fixed noise variances as
    arguments, so a λ path or a refit on new data of the same shape reuses one compilation
    (one per number of members and data sets).
    """

    def __init__(self, model: StructuralEquationModel, kernels: VariationalKernels,
                 options: OptimiserOptions = OptimiserOptions(), prior_mean: float = 0.0,
                 prior_std: float = 1.0, learn_noise_variance: bool = False):
        self.model = model
        self.kernels = kernels
        self.options = options
        self.prior_mean = prior_mean
        self.prior_std = prior_std
        self.learn_noise_variance = learn_noise_variance

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
        return self.kernels.loss(params, key, data, n_rows, lam, noise_variance)

    def members(self, lams, noise_variance: np.ndarray, data_index, n_rows,
                dtype) -> Members:
        """``Members`` of radii ``lams (M,)``, one noise variance ``(k,)`` for all, data sets
        ``data_index (M,)`` with ``n_rows (M,)`` rows."""
        lams = np.asarray(lams, float)
        noise = np.broadcast_to(np.asarray(noise_variance, float).reshape(1, -1),
                                (len(lams), np.size(noise_variance)))
        return Members(jnp.asarray(lams, dtype), jnp.asarray(noise, dtype),
                       jnp.asarray(data_index, jnp.int32), jnp.asarray(n_rows, dtype))

    def expected_log_likelihood(self, params: Params, key: jax.Array, data: Any, lam: float,
                                noise_variance: np.ndarray) -> float:
        """``E_q[log p(data | ω)]`` estimated with ``n_samples`` draws (a float)."""
        dtype = _dtype(params)
        return float(self.kernels.expected_log_likelihood(
            params, key, data, jnp.asarray(lam, dtype), jnp.asarray(noise_variance, dtype)))

    def negative_elbos(self, params: list[Params], keys: jax.Array, members: Members,
                       data: Any, n_batches: int = SCORE_CHUNK) -> np.ndarray:
        """``(M,)``: each member's objective at ``params`` averaged over ``n_batches`` batches
        of ``n_samples`` draws from its key ``keys (M, 2)``: low-noise scores for comparing
        fits on the same data. The same key gives common random numbers across members.

        The batches run ``SCORE_CHUNK`` at a time (the last chunk padded with copies of the
        first key, whose values are dropped; ``score_key_chunks``, compiled), so every
        ``n_batches`` shares one program; the members are padded to a multiple of
        ``SCORE_MEMBERS`` with copies of the last (dropped too), so the varying number of a
        fit's components recompiles rarely."""
        padding = (-len(params)) % SCORE_MEMBERS
        if padding:
            return self.negative_elbos(list(params) + [params[-1]] * padding,
                                       pad_members(keys, padding),
                                       pad_members(members, padding), data,
                                       n_batches)[:len(params)]
        size = self.members_per_call(params[0])
        return np.concatenate([
            self._member_scores(params[begin:begin + size], keys[begin:begin + size],
                                jax.tree.map(lambda x: x[begin:begin + size], members), data,
                                n_batches) for begin in range(0, len(params), size)])

    def _member_scores(self, params, keys, members, data, n_batches) -> np.ndarray:
        stacked = stack(params)
        values = np.concatenate(
            [np.asarray(self.kernels.scores(stacked, chunk, members, data))
             for chunk in self.kernels.score_keys(keys, n_batches, SCORE_CHUNK)], axis=1)
        return values[:, :n_batches].mean(axis=1)

    def negative_elbo(self, params: Params, key: jax.Array, data: Any, n_rows: int, lam: float,
                      noise_variance: np.ndarray, n_batches: int = SCORE_CHUNK) -> float:
        """``negative_elbos`` of one fit on one data set (a float)."""
        members = self.members([lam], noise_variance, [0], [n_rows], _dtype(params))
        return float(self.negative_elbos([params], key[None], members, stack([data]),
                                         n_batches)[0])

    # ---- the batched device loop --------------------------------------------------------

    def fit_members(self, starts: list[Params], keys: jax.Array, members: Members, data: Any,
                    progress: Progress | None = None,
                    screen: Screen | None = None) -> list[FitResult]:
        """Optimise every member from its start, ``starts[m]``, with its key ``keys (M, 2)``,
        on data set ``members.data_index[m]`` of ``data`` (``model.prepare_data`` of each
        set, stacked along a leading axis); returns one ``FitResult`` per member, in order.

        Members run in one compiled loop, in as few calls as ``MEMBER_MEMORY_BYTES`` allows;
        each is scored (``negative_elbos``) with ``fold_in(its key, SCORE_STREAM)``. With a
        ``screen``, members trailing their group stop early (``Screen``)."""
        size = self.members_per_call(starts[0])
        results = []
        for begin in range(0, len(starts), size):
            part = slice(begin, begin + size)
            results += self._fit_batch(
                starts[part], keys[part], jax.tree.map(lambda x: x[part], members), data,
                progress, None if screen is None else screen.part(part))
        return results

    def members_per_call(self, start: Params) -> int:
        """Members one call may hold: ``MEMBER_MEMORY_BYTES`` over ``MEMORY_FACTOR`` arrays of
        ``n_samples`` draws (``draw_size``) and ``PARAMETER_COPIES`` of the means."""
        leaves = jax.tree.leaves(start.q.loc)
        means = sum(x.size for x in leaves)
        per_member = leaves[0].dtype.itemsize * (
            MEMORY_FACTOR * self.options.n_samples * draw_size(self.model, means)
            + PARAMETER_COPIES * means)
        return max(1, MEMBER_MEMORY_BYTES // per_member)

    def _fit_batch(self, starts, keys, members, data, progress, screen) -> list[FitResult]:
        opts = self.options
        n_members = len(starts)
        state = self.kernels.init(stack(starts), keys, opts.max_epochs)
        sharded = self.options.member_batch == 0 and jax.local_device_count() > 1
        if sharded:
            padded, place = member_layout(n_members)
            state, keys, members = (place(pad_members(tree, padded - n_members))
                                    for tree in (state, keys, members))
            data = place(data)
        member_at, batch = np.arange(len(keys)), members  # the member in each slot
        if screen is not None:  # padded slots (several devices) form a group of their own
            padding = len(member_at) - n_members
            groups = np.concatenate([screen.groups, np.full(padding, np.max(screen.groups) + 1)])
            positions = (None if screen.positions is None
                         else np.concatenate([screen.positions, np.zeros(padding, int)]))
            screen = screen._replace(groups=groups, positions=positions)
            group_best, leader = np.full(groups.max() + 1, np.inf), np.zeros(groups.max() + 1, int)
        finished: dict[int, tuple] = {}
        epoch, chunk = 0, 1
        while True:
            limit = min(epoch + chunk, opts.max_epochs,
                        (epoch // COMPACT_EVERY + 1) * COMPACT_EVERY)
            if screen is not None and epoch < screen.after:  # the first screening on time
                limit = min(limit, screen.after)
            began, before = time.perf_counter(), epoch
            state = self.kernels.run(state, batch, data, jnp.asarray(limit))
            still = np.asarray(running(state, opts.patience, jnp.asarray(opts.max_epochs)))
            epochs = np.asarray(state.epoch)
            if screen is not None and epochs.max() >= screen.after:
                trailing = screen.trailing(np.asarray(state.best), member_at, still, group_best,
                                           leader)
                if trailing.any():  # stopped as if converged: the loop leaves them be
                    state = state._replace(wait=jnp.where(jnp.asarray(trailing),
                                                          opts.patience, state.wait))
                    still = still & ~trailing
            chunk = epochs_per_call(time.perf_counter() - began, int(epochs.max()) - epoch,
                                    opts.epochs_per_call)
            epoch = int(epochs.max())
            newly = [r for r in np.flatnonzero(~still) if member_at[r] not in finished]
            if newly:  # a stopped member's state is final: kept on the host (sliced there,
                # so no slice of a new shape compiles)
                params, history = jax.tree.map(np.asarray, (state.params, state.history))
                for r in newly:
                    finished[int(member_at[r])] = (
                        jax.tree.map(lambda x, r=r: x[r], params), history[r, :epochs[r]])
            if progress is not None:
                progress.computed(len(member_at) * (int(epochs.max()) - before))
                progress.fit_done([epochs[r] for r in newly if member_at[r] < n_members])
                best = np.asarray(state.best)[still]
                progress.update(epoch, float(np.min(best, initial=np.inf)))
            if not still.any():
                break
            size = compacted_size(int(still.sum()), len(member_at))
            at_screen = screen is not None and epoch == screen.after
            if (self.options.member_batch != 1 and not sharded and size < len(member_at)
                    and (epoch % COMPACT_EVERY == 0 or at_screen)):
                # the running members (and stopped ones up to a power of two) move to a
                # smaller batch: stopped members cost nothing more; the sizes recur, so
                # their compilations are reused
                keep = np.concatenate([np.flatnonzero(still),
                                       np.flatnonzero(~still)[:size - int(still.sum())]])
                state, batch = take_members((state, batch), keep)
                member_at = member_at[keep]
        params = [finished[m][0] for m in range(n_members)]
        score_keys = jax.vmap(lambda key: jax.random.fold_in(key, SCORE_STREAM))(keys)
        members = take_members(members, np.arange(n_members))
        objectives = self.negative_elbos(params, score_keys[:n_members], members, data)
        return [FitResult(params[m], finished[m][1], float(objectives[m]))
                for m in range(n_members)]

    def fit(self, params: Params, data: Any, n_rows: int, lam: float, noise_variance: np.ndarray,
            key: jax.Array, progress: Progress | None = None) -> FitResult:
        """Optimise one member, ``params`` (e.g. from ``init_params`` or a warm start), on
        ``data`` (``model.prepare_data(X)``) with ``n_rows`` rows; ``noise_variance`` is
        ``(p,)`` or ``(1,)`` (the start value when it is learned)."""
        members = self.members([lam], noise_variance, [0], [n_rows], _dtype(params))
        return self.fit_members([params], key[None], members, stack([data]), progress)[0]


def draw_size(model: StructuralEquationModel, means: int) -> int:
    """Numbers one Monte Carlo draw of a training step holds: on candidate parents (a linear
    SEM's ``parents``, drawn on their slots) ``p · K``; else every one of the ``means``
    variational means."""
    parents = getattr(model, "parents", None)
    if parents is None:
        return means
    return len(parents) * max(1, max(len(column) for column in parents))


def member_layout(n_members: int):
    """``(padded count, place)``: the member axis laid out over every local device
    (``jax.sharding``: split into equal blocks, one per device; the computation follows its
    inputs), the count padded to a multiple of the device count, and ``place(tree)`` puts a
    pytree there (leaves with a leading member axis split, the others replicated)."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = jax.local_devices()
    padded = n_members + (-n_members) % len(devices)
    mesh = Mesh(np.array(devices), ("members",))
    split, replicated = NamedSharding(mesh, PartitionSpec("members")), NamedSharding(
        mesh, PartitionSpec())

    def place(tree):
        return jax.tree.map(lambda x: jax.device_put(
            x, split if jnp.ndim(x) and x.shape[0] == padded else replicated), tree)

    return padded, place


def epochs_per_call(seconds: float, epochs: int, most: int) -> int:
    """Epochs for the next run of the device loop, given that the last run took ``seconds``
    for ``epochs`` epochs: about ``SECONDS_PER_CALL`` worth, between 1 and ``most``."""
    if epochs <= 0 or seconds <= 0:
        return most
    return max(1, min(most, int(SECONDS_PER_CALL * epochs / seconds)))


def _dtype(params: Params):
    return jax.tree.leaves(params)[0].dtype
