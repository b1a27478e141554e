"""The fitted posterior: drawing projected samples and summarising them (edge probabilities are
``prodag.evaluation.metrics.edge_probabilities``, which the estimator passes in; saving is
``prodag.io.persistence``).

Samples are drawn in batches of a fixed size by one compiled function, so any number of
samples reuses one compilation; batch ``b`` uses the key ``fold_in(key, b)``, so the first
``m`` samples of a request for ``n ≥ m`` are the same as those of a request for ``m``. A batch
draws with the first half of ``split`` of its key, as every earlier version did, so a model
file saved by any version draws what it drew when it was saved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.inference.kernels import Params
from prodag.models.base import StructuralEquationModel
from prodag.projection import Projector

SAMPLE_BATCH_SIZE = 100


def draw_batch(model: StructuralEquationModel, project: Projector, params: Params,
               key: jax.Array, lam: jax.Array) -> tuple:
    """``SAMPLE_BATCH_SIZE`` draws ``(weights, W)`` from ``pro_λ(q(ω̃))`` of the fitted
    parameters ``params`` (``prodag.inference.Params``), drawn with the first half of
    ``split(key)`` (module docstring); pure (``prodag.inference.compiled.sampler`` compiles
    it with the model and projection bound)."""
    return model.draw(params.q, jax.random.split(key)[0], SAMPLE_BATCH_SIZE, project, lam)


def slot_draw_batch(model: StructuralEquationModel, project: Projector, params: Params,
                    key: jax.Array, lam: jax.Array) -> jax.Array:
    """``SAMPLE_BATCH_SIZE`` projected draws on the candidate parents' slots alone, ``(L, p,
    K)`` (``LinearSEM.draw_slots``; zero in the padding), drawn with the key ``draw_batch``
    draws with: the distribution of ``draw_batch``'s graphs, other random numbers. Pure
    (``prodag.inference.compiled.slot_sampler`` compiles it)."""
    return model.draw_slots(params.q, jax.random.split(key)[0], SAMPLE_BATCH_SIZE, project, lam)


def l1_norm_batch(model: StructuralEquationModel, project: Projector, params: Params,
                  key: jax.Array, lam: jax.Array, excluded: jax.Array | None) -> jax.Array:
    """``‖W‖₁`` ``(SAMPLE_BATCH_SIZE,)`` of a batch of draws at radius ``lam``, the entries
    ``excluded (p, p)`` (bool, or None: e.g. required edges) left out, drawn with the key
    ``draw_batch`` draws with. On candidate parents the draws are made on the slots alone
    (``LinearSEM.draw_slots``), so no ``(p, p)`` draw is made. Pure
    (``prodag.inference.compiled.l1_norms`` compiles it)."""
    key = jax.random.split(key)[0]
    draw_slots = getattr(model, "draw_slots", None)
    drawn = (None if draw_slots is None
             else draw_slots(params.q, key, SAMPLE_BATCH_SIZE, project, lam))
    if drawn is None:  # (L, p, p) graphs
        _, drawn = model.draw(params.q, key, SAMPLE_BATCH_SIZE, project, lam)
    elif excluded is not None:  # (L, p, K) slots
        excluded = project.table.gather(excluded, True)
    kept = jnp.abs(drawn) if excluded is None else jnp.where(excluded, 0.0, jnp.abs(drawn))
    return jnp.sum(kept, axis=(1, 2))


def l1_norm_mean(norm_batch: Callable, params: Params, key: jax.Array, n: int, lam: float,
                 excluded: np.ndarray | None) -> float:
    """The mean ``‖W‖₁`` of ``n`` draws at radius ``lam`` without the entries ``excluded``,
    ``norm_batch(params, key, lam, excluded)`` the compiled ``l1_norm_batch``; batch ``b``
    drawn with ``fold_in(key, b)``, as ``batches`` draws."""
    dtype = jax.tree.leaves(params)[0].dtype
    lam = jnp.asarray(lam, dtype)
    excluded = None if excluded is None else jnp.asarray(excluded, bool)
    norms = [np.asarray(norm_batch(params, jax.random.fold_in(key, b), lam, excluded))
             for b in range(-(-n // SAMPLE_BATCH_SIZE))]
    return float(np.mean(np.concatenate(norms)[:n]))


def sample(draw: Callable, params: Params, key: jax.Array, n: int,
           lam: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``n`` draws of the fit ``params`` at radius ``lam``: the weights (numpy pytree, leading
    axis n) and graphs ``(n, p, p)``; ``draw(params, key, lam)`` is the compiled
    ``draw_batch`` (``prodag.inference.compiled.sampler``), batch ``b`` drawn with
    ``fold_in(key, b)``."""
    return concatenate_draws(list(batches(draw, params, key, n, lam)), n)


