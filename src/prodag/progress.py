"""A terminal progress bar (tqdm) over the fits of one ``ProDAG.fit``.

Kept apart from the optimiser (``prodag.inference``), which only calls ``update`` between runs
of epochs, so the numerical code does not depend on how progress is shown. A thread redraws
the bar every ``TICK`` seconds, so its clock runs on while a long epoch computes: a large fit
looks alive from its first seconds.
"""

from __future__ import annotations

import threading

TICK = 1.0
"""Seconds between two redraws of the bar's clock."""


class Progress:
    """One progress bar over a sequence of fits (``total`` of them): ``stage`` names the fit
    that runs ("λ=∞", "radius 3/10", "restart 2/3"), ``update`` shows its epoch and objective.
    Disabled, it does nothing. Use as a context manager."""

    def __init__(self, total: int | None, enabled: bool = True):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="ProDAG", unit="fit", leave=False,
                            bar_format=self.BAR_FORMAT, dynamic_ncols=True)
            self._closed = threading.Event()
            self._ticker = threading.Thread(target=self._tick, name="prodag-progress",
                                            daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._closed.wait(TICK):
            self.bar.refresh()

    BAR_FORMAT = "{desc} {n_fmt}/{total_fmt} {bar:8} {elapsed}{postfix}"
    """Short fixed parts and an 8-character bar, so the stage and the epoch fit on an
    80-column line."""

    def set_total(self, total: int) -> None:
        """The number of fits, once it is known (the bar starts without one)."""
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def stage(self, description: str) -> None:
        if self.bar is not None:
            self.bar.set_description(f"ProDAG {description}")

    def update(self, epoch: int, objective: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"epoch {epoch}, loss {objective:.4g}")

    def fit_done(self, count: int = 1) -> None:
        """``count`` more fits have finished."""
        if self.bar is not None and count:
            self.bar.update(count)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self._closed.set()
            self._ticker.join()
            self.bar.close()
