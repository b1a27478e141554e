"""Reading a saved model file: the ``.npz`` archive's arrays and JSON metadata, and the
``Checker`` whose failures raise ``ModelFileError`` naming the file (``prodag.io.persistence``
checks every part with it)."""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np


class ModelFileError(ValueError):
    """A file that is not a valid saved prodag model (missing, not an ``.npz`` written by
    ``ProDAG.save``, truncated, or with contents that do not fit together)."""


class Checker:
    """Raises ``ModelFileError`` naming the file when a condition fails."""

    def __init__(self, path):
        self.path = path

    def fail(self, reason: str):
        raise ModelFileError(f"{self.path} is not a valid prodag model file: {reason}.")

    def that(self, condition: bool, reason: str) -> None:
        if not condition:
            self.fail(reason)

    def radius(self, name: str, value, allow_auto: bool) -> float | str:
        if value == "auto" and allow_auto:
            return value
        try:
            radius = float(value)
        except (TypeError, ValueError):
            radius = float("nan")
        self.that((value == "inf" or isinstance(value, (int, float)))
                  and not isinstance(value, bool) and radius > 0,
                  f"{name!r} must be a positive number or 'inf', got {value!r}")
        return radius

    def array(self, arrays: dict, name: str, shape: tuple, positive: bool = False) -> np.ndarray:
        self.that(name in arrays, f"the array {name!r} is missing")
        value = arrays[name]
        self.that(value.dtype.kind == "f", f"the array {name!r} has dtype {value.dtype}, "
                  "expected floating point")
        self.that(value.shape == shape, f"the array {name!r} has shape {value.shape}, "
                  f"expected {shape}")
        self.that(bool(np.all(np.isfinite(value))), f"the array {name!r} contains NaN or "
                  "infinite values")
        self.that(not positive or bool(np.all(value > 0)), f"the array {name!r} must be "
                  "positive")
        return value


def read(path: Path) -> tuple[dict[str, np.ndarray], Any]:
    """The arrays and the parsed metadata of ``path``; ``ModelFileError`` for anything else."""
    if not path.exists():
        raise ModelFileError(f"{path} does not exist.")
    if path.is_dir():
        raise ModelFileError(f"{path} is a directory, not a saved model (a .npz file written "
                             "by ProDAG.save; a 'prodag fit' results folder has it as "
                             "posterior.npz).")
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path} is empty, not a saved model.")
    with open(path, "rb") as handle:
        head = handle.read(6)
    if head == b"\x93NUMPY":
        raise ModelFileError(f"{path} is a single numpy array (.npy), not a saved model "
                             "(a .npz file written by ProDAG.save).")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(f"{path} is not a saved model (a .npz file written by "
                             "ProDAG.save); is it a data table (CSV) or another file?")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "metadata" not in archive.files:
                raise ModelFileError(f"{path} is an .npz file but not a saved prodag model "
                                     "(it has no metadata entry).")
            text = str(archive["metadata"])
            arrays = {name.removeprefix("arrays/"): archive[name]
                      for name in archive.files if name.startswith("arrays/")}
    except ModelFileError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as error:
        raise ModelFileError(f"{path} could not be read as a saved model (truncated or "
                             f"damaged?): {error}") from None
    try:
        return arrays, json.loads(text)
    except json.JSONDecodeError:
        raise ModelFileError(f"{path} has metadata that is not valid JSON.") from None
