"""Tests for prodag.inputs.validation (data tables) and prodag.inputs.checks (setting values):
accepted inputs and one test per error."""

import math

import numpy as np
import pandas as pd
import pytest

from prodag.inputs.checks import check_choice, check_integer, check_positive, check_positive_vector
from prodag.inputs.validation import DataError, check_data


# --- accepted inputs --------------------------------------------------------------------------

def test_numpy_array_gives_float64_copy_and_default_names():
    X = np.array([[1, 2, 3], [4, 5, 7]], dtype=np.int32)
    data, names = check_data(X)
    assert data.dtype == np.float64
    np.testing.assert_array_equal(data, X)
    assert names == ["x0", "x1", "x2"]
    data[0, 0] = 99.0
    assert X[0, 0] == 1


def test_list_of_lists_accepted():
    data, names = check_data([[1.5, 2.0], [3.0, -4.0], [0.0, 1.0]])
    np.testing.assert_array_equal(data, [[1.5, 2.0], [3.0, -4.0], [0.0, 1.0]])
    assert names == ["x0", "x1"]


def test_dataframe_names_become_strings_and_bools_are_numeric():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], 7: [True, False, True], "c": [1, 1, 2]})
    data, names = check_data(frame)
    assert names == ["a", "7", "c"]
    np.testing.assert_array_equal(data, [[1, 1, 1], [2, 0, 1], [3, 1, 2]])
    assert data.dtype == np.float64


def test_float32_dataframe_values_kept():
    frame = pd.DataFrame(np.array([[0.1, 0.2], [0.3, 0.4]], dtype=np.float32), columns=["u", "v"])
    data, _ = check_data(frame)
    np.testing.assert_array_equal(data, frame.to_numpy().astype(np.float64))


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("X", [np.arange(4.0), np.zeros((2, 2, 2)), pd.Series([1.0, 2.0])])
def test_not_two_dimensional(X):
    with pytest.raises(DataError, match="2-D"):
        check_data(X)


def test_data_error_is_value_error():
    assert issubclass(DataError, ValueError)


def test_none_is_rejected():
    with pytest.raises(DataError, match="No data"):
        check_data(None)


def test_ragged_rows():
    with pytest.raises(DataError, match="different lengths"):
        check_data([[1.0, 2.0], [3.0]])


def test_too_few_rows():
    with pytest.raises(DataError, match="1 sample.*rows.*at least 2"):
        check_data([[1.0, 2.0]])


def test_min_rows_respected():
    X = np.arange(10.0).reshape(5, 2)
    check_data(X, min_rows=5)
    with pytest.raises(DataError, match="5 sample.*rows.*at least 6"):
        check_data(X, min_rows=6)


def test_min_rows_below_two_rejected():
    with pytest.raises(ValueError, match="min_rows"):
        check_data(np.eye(3), min_rows=1)


def test_too_few_variables():
    with pytest.raises(DataError, match="1 feature.*minimum of 2.*2 variables"):
        check_data(np.arange(5.0).reshape(5, 1))


def test_non_numeric_columns_named_with_fix():
    frame = pd.DataFrame({"a": [1.0, 2.0], "colour": ["red", "blue"],
                          "when": pd.to_datetime(["2020-01-01", "2021-01-01"])})
    with pytest.raises(DataError) as info:
        check_data(frame)
    message = str(info.value)
    assert "'colour'" in message and "'when'" in message and "'a'" not in message
    assert "encode" in message and "drop" in message


def test_non_numeric_list_column_named():
    with pytest.raises(DataError, match="not numeric: 'x1'"):
        check_data([[1.0, "low"], [2.0, "high"]])


def test_complex_rejected():
    with pytest.raises(DataError, match="Complex data not supported"):
        check_data(np.array([[1 + 1j, 2], [3, 4]]))


def test_nan_and_inf_counted_with_columns_and_rows():
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "b": [1.0, 2.0, np.inf, np.nan],
                          "c": [1.0, 2.0, 3.0, 5.0]})
    with pytest.raises(DataError) as info:
        check_data(frame)
    message = str(info.value)
    assert "2 NaN and 1 infinite" in message
    assert "3 row(s)" in message and "1, 2, 3" in message
    assert "'a', 'b'" in message and "'c'" not in message
    assert "Impute" in message and "drop" in message


