"""Tests for prodag.simulate: graph models, SEMs, noise, reproducibility and errors."""

import itertools

import numpy as np
import pytest

from prodag import simulate


def is_acyclic(adjacency):
    """Nilpotency oracle: a graph is a DAG iff its p-th adjacency power is zero."""
    A = (np.asarray(adjacency) != 0).astype(float)
    return not np.linalg.matrix_power(A, A.shape[0]).any()


def mlp_mean(weights, X):
    """Each node's network output on X, all nodes at once: (n, p)."""
    hidden = np.maximum(np.einsum("nj,jkd->nkd", X, weights["W1"]), 0.0)
    return np.einsum("nkd,kd->nk", hidden, weights["W2"])


# --- graphs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["er", "sf"])
@pytest.mark.parametrize("p,s", [(1, 0), (2, 1), (10, 0), (10, 20), (20, 40), (6, 15)])
def test_random_dag_has_exactly_s_edges_and_is_acyclic(kind, p, s):
    A = simulate.random_dag(p, s, kind=kind, seed=3)
    assert A.shape == (p, p) and A.dtype.kind == "i"
    assert set(np.unique(A)) <= {0, 1}
    assert A.sum() == s
    assert not np.diag(A).any()
    assert not (A & A.T).any()
    assert is_acyclic(A)


def test_random_dag_reproducible_and_seed_dependent():
    a = simulate.random_dag(15, 30, seed=7)
    np.testing.assert_array_equal(a, simulate.random_dag(15, 30, seed=7))
    assert not np.array_equal(a, simulate.random_dag(15, 30, seed=8))


def test_er_single_edge_uniform_over_directed_pairs():
    counts = np.zeros((4, 4))
    draws = 2400
    for seed in range(draws):
        counts += simulate.random_dag(4, 1, seed=seed)
    off_diagonal = counts[~np.eye(4, dtype=bool)]
    # each of the 12 directed edges has probability 1/12: 200 expected, sd ~ 13.5
    assert np.all(np.abs(off_diagonal - draws / 12) < 5 * np.sqrt(draws / 12))


def test_complete_graph_orientation_is_a_uniform_order():
    counts = {}
    for seed in range(1200):
        A = simulate.random_dag(3, 3, seed=seed)
        counts[A.tobytes()] = counts.get(A.tobytes(), 0) + 1
    assert len(counts) == 6  # the 3! orders give 6 distinct tournaments
    assert all(abs(c - 200) < 5 * np.sqrt(200) for c in counts.values())


def test_scale_free_degrees_are_more_unequal_than_er():
    def mean_max_degree(kind, exponent=2.0):
        degrees = [(A + A.T).sum(axis=0).max() for A in
                   (simulate.random_dag(20, 40, kind=kind, exponent=exponent, seed=seed)
                    for seed in range(60))]
        return np.mean(degrees)
    er, sf3, sf2 = mean_max_degree("er"), mean_max_degree("sf", 3.0), mean_max_degree("sf", 2.0)
    assert er < sf3 < sf2


@pytest.mark.parametrize("kwargs,match", [
    (dict(p=0, s=0), "p must be >= 1"),
    (dict(p=4, s=7), r"at most p\(p-1\)/2 = 6"),
    (dict(p=4, s=-1), "s must be >= 0"),
    (dict(p=4.0, s=1), "p must be an integer"),
    (dict(p=4, s=1, kind="ba"), "kind must be one of 'er', 'sf'"),
    (dict(p=4, s=1, kind="sf", exponent=1.0), "exponent"),
])
def test_random_dag_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate.random_dag(**kwargs)


def test_topological_order_and_cycle_error():
    A = np.zeros((4, 4), dtype=int)
    A[2, 0] = A[0, 3] = A[1, 3] = 1
    order = list(simulate.topological_order(A))
    assert sorted(order) == [0, 1, 2, 3]
    for j, k in zip(*np.nonzero(A)):
        assert order.index(j) < order.index(k)
    A[3, 2] = 1
    with pytest.raises(ValueError, match="cycle"):
        simulate.topological_order(A)


# --- datasets ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n,expected", [(5, 1), (14, 1), (15, 2), (25, 3), (100, 10), (1, 0)])
def test_validation_size_rounds_half_up(n, expected):
    data = simulate.dataset(3, 2, n, seed=0)
    assert data.X.shape == (n, 3) and data.X_val.shape == (expected, 3)
    assert data.n_val == expected


def test_explicit_n_val_and_settings_recorded():
    data = simulate.dataset(6, 5, 40, graph="sf", exponent=3.0, n_val=7, seed=2)
    assert data.X_val.shape == (7, 6)
    assert (data.p, data.s, data.n, data.graph, data.sem, data.noise, data.exponent,
            data.seed) == (6, 5, 40, "sf", "linear", "gaussian", 3.0, 2)
    assert data.adjacency.sum() == 5 and is_acyclic(data.adjacency)


def test_dataset_reproducible():
    a = simulate.dataset(8, 10, 50, sem="mlp", noise="gumbel", seed=11)
    b = simulate.dataset(8, 10, 50, sem="mlp", noise="gumbel", seed=11)
    c = simulate.dataset(8, 10, 50, sem="mlp", noise="gumbel", seed=12)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.X_val, b.X_val)
    np.testing.assert_array_equal(a.weights["W1"], b.weights["W1"])
    assert not np.array_equal(a.X, c.X)


