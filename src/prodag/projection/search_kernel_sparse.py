"""The order search of ``search_kernel`` on a sparse support (numba), with the same result.

Where ``squared`` is zero outside a known support (candidate parents, forbidden edges), every
sum of the search adds zeros in between its nonzero terms, and adding zero changes no float.
The functions here visit each node's neighbours ``u`` (``squared[v, u]`` or ``squared[u, v]``
may be nonzero) in the same order and skip the zeros, so they return the same orders bit for
bit, at ``O(p · (D + p / 64))`` a sweep for ``D`` neighbours instead of ``O(p²)``: an
insertion's change of backward mass is constant between the places of the moved node's
neighbours, so only the first place of each run can be its first minimum, and a visit reads
its node's neighbours in the order of their places from a bit set of places
(``_mark_places``). The greedy starts keep the unplaced nodes in a heap (``O(p · D log p)``
a start).

A sample enters as two ``(p, D)`` arrays, never as a ``(p, p)`` matrix: ``outgoing[v, i] =
squared[v, u]`` and ``incoming[v, i] = squared[u, v]`` for ``v``'s ``i``-th neighbour ``u``
(zero in the padding). ``on_neighbours`` gathers them from dense samples;
``search_positions_batch_on_slots`` from each column's candidate parents' slots
(``prodag.projection.parents``), sample by sample in the searching thread.
"""

from __future__ import annotations

import numpy as np

from prodag.numba_jit import lowest_bit, numba
from prodag.numba_jit import njit as _njit
from prodag.projection.search_kernel import move_node, repeats_an_earlier_start


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


ONE = np.uint64(1)


@_njit
def _mark_places(node, values, neighbours, degree, positions, below, words, at_place):
    """The places before ``below`` of ``node``'s neighbours ``u`` with ``values[node, i] ≠ 0``
    (``u`` its ``i``-th neighbour), as a bit set ``words (⌈p / 64⌉,)`` uint64 (place ``b`` is
    bit ``b mod 64`` of word ``b // 64``), each with its value in ``at_place[b]``: read lowest
    bit first, the nonzero terms of a scan over the places, in its order, in ``O(D + p / 64)``."""
    for w in range(words.shape[0]):
        words[w] = 0
    for i in range(degree[node]):
        value = values[node, i]
        if value != 0:
            place = positions[neighbours[node, i]]
            if place < below:
                words[place >> 6] |= ONE << np.uint64(place & 63)
                at_place[place] = value


@_njit
def _improve_sparse(difference, neighbours, degree, permutation, positions, max_sweeps,
                    threshold, words, at_place):
    """``search_kernel.insertion_sweeps`` with ``difference[v, i]`` the entry of ``v``'s
    ``i``-th neighbour.

    A visit reads its node's nonzero entries in the order of their places from a bit set
    (``_mark_places``): the change of backward mass is constant between the places of the
    moved node's neighbours, so only the first place of each run can be its first minimum,
    and the sums add the dense scan's nonzero terms in its order. A node's best insertion
    depends only on the order of the node and its neighbours, so a node that found no better
    place stays where it is until it or a neighbour moves: a sweep visits only the nodes
    marked since (``stale``), and makes the same moves as one that visits every node."""
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
            place = positions[node]
            _mark_places(node, difference, neighbours, degree, positions, p, words, at_place)
            prefix, best, target = 0.0, np.inf, place
            if place > 0:  # to place 0: no change
                best, target = 0.0, 0
            earlier, at_own_place = True, 0.0
            for w in range(words.shape[0]):
                bits = words[w]
                while bits != 0:
                    neighbour_place = (w << 6) + np.int64(lowest_bit(bits))
                    bits &= bits - ONE
                    if earlier and neighbour_place > place:
                        earlier, at_own_place = False, prefix
                        if prefix < best:
                            best, target = prefix, place
                    prefix += at_place[neighbour_place]
                    if earlier:  # to an earlier place, after this neighbour
                        if neighbour_place + 1 < place and prefix < best:
                            best, target = prefix, neighbour_place + 1
                    elif prefix < best:  # to a later place, onto this neighbour's
                        best, target = prefix, neighbour_place
            if earlier:
                at_own_place = prefix
                if prefix < best:
                    best, target = prefix, place
            if not best - at_own_place < threshold:
                continue
            improved = True
            move_node(permutation, positions, node, place, target)
            for i in range(degree[node]):
                if difference[node, i] != 0:
                    stale[neighbours[node, i]] = True
        if not improved:
            return


@_njit
def _backward_mass_sparse(outgoing, neighbours, degree, permutation, positions, words,
                          at_place):
    """``order_backward_mass``: each node's earlier neighbours in the order of their places."""
    p = permutation.shape[0]
    for place in range(p):
        positions[permutation[place]] = place
    total = 0.0
    for later in range(p):
        _mark_places(permutation[later], outgoing, neighbours, degree, positions, later, words,
                     at_place)
        for w in range(words.shape[0]):
            bits = words[w]
            while bits != 0:
                total += at_place[(w << 6) + np.int64(lowest_bit(bits))]
                bits &= bits - ONE
    return 0.5 * total


@_njit
def _search_one_sparse(outgoing, incoming, neighbours, degree, max_sweeps, rel_tol,
                       back_to_front, positions_out):
    """``_search_one`` for one sample's ``outgoing`` and ``incoming`` masses ``(p, D)``."""
    p = outgoing.shape[0]
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
    words = np.empty((p + 63) // 64, np.uint64)
    at_place = np.empty(p, outgoing.dtype)
    best = np.empty(p, np.int64)
    positions = np.empty(p, np.int64)
    best_cost = np.inf
    for start in range(count):
        if repeats_an_earlier_start(starts, start):
            continue
        permutation = starts[start].copy()
        _improve_sparse(difference, neighbours, degree, permutation, positions, max_sweeps,
                        threshold, words, at_place)
        cost = _backward_mass_sparse(outgoing, neighbours, degree, permutation, positions,
                                     words, at_place)
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
    for sample in numba.prange(batch):
        outgoing = np.zeros((p, width), slots.dtype)
        incoming = np.zeros((p, width), slots.dtype)
        for v in range(p):
            for i in range(degree[v]):
                if outgoing_slot[v, i] < size:
                    outgoing[v, i] = slots[sample, outgoing_slot[v, i]]
                if incoming_slot[v, i] < size:
                    incoming[v, i] = slots[sample, incoming_slot[v, i]]
        _search_one_sparse(outgoing, incoming, neighbours, degree, max_sweeps, rel_tol,
                           back_to_front, positions[sample])
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
