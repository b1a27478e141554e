"""``samples.npz``, the posterior graphs ``prodag fit`` draws: written and read a block of
draws at a time, so that no ``(draws, p, p)`` array is held for large graphs.

Two layouts, told apart by the names of their arrays:

* dense, while the graphs fit in ``DENSE_BYTES``: ``samples``, float64 ``(draws, p, p)``
  (``[s, j, k]``: the weight of j → k in draw s), and ``variables``, the ``p`` names;
* sparse, beyond: the nonzero entries of every draw, ``draw``, ``parent`` and ``child``
  (int32) and ``weight`` (float64), one element per entry, in draw order (within a draw row
  by row, as ``np.nonzero`` lists them); ``shape``, ``(draws, p, p)``; and ``variables``.

``write_samples`` writes either from blocks ``(b, p, p)`` (``ProDAG.sample_batches``);
``read_entries`` reads either as its nonzero ``Entries``, whose ``blocks`` are dense blocks
``(b, p, p)``; ``read_blocks`` gives those of a file and ``read_samples`` its whole array (for
small graphs). NumPy only: reading a file starts no JAX.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

DENSE_BYTES = 2 ** 28
"""The largest ``(draws, p, p)`` float64 array (256 MiB) that ``write_samples`` writes dense;
a larger one is written sparse. The rule depends on the number of draws and ``p`` alone, not
on how many edges the draws have, so a fit's layout is known before it draws and the same
settings always give the same layout: with the default 1000 draws, dense (as every file was
before the sparse layout) up to p = 183, sparse from p = 184. Up to this size the dense array
and the copies made while it is drawn and written fit in a laptop's memory; at p = 1000 it
would take 8 GB, while an entry of the sparse layout takes 20 bytes, so 1000 draws of 16 000
edges each (16 candidate parents a variable) take 320 MB."""
BLOCK_DRAWS = 100
"""Draws a block of ``Entries.blocks`` and ``read_blocks``, as in a block of
``ProDAG.sample_batches``: ``(100, p, p)`` is 800 MB at p = 1000."""
INDEX = np.int32
"""The dtype of the sparse layout's ``draw``, ``parent`` and ``child``."""
DENSE_NAMES = frozenset({"samples", "variables"})
"""The arrays of the dense layout."""
SPARSE_NAMES = frozenset({"draw", "parent", "child", "weight", "shape", "variables"})
"""The arrays of the sparse layout."""


class Entries(NamedTuple):
    """The nonzero entries of sampled graphs ``(draws, p, p)``: ``draw``, ``parent``, ``child``
    and ``weight``, one element per entry, in draw order (within a draw row by row), and the
    ``shape`` of the graphs."""

    draw: np.ndarray
    parent: np.ndarray
    child: np.ndarray
    weight: np.ndarray
    shape: tuple[int, int, int]

    def edge_probabilities(self) -> np.ndarray:
        """The share of the draws with each edge j → k, ``(p, p)``: exactly
        ``prodag.evaluation.metrics.edge_probabilities`` of the dense graphs."""
        n, p, _ = self.shape
        counts = np.bincount(self._edges(), minlength=p * p)
        return counts.reshape(p, p) / n

    def edge_weights(self):
        """``((j, k), weights (m,))`` for every entry j → k nonzero in some draw, row by row:
        its ``m`` nonzero weights in draw order."""
        p = self.shape[1]
        edges = self._edges()
        order = np.argsort(edges, kind="stable")
        found, starts = np.unique(edges[order], return_index=True)
        for edge, weights in zip(found, np.split(self.weight[order], starts[1:])):
            yield divmod(int(edge), p), weights

    def blocks(self, size: int = BLOCK_DRAWS):
        """The dense graphs, ``size`` draws ``(size, p, p)`` at a time (fewer in the last)."""
        n, p, _ = self.shape
        for start in range(0, n, size):
            stop = min(start + size, n)
            first, last = np.searchsorted(self.draw, [start, stop])
            block = np.zeros((stop - start, p, p), dtype=self.weight.dtype)
            block[self.draw[first:last] - start, self.parent[first:last],
                  self.child[first:last]] = self.weight[first:last]
            yield block

    def _edges(self) -> np.ndarray:
        """Each entry's edge as the flat index ``j · p + k`` (int64)."""
        return self.parent.astype(np.int64) * self.shape[1] + self.child


