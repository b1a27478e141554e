"""Bad or odd inputs, each answered before any work starts with a message that names what is
wrong and what to do (or read correctly with a note): seeds, columns given to predict in
another order or under other names, duplicated or collinear columns, too few rows, values too
large to compute with, an --out that cannot be written, data files in other layouts,
settings that overflow or moved, a fitted model asked the impossible, and sizes that cannot
finish. Each test fails if the input is accepted silently or the message does not say what
it must."""

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, invoke

from prodag import ProDAG, TrainingOptions
from prodag.cli import fit as fit_command
from prodag.cli import folders
from prodag.inputs.diagnostics import (CollinearityWarning, SmallSampleWarning, collinear_columns,
                                warn_few_rows)
from prodag.inputs.checks import check_seed
from prodag.inputs.validation import DataError, check_rows

TINY = dict(lam=2.0, max_epochs=2, n_samples=4, n_chains=1, progress=False,
            training=TrainingOptions(n_restarts=1, init="prior", refine_steps=0))
"""The cheapest fit, for inputs that are refused or warned about before a fit starts."""


# ---- seeds, columns and rows (the Python API) ------------------------------------------------

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


def test_predict_matches_columns_by_name_and_refuses_other_names(chain_fit):
    model, frame = chain_fit
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


@pytest.mark.parametrize("huge", [["b"], ["a", "b", "c"]])
def test_values_whose_squares_overflow_are_refused_naming_the_columns_and_the_fix(huge):
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=["a", "b", "c"])
    frame[huge] *= 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way to the error
        with pytest.raises(DataError, match=f"{len(huge)} column\\(s\\) hold values too large.*"
                                            f"{repr(huge[-1])}.*overflows float64.*divide "
                                            f"each by a power of ten.*{repr(huge[0])} by 1e300"):
            ProDAG(**TINY).fit(frame)


def test_the_largest_values_whose_squares_add_up_are_fitted_and_log_transformed():
    from prodag.cli.files import log_transform
    from prodag.inputs.validation import check_data

    frame = pd.DataFrame(np.random.default_rng(0).uniform(1, 2, size=(30, 3)),
                         columns=["a", "b", "c"])
    below = frame * 1e150  # squares up to 4e300, summed over 30 rows: finite
    np.testing.assert_array_equal(check_data(below)[0], below.to_numpy())
    with pytest.raises(DataError, match="too large"):
        check_data(frame * 1e160)
    logged = log_transform(frame * 1e300)  # the log brings them into range
    np.testing.assert_allclose(logged.to_numpy(), np.log(frame.to_numpy()) + 300 * np.log(10))


