"""Input validation with errors that say what is wrong and how to fix it.

``check_data`` turns a user's table into a float64 ``(n, p)`` array plus column names, and
raises :class:`DataError` (a ``ValueError``) naming the offending rows or columns otherwise.
``check_rows`` checks rows to score or predict against the fitted variables. (Checks of
setting values live in ``prodag.inputs.checks`` and ``prodag.config.parameters``.)
Pure numpy/pandas: importing this module does not start JAX. Warnings about data that can
be fitted but deserve a look (outliers, duplicated columns, few rows) are in
``prodag.inputs.diagnostics`` (``outliers`` and ``warn_outliers`` are importable from here too).
"""

from __future__ import annotations

import numbers
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prodag.inputs.checks import check_integer

_MAX_NAMES_SHOWN = 8
MIN_FIT_ROWS = 3
"""The fewest rows ``ProDAG.fit`` accepts: with two, the centred data have one direction
only, so every pair of variables is perfectly correlated."""


class DataError(ValueError):
    """The data table cannot be used as it is; the message says why and what to do."""


class NonNumericDataError(DataError, TypeError):
    """Some values of the data table are not numbers (also a ``TypeError``, as numpy raises)."""


def _format_names(names: Sequence[object]) -> str:
    """``'a', 'b' and 3 more``: a short, quoted list of names for error messages."""
    shown = ", ".join(repr(str(name)) for name in names[:_MAX_NAMES_SHOWN])
    hidden = len(names) - _MAX_NAMES_SHOWN
    return f"{shown} and {hidden} more" if hidden > 0 else shown


def check_data(X, *, min_rows: int = 2, bounded: bool = True) -> tuple[np.ndarray, list[str]]:
    """Validate a data table and return it as a float64 array with its column names.

    Parameters
    ----------
    X : numpy array, list of lists or pandas DataFrame of shape (n, p)
        One row per observation, one column per variable. Boolean columns count as 0/1.
    min_rows : int
        The fewest rows accepted (at least 2; ``ProDAG.fit`` asks ``MIN_FIT_ROWS``).
    bounded : bool
        Refuse columns too large to compute with (``check_magnitude``); ``False`` for data
        about to be log-transformed, which brings any finite positive value into range.

    Returns
    -------
    data : np.ndarray of shape (n, p), dtype float64
        A fresh C-ordered copy; the caller may modify it. (One memory layout for every
        input: sums over rows run in the same order, so equal tables give equal fits.)
    names : list of str, length p
        The DataFrame's column names as strings, else ``x0 .. x{p-1}``.

    Raises
    ------
    DataError
        If the table is not 2-D, has fewer than ``min_rows`` rows or fewer than 2 variables,
        has duplicate column names, non-numeric columns, NaN or infinite values, columns
        whose squares overflow (with ``bounded``), or constant columns.
    """
    min_rows = check_integer("min_rows", min_rows, minimum=2)
    if isinstance(X, pd.DataFrame):
        names = [str(column) for column in X.columns]
        _check_unique_names(names)
        _check_shape((X.shape[0], X.shape[1]), min_rows)
        data = _numeric_frame(X, names)
    else:
        array = _as_array(X)
        _check_shape(array.shape, min_rows)
        names = [f"x{j}" for j in range(array.shape[1])]
        data = _numeric_array(array, names)
    _check_finite(data, names)
    if bounded:
        check_magnitude(data, names)
    _check_not_constant(data, names)
    return np.ascontiguousarray(data), names


def _as_array(X) -> np.ndarray:
    """``X`` as a numpy array, with a clear error for ragged lists or a missing table."""
    if X is None:
        raise DataError("No data was given: pass an (n, p) numpy array, list of lists or "
                        "pandas DataFrame with one row per observation.")
    if type(X).__module__.startswith("scipy.sparse"):
        raise DataError("The data is a sparse matrix, and prodag needs dense data (every "
                        "variable is observed in every row): pass X.toarray().")
    if isinstance(X, pd.Series):
        raise DataError("Expected a 2-D table (n rows x p variables) but got a pandas Series "
                        "(one variable). Pass a DataFrame with at least 2 columns.")
    try:
        array = np.asarray(X)
    except ValueError as error:  # ragged nested lists
        raise DataError("Could not read the data as a table: the rows have different lengths "
                        f"({error}). Give every row the same number of values.") from None
    if array.dtype.kind == "c":
        _reject_complex([f"x{j}" for j in range(array.shape[-1])] if array.ndim else ["x0"])
    return array


