"""The order search of ``search.py`` as a compiled CPU kernel (numba), called from JAX.

The same algorithm step for step — the three starts, insertion sweeps with first-minimum
tie-breaking and the ``rel_tol`` acceptance rule, the best start kept — so it returns the same
orders as ``search_positions`` (without kicks). In JAX every elementary step of the sweeps is
a gather or scatter inside vmapped ``lax`` loops and costs tens of nanoseconds; here it is a
plain loop over one sample's ``(p, p)`` matrix, which runs near the arithmetic's cost on a CPU.

``positions_on_host`` is the entry point: a ``jax.pure_callback`` that JAX can ``jit`` and
``vmap``. The projection uses it on the CPU backend when numba is installed; on a GPU, or
without numba, the pure-JAX search runs instead (``uses_kernel``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

try:
    import numba
except ImportError:  # the pure-JAX search is used instead
    numba = None


def uses_kernel(n_kicks: int) -> bool:
    """Whether ``search`` runs on this kernel: numba present, a CPU backend, no kicks."""
    return numba is not None and n_kicks == 0 and jax.default_backend() == "cpu"


def _njit(function):
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


@_njit
def _greedy(squared, transposed, permutation):
    """Front-to-back greedy order of ``squared`` (of its transpose if ``transposed``)."""
    p = squared.shape[0]
    incoming = np.zeros(p, squared.dtype)
    for v in range(p):
        for u in range(p):
            incoming[v] += squared[v, u] if transposed else squared[u, v]
    placed = np.zeros(p, np.bool_)
    for place in range(p):
        node, least = -1, np.inf
        for v in range(p):
            if not placed[v] and incoming[v] < least:
                node, least = v, incoming[v]
        placed[node] = True
        permutation[place] = node
        for v in range(p):
            incoming[v] -= squared[v, node] if transposed else squared[node, v]


@_njit
def _net_outflow(squared, permutation):
    """Nodes sorted (stably) by ``Σ in − Σ out`` of squared mass."""
    p = squared.shape[0]
    net = np.zeros(p, squared.dtype)
    for v in range(p):
        for u in range(p):
            net[v] += squared[u, v] - squared[v, u]
    permutation[:] = np.argsort(net, kind="mergesort")


@_njit
def _improve(difference, permutation, positions, deltas, max_sweeps, threshold):
    """Insertion sweeps on ``permutation`` in place (``search.improve_by_insertion``).

    ``deltas[t]`` is the change in backward mass for moving the visited node to place ``t``:
    a running sum of ``difference[node, u]`` over the nodes ``u`` it passes.
    """
    p = difference.shape[0]
    for _ in range(max_sweeps):
        for place in range(p):
            positions[permutation[place]] = place
        improved = False
        for node in range(p):
            place = positions[node]
            deltas[place] = 0.0
            running = 0.0
            for t in range(place - 1, -1, -1):
                running -= difference[node, permutation[t]]
                deltas[t] = running
            running = 0.0
            for t in range(place + 1, p):
                running += difference[node, permutation[t]]
                deltas[t] = running
            target = 0
            for t in range(1, p):
                if deltas[t] < deltas[target]:
                    target = t
            if not deltas[target] < threshold:
                continue
            improved = True
            step = 1 if target > place else -1
            for b in range(place, target, step):
                permutation[b] = permutation[b + step]
                positions[permutation[b]] = b
            permutation[target] = node
            positions[node] = target
        if not improved:
            return


@_njit
def _backward_mass(squared, permutation):
    p = squared.shape[0]
    total = 0.0
    for later in range(p):
        for earlier in range(later):
            total += squared[permutation[later], permutation[earlier]]
    return 0.5 * total


@_njit
def _search_one(squared, max_sweeps, rel_tol, positions_out):
    p = squared.shape[0]
    difference = squared - squared.T
    threshold = -rel_tol * squared.sum()
    permutation = np.empty(p, np.int64)
    best = np.empty(p, np.int64)
    positions = np.empty(p, np.int64)
    deltas = np.empty(p, squared.dtype)
    best_cost = np.inf
    for start in range(3):
        if start == 0:
            _greedy(squared, False, permutation)
        elif start == 1:
            _greedy(squared, True, permutation)
            permutation[:] = permutation[::-1].copy()
        else:
            _net_outflow(squared, permutation)
        _improve(difference, permutation, positions, deltas, max_sweeps, threshold)
        cost = _backward_mass(squared, permutation)
        if cost < best_cost:
            best_cost = cost
            best[:] = permutation
    for place in range(p):
        positions_out[best[place]] = place


@_njit
def search_positions_batch(squared, max_sweeps, rel_tol):
    """Orders ``(B, p)`` int32 (place of each node) for ``squared (B, p, p)``, zero diagonal."""
    batch, p = squared.shape[0], squared.shape[1]
    positions = np.empty((batch, p), np.int32)
    for sample in range(batch):
        _search_one(squared[sample], max_sweeps, rel_tol, positions[sample])
    return positions


def positions_on_host(squared: jax.Array, max_sweeps: int, rel_tol: float) -> jax.Array:
    """``search_positions`` (no kicks) for ``squared (..., p, p)`` through the kernel: ``(..., p)``.

    A ``jax.pure_callback``: it works under ``jit`` and ``vmap`` (a vmapped call passes the
    whole batch at once), and carries no gradient (the order is a discrete choice).
    """
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    result = jax.ShapeDtypeStruct(squared.shape[:-1], jnp.int32)

    def host(batch):
        batch = np.ascontiguousarray(batch)
        flat = batch.reshape((-1, p, p))
        return search_positions_batch(flat, max_sweeps, rel_tol).reshape(batch.shape[:-1])

    return jax.pure_callback(host, result, squared, vmap_method="broadcast_all")
