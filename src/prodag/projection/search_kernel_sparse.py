"""The order search of ``search_kernel`` on a sparse support (numba), with the same result.

Where ``squared`` is zero outside a known support (candidate parents, forbidden edges), every
sum of the search adds zeros in between its nonzero terms, and adding zero changes no float.
The functions here visit each node's neighbours ``u`` (``squared[v, u]`` or ``squared[u, v]``
may be nonzero) in the same order and skip the zeros, so they return the same orders bit for
bit, at ``O(p · D)`` a sweep for ``D`` neighbours instead of ``O(p²)``: an insertion's change
of backward mass is constant between the places of the moved node's neighbours, so only the
first place of each run can be its first minimum. The greedy starts keep the unplaced nodes
in a heap (``O(p · D log p)`` a start), and each start's neighbour lists are ranked by place
in one pass over the order (``_rank_by_place``), not sorted node by node.

A sample enters as two ``(p, D)`` arrays, never as a ``(p, p)`` matrix: ``outgoing[v, i] =
squared[v, u]`` and ``incoming[v, i] = squared[u, v]`` for ``v``'s ``i``-th neighbour ``u``
(zero in the padding). ``on_neighbours`` gathers them from dense samples;
``search_positions_batch_on_slots`` from each column's candidate parents' slots
(``prodag.projection.parents``), sample by sample in the searching thread.
"""

from __future__ import annotations

import numpy as np

from prodag.numba_jit import njit as _njit
from prodag.numba_jit import numba
from prodag.projection.search_kernel import move_node, repeats_an_earlier_start


