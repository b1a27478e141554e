"""The scale-invariant order search: its score against direct regressions and brute force,
its invariances, and its use as the data start when every variable has its own variance."""

import itertools

import numpy as np
import pytest

from prodag import simulate
from prodag.inference.order_search import OrderScore, best_order, insertion_scores, mask_of


def _bic(X, k, parents):
    """The BIC of regressing standardised column ``k`` on ``parents`` by least squares."""
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    n = len(Z)
    if parents:
        coefficients = np.linalg.lstsq(Z[:, parents], Z[:, k], rcond=None)[0]
        residual = Z[:, k] - Z[:, parents] @ coefficients
    else:
        residual = Z[:, k]
    return n / 2 * np.log(residual @ residual / n) + np.log(n) / 2 * len(parents)


def test_node_score_is_the_bic_of_the_best_subset_of_predecessors():
    data = simulate.dataset(p=6, s=7, n=3000, seed=1)
    score = OrderScore(data.X)
    for k in range(6):
        predecessors = [j for j in range(6) if j != k]
        value, parents = score.node(k, mask_of(predecessors))
        assert value == pytest.approx(_bic(data.X, k, list(parents)), rel=1e-9)
        best = min(_bic(data.X, k, list(subset)) for size in range(6)
                   for subset in itertools.combinations(predecessors, size))
        assert value == pytest.approx(best, rel=1e-9)


def test_a_predecessor_set_beyond_the_first_byte_of_its_mask_is_read_whole():
    """Predecessors spread over three bytes of the bit mask: the score is the best subset's."""
    data = simulate.dataset(p=20, s=30, n=500, seed=3)
    score = OrderScore(data.X)
    predecessors = [17, 0, 9, 3, 12]
    value, parents = score.node(5, mask_of(predecessors))
    assert set(parents) <= set(predecessors)
    best = min(_bic(data.X, 5, list(subset)) for size in range(6)
               for subset in itertools.combinations(sorted(predecessors), size))
    assert value == pytest.approx(best, rel=1e-9)
    assert mask_of(predecessors) == (1 << 17) | 1 | (1 << 9) | (1 << 3) | (1 << 12)


def test_with_known_noise_variances_the_node_score_is_the_gaussian_bic_in_noise_units():
    data = simulate.dataset(p=6, s=7, n=500, seed=2)
    X = data.X * np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0])
    noise = np.array([1.0, 4.0, 0.25, 1.0, 9.0, 1.0])
    score = OrderScore(X, noise_variance=noise)
    centred = X - X.mean(axis=0)
    n = len(X)

    def bic(k, parents):
        residual = centred[:, k]
        if parents:
            design = centred[:, parents]
            residual = residual - design @ np.linalg.lstsq(design, residual, rcond=None)[0]
        return n / 2 * (residual @ residual / n) / noise[k] + np.log(n) / 2 * len(parents)

    for k in range(6):
        predecessors = [j for j in range(6) if j != k]
        value, parents = score.node(k, mask_of(predecessors))
        assert value == pytest.approx(bic(k, list(parents)), rel=1e-9)
        assert value == pytest.approx(min(bic(k, list(subset)) for size in range(6) for subset
                                          in itertools.combinations(predecessors, size)),
                                      rel=1e-9)


def test_with_known_noise_variances_the_search_finds_the_true_order_with_plenty_of_data():
    data = simulate.dataset(p=8, s=12, n=20000, seed=4)
    order = best_order(data.X, np.ones(8))
    positions = np.empty(8, dtype=int)
    positions[order] = np.arange(8)
    parents, children = np.nonzero(data.adjacency)
    assert np.all(positions[parents] < positions[children])


