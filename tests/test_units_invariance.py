"""The default posterior does not depend on a common unit or origin of the data, and columns in
other units are named before they can produce edges."""

import functools
import warnings

import numpy as np
import pytest

from montecarlo import assert_probabilities_agree, seed_spread
from prodag import ProDAG, TrainingOptions, simulate
from prodag.inputs.preprocessing import ColumnScaleWarning
from prodag.posterior.chains import ChainDisagreementWarning

FAST = dict(max_epochs=30, n_samples=20, n_chains=1, seed=0, progress=False,
            training=TrainingOptions(n_lambdas=3, n_restarts=1))
CHEAP = {**FAST, "lam": 1.0, "max_epochs": 2,
         "training": TrainingOptions(n_restarts=1, refine_steps=0)}
"""For the tests of what a fit sets up or warns before it trains: the cheapest fit."""

N_DRAWS = 1000


def _probabilities(X, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChainDisagreementWarning)
        est = ProDAG(**{**FAST, **options}).fit(X)
    return est.edge_probabilities(N_DRAWS)


@pytest.fixture(scope="module")
def data():
    return _data()


def _data():
    return simulate.dataset(4, 4, 60, seed=3).X


@functools.cache
def _reference(sem, noise, seed):
    """The posterior of the data in their own units (shared by both changes of unit)."""
    return _probabilities(_data(), sem=sem, noise_variance=noise, seed=seed)


@pytest.mark.parametrize("sem, noise", [
    ("linear", "equal"), pytest.param("additive", "equal", marks=pytest.mark.slow),
    ("additive", "quietest")])
@pytest.mark.parametrize("unit, origin", [(1e-6, -3e-6), (1e6, 7e6)])
def test_a_common_unit_and_origin_leave_the_posterior_unchanged(data, sem, noise, unit, origin):
    """Unchanged within Monte Carlo error and the spread of a change of seed (the fits are
    chaotic: rounding alone moves them that far on another CPU; tests/montecarlo.py)."""
    reference, other_seed = (_reference(sem, noise, seed) for seed in (0, 1))
    changed = _probabilities(data * unit + origin, sem=sem, noise_variance=noise)
    assert_probabilities_agree(changed, reference, N_DRAWS,
                               seed_spread([reference, other_seed]), f"unit {unit}")


def test_the_quietest_noise_is_the_smallest_column_variance_on_the_common_scale(data):
    X = data * np.array([1.0, 0.5, 2.0, 1.5]) * 1e3
    est = ProDAG(**CHEAP, noise_variance="quietest").fit(X)
    common = np.sqrt(np.mean(X.var(axis=0)))  # the root mean column variance
    np.testing.assert_allclose(est.scale_, common, rtol=1e-12)
    np.testing.assert_allclose(est.noise_variance_, X.var(axis=0).min() / common ** 2,
                               rtol=1e-9)
    assert est.params_.log_noise_variance is None  # fixed, not learned


def test_the_paper_protocol_depends_on_the_unit(data):
    # the same check fails for a fixed unit noise variance: the test can tell the difference
    reference = _probabilities(data, noise_variance=1.0, lam=float("inf"))
    changed = _probabilities(data * 1e3, noise_variance=1.0, lam=float("inf"))
    assert np.max(np.abs(changed - reference)) > 0.2


def _fit_warnings(X, options=CHEAP):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = ProDAG(**options).fit(X)
    return est, [w for w in caught if issubclass(w.category, ColumnScaleWarning)]


@pytest.mark.parametrize("case", ["one column in other units", "an ID column"])
def test_a_column_on_another_scale_is_named(data, case):
    X = data.copy()
    if case == "one column in other units":
        X[:, 2] *= 1000
    else:
        X = np.column_stack([X, np.random.default_rng(0).integers(1000, 9999, len(X))])
    named = "x2" if case == "one column in other units" else f"x{X.shape[1] - 1}"
    _, caught = _fit_warnings(X)
    assert len(caught) == 1 and named in str(caught[0].message)


def test_columns_of_one_scale_are_not_named(data):
    assert _fit_warnings(data)[1] == []


def test_independent_columns_of_different_variance_give_no_confident_edge():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((100, 4)) * np.sqrt([2.0, 3.0, 4.0, 2.5])
    est, caught = _fit_warnings(X, FAST)
    confident = est.edge_probabilities(200) >= 0.5
    assert not confident.any() or caught