def test_dataset_is_frozen():
    data = simulate.dataset(3, 1, 10, seed=0)
    with pytest.raises(AttributeError):
        data.X = None


def test_linear_weights_on_support_and_in_range():
    data = simulate.dataset(20, 40, 10, seed=5)
    W = data.weights
    assert np.array_equal(W != 0, data.adjacency == 1)
    magnitude = np.abs(W[W != 0])
    assert magnitude.min() >= 0.3 and magnitude.max() <= 0.7
    assert 0 < (W > 0).sum() < 40  # both signs occur


def test_linear_two_node_chain_by_hand():
    W = np.array([[0.0, 0.5], [0.0, 0.0]])
    E = np.array([[1.0, 2.0], [-1.0, 0.0]])
    np.testing.assert_allclose(simulate.linear_sem(W, E), [[1.0, 2.5], [-1.0, -0.5]])


@pytest.mark.parametrize("noise,mean,std", [
    ("gaussian", 0.0, 1.0),
    ("exponential", 1.0, 1.0),
    ("gumbel", 0.5772156649, np.pi / np.sqrt(6)),
])
def test_linear_residuals_have_the_noise_distribution(noise, mean, std):
    data = simulate.dataset(5, 6, 20000, noise=noise, seed=1)
    residual = np.vstack([data.X, data.X_val]) - np.vstack([data.X, data.X_val]) @ data.weights
    np.testing.assert_allclose(data.noise_mean, mean)
    np.testing.assert_allclose(data.noise_std, std)
    np.testing.assert_allclose(residual.mean(axis=0), mean, atol=0.05)
    np.testing.assert_allclose(residual.std(axis=0), std, rtol=0.05)
    if noise == "exponential":
        assert residual.min() > 0  # not centred, as in the paper


def test_heteroscedastic_noise_scales_fixed_per_variable():
    data = simulate.dataset(6, 5, 20000, noise="heteroscedastic", seed=4)
    assert np.all((data.noise_std > 2 / 3) & (data.noise_std < 4 / 3))
    assert np.ptp(data.noise_std) > 0
    residual = data.X - data.X @ data.weights
    np.testing.assert_allclose(residual.std(axis=0), data.noise_std, rtol=0.05)
    np.testing.assert_allclose(residual.mean(axis=0), 0.0, atol=0.05)


def test_mlp_structure_and_residuals():
    data = simulate.dataset(6, 8, 5000, sem="mlp", hidden_units=4, seed=9)
    W1, W2 = data.weights["W1"], data.weights["W2"]
    assert W1.shape == (6, 6, 4) and W2.shape == (6, 4) and data.hidden_units == 4
    np.testing.assert_array_equal(W1[data.adjacency == 0], 0.0)
    on_support = np.abs(W1[data.adjacency == 1])
    assert on_support.min() >= 0.3 and on_support.max() <= 0.7
    residual = data.X - mlp_mean(data.weights, data.X)
    np.testing.assert_allclose(residual.mean(axis=0), 0.0, atol=0.06)
    np.testing.assert_allclose(residual.std(axis=0), 1.0, rtol=0.06)
    # a variable with parents is not just its noise
    child = np.flatnonzero(data.adjacency.sum(axis=0))[0]
    assert np.abs(mlp_mean(data.weights, data.X)[:, child]).max() > 0.1


def test_semi_synthetic_uses_the_given_graph():
    A = np.zeros((5, 5))
    A[0, 1] = A[1, 2] = A[0, 4] = 2.5  # weighted input: nonzero means edge
    data = simulate.semi_synthetic(A, 30, seed=0)
    np.testing.assert_array_equal(data.adjacency, A != 0)
    assert np.array_equal(data.weights != 0, A != 0)
    assert data.graph == "given" and data.s == 3 and data.X_val.shape == (3, 5)
    again = simulate.semi_synthetic(A, 30, seed=0)
    np.testing.assert_array_equal(data.X, again.X)
    mlp = simulate.semi_synthetic(A, 30, sem="mlp", noise="exponential", seed=0)
    assert mlp.weights["W1"].shape == (5, 5, 10)


def test_semi_synthetic_errors():
    cycle = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="cycle"):
        simulate.semi_synthetic(cycle, 10)
    with pytest.raises(ValueError, match="square"):
        simulate.semi_synthetic(np.zeros((2, 3)), 10)
    with pytest.raises(ValueError, match="self-loops"):
        simulate.semi_synthetic(np.eye(2), 10)


@pytest.mark.parametrize("kwargs,match", [
    (dict(sem="gp"), "sem must be one of"),
    (dict(noise="laplace"), "noise must be one of"),
    (dict(graph="ws"), "graph must be one of"),
    (dict(n=0), "n must be >= 1"),
    (dict(n_val=-1), "n_val must be >= 0"),
    (dict(sem="mlp", hidden_units=0), "hidden_units must be >= 1"),
])
def test_dataset_errors(kwargs, match):
    settings = dict(p=4, s=3, n=10, seed=0) | kwargs
    with pytest.raises(ValueError, match=match):
        simulate.dataset(**settings)


def test_all_noise_sem_graph_combinations_run():
    for graph, sem, noise in itertools.product(simulate.GRAPH_KINDS, simulate.SEMS,
                                               simulate.NOISES):
        data = simulate.dataset(5, 4, 12, graph=graph, sem=sem, noise=noise, seed=1)
        assert np.isfinite(data.X).all() and data.X.shape == (12, 5)
