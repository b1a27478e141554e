"""What a data file is before pandas parses it, so that each of these is read, or named with
its fix, instead of failing deep in the parser: a compressed file under a plain name (read,
with a note), a text encoding other than UTF-8 (``--encoding``), a file separated by ``;``
with decimal commas (``--sep ';' --decimal ','``), and a separator at the end of every line
(an empty last column, dropped with a note)."""

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


def compression(path: Path) -> str | None:
    """``"gzip"``, ``"zip"``, ``"bz2"`` or ``"xz"`` when the file starts with that format's
    magic bytes, whatever its name; else None. A compressed file whose name does not say so
    is read all the same, with a note."""
    with path.open("rb") as handle:
        start = handle.read(6)
    found = next((name for magic, name in MAGIC.items() if start.startswith(magic)), None)
    if found is not None and not path.name.lower().endswith(SUFFIXES[found]):
        warn(f"{path} is {found}-compressed (its name does not end in {SUFFIXES[found]}); "
             "reading it decompressed. (In pandas: pd.read_csv(path, "
             f"compression={found!r}).)")
    return found


@contextlib.contextmanager
def open_text(path: Path, compressed: str | None, encoding: str):
    """The file as text, decompressed, undecodable bytes replaced (for looking, not reading);
    closed, archive and all, when the block ends."""
    with contextlib.ExitStack() as stack:
        if compressed == "zip":
            archive = stack.enter_context(zipfile.ZipFile(path))
            raw = archive.open(archive.namelist()[0])
        else:
            raw = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(
                compressed, open)(path, "rb")
        yield stack.enter_context(io.TextIOWrapper(raw, encoding=encoding, errors="replace",
                                                   newline=""))


def first_lines(path: Path, compressed: str | None, encoding: str, count: int = 3) -> list:
    """The first ``count`` lines of the file, without their line ends; an unknown
    ``encoding`` is a ``DataError``."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DataError(f"--encoding {encoding!r} is not a text encoding Python knows; e.g. "
                        "utf-8, latin-1 or cp1252.") from None
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
