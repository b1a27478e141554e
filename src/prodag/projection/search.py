"""Local search over topological orders: greedy starts, insertion sweeps, and kicks.

Per sample, with ``A = W̃²`` (zero diagonal) and the cost of an order its backward mass:

1. *Starts.* Front-to-back greedy (place the unplaced node with the least mass coming from the
   other unplaced nodes: exactly the edges it turns backwards), back-to-front greedy (the same
   on ``Aᵀ``, reversed; left out with ``back_to_front=False``), and nodes sorted by net
   outflow ``Σ_k A[v,k] − Σ_j A[j,v]``.
2. *Insertion sweeps.* Moving node ``v`` from place ``i`` to place ``j`` changes the cost by the
   sum of ``A[v,u] − A[u,v]`` over the nodes ``u`` it passes, so one prefix sum scores all ``p``
   targets of ``v`` in O(p). A sweep visits every node and moves it to its best place if that
   lowers the cost; sweeps repeat until one changes nothing (a local optimum for all ``p²``
   insertion moves) or ``max_sweeps``.
3. *Kicks* (iterated local search). Reverse pseudo-random segments of the best order (several
   copies side by side), re-optimise them by sweeps, keep the cheapest if it improves.

Every loop is a ``lax`` loop, so the search compiles and vmaps over samples (a batched loop
runs until its slowest sample is done).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from prodag.projection.orders import backward_mass, positions_from_permutation

MAX_SWEEPS = 10
"""Default cap on insertion sweeps per local search (a sweep is O(p²))."""
REL_TOL = 1e-6
"""Default acceptance rule: a move must lower the backward mass by more than ``REL_TOL · ΣA``."""
LOOP_UNROLL = 1
"""Iterations of the search's fixed-length loops (greedy placement, a sweep's node visits) per
trip of the compiled loop. On a GPU every trip of a compiled loop costs a round of kernel
launches and a check on the host, so fewer, longer trips can pay; on the CPU the search runs
the numba kernel (``search_kernel``) and this is unused. Read when a search is traced."""


def greedy_permutation(squared: jax.Array) -> jax.Array:
    """Front-to-back greedy order ``(p,)`` (node at each place) for one ``(p, p)`` sample."""
    p = squared.shape[-1]
    incoming = squared.sum(axis=0)  # mass into v from every node (diagonal is zero)

    def place(step, state):
        incoming, placed, permutation = state
        node = jnp.argmin(jnp.where(placed, jnp.inf, incoming)).astype(jnp.int32)
        incoming = incoming - squared[node]
        return incoming, placed.at[node].set(True), permutation.at[step].set(node)

    state = (incoming, jnp.zeros(p, dtype=bool), jnp.zeros(p, dtype=jnp.int32))
    return jax.lax.fori_loop(0, p, place, state, unroll=LOOP_UNROLL)[2]


def net_outflow_permutation(squared: jax.Array) -> jax.Array:
    """Order ``(p,)`` by decreasing ``Σ out − Σ in`` of squared mass."""
    return jnp.argsort(squared.sum(axis=0) - squared.sum(axis=1)).astype(jnp.int32)


def prefix_sums(values: jax.Array) -> jax.Array:
    """Inclusive cumulative sum along the last axis by log2(p) shifted adds.

    Same result as ``jnp.cumsum``; on CPU inside a loop body it is cheaper, and this sits in
    the innermost loop of the search.
    """
    n = values.shape[-1]
    shift = 1
    while shift < n:
        padding = [(0, 0)] * (values.ndim - 1) + [(shift, 0)]
        values = values + jnp.pad(values[..., :-shift], padding)
        shift *= 2
    return values


def first_argmin(values: jax.Array) -> jax.Array:
    """Index of the first minimum along the last axis (``jnp.argmin`` semantics, finite input).

    Two plain reductions instead of XLA's variadic arg-reduction, which is several times slower
    on CPU inside a loop body.
    """
    n = values.shape[-1]
    smallest = values.min(axis=-1, keepdims=True)
    return jnp.min(jnp.where(values == smallest, jnp.arange(n), n), axis=-1)


def insertion_deltas(difference_row: jax.Array, place: jax.Array) -> jax.Array:
    """Change in backward mass for moving the node at ``place`` to every place ``j``: ``(p,)``.

    Args:
        difference_row: ``(p,)`` with entry ``b`` equal to ``A[v, u] − A[u, v]``, where ``v`` is
            the moved node and ``u`` the node at place ``b`` (zero at ``b = place``).
        place: the current place of ``v``.
    """
    inclusive = prefix_sums(difference_row)
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
    difference = squared - squared.T
    places = jnp.arange(p, dtype=permutation.dtype)

    def visit(node, state):
        permutation, positions, improved = state
        place = positions[node]
        deltas = insertion_deltas(difference[node][permutation], place)
        target = first_argmin(deltas).astype(permutation.dtype)
        better = deltas[target] < threshold
        target = jnp.where(better, target, place)
        shift_down = (place < target) & (positions > place) & (positions <= target)
        shift_up = (target < place) & (positions >= target) & (positions < place)
        positions = positions - shift_down.astype(places.dtype) + shift_up.astype(places.dtype)
        positions = jnp.where(places == node, target, positions)
        return move(permutation, place, target), positions, improved | better

    def sweep(state):
        permutation, _, n_sweeps = state
        positions = positions_from_permutation(permutation)
        permutation, _, improved = jax.lax.fori_loop(
            0, p, visit, (permutation, positions, jnp.bool_(False)), unroll=LOOP_UNROLL)
        return permutation, improved, n_sweeps + 1

    def keep_going(state):
        _, improved, n_sweeps = state
        return improved & (n_sweeps < max_sweeps)

    state = (permutation, jnp.bool_(True), jnp.int32(0))
    return jax.lax.while_loop(keep_going, sweep, state)[0]


def reverse_segment(permutation: jax.Array, start: jax.Array, stop: jax.Array) -> jax.Array:
    """The permutation with the places ``start ≤ b < stop`` in reverse order."""
    places = jnp.arange(permutation.shape[-1])
    inside = (places >= start) & (places < stop)
    return permutation[jnp.where(inside, start + stop - 1 - places, places)]


def search_positions(squared: jax.Array, n_kicks: int = 0, n_rounds: int = 1,
                     max_sweeps: int = MAX_SWEEPS, rel_tol: float = REL_TOL,
                     back_to_front: bool = True) -> jax.Array:
    """A locally optimal order for one sample.

    Three starts (front-to-back greedy, back-to-front greedy, net outflow; without the
    back-to-front one if not ``back_to_front``) are improved by
    insertion sweeps side by side; then each of ``n_rounds`` rounds of iterated local search
    reverses ``n_kicks`` pseudo-random segments of the best order (side by side), re-optimises
    them, and keeps the best. The kicks use fixed keys, so the search is deterministic.

    Args:
        squared: ``(p, p)`` nonnegative weights ``W̃²``.
        n_kicks: perturbed copies of the best order per round; 0 (default) skips the rounds.
            Kicks buy quality for time: at p = 20 on N(0, 1) input, ``n_kicks=8, n_rounds=2,
            max_sweeps=4`` brought the mean objective from 0.35% to 0.05% above the best found,
            at about 3x the CPU time.
        n_rounds: sequential perturb-and-improve rounds.
        max_sweeps: cap on sweeps over all nodes per local search (a sweep is O(p²)).
        rel_tol: a move must lower the backward mass by more than ``rel_tol · ΣA``.
        back_to_front: start from the back-to-front greedy order too. Without it the search
            costs about a third less and changed a quarter of a p = 100 fit's orders; the fits
            keep it: at n = 1000 they scored worse without it (``docs/findings.md``).

    Returns:
        ``positions (p,)`` int32.
    """
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))

    def improve(permutation):
        permutation = improve_by_insertion(squared, permutation, max_sweeps, rel_tol)
        positions = positions_from_permutation(permutation)
        return permutation, backward_mass(squared, positions)

    def best_of(permutations, costs):
        best = jnp.argmin(costs)
        return permutations[best], costs[best]

    starts = jnp.stack([greedy_permutation(squared)]
                       + ([greedy_permutation(squared.T)[::-1]] if back_to_front else [])
                       + [net_outflow_permutation(squared)])
    permutation, cost = best_of(*jax.vmap(improve)(starts))

    def kick_round(round_index, state):
        permutation, cost = state
        key = jax.random.fold_in(jax.random.PRNGKey(0), round_index)
        segment_starts, lengths = jax.random.randint(key, (2, n_kicks), 0, p)
        stops = jnp.minimum(segment_starts + lengths + 2, p)
        kicked = jax.vmap(reverse_segment, (None, 0, 0))(permutation, segment_starts, stops)
        candidates, candidate_costs = jax.vmap(improve)(kicked)
        candidate, candidate_cost = best_of(candidates, candidate_costs)
        better = candidate_cost < cost
        return jnp.where(better, candidate, permutation), jnp.where(better, candidate_cost, cost)

    if n_kicks > 0:
        permutation, cost = jax.lax.fori_loop(0, n_rounds, kick_round, (permutation, cost))
    return positions_from_permutation(permutation)