def entries_of(blocks) -> Entries:
    """The ``Entries`` of graphs given as blocks ``(b, p, p)`` (their concatenation the
    draws), one block at a time."""
    parts, n, p = [], 0, None
    for block in blocks:
        draw, parent, child = np.nonzero(block)
        parts.append(((draw + n).astype(INDEX), parent.astype(INDEX), child.astype(INDEX),
                      block[draw, parent, child]))
        n, p = n + len(block), block.shape[1]
    if not parts:
        raise ValueError("no sampled graphs: give at least one block (b, p, p).")
    return Entries(*(np.concatenate(arrays) for arrays in zip(*parts)), shape=(n, p, p))


def writes_dense(n_draws: int, p: int) -> bool:
    """Whether ``write_samples`` writes ``n_draws`` graphs of ``p`` variables in the dense
    layout (``DENSE_BYTES``)."""
    return 8 * n_draws * p * p <= DENSE_BYTES


def write_samples(path: Path, blocks, n_draws: int, variables: list[str]) -> Entries:
    """Write the ``n_draws`` graphs given as blocks ``(b, p, p)`` and their ``variables``
    into ``path``: dense where ``writes_dense``, else sparse (one block and the entries held at
    a time); return their ``Entries``."""
    names = np.array(variables)
    if writes_dense(n_draws, len(variables)):
        samples = np.concatenate(list(blocks))
        np.savez_compressed(path, samples=samples, variables=names)
        return entries_of([samples])
    entries = entries_of(blocks)
    np.savez_compressed(path, draw=entries.draw, parent=entries.parent, child=entries.child,
                        weight=entries.weight, shape=np.array(entries.shape), variables=names)
    return entries


def holds_samples(names) -> bool:
    """Whether an ``.npz`` archive with the arrays ``names`` is a samples file (either
    layout)."""
    return DENSE_NAMES <= set(names) or SPARSE_NAMES <= set(names)


def read_variables(path: Path) -> list[str]:
    """The variable names of the samples file ``path``."""
    with np.load(path, allow_pickle=False) as archive:
        return [str(name) for name in archive["variables"]]


def read_entries(path: Path) -> Entries:
    """The ``Entries`` of the samples file ``path`` (either layout), checked to fit together
    (a ``ValueError`` naming the file otherwise)."""
    with np.load(path, allow_pickle=False) as archive:
        if "samples" in archive.files:
            return entries_of([_dense(archive, path)])
        entries = Entries(*(archive[name] for name in ("draw", "parent", "child", "weight")),
                          shape=tuple(int(size) for size in archive["shape"]))
    shape = entries.shape
    bounds = zip((entries.draw, entries.parent, entries.child), shape)
    if (len(shape) != 3 or shape[1] != shape[2] or shape[0] < 1
            or len({len(array) for array in entries[:4]}) != 1
            or any(array.dtype.kind not in "iu" or np.any((array < 0) | (array >= bound))
                   for array, bound in bounds)
            or np.any(np.diff(entries.draw) < 0)):
        raise ValueError(f"{path} is not a samples.npz written by prodag: its entries (draw, "
                         f"parent, child, weight) do not fit its shape {shape}.")
    return entries


def read_blocks(path: Path, size: int = BLOCK_DRAWS):
    """The graphs of the samples file ``path`` (either layout) as dense blocks
    ``(size, p, p)`` in draw order (fewer in the last)."""
    return read_entries(path).blocks(size)


def read_samples(path: Path) -> np.ndarray:
    """The graphs ``(draws, p, p)`` of the samples file ``path`` (either layout) as one
    array: for small graphs (8 GB for 1000 draws at p = 1000; ``read_blocks`` holds one block
    at a time)."""
    with np.load(path, allow_pickle=False) as archive:
        if "samples" in archive.files:
            return _dense(archive, path)
    return np.concatenate(list(read_blocks(path)))


def _dense(archive, path: Path) -> np.ndarray:
    """The ``samples`` of a dense layout, checked to be a stack ``(draws, p, p)``."""
    samples = archive["samples"]
    if samples.ndim != 3 or samples.shape[1] != samples.shape[2] or not len(samples):
        raise ValueError(f"{path}: 'samples' must hold graphs (draws, p, p); it has shape "
                         f"{samples.shape}.")
    return samples
