"""Memory a job needs against the memory the machine has: checked before the work starts, so
that a request that cannot fit is refused with its reason instead of a ``MemoryError``
traceback minutes in.

Estimates are upper-bound sketches in bytes from the shapes involved (each array a job keeps
at once); ``check_memory`` compares them with the memory available now.
"""

from __future__ import annotations

import os


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of ``/proc/meminfo``, else the free
    physical pages), or None where neither can be read."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def simulation_bytes(p: int, n: int) -> int:
    """Memory of ``prodag.simulate.dataset`` for ``p`` variables and ``n`` rows: a few
    ``(p, p)`` float64 matrices (adjacency, weights, their products) and the ``(n, p)`` data
    with its noise."""
    return 8 * (4 * p * p + 3 * n * p)


FIT_COPIES = 30
"""Arrays of the size of one step's ``L`` sampled ``(p, p)`` matrices that a training step
holds at once (draws, their projections, the search's work arrays, gradients)."""


def fit_bytes(n: int, p: int, n_samples: int, sem: str = "linear",
              hidden_units: int = 10) -> int:
    """Memory of one fit's training step for ``n`` rows, ``p`` variables and ``n_samples``
    draws (float32): ``FIT_COPIES`` arrays of ``L × p × p`` (times the hidden units for the
    MLP's first layer) plus a few copies of the data."""
    width = hidden_units if sem == "mlp" else 1
    return 4 * FIT_COPIES * n_samples * p * p * width + 8 * 4 * n * p


def format_bytes(size: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.1f} {unit}" if unit != "bytes" else f"{int(size)} bytes"
        size /= 1024
    return f"{size:.1f} TB"


def check_memory(needed: int, what: str, advice: str) -> None:
    """A ``MemoryError``-free refusal: ``ValueError`` naming ``what`` needs ``needed`` bytes and
    what is available, with ``advice``, when it exceeds the memory available now."""
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(f"{what} needs about {format_bytes(needed)} of memory, but "
                         f"{format_bytes(available)} is available: {advice}")
