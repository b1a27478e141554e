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


# ---- the bad inputs of issue 34: each answered by a one-line error before any output -------

def write(path, text):
    path.write_text(text)
    return path


def data_text(rows=6):
    values = np.random.default_rng(1).normal(size=(rows, 3)).round(3)
    return "a,b,c\n" + "\n".join(",".join(map(str, row)) for row in values) + "\n"


def test_unquoted_thousands_separators_are_refused_naming_the_line(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", "a,b,c\n1,53,456,2\n2,3,4\n3,5,6\n")
    assert_one_line_error(invoke("fit", path, "--out", tmp_path / "out"), "line 2",
                          "thousands")
    assert not (tmp_path / "out").exists()


def test_quoted_thousands_and_decimal_commas_read_with_their_options(tmp_path):
    quoted = write(tmp_path / "q.csv", 'a,b\n"1,000",2\n"2,500",3\n3,4\n')
    assert read_table(quoted, thousands=",")["a"].tolist() == [1000, 2500, 3]
    commas = write(tmp_path / "c.csv", "a;b\n1,5;2\n2,25;3\n")
    assert read_table(commas, sep=";", decimal=",")["a"].tolist() == [1.5, 2.25]


@pytest.mark.parametrize("text, sep, fragments", [
    ("a,b,c\n1,2,3\n2,abc,4\n3,4,5\n4,5,7\n", ",", ["'b'", "row 1", "'abc'", "typo"]),
    ('a,b,c\n1,"53,456",3\n2,3,4\n3,4,5\n4,5,7\n', ",", ["'53,456'", "--thousands"]),
    ("a;b;c\n1,5;2;3\n2,5;3;4\n3;4;5\n4;5;7\n", ";", ["'1,5'", "--decimal"]),
])
def test_a_value_that_is_not_a_number_is_named_with_its_row_and_fix(tmp_path, no_fit, text,
                                                                    sep, fragments):
    path = write(tmp_path / "d.csv", text)
    result = invoke("fit", path, "--sep", sep, "--out", tmp_path / "out")
    assert_one_line_error(result, *fragments)
    assert "get_dummies" not in result.output


def test_repeated_column_names_are_refused_as_the_api_does(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", "a,a,b\n1,2,3\n4,5,7\n1,1,2\n")
    assert_one_line_error(invoke("fit", path), "repeats", "'a'")


def test_no_header_on_a_file_with_a_header_names_the_header_row(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", data_text())
    assert_one_line_error(invoke("fit", path, "--no-header"), "header row", "--no-header")


def test_a_tab_separator_on_a_comma_file_suggests_the_comma(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", data_text())
    assert_one_line_error(invoke("fit", path, "--sep", "tab"), "--sep ','")


@pytest.mark.parametrize("option", ["--require", "--forbid"])
def test_an_empty_knowledge_file_names_the_option_and_the_file(tmp_path, no_fit, option):
    path = write(tmp_path / "d.csv", data_text())
    empty = write(tmp_path / "edges.csv", "")
    result = invoke("fit", path, option, empty, "--out", tmp_path / "out")
    assert_one_line_error(result, option, "edges.csv", "empty", "source,target")
    assert not (tmp_path / "out").exists() and "Fitting" not in result.output


def test_an_empty_truth_file_names_the_option_and_the_file(tmp_path):
    from prodag.cli.files import read_graph
    from prodag.inputs.validation import DataError

    empty = write(tmp_path / "truth.csv", "")
    with pytest.raises(DataError, match="--truth .*truth.csv is empty"):
        read_graph(empty, VARIABLES)


@pytest.mark.parametrize("seed", ["99999999999999999999", "4294967296", "-1"])
def test_a_seed_out_of_range_is_a_usage_error_naming_seed(tmp_path, no_fit, seed):
    path = write(tmp_path / "d.csv", data_text())
    result = invoke("fit", path, "--seed", seed)
    assert result.exit_code == 2 and "--seed" in result.output
    assert "Traceback" not in result.output


def test_a_bad_setting_stops_before_anything_is_printed_or_created(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", data_text(rows=2))
    result = invoke("fit", path, "--out", tmp_path / "out")
    assert_one_line_error(result, "2 sample(s)", "at least 3")
    assert "Fitting" not in result.output and not (tmp_path / "out").exists()


def test_simulate_refuses_what_cannot_fit_in_memory(tmp_path):
    result = invoke("simulate", "--p", 100000, "--edges", 10, "--n", 10, "--out", tmp_path / "s")
    assert_one_line_error(result, "--p 100000", "memory", "lower --p")
    assert not (tmp_path / "s").exists()


def test_an_out_folder_with_other_files_is_refused_before_the_fit(tmp_path, no_fit):
    path = write(tmp_path / "d.csv", data_text())
    (tmp_path / "out").mkdir()
    write(tmp_path / "out" / "notes.txt", "mine")
    assert_one_line_error(invoke("fit", path, "--out", tmp_path / "out"), "notes.txt")
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"


def test_results_folder_replaces_a_folder_whole_or_leaves_it(tmp_path):
    from prodag.cli.folders import results_folder

    out = tmp_path / "out"
    out.mkdir()
    write(out / "summary.json", "old")
    write(out / "graph.png", "old")
    with pytest.raises(RuntimeError):
        with results_folder(out, ["summary.json", "graph.png"]) as folder:
            write(folder / "summary.json", "new")
            raise RuntimeError("stopped half-way")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "summary.json").read_text() == "old"
    with results_folder(out, ["summary.json", "graph.png"]) as folder:
        write(folder / "summary.json", "new")
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]
    assert (out / "summary.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("encoding, family", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_a_file_with_a_byte_order_mark_is_read_in_the_encoding_it_marks(tmp_path, capsys,
                                                                        encoding, family):
    named = frame().rename(columns={"a": "température"})
    named.to_csv(tmp_path / "d.csv", index=False, encoding=encoding)
    table = read_table(tmp_path / "d.csv")
    assert list(table.columns) == ["température", "b", "c"]
    np.testing.assert_allclose(table.to_numpy(), named.to_numpy())
    note = capsys.readouterr().err
    assert f"is {family} text (it starts with a byte-order mark)" in note
    assert f"--encoding {encoding}" in note and "latin-1" not in note
    named.to_csv(tmp_path / "d.csv.gz", index=False, encoding=encoding)  # compressed too
    assert list(read_table(tmp_path / "d.csv.gz").columns) == ["température", "b", "c"]


def test_a_utf8_byte_order_mark_is_read_without_a_note(tmp_path, capsys):
    frame().to_csv(tmp_path / "d.csv", index=False, encoding="utf-8-sig")
    assert list(read_table(tmp_path / "d.csv", encoding="latin-1").columns) == VARIABLES
    assert list(read_table(tmp_path / "d.csv").columns) == VARIABLES
    assert capsys.readouterr().err.count("byte-order mark") == 1  # only against latin-1


def test_utf16_text_without_a_byte_order_mark_names_its_encoding(tmp_path, no_fit):
    frame().to_csv(tmp_path / "d.csv", index=False, encoding="utf-16-le")
    assert_one_line_error(invoke("fit", tmp_path / "d.csv"), "UTF-16 text without a byte-order "
                          "mark", "--encoding utf-16-le")
    table = read_table(tmp_path / "d.csv", encoding="utf-16-le")
    np.testing.assert_allclose(table.to_numpy(), frame().to_numpy())


def zipped_workbook(path):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:  # an .xlsx file's layout, without openpyxl
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return path


@pytest.mark.parametrize("name, content, fragments", [
    ("data.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
     ["data.png is a PNG image, not a CSV table", "save it as CSV first"]),
    ("data.pdf", b"%PDF-1.4\n%\xe2\xe3\n1 0 obj,2,3\n", ["is a PDF document"]),
    ("data.parquet", b"PAR1" + bytes(64), ["is a Parquet file", "pandas.read_parquet"]),
    ("data.csv", b"a,b\n1,2\x00\x01\x02\x03\n", ["is a binary file", "NUL byte"]),
])
def test_a_binary_file_is_named_for_what_it_is(tmp_path, no_fit, name, content, fragments):
    (tmp_path / name).write_bytes(content)
    result = invoke("fit", tmp_path / name)
    assert_one_line_error(result, *fragments)
    assert "latin-1" not in result.output and "thousands" not in result.output


def test_an_excel_workbook_is_named_with_the_way_to_a_csv_file(tmp_path, no_fit):
    result = invoke("fit", zipped_workbook(tmp_path / "data.xlsx"))
    assert_one_line_error(result, "is an Excel workbook (.xlsx), not a CSV table",
                          "save it as CSV first", "pandas.read_excel('data.xlsx')")
    assert "compressed" not in result.output


def test_a_numpy_archive_is_named_as_one(tmp_path, no_fit):
    np.savez(tmp_path / "data.npz", x=np.zeros((4, 3)))
    assert_one_line_error(invoke("fit", tmp_path / "data.npz"), "is a numpy archive (.npz)")