def test_nullable_integer_missing_value_is_reported_as_nan():
    frame = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "b": [1.0, 2.0, 4.0]})
    with pytest.raises(DataError, match="1 NaN and 0 infinite.*'a'"):
        check_data(frame)
    frame.loc[1, "a"] = 2
    np.testing.assert_array_equal(check_data(frame)[0][:, 0], [1.0, 2.0, 3.0])


def test_constant_columns_named():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "k": [5.0, 5.0, 5.0], "z": [0, 0, 0]})
    with pytest.raises(DataError, match=r"2 column\(s\) are constant: 'k', 'z'.*drop"):
        check_data(frame)


def test_duplicate_column_names():
    frame = pd.DataFrame([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], columns=["a", "b", "a"])
    with pytest.raises(DataError, match="Duplicate column names: 'a'"):
        check_data(frame)


def test_duplicate_after_string_conversion():
    frame = pd.DataFrame([[1.0, 2.0], [4.0, 5.0]], columns=[1, "1"])
    with pytest.raises(DataError, match="Duplicate"):
        check_data(frame)


def test_long_name_lists_are_truncated():
    frame = pd.DataFrame(np.ones((3, 12)), columns=[f"v{j}" for j in range(12)])
    with pytest.raises(DataError, match="and 4 more"):
        check_data(frame)


# --- parameter checks -------------------------------------------------------------------------

def test_check_positive():
    assert check_positive("lr", 0.1) == 0.1
    assert check_positive("lam", 0, allow_zero=True) == 0.0
    assert check_positive("lam", math.inf, allow_inf=True) == math.inf
    assert isinstance(check_positive("n", np.int64(3)), float)
    for bad in (0, -1.0, math.nan):
        with pytest.raises(ValueError, match="lr must be > 0"):
            check_positive("lr", bad)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        check_positive("lam", -0.5, allow_zero=True)
    with pytest.raises(ValueError, match="finite"):
        check_positive("lr", math.inf)
    for bad in ("0.1", True, None):
        with pytest.raises(ValueError, match="lr must be a number"):
            check_positive("lr", bad)


def test_check_integer():
    assert check_integer("n_samples", np.int32(5), minimum=1) == 5
    with pytest.raises(ValueError, match="n_samples must be >= 1, got 0"):
        check_integer("n_samples", 0, minimum=1)
    with pytest.raises(ValueError, match="<= 3"):
        check_integer("k", 4, maximum=3)
    for bad in (2.0, True, "3"):
        with pytest.raises(ValueError, match="must be an integer"):
            check_integer("k", bad)


def test_check_choice():
    assert check_choice("sem", "mlp", ("linear", "mlp")) == "mlp"
    with pytest.raises(ValueError, match="sem must be one of 'linear', 'mlp'; got 'MLP'"):
        check_choice("sem", "MLP", ("linear", "mlp"))


