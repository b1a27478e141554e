"""Directed-graph utilities on batched adjacency matrices ``(..., p, p)`` (``[j, k]``: j → k).

Numpy functions (``is_dag``, ``topological_order``) serve users and tests; the JAX functions
(``reachability``, ``remove_cycles``) run batched inside compiled code.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _as_adjacency(A) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"expected adjacency matrices of shape (..., p, p); got {A.shape}.")
    return A != 0


def is_dag(A) -> np.ndarray | bool:
    """Whether each ``(p, p)`` slice of ``A (..., p, p)`` is acyclic (self-loops are cycles).

    Returns a bool for a single matrix, else a bool array of the batch shape ``(...)``.
    Kahn's algorithm, vectorised over the batch: strip sources until none is left.
    """
    adjacency = _as_adjacency(A)
    batch_shape = adjacency.shape[:-2]
    p = adjacency.shape[-1]
    edges = adjacency.reshape((-1, p, p)).copy()
    remaining = np.ones(edges.shape[:2], dtype=bool)
    for _ in range(p):
        indegree = (edges & remaining[:, :, None]).sum(axis=1)
        sources = remaining & (indegree == 0)
        if not sources.any():
            break
        remaining &= ~sources
    acyclic = ~remaining.any(axis=1)
    return bool(acyclic[0]) if batch_shape == () else acyclic.reshape(batch_shape)


def topological_order(A) -> np.ndarray:
    """A topological order ``(..., p)`` (node at each place; ties broken by node index).

    Raises:
        ValueError: if some slice contains a directed cycle.
    """
    adjacency = _as_adjacency(A)
    batch_shape = adjacency.shape[:-2]
    p = adjacency.shape[-1]
    edges = adjacency.reshape((-1, p, p))
    orders = np.empty(edges.shape[:2], dtype=np.int64)
    rows = np.arange(edges.shape[0])
    remaining = np.ones(edges.shape[:2], dtype=bool)
    for place in range(p):
        indegree = (edges & remaining[:, :, None]).sum(axis=1)
        candidates = remaining & (indegree == 0)
        if not candidates.any(axis=1).all():
            raise ValueError("the graph contains a directed cycle; it has no topological order.")
        node = np.argmax(candidates, axis=1)
        orders[:, place] = node
        remaining[rows, node] = False
    return orders.reshape(batch_shape + (p,))


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


def remove_cycles(support: jax.Array, weights: jax.Array,
                  max_rounds: int | None = None) -> tuple[jax.Array, jax.Array]:
    """Make one ``(p, p)`` support acyclic by removing edges on cycles, the lightest first.

    Edges on cycles are exactly the edges inside a strongly connected component, and removing
    an edge never changes which edges of *other* components lie on cycles, so each round removes
    the lightest cyclic edge of every component at once; rounds repeat until no cycle is left.
    Edges on no cycle are never removed.

    Args:
        support: ``(p, p)`` bool adjacency.
        weights: ``(p, p)`` edge weights (larger magnitude = heavier).
        max_rounds: safety cap (default ``p²``, enough to empty any support).

    Returns:
        ``(acyclic_support (p, p) bool, n_removed int32)``.
    """
    p = support.shape[-1]
    max_rounds = p * p if max_rounds is None else max_rounds
    magnitude = jnp.abs(weights)
    support = support & ~jnp.eye(p, dtype=bool)

    def component_labels(reach):
        same_component = reach & reach.T
        return jnp.argmax(same_component | jnp.eye(p, dtype=bool), axis=1)

    def round_(state):
        support, _, n_removed, n_rounds = state
        reach = reachability(support)
        cyclic = support & reach.T
        labels = component_labels(reach)
        candidate = jnp.where(cyclic, magnitude, jnp.inf)
        segment_ids = jnp.broadcast_to(labels[:, None], (p, p)).reshape(-1)
        lightest = jax.ops.segment_min(candidate.reshape(-1), segment_ids, num_segments=p)
        remove = cyclic & (candidate <= lightest[labels][:, None])
        return support & ~remove, remove.any(), n_removed + remove.sum(), n_rounds + 1

    def keep_going(state):
        _, removed_any, _, n_rounds = state
        return removed_any & (n_rounds < max_rounds)

    state = (support, jnp.bool_(True), jnp.int32(0), jnp.int32(0))
    support, _, n_removed, _ = jax.lax.while_loop(keep_going, round_, state)
    return support, n_removed.astype(jnp.int32)
