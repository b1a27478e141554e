"""The finished fits of one experiment run, saved as they come so that a stopped run keeps them."""

from __future__ import annotations

import json
import os
from pathlib import Path


class Checkpoint:
    """Rows of finished fits in a JSON file (``<experiment>.partial.json``).

    A runner calls ``save(rows)`` after each fit and, before fitting a method on a dataset,
    ``done(method, **keys)``: the rows an interrupted run saved there, which it reuses instead
    of fitting again. They are read only with ``resume=True``; ``Checkpoint()`` (no path)
    saves nothing and has nothing done.
    """

    def __init__(self, path: Path | None = None, *, resume: bool = False):
        self.path = None if path is None else Path(path)
        self.resumed: list[dict] = (json.loads(self.path.read_text())
                                    if resume and self.path is not None and self.path.exists()
                                    else [])

    def done(self, method: str, **keys) -> list[dict]:
        """The resumed rows of ``method`` at ``keys`` (e.g. ``seed=3``); empty when none."""
        return [row for row in self.resumed
                if row["method"] == method and all(row.get(k) == v for k, v in keys.items())]

    def save(self, rows: list[dict]) -> None:
        """Write the rows gathered so far (all of them, resumed ones included), through a
        temporary file renamed over the old one: an interrupt never leaves half a file."""
        if self.path is not None:
            temporary = self.path.with_name(self.path.name + ".tmp")
            temporary.write_text(json.dumps(rows, default=float) + "\n")
            os.replace(temporary, self.path)

    def remove(self) -> None:
        """Delete the file: the run it served has finished."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
