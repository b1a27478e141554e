"""What a data file is before pandas parses it, so that each of these is read, or named with
its fix, instead of failing deep in the parser: a compressed file under a plain name (read,
with a note), a file that is not text at all (an image, a PDF, an Excel workbook, a Parquet
file...: named, with how to get a CSV table), text with a byte-order mark (read in the
encoding it marks, with a note when that is not ``--encoding``), another text encoding than
UTF-8 (``--encoding``), a file separated by ``;`` with decimal commas (``--sep ';' --decimal
','``), and a separator at the end of every line (an empty last column, dropped with a
note)."""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import lzma
import re
import zipfile
from pathlib import Path

import pandas as pd

from prodag.cli.errors import warn
from prodag.inputs.validation import DataError

MAGIC = {b"\x1f\x8b": "gzip", b"PK\x03\x04": "zip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
"""The first bytes of each compressed format pandas reads, and its name for it."""
SUFFIXES = {"gzip": ".gz", "zip": ".zip", "bz2": ".bz2", "xz": ".xz"}
DECIMAL_COMMA = re.compile(r"(?<![\d,])-?\d+,\d+(?![\d,])")
"""A number written with a decimal comma (``0,125``, ``-3,5``), as one field."""


TABLE_FORMATS = {
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1": ("an Excel workbook (.xls) or another Microsoft Office "
                                         "file", "pandas.read_excel({name!r})"),
    b"PAR1": ("a Parquet file", "pandas.read_parquet({name!r})"),
    b"ARROW1": ("an Arrow (Feather) file", "pandas.read_feather({name!r})"),
    b"\x89HDF\r\n\x1a\n": ("an HDF5 file", "pandas.read_hdf({name!r}, key)"),
    b"SQLite format 3\x00": ("an SQLite database",
                             "pandas.read_sql(query, sqlite3.connect({name!r}))"),
    b"\x93NUMPY": ("a numpy array (.npy)", "pandas.DataFrame(numpy.load({name!r}))"),
}
"""The first bytes of binary formats that hold tables, with what they are and the Python that
reads one into a DataFrame (``{name}``: the file's name)."""
OTHER_FORMATS = {b"\x89PNG\r\n\x1a\n": "a PNG image", b"\xff\xd8\xff": "a JPEG image",
                 b"GIF8": "a GIF image", b"%PDF": "a PDF document",
                 b"\x7fELF": "a program (ELF executable)"}
"""The first bytes of other binary formats a data file is mistaken for, and what they are."""
ZIPPED_FORMATS = {"xl/": ("an Excel workbook (.xlsx)", "pandas.read_excel({name!r})"),
                  "content.xml": ("an OpenDocument file (.ods, .odt)",
                                  "pandas.read_excel({name!r})"),
                  "word/": ("a Word document (.docx)", None),
                  "ppt/": ("a PowerPoint presentation (.pptx)", None)}
"""Formats that are zip archives, by the name of a member only they have (``.npz`` archives
are told by their ``.npy`` members)."""
NPZ = ("a numpy archive (.npz)", "pandas.DataFrame(numpy.load({name!r})[array_name])")
AS_CSV = ("prodag fit reads CSV text: a header row of variable names, then one row of numbers "
          "per observation")
BYTE_ORDER_MARKS = [(codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
                    (codecs.BOM_UTF8, "utf-8-sig")]
"""Byte-order marks and the encoding that reads the text after them (UTF-32's first: its
little-endian mark starts with UTF-16's)."""
SNIFFED_BYTES = 8192
"""How much of a file's start is looked at for NUL bytes."""


def not_a_table(path: Path, what: str, reader: str | None) -> DataError:
    """The error for a file that is ``what`` (``a PNG image``), not CSV text, with the fix: for
    a format that holds a table, the Python that reads it (``reader``) to save it as CSV."""
    fix = (f"save it as CSV first, e.g. in Python {reader.format(name=path.name)}"
           ".to_csv('data.csv', index=False), or fit that DataFrame with prodag.ProDAG"
           if reader else "give the data as a CSV file (an Excel workbook: save it as CSV "
                          "first, File > Save As > CSV)")
    return DataError(f"{path} is {what}, not a CSV table ({AS_CSV}): {fix}.")


def check_binary_format(path: Path, start: bytes) -> None:
    """Refuse a file whose first bytes ``start`` (decompressed) mark a known binary format."""
    for magic, (what, reader) in TABLE_FORMATS.items():
        if start.startswith(magic):
            raise not_a_table(path, what, reader)
    for magic, what in OTHER_FORMATS.items():
        if start.startswith(magic):
            raise not_a_table(path, what, None)


def check_zip_members(path: Path) -> None:
    """Refuse a zip archive that is a document (a workbook, a ``.npz``) rather than a
    compressed CSV file."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except zipfile.BadZipFile:
        raise DataError(f"{path} starts like a zip archive but is damaged or truncated; "
                        f"{AS_CSV}.") from None
    for member, (what, reader) in ZIPPED_FORMATS.items():
        if any(name.startswith(member) for name in names):
            raise not_a_table(path, what, reader)
    if names and all(name.endswith(".npy") for name in names):
        raise not_a_table(path, *NPZ)


def compression(path: Path) -> str | None:
    """``"gzip"``, ``"zip"``, ``"bz2"`` or ``"xz"`` when the file starts with that format's
    magic bytes, whatever its name; else None. A compressed file whose name does not say so
    is read all the same, with a note. A known binary format (``check_binary_format``), or a
    zip archive that is a document (``check_zip_members``), is a ``DataError``."""
    with path.open("rb") as handle:
        start = handle.read(16)
    check_binary_format(path, start)
    found = next((name for magic, name in MAGIC.items() if start.startswith(magic)), None)
    if found == "zip":
        check_zip_members(path)
    if found is not None and not path.name.lower().endswith(SUFFIXES[found]):
        warn(f"{path} is {found}-compressed (its name does not end in {SUFFIXES[found]}); "
             "reading it decompressed. (In pandas: pd.read_csv(path, "
             f"compression={found!r}).)")
    return found


@contextlib.contextmanager
def open_bytes(path: Path, compressed: str | None):
    """The file's bytes, decompressed; closed, archive and all, when the block ends."""
    with contextlib.ExitStack() as stack:
        if compressed == "zip":
            archive = stack.enter_context(zipfile.ZipFile(path))
            yield stack.enter_context(archive.open(archive.namelist()[0]))
        else:
            yield stack.enter_context({"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(
                compressed, open)(path, "rb"))


@contextlib.contextmanager
def open_text(path: Path, compressed: str | None, encoding: str):
    """The file as text, decompressed, undecodable bytes replaced (for looking, not reading);
    closed, archive and all, when the block ends."""
    with open_bytes(path, compressed) as raw:
        yield io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline="")