def batches(draw: Callable, params: Params, key: jax.Array, n: int, lam: float):
    """The ``n`` draws of ``sample`` one batch at a time (a generator of ``(weights, graphs)``,
    numpy, at most ``SAMPLE_BATCH_SIZE`` draws each), so that a statistic of many draws need
    not hold them all."""
    dtype = jax.tree.leaves(params)[0].dtype
    lam = jnp.asarray(lam, dtype)
    for b in range(-(-n // SAMPLE_BATCH_SIZE)):
        take = min(SAMPLE_BATCH_SIZE, n - b * SAMPLE_BATCH_SIZE)
        weights, graphs = draw(params, jax.random.fold_in(key, b), lam)
        yield ({name: np.asarray(value)[:take] for name, value in weights.items()},
               np.asarray(graphs)[:take])


def edge_counts(draw: Callable, params: Params, key: jax.Array, n: int, lam: float,
                keep: Callable) -> np.ndarray:
    """The edges ``(p, p)`` counted over the ``n`` draws ``sample`` makes with the same
    arguments, one batch at a time: ``keep(weights, graphs)`` gives a batch's graphs as they
    count (e.g. without negligible entries)."""
    return sum(np.sum(keep(weights, graphs) != 0, axis=0)
               for weights, graphs in batches(draw, params, key, n, lam))


def slot_edge_counts(draw_slots: Callable, params: Params, key: jax.Array, n: int,
                     lam: float, keep: Callable) -> np.ndarray:
    """``edge_counts`` of ``n`` draws made on the slots, ``(p, K)``: ``draw_slots(params, key,
    lam)`` is the compiled ``slot_draw_batch``, batch ``b`` drawn with ``fold_in(key, b)``;
    ``keep(slots)`` gives a batch's slots ``(b, p, K)`` as they count."""
    dtype = jax.tree.leaves(params)[0].dtype
    lam = jnp.asarray(lam, dtype)
    counts = 0
    for b in range(-(-n // SAMPLE_BATCH_SIZE)):
        take = min(SAMPLE_BATCH_SIZE, n - b * SAMPLE_BATCH_SIZE)
        slots = np.asarray(draw_slots(params, jax.random.fold_in(key, b), lam))[:take]
        counts = counts + np.sum(keep(slots) != 0, axis=0)
    return counts


def concatenate_draws(batches: list, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The first ``n`` draws of batches ``[(weights pytree, graphs), ...]`` (leading axes
    concatenated), as numpy arrays."""
    weights = {name: np.concatenate([np.asarray(w[name]) for w, _ in batches])[:n]
               for name in batches[0][0]}
    return weights, np.concatenate([np.asarray(g) for _, g in batches])[:n]


class EdgeSummary(NamedTuple):
    """What sampled graphs say of each entry j → k, ``(p, p)`` each: ``probability``, the share
    of the draws with the edge (as ``prodag.evaluation.metrics.edge_probabilities`` counts it),
    and ``mean_weight``, the entry's mean over the draws where it is nonzero (0 where never)."""

    probability: np.ndarray
    mean_weight: np.ndarray


def edge_summary(blocks) -> EdgeSummary:
    """The ``EdgeSummary`` of graphs given as an iterable of blocks ``(b, p, p)`` (their
    concatenation the draws), counted a block at a time."""
    count = total = draws = 0
    for graphs in blocks:
        count = count + np.sum(graphs != 0, axis=0)
        total = total + np.sum(graphs, axis=0)
        draws += len(graphs)
    return EdgeSummary(count / draws, total / np.maximum(count, 1))


def edge_graph(summary: EdgeSummary, columns: list, threshold: float):
    """A ``networkx.DiGraph`` on ``columns`` of the edges whose probability (``summary``, an
    ``EdgeSummary``) exceeds ``threshold``, each with its ``probability`` and ``weight`` (the
    mean weight given the edge)."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(columns)
    for j, k in zip(*np.nonzero(summary.probability > threshold)):
        graph.add_edge(columns[j], columns[k], probability=float(summary.probability[j, k]),
                       weight=float(summary.mean_weight[j, k]))
    return graph


PROJECT_BATCH = 100
"""Draws per run of the compiled projection of stored draws (``project_in_batches``)."""


def project_in_batches(kernel, weights_tilde: dict[str, np.ndarray],
                       lams: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Projected weights ``ω`` (numpy pytree) and graphs ``W (n, p, p)`` of draws ``ω̃`` at
    ``lams (n,)`` with the compiled ``kernel`` (``refinement.Kernel``: its ``project``), in batches of ``PROJECT_BATCH`` (one
    compilation for every n)."""
    n = len(lams)
    padded = -(-n // PROJECT_BATCH) * PROJECT_BATCH
    index = np.minimum(np.arange(padded), n - 1)
    batches = [kernel.project({name: jnp.asarray(value[index[b:b + PROJECT_BATCH]])
                               for name, value in weights_tilde.items()},
                              jnp.asarray(lams[index[b:b + PROJECT_BATCH]]))
               for b in range(0, padded, PROJECT_BATCH)]
    return concatenate_draws(batches, n)
