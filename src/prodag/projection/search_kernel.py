"""The order search of ``search.py`` as a compiled CPU kernel (numba), called from JAX.

The same algorithm step for step — the three starts, insertion sweeps with first-minimum
tie-breaking and the ``rel_tol`` acceptance rule, the best start kept — so it returns the
orders of ``search_positions`` (without kicks); only its running sums, kept in float64, can
break a near-tie differently from JAX's float32 prefix sums. Samples are spread over the
CPU's cores. In JAX every elementary step of the sweeps is
a gather or scatter inside vmapped ``lax`` loops and costs tens of nanoseconds; here it is a
plain loop over one sample's ``(p, p)`` matrix, which runs near the arithmetic's cost on a CPU.

``prodag.projection.host_search.positions_on_host`` calls it (or, on a sparse support, the
same search over neighbour lists: ``search_kernel_sparse``) from JAX.
"""

from __future__ import annotations

import numpy as np

from prodag.numba_jit import njit as _njit
from prodag.numba_jit import numba  # None without numba: the pure-JAX search is used instead


@_njit
def place_least(incoming, placed, permutation, place):
    """Put the first unplaced node with the least ``incoming`` mass at ``place``; its index."""
    node, least = -1, np.inf
    for v in range(incoming.shape[0]):
        if not placed[v] and incoming[v] < least:
            node, least = v, incoming[v]
    placed[node] = True
    permutation[place] = node
    return node


@_njit
def greedy_order(squared, transposed, permutation):
    """Front-to-back greedy order of ``squared`` (of its transpose if ``transposed``)."""
    p = squared.shape[0]
    incoming = np.zeros(p, squared.dtype)
    for v in range(p):
        for u in range(p):
            incoming[v] += squared[v, u] if transposed else squared[u, v]
    placed = np.zeros(p, np.bool_)
    for place in range(p):
        node = place_least(incoming, placed, permutation, place)
        for v in range(p):
            incoming[v] -= squared[v, node] if transposed else squared[node, v]


@_njit
def net_outflow_order(squared, permutation):
    """Nodes sorted (stably) by ``Σ in − Σ out`` of squared mass."""
    p = squared.shape[0]
    net = np.zeros(p, squared.dtype)
    for v in range(p):
        for u in range(p):
            net[v] += squared[u, v] - squared[v, u]
    permutation[:] = np.argsort(net, kind="mergesort")


@_njit
def insertion_sweeps(difference, permutation, positions, max_sweeps, threshold):
    """Insertion sweeps on ``permutation`` in place (``search.improve_by_insertion``); returns
    the work done, ``(sweeps, node visits, moves)``.

    Moving the visited node from ``place`` to ``t`` changes the backward mass by
    ``S[t] − S[place]`` (``t < place``) or ``S[t + 1] − S[place]`` (``t > place``), with
    ``S[u] = Σ_{b < u} difference[node, permutation[b]]``; one pass over ``u`` finds the first
    smallest change, as ``first_argmin`` does over the deltas.

    The changes depend only on the order of the node and the nodes of its nonzero
    ``difference`` entries (zeros add nothing to ``S``), so a node that found no better place
    stays where it is until it or one of them moves: a sweep visits only the nodes marked since
    (``stale``), and makes the same moves as one that visits every node.
    """
    p = difference.shape[0]
    stale = np.ones(p, np.bool_)
    sweeps = visits = moves = 0
    for _ in range(max_sweeps):
        sweeps += 1
        for place in range(p):
            positions[permutation[place]] = place
        improved = False
        for node in range(p):
            if not stale[node]:
                continue
            visits += 1
            stale[node] = False
            place = positions[node]
            row = difference[node]
            prefix, best, target = 0.0, np.inf, place
            for u in range(place):  # to an earlier place u: change S[u] − S[place]
                if prefix < best:
                    best, target = prefix, u
                prefix += row[permutation[u]]
            at_place = prefix
            if prefix < best:
                best, target = prefix, place
            for u in range(place + 1, p):  # to a later place u: change S[u + 1] − S[place]
                prefix += row[permutation[u]]
                if prefix < best:
                    best, target = prefix, u
            if not best - at_place < threshold:
                continue
            improved = True
            moves += 1
            move_node(permutation, positions, node, place, target)
            for v in range(p):
                if row[v] != 0:
                    stale[v] = True
        if not improved:
            break
    return sweeps, visits, moves


