"""The order search on the CPU, called from JAX: the numba kernels of ``search_kernel`` (dense)
and ``search_kernel_sparse`` (over neighbour lists, where the support is sparse), which return
the orders of the pure-JAX ``search.search_positions`` (without kicks).

``positions_on_host`` is the entry point: a ``jax.pure_callback`` that JAX can ``jit`` and
``vmap``. The projection uses it on the CPU backend when numba is installed; on a GPU, or
without numba, the pure-JAX search runs instead (``uses_kernel``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from prodag.numba_jit import numba  # None without numba: the pure-JAX search is used instead
from prodag.projection.search_kernel import neighbour_lists, search_positions_batch
from prodag.projection.search_kernel_sparse import on_neighbours, search_positions_batch_sparse


def uses_kernel(n_kicks: int) -> bool:
    """Whether ``search`` runs on this kernel: numba present, a CPU backend, no kicks."""
    return numba is not None and n_kicks == 0 and jax.default_backend() == "cpu"


SPARSE_BELOW = 0.14
"""The share of a node's possible neighbours below which the search runs on the neighbour
lists: there a visit's bit set of places costs less than the dense kernel's scan over all
``p`` places, while on a denser support the lists only add indirection (the orders are the
same either way; ``benchmarks.studies.search_kernels`` measures where the two cross)."""


def on_lists(degree: np.ndarray) -> bool:
    """Whether a support whose nodes have ``degree (p,)`` neighbours is searched on the lists."""
    return bool(degree.mean() < SPARSE_BELOW * (degree.shape[0] - 1))


def positions_on_host(squared: jax.Array, max_sweeps: int, rel_tol: float,
                      support: jax.Array | None = None, back_to_front: bool = True) -> jax.Array:
    """``search_positions`` (no kicks) for ``squared (..., p, p)`` through the kernel: ``(..., p)``.

    ``support (p, p)`` (bool, optional): the entries that may be nonzero in every sample; where
    its nodes have few neighbours (``SPARSE_BELOW``) the search runs on the neighbour lists,
    with the same result. ``back_to_front``: ``search_positions``'s option. A
    ``jax.pure_callback``: it works under ``jit`` and ``vmap`` (a vmapped call passes the whole
    batch at once), and carries no gradient (the order is a discrete choice).
    """
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    result = jax.ShapeDtypeStruct(squared.shape[:-1], jnp.int32)

    def host(batch, support):
        batch = np.ascontiguousarray(batch)
        flat = batch.reshape((-1, p, p))
        if support is not None:
            neighbours, degree = neighbour_lists(np.asarray(support).reshape((-1, p, p))[0])
            if on_lists(degree):
                outgoing, incoming = on_neighbours(flat, neighbours, degree)
                return search_positions_batch_sparse(outgoing, incoming, neighbours, degree,
                                                     max_sweeps, rel_tol, back_to_front
                                                     ).reshape(batch.shape[:-1])
        return search_positions_batch(flat, max_sweeps, rel_tol,
                                      back_to_front).reshape(batch.shape[:-1])

    return jax.pure_callback(host, result, squared, support, vmap_method="expand_dims")
