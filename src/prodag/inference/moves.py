"""The proposals of the Metropolis refinement (``prodag.inference.refinement``): moves within
a mode (``propose``: one entry, every entry, an edge reversal) and jumps between the fits of a
run (``jump`` over ``Frames``), and the Metropolis test (``accepts``, the SMC's too); the
module docstring of ``refinement`` gives the target and the acceptance. Each proposal is
symmetric, or (a jump) carries its log Jacobian:

* ``site``: one entry of ``ω̃`` moves by ``s · prior_std · z``, ``s`` from ``SITE_SCALES``;
* ``joint``: every entry moves by ``s · prior_std · z / √D`` (``D`` entries), ``s`` from
  ``JOINT_SCALES``;
* ``reverse``: the edge weights of ``j → k`` and ``k → j`` trade places (an edge reversal);
* ``jump`` (with ``Target.frames``, a share ``JUMP_PROBABILITY`` of the steps): the draw moves
  from its frame ``z`` (at first its component) to another ``z'`` of its group (the fits of
  the run on the same rows with the same fixed noise, ``prodag.fit.draws.jump_frames``),
  keeping its place relative to the frame::

      ω̃' = m_z' + (s_z' / s_z) ⊙ (ω̃ − m_z),   log |J| = Σ log s_z' − Σ log s_z,

  with ``m``, ``s`` the frames' means and standard deviations, ``z'`` uniform among the
  group's others, accepted with ``π(ω̃') |J| / π(ω̃)``. The label ``z`` is a state of its own,
  uniform and independent of ``ω̃`` under the target, so every draw's ``ω̃`` still targets
  ``π`` at its own radius (a frame is only a place to propose, fitted at whatever radius);
  but mass now moves between the fitted modes by the model's own posterior, where the other
  moves leave each mode its share of the ELBO-weighted mixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.flatten_util import ravel_pytree

from prodag.models.base import Weights
from prodag.xla import power_of_two

MOVES = ("site", "joint", "reverse")
"""The moves within a mode (``propose``; also the SMC's)."""
MOVE_PROBABILITIES = (0.6, 0.3, 0.1)
KINDS = MOVES + ("jump",)
"""Every kind of step refinement counts: the moves within a mode and the jump between fits."""
SITE_SCALES = (0.03, 0.1, 0.3, 1.0)
"""Step sizes of a one-entry move, in units of ``prior_std``."""
JOINT_SCALES = (0.1, 0.3, 1.0)
"""Step sizes of a move of every entry, in units of ``prior_std / √D``."""
JUMP_PROBABILITY = 0.2
"""Share of the steps that jump between fits when there are ``Frames``."""


class Frames(NamedTuple):
    """The fitted components as frames for jumps: means and log standard deviations of the
    flattened ``ω̃`` (``(K, D)``, leaves in sorted order as ``flatten``) and each component's
    partners, the others of its group (``(K, G)``, padded with itself; ``n_partners (K,)``)."""

    loc: jax.Array
    log_scale: jax.Array
    partners: jax.Array
    n_partners: jax.Array


def frames_of(loc: np.ndarray, log_scale: np.ndarray, groups: np.ndarray) -> Frames | None:
    """``Frames`` of components with flattened means ``loc (K, D)`` and log standard
    deviations ``log_scale (K, D)``, jumps allowed within each of ``groups (K,)``; None when
    no group has two components. The components and the partners are padded to powers of
    two (unused rows), so that fits with other counts reuse the compiled steps."""
    members = [np.flatnonzero(groups == g) for g in groups]
    most = max(len(m) for m in members) - 1
    if most < 1:
        return None
    width, rows = power_of_two(most), power_of_two(len(members))
    partners = np.array([[o for o in m if o != k] + [k] * (width + 1 - len(m))
                         for k, m in enumerate(members)]
                        + [[0] * width] * (rows - len(members)), np.int32)
    counts = np.array([len(m) - 1 for m in members] + [0] * (rows - len(members)), np.int32)
    padding = ((0, rows - len(members)), (0, 0))
    return Frames(jnp.asarray(np.pad(loc, padding)), jnp.asarray(np.pad(log_scale, padding)),
                  jnp.asarray(partners), jnp.asarray(counts))


def flatten(weights_tilde: Weights) -> tuple[jax.Array, Callable[[jax.Array], Weights]]:
    """``ω̃`` (leaves ``(n, ...)``) as one ``(n, D)`` array, each row its draw's leaves raveled
    in sorted order (``ravel_pytree``), and the function that restores the pytree."""
    _, unravel = ravel_pytree(jax.tree.map(lambda leaf: leaf[0], weights_tilde))
    return jax.vmap(lambda draw: ravel_pytree(draw)[0])(weights_tilde), jax.vmap(unravel)


class Movable(NamedTuple):
    """The entries of ``ω̃`` that moves change, where the others cannot matter: the
    projection zeroes every edge outside the allowed ones (forbidden, or outside the
    candidate parents), so the target is the prior there, independent of the rest, and no
    output reads them. ``entries (M,)``: flat indices (``flatten``'s order) of the entries a
    ``site`` or ``joint`` move changes; ``pairs (P, 2)``: the node pairs ``j < k`` a
    ``reverse`` move may swap (either direction allowed); on candidate parents' slots
    (``movable_slots``) the flat slots of ``j → k`` and ``k → j`` instead. Each move stays
    symmetric: it picks uniformly from a fixed set."""

    entries: jax.Array
    pairs: jax.Array


def movable_slots(table) -> Movable:
    """``Movable`` of draws on the slots of ``table`` (a ``ParentTable``; the edge weights
    the only weights): every slot that holds a parent, and the slot pairs of the edges
    whose reverse is a candidate too."""
    slots = np.flatnonzero(table.valid)
    flat_slot = table.flat_slots()
    candidate = flat_slot < table.parents.size
    j, k = np.nonzero(np.triu(candidate & candidate.T, 1))
    pairs = np.stack([flat_slot[j, k], flat_slot[k, j]], axis=1)
    if len(pairs) == 0:  # nothing to reverse: a slot swapped with itself
        pairs = np.stack([slots[:1], slots[:1]], axis=1)
    return Movable(jnp.asarray(slots, jnp.int32), jnp.asarray(pairs, jnp.int32))


def movable(weights_tilde: Weights, edge_weight: str, allowed: np.ndarray) -> Movable | None:
    """``Movable`` of draws ``weights_tilde`` (leaves ``(n, ...)``) given ``allowed (p, p)``:
    every entry of the other weights, and the edge weights of the allowed edges (None when
    no entry may move: every move then changes nothing the target reads)."""
    keep = {name: np.ones(leaf.shape[1:], bool) for name, leaf in weights_tilde.items()}
    edges = keep[edge_weight]
    keep[edge_weight] = np.broadcast_to(
        np.asarray(allowed, bool).reshape(allowed.shape + (1,) * (edges.ndim - 2)), edges.shape)
    entries = np.flatnonzero(np.asarray(ravel_pytree(keep)[0]))
    if len(entries) == 0:
        return None
    pairs = np.argwhere(np.triu(np.asarray(allowed, bool) | np.asarray(allowed, bool).T, 1))
    if len(pairs) == 0:  # nothing to reverse: the pair (0, 0) swaps an entry with itself
        pairs = np.zeros((1, 2), int)
    return Movable(jnp.asarray(entries, jnp.int32), jnp.asarray(pairs, jnp.int32))


def propose(key: jax.Array, weights_tilde: Weights, edge_weight: str,
            prior_std: float, movable: Movable | None = None,
            on_slots: bool = False) -> tuple[Weights, jax.Array]:
    """One proposal of one kind for every draw, and the kind's index (a scalar); with
    ``movable``, the moves change its entries only (a one-entry move picks one of them, a
    move of every entry moves them all and scales by their count, a reversal picks one of
    its pairs). ``on_slots``: the edge weights lie on candidate parents' slots ``(n, p, K)``
    (``movable`` from ``movable_slots``, required)."""
    k_move, k_entry, k_scale, k_noise = jax.random.split(key, 4)
    flat, restore = flatten(weights_tilde)
    n, size = flat.shape
    move = jax.random.choice(k_move, len(MOVES), p=jnp.asarray(MOVE_PROBABILITIES))
    count = size if movable is None else movable.entries.shape[0]

    def site(_):
        entry = jax.random.randint(k_entry, (n,), 0, count)
        if movable is not None:
            entry = movable.entries[entry]
        scale = jnp.asarray(SITE_SCALES, flat.dtype)[
            jax.random.randint(k_scale, (n,), 0, len(SITE_SCALES))]
        step = prior_std * scale * jax.random.normal(k_noise, (n,), flat.dtype)
        return restore(flat.at[jnp.arange(n), entry].add(step))

    def joint(_):
        scale = jnp.asarray(JOINT_SCALES, flat.dtype)[
            jax.random.randint(k_scale, (n,), 0, len(JOINT_SCALES))] * prior_std / np.sqrt(count)
        noise = jax.random.normal(k_noise, flat.shape, flat.dtype)
        if movable is not None:
            noise = noise * jnp.zeros(size, flat.dtype).at[movable.entries].set(1.0)
        return restore(flat + scale[:, None] * noise)

    def reverse_slots(_):
        edges = weights_tilde[edge_weight]  # (n, p, K)
        pair = movable.pairs[jax.random.randint(k_entry, (n,), 0, movable.pairs.shape[0])]
        slots = edges.reshape(n, -1)
        rows = jnp.arange(n)
        first, second = slots[rows, pair[:, 0]], slots[rows, pair[:, 1]]
        swapped = slots.at[rows, pair[:, 0]].set(second).at[rows, pair[:, 1]].set(first)
        return {**weights_tilde, edge_weight: swapped.reshape(edges.shape)}

    def reverse(_):
        edges = weights_tilde[edge_weight]  # (n, p, p, ...)
        p = edges.shape[1]
        if movable is None:
            pair = jax.random.randint(k_entry, (n, 2), 0, p)
        else:
            pair = movable.pairs[jax.random.randint(k_entry, (n,), 0, movable.pairs.shape[0])]
        chosen = ((jnp.arange(p)[None, :, None] == pair[:, 0, None, None])
                  & (jnp.arange(p)[None, None, :] == pair[:, 1, None, None]))
        chosen = (chosen | jnp.swapaxes(chosen, 1, 2)).reshape(chosen.shape
                                                                + (1,) * (edges.ndim - 3))
        return {**weights_tilde,
                edge_weight: jnp.where(chosen, jnp.swapaxes(edges, 1, 2), edges)}

    swap = reverse_slots if on_slots else reverse
    return lax.switch(move, (site, joint, swap), None), move


def jump(key: jax.Array, weights_tilde: Weights, component: jax.Array,
         frames: Frames) -> tuple[Weights, jax.Array, jax.Array]:
    """Every draw's jump to another component of its group (module docstring): the moved
    draws, their components ``(n,)`` and ``log |J|`` ``(n,)``. A draw alone in its group
    stays where it is."""
    flat, restore = flatten(weights_tilde)
    count = frames.n_partners[component]
    pick = jax.random.randint(key, component.shape, 0, jnp.maximum(count, 1))
    other = jnp.where(count > 0, frames.partners[component, pick], component)
    log_ratio = (frames.log_scale[other] - frames.log_scale[component]).astype(flat.dtype)
    moved = frames.loc[other] + jnp.exp(log_ratio) * (flat - frames.loc[component])
    moved = jnp.where((other != component)[:, None], moved.astype(flat.dtype), flat)
    return restore(moved), other, jnp.sum(log_ratio, axis=1)


def proposal(key: jax.Array, weights_tilde: Weights, component: jax.Array,
             log_target: jax.Array, frames: Frames | None, prior_std: float,
             movable: Movable | None, edge_weight: str, on_slots: bool = False):
    """One step's proposal for every draw, ``(proposal, its components (n,), log |J| (n,),
    the kind's index)``: a move within the mode (``propose``), or with ``frames`` a ``jump``
    for ``JUMP_PROBABILITY`` of the steps (``log_target (n,)``: the draws' current values,
    giving the Jacobian's shape and dtype; ``on_slots``: see ``propose``)."""
    zero = jnp.zeros(log_target.shape, log_target.dtype)
    if frames is None:
        proposed, move = propose(key, weights_tilde, edge_weight, prior_std, movable, on_slots)
        return proposed, component, zero, move

    k_kind, k_move = jax.random.split(key)

    def within(_):
        proposed, move = propose(k_move, weights_tilde, edge_weight, prior_std, movable,
                                 on_slots)
        return proposed, component, zero, move.astype(jnp.int32)

    def between(_):
        proposed, moved_to, log_jacobian = jump(k_move, weights_tilde, component, frames)
        return proposed, moved_to, log_jacobian.astype(zero.dtype), jnp.int32(len(MOVES))

    return lax.cond(jax.random.uniform(k_kind) < JUMP_PROBABILITY, between, within, None)


def accepts(key: jax.Array, log_ratio: jax.Array) -> jax.Array:
    """The Metropolis test of every draw ``(n,)``: ``log u < log_ratio``, ``u ~ U(0, 1)`` drawn
    in ``log_ratio``'s shape and dtype (a NaN ratio is rejected)."""
    return jnp.log(jax.random.uniform(key, log_ratio.shape, log_ratio.dtype)) < log_ratio