def test_check_positive_vector():
    np.testing.assert_array_equal(check_positive_vector("noise_variance", 2.0, 3), [2, 2, 2])
    np.testing.assert_array_equal(check_positive_vector("v", [1, 2], 2), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        check_positive_vector("v", [1.0, 2.0], 3)
    with pytest.raises(ValueError, match=r"positions \[1\]"):
        check_positive_vector("v", [1.0, -2.0, 3.0], 3)
    with pytest.raises(ValueError, match="positions"):
        check_positive_vector("v", [1.0, np.nan], 2)
    with pytest.raises(ValueError, match="positive number"):
        check_positive_vector("v", "estimate", 2)


def test_a_gross_outlier_is_named_in_a_warning():
    from prodag.inputs.validation import OutlierWarning, outliers, warn_outliers

    rng = np.random.default_rng(0)
    data = rng.standard_normal((200, 3))
    assert len(outliers(data)) == 0
    data[17, 1] = 1e6
    binary = np.column_stack([data, (rng.random(200) < 0.1).astype(float)])
    with pytest.warns(OutlierWarning, match=r"1 value\(s\).*row 17 column b \(1e\+06\)"):
        found = warn_outliers(binary, ["a", "b", "c", "d"])
    np.testing.assert_array_equal(found, [[17, 1]])


def test_fit_warns_about_outliers():
    from prodag import ProDAG, TrainingOptions
    from prodag.inputs.validation import OutlierWarning

    data = np.random.default_rng(1).standard_normal((50, 3))
    data[3, 0] = 1e6
    with pytest.warns(OutlierWarning, match="row 3 column x0"):  # a warning on the input:
        ProDAG(lam=1.0, max_epochs=2, n_samples=4, progress=False,  # no refined draws needed
               training=TrainingOptions(refine_steps=0)).fit(data)


@pytest.mark.parametrize("design", [dict(p=20, s=40), dict(p=10, s=20, sem="mlp"),
                                    dict(p=20, s=40, noise="gumbel"), dict(p=100, s=200)])
def test_the_noise_scale_check_is_silent_on_data_from_the_model(design, recwarn):
    from prodag import simulate
    from prodag.inputs.diagnostics import warn_noise_scale

    for seed in range(5):
        data = simulate.dataset(n=100, seed=seed, **design)
        X = data.X - data.X.mean(axis=0)
        assert warn_noise_scale(X, np.ones(data.p), [str(k) for k in range(data.p)]) is None
    assert not recwarn.list


@pytest.mark.parametrize("scale", [1e6, 1e-6])
def test_the_noise_scale_check_names_the_quietest_variable_in_wrong_units(scale):
    from prodag import simulate
    from prodag.inputs.diagnostics import NoiseScaleWarning, warn_noise_scale

    data = simulate.dataset(p=6, s=6, n=200, seed=2)
    X = (data.X - data.X.mean(axis=0)) * scale
    quietest = int(np.argmin(X.var(axis=0)))
    names = [f"v{k}" for k in range(6)]
    with pytest.warns(NoiseScaleWarning, match=f"quietest variable, v{quietest},.*equal"):
        ratio = warn_noise_scale(X, np.ones(6), names)
    np.testing.assert_allclose(ratio, X[:, quietest].var())
    # The same data with the noise variances in their units pass; one column far too quiet
    # for its own noise variance does not.
    assert warn_noise_scale(X, np.full(6, scale ** 2), names) is None
    noise = np.full(6, scale ** 2)
    noise[0] = 1e3 * X[:, 0].var()
    with pytest.warns(NoiseScaleWarning, match="quietest variable, v0,"):
        warn_noise_scale(X, noise, names)


def test_fit_warns_about_wrong_units_only_when_the_noise_variance_is_fixed():
    import warnings

    from prodag import ProDAG, TrainingOptions, simulate
    from prodag.inputs.diagnostics import NoiseScaleWarning

    X = simulate.dataset(p=4, s=3, n=100, seed=0).X * 1e6
    options = dict(lam=1.0, max_epochs=2, n_samples=4, n_chains=1, progress=False,
                   training=TrainingOptions(refine_steps=0))  # warnings on the input alone
    with pytest.warns(NoiseScaleWarning):
        ProDAG(noise_variance=1.0, **options).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseScaleWarning)
        ProDAG(noise_variance="equal", **options).fit(X)
        ProDAG(standardize=True, noise_variance="estimate", **options).fit(X)
        ProDAG(standardize=True, noise_variance=1.0, **options).fit(X)  # unit noise, unit columns


def test_equal_tables_give_equal_fits_whatever_their_memory_layout():
    from prodag import ProDAG, simulate

    X = simulate.dataset(p=5, s=5, n=300, seed=3).X
    layouts = {"C array": np.ascontiguousarray(X), "Fortran array": np.asfortranarray(X),
               "DataFrame": pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])}
    for table in layouts.values():
        data, _ = check_data(table)
        assert data.flags["C_CONTIGUOUS"]
    options = dict(lam=2.0, max_epochs=5, n_samples=8, n_chains=1, seed=0, progress=False)
    probabilities = [ProDAG(**options).fit(table).edge_probabilities(200)
                     for table in layouts.values()]
    for other in probabilities[1:]:
        np.testing.assert_array_equal(other, probabilities[0])
