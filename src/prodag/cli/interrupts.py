"""Ctrl-C on the command line: one line on stderr, the unfinished results removed, exit 130.

Python's own handling raises ``KeyboardInterrupt`` in whatever Python code the main thread
runs next. During a fit that is the wrong place more often than not: inside numba's
dispatcher (a ``SystemError`` traceback), inside JAX's garbage-collection callback (where
the exception is ignored and the fit goes on), or in the middle of writing a file. And once
the exception has unwound, the interpreter shuts down while XLA's threads still run the
compiled program and call back into Python (the order-search kernel of
``prodag.projection.search_kernel`` is such a callback): a segmentation fault.

So the console script (``prodag.cli.main``) calls ``install`` first: SIGINT then only wakes
a watcher thread (``signal.set_wakeup_fd``), which runs the registered clean-ups (removing a
results folder that was being written, ``prodag.cli.folders.results_folder``), prints one
line and ends the process with ``os._exit(130)``, which stops every thread at once without
the interpreter's shut-down. ``critical`` holds the interrupt back while a finished results
folder is moved into place, so a folder is replaced whole or not at all.

Once the results are in place (``finish``, called by the swap and again when the command
returns) a Ctrl-C is ignored: what is left is printing and the interpreter's shut-down, and
during the shut-down Python restores the default handler, under which a late Ctrl-C would
kill a command that had succeeded (exit status -2, no message). An interrupt that waited for
the swap still stops the command, with ``MESSAGE_AFTER_SAVING``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

EXIT_CODE = 130
"""Exit status of an interrupted command (128 + SIGINT), as shells report Ctrl-C."""
MESSAGE = "Interrupted (Ctrl-C): stopped; unfinished results were not written."
"""The one line an interrupted command prints."""
MESSAGE_AFTER_SAVING = "Interrupted (Ctrl-C): stopped after the results were saved in full."
"""The line instead when the interrupt came while the finished results were moved into place
(it waited for them)."""

_cleanups: list[Callable[[], None]] = []
_critical = threading.RLock()
_installed = False
_finished = False


def install() -> None:
    """Route SIGINT to the watcher thread (call once, from the main thread, before the
    heavy imports so that even an interrupt during start-up ends in one line)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.signal(signal.SIGINT, _ignore)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_end,), name="prodag-interrupt",
                     daemon=True).start()
    _installed = True


def _ignore(signum, frame) -> None:
    """The Python-level handler: nothing (the watcher thread acts on the wake-up byte)."""


def _watch(read_end: int) -> None:
    while True:
        received = os.read(read_end, 64)
        if signal.SIGINT in received:
            stop()


def stop() -> None:
    """Run the clean-ups (newest first), print ``MESSAGE`` (``MESSAGE_AFTER_SAVING`` once
    the results are in place) and end the process with ``EXIT_CODE`` at once."""
    with _critical:
        for cleanup in reversed(_cleanups):
            with contextlib.suppress(Exception):
                cleanup()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.write("\n" + (MESSAGE_AFTER_SAVING if _finished else MESSAGE) + "\n")
            sys.stderr.flush()
        os._exit(EXIT_CODE)


def finish() -> None:
    """The command's results are in place: ignore Ctrl-C from now on, through the
    interpreter's shut-down (Python keeps an ignored signal ignored there)."""
    global _finished
    with _critical:
        _finished = True
    if _installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def on_interrupt(cleanup: Callable[[], None]) -> Iterator[None]:
    """Run ``cleanup`` if the process is interrupted inside this block."""
    with _critical:
        _cleanups.append(cleanup)
    try:
        yield
    finally:
        with _critical:
            _cleanups.remove(cleanup)


def critical() -> contextlib.AbstractContextManager:
    """A block that an interrupt waits for (keep it short: renames, not fits)."""
    return _critical
