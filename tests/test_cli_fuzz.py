"""Fuzzing the CSV reader of ``prodag fit`` (hypothesis): random separators, quoting, headers,
index columns, decimal marks, blanks and stray text. Every file either reads into a table
that ``check_data`` accepts with the shape that was written, or raises the package's own
``DataError`` (one line on the command line); never another exception."""

import string
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from prodag.cli.files import read_table
from prodag.inputs.validation import DataError, check_data

SEPARATORS = [",", ";", "\t", "|"]
NAMES = st.text(alphabet=string.ascii_letters + "_ ", min_size=1, max_size=6)
JUNK = st.sampled_from(["", " ", "abc", "NA", "1,5", "53,456", '"', "1e400", "-", "∞", "ä"])


@st.composite
def tables(draw):
    """``(text, sep, decimal, header, expected shape or None)``: a CSV file's text, how it is
    read, and the shape it must read as when it is a clean table."""
    sep = draw(st.sampled_from(SEPARATORS))
    decimal = draw(st.sampled_from([".", ","]).filter(lambda mark: mark != sep))
    n, p = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    header = draw(st.booleans())
    names = draw(st.lists(NAMES, min_size=p, max_size=p, unique_by=str.strip))
    values = draw(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32),
                                    min_size=p, max_size=p), min_size=n, max_size=n))
    quote = draw(st.booleans())
    index = draw(st.sampled_from([None, "", "id"]))
    corrupt = draw(st.booleans())

    def cell(value):
        text = repr(float(value)).replace(".", decimal)
        return f'"{text}"' if quote or decimal == sep else text

    lines = ([([index] if index is not None else []) + [f'"{name}"' if quote else name
                                                         for name in names]]
             if header else [])
    for i, row in enumerate(values):
        lines.append(([str(i)] if index is not None else []) + [cell(v) for v in row])
    if corrupt and lines:
        row = draw(st.integers(0, len(lines) - 1))
        column = draw(st.integers(0, len(lines[row]) - 1))
        lines[row][column] = draw(JUNK)
    text = "\n".join(sep.join(line) for line in lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    width = p if index is None or header else p + 1  # without a header an index is a variable
    varies = n >= 2 and all(len({float(np.float32(row[j])) for row in values}) > 1
                            for j in range(p))
    clean = not corrupt and varies and width >= 2
    return text, sep, decimal, header, (n, width) if clean else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_every_csv_reads_with_the_right_shape_or_raises_a_data_error(tmp_path_factory, case):
    text, sep, decimal, header, shape = case
    path = Path(tmp_path_factory.mktemp("fuzz")) / "data.csv"
    path.write_text(text, encoding="utf-8")
    try:
        frame = read_table(path, sep=sep, header=header, decimal=decimal)
        data, names = check_data(frame)
    except DataError as error:
        assert shape is None, f"a clean table of shape {shape} was refused: {error}"
        return
    if shape is not None:
        assert data.shape == shape
    assert np.isfinite(data).all() and len(names) == data.shape[1]
