"""Edges that are not there: sampled linear weights too small to tell from zero.

The projection's ℓ1 step soft-thresholds the whole matrix, so a draw keeps every entry that
survives it, however small: on independent columns at a small fixed radius a draw can hold
several edges of weight ±0.01. Counting those as edges makes ``P(edge)`` the share of draws
with *any* weight, not with an effect.

The rule, in the model's own terms: in a draw's linear SEM ``x = Wᵀx + ε`` with noise
variances ``σ²``, the edge ``j → k`` moves ``x_k`` by ``|w_jk| · sd(x_j)`` when ``x_j``
moves by one of its standard deviations; measured against ``x_k``'s noise that is the
*effect size* ``|w_jk| · sd(x_j) / σ_k``, with ``sd(x_j)`` the draw's own implied standard
deviation (``diag((I − Wᵀ)⁻¹ diag(σ²) (I − W)⁻¹)``). It does not depend on the data's units.
An entry whose effect size is at most ``EFFECT_SIZE`` (0.2: it explains at most 4% of
``x_k``'s noise variance) is dropped from the draw, so it counts in no edge probability, graph,
effect or prediction. Required edges are never dropped. The rule applies to the linear SEM.
The threshold was chosen by ``benchmarks/studies/zero_edges.py`` (``docs/findings.md``,
2026-11-26): on independent columns and sparse simulated data, n = 100 and 1000, it lowers
Brier and E-SHD with λ chosen, and costs a little at a tight fixed radius.

On candidate parents the rule also runs on draws kept on their slots (``negligible_on_slots``:
``(S, p, K)`` for the table's ``(p, K)`` parents), in ``O(p · E)`` a draw and without a
``(S, p, p)`` array; it drops the same entries as the dense rule does on the same draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from prodag.numba_jit import njit, numba

if TYPE_CHECKING:
    from prodag.projection.parents import ParentTable

EFFECT_SIZE = 0.2
"""Entries with ``|w_jk| · sd(x_j) / σ_k`` at most this are not edges (module docstring)."""
CHUNK_ENTRIES = 2 ** 25
"""Entries whose effect sizes are computed at once (``negligible``): 1000 draws at p = 180,
134 at p = 500; the float64 work arrays stay near 256 MB each."""


TOPOLOGICAL_FROM_P = 50
"""From this many variables on, ``implied_sd`` runs the compiled column-by-column kernel;
below it inverts ``I − W``: as cheap there, with no kernel to compile or load (timings in
``docs/findings.md``, 2026-11-28)."""


def implied_sd(W: np.ndarray, noise_variance: np.ndarray) -> np.ndarray:
    """Standard deviation ``(S, p)`` of every variable in the linear SEM of each DAG of ``W
    (S, p, p)`` (``[s, j, k]``: j → k) with noise variances ``noise_variance (p,)`` (or
    ``(S, p)``), in the units of ``W``'s variables.

    ``x = (I − Wᵀ)⁻¹ ε``, so ``var(x_k) = Σ_j M_jk² σ_j²`` with ``M = (I − W)⁻¹`` (``M_jk``: the
    total effect of ``j`` on ``k``, plus ``I``). From ``TOPOLOGICAL_FROM_P`` variables on,
    each column of ``M`` is its own unit vector plus its parents' columns weighted by their
    edges, built in a topological order: ``O(p · E)`` for ``E`` edges instead of an
    inverse's ``O(p³)``."""
    W = np.ascontiguousarray(W, dtype=float)
    noise = np.ascontiguousarray(np.broadcast_to(np.asarray(noise_variance, dtype=float),
                                                 W.shape[:-1]))
    if W.shape[-1] < TOPOLOGICAL_FROM_P:
        inverse = np.linalg.inv(np.eye(W.shape[-1]) - W)  # [j, k]: total effect of j on k, + I
        return np.sqrt(np.einsum("sjk,sj->sk", inverse ** 2, noise))
    return np.sqrt(_implied_variance(W, noise))


