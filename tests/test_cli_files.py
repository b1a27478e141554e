"""Files in: each malformed data file, graph or --out gives a clear error (or a documented
warning) before any fitting, one test per kind."""

import numpy as np
import pandas as pd
import pytest
from cli_support import assert_one_line_error, invoke

from prodag.cli import fit as fit_command
from prodag.cli.files import read_graph, read_table

VARIABLES = ["a", "b", "c"]


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if a command starts fitting."""
    def refuse(*args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr(fit_command, "fit_posterior", refuse)


def frame(n=5, seed=0):
    return pd.DataFrame(np.random.default_rng(seed).normal(size=(n, 3)), columns=VARIABLES)


def test_a_missing_file_is_named(tmp_path, no_fit):
    assert_one_line_error(invoke("fit", tmp_path / "missing.csv"), "No such file",
                          "missing.csv")


def test_a_directory_is_named_as_a_directory(tmp_path, no_fit):
    assert_one_line_error(invoke("fit", tmp_path), "is a directory")


def test_a_file_without_header_is_refused_with_the_fix(tmp_path, no_fit):
    frame().to_csv(tmp_path / "data.csv", header=False, index=False)
    assert_one_line_error(invoke("fit", tmp_path / "data.csv"), "no header row",
                          "--no-header")


def test_no_header_names_the_columns_x0_to_xp(tmp_path):
    frame().to_csv(tmp_path / "data.csv", header=False, index=False)
    table = read_table(tmp_path / "data.csv", header=False)
    assert list(table.columns) == ["X0", "X1", "X2"] and len(table) == 5
    np.testing.assert_allclose(table.to_numpy(), frame().to_numpy())


def test_an_unnamed_index_column_is_dropped_with_a_warning(tmp_path, capsys):
    frame().to_csv(tmp_path / "data.csv")  # pandas writes the index with an empty header
    table = read_table(tmp_path / "data.csv")
    assert list(table.columns) == VARIABLES
    assert "Warning" in capsys.readouterr().err


def test_an_id_column_that_numbers_the_rows_is_dropped_with_a_warning_naming_it(tmp_path,
                                                                                capsys):
    frame().rename_axis("id").to_csv(tmp_path / "data.csv")
    table = read_table(tmp_path / "data.csv")
    assert list(table.columns) == VARIABLES
    assert "'id'" in capsys.readouterr().err


def test_a_variable_that_counts_is_kept(tmp_path, capsys):
    data = frame().assign(a=np.arange(1, 6))
    data.to_csv(tmp_path / "data.csv", index=False)
    assert list(read_table(tmp_path / "data.csv").columns) == VARIABLES
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("sep, named, option", [(";", "';'", "--sep ';'"),
                                                ("\t", "a tab", "--sep tab")])
def test_a_file_with_another_separator_names_it_and_suggests_sep(tmp_path, no_fit, sep, named,
                                                                 option):
    frame().to_csv(tmp_path / "data.csv", sep=sep, index=False)
    assert_one_line_error(invoke("fit", tmp_path / "data.csv"), named, option)


@pytest.mark.parametrize("sep, option", [(";", ";"), ("\t", "tab")])
def test_sep_reads_the_file(tmp_path, sep, option):
    from prodag.cli.files import parse_sep

    frame().to_csv(tmp_path / "data.csv", sep=sep, index=False)
    table = read_table(tmp_path / "data.csv", sep=parse_sep(option))
    np.testing.assert_allclose(table.to_numpy(), frame().to_numpy())


def test_an_out_that_is_a_file_is_refused_before_the_fit(tmp_path, no_fit):
    frame().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "results").write_text("not a folder")
    assert_one_line_error(invoke("fit", tmp_path / "data.csv", "--out", tmp_path / "results"),
                          "--out", "existing file")


def test_read_graph_from_edge_list_and_from_adjacency(tmp_path):
    pd.DataFrame({"source": ["a", "c"], "target": ["b", "b"]}).to_csv(tmp_path / "e.csv",
                                                                      index=False)
    expected = np.zeros((3, 3))
    expected[0, 1] = expected[2, 1] = 1
    np.testing.assert_array_equal(read_graph(tmp_path / "e.csv", VARIABLES), expected)
    # Adjacency in another variable order is re-ordered to the data's.
    order = ["c", "a", "b"]
    adjacency = pd.DataFrame(expected, index=VARIABLES, columns=VARIABLES).loc[order, order]
    (adjacency * 0.7).to_csv(tmp_path / "adj.csv")
    np.testing.assert_array_equal(read_graph(tmp_path / "adj.csv", VARIABLES), expected)


def test_a_graph_naming_unknown_variables_is_refused(tmp_path):
    np.savez(tmp_path / "samples.npz", samples=np.zeros((2, 3, 3)), variables=np.array(VARIABLES))
    pd.DataFrame({"source": ["a"], "target": ["zz"]}).to_csv(tmp_path / "g.csv", index=False)
    assert_one_line_error(invoke("evaluate", tmp_path / "samples.npz", "--truth",
                                 tmp_path / "g.csv"), "zz", "g.csv")
