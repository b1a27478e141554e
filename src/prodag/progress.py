"""Progress over the fits of one ``ProDAG.fit``: a terminal progress bar (tqdm), or, where the
output is not a terminal (a log file, a pipe), a plain line now and then.

Kept apart from the optimiser (``prodag.inference``), which only calls ``update`` between runs
of epochs, so the numerical code does not depend on how progress is shown. On a terminal a
thread redraws the bar every ``TICK`` seconds, so its clock runs on while a long epoch
computes: a large fit looks alive from its first seconds. Into a file the bar's
carriage-return redraws would pile up (a 4-minute demo wrote 197 KB of them), so there each
stage is written as one line, at most one every ``LINE_SECONDS``.
"""

from __future__ import annotations

import sys
import threading
import time

TICK = 1.0
"""Seconds between two redraws of the bar's clock."""
LINE_SECONDS = 10.0
"""Least seconds between two progress lines written where the output is not a terminal."""


class Progress:
    """Progress over a sequence of fits (``total`` of them, or None until ``set_total``):
    ``stage`` names the fit that runs ("λ=∞", "radius 3/10", "restart 2/3"), ``update`` shows
    its epoch and objective, ``fit_done`` counts it. Written to ``stream`` (default: standard
    error) as a bar on a terminal, as lines elsewhere (module docstring); disabled, it does
    nothing. Use as a context manager."""

    def __init__(self, total: int | None, enabled: bool = True, stream=None):
        self.bar, self.total, self.done = None, total, 0
        self.stream = sys.stderr if stream is None else stream
        self._last_line, self._started = None, time.monotonic()
        self.seconds: dict[str, float] = {}
        """Wall-clock seconds spent in each phase so far (``stage``'s ``phase``), in order."""
        self.epochs: dict[str, dict] = {}
        """The optimiser's epochs in each phase that fitted members: ``{"per_fit": [...],
        "computed": int}``, the epochs each finished fit ran and the member-epochs its batches
        computed (a stopped member's slot computes on until the batch shrinks)."""
        self._phase, self._phase_began = None, time.perf_counter()
        self.lines = enabled and not _is_terminal(self.stream)
        if enabled and not self.lines:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="ProDAG", unit="fit", leave=False,
                            file=self.stream, bar_format=self._format(), dynamic_ncols=True)
            self._closed = threading.Event()
            self._ticker = threading.Thread(target=self._tick, name="prodag-progress",
                                            daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._closed.wait(TICK):
            self.bar.refresh()

    BAR_FORMAT = "{desc} · fits {n_fmt}/{total_fmt} {bar:8} {elapsed}{postfix}"
    """Short fixed parts and an 8-character bar, so the stage, the fits done of all and the
    epoch fit on an 80-column line."""
    STARTING_FORMAT = "{desc} {elapsed}{postfix}"
    """Before the number of fits is known: the stage and the clock only (not "0/?")."""

    def _format(self) -> str:
        return self.STARTING_FORMAT if self.total is None else self.BAR_FORMAT

    def set_total(self, total: int) -> None:
        """The number of fits, once it is known (the bar starts without one)."""
        self.total = total
        if self.bar is not None:
            self.bar.total = total
            self.bar.bar_format = self._format()
            self.bar.refresh()

    def stage(self, description: str, phase: str | None = None) -> None:
        """Show ``description``; the time from here to the next call with another ``phase``
        (default: the description itself) counts towards ``seconds[phase]``."""
        self._enter_phase(description if phase is None else phase)
        if self.bar is not None:
            self.bar.set_description(f"ProDAG {description}")
        elif self.lines:
            now = time.monotonic()
            if self._last_line is None or now - self._last_line >= LINE_SECONDS:
                self._last_line = now
                counted = "" if self.total is None else f" (fits done {self.done}/{self.total})"
                self._write(f"ProDAG: {description}{counted}, "
                            f"{now - self._started:.0f} s")

    def _enter_phase(self, phase: str | None) -> None:
        if phase == self._phase:
            return
        now = time.perf_counter()  # its own clock: the lines' clock is read on a schedule
        if self._phase is not None:
            self.seconds[self._phase] = (self.seconds.get(self._phase, 0.0)
                                         + now - self._phase_began)
        self._phase, self._phase_began = phase, now

    def update(self, epoch: int, objective: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"epoch {epoch}, loss {objective:.4g}")

    def fit_done(self, epochs: list[int]) -> None:
        """More fits have finished, after ``epochs`` epochs each."""
        self._phase_epochs()["per_fit"].extend(int(e) for e in epochs)
        self.done += len(epochs)
        if self.bar is not None and epochs:
            self.bar.update(len(epochs))

    def computed(self, member_epochs: int) -> None:
        """A batch computed ``member_epochs`` more epochs over its members' slots."""
        self._phase_epochs()["computed"] += int(member_epochs)

    def _phase_epochs(self) -> dict:
        return self.epochs.setdefault(self._phase, {"per_fit": [], "computed": 0})

    def _write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self._enter_phase(None)
        if self.bar is not None:
            self._closed.set()
            self._ticker.join()
            self.bar.close()
        elif self.lines and self._last_line is not None and exc[0] is None:
            self._write(f"ProDAG: {self.done} fits done in "
                        f"{time.monotonic() - self._started:.0f} s")


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal, or a notebook's standard error (tqdm
    draws a widget there): places where a bar can redraw itself."""
    if stream is sys.stderr and "ipykernel" in sys.modules:
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
