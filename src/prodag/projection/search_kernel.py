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
def greedy_order(squared, neighbours, degree, transposed, permutation):
    """Front-to-back greedy order of ``squared`` (of its transpose if ``transposed``).

    A node's mass changes only through its neighbours' entries (``neighbours (p, D)``, in
    increasing order, ``degree (p,)`` of them; every other entry is zero, and adding zero
    changes no float), so the masses are summed and updated over the lists: the dense
    sums, term for term, at ``O(p · D)`` instead of ``O(p²)``.
    """
    p = squared.shape[0]
    incoming = np.zeros(p, squared.dtype)
    for v in range(p):
        for i in range(degree[v]):
            u = neighbours[v, i]
            incoming[v] += squared[v, u] if transposed else squared[u, v]
    placed = np.zeros(p, np.bool_)
    for place in range(p):
        node = place_least(incoming, placed, permutation, place)
        for i in range(degree[node]):
            v = neighbours[node, i]
            incoming[v] -= squared[v, node] if transposed else squared[node, v]


@_njit
def net_outflow_order(difference, neighbours, degree, permutation):
    """Nodes sorted (stably) by ``Σ in − Σ out`` of squared mass: ``−Σ_u difference[v, u]``
    over ``v``'s neighbours (``difference = squared − squaredᵀ``; each term is the dense
    sum's ``squared[u, v] − squared[v, u]``, negated exactly)."""
    p = difference.shape[0]
    net = np.zeros(p, difference.dtype)
    for v in range(p):
        for i in range(degree[v]):
            net[v] -= difference[v, neighbours[v, i]]
    permutation[:] = np.argsort(net, kind="mergesort")


@_njit
def insertion_sweeps(difference, neighbours, degree, permutation, positions, max_sweeps,
                     threshold):
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
            for i in range(degree[node]):
                if row[neighbours[node, i]] != 0:
                    stale[neighbours[node, i]] = True
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
def _search_one(squared, difference, neighbours, degree, max_sweeps, rel_tol, back_to_front,
                positions_out):
    """``search_positions`` (no kicks) for one ``(p, p)`` sample and its ``difference =
    squared − squaredᵀ``, into ``positions_out``; ``neighbours (p, D)`` and ``degree (p,)``:
    each node's neighbours (``neighbour_lists``), outside of which ``squared`` is zero.

    A start equal to an earlier one is skipped: it would end in the same order, which does
    not replace the earlier one (only a strictly lower cost does). Without ``back_to_front``
    the starts are the front-to-back greedy order and the net outflow's.
    """
    p = squared.shape[0]
    total = np.zeros(1, squared.dtype)  # ``squared.sum()``: its terms in its order and dtype
    for v in range(p):
        for i in range(degree[v]):
            total[0] += squared[v, neighbours[v, i]]
    threshold = -rel_tol * total[0]
    starts = np.empty((3, p), np.int64)
    count = 0
    greedy_order(squared, neighbours, degree, False, starts[count])
    count += 1
    if back_to_front:
        greedy_order(squared, neighbours, degree, True, starts[count])
        starts[count] = starts[count][::-1].copy()
        count += 1
    net_outflow_order(difference, neighbours, degree, starts[count])
    count += 1
    best = np.empty(p, np.int64)
    positions = np.empty(p, np.int64)
    best_cost = np.inf
    for start in range(count):
        if repeats_an_earlier_start(starts, start):
            continue
        permutation = starts[start].copy()
        insertion_sweeps(difference, neighbours, degree, permutation, positions, max_sweeps,
                         threshold)
        cost = order_backward_mass(squared, permutation)
        if cost < best_cost:
            best_cost = cost
            best[:] = permutation
    for place in range(p):
        positions_out[best[place]] = place


def _search_batch_on_slots(slots, rows, cols, valid, neighbours, degree, max_sweeps, rel_tol,
                           back_to_front):
    """Orders ``(B, p)`` int32 of samples whose squared weights sit in flat slots ``slots
    (B, S)``: ``_search_one`` of each sample's ``squared[rows[e], cols[e]] = slots[b,
    valid[e]]`` (zero elsewhere; every such entry joins its two nodes in ``neighbours (p, D)``,
    ``degree (p,)``), the matrix and its ``squared − squaredᵀ`` made in the thread that
    searches it (each difference entry is ``0 + a − b`` or ``0 − b + a``: ``a − b`` exactly);
    the samples are shared among the CPU's cores."""
    batch, p = slots.shape[0], neighbours.shape[0]
    positions = np.empty((batch, p), np.int32)
    for sample in numba.prange(batch):
        squared = np.zeros((p, p), slots.dtype)
        difference = np.zeros((p, p), slots.dtype)
        for e in range(valid.shape[0]):
            mass = slots[sample, valid[e]]
            squared[rows[e], cols[e]] = mass
            difference[rows[e], cols[e]] += mass
            difference[cols[e], rows[e]] -= mass
        _search_one(squared, difference, neighbours, degree, max_sweeps, rel_tol, back_to_front,
                    positions[sample])
    return positions


search_positions_batch_on_slots = (
    numba.njit(cache=True, nogil=True, parallel=True)(_search_batch_on_slots)
    if numba is not None else None)


def neighbour_lists(support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's neighbours ``u ≠ v`` where ``support[v, u]`` or ``support[u, v]``, in
    increasing order: ``(neighbours (p, D)`` int64 padded with −1, ``degree (p,)`` int64)."""
    p = support.shape[-1]
    linked = (support | support.T) & ~np.eye(p, dtype=bool)
    degree = linked.sum(axis=1).astype(np.int64)
    width = max(int(degree.max(initial=0)), 1)
    order = np.argsort(~linked, axis=1, kind="stable")[:, :width]
    return np.where(np.arange(width) < degree[:, None], order, -1).astype(np.int64), degree


def search_positions_batch(squared: np.ndarray, max_sweeps: int, rel_tol: float,
                           back_to_front: bool = True) -> np.ndarray:
    """Orders ``(B, p)`` int32 (place of each node) for ``squared (B, p, p)``, zero diagonal;
    the samples are shared among the CPU's cores. The kernel of the slots with every entry off
    the diagonal a slot, on the neighbour lists of the entries that are nonzero in some
    sample: one compiled kernel serves both."""
    batch, p = squared.shape[0], squared.shape[1]
    squared = np.ascontiguousarray(squared).reshape(batch, p * p)
    rows, cols = np.divmod(np.arange(p * p), p)
    off_diagonal = np.flatnonzero(rows != cols)
    neighbours, degree = neighbour_lists((squared != 0).any(axis=0).reshape(p, p))
    return search_positions_batch_on_slots(
        squared, rows[off_diagonal], cols[off_diagonal], off_diagonal, neighbours, degree,
        max_sweeps, rel_tol, back_to_front)