def _check_shape(shape: tuple[int, ...], min_rows: int) -> None:
    if len(shape) != 2:
        hint = (" For a single variable, structure learning needs at least 2 variables."
                if len(shape) == 1 else "")
        raise DataError(f"Expected a 2-D table (n rows x p variables) but got an array of "
                        f"shape {shape} ({len(shape)}-D).{hint} Reshape or select the data so "
                        "that rows are observations and columns are variables.")
    n, p = shape
    if n < min_rows:
        raise DataError(f"The data has {n} sample(s) (rows) but at least {min_rows} are needed"
                        + (" (with 2, every pair of centred variables is perfectly correlated "
                           "and the posterior says nothing about the graph)" if n == 2 else "")
                        + ". Provide "
                        "more observations (rows are observations, columns are variables; "
                        "transpose the table if it is the other way round).")
    if p < 2:
        raise DataError(f"The data has {p} feature(s) (shape={tuple(shape)}) while a minimum of 2 "
                        "is required: structure learning needs at least 2 variables (columns). "
                        "Rows must be observations and columns variables.")


def _check_unique_names(names: list[str]) -> None:
    duplicates = [name for name, count in Counter(names).items() if count > 1]
    if duplicates:
        raise DataError(f"Duplicate column names: {_format_names(duplicates)}. Every variable "
                        "needs its own name: rename or drop the repeated columns.")


