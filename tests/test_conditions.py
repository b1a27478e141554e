"""Experimental conditions and the kind of intervention (prodag.inputs.interventions): a free
intercept per condition and variable, and targets whose measured value is a read-out
(``intervention_kind="activity"``)."""

import functools

import numpy as np
import pandas as pd
import pytest

from montecarlo import assert_probabilities_agree, seed_spread
from prodag import ProDAG, TrainingOptions
from prodag.fit import prepare
from prodag.inputs.interventions import centre_within, condition_groups
from prodag.inputs.validation import DataError

FAST = dict(lam=2.0, training=TrainingOptions(n_restarts=1), max_epochs=30, seed=0,
            progress=False)
N_DRAWS = 1000


def chain_with_conditions(seed: int = 0, n_per: int = 60):
    """a → b → c in three conditions of ``n_per`` rows; the last one intervenes on b."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(3 * n_per)
    b = 0.9 * a + 0.5 * rng.standard_normal(3 * n_per)
    b[2 * n_per:] = rng.standard_normal(n_per)
    c = -0.8 * b + 0.5 * rng.standard_normal(3 * n_per)
    X = pd.DataFrame({"a": a, "b": b, "c": c})
    conditions = np.repeat(["base", "stim", "drug"], n_per)
    targets = [""] * (2 * n_per) + ["b"] * n_per
    return X, conditions, targets


def shifted_and_scrambled():
    """``chain_with_conditions()``'s data with the stim condition's rows shifted by
    ``SHIFT``, and with the drug condition's intervened b replaced by other values."""
    X, conditions, _ = chain_with_conditions()
    shifted = X.copy()
    shifted.loc[conditions == "stim"] += SHIFT
    scrambled = X.copy()
    rows = np.flatnonzero(conditions == "drug")
    scrambled.loc[rows, "b"] = np.random.default_rng(5).standard_normal(len(rows)) * 4 + 7
    return shifted, scrambled


SHIFT = np.array([3.0, -2.0, 5.0])


@functools.cache
def fitted(data: str, seed: int = 0, kind: str | None = None) -> ProDAG:
    """A ``FAST`` fit (with ``seed``) of ``chain_with_conditions()``'s data (``"X"``), or of
    its ``"shifted"`` or ``"scrambled"`` version, with its conditions; with its targets too
    where ``kind`` names the intervention kind. Shared by the tests that fit the same thing
    (none changes a fit)."""
    X, conditions, targets = chain_with_conditions()
    frame = {"X": X, **dict(zip(("shifted", "scrambled"), shifted_and_scrambled()))}[data]
    options = {} if kind is None else {"interventions": targets, "intervention_kind": kind}
    return ProDAG(**{**FAST, "seed": seed}).fit(frame, conditions=conditions, **options)


def test_condition_codes_from_labels_and_from_target_sets():
    codes = condition_groups(["x", "y", "x", "y"], None, "do", 4)
    assert codes.tolist() == [0, 1, 0, 1]
    assert condition_groups(None, np.zeros((4, 2), bool), "do", 4) is None
    mask = np.array([[0, 0], [1, 0], [0, 0], [1, 0]], bool)
    by_targets = condition_groups(None, mask, "activity", 4)
    assert by_targets[0] == by_targets[2] != by_targets[1] == by_targets[3]


@pytest.mark.parametrize("conditions, match", [
    (["x", "y", "x"], "conditions name 3 rows; the data have 4"),
    (["x", None, "x", "y"], "missing for 1 row"),
    (["x", "x", "x", "y"], "'y' has a single row"),
])
def test_bad_conditions_are_errors_that_say_what_is_wrong(conditions, match):
    with pytest.raises(DataError, match=match):
        condition_groups(conditions, None, "do", 4)


