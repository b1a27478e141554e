"""Directed-graph utilities on adjacency matrices ``(..., p, p)`` (``[j, k]``: j → k), numpy only.

Conversions between edge lists and adjacency matrices (``adjacency_from_edges``, ``edge_names``)
and acyclicity checks (``is_dag``, ``topological_order``). The cycle clean-up that runs inside
compiled code lives with the path projection (``prodag.projection.cycles``).
"""

from __future__ import annotations

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
    for place in range(p):
        indegree = (edges & remaining[:, :, None]).sum(axis=1)
        candidates = remaining & (indegree == 0)
        if not candidates.any(axis=1).all():
            raise ValueError("the graph contains a directed cycle; it has no topological order.")
        node = np.argmax(candidates, axis=1)
        orders[:, place] = node
        remaining[rows, node] = False
    return orders.reshape(batch_shape + (p,))