def test_data_too_large_for_a_fixed_noise_variance_are_refused_not_crashed_on(monkeypatch):
    """In its own units (a fixed noise variance) the data meet the fit's float32 arithmetic:
    a sum of squares past its largest number is refused before fitting, and data that
    overflow only inside the fit (every objective infinite or NaN) end it with an error that
    says so, not an IndexError."""
    from prodag.posterior import chains

    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=["a", "b", "c"])
    with pytest.raises(DataError, match="fixed noise variance.*too large for its arithmetic.*"
                                        "'a', 'b', 'c'.*--noise-variance equal"):
        ProDAG(noise_variance=1.0, **TINY).fit(frame * 1e20)
    rescore = chains.rescore
    monkeypatch.setattr(chains, "rescore",
                        lambda *args, **kwargs: np.full_like(rescore(*args, **kwargs), np.nan))
    with pytest.raises(ValueError, match="Every fit's objective is infinite or NaN.*Rescale"):
        ProDAG(seed=0, **TINY).fit(frame)


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if a command starts fitting."""
    def refuse(*args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr(fit_command, "fit_posterior", refuse)


@pytest.fixture
def data_file(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    frame.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path / "data.csv"


def leftovers(folder):
    return sorted(entry.name for entry in folder.iterdir() if entry.name.startswith("."))


# ---- --out -----------------------------------------------------------------------------------

def test_an_out_inside_a_file_names_the_file_before_the_fit(data_file, no_fit):
    result = invoke("fit", data_file, "--out", data_file / "results")
    assert_one_line_error(result, f"{data_file} is a file, not a folder")
    assert "permission" not in result.output


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_out_where_no_folder_can_be_made_names_the_place_not_an_internal_folder(data_file,
                                                                                 no_fit):
    result = invoke("fit", data_file, "--out", "/proc/results")
    assert_one_line_error(result, "--out /proc/results", "cannot write into /proc")
    assert ".partial" not in result.output and "Fitting" not in result.output


def test_a_read_only_out_folder_is_refused_before_the_fit(data_file, no_fit, monkeypatch):
    out = data_file.parent / "ro"
    out.mkdir()
    real_access = os.access
    # as root every folder is writable to os.access: make "ro" read-only the way it is for
    # other users
    monkeypatch.setattr(os, "access", lambda path, mode: real_access(path, mode) and not (
        mode & os.W_OK and os.path.realpath(path) == os.path.realpath(out)))
    result = invoke("fit", data_file, "--out", out)
    assert_one_line_error(result, f"--out {out}", "the folder itself", "permission denied")
    assert leftovers(data_file.parent) == []


def test_a_swap_that_fails_leaves_the_old_results_and_no_hidden_folders(tmp_path,
                                                                       monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("old")
    real_replace = os.replace

    def refuse_new(source, target):  # the new results cannot move in (out changed meanwhile)
        if ".partial-" in str(source):
            raise PermissionError(13, "Permission denied")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", refuse_new)
    with pytest.raises(OSError, match="Permission denied"):
        with folders.results_folder(out, ["summary.json"]) as folder:
            (folder / "summary.json").write_text("new")
    assert leftovers(tmp_path) == []
    assert (out / "summary.json").read_text() == "old"


# ---- data files ------------------------------------------------------------------------------

def numbers(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])


def test_a_semicolon_file_with_decimal_commas_names_both_options(tmp_path, no_fit):
    numbers().to_csv(tmp_path / "d.csv", index=False, sep=";", decimal=",")
    assert_one_line_error(invoke("fit", tmp_path / "d.csv"), "';' between fields",
                          "',' as the decimal mark", "--sep ';' --decimal ','")


def test_a_semicolon_file_reads_with_the_options_it_names(tmp_path):
    from prodag.cli.files import read_table

    numbers().to_csv(tmp_path / "d.csv", index=False, sep=";", decimal=",")
    read = read_table(tmp_path / "d.csv", sep=";", decimal=",")
    np.testing.assert_allclose(read.to_numpy(), numbers().to_numpy())


@pytest.mark.parametrize("kind", ["gzip", "bz2", "zip"])
def test_a_compressed_file_named_csv_is_read_with_a_note(tmp_path, capsys, kind):
    from prodag.cli.files import read_table

    path = tmp_path / "d.csv"
    numbers().to_csv(path, index=False, compression={"method": kind, "archive_name": "d.csv"}
                     if kind == "zip" else kind)
    read = read_table(path)
    np.testing.assert_allclose(read.to_numpy(), numbers().to_numpy())
    assert f"is {kind}-compressed" in capsys.readouterr().err


def test_a_comma_at_the_end_of_every_line_drops_the_empty_column_with_a_note(tmp_path,
                                                                            capsys):
    from prodag.cli.files import read_table

    text = numbers().to_csv(index=False)
    (tmp_path / "d.csv").write_text("".join(line + ",\n" for line in text.splitlines()))
    read = read_table(tmp_path / "d.csv")
    assert list(read.columns) == ["a", "b", "c"]
    np.testing.assert_allclose(read.to_numpy(), numbers().to_numpy())
    assert "ends with ','" in capsys.readouterr().err
    without_header = tmp_path / "no_header.csv"
    without_header.write_text("".join(line + ",\n" for line in text.splitlines()[1:]))
    read = read_table(without_header, header=False)
    assert list(read.columns) == ["X0", "X1", "X2"]
    np.testing.assert_allclose(read.to_numpy(), numbers().to_numpy())


def test_a_latin1_file_names_the_encoding_option_and_reads_with_it(tmp_path, no_fit):
    from prodag.cli.files import read_table

    frame = numbers().rename(columns={"a": "température"})
    frame.to_csv(tmp_path / "d.csv", index=False, encoding="latin-1")
    assert_one_line_error(invoke("fit", tmp_path / "d.csv"), "not utf-8 text",
                          "--encoding latin-1")
    assert list(read_table(tmp_path / "d.csv", encoding="latin-1").columns)[0] == "température"
    assert_one_line_error(invoke("fit", tmp_path / "d.csv", "--encoding", "klingon"),
                          "--encoding 'klingon'")


def test_a_column_too_large_to_compute_with_is_one_line_before_the_fit(tmp_path, no_fit):
    frame = numbers()
    frame["b"] *= 1e300
    frame.to_csv(tmp_path / "d.csv", index=False)
    result = invoke("fit", tmp_path / "d.csv", "--out", tmp_path / "out")
    assert_one_line_error(result, "1 column(s) hold values too large", "'b'", "'b' by 1e300")
    assert "RuntimeWarning" not in result.output and "Fitting" not in result.output


def test_a_missing_value_in_the_interventions_table_is_located(tmp_path, no_fit):
    numbers().to_csv(tmp_path / "d.csv", index=False)
    table = pd.DataFrame(np.zeros((30, 3)), columns=["a", "b", "c"])
    table.iloc[7, 1] = np.nan
    table.to_csv(tmp_path / "targets.csv", index=False)
    assert_one_line_error(invoke("fit", tmp_path / "d.csv", "--interventions",
                                 tmp_path / "targets.csv"), "row 7", "column 'b'", "missing")


# ---- settings --------------------------------------------------------------------------------

def test_a_radius_that_overflows_is_one_line_naming_the_fix(data_file, no_fit):
    from prodag.config.parameters import check_lam

    result = invoke("fit", data_file, "--lam", "1e308")
    assert_one_line_error(result, "--lam 1e308", "overflows", "--lam inf")
    assert "RuntimeWarning" not in result.output
    with pytest.raises(ValueError, match="lam=1e\\+308 overflows"):
        ProDAG(lam=1e308).fit(numbers())
    assert check_lam(3e38) == 3e38 and check_lam(math.inf) == math.inf  # float32 holds them


@pytest.mark.parametrize("name, value, home", [
    ("patience", 5, "training=TrainingOptions(patience=...)"),
    ("select_by", "validation", "training=TrainingOptions(select_by=...)"),
    ("hidden_units", 8, "network=NetworkOptions(hidden_units=...)")])
def test_a_moved_keyword_names_its_new_home(name, value, home):
    with pytest.raises(TypeError, match=f"'{name}' is not a ProDAG parameter.*"
                                        f"{home.replace('(', '[(]').replace(')', '[)]')}"):
        ProDAG(**{name: value})
    with pytest.raises(ValueError, match=home.replace("(", "[(]").replace(")", "[)]")):
        ProDAG().set_params(**{name: value})
    with pytest.raises(TypeError, match="valid ones: \\['sem'"):
        ProDAG(no_such_option=1)


# ---- the fitted model ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chain_fit():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    frame["b"] += 2 * frame["a"]
    frame["c"] += 3 * frame["b"]
    return ProDAG(lam=2.0, max_epochs=5, n_samples=4, n_chains=1, progress=False,
                  seed=0).fit(frame), frame


def test_predict_answers_a_frame_with_its_own_columns_and_index(chain_fit):
    model, frame = chain_fit
    rows = frame.iloc[5:10][["c", "a", "b"]]
    predicted = model.predict(rows, seed=1)
    assert isinstance(predicted, pd.DataFrame)
    assert list(predicted.columns) == ["c", "a", "b"] and list(predicted.index) == [5, 6, 7, 8, 9]
    in_fitted_order = model.predict(frame.iloc[5:10].to_numpy(), seed=1)
    np.testing.assert_allclose(predicted[["a", "b", "c"]].to_numpy(), in_fitted_order)
    residuals = rows - predicted  # aligned by name: each variable minus its own prediction
    np.testing.assert_allclose(residuals["c"], rows["c"] - in_fitted_order[:, 2])
    assert isinstance(model.predict(frame.to_numpy()[:3]), np.ndarray)


def test_intervening_with_a_value_that_overflows_is_refused(chain_fit):
    model, _ = chain_fit
    with pytest.raises(ValueError, match="overflow.*a at .* standard deviations"):
        model.intervene({"a": 1e300}, n=20)
    draws = model.intervene({"a": 1e30}, n=20)
    assert np.isfinite(draws.to_numpy()).all()


@pytest.mark.parametrize("layout", ["edges", "matrix"])
def test_a_true_graph_with_a_self_loop_is_refused(tmp_path, layout):
    from prodag import metrics

    assert invoke("simulate", "--p", 3, "--edges", 2, "--n", 20, "--out", tmp_path).exit_code == 0
    np.savez(tmp_path / "samples.npz", samples=np.zeros((4, 3, 3)),
             variables=np.array(["x0", "x1", "x2"]))
    truth = tmp_path / "loop.csv"
    if layout == "edges":
        pd.DataFrame({"source": ["x0", "x1"], "target": ["x1", "x1"]}).to_csv(truth, index=False)
    else:
        pd.DataFrame(np.eye(3, dtype=int)[[0, 1, 2]] * [0, 1, 0], index=["x0", "x1", "x2"],
                     columns=["x0", "x1", "x2"]).to_csv(truth)
    result = invoke("evaluate", tmp_path / "samples.npz", "--truth", truth)
    assert_one_line_error(result, "x1 -> x1", "a DAG has none")
    with pytest.raises(ValueError, match="self-loops .* variable\\(s\\) \\[1\\]"):
        metrics.evaluate(np.diag([0, 1, 0]), np.zeros((4, 3, 3)))


# ---- sizes -----------------------------------------------------------------------------------

def test_too_many_draws_are_refused_before_the_fit_naming_the_size(tmp_path, no_fit):
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(30, 11)), columns=[f"v{j}" for j in range(11)]).to_csv(
        tmp_path / "d.csv", index=False)
    result = invoke("fit", tmp_path / "d.csv", "--n-draws", 100_000_000, "--out",
                    tmp_path / "out")
    assert_one_line_error(result, "--n-draws 100000000", "11 x 11", "lower --n-draws")
    assert "Fitting" not in result.output and not (tmp_path / "out").exists()


def test_too_many_draws_from_a_saved_posterior_are_refused(tmp_path, chain_fit):
    chain_fit[0].save(tmp_path / "posterior.npz")
    pd.DataFrame({"source": ["a"], "target": ["b"]}).to_csv(tmp_path / "g.csv", index=False)
    result = invoke("evaluate", tmp_path / "posterior.npz", "--truth", tmp_path / "g.csv",
                    "--n-draws", 10 ** 12)
    assert_one_line_error(result, f"--n-draws {10 ** 12}", "lower --n-draws")


def test_draws_written_a_block_at_a_time_need_a_block_of_memory(monkeypatch):
    """A default fit at p = 1000 keeps draws of its own, so its 1000 graphs (32 GB held at
    once) are drawn 100 at a time on candidate parents, and pass where 8 GB are free; a
    mixture's (``--refine-steps 0``) are refused."""
    from prodag import resources
    from prodag.cli.results import planned_drawing

    monkeypatch.setattr(resources, "available_memory", lambda: 8 * 2 ** 30)
    default = planned_drawing({"sem": "linear"}, 1000)
    assert default == {"screened": True, "block": 100}
    resources.check_draws(1000, 1000, **default)
    mixture = planned_drawing({"sem": "linear", "refine_steps": 0}, 1000)
    assert mixture["block"] is None
    with pytest.raises(ValueError, match="--n-draws 1000 .*1000 x 1000.* needs about"):
        resources.check_draws(1000, 1000, **mixture)


