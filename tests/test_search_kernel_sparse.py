"""The search over neighbour lists returns the dense search's orders, bit for bit.

Marked slow (``pytest -m slow``): compiling its numba kernel takes 7 s alone and about 20 s
beside the other tests, and no default fit below p ≈ 200 runs it (it is chosen where the
support's mean neighbours are below ``SPARSE_BELOW · (p − 1)``), so the default suite would
pay that compile for no other test."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag.projection.host_search import SPARSE_BELOW, positions_on_host
from prodag.projection import search_kernel, search_kernel_sparse
from prodag.projection.parents import ParentTable, slot_search
from prodag.projection.search_kernel import neighbour_lists, search_positions_batch
from prodag.projection.search_kernel_sparse import on_neighbours, search_positions_batch_sparse

pytest.importorskip("numba")


@pytest.mark.slow
def test_the_search_on_neighbour_lists_returns_the_dense_search_orders():
    """Skipping the zeros outside a sparse support changes no sum: the same orders bit for
    bit, with ties (integer weights) and under a tight sweep cap and tolerance; and the
    projection's call with its support chooses the lists and keeps the orders (float32, the
    fit's dtype: each dtype compiles both kernels once more, and the argument is the same)."""
    rng = np.random.default_rng(7)
    for trial in range(12):
        p = int(rng.integers(2, 40))
        support = rng.random((p, p)) < rng.uniform(0.03, 0.3)
        np.fill_diagonal(support, False)
        weights = (rng.integers(-2, 3, size=(25, p, p)) if trial % 2 else
                   rng.normal(size=(25, p, p)))
        squared = np.ascontiguousarray((weights ** 2 * support).astype(np.float32))
        neighbours, degree = neighbour_lists(support)
        outgoing, incoming = on_neighbours(squared, neighbours, degree)
        for max_sweeps, rel_tol in [(10, 1e-6), (2, 1e-2)]:
            np.testing.assert_array_equal(
                search_positions_batch_sparse(outgoing, incoming, neighbours, degree,
                                              max_sweeps, rel_tol),
                search_positions_batch(squared, max_sweeps, rel_tol))
    p = 60
    support = rng.random((p, p)) < 0.03
    assert neighbour_lists(support)[1].mean() < SPARSE_BELOW * (p - 1)
    squared = jnp.asarray((rng.normal(size=(2, 10, p, p)) ** 2 * support).astype(np.float32))
    with_support = jax.jit(jax.vmap(lambda s: positions_on_host(s, 10, 1e-6, support)))(squared)
    np.testing.assert_array_equal(np.asarray(with_support),
                                  np.asarray(positions_on_host(squared, 10, 1e-6)))


@pytest.mark.slow
def test_the_searches_on_slots_return_the_dense_search_orders():
    """Both kernels that read a sample from its slots (each sample's masses or matrix made in
    its own thread) return the dense kernel's orders for the same samples, bit for bit, with
    ties, empty columns, under a tight sweep cap and without the back-to-front start."""
    rng = np.random.default_rng(11)
    for trial in range(8):
        p = int(rng.integers(2, 50))
        parents = tuple(tuple(sorted(rng.choice([u for u in range(p) if u != k],
                                                size=int(rng.integers(0, min(p - 1, 6) + 1)),
                                                replace=False)))
                        for k in range(p))
        table = ParentTable.from_lists(parents)
        search = slot_search(table)
        weights = (rng.integers(-2, 3, size=(20,) + table.parents.shape) if trial % 2 else
                   rng.normal(size=(20,) + table.parents.shape))
        slots = np.ascontiguousarray((weights ** 2 * table.valid).astype(np.float32))
        dense = np.asarray(table.dense(slots))
        flat = slots.reshape(20, -1)
        for max_sweeps, rel_tol, back in [(10, 1e-6, True), (2, 1e-2, True), (10, 1e-6, False)]:
            expected = search_positions_batch(dense, max_sweeps, rel_tol, back)
            np.testing.assert_array_equal(search_kernel.search_positions_batch_on_slots(
                flat, search.rows, search.cols, search.slots, search.neighbours, search.degree,
                max_sweeps, rel_tol, back), expected)
            np.testing.assert_array_equal(search_kernel_sparse.search_positions_batch_on_slots(
                flat, search.outgoing, search.incoming, search.neighbours, search.degree,
                max_sweeps, rel_tol, back), expected)


@pytest.mark.slow
def test_the_projection_on_slots_over_neighbour_lists_is_the_dense_projection():
    """On a support sparse enough for the lists, ``CandidateProjector.on_parents`` reads each
    node's masses from the slots and returns the dense projection's values on them."""
    from prodag.inputs.knowledge import Knowledge
    from prodag.projection.api import make_projector

    rng = np.random.default_rng(3)
    p = 60
    mask = rng.random((p, p)) < 0.03
    np.fill_diagonal(mask, False)
    knowledge = Knowledge(p, candidates=tuple(tuple(np.flatnonzero(mask[:, k]))
                                              for k in range(p)))
    project = make_projector("auto", 0.0, knowledge)
    assert neighbour_lists(project.table.mask())[1].mean() < SPARSE_BELOW * (p - 1)
    W_tilde = jnp.asarray(rng.normal(size=(8, p, p)) * mask, jnp.float32)
    for lam in (jnp.float32(3.0), jnp.float32(jnp.inf)):
        np.testing.assert_allclose(
            jax.jit(project.on_parents)(project.table.gather(W_tilde), lam),
            project.table.gather(project(W_tilde, lam)), atol=1e-6)
