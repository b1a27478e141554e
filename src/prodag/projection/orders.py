"""Topological orders and the objective they induce.

For a fixed order the nearest DAG to ``W̃`` keeps every forward entry and zeroes every backward
one, so the acyclicity projection reduces to choosing the order that minimises the *backward
mass* ``Σ_{pos(j) > pos(k)} W̃_jk²``. Orders are stored as ``positions (p,)``: ``positions[v]``
is the place of node ``v`` in the order (0 = first).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def forward_mask(positions: jax.Array) -> jax.Array:
    """Boolean ``(..., p, p)`` mask of the edges ``j → k`` with ``pos(j) < pos(k)``."""
    return positions[..., :, None] < positions[..., None, :]


def backward_mass(squared: jax.Array, positions: jax.Array) -> jax.Array:
    """``½ Σ`` of ``squared (..., p, p)`` over edges pointing backwards in the order: shape ``(...)``.

    With ``squared = W̃²`` this is the acyclic-step objective ``½‖W̃ − Ŵ‖²_F``.
    """
    backward = positions[..., :, None] > positions[..., None, :]
    return 0.5 * jnp.where(backward, squared, 0.0).sum(axis=(-2, -1))


def positions_from_permutation(permutation: jax.Array) -> jax.Array:
    """Invert ``permutation (p,)`` (node at each place) into ``positions (p,)`` (place of each node)."""
    p = permutation.shape[-1]
    return jnp.zeros(p, dtype=permutation.dtype).at[permutation].set(
        jnp.arange(p, dtype=permutation.dtype))


def constrained_positions(positions: jax.Array, required: jax.Array,
                          preferred: jax.Array | None = None) -> jax.Array:
    """The order closest to ``positions (p,)`` that keeps every ``required (p, p)`` edge
    forward: nodes are placed one at a time, each time the earliest (by ``positions``) node
    whose required parents are all placed; among those, nodes whose ``preferred`` parents
    are all placed come first. ``required`` must be acyclic. An order that already keeps the
    required edges forward (and the preferred ones) is returned unchanged. ``(p,)`` positions.
    """
    p = positions.shape[-1]
    required = required.astype(jnp.int32)
    preferred = jnp.zeros_like(required) if preferred is None else preferred.astype(jnp.int32)

    def place(step, state):
        waiting_required, waiting_preferred, placed, new = state
        rank = (positions + p * (waiting_preferred > 0) + 2 * p * (waiting_required > 0)
                + 4 * p * placed)
        node = jnp.argmin(rank)
        return (waiting_required - required[node], waiting_preferred - preferred[node],
                placed.at[node].set(1), new.at[node].set(step))

    state = (required.sum(axis=0), preferred.sum(axis=0), jnp.zeros(p, jnp.int32),
             jnp.zeros(p, positions.dtype))
    return jax.lax.fori_loop(0, p, place, state)[3]
