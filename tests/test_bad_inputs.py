"""The Python API's answers to the bad or odd inputs of issue 34: seeds, columns given to
predict in another order or under other names, duplicated or collinear columns, too few
rows. Each test fails if the input is accepted silently."""

import warnings

import numpy as np
import pandas as pd
import pytest

from prodag import ProDAG, TrainingOptions
from prodag.inputs.diagnostics import (CollinearityWarning, SmallSampleWarning, collinear_columns,
                                warn_few_rows)
from prodag.inputs.checks import check_seed
from prodag.inputs.validation import DataError, check_rows

TINY = dict(lam=2.0, max_epochs=2, n_samples=4, progress=False,
            training=TrainingOptions(n_restarts=1, init="prior"))


@pytest.mark.parametrize("seed", [1.5, "abc", 2 ** 70, -1, 2 ** 32, True])
def test_a_seed_that_is_not_an_integer_in_range_is_refused_naming_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        check_seed(seed)
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="seed"):
        ProDAG(seed=seed, **TINY).fit(X)


@pytest.mark.parametrize("seed", [0, 7, 2 ** 32 - 1, np.int64(5)])
def test_seeds_in_range_are_kept_whole(seed):
    assert check_seed(seed) == int(seed)


def test_predict_matches_columns_by_name_and_refuses_other_names():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    frame["b"] += 2 * frame["a"]
    model = ProDAG(seed=0, **TINY).fit(frame)
    rows = frame.iloc[:5]
    shuffled = rows[["c", "a", "b"]]
    np.testing.assert_allclose(model.predict(shuffled, seed=1)[["a", "b", "c"]],
                               model.predict(rows, seed=1))
    renamed = rows.rename(columns={"c": "z"})
    with pytest.raises(DataError, match="missing: 'c'.*not fitted: 'z'"):
        model.predict(renamed)


def test_check_rows_reorders_a_frame_by_name_and_takes_arrays_by_position():
    frame = pd.DataFrame([[1.0, 2.0]], columns=["b", "a"])
    np.testing.assert_array_equal(check_rows("X", frame, 2, ["a", "b"]), [[2.0, 1.0]])
    np.testing.assert_array_equal(check_rows("X", frame.to_numpy(), 2, ["a", "b"]),
                                  [[1.0, 2.0]])


def test_identical_and_collinear_columns_are_found():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4))
    copy = np.column_stack([x, 3 * x[:, 1] + 1])  # column 4 is column 1 rescaled
    assert collinear_columns(copy) == ([(1, 4)], [])
    combination = np.column_stack([x, x[:, 0] - 2 * x[:, 2]])
    pairs, dependent = collinear_columns(combination)
    assert pairs == [] and dependent and set(dependent) <= {0, 2, 4}
    assert collinear_columns(x) == ([], [])


def test_fit_warns_naming_identical_columns():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["v1", "v2", "v3"])
    frame["v3"] = frame["v2"]
    with pytest.warns(CollinearityWarning, match="'v2' and 'v3'"):
        ProDAG(seed=0, **TINY).fit(frame)


def test_few_rows_warn_and_two_rows_are_refused():
    with pytest.warns(SmallSampleWarning, match="Only 5 rows for 3 variables"):
        assert warn_few_rows(5, 3)
    with pytest.warns(SmallSampleWarning, match="Only 30 rows for 40 variables"):
        assert warn_few_rows(30, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_few_rows(50, 40)
    with pytest.raises(DataError, match="2 sample.*at least 3"):
        ProDAG(seed=0, **TINY).fit(np.array([[0.0, 1.0, 2.0], [1.0, 0.5, 3.0]]))


@pytest.mark.parametrize("value, hint", [("abc", "typo"), ("53,456", "thousands"),
                                         ("1,5", "decimal")])
def test_a_non_number_is_named_with_its_row_value_and_fix(value, hint):
    from prodag.inputs.validation import check_data

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["1", "2", value, "4"]})
    with pytest.raises(DataError, match=f"'b' \\(row 2: '{value}'\\).*{hint}"):
        check_data(frame)
