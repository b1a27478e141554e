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


def insertion_deltas(ordered: jax.Array) -> jax.Array:
    """Change in backward mass for moving the node at place i to place j: ``(p, p)``.

    Args:
        ordered: ``M (p, p)`` with ``M[a, b] = A[perm[a], perm[b]]``.
    """
    p = ordered.shape[-1]
    difference = ordered - ordered.T  # D[i, b] = M[i, b] − M[b, i]
    inclusive = jnp.cumsum(difference, axis=1)
    exclusive = inclusive - difference
    places = jnp.arange(p)
    later = places[None, :] > places[:, None]
    return jnp.where(later, inclusive, exclusive) - jnp.diagonal(exclusive)[:, None]


def move(permutation: jax.Array, source: jax.Array, target: jax.Array) -> jax.Array:
    """The permutation with the element at place ``source`` moved to place ``target``."""
    places = jnp.arange(permutation.shape[-1])
    forward = (source < target) & (places >= source) & (places < target)
    backward = (target < source) & (places > target) & (places <= source)
    origin = places + forward.astype(places.dtype) - backward.astype(places.dtype)
    origin = jnp.where(places == target, source, origin)
    return permutation[origin]


def improve_by_insertion(squared: jax.Array, permutation: jax.Array,
                         max_moves: int, rel_tol: float) -> jax.Array:
    """Apply best-insertion moves to ``permutation (p,)`` until a local optimum."""
    p = squared.shape[-1]
    threshold = -rel_tol * squared.sum()

    def best_move(permutation):
        deltas = insertion_deltas(squared[permutation][:, permutation])
        flat = jnp.argmin(deltas)
        return deltas.reshape(-1)[flat], flat // p, flat % p

    def keep_going(state):
        _, delta, _, _, n_moves = state
        return (delta < threshold) & (n_moves < max_moves)

    def step(state):
        permutation, _, source, target, n_moves = state
        permutation = move(permutation, source, target)
        delta, source, target = best_move(permutation)
        return permutation, delta, source, target, n_moves + 1

    delta, source, target = best_move(permutation)
    state = (permutation, delta, source, target, jnp.int32(0))
    return jax.lax.while_loop(keep_going, step, state)[0]


def search_positions(squared: jax.Array, max_moves: int | None = None,
                     rel_tol: float = 1e-6) -> jax.Array:
    """A locally optimal order for one sample.

    Args:
        squared: ``(p, p)`` nonnegative weights ``W̃²``.
        max_moves: cap on insertion moves per start (default ``4 p²``).
        rel_tol: a move must lower the backward mass by more than ``rel_tol · ΣA``.

    Returns:
        ``positions (p,)`` int32.
    """
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    max_moves = 4 * p * p if max_moves is None else max_moves
    starts = jnp.stack([greedy_permutation(squared), net_outflow_permutation(squared)])
    improved = jax.vmap(lambda s: improve_by_insertion(squared, s, max_moves, rel_tol))(starts)
    positions = jax.vmap(positions_from_permutation)(improved)
    costs = backward_mass(squared, positions)
    return positions[jnp.argmin(costs)]