def _numeric_frame(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    return _stack_numeric_columns([_column_values(frame.iloc[:, j]) for j in range(len(names))],
                                  names)


def _column_values(column: pd.Series) -> np.ndarray:
    """A column's values; nullable numeric columns (``Int64``, ``boolean``) give NaN for NA."""
    if (pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype)) \
            and not pd.api.types.is_complex_dtype(column.dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    return column.to_numpy()


def _numeric_array(array: np.ndarray, names: list[str]) -> np.ndarray:
    if array.dtype.kind in "biuf":
        return np.array(array, dtype=np.float64)
    return _stack_numeric_columns([array[:, j] for j in range(len(names))], names)


def _stack_numeric_columns(columns: list[np.ndarray], names: list[str]) -> np.ndarray:
    """Columns as one float64 array; a column is numeric when every value converts to a real
    float (booleans, integers, floats, numeric strings; missing values become NaN)."""
    _reject_complex([name for column, name in zip(columns, names)
                     if np.asarray(column).dtype.kind == "c"])
    converted, bad = [], []
    for column, name in zip(columns, names):
        try:
            if np.asarray(column).dtype.kind in "mM":  # timedelta, datetime
                raise TypeError
            converted.append(np.asarray(column, dtype=np.float64))
        except (TypeError, ValueError):
            bad.append((name, column))
    if bad:
        _raise_non_numeric(bad)
    return np.stack(converted, axis=1)


THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
"""A number written with comma thousands separators: ``53,456`` or ``1,234,567.5``."""
DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+([eE][+-]?\d+)?$")
"""A number written with a decimal comma: ``3,14``."""


def _not_a_number(value) -> bool:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return True
    return isinstance(value, (complex, np.complexfloating))


def _reject_complex(names: list[str]) -> None:
    if names:
        raise DataError(f"Complex data not supported: column(s) {_format_names(names)} hold "
                        "complex numbers. Pass real values (e.g. the real part or the modulus).")


def _raise_non_numeric(bad: list[tuple[str, np.ndarray]]) -> None:
    """Name each non-numeric column with its first non-number (row, value) and the fix that
    fits it: thousands separators, a decimal comma, categories, or a typo."""
    parts, hints = [], []
    for name, column in bad[:_MAX_NAMES_SHOWN]:
        values = np.asarray(column, dtype=object)
        dates = np.asarray(column).dtype.kind in "mM" or any(
            hasattr(value, "isoformat") or hasattr(value, "total_seconds") for value in values)
        rows = [] if dates else [i for i, value in enumerate(values) if _not_a_number(value)]
        if not rows:  # datetimes, timedeltas
            parts.append(f"{str(name)!r} (dates or durations)")
            hints.append("convert dates and durations to numbers (e.g. seconds) or drop them")
            continue
        first = values[rows[0]]
        parts.append(f"{str(name)!r} (row {rows[0]}: {str(first)[:30]!r}"
                     + (f", and {len(rows) - 1} more row(s))" if len(rows) > 1 else ")"))
        text = str(first).strip()
        if THOUSANDS.match(text):
            hints.append(f"{text!r} has thousands separators: remove them, e.g. "
                         "pandas.read_csv(..., thousands=',') (prodag fit --thousands ',')")
        elif DECIMAL_COMMA.match(text):
            hints.append(f"{text!r} has a decimal comma: read it with "
                         "pandas.read_csv(..., decimal=',') (prodag fit --decimal ',')")
        elif len(rows) > len(values) / 2:
            hints.append(f"{str(name)!r} holds categories: encode it as numbers (e.g. "
                         "pandas.get_dummies or category codes) or drop it")
        else:
            hints.append(f"{str(first)[:30]!r} in {str(name)!r} looks like a typo or a "
                         "missing-value marker: correct it, or leave the cell empty and "
                         "drop the row")
    more = f" and {len(bad) - _MAX_NAMES_SHOWN} more" if len(bad) > _MAX_NAMES_SHOWN else ""
    unique_hints = list(dict.fromkeys(hints))
    raise NonNumericDataError(
        f"{len(bad)} column(s) are not numeric: {', '.join(parts)}{more} (rows count from 0, "
        f"the header not counted; a value's float() argument must be a string or a real "
        f"number). prodag models continuous variables: " + "; ".join(unique_hints) + ".")


def _check_finite(data: np.ndarray, names: list[str]) -> None:
    finite = np.isfinite(data)
    if finite.all():
        return
    bad_rows = np.flatnonzero(~finite.all(axis=1))
    bad_columns = [names[j] for j in np.flatnonzero(~finite.all(axis=0))]
    n_nan = int(np.isnan(data).sum())
    n_inf = int(np.isinf(data).sum())
    rows_shown = ", ".join(str(i) for i in bad_rows[:_MAX_NAMES_SHOWN])
    if len(bad_rows) > _MAX_NAMES_SHOWN:
        rows_shown += f" and {len(bad_rows) - _MAX_NAMES_SHOWN} more"
    raise DataError(f"The data contains {n_nan} NaN and {n_inf} infinite value(s) in "
                    f"{len(bad_rows)} row(s) (0-based row indices {rows_shown}) and column(s) "
                    f"{_format_names(bad_columns)}. Impute the missing values or drop those "
                    "rows (e.g. DataFrame.dropna()) before fitting.")


def check_magnitude(data: np.ndarray, names: list[str]) -> None:
    """Refuse the columns of the finite ``data (n, p)`` whose sum of squares overflows float64
    (beyond about 1.8e308: values near ``1e154`` with 100 rows, or one value near ``1e300``).
    Every fit starts from the columns' variances and cross-products, which are then infinite
    or NaN; below the bound every one of them is finite (a cross-product is at most the root
    of the two sums of squares)."""
    with np.errstate(over="ignore"):
        squares = np.square(data).sum(axis=0)
    huge = np.flatnonzero(~np.isfinite(squares))
    if huge.size == 0:
        return
    largest = np.abs(data[:, huge]).max(axis=0)
    powers = [f"{names[j]!r} by 1e{int(np.floor(np.log10(value)))}"
              for j, value in zip(huge[:_MAX_NAMES_SHOWN], largest)]
    raise DataError(f"{len(huge)} column(s) hold values too large to compute with: "
                    f"{_format_names([names[j] for j in huge])} (up to "
                    f"{largest.max():.3g} in magnitude). The sum of their squares overflows "
                    f"float64 (largest number {np.finfo(np.float64).max:.3g}), so their "
                    "variance, which every fit needs, is infinite (standardising would divide "
                    "by it too). Rescale them before fitting: divide each by a power of ten, "
                    f"e.g. {', '.join(powers)} (their unit only changes).")


def _check_not_constant(data: np.ndarray, names: list[str]) -> None:
    constant = [names[j] for j in np.flatnonzero(np.ptp(data, axis=0) == 0)]
    if constant:
        raise DataError(f"{len(constant)} column(s) are constant: {_format_names(constant)}. "
                        "A constant variable carries no information about the graph and "
                        "cannot be standardised: drop these columns.")


def _columns_by_name(name: str, frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame``'s columns in the order of ``columns``; ``DataError`` unless they are the
    same names."""
    given = list(frame.columns)
    if given == columns:
        return frame
    missing = [c for c in columns if c not in given]
    unexpected = [c for c in given if c not in columns]
    if missing or unexpected or len(given) != len(columns):
        raise DataError(
            f"{name}'s column names must be the variables the model was fitted on "
            f"({_format_names(columns)})"
            + (f"; missing: {_format_names(missing)}" if missing else "")
            + (f"; not fitted: {_format_names(unexpected)}" if unexpected else "")
            + (f"; repeated names" if not (missing or unexpected) else "")
            + ". Rename or select the columns (or pass a numpy array, read by position).")
    return frame[columns]


def check_rows(name: str, X, p: int, columns: Sequence[str] | None = None) -> np.ndarray:
    """``X`` as a finite float ``(m, p)`` array with ``m ≥ 1`` (rows to score or predict).

    A DataFrame with string column names is matched to ``columns`` (the fitted variables) by
    name, in any order; other names raise ``DataError`` naming the missing and the unexpected
    ones (as scikit-learn does). Arrays, and frames without string names, go by position."""
    if columns is not None and isinstance(X, pd.DataFrame) and \
            all(isinstance(c, str) for c in X.columns):
        X = _columns_by_name(name, X, [str(c) for c in columns])
    try:
        data = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a numeric (m, {p}) table.") from None
    if data.ndim == 1:
        raise DataError(f"{name} must be 2-D, (m, {p}); got a 1-D array of shape {data.shape}. "
                        "Reshape your data: X.reshape(1, -1) for a single row.")
    if data.ndim == 2 and data.shape[1] != p:
        raise DataError(f"{name} has {data.shape[1]} features, but ProDAG is expecting {p} "
                        "features as input (the variables it was fitted on).")
    if data.ndim != 2 or data.shape[0] < 1:
        raise DataError(f"{name} must have shape (m, {p}) with m >= 1 (the same "
                                   f"variables as the training data); got {data.shape}.")
    if not np.all(np.isfinite(data)):
        raise DataError(f"{name} contains NaN or infinite values; impute or drop "
                                   "those rows first.")
    return data


def as_given(X, values: np.ndarray, columns: Sequence[str]):
    """``values (m, p)``, in the fitted ``columns``' order, shaped like the rows ``X`` they
    answer: for a DataFrame, a DataFrame with its index and its columns in its order
    (``check_rows`` matched string names to ``columns``, other labels by position); else the
    array."""
    if not isinstance(X, pd.DataFrame):
        return values
    if all(isinstance(c, str) for c in X.columns):
        frame = pd.DataFrame(values, index=X.index, columns=[str(c) for c in columns])
        return frame[list(X.columns)]
    return pd.DataFrame(values, index=X.index, columns=X.columns)


from prodag.inputs.diagnostics import OUTLIER_ROBUST_SDS, OutlierWarning, outliers, warn_outliers  # noqa: E402,F401,E501
