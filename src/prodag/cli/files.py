"""Files in: the data table and a true graph, checked so that a malformed file is named with
what is wrong and how to fix it, before any fitting starts.

(Reading a CSV robustly is of use beyond the command line; it can move into the library.)
"""

from __future__ import annotations

import csv
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from prodag.cli import sniff
from prodag.cli.errors import warn
from prodag.graph import adjacency_from_edges
from prodag.inputs.validation import DataError, check_data

SEPARATOR_NAMES = {"\t": "a tab", ";": "';'", "|": "'|'", ",": "','"}
"""Separators recognised in a file read as one column, and how a message names them."""
INDEX_NAMES = {"id", "index", "idx", "row", "rowid", "row_id", "rownames"}
"""Names (any case) of a first column that is a saved row index when it counts the rows."""


def require_file(path: Path, what: str = "file") -> None:
    """A ``FileNotFoundError`` or ``DataError`` unless ``path`` is an existing file."""
    if path.is_dir():
        raise DataError(f"{path} is a directory; give the {what} inside it.")
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))


def parse_sep(sep: str) -> str:
    """The ``--sep`` text as a separator; ``tab`` and a typed ``\\t`` mean a tab."""
    return "\t" if sep in ("tab", "\\t") else sep


def read_table(path: Path, *, sep: str = ",", header: bool = True, decimal: str = ".",
               thousands: str | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a CSV data table (one row per observation, one column per variable).

    Refused, with the fix: a file whose header row holds numbers only (no header: pass
    ``--no-header``), a header row read as data (``--no-header`` on a file that has one),
    repeated column names, rows with more fields than the header (e.g. unquoted thousands
    separators), a file read as one column that contains another separator (pass
    ``--sep``), and the cases of ``prodag.cli.sniff`` (a binary file such as an image or a
    workbook, another ``encoding``, ``;`` with decimal commas). Read with a note: a
    compressed file under a plain name; text with a byte-order mark other than
    ``encoding``'s (read in the marked encoding); a separator ending every line (its empty
    last column is dropped). Dropped with a warning: a first column that is a saved row
    index, i.e. one with an empty header (pandas' ``Unnamed: 0``),
    or one named like an index (``INDEX_NAMES``, e.g. ``id``) whose values count the rows
    (0..n-1 or 1..n). With ``header=False`` the columns are named ``X0 .. X{p-1}``.
    ``decimal``, ``thousands`` and ``encoding`` are pandas'.
    """
    require_file(path, "CSV file")
    if decimal in (sep, thousands):
        raise DataError(f"--decimal {decimal!r} must differ from --sep {sep!r} and "
                        f"--thousands {thousands!r}.")
    compressed = sniff.compression(path)
    encoding = sniff.text_encoding(path, compressed, encoding)
    text = {"compression": compressed, "encoding": encoding}
    lines = sniff.first_lines(path, compressed, encoding)
    sniff.check_separators(path, lines, sep, decimal)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, header=0 if header else None, index_col=False,
                                decimal=decimal, thousands=thousands, **text)
    except pd.errors.ParserWarning:
        raise DataError(_too_many_fields(path, sep, text)) from None
    except UnicodeDecodeError as error:
        raise sniff.encoding_error(path, error, encoding) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as error:
        raise DataError(f"Could not read {path} as a CSV table: "
                        f"{' '.join(str(error).split())}{_parser_hint(error)}") from None
    frame = sniff.drop_trailing_column(path, frame, lines, sep)
    if header:
        _check_header(path, sep, text)
    else:
        _check_no_header(path, frame)
        frame.columns = [f"X{j}" for j in range(frame.shape[1])]
    _check_separator(path, frame, sep)
    return _drop_index_column(path, frame)


def _too_many_fields(path: Path, sep: str, text: dict) -> str:
    """The message for a row with more fields than the header, naming the first such line."""
    where = "some row"
    if len(sep) == 1:
        with sniff.open_text(path, text["compression"], text["encoding"]) as file:
            rows = csv.reader(file, delimiter=sep)
            width = len(next(rows, []))
            for number, row in enumerate(rows, start=2):
                if len(row) > width:
                    where = (f"line {number} ({sep.join(row)[:40]!r}) has {len(row)} fields "
                             f"under {width} names")
                    break
    return (f"{path}: {where}, more fields than the header row. Numbers written with "
            "thousands separators (53,456) in a comma-separated file do this: quote them "
            "(\"53,456\") and pass --thousands ',', or remove the separators; otherwise check "
            "the separator (--sep) and the header row.")


def _parser_hint(error: Exception) -> str:
    if "fields" in str(error):
        return (". A row with more fields than the header often holds numbers written with "
                "thousands separators (53,456) in a comma-separated file: quote them or "
                "remove the separators; or the file uses another separator (--sep).")
    return ""


def _check_no_header(path: Path, frame: pd.DataFrame) -> None:
    """With ``--no-header``: refuse a first row of names above numeric columns."""
    if len(frame) < 2:
        return
    first, rest = frame.iloc[0], frame.iloc[1:]
    named = [j for j in range(frame.shape[1])
             if isinstance(first.iloc[j], str) and not _is_number(first.iloc[j])
             and pd.to_numeric(rest.iloc[:, j], errors="coerce").notna().all()]
    if named and len(named) == frame.shape[1]:
        shown = ", ".join(str(first.iloc[j])[:12] for j in named[:3])
        raise DataError(f"--no-header, but the first row of {path} holds names ({shown}, ...) "
                        "above columns of numbers: it is a header row. Drop --no-header.")


def _check_header(path: Path, sep: str, text: dict) -> None:
    names = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str,
                        index_col=False, **text).iloc[0]
    repeated = sorted({name for name in names.dropna() if list(names).count(name) > 1})
    if repeated:
        raise DataError(f"The header row of {path} repeats the column name(s) "
                        f"{', '.join(map(repr, repeated))}: every variable needs its own "
                        "name. Rename or drop the repeated columns.")
    if names.notna().all() and all(_is_number(name) for name in names):
        shown = ", ".join(name[:10] for name in list(names)[:3])
        raise DataError(f"The first row of {path} holds numbers ({shown}, ...), not variable "
                        "names: the file seems to have no header row. Add a header row of "
                        "variable names, or pass --no-header (the columns are then named "
                        "X0, X1, ...).")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_separator(path: Path, frame: pd.DataFrame, sep: str) -> None:
    if frame.shape[1] != 1:
        return
    name = str(frame.columns[0])
    found = [other for other in SEPARATOR_NAMES if other != sep and other in name]
    if found:
        raise DataError(f"{path} reads as one column, {name[:40]!r}..., which contains "
                        f"{SEPARATOR_NAMES[found[0]]}: the file seems to be separated by "
                        f"{SEPARATOR_NAMES[found[0]]}, not {sep!r}. Pass --sep "
                        f"{'tab' if found[0] == chr(9) else repr(found[0])}.")


def _drop_index_column(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    if frame.shape[1] < 2:
        return frame
    first = frame.columns[0]
    values = frame[first].to_numpy()
    rows = np.arange(len(frame))
    unnamed = str(first).startswith("Unnamed: 0")
    counts = (str(first).lower() in INDEX_NAMES and np.issubdtype(values.dtype, np.number)
              and (np.array_equal(values, rows) or np.array_equal(values, rows + 1)))
    if not (unnamed or counts):
        return frame
    reason = "it has no header" if unnamed else "its values number the rows"
    warn(f"ignoring the first column {first!r} of {path}: {reason}, so it is taken as a "
         "saved row index, not a variable.")
    return frame.drop(columns=first)


def read_graph(path: Path, variables: list[str]) -> np.ndarray:
    """A true graph from CSV as a ``(p, p)`` 0/1 adjacency over ``variables``.

    Two layouts are accepted: an edge list with columns ``source,target`` (one directed edge
    per row), or a ``p × p`` adjacency matrix whose first column and header hold the variable
    names (nonzero ``[j, k]`` = edge j → k).
    """
    require_file(path, "graph CSV file")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise DataError(f"--truth {path} is empty: give the true graph as an edge list with "
                        "the header source,target (one row per edge) or as a p x p adjacency "
                        "matrix labelled by the variables.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise DataError(f"--truth {path}: could not read it as a CSV table: "
                        f"{' '.join(str(error).split())}") from None
    if {"source", "target"} <= set(frame.columns):
        try:
            graph = adjacency_from_edges(frame.astype({"source": str, "target": str}),
                                         variables)
        except ValueError as error:
            raise DataError(f"The graph file {path}: {error} Known variables: "
                            f"{', '.join(variables)}.") from None
    else:
        matrix = frame.set_index(frame.columns[0])
        matrix.index = matrix.index.astype(str)
        if sorted(matrix.index) != sorted(variables) or \
                sorted(matrix.columns) != sorted(variables):
            raise DataError(f"The graph file {path} is neither an edge list (columns "
                            "'source,target') nor an adjacency matrix labelled by the "
                            f"variables ({', '.join(variables)}).")
        graph = (matrix.loc[variables, variables].to_numpy(dtype=float) != 0).astype(np.int64)
    loops = [variables[j] for j in np.flatnonzero(np.diag(graph))]
    if loops:
        raise DataError(f"The graph file {path} has an edge from a variable to itself "
                        f"({', '.join(f'{name} -> {name}' for name in loops)}); a DAG has "
                        "none, so it cannot be scored: remove those edges.")
    return graph


def log_transform(frame: pd.DataFrame) -> pd.DataFrame:
    """Natural log of every value; all values must be positive."""
    data, names = check_data(frame, bounded=False)
    nonpositive = [name for name, low in zip(names, data.min(axis=0)) if low <= 0]
    if nonpositive:
        raise DataError(f"--log-transform needs positive values, but column(s) "
                        f"{', '.join(nonpositive)} contain values <= 0. Shift those columns "
                        "or drop --log-transform.")
    return pd.DataFrame(np.log(data), columns=names, index=frame.index)


def split_interventions(frame: pd.DataFrame, interventions: str | None, *, sep: str = ","):
    """``(variables, targets)``: with ``interventions`` the name of a column of ``frame``, the
    frame without it and that column (each row's targets); with a file path, the frame and
    that file's 0/1 table (one column per variable); with None, ``(frame, None)``."""
    if interventions is None:
        return frame, None
    if interventions in frame.columns:
        targets = frame[interventions].astype(object).where(frame[interventions].notna(), "")
        return frame.drop(columns=interventions), targets.astype(str).to_list()
    path = Path(interventions)
    if not path.is_file():
        raise DataError(f"--interventions {interventions}: neither a column of the data "
                        f"({', '.join(map(str, frame.columns))}) nor a file.")
    table = pd.read_csv(path, sep=sep)
    if len(table) != len(frame):
        raise DataError(f"--interventions {path} has {len(table)} rows; the data have "
                        f"{len(frame)}.")
    return frame, table


def split_conditions(frame: pd.DataFrame, conditions: str | None):
    """``(variables, labels)``: with ``conditions`` the name of a column of ``frame``, the
    frame without it and that column as strings (each row's condition); with None,
    ``(frame, None)``."""
    if conditions is None:
        return frame, None
    if conditions not in frame.columns:
        raise DataError(f"--conditions {conditions}: not a column of the data "
                        f"({', '.join(map(str, frame.columns))}).")
    labels = frame[conditions]
    if labels.isna().any():
        raise DataError(f"--conditions {conditions}: {int(labels.isna().sum())} row(s) have no "
                        "condition; give every row one.")
    return frame.drop(columns=conditions), labels.astype(str).to_list()


NPZ_READ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)
"""What numpy raises for a file that is not a complete ``.npz`` archive."""


def npz_names(path: Path) -> set[str]:
    """The array names of the ``.npz`` archive ``path``, every array read once, so that a
    file that is no complete ``.npz`` (a ``.npy``, a CSV, an empty or truncated file) is a
    ``DataError`` here."""
    what = f"{path} is not a samples.npz or posterior.npz written by prodag"
    if not zipfile.is_zipfile(path):
        with path.open("rb") as handle:
            start = handle.read(6)
        kind = ("it is empty" if not start else
                "it holds a single numpy array (.npy)" if start == b"\x93NUMPY" else
                "it is not an .npz archive, or it is truncated")
        raise DataError(f"{what}: {kind}.")
    try:
        with np.load(path, allow_pickle=False) as archive:
            for name in archive.files:
                archive[name]
            return set(archive.files)
    except NPZ_READ_ERRORS as error:
        raise DataError(f"{what}: it is damaged or truncated ({error}).") from None