def neighbour_lists(support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's neighbours ``u ≠ v`` where ``support[v, u]`` or ``support[u, v]``, in
    increasing order: ``(neighbours (p, D) int64`` padded with −1, ``degree (p,) int64)``."""
    p = support.shape[-1]
    linked = (support | support.T) & ~np.eye(p, dtype=bool)
    degree = linked.sum(axis=1).astype(np.int64)
    width = max(int(degree.max(initial=0)), 1)
    order = np.argsort(~linked, axis=1, kind="stable")[:, :width]
    return np.where(np.arange(width) < degree[:, None], order, -1).astype(np.int64), degree



@_njit
def _precedes(incoming, a, b):
    """Whether node ``a`` comes before ``b`` in the greedy's choice: less ``incoming`` mass,
    or as much and a lower index (``place_least``'s first minimum)."""
    return incoming[a] < incoming[b] or (incoming[a] == incoming[b] and a < b)


@_njit
def _sift_up(heap, where, incoming, index):
    """Move the node at ``heap[index]`` up the heap (nodes by ``_precedes``; ``where[v]``
    the index of node ``v``) while it precedes its parent: after its mass fell."""
    while index > 0:
        parent = (index - 1) // 2
        if not _precedes(incoming, heap[index], heap[parent]):
            return
        heap[index], heap[parent] = heap[parent], heap[index]
        where[heap[index]], where[heap[parent]] = index, parent
        index = parent


@_njit
def _sift_down(heap, where, incoming, index, size):
    """Move the node at ``heap[index]`` down ``heap[:size]`` while a child precedes it."""
    while True:
        first = index
        for child in (2 * index + 1, 2 * index + 2):
            if child < size and _precedes(incoming, heap[child], heap[first]):
                first = child
        if first == index:
            return
        heap[index], heap[first] = heap[first], heap[index]
        where[heap[index]], where[heap[first]] = index, first
        index = first


@_njit
def _greedy_sparse(outgoing, incoming_mass, neighbours, degree, transposed, permutation):
    """``greedy_order`` over the neighbour lists, the unplaced nodes in a binary heap: each place
    takes the heap's first node, the same as ``place_least``'s scan (least mass, then lowest
    index), and a neighbour whose mass falls moves up. ``O((p + p · D) log p)`` instead of
    the scan's ``O(p²)``; the masses are the same sums in the same order."""
    p = outgoing.shape[0]
    incoming = np.zeros(p, outgoing.dtype)
    for v in range(p):
        for i in range(degree[v]):
            incoming[v] += outgoing[v, i] if transposed else incoming_mass[v, i]
    heap = np.arange(p)
    where = np.arange(p)
    for index in range(p // 2 - 1, -1, -1):
        _sift_down(heap, where, incoming, index, p)
    for place in range(p):
        node = heap[0]
        permutation[place] = node
        size = p - 1 - place
        heap[0] = heap[size]
        where[heap[0]], where[node] = 0, -1
        _sift_down(heap, where, incoming, 0, size)
        for i in range(degree[node]):
            v = neighbours[node, i]
            incoming[v] -= incoming_mass[node, i] if transposed else outgoing[node, i]
            if where[v] >= 0:  # masses are squares: it never rises
                _sift_up(heap, where, incoming, where[v])


@_njit
def _net_outflow_sparse(outgoing, incoming, degree, permutation):
    """``net_outflow_order`` over the neighbour lists."""
    p = outgoing.shape[0]
    net = np.zeros(p, outgoing.dtype)
    for v in range(p):
        for i in range(degree[v]):
            net[v] += incoming[v, i] - outgoing[v, i]
    permutation[:] = np.argsort(net, kind="mergesort")


@_njit
def reverse_index(neighbours, degree):
    """``(p, D)`` int64: ``reverse[u, j]`` is the index of ``u`` in the list of its ``j``-th
    neighbour (the lists are symmetric and increasing: a binary search), −1 in the padding."""
    p, width = neighbours.shape
    reverse = np.full((p, width), -1, np.int64)
    for u in range(p):
        for j in range(degree[u]):
            v = neighbours[u, j]
            reverse[u, j] = np.searchsorted(neighbours[v, :degree[v]], u)
    return reverse


@_njit
def _rank_by_place(neighbours, degree, reverse, permutation, ranked, filled):
    """``ranked[v]``: the indices of ``v``'s neighbours in the order of their places in
    ``permutation``, what ``_by_place`` keeps, built in ``O(p · D)`` by visiting the places
    in order (``_by_place``'s insertion sort would take ``O(D²)`` a node from another order)."""
    filled[:] = 0
    for place in range(permutation.shape[0]):
        u = permutation[place]
        for j in range(degree[u]):
            v = neighbours[u, j]
            ranked[v, filled[v]] = reverse[u, j]
            filled[v] += 1


@_njit
def _by_place(node, neighbours, degree, positions, values, ranked, places, sorted_values):
    """The places of ``node``'s neighbours in increasing order, with their ``values``.

    ``ranked[node]`` keeps the list's indices in the order of the last call, so the insertion
    sort starts from an order that a few moves have changed since: ``O(D)`` plus the moves.
    """
    for i in range(degree[node]):
        index = ranked[node, i]
        place, j = positions[neighbours[node, index]], i
        while j > 0 and places[j - 1] > place:
            places[j], ranked[node, j] = places[j - 1], ranked[node, j - 1]
            j -= 1
        places[j], ranked[node, j] = place, index
    for i in range(degree[node]):
        sorted_values[i] = values[node, ranked[node, i]]


@_njit
def _improve_sparse(difference, neighbours, degree, permutation, positions, max_sweeps,
                    threshold, ranked, places, values):
    """``search_kernel.insertion_sweeps`` with ``difference[v, i]`` the entry of ``v``'s
    ``i``-th neighbour.

    A node's best insertion depends only on the order of the node and its neighbours, so a
    node that found no better place stays where it is until it or a neighbour moves: a sweep
    visits only the nodes marked since (``stale``), and makes the same moves as one that
    visits every node."""
    p = permutation.shape[0]
    stale = np.ones(p, np.bool_)
    for _ in range(max_sweeps):
        for place in range(p):
            positions[permutation[place]] = place
        improved = False
        for node in range(p):
            if not stale[node]:
                continue
            stale[node] = False
            place, count = positions[node], degree[node]
            _by_place(node, neighbours, degree, positions, difference, ranked, places, values)
            prefix, best, target = 0.0, np.inf, place
            if place > 0:  # to place 0: no change
                best, target = 0.0, 0
            i = 0
            while i < count and places[i] < place:  # to an earlier place, after a neighbour
                prefix += values[i]
                if places[i] + 1 < place and prefix < best:
                    best, target = prefix, places[i] + 1
                i += 1
            at_place = prefix
            if prefix < best:
                best, target = prefix, place
            while i < count:  # to a later place, onto a neighbour's
                prefix += values[i]
                if prefix < best:
                    best, target = prefix, places[i]
                i += 1
            if not best - at_place < threshold:
                continue
            improved = True
            move_node(permutation, positions, node, place, target)
            for i in range(count):
                stale[neighbours[node, i]] = True
        if not improved:
            return


@_njit
def _backward_mass_sparse(outgoing, neighbours, degree, permutation, positions, ranked,
                          places, values):
    """``order_backward_mass``: each node's earlier neighbours in the order of their places."""
    p = outgoing.shape[0]
    for place in range(p):
        positions[permutation[place]] = place
    total = 0.0
    for later in range(p):
        node = permutation[later]
        _by_place(node, neighbours, degree, positions, outgoing, ranked, places, values)
        for i in range(degree[node]):
            if places[i] < later:
                total += values[i]
    return 0.5 * total


@_njit
def _search_one_sparse(outgoing, incoming, neighbours, degree, reverse, max_sweeps, rel_tol,
                       back_to_front, positions_out):
    """``_search_one`` for one sample's ``outgoing`` and ``incoming`` masses ``(p, D)``
    (``reverse``: ``reverse_index`` of the lists)."""
    p, width = outgoing.shape[0], neighbours.shape[1]
    difference = outgoing - incoming
    total = np.zeros(1, outgoing.dtype)  # summed in the dense kernel's order and dtype
    for v in range(p):
        for i in range(degree[v]):
            total[0] += outgoing[v, i]
    threshold = -rel_tol * total[0]
    starts = np.empty((3, p), np.int64)
    count = 0
    _greedy_sparse(outgoing, incoming, neighbours, degree, False, starts[count])
    count += 1
    if back_to_front:
        _greedy_sparse(outgoing, incoming, neighbours, degree, True, starts[count])
        starts[count] = starts[count][::-1].copy()
        count += 1
    _net_outflow_sparse(outgoing, incoming, degree, starts[count])
    count += 1
    values = np.empty(width, outgoing.dtype)
    best = np.empty(p, np.int64)
    positions = np.empty(p, np.int64)
    places = np.empty(width, np.int64)
    ranked = np.empty((p, width), np.int64)
    filled = np.empty(p, np.int64)
    best_cost = np.inf
    for start in range(count):
        if repeats_an_earlier_start(starts, start):
            continue
        permutation = starts[start].copy()
        _rank_by_place(neighbours, degree, reverse, permutation, ranked, filled)
        _improve_sparse(difference, neighbours, degree, permutation, positions, max_sweeps,
                        threshold, ranked, places, values)
        cost = _backward_mass_sparse(outgoing, neighbours, degree, permutation, positions,
                                     ranked, places, values)
        if cost < best_cost:
            best_cost = cost
            best[:] = permutation
    for place in range(p):
        positions_out[best[place]] = place


def _search_batch_on_slots(slots, outgoing_slot, incoming_slot, neighbours, degree,
                           max_sweeps, rel_tol, back_to_front):
    """Orders ``(B, p)`` int32 of samples whose squared weights sit in flat slots ``slots
    (B, S)``: ``_search_one_sparse`` of each sample, its masses gathered in the thread that
    searches it: ``outgoing[v, i] = slots[b, outgoing_slot[v, i]]`` (likewise ``incoming``;
    an index of ``S`` or more is a neighbour without that edge: zero)."""
    batch, size = slots.shape
    p, width = outgoing_slot.shape
    positions = np.empty((batch, p), np.int32)
    reverse = reverse_index(neighbours, degree)
    for sample in numba.prange(batch):
        outgoing = np.zeros((p, width), slots.dtype)
        incoming = np.zeros((p, width), slots.dtype)
        for v in range(p):
            for i in range(degree[v]):
                if outgoing_slot[v, i] < size:
                    outgoing[v, i] = slots[sample, outgoing_slot[v, i]]
                if incoming_slot[v, i] < size:
                    incoming[v, i] = slots[sample, incoming_slot[v, i]]
        _search_one_sparse(outgoing, incoming, neighbours, degree, reverse, max_sweeps,
                           rel_tol, back_to_front, positions[sample])
    return positions


search_positions_batch_on_slots = (
    numba.njit(cache=True, nogil=True, parallel=True)(_search_batch_on_slots)
    if numba is not None else None)


def search_positions_batch_sparse(outgoing: np.ndarray, incoming: np.ndarray,
                                  neighbours: np.ndarray, degree: np.ndarray, max_sweeps: int,
                                  rel_tol: float, back_to_front: bool = True) -> np.ndarray:
    """Orders ``(B, p)`` int32 of samples given by their ``outgoing`` and ``incoming``
    masses ``(B, p, D)`` over the neighbour lists: the slots kernel with the masses as its
    slots (one compiled kernel serves both)."""
    batch, p, width = outgoing.shape
    slots = np.concatenate([outgoing.reshape(batch, p * width),
                            incoming.reshape(batch, p * width)], axis=1)
    own = np.arange(p * width).reshape(p, width)
    return search_positions_batch_on_slots(np.ascontiguousarray(slots), own, own + p * width,
                                           neighbours, degree, max_sweeps, rel_tol,
                                           back_to_front)


def on_neighbours(squared: np.ndarray, neighbours: np.ndarray,
                  degree: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``outgoing`` and ``incoming`` masses ``(B, p, D)`` of dense samples ``squared
    (B, p, p)`` over the neighbour lists (zero in the padding)."""
    p = squared.shape[-1]
    node, neighbour = np.arange(p)[:, None], np.maximum(neighbours, 0)
    padding = neighbours < 0
    outgoing = np.where(padding, 0, squared[:, node, neighbour])
    incoming = np.where(padding, 0, squared[:, neighbour, node])
    return (np.ascontiguousarray(outgoing, squared.dtype),
            np.ascontiguousarray(incoming, squared.dtype))