@njit
def _implied_variance_one(W, noise, variance):
    """``var(x)`` ``(p,)`` of one DAG ``W (p, p)`` with noise variances ``noise (p,)`` (NaN
    for the variables a cycle leaves unplaced, should one be passed)."""
    p = W.shape[0]
    indegree = np.zeros(p, np.int64)
    for j in range(p):
        for k in range(p):
            if W[j, k] != 0.0:
                indegree[k] += 1
    order = np.empty(p, np.int64)
    placed, taken = 0, 0
    for k in range(p):
        if indegree[k] == 0:
            order[placed] = k
            placed += 1
    effect = np.zeros((p, p))  # column k: M[:, k]
    while taken < placed:
        k = order[taken]
        taken += 1
        effect[k, k] = 1.0
        for j in range(p):
            if W[j, k] != 0.0:  # j is placed: its column is final
                for i in range(p):
                    effect[i, k] += W[j, k] * effect[i, j]
        for child in range(p):
            if W[k, child] != 0.0:
                indegree[child] -= 1
                if indegree[child] == 0:
                    order[placed] = child
                    placed += 1
    for k in range(p):
        total = 0.0
        for i in range(p):
            total += effect[i, k] * effect[i, k] * noise[i]
        variance[k] = total
    if placed < p:  # a cycle: the unplaced variables have no finite variance here
        for k in range(p):
            if indegree[k] > 0:
                variance[k] = np.nan


def _implied_variance_batch(W, noise):
    """``var(x)`` ``(S, p)`` of the DAGs ``W (S, p, p)``, the draws shared among the cores."""
    variance = np.empty(W.shape[:-1])
    for s in numba.prange(W.shape[0]):
        _implied_variance_one(W[s], noise[s], variance[s])
    return variance


_implied_variance = numba.njit(cache=True, nogil=True, parallel=True)(_implied_variance_batch)


def effect_sizes(W: np.ndarray, noise_variance: np.ndarray) -> np.ndarray:
    """``|w_jk| · sd(x_j) / σ_k`` ``(S, p, p)`` of every entry of ``W (S, p, p)``."""
    W = np.asarray(W, dtype=float)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), W.shape[:-1])
    sd = implied_sd(W, noise)
    return np.abs(W) * sd[:, :, None] / np.sqrt(noise)[:, None, :]


