"""Graph utilities: acyclicity, topological orders and the cycle clean-up."""

import itertools

import jax
import numpy as np
import pytest

from prodag.graph import covered_edges, cpdag, is_dag, topological_order
from prodag.projection.cycles import edges_on_cycles, remove_cycles


def cycle_by_brute_force(adjacency):
    """True when no order of the nodes puts every edge forward, i.e. the graph has a cycle."""
    p = adjacency.shape[0]
    for perm in itertools.permutations(range(p)):
        pos = np.empty(p, int)
        pos[list(perm)] = np.arange(p)
        if not np.any(adjacency & (pos[:, None] >= pos[None, :])):
            return False
    return True


def test_is_dag_matches_brute_force_on_random_graphs():
    rng = np.random.default_rng(0)
    graphs = rng.random((200, 5, 5)) < 0.25
    expected = np.array([not cycle_by_brute_force(g) for g in graphs])
    np.testing.assert_array_equal(is_dag(graphs), expected)
    assert expected.any() and not expected.all()


def test_is_dag_edge_cases():
    assert is_dag(np.zeros((1, 1)))
    assert not is_dag(np.ones((1, 1)))  # a self-loop is a cycle
    assert not is_dag(np.array([[0, 1], [1, 0]]))
    assert is_dag(np.array([[0, 2.0], [0, 0]]))
    assert is_dag(np.zeros((3, 4, 4))).shape == (3,)
    with pytest.raises(ValueError, match="p, p"):
        is_dag(np.zeros((3, 4)))


def test_topological_order_respects_edges():
    rng = np.random.default_rng(1)
    p = 7
    perms = np.array([rng.permutation(p) for _ in range(20)])
    upper = np.triu(rng.random((20, p, p)) < 0.5, 1)
    graphs = np.stack([u[np.ix_(np.argsort(q), np.argsort(q))] for u, q in zip(upper, perms)])
    orders = topological_order(graphs)
    for graph, order in zip(graphs, orders):
        pos = np.empty(p, int)
        pos[order] = np.arange(p)
        assert sorted(order) == list(range(p))
        assert not np.any(graph & (pos[:, None] >= pos[None, :]))
    with pytest.raises(ValueError, match="cycle"):
        topological_order(np.array([[0, 1], [1, 0]]))


def test_edges_on_cycles():
    # 0 → 1 → 2 → 0 is a cycle; 2 → 3 is not on any cycle.
    A = np.zeros((4, 4), bool)
    A[0, 1] = A[1, 2] = A[2, 0] = A[2, 3] = True
    expected = A.copy()
    expected[2, 3] = False
    np.testing.assert_array_equal(np.asarray(edges_on_cycles(A)), expected)


def test_remove_cycles_drops_lightest_cycle_edges_only():
    # Two disjoint cycles and a heavy acyclic edge; each cycle loses its lightest edge.
    A = np.zeros((6, 6), bool)
    weights = np.zeros((6, 6))
    for (j, k), w in {(0, 1): 3.0, (1, 2): 0.5, (2, 0): 2.0, (3, 4): 1.0, (4, 3): -0.2,
                      (2, 5): 0.01}.items():
        A[j, k] = True
        weights[j, k] = w
    support, n_removed = jax.jit(remove_cycles)(A, weights)
    expected = A.copy()
    expected[1, 2] = expected[4, 3] = False
    np.testing.assert_array_equal(np.asarray(support), expected)
    assert int(n_removed) == 2


def test_remove_cycles_random_supports_become_dags_and_keep_acyclic_edges():
    rng = np.random.default_rng(2)
    supports = rng.random((50, 6, 6)) < 0.4
    weights = rng.normal(size=(50, 6, 6))
    cleaned, removed = jax.jit(jax.vmap(remove_cycles))(supports, weights)
    cleaned = np.asarray(cleaned)
    assert is_dag(cleaned).all()
    assert not np.any(cleaned & ~supports)
    off_cycle = supports & ~np.asarray(jax.vmap(edges_on_cycles)(supports))
    off_cycle &= ~np.eye(6, dtype=bool)
    assert np.all(cleaned[off_cycle])
    np.testing.assert_array_equal(
        np.asarray(removed), (supports & ~np.eye(6, dtype=bool)).sum((1, 2)) - cleaned.sum((1, 2)))


def _v_structures(D):
    p = len(D)
    return {(a, c, b) for c in range(p) for a in range(p) for b in range(a + 1, p)
            if D[a, c] and D[b, c] and not (D[a, b] or D[b, a])}


def _equivalence_class(D):
    """Every DAG with the skeleton and v-structures of ``D``, by brute force over
    orientations (Verma & Pearl: these are exactly the Markov equivalent DAGs)."""
    pairs = [(j, k) for j, k in zip(*np.nonzero(np.triu(D | D.T)))]
    members = []
    for flips in itertools.product((False, True), repeat=len(pairs)):
        M = np.zeros_like(D)
        for (j, k), flip in zip(pairs, flips):
            M[(k, j) if flip else (j, k)] = 1
        if is_dag(M) and _v_structures(M) == _v_structures(D):
            members.append(M)
    return members


def test_cpdag_matches_the_brute_force_equivalence_class():
    rng = np.random.default_rng(0)
    for _ in range(60):
        p = int(rng.integers(2, 6))
        D = np.triu(rng.random((p, p)) < 0.5, k=1).astype(np.int64)
        perm = rng.permutation(p)
        D = D[np.ix_(perm, perm)]
        directed, undirected = cpdag(D)
        members = _equivalence_class(D)
        assert any((M == D).all() for M in members)
        always = np.all(members, axis=0).astype(np.int64)   # j -> k in every member
        np.testing.assert_array_equal(directed, always)
        np.testing.assert_array_equal(undirected, (D | D.T) - always - always.T)


def test_covered_edges_are_exactly_the_reversals_that_stay_in_the_class():
    # Chickering (1995, Lemma 1): reversing j -> k gives an equivalent DAG iff it is covered.
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(60):
        p = int(rng.integers(2, 7))
        D = np.triu(rng.random((p, p)) < 0.5, k=1).astype(np.int64)
        perm = rng.permutation(p)
        D = D[np.ix_(perm, perm)]
        covered = set(covered_edges(D))
        for j, k in zip(*np.nonzero(D)):
            R = D.copy()
            R[j, k], R[k, j] = 0, 1
            equivalent = bool(is_dag(R)) and all(
                (a == b).all() for a, b in zip(cpdag(R), cpdag(D)))
            assert ((int(j), int(k)) in covered) == equivalent
            checked += 1
    assert checked > 100


def test_cpdag_of_a_chain_and_a_collider():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    directed, undirected = cpdag(chain)
    assert directed.sum() == 0 and undirected.sum() == 4
    collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    directed, undirected = cpdag(collider)
    np.testing.assert_array_equal(directed, collider)
    assert undirected.sum() == 0