@_njit
def move_node(permutation, positions, node, place, target):
    """Move ``node`` from ``place`` to ``target`` in ``permutation``, keeping ``positions``
    (the place of each node) in step."""
    step = 1 if target > place else -1
    for b in range(place, target, step):
        permutation[b] = permutation[b + step]
        positions[permutation[b]] = b
    permutation[target] = node
    positions[node] = target


@_njit
def order_backward_mass(squared, permutation):
    """``½ Σ`` of ``squared`` over the pairs that ``permutation`` (node at each place) puts
    backwards: the objective of the order."""
    p = squared.shape[0]
    total = 0.0
    for later in range(p):
        for earlier in range(later):
            total += squared[permutation[later], permutation[earlier]]
    return 0.5 * total


@_njit
def repeats_an_earlier_start(starts, start):
    for earlier in range(start):
        if np.all(starts[start] == starts[earlier]):
            return True
    return False


@_njit
def _search_one(squared, max_sweeps, rel_tol, back_to_front, positions_out):
    """``search_positions`` (no kicks) for one ``(p, p)`` sample, into ``positions_out``.

    A start equal to an earlier one is skipped: it would end in the same order, which does
    not replace the earlier one (only a strictly lower cost does). Without ``back_to_front``
    the starts are the front-to-back greedy order and the net outflow's.
    """
    p = squared.shape[0]
    difference = squared - squared.T
    threshold = -rel_tol * squared.sum()
    starts = np.empty((3, p), np.int64)
    count = 0
    greedy_order(squared, False, starts[count])
    count += 1
    if back_to_front:
        greedy_order(squared, True, starts[count])
        starts[count] = starts[count][::-1].copy()
        count += 1
    net_outflow_order(squared, starts[count])
    count += 1
    best = np.empty(p, np.int64)
    positions = np.empty(p, np.int64)
    best_cost = np.inf
    for start in range(count):
        if repeats_an_earlier_start(starts, start):
            continue
        permutation = starts[start].copy()
        insertion_sweeps(difference, permutation, positions, max_sweeps, threshold)
        cost = order_backward_mass(squared, permutation)
        if cost < best_cost:
            best_cost = cost
            best[:] = permutation
    for place in range(p):
        positions_out[best[place]] = place


def _search_batch_on_slots(slots, rows, cols, valid, p, max_sweeps, rel_tol, back_to_front):
    """Orders ``(B, p)`` int32 of samples whose squared weights sit in flat slots ``slots
    (B, S)``: ``_search_one`` of each sample's ``squared[rows[e], cols[e]] = slots[b,
    valid[e]]`` (zero elsewhere), the matrix made in the thread that searches it; the samples
    are shared among the CPU's cores."""
    batch = slots.shape[0]
    positions = np.empty((batch, p), np.int32)
    for sample in numba.prange(batch):
        squared = np.zeros((p, p), slots.dtype)
        for e in range(valid.shape[0]):
            squared[rows[e], cols[e]] = slots[sample, valid[e]]
        _search_one(squared, max_sweeps, rel_tol, back_to_front, positions[sample])
    return positions


search_positions_batch_on_slots = (
    numba.njit(cache=True, nogil=True, parallel=True)(_search_batch_on_slots)
    if numba is not None else None)


def search_positions_batch(squared: np.ndarray, max_sweeps: int, rel_tol: float,
                           back_to_front: bool = True) -> np.ndarray:
    """Orders ``(B, p)`` int32 (place of each node) for ``squared (B, p, p)``, zero diagonal;
    the samples are shared among the CPU's cores. The kernel of the slots with every entry a
    slot: one compiled kernel serves both (copying a sample costs ``O(p²)``, a sweep as
    much)."""
    batch, p = squared.shape[0], squared.shape[1]
    rows, cols = np.divmod(np.arange(p * p), p)
    return search_positions_batch_on_slots(
        np.ascontiguousarray(squared).reshape(batch, p * p), rows, cols, np.arange(p * p), p,
        max_sweeps, rel_tol, back_to_front)
