"""The optimal topological order by dynamic programming over node subsets, O(2^p p²).

``best(S)`` is the least backward mass over orders of the node set ``S`` placed first. Placing
node ``v`` last within ``S`` makes every edge ``v → u`` with ``u ∈ S`` point backwards, so
``best(S) = min_{v ∈ S} best(S \\ v) + Σ_{u ∈ S} A[v, u]`` with ``A = W̃²`` (zero diagonal).
Subsets are processed one popcount layer at a time (p static layers, each fully vectorised);
the optimal order is then read back from the recorded arg-min of each subset.
"""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np

EXACT_MAX_NODES = 16
"""Largest p the subset DP accepts: its memory is ``2^p · p`` numbers per sample."""


@lru_cache(maxsize=None)
def _subset_tables(p: int):
    """Static index tables: per popcount layer, its subsets and each subset minus each node.

    Index arrays are int32 on purpose: the same cached tables serve float32 and float64 traces.
    """
    subsets = np.arange(2 ** p, dtype=np.int32)
    membership = ((subsets[:, None] >> np.arange(p)) & 1).astype(bool)  # (2^p, p)
    popcount = membership.sum(1)
    layers = []
    for size in range(1, p + 1):
        layer = subsets[popcount == size]
        without = layer[:, None] ^ (1 << np.arange(p, dtype=np.int32))[None, :]
        layers.append((layer, without, membership[layer]))
    return membership, layers


def exact_positions(squared: jax.Array) -> jax.Array:
    """Optimal order for one sample.

    Args:
        squared: ``(p, p)`` nonnegative weights ``W̃²`` (the diagonal is ignored).

    Returns:
        ``positions (p,)`` int32 of an order minimising the backward mass.
    """
    p = squared.shape[-1]
    if p > EXACT_MAX_NODES:
        raise ValueError(
            f'method="exact" supports at most p = {EXACT_MAX_NODES} nodes (got p = {p}); '
            'use method="search" for larger graphs.')
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    membership, layers = _subset_tables(p)
    # mass_into_subset[S, v] = Σ_{u ∈ S} A[v, u]: the backward mass when v follows S.
    mass_into_subset = jnp.asarray(membership, squared.dtype) @ squared.T
    best = jnp.full(2 ** p, jnp.inf, dtype=squared.dtype).at[0].set(0.0)
    last = jnp.zeros(2 ** p, dtype=jnp.int32)
    for layer, without, members in layers:
        candidates = jnp.where(members, best[without] + mass_into_subset[layer], jnp.inf)
        best = best.at[layer].set(candidates.min(axis=1))
        last = last.at[layer].set(jnp.argmin(candidates, axis=1).astype(jnp.int32))

    def place_last(step, state):
        subset, positions = state
        node = last[subset]
        positions = positions.at[node].set(p - 1 - step)
        return subset ^ (1 << node), positions

    _, positions = jax.lax.fori_loop(
        0, p, place_last, (jnp.int32(2 ** p - 1), jnp.zeros(p, dtype=jnp.int32)))
    return positions
