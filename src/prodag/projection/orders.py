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
