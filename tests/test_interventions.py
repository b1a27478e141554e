"""Interventional data (prodag.inputs.interventions): reading the targets, the likelihood that
leaves intervened equations out, the simulator, and an intervention that orients an edge."""

import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions, simulate
from prodag.inputs.interventions import intervention_mask
from prodag.inputs.validation import DataError
from prodag.models import make_model

NAMES = ["a", "b", "c"]


def test_targets_read_from_masks_and_named_rows_agree():
    expected = np.array([[False, False, False], [True, False, False], [True, False, True]])
    assert np.array_equal(intervention_mask(expected, NAMES, 3), expected)
    assert np.array_equal(intervention_mask(expected.astype(int), NAMES, 3), expected)
    frame = pd.DataFrame(expected[:, ::-1], columns=NAMES[::-1])
    assert np.array_equal(intervention_mask(frame, NAMES, 3), expected)
    named = pd.Series(["", "a", "c; a"])
    assert np.array_equal(intervention_mask(named, NAMES, 3), expected)
    assert np.array_equal(intervention_mask([None, "a", "a;c"], NAMES, 3), expected)


@pytest.mark.parametrize("interventions, match", [
    (np.zeros((2, 3), bool), r"shape \(3, 3\)"),
    (["", "a", "zeta"], "unknown variable.*zeta"),
    (["a", "a", "a"], "a are intervened on in every row"),
    (np.full((3, 3), 2), "True/False or 1/0"),
    (["", "a"], "targets of 2 rows"),
])
def test_bad_targets_are_errors_that_say_what_is_wrong(interventions, match):
    with pytest.raises(DataError, match=match):
        intervention_mask(interventions, NAMES, 3)


def test_no_observational_row_is_a_warning():
    with pytest.warns(UserWarning, match="no purely observational rows"):
        intervention_mask(["a", "b", "c"], NAMES, 3)


@pytest.mark.parametrize("sem", ["linear", "mlp", "additive"])
def test_an_intervened_equation_drops_out_of_that_row(sem):
    """The masked likelihood equals the likelihood of the rows where each equation holds,
    summed per equation (closed form: the unmasked likelihood on row subsets)."""
    import jax.numpy as jnp

    model = make_model(sem) if sem != "mlp" else make_model(sem, hidden_units=2)
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.standard_normal((7, 3)))
    shapes = model.weight_shapes(3)
    weights = {k: jnp.asarray(rng.standard_normal((2, *v)) * 0.5) for k, v in shapes.items()}
    intervened = np.zeros((7, 3), bool)
    intervened[[1, 4], 0] = intervened[[2], 2] = True
    noise = jnp.asarray([1.0, 2.0, 0.5])
    got = model.log_likelihood(weights, model.prepare_data(X, ~intervened), noise)
    expected = 0.0
    for k in range(3):  # equation k on its own rows: the full likelihood's k-th term
        rows = ~intervened[:, k]
        one = np.zeros(3)
        one[k] = 1.0
        full = model.log_likelihood(weights, model.prepare_data(X[rows]), noise)
        others = model.log_likelihood(weights, model.prepare_data(X[rows], np.tile(
            1 - one, (int(rows.sum()), 1)).astype(bool)), noise)
        expected = expected + (full - others)
    np.testing.assert_allclose(got, expected, rtol=1e-4)  # float32


def test_the_simulator_appends_rows_under_perfect_interventions():
    data = simulate.dataset(6, 6, 50, seed=0, interventions=3, rows_per_target=20)
    assert data.X.shape == (110, 6) and data.interventions.shape == (110, 6)
    assert not data.interventions[:50].any()
    assert np.array_equal(data.interventions[50:].sum(axis=0)[data.targets], [20, 20, 20])
    fixed = simulate.dataset(6, 6, 50, seed=0, interventions=[2], rows_per_target=4000)
    parents = np.flatnonzero(fixed.adjacency[:, 2])
    rows = fixed.interventions[:, 2]
    for parent in parents:  # cut from its parents: no correlation left
        assert abs(np.corrcoef(fixed.X[rows, 2], fixed.X[rows, parent])[0, 1]) < 0.06
    assert abs(np.std(fixed.X[rows, 2]) - 1.0) < 0.05


@pytest.mark.slow
def test_an_intervention_orients_an_edge_the_observational_posterior_cannot():
    """Two standardised Gaussian variables: a → b and b → a fit equally well. Intervening on
    b (b set from outside, a unchanged) shows that b does not drive a."""
    rng = np.random.default_rng(0)
    n_obs, n_int = 300, 300
    a = rng.standard_normal(n_obs + n_int)
    b = np.concatenate([0.8 * a[:n_obs] + 0.6 * rng.standard_normal(n_obs),
                        rng.standard_normal(n_int)])
    X = pd.DataFrame({"a": a, "b": b})
    targets = [""] * n_obs + ["b"] * n_int
    settings = dict(lam="auto", seed=0, progress=False, standardize=True,
                    noise_variance=0.64, training=TrainingOptions(n_lambdas=3))
    observational = ProDAG(**settings).fit(X.iloc[:n_obs]).edge_probabilities()
    interventional = ProDAG(**settings).fit(X, interventions=targets).edge_probabilities()
    assert interventional[0, 1] > 0.95 and interventional[1, 0] < 0.05
    assert min(observational[0, 1], observational[1, 0]) > 0.1  # not settled without it


def test_x_val_with_interventions_is_refused():
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="X_val cannot be combined"):
        ProDAG(training=TrainingOptions(select_by="validation"), progress=False).fit(
            X, X_val=X, interventions=[""] * 19 + ["x0"])
