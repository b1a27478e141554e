"""What orients a posterior's edges (``prodag.posterior.sortability``): varsortability and
R²-sortability on hand-computed examples, the report's units, and when it is warned about."""

import warnings

import numpy as np
import pytest

from prodag.inputs.assumptions import AssumptionWarning
from prodag.posterior.sortability import (describe, orientation_report, r_squared, scale_orients,
                                sortability, warn_scale_orientation)

CHAIN = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], float)  # x0 -> x1 -> x2


def _chain_data(n=20000, seed=0):
    """x0 -> x1 -> x2 with weight 1 and unit noise: variances 1, 2, 3; R² 1/2, 3/4, 2/3
    (the precision matrix is (I - W)(I - W)ᵀ, diagonal 2, 2, 1; R²_j = 1 − 1/(Σ_jj Θ_jj))."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((n, 3))
    x0 = noise[:, 0]
    x1 = x0 + noise[:, 1]
    return np.column_stack([x0, x1, x1 + noise[:, 2]])


def test_sortability_by_hand():
    probabilities = np.zeros((3, 3))
    probabilities[0, 1], probabilities[1, 2], probabilities[2, 0] = 1.0, 0.5, 0.25
    # 0 -> 1 and 1 -> 2 point up the scores, 2 -> 0 down: (1 + 0.5) / 1.75
    assert sortability(probabilities, [1.0, 2.0, 3.0]) == pytest.approx(1.5 / 1.75)
    assert sortability(probabilities, [3.0, 2.0, 1.0]) == pytest.approx(0.25 / 1.75)
    assert sortability(probabilities, [1.0, 1.0, 1.0 + 1e-12]) == 0.5  # ties count half
    assert sortability(np.zeros((3, 3)), [1.0, 2.0, 3.0]) is None  # no edge: undefined
    assert sortability(np.eye(3), [1.0, 2.0, 3.0]) is None  # the diagonal is no edge


def test_the_true_chain_is_varsortable_and_standardising_removes_it():
    X = _chain_data()
    assert sortability(CHAIN, [1.0, 2.0, 3.0]) == 1.0 and sortability(CHAIN.T, [1, 2, 3]) == 0
    np.testing.assert_allclose(X.var(axis=0), [1, 2, 3], rtol=0.05)
    assert sortability(CHAIN, X.var(axis=0)) == 1.0
    standardised = (X - X.mean(axis=0)) / X.std(axis=0)
    assert sortability(CHAIN, standardised.var(axis=0)) == 0.5


def test_r_squared_by_hand_and_against_least_squares():
    X = _chain_data()
    np.testing.assert_allclose(r_squared(X), [1 / 2, 3 / 4, 2 / 3], atol=0.02)
    # 0 -> 1 goes up in R², 1 -> 2 down: half the true chain's edges agree
    assert sortability(CHAIN, r_squared(X)) == 0.5
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(50, 4)) @ rng.normal(size=(4, 4))
    for j in range(4):
        others = np.column_stack([np.ones(50), np.delete(Y, j, axis=1)])
        residual = Y[:, j] - others @ np.linalg.lstsq(others, Y[:, j], rcond=None)[0]
        expected = 1 - residual.var() / Y[:, j].var()
        assert r_squared(Y)[j] == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(r_squared(Y * [1e-3, 1, 1e4, 7]), r_squared(Y), atol=1e-10)
    np.testing.assert_array_equal(r_squared(Y[:3]), np.ones(4))  # n <= p: every fit exact


def test_the_report_gives_both_units():
    X = _chain_data(2000)
    scale = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / scale  # standardised, as the model sees it
    report = orientation_report(CHAIN * 0.8, Z, scale)
    assert report["expected_edges"] == pytest.approx(1.6)
    assert report["varsortability"] == 0.5 and report["varsortability_data_units"] == 1.0
    assert report["r2_sortability"] == 0.5
    common = orientation_report(CHAIN, X / 2.0, np.full(3, 2.0))
    assert common["varsortability"] == common["varsortability_data_units"] == 1.0


@pytest.mark.parametrize("standardize, noise, edges, value, expected", [
    (False, "equal", 3.0, 0.95, True), (False, "quietest", 3.0, 0.9, True),
    (False, 1.0, 3.0, 0.95, True), (False, np.ones(3), 3.0, 0.95, True),
    (True, "equal", 3.0, 0.95, False), (False, "estimate", 3.0, 0.95, False),
    (False, np.array([1.0, 2.0, 1.0]), 3.0, 0.95, False), (False, "equal", 1.5, 1.0, False),
    (False, "equal", 3.0, 0.85, False), (False, "equal", 0.0, None, False)])
def test_scale_orients_only_with_one_noise_variance_on_unstandardised_data(
        standardize, noise, edges, value, expected):
    report = {"expected_edges": edges, "varsortability": value}
    assert scale_orients(report, standardize, noise) is expected


def test_the_warning_and_the_closing_line():
    report = {"expected_edges": 3.0, "varsortability": 0.96,
              "varsortability_data_units": 0.96, "r2_sortability": 0.5}
    with pytest.warns(AssumptionWarning, match=r"0\.96 of the posterior.*--standardize.*"
                      r"assumptions\.md#what-orients-the-edges"):
        assert warn_scale_orientation(report, False, "equal")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_scale_orientation(report, True, "equal")
    line = describe(report)
    assert line.startswith("Orientation: 0.96 of the expected edges") and "0.50" in line
    assert "data's units" not in line
    assert "(0.70 in the data's units)" in describe({**report, "varsortability_data_units": 0.7})
    assert describe(None) is None and describe({**report, "varsortability": None}) is None


def test_a_constant_column_neither_breaks_r_squared_nor_the_time_order_check():
    from prodag.inputs.assumptions import time_order

    X = _chain_data(500)
    with_constant = np.column_stack([X, np.ones(500)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(r_squared(with_constant), [*r_squared(X), 0.0], atol=1e-9)
        groups = np.repeat([0, 1], 250)
        shifted = np.column_stack([X, groups.astype(float)])  # constant within each group
        assert time_order(shifted, groups) is None