def test_centring_within_conditions_leaves_each_condition_mean_zero():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((9, 2)) + np.repeat([[0, 5], [10, -3], [2, 2]], 3, axis=0)
    groups = np.repeat([0, 1, 2], 3)
    centred, means = centre_within(data, groups)
    for g in range(3):
        np.testing.assert_allclose(centred[groups == g].mean(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(means[g], data[groups == g].mean(axis=0))


def test_a_shift_of_a_whole_condition_changes_nothing_with_conditions():
    """Free intercepts per condition: adding any constant vector to one condition's rows
    leaves the data the model sees unchanged up to rounding, and so the posterior within
    Monte Carlo error and a change of seed's spread (tests/montecarlo.py); without
    conditions, the same shift changes it."""
    X, conditions, _ = chain_with_conditions()
    shifted, _ = shifted_and_scrambled()
    seen = [prepare.preprocess(ProDAG(**FAST), data, None, None, conditions).Z
            for data in (X, shifted)]
    np.testing.assert_allclose(seen[1], seen[0], rtol=0, atol=1e-12)
    reference, other_seed, moved = (fitted(data, seed).edge_probabilities(N_DRAWS)
                                    for data, seed in (("X", 0), ("X", 1), ("shifted", 0)))
    assert_probabilities_agree(moved, reference, N_DRAWS, seed_spread([reference, other_seed]),
                               "a condition shifted")
    pooled = [ProDAG(**FAST).fit(data).edge_probabilities() for data in (X, shifted)]
    assert np.abs(pooled[0] - pooled[1]).max() > 0.1


def test_activity_interventions_ignore_the_intervened_values():
    """kind "activity": the measured value of an intervened variable is a read-out, so
    replacing it leaves the data the model sees unchanged and the posterior within Monte
    Carlo error; with kind "do" it is data, and the fit changes."""
    X, conditions, targets = chain_with_conditions()
    _, scrambled = shifted_and_scrambled()
    seen = [prepare.preprocess(ProDAG(**FAST), data, None, targets, conditions,
                                 "activity").Z for data in (X, scrambled)]
    np.testing.assert_allclose(seen[1], seen[0], rtol=0, atol=1e-12)

    def probabilities(data, kind, seed=0):
        return fitted(data, seed, kind).edge_probabilities(N_DRAWS)

    reference, other_seed = probabilities("X", "activity"), probabilities("X", "activity", 1)
    assert_probabilities_agree(probabilities("scrambled", "activity"), reference, N_DRAWS,
                               seed_spread([reference, other_seed]), "read-outs replaced")
    assert np.abs(probabilities("X", "do") - probabilities("scrambled", "do")).max() > 0.1


def test_predict_adds_back_each_condition_intercept():
    X, conditions, _ = chain_with_conditions()
    shifted, _ = shifted_and_scrambled()
    shift = SHIFT
    fits = [fitted(data, seed) for data, seed in (("X", 0), ("shifted", 0), ("X", 1))]
    assert fits[1].conditions_ == ["base", "stim", "drug"]
    plain, other_seed = (fit.predict(X, seed=0, conditions=conditions)
                         for fit in (fits[0], fits[2]))
    moved = fits[1].predict(shifted, seed=0, conditions=conditions)
    expected = plain + np.where((conditions == "stim")[:, None], shift, 0.0)
    # the two fits differ by rounding only: within a change of seed's spread (per variable,
    # the largest over the rows)
    allowed = seed_spread([np.asarray(plain), np.asarray(other_seed)]).max(axis=0)
    assert np.all(np.abs(np.asarray(moved - expected)) <= allowed + 1e-9)
    with pytest.raises(ValueError, match="give predict each row's condition"):
        fits[1].predict(X)
    with pytest.raises(ValueError, match="unknown \\['other'\\]"):
        fits[1].predict(X.iloc[:2], conditions=["base", "other"])


def test_save_and_load_keep_the_conditions(tmp_path):
    X, conditions, _ = chain_with_conditions()
    fit = fitted("X", 0, "activity")
    fit.save(tmp_path / "model.npz")
    loaded = ProDAG.load(tmp_path / "model.npz")
    assert loaded.conditions_ == fit.conditions_
    assert loaded.intervention_kind_ == "activity"
    np.testing.assert_array_equal(loaded.condition_means_, fit.condition_means_)
    np.testing.assert_array_equal(loaded.predict(X, seed=1, conditions=conditions),
                                  fit.predict(X, seed=1, conditions=conditions))


def test_an_unknown_intervention_kind_is_refused():
    X, _, _ = chain_with_conditions()
    with pytest.raises(ValueError, match="intervention_kind"):
        ProDAG(progress=False).fit(X, intervention_kind="soft")
