"""Cycle clean-up for the path projection, batched inside compiled code (JAX).

The path method's thresholded support is not always acyclic; ``remove_cycles`` breaks the
remaining cycles by removing edges on cycles, the lightest first.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def reachability(support: jax.Array) -> jax.Array:
    """Transitive closure ``(p, p)`` bool of one ``(p, p)`` bool adjacency: paths of length ≥ 1."""
    p = support.shape[-1]
    reach = support.astype(jnp.float32)
    for _ in range(max(1, int(np.ceil(np.log2(max(p, 2)))))):
        reach = jnp.minimum(reach + reach @ reach, 1.0)
    return reach > 0


def edges_on_cycles(support: jax.Array) -> jax.Array:
    """Bool ``(p, p)``: the edges ``j → k`` of ``support`` with a path back from k to j."""
    return support & reachability(support).T


def remove_cycles(support: jax.Array, weights: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Make one ``(p, p)`` support acyclic by removing edges on cycles, the lightest first.

    Edges on no cycle are kept. The edges on cycles are then taken from heaviest to lightest
    and each is kept unless it would close a cycle with the edges kept so far (checked against
    a transitive closure updated in O(p²) per edge). So only edges on cycles are removed, and a
    removed edge is lighter than every edge of the cycle it would have closed.

    Args:
        support: ``(p, p)`` bool adjacency (the diagonal is dropped).
        weights: ``(p, p)`` edge weights (larger magnitude = heavier).

    Returns:
        ``(acyclic_support (p, p) bool, n_removed int32)``, self-loops not counted.
    """
    p = support.shape[-1]
    identity = jnp.eye(p, dtype=bool)
    support = support & ~identity
    cyclic = edges_on_cycles(support)
    kept = support & ~cyclic
    heaviest_first = jnp.argsort(-jnp.where(cyclic, jnp.abs(weights), -jnp.inf).reshape(-1))
    n_cyclic = cyclic.sum()

    def consider(state):
        index, kept, closure, n_removed = state
        edge = heaviest_first[index]
        source, target = edge // p, edge % p
        closes_cycle = closure[target, source]
        upstream = closure[:, source] | identity[source]
        downstream = closure[target, :] | identity[target]
        closure = jnp.where(closes_cycle, closure, closure | (upstream[:, None] & downstream[None, :]))
        kept = kept.at[source, target].set(~closes_cycle)
        return index + 1, kept, closure, n_removed + closes_cycle.astype(jnp.int32)

    def remaining(state):
        return state[0] < n_cyclic

    state = (jnp.int32(0), kept, reachability(kept), jnp.int32(0))
    _, kept, _, n_removed = jax.lax.while_loop(remaining, consider, state)
    return kept, n_removed
