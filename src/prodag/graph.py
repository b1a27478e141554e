"""Directed-graph utilities on adjacency matrices ``(..., p, p)`` (``[j, k]``: j → k), numpy only.

Conversions between edge lists and adjacency matrices (``adjacency_from_edges``, ``edge_names``),
acyclicity checks (``is_dag``, ``topological_order``) and the Markov equivalence class of a DAG
(``cpdag``). The cycle clean-up that runs inside compiled code lives with the path projection
(``prodag.projection.cycles``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd


def _as_adjacency(A) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"expected adjacency matrices of shape (..., p, p); got {A.shape}.")
    return A != 0


def adjacency_from_edges(edges, variables) -> np.ndarray:
    """``(p, p)`` int 0/1 adjacency over ``variables`` (``[j, k] = 1`` for j → k).

    ``edges``: ``(source, target)`` pairs of names, a DataFrame with columns ``source`` and
    ``target``, or a ``networkx.DiGraph``; an edge naming an unknown variable is an error.
    """
    if isinstance(edges, pd.DataFrame):
        pairs = list(zip(edges["source"], edges["target"]))
    elif hasattr(edges, "edges") and hasattr(edges, "nodes"):  # networkx.DiGraph
        pairs = list(edges.edges)
    else:
        pairs = list(edges)
    index = {str(name): j for j, name in enumerate(variables)}
    unknown = sorted({str(n) for pair in pairs for n in pair} - set(index))
    if unknown:
        raise ValueError(f"the graph names variables that are not in the data: {unknown}.")
    graph = np.zeros((len(index), len(index)), dtype=np.int64)
    for source, target in pairs:
        graph[index[str(source)], index[str(target)]] = 1
    return graph


def edge_names(adjacency, variables) -> list[tuple[str, str]]:
    """The edges ``(source, target)`` of a ``(p, p)`` adjacency, named by ``variables``."""
    adjacency = np.asarray(adjacency)
    p = len(variables)
    if adjacency.shape != (p, p):
        raise ValueError(f"the graph must have shape ({p}, {p}), one row and column per "
                         f"variable; got {adjacency.shape}.")
    return [(variables[j], variables[k]) for j, k in zip(*np.nonzero(adjacency))]


def is_dag(A) -> np.ndarray | bool:
    """Whether each ``(p, p)`` slice of ``A (..., p, p)`` is acyclic (self-loops are cycles).

    Returns a bool for a single matrix, else a bool array of the batch shape ``(...)``.
    Kahn's algorithm, vectorised over the batch: strip sources until none is left.
    """
    adjacency = _as_adjacency(A)
    batch_shape = adjacency.shape[:-2]
    p = adjacency.shape[-1]
    edges = adjacency.reshape((-1, p, p)).copy()
    remaining = np.ones(edges.shape[:2], dtype=bool)
    for _ in range(p):
        indegree = (edges & remaining[:, :, None]).sum(axis=1)
        sources = remaining & (indegree == 0)
        if not sources.any():
            break
        remaining &= ~sources
    acyclic = ~remaining.any(axis=1)
    return bool(acyclic[0]) if batch_shape == () else acyclic.reshape(batch_shape)


def topological_order(A) -> np.ndarray:
    """A topological order ``(..., p)`` (node at each place; ties broken by node index).

    Raises:
        ValueError: if some slice contains a directed cycle.
    """
    adjacency = _as_adjacency(A)
    batch_shape = adjacency.shape[:-2]
    p = adjacency.shape[-1]
    edges = adjacency.reshape((-1, p, p))
    orders = np.empty(edges.shape[:2], dtype=np.int64)
    rows = np.arange(edges.shape[0])
    remaining = np.ones(edges.shape[:2], dtype=bool)
    indegree = edges.sum(axis=1, dtype=np.int64)  # parents not yet placed: O(p²) in all
    for place in range(p):
        candidates = remaining & (indegree == 0)
        if not candidates.any(axis=1).all():
            raise ValueError("the graph contains a directed cycle; it has no topological order.")
        node = np.argmax(candidates, axis=1)
        orders[:, place] = node
        remaining[rows, node] = False
        indegree -= edges[rows, node]
    return orders.reshape(batch_shape + (p,))


def covered_edges(A) -> list[tuple[int, int]]:
    """The covered edges ``(j, k)`` of the DAG ``A (p, p)``: j → k with ``pa(k) = pa(j) ∪ {j}``.

    Reversing one of them gives a DAG in the same Markov equivalence class, and every member
    of the class is reached from any other by such reversals (Chickering 1995).
    """
    D = _as_adjacency(A) != 0
    return [(int(j), int(k)) for j, k in zip(*np.nonzero(D))
            if np.array_equal(np.delete(D[:, k], j), np.delete(D[:, j], j))]


def cpdag(A) -> tuple[np.ndarray, np.ndarray]:
    """The Markov equivalence class of the DAG ``A (p, p)`` as its completed partially
    directed graph: ``(directed, undirected)``, two ``(p, p)`` 0/1 arrays, ``directed[j, k]``
    for a compelled edge j → k and ``undirected`` symmetric for the reversible ones.

    The v-structures j → k ← i (i, j not adjacent) are compelled, then Meek's rules R1-R3
    orient what they force, until nothing changes (R4 is not needed when starting from the
    v-structures of a DAG; Meek 1995).
    """
    D = (_as_adjacency(A) != 0).astype(np.int64)
    p = D.shape[0]
    skeleton = D | D.T
    directed = np.zeros_like(D)
    for child in range(p):
        parents = np.flatnonzero(D[:, child])
        for a, b in itertools.combinations(parents, 2):
            if not skeleton[a, b]:
                directed[a, child] = directed[b, child] = 1
    undirected = skeleton * (1 - directed) * (1 - directed.T)
    changed = True
    while changed:
        changed = False
        for x, y in zip(*np.nonzero(undirected)):
            if undirected[x, y] and _meek_orients(x, y, directed, undirected, skeleton):
                directed[x, y], undirected[x, y], undirected[y, x] = 1, 0, 0
                changed = True
    return directed, undirected


def _meek_orients(x: int, y: int, directed, undirected, skeleton) -> bool:
    """Whether Meek's R1, R2 or R3 orients the undirected edge x - y as x → y."""
    p = skeleton.shape[0]
    if any(directed[z, x] and not skeleton[z, y] for z in range(p)):       # R1
        return True
    if any(directed[x, z] and directed[z, y] for z in range(p)):           # R2
        return True
    into_y = [z for z in range(p) if undirected[x, z] and directed[z, y]]  # R3
    return any(not skeleton[a, b] for a, b in itertools.combinations(into_y, 2))


def directed_paths(graphs: np.ndarray) -> np.ndarray:
    """``(n, p, p)`` bool: whether each graph of ``graphs (n, p, p)`` (nonzero = edge) has a
    directed path j → … → k (the transitive closure, by repeated squaring)."""
    reach = np.asarray(graphs) != 0
    while True:
        longer = reach | (np.matmul(reach.astype(np.int32), reach.astype(np.int32)) > 0)
        if np.array_equal(longer, reach):
            return reach
        reach = longer


def longest_path(graphs: np.ndarray) -> int:
    """The most edges on a directed path of any graph in ``graphs (n, p, p)``: a simulation
    through ``longest_path + 1`` sweeps of ``x ← f(x) + ε`` is exact."""
    edges = (np.asarray(graphs) != 0).astype(np.int32)
    walks, length = edges, 0
    while walks.any():
        walks, length = (np.matmul(walks, edges) > 0).astype(np.int32), length + 1
    return length