def text_encoding(path: Path, compressed: str | None, encoding: str) -> str:
    """The encoding to read the (decompressed) file in: the one its byte-order mark names
    (with a note when it is not ``encoding``), else ``encoding``. A known binary format
    (``check_binary_format``) or, unless ``encoding`` is UTF-16 or UTF-32, NUL bytes in its
    first ``SNIFFED_BYTES`` are a ``DataError`` saying what the file is, as is an unknown
    ``encoding``."""
    given = codec_name(encoding)
    with open_bytes(path, compressed) as raw:
        start = raw.read(SNIFFED_BYTES)
    marked = next((name for mark, name in BYTE_ORDER_MARKS if start.startswith(mark)), None)
    if marked is not None:
        family = marked.removesuffix("-sig")  # utf-8, utf-16 or utf-32
        if not given.startswith(family):
            warn(f"{path} is {family.upper()} text (it starts with a byte-order mark): "
                 f"reading it as {family.upper()}, not {encoding} (--encoding {family}).")
        return marked
    check_binary_format(path, start)
    if b"\x00" in start and not given.startswith(("utf-16", "utf-32")):
        raise _nul_bytes_error(path, start)
    return encoding


def _nul_bytes_error(path: Path, start: bytes) -> DataError:
    """The error for a file with NUL bytes: UTF-16 text without a byte-order mark (every
    other byte NUL, as ASCII characters are in UTF-16), with the ``--encoding`` that reads
    it, or else a binary file."""
    even = start[0:len(start) - len(start) % 2]
    for order, nul in (("le", even[1::2]), ("be", even[0::2])):
        if nul and nul.count(0) >= 0.9 * len(nul):
            return DataError(f"{path} looks like UTF-16 text without a byte-order mark (every "
                             f"other byte is NUL): pass --encoding utf-16-{order}.")
    position = start.index(b"\x00")
    return DataError(f"{path} is a binary file, not CSV text (it holds a NUL byte at position "
                     f"{position}): {AS_CSV}. If it is a spreadsheet, save it as CSV first.")


def codec_name(encoding: str) -> str:
    """Python's name of the text ``encoding`` (``latin-1``: ``iso8859-1``); an unknown one is
    a ``DataError``."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise DataError(f"--encoding {encoding!r} is not a text encoding Python knows; e.g. "
                        "utf-8, latin-1 or cp1252.") from None


def first_lines(path: Path, compressed: str | None, encoding: str, count: int = 3) -> list:
    """The first ``count`` lines of the file, without their line ends; an unknown
    ``encoding`` is a ``DataError``."""
    codec_name(encoding)
    with open_text(path, compressed, encoding) as text:
        return [line.rstrip("\r\n") for line, _ in zip(text, range(count))]


def encoding_error(path: Path, error: UnicodeDecodeError, encoding: str) -> DataError:
    """The error for a file that is not text in ``encoding``, with the likely fix."""
    byte = error.object[error.start:error.start + 1].hex()
    return DataError(f"{path} is not {encoding} text (byte 0x{byte} at position "
                     f"{error.start} cannot be decoded). Files saved by spreadsheet programs "
                     "are often Latin-1 or Windows-1252: pass --encoding latin-1 (or "
                     "--encoding cp1252), or save the file as UTF-8.")


def check_separators(path: Path, lines: list, sep: str, decimal: str) -> None:
    """Refuse, with the options that read it, a file separated by ``;`` read with the
    default ``,`` (its decimal commas would split its numbers into extra fields)."""
    if sep != "," or len(lines) < 2:
        return
    header, row = lines[0], lines[1]
    if ";" in header and "," not in header and ";" in row:
        commas = decimal == "." and DECIMAL_COMMA.search(row) is not None
        fix = "--sep ';'" + (" --decimal ','" if commas else "")
        what = " and ',' as the decimal mark" if commas else ""
        raise DataError(f"{path} uses ';' between fields{what} (line 2: {row[:40]!r}), "
                        f"not ','. Pass {fix}.")


def drop_trailing_column(path: Path, frame: pd.DataFrame, lines: list,
                         sep: str) -> pd.DataFrame:
    """``frame`` without the empty last column that a separator at the end of every line
    makes (the file's first ``lines`` all end in ``sep``, the last column is all empty),
    with a note."""
    if (frame.shape[1] < 2 or not lines or not all(line.endswith(sep) for line in lines)
            or not frame.iloc[:, -1].isna().all()):
        return frame
    warn(f"every line of {path} ends with {sep!r}: the empty last column this makes is "
         "dropped.")
    return frame.iloc[:, :-1]
