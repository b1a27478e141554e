"""Local search over topological orders: greedy starts, then best-insertion moves.

Per sample, with ``A = W̃²`` (zero diagonal):

1. *Greedy starts.* Build an order front to back, each time placing the unplaced node with the
   least squared mass coming from the other unplaced nodes (those edges are the ones it makes
   point backwards). A second start sorts nodes by net outflow ``Σ_k A[v,k] − Σ_j A[j,v]``.
2. *Best insertion.* Moving the node at place ``i`` to place ``j`` changes the backward mass by a
   sum of ``M[i,b] − M[b,i]`` over the places ``b`` it passes (``M`` = ``A`` in order), so all
   ``p²`` moves are scored with one cumulative sum; the best strictly improving move is applied
   until none is left (a local optimum) or ``max_moves`` is reached.

The best of the starts is returned. Every loop is a ``lax`` loop, so the whole search compiles
and vmaps; the batch runs until its slowest sample has converged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from prodag.projection.orders import backward_mass, positions_from_permutation


def greedy_permutation(squared: jax.Array) -> jax.Array:
    """Front-to-back greedy order ``(p,)`` (node at each place) for one ``(p, p)`` sample."""
    p = squared.shape[-1]
    incoming = squared.sum(axis=0)  # mass into v from every node (diagonal is zero)

    def place(step, state):
        incoming, placed, permutation = state
        node = jnp.argmin(jnp.where(placed, jnp.inf, incoming))
        incoming = incoming - squared[node]
        return incoming, placed.at[node].set(True), permutation.at[step].set(node)

    state = (incoming, jnp.zeros(p, dtype=bool), jnp.zeros(p, dtype=jnp.int32))
    return jax.lax.fori_loop(0, p, place, state)[2]


def net_outflow_permutation(squared: jax.Array) -> jax.Array:
    """Order ``(p,)`` by decreasing ``Σ out − Σ in`` of squared mass."""
    return jnp.argsort(squared.sum(axis=0) - squared.sum(axis=1)).astype(jnp.int32)


def insertion_deltas(difference_row: jax.Array, place: jax.Array) -> jax.Array:
    """Change in backward mass for moving the node at ``place`` to every place ``j``: ``(p,)``.

    Args:
        difference_row: ``(p,)`` with entry ``b`` equal to ``A[v, u] − A[u, v]``, where ``v`` is
            the moved node and ``u`` the node at place ``b`` (zero at ``b = place``).
        place: the current place of ``v``.
    """
    inclusive = jnp.cumsum(difference_row)
    exclusive = inclusive - difference_row
    later = jnp.arange(difference_row.shape[-1]) > place
    return jnp.where(later, inclusive, exclusive) - exclusive[place]


def move(permutation: jax.Array, source: jax.Array, target: jax.Array) -> jax.Array:
    """The permutation with the element at place ``source`` moved to place ``target``."""
    places = jnp.arange(permutation.shape[-1])
    forward = (source < target) & (places >= source) & (places < target)
    backward = (target < source) & (places > target) & (places <= source)
    origin = places + forward.astype(places.dtype) - backward.astype(places.dtype)
    origin = jnp.where(places == target, source, origin)
    return permutation[origin]


def improve_by_insertion(squared: jax.Array, permutation: jax.Array,
                         max_sweeps: int, rel_tol: float) -> jax.Array:
    """Sweep over the nodes, moving each to its best place, until a sweep changes nothing.

    Each move costs O(p) (one row of deltas), a sweep O(p²). The result is a local optimum for
    all p² insertion moves: in its last sweep no node had an improving move.
    """
    p = squared.shape[-1]
    threshold = -rel_tol * squared.sum()

    def visit(node, state):
        permutation, positions, improved = state
        place = positions[node]
        ordered = permutation
        difference_row = squared[node, ordered] - squared[ordered, node]
        deltas = insertion_deltas(difference_row, place)
        target = jnp.argmin(deltas).astype(permutation.dtype)
        better = deltas[target] < threshold
        target = jnp.where(better, target, place)
        permutation = move(permutation, place, target)
        return permutation, positions_from_permutation(permutation), improved | better

    def sweep(state):
        permutation, _, n_sweeps = state
        positions = positions_from_permutation(permutation)
        permutation, _, improved = jax.lax.fori_loop(
            0, p, visit, (permutation, positions, jnp.bool_(False)))
        return permutation, improved, n_sweeps + 1

    def keep_going(state):
        _, improved, n_sweeps = state
        return improved & (n_sweeps < max_sweeps)

    state = (permutation, jnp.bool_(True), jnp.int32(0))
    return jax.lax.while_loop(keep_going, sweep, state)[0]


def search_positions(squared: jax.Array, max_sweeps: int | None = None,
                     rel_tol: float = 1e-6) -> jax.Array:
    """A locally optimal order for one sample.

    Args:
        squared: ``(p, p)`` nonnegative weights ``W̃²``.
        max_sweeps: cap on sweeps over all nodes per start (default ``2 p``).
        rel_tol: a move must lower the backward mass by more than ``rel_tol · ΣA``.

    Returns:
        ``positions (p,)`` int32.
    """
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    max_sweeps = 2 * p if max_sweeps is None else max_sweeps
    starts = jnp.stack([greedy_permutation(squared), net_outflow_permutation(squared)])
    improved = jax.vmap(lambda s: improve_by_insertion(squared, s, max_sweeps, rel_tol))(starts)
    positions = jax.vmap(positions_from_permutation)(improved)
    costs = backward_mass(squared, positions)
    return positions[jnp.argmin(costs)]
