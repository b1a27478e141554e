"""Each column's candidate parents as slots: the projection's input without a ``(p, p)`` array.

On a candidate support (``prodag.inputs.candidates``) variable ``k`` may have only the parents
``parents[k]``, at most ``K`` of them. A ``ParentTable`` lays them out as slots: ``w (..., p, K)``
holds the weight of the edge ``parents[k, s] → k`` at ``w[..., k, s]``; the slots past a
variable's last parent are padding (``valid`` false, their parent the variable itself) and
hold zero. ``gather`` and ``scatter`` convert to and from the dense ``(..., p, p)`` layout.

``positions_on_parents`` runs the order search of ``prodag.projection.host_search`` on slots:
the kernel over neighbour lists reads each node's outgoing and incoming masses from the slots
(``O(p · D)`` a sample); where the support is too dense for the lists to pay
(``host_search.on_lists``) the dense kernel reads each sample's ``(p, p)`` matrix made from its
slots. Each sample's input is made in the thread that searches it, and both return the orders
of the dense search, bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from prodag.projection.host_search import on_lists
from prodag.projection import search_kernel, search_kernel_sparse
from prodag.projection.search_kernel import neighbour_lists


class ParentTable(NamedTuple):
    """Each variable's candidate parents as a padded table (numpy, fixed for a fit)."""

    parents: np.ndarray
    """``(p, K)`` int: ``parents[k, s]`` is the parent in slot ``s`` of variable ``k`` (padding:
    ``k`` itself)."""
    valid: np.ndarray
    """``(p, K)`` bool: which slots hold a parent."""

    @classmethod
    def from_lists(cls, parents: tuple[tuple[int, ...], ...]) -> "ParentTable":
        """The table of ``parents[k]``: variable ``k``'s candidate parents, laid out in
        increasing order (the order in which the kernels add a variable's parents)."""
        width = max(1, max(len(own) for own in parents))
        table = np.array([sorted(own) + [k] * (width - len(own)) for k, own in enumerate(parents)],
                         dtype=np.int64).reshape(len(parents), width)
        valid = np.arange(width)[None, :] < np.array([len(own) for own in parents])[:, None]
        return cls(table, valid)

    @property
    def child(self) -> np.ndarray:
        """``(p, 1)`` int: each row's variable, broadcastable against ``parents``."""
        return np.arange(self.parents.shape[0])[:, None]

    def mask(self) -> np.ndarray:
        """``(p, p)`` bool: the candidate entries ``parents[k, s] → k``."""
        support = np.zeros((self.parents.shape[0],) * 2, dtype=bool)
        support[self.parents[self.valid], np.broadcast_to(self.child, self.parents.shape)[
            self.valid]] = True
        return support

    def on_slots(self, mask: np.ndarray) -> np.ndarray:
        """``mask (p, p)`` (bool, numpy) on the slots: ``(p, K)``, false in the padding."""
        return self.valid & np.asarray(mask)[self.parents, self.child]

    def flat_slots(self) -> np.ndarray:
        """``(p, p)`` int: the flat slot (``k · K + s``) of each candidate entry
        ``[parent, child]``, ``p · K`` elsewhere."""
        p, width = self.parents.shape
        slots = np.flatnonzero(self.valid)
        flat = np.full((p, p), p * width, dtype=np.int64)
        flat[self.parents.reshape(-1)[slots], slots // width] = slots
        return flat

    def gather(self, W: jax.Array, padding: float = 0.0) -> jax.Array:
        """``W (..., p, p)`` on the slots: ``(..., p, K)``, ``padding`` in the padding."""
        return jnp.where(self.valid, W[..., self.parents, self.child], padding)

    def scatter(self, w: jax.Array) -> jax.Array:
        """Slots ``w (..., p, K)`` as a dense ``(..., p, p)`` array, zero off the support."""
        p = self.parents.shape[0]
        dense = jnp.zeros((*w.shape[:-2], p, p), w.dtype)
        return dense.at[..., self.parents, self.child].add(jnp.where(self.valid, w, 0.0))

    def holds(self, weights_tilde: dict) -> bool:
        """Whether draws ``weights_tilde`` lie on the slots (``{"W": (n, p, K)}``, as the
        refinement on candidate parents keeps them) rather than dense (``(n, p, p)``: a fit
        without candidate parents, tempered SMC's draws, a model file of format 9 or
        before)."""
        W = weights_tilde.get("W")
        return (W is not None and W.ndim == 3 and W.shape[1:] == self.parents.shape
                and W.shape[2] != W.shape[1])

    def dense(self, w: np.ndarray) -> np.ndarray:
        """``scatter`` on the host: slots ``w (n, p, K)`` (numpy) as ``(n, p, p)``."""
        p = self.parents.shape[0]
        dense = np.zeros((w.shape[0], p, p), w.dtype)
        child = np.broadcast_to(self.child, self.parents.shape)
        dense[:, self.parents[self.valid], child[self.valid]] = w[:, self.valid]
        return dense


class SlotSearch(NamedTuple):
    """What the order search needs to read a sample from its slots (host arrays)."""

    neighbours: np.ndarray
    """``(p, D)`` int: each node's neighbours, increasing, padded with −1."""
    degree: np.ndarray
    """``(p,)`` int: how many neighbours each node has."""
    outgoing: np.ndarray
    """``(p, D)`` int: the flat slot of the edge ``v → neighbours[v, i]`` (``p · K``: none)."""
    incoming: np.ndarray
    """``(p, D)`` int: the flat slot of the edge ``neighbours[v, i] → v`` (``p · K``: none)."""
    rows: np.ndarray
    """``(E,)`` int: the parent of each valid slot, in flat order."""
    cols: np.ndarray
    """``(E,)`` int: the child of each valid slot."""
    slots: np.ndarray
    """``(E,)`` int: the flat index of each valid slot."""


def slot_search(table: ParentTable) -> SlotSearch:
    """The neighbour lists of ``table``'s support and where each neighbour's masses sit."""
    p, width = table.parents.shape
    neighbours, degree = neighbour_lists(table.mask())
    flat_slot = table.flat_slots()
    slots = np.flatnonzero(table.valid)
    rows, cols = table.parents.reshape(-1)[slots], slots // width
    node, neighbour = np.arange(p)[:, None], np.maximum(neighbours, 0)
    none = neighbours < 0
    outgoing = np.where(none, p * width, flat_slot[node, neighbour])
    incoming = np.where(none, p * width, flat_slot[neighbour, node])
    return SlotSearch(neighbours, degree, outgoing, incoming, rows, cols, slots)


def positions_on_parents(squared: jax.Array, search: SlotSearch, max_sweeps: int,
                         rel_tol: float, back_to_front: bool = True) -> jax.Array:
    """The dense search's orders ``(..., p)`` of the samples whose squared weights sit in the
    slots ``squared (..., p, K)`` (zero in the padding): a ``jax.pure_callback`` (it works
    under ``jit`` and ``vmap``; no gradient: the order is a discrete choice).
    ``back_to_front``: ``search_positions``'s option."""
    result = jax.ShapeDtypeStruct(squared.shape[:-1], jnp.int32)
    sparse = on_lists(search.degree)

    def host(batch):
        flat = np.ascontiguousarray(batch).reshape((-1, batch.shape[-2] * batch.shape[-1]))
        if sparse:
            positions = search_kernel_sparse.search_positions_batch_on_slots(
                flat, search.outgoing, search.incoming, search.neighbours, search.degree,
                max_sweeps, rel_tol, back_to_front)
        else:
            positions = search_kernel.search_positions_batch_on_slots(
                flat, search.rows, search.cols, search.slots, search.neighbours, search.degree,
                max_sweeps, rel_tol, back_to_front)
        return positions.reshape(batch.shape[:-1])

    return jax.pure_callback(host, result, squared, vmap_method="expand_dims")