def test_insertion_scores_are_the_scores_of_the_inserted_orders():
    data = simulate.dataset(p=7, s=9, n=200, seed=2)
    score = OrderScore(data.X)
    others, v = [3, 0, 6, 1, 5, 4], 2
    totals = insertion_scores(score, others, v)
    expected = [score.total(others[:q] + [v] + others[q:]) for q in range(7)]
    np.testing.assert_allclose(totals, expected, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_best_order_reaches_the_best_score_of_every_order_on_a_small_graph(seed):
    data = simulate.dataset(p=5, s=6, n=2000, seed=seed)
    score = OrderScore(data.X)
    brute = min(score.total(order) for order in itertools.permutations(range(5)))
    assert score.total(best_order(data.X)) == pytest.approx(brute, rel=1e-9)


def test_best_order_ignores_each_columns_units_and_the_columns_order():
    data = simulate.dataset(p=12, s=18, n=150, seed=5)
    rng = np.random.default_rng(0)
    factors = 10.0 ** rng.uniform(-3, 3, 12)
    rescaled = data.X * factors + 100 * factors * rng.uniform(-1, 1, 12)
    order = best_order(data.X)
    np.testing.assert_array_equal(best_order(rescaled), order)
    permutation = rng.permutation(12)
    np.testing.assert_array_equal(permutation[best_order(data.X[:, permutation])], order)


def test_the_linear_sems_data_starts_follow_the_top_down_and_the_searched_orders():
    from prodag.config.starts import n_searched_graphs
    from prodag.inference.initialization import (ORDER_SEARCH_STARTS, linear_start,
                                       start_means)
    from prodag.inference.order_search import searched_orders

    data = simulate.dataset(p=8, s=10, n=100, seed=6)
    X = data.X - data.X.mean(axis=0)
    noise = np.full(8, 2.0)
    top_down, *others = start_means(X, noise, "linear")
    np.testing.assert_allclose(top_down["W"], linear_start(X, noise))
    orders = searched_orders(X, noise, n_graphs=n_searched_graphs(8),
                             n_starts=ORDER_SEARCH_STARTS)
    assert len(others) == len(orders) >= 1
    for start, order in zip(others, orders):
        np.testing.assert_allclose(start["W"], linear_start(X, noise, order=order))
    searched = others[0]
    (scale_free,) = start_means(X, noise, "linear", per_variable_noise=True)
    np.testing.assert_allclose(scale_free["W"], linear_start(X, noise, order=best_order(X)))
    assert not np.allclose(scale_free["W"], top_down["W"])
    assert not np.allclose(searched["W"], top_down["W"])


def test_the_top_down_order_matches_one_regression_per_variable_and_place():
    from prodag.inference.order_search import conditional_variance, top_down_order

    rng = np.random.default_rng(3)
    for p, n in ((6, 50), (12, 30)):
        X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
        covariance = np.cov(X.T)
        noise = rng.uniform(0.5, 2.0, size=p)
        placed, remaining = [], list(range(p))
        for _ in range(p):
            scores = [conditional_variance(covariance, k, placed) / noise[k] for k in remaining]
            placed.append(remaining.pop(int(np.argmin(scores))))
        np.testing.assert_array_equal(top_down_order(covariance, noise), placed)


def test_the_variances_left_along_the_top_down_order_are_the_regressions():
    """``top_down``'s pivots against one least-squares regression per place, with more rows
    than variables and with fewer (a singular covariance: the later variables have none
    left); and the noise start that uses them."""
    from prodag.inference.initialization import noise_variance_start
    from prodag.inference.order_search import conditional_variance, top_down

    rng = np.random.default_rng(4)
    for p, n in ((8, 50), (12, 6)):
        X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
        X -= X.mean(axis=0)
        covariance = X.T @ X / n
        order, left = top_down(covariance, np.ones(p))
        regressions = [conditional_variance(covariance, node, list(order[:place]))
                       for place, node in enumerate(order)]
        scale = np.max(np.diag(covariance))
        np.testing.assert_allclose(left, regressions, rtol=1e-7, atol=1e-9 * scale)
        assert noise_variance_start(X) == pytest.approx(max(np.mean(regressions), 0.0),
                                                        rel=1e-7, abs=1e-9 * scale)


def test_beyond_the_searched_size_best_order_returns_its_first_order(monkeypatch):
    from prodag.inference import order_search

    X = np.random.default_rng(0).normal(size=(40, 5))
    covariance = (X - X.mean(0)).T @ (X - X.mean(0)) / 40
    monkeypatch.setattr(order_search, "SEARCHED_UP_TO", 4)
    np.testing.assert_array_equal(order_search.best_order(X, np.ones(5)),
                                  order_search.top_down_order(covariance, np.ones(5)))


def test_on_standardised_data_the_top_down_order_does_not_follow_rounding():
    """Standardised, every variance is 1: the first place is a tie that rounding (here of
    each column's own change of units) must not decide. The most explained variable
    (largest R² on the others) takes it, whatever the units and the columns' order."""
    from prodag.inference.order_search import top_down_order

    X = simulate.dataset(p=6, s=8, n=200, seed=2).X
    units = np.array([1e-3, 1.0, 7.0, 1e3, 0.02, 50.0])
    orders = []
    for data in (X, X * units + 5.0):
        Z = (data - data.mean(axis=0)) / data.std(axis=0)
        for columns in (np.arange(6), np.arange(6)[::-1]):
            order = top_down_order(np.cov(Z[:, columns].T), np.ones(6))
            orders.append(columns[order])  # back to the original columns
    for order in orders[1:]:
        np.testing.assert_array_equal(order, orders[0])
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    r_squared = [1 - np.var(Z[:, k] - Z[:, [j for j in range(6) if j != k]] @ np.linalg.lstsq(
        Z[:, [j for j in range(6) if j != k]], Z[:, k], rcond=None)[0]) for k in range(6)]
    assert orders[0][0] == int(np.argmax(r_squared))


def test_on_candidates_the_top_down_order_conditions_on_the_placed_candidate_parents():
    """Against one regression per variable and place on its placed candidate parents; with
    every pair a candidate it is the dense rule's order and variances."""
    from prodag.inference.order_search import conditional_variance, top_down

    rng = np.random.default_rng(7)
    p, n = 10, 40
    X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
    X -= X.mean(axis=0)
    covariance = X.T @ X / n
    noise = rng.uniform(0.5, 2.0, size=p)
    candidates = rng.random((p, p)) < 0.4
    candidates |= candidates.T
    np.fill_diagonal(candidates, False)
    placed, remaining, left = [], list(range(p)), []
    for _ in range(p):
        given = [[j for j in placed if candidates[j, k]] for k in remaining]
        variances = [conditional_variance(covariance, k, g) for k, g in zip(remaining, given)]
        best = int(np.argmin(np.array(variances) / noise[remaining]))
        left.append(variances[best])
        placed.append(remaining.pop(best))
    order, pivots = top_down(covariance, noise, candidates)
    np.testing.assert_array_equal(order, placed)
    np.testing.assert_allclose(pivots, left, rtol=1e-9)
    every = ~np.eye(p, dtype=bool)
    dense_order, dense_left = top_down(covariance, noise)
    order, pivots = top_down(covariance, noise, every)
    np.testing.assert_array_equal(order, dense_order)
    np.testing.assert_allclose(pivots, dense_left, rtol=1e-7)


def test_with_fewer_rows_than_variables_the_true_parents_keep_the_top_down_order_right():
    """p = 60 variables, n = 30 rows: given all the placed variables, the later half has no
    variance left and the dense rule orders it by rounding; conditioned on each variable's
    true neighbours (here its candidates) the order reverses far fewer true edges (about half
    as many on six seeds' datasets)."""
    from prodag.inference.order_search import top_down_order

    data = simulate.dataset(p=60, s=120, n=30, seed=0)
    X = data.X - data.X.mean(axis=0)
    covariance = X.T @ X / len(X)
    truth = data.adjacency != 0

    def reversed_edges(order):
        place = np.empty(60, dtype=int)
        place[order] = np.arange(60)
        parents, children = np.nonzero(truth)
        return int(np.sum(place[parents] > place[children]))

    dense = reversed_edges(top_down_order(covariance, np.ones(60)))
    screened = reversed_edges(top_down_order(covariance, np.ones(60), truth | truth.T))
    assert screened < 0.7 * dense, (screened, dense)


def test_on_candidates_a_variables_parents_are_chosen_among_its_candidate_predecessors():
    data = simulate.dataset(p=9, s=12, n=80, seed=4)
    rng = np.random.default_rng(1)
    candidates = rng.random((9, 9)) < 0.5
    np.fill_diagonal(candidates, False)
    dense, screened = OrderScore(data.X, 1.0, np.ones(9)), OrderScore(data.X, 1.0, np.ones(9),
                                                                    candidates)
    for k in range(9):
        for predecessors in rng.integers(0, 2 ** 9, size=6):
            allowed = int(predecessors) & mask_of(np.flatnonzero(candidates[:, k]))
            assert screened.node(k, int(predecessors)) == dense.node(k, allowed)


def test_beyond_the_dense_search_the_search_runs_on_candidates(monkeypatch):
    """Above ``SEARCHED_UP_TO`` variables the dense search returns its first order; on
    candidates (up to ``SEARCHED_ON_CANDIDATES_UP_TO``) it searches: with the true neighbours
    as candidates the top-down order puts a true edge backwards here, the searched one none."""
    from prodag.inference import order_search

    data = simulate.dataset(p=12, s=18, n=150, seed=5)
    truth = data.adjacency != 0
    candidates = truth | truth.T
    X = data.X - data.X.mean(axis=0)
    first = order_search.top_down_order(X.T @ X / len(X), np.ones(12), candidates)
    monkeypatch.setattr(order_search, "SEARCHED_UP_TO", 10)
    (unsearched,) = order_search.searched_orders(data.X, np.ones(12))
    np.testing.assert_array_equal(
        unsearched, order_search.top_down_order(X.T @ X / len(X), np.ones(12)))
    (searched,) = order_search.searched_orders(data.X, np.ones(12), candidates=candidates)
    score = OrderScore(data.X, 1.0, np.ones(12), candidates)
    assert score.total(list(searched)) <= score.total(list(first))
    def backwards(order):
        place = np.empty(12, dtype=int)
        place[order] = np.arange(12)
        parents, children = np.nonzero(truth)
        return int(np.sum(place[parents] > place[children]))

    assert backwards(first) >= 1
    assert backwards(searched) == 0
    monkeypatch.setattr(order_search, "SEARCHED_ON_CANDIDATES_UP_TO", 11)
    (beyond,) = order_search.searched_orders(data.X, np.ones(12), candidates=candidates)
    np.testing.assert_array_equal(beyond, first)