def test_a_simulation_too_large_to_finish_is_refused_with_the_size_and_the_limit(tmp_path):
    from prodag.resources import LIMIT_SECONDS, simulation_seconds

    result = invoke("simulate", "--p", 20000, "--edges", 10, "--out", tmp_path / "s")
    assert_one_line_error(result, "--p 20000", "over the limit of", "largest --p within it")
    assert not (tmp_path / "s").exists()
    largest = int(result.output.split("largest --p within it is about ")[1].split(".")[0])
    assert simulation_seconds(largest, 100) <= LIMIT_SECONDS < simulation_seconds(20000, 100)


def test_topological_order_of_a_large_graph():
    """A 3000-node chain in reverse (its speed is a benchmark's question, not a test's)."""
    from prodag.graph import topological_order

    p = 3000
    chain = np.eye(p, k=1, dtype=bool)[::-1, ::-1]  # p-1 -> p-2 -> ... -> 0
    order = topological_order(chain)
    np.testing.assert_array_equal(order, np.arange(p)[::-1])


@pytest.mark.parametrize("options", [[], ["--standardize", "--seed", "0"],
                                     ["--lam", "2", "--n-samples", "100"]])
def test_a_2000_by_60_table_announces_a_rough_time_before_the_fit(tmp_path, no_fit, options):
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(2000, 60)), columns=[f"v{j}" for j in range(60)]).to_csv(
        tmp_path / "d.csv", index=False)
    result = invoke("fit", tmp_path / "d.csv", "--out", tmp_path / "out", *options)
    assert "This fit may take about" in result.output and "rough estimate" in result.output