def negligible(W: np.ndarray, noise_variance: np.ndarray, threshold: float = EFFECT_SIZE,
               keep: np.ndarray | None = None) -> np.ndarray:
    """``(S, p, p)`` bool: the nonzero entries of ``W (S, p, p)`` whose effect size is at most
    ``threshold``, except those of ``keep (p, p)`` (required edges); computed for
    ``CHUNK_ENTRIES`` entries at a time, so the float64 work arrays stay small beside ``W``."""
    W = np.asarray(W)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), W.shape[:-1])
    small = np.zeros(W.shape, bool)
    chunk = max(1, CHUNK_ENTRIES // max(1, W.shape[-1] ** 2))
    for start in range(0, len(W), chunk):
        part = slice(start, start + chunk)
        small[part] = (W[part] != 0) & (effect_sizes(W[part], noise[part]) <= threshold)
    return small if keep is None else small & ~np.asarray(keep, bool)[None]


def without_negligible(sem: str, weights: dict, graphs: np.ndarray, noise_variance,
                       knowledge=None) -> tuple[dict, np.ndarray]:
    """Draws ``(weights pytree, graphs (n, p, p))`` of a linear SEM (fitted units, noise
    variances ``noise_variance (p,)`` or ``(1,)`` in the same units) without their negligible
    entries (``negligible`` at ``EFFECT_SIZE``; the required edges of ``knowledge`` stay).
    Other SEMs' draws are returned as they are: their graphs hold group norms or strengths,
    not the weights of a linear SEM."""
    if sem != "linear" or EFFECT_SIZE <= 0:
        return weights, graphs
    graphs = np.asarray(graphs)
    small = negligible(graphs, noise_variance, EFFECT_SIZE,
                       None if knowledge is None else knowledge.required_mask())
    W = np.asarray(weights["W"])
    return ({**weights, "W": np.where(small, 0, W).astype(W.dtype)},
            np.where(small, 0, graphs).astype(graphs.dtype))


@njit
def _slot_variance_one(W, parents, valid, first_child, child_of, slot_of, noise, variance):
    """``var(x)`` ``(p,)`` of one DAG on slots ``W (p, K)`` (``W[k, s]``: the edge
    ``parents[k, s] → k`` where ``valid[k, s]``) with noise variances ``noise (p,)``; the
    children of ``j`` are ``child_of[c]`` through their slot ``slot_of[c]`` for ``c`` in
    ``first_child[j] : first_child[j + 1]``. As ``_implied_variance_one``, with ``M``'s
    columns kept as rows (``effect[k]``: ``M[:, k]``) and NaN for a cycle's variables."""
    p, width = W.shape
    indegree = np.zeros(p, np.int64)
    for k in range(p):
        for s in range(width):
            if valid[k, s] and W[k, s] != 0.0:
                indegree[k] += 1
    order = np.empty(p, np.int64)
    placed, taken = 0, 0
    for k in range(p):
        if indegree[k] == 0:
            order[placed] = k
            placed += 1
    effect = np.zeros((p, p))
    while taken < placed:
        k = order[taken]
        taken += 1
        effect[k, k] = 1.0
        for s in range(width):  # parents increasing, as the dense kernel adds them
            if valid[k, s] and W[k, s] != 0.0:
                j, w = parents[k, s], W[k, s]
                for i in range(p):
                    effect[k, i] += w * effect[j, i]
        for c in range(first_child[k], first_child[k + 1]):
            child = child_of[c]
            if W[child, slot_of[c]] != 0.0:
                indegree[child] -= 1
                if indegree[child] == 0:
                    order[placed] = child
                    placed += 1
    for k in range(p):
        total = 0.0
        for i in range(p):
            total += effect[k, i] * effect[k, i] * noise[i]
        variance[k] = total if indegree[k] == 0 else np.nan


def _slot_variance_batch(W, parents, valid, first_child, child_of, slot_of, noise):
    """``var(x)`` ``(S, p)`` of the DAGs on slots ``W (S, p, K)``, shared among the cores."""
    variance = np.empty(W.shape[:-1])
    for s in numba.prange(W.shape[0]):
        _slot_variance_one(W[s], parents, valid, first_child, child_of, slot_of, noise[s],
                           variance[s])
    return variance


_slot_variance = numba.njit(cache=True, nogil=True, parallel=True)(_slot_variance_batch)


def implied_sd_on_slots(W: np.ndarray, table: ParentTable,
                        noise_variance: np.ndarray) -> np.ndarray:
    """``implied_sd`` ``(S, p)`` of the DAGs given on ``table``'s slots, ``W (S, p, K)`` (the
    padding ignored), with noise variances ``noise_variance (p,)``, ``(1,)`` or ``(S, p)``:
    below ``TOPOLOGICAL_FROM_P`` variables through the dense inverse, from there by the
    compiled kernel on the slots."""
    W = np.ascontiguousarray(np.where(table.valid, W, 0.0), dtype=float)
    noise = np.ascontiguousarray(np.broadcast_to(np.asarray(noise_variance, dtype=float),
                                                 W.shape[:-1]))
    if W.shape[1] < TOPOLOGICAL_FROM_P:
        return implied_sd(table.dense(W), noise)
    flat = np.flatnonzero(table.valid)  # each parent's children, by the flat slot
    width = table.parents.shape[1]
    parent_of = table.parents.reshape(-1)[flat]
    by_parent = flat[np.argsort(parent_of, kind="stable")]
    first_child = np.concatenate([[0], np.cumsum(np.bincount(parent_of,
                                                             minlength=W.shape[1]))])
    return np.sqrt(_slot_variance(W, np.ascontiguousarray(table.parents),
                                  np.ascontiguousarray(table.valid), first_child,
                                  by_parent // width, by_parent % width, noise))


def negligible_on_slots(W: np.ndarray, table: ParentTable, noise_variance: np.ndarray,
                        threshold: float = EFFECT_SIZE,
                        keep: np.ndarray | None = None) -> np.ndarray:
    """``negligible`` of DAGs given on ``table``'s slots: ``(S, p, K)`` bool for ``W (S, p,
    K)``, false in the padding and in the slots of ``keep (p, p)`` (required edges)."""
    W = np.asarray(W)
    noise = np.broadcast_to(np.asarray(noise_variance, dtype=float), W.shape[:-1])
    sd = implied_sd_on_slots(W, table, noise)
    sizes = np.abs(W) * sd[:, table.parents] / np.sqrt(noise)[:, :, None]
    small = table.valid & (W != 0) & (sizes <= threshold)
    return small if keep is None else small & ~table.on_slots(keep)[None]


def without_negligible_on_slots(sem: str, W: np.ndarray, table: ParentTable, noise_variance,
                                knowledge=None) -> np.ndarray:
    """``without_negligible``'s graphs for draws kept on ``table``'s slots: ``W (S, p, K)``
    with the negligible entries zeroed (``negligible_on_slots``), as they are for SEMs other
    than the linear one."""
    if sem != "linear" or EFFECT_SIZE <= 0:
        return W
    small = negligible_on_slots(W, table, noise_variance, EFFECT_SIZE,
                                None if knowledge is None else knowledge.required_mask())
    return np.where(small, 0, W).astype(W.dtype)
