"""The compiled CPU search kernel returns exactly the orders of the pure-JAX search."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prodag import project
from prodag.projection.orders import forward_mask
from prodag.projection.search import search_positions
from prodag.projection.host_search import positions_on_host, uses_kernel

pytest.importorskip("numba")


def jax_search(squared, **options):
    p = squared.shape[-1]
    squared = squared * (1 - jnp.eye(p, dtype=squared.dtype))
    return np.asarray(jax.jit(jax.vmap(lambda a: search_positions(a, **options)))(squared))


@pytest.mark.parametrize("p", [2, 3, 7, 15, 30])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_orders_equal_the_jax_search(p, dtype):
    rng = np.random.default_rng(p)
    W = rng.normal(size=(40, p, p)).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        squared = jnp.asarray(W ** 2)
        expected = jax_search(squared)
        found = np.asarray(jax.jit(lambda s: positions_on_host(s, 10, 1e-6))(squared))
    np.testing.assert_array_equal(found, expected)


def test_kernel_orders_equal_the_jax_search_on_sparse_supports():
    """The kernel sums and updates each node's masses over its neighbour lists (the entries
    nonzero in some sample): on supports of every density, with empty nodes and ties, the
    orders are the JAX search's, which scans every entry. Integer weights keep every sum
    exact: the JAX search's prefix sums add in another order than the kernel's running sums,
    and with the runs of equal sums that zeros make, rounding alone would move first minima."""
    rng = np.random.default_rng(5)
    for density in (0.05, 0.15, 0.4):
        support = rng.random((30, 30)) < density
        weights = rng.integers(-3, 4, size=(40, 30, 30))
        squared = jnp.asarray((weights ** 2 * support).astype(np.float32))
        np.testing.assert_array_equal(np.asarray(positions_on_host(squared, 10, 1e-6)),
                                      jax_search(squared))


def test_lowest_bit_is_the_index_of_a_words_lowest_set_bit():
    """The compiled count of trailing zeros, against a scan of the bits, and the plain-Python
    fallback (used without numba) against both."""
    import numba

    from prodag.numba_jit import _lowest_bit_python, lowest_bit

    compiled = numba.njit(lambda word: lowest_bit(word))
    rng = np.random.default_rng(9)
    words = [1, 2 ** 63, 2 ** 63 + 1] + [int(w) | 1 << int(b) for w, b in zip(
        rng.integers(0, 2 ** 63, size=50, dtype=np.uint64), rng.integers(0, 64, size=50))]
    for word in words:
        scanned = next(bit for bit in range(64) if word >> bit & 1)
        assert compiled(np.uint64(word)) == scanned == _lowest_bit_python(np.uint64(word))


def test_kernel_options_match_the_jax_search():
    """Sweep cap and acceptance tolerance mean the same in both."""
    rng = np.random.default_rng(0)
    squared = jnp.asarray(rng.normal(size=(30, 25, 25)).astype(np.float32) ** 2)
    for max_sweeps, rel_tol in [(1, 1e-6), (3, 1e-2)]:
        expected = jax_search(squared, max_sweeps=max_sweeps, rel_tol=rel_tol)
        found = np.asarray(positions_on_host(squared, max_sweeps, rel_tol))
        np.testing.assert_array_equal(found, expected)


def test_without_the_back_to_front_start_the_kernel_matches_the_jax_search_and_costs_more():
    """Without the back-to-front greedy start both searches keep the best of the other two;
    since they drop one start of three, no order is cheaper than the three starts' and it is
    the same order wherever that start did not win alone."""
    rng = np.random.default_rng(3)
    squared = jnp.asarray(rng.normal(size=(60, 20, 20)).astype(np.float32) ** 2)
    expected = jax_search(squared, back_to_front=False)
    found = np.asarray(positions_on_host(squared, 10, 1e-6, back_to_front=False))
    np.testing.assert_array_equal(found, expected)
    three = np.asarray(positions_on_host(squared, 10, 1e-6))

    def cost(positions):  # in float64, so that two different orders never tie by rounding
        backward = positions[:, :, None] > positions[:, None, :]
        return 0.5 * np.where(backward, np.asarray(squared, np.float64), 0.0).sum(axis=(1, 2))

    assert np.all(cost(three) <= cost(found))
    differ = np.any(three != found, axis=1)
    assert 0 < differ.sum() < len(differ)  # the start wins some draws, not all
    assert np.all(cost(three)[differ] < cost(found)[differ])


def test_kernel_under_vmap_sees_the_whole_batch_and_keeps_its_shape():
    rng = np.random.default_rng(1)
    squared = jnp.asarray(rng.normal(size=(3, 4, 12, 12)).astype(np.float32) ** 2)
    nested = jax.jit(jax.vmap(lambda s: positions_on_host(s, 10, 1e-6)))(squared)
    flat = positions_on_host(squared.reshape(12, 12, 12), 10, 1e-6)
    assert nested.shape == (3, 4, 12)
    np.testing.assert_array_equal(np.asarray(nested).reshape(12, 12), np.asarray(flat))


def test_search_projection_runs_on_the_kernel_on_cpu_and_keeps_the_jax_answer():
    assert uses_kernel(n_kicks=0) == (jax.default_backend() == "cpu")
    assert not uses_kernel(n_kicks=4)
    rng = np.random.default_rng(2)
    W = rng.normal(size=(20, 14, 14)).astype(np.float32)
    positions = jax_search(jnp.asarray(W ** 2))
    expected = np.where(np.asarray(forward_mask(jnp.asarray(positions))), W, 0.0)
    np.testing.assert_array_equal(np.asarray(project(W, method="search")), expected)

