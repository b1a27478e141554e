"""Memory and time a job needs, estimated before the work starts: a request that cannot fit
in memory is refused with its reason instead of a ``MemoryError`` traceback minutes in, and a
long fit is announced with its likely duration.

Memory estimates are upper-bound sketches in bytes from the shapes involved (each array a job
keeps at once); ``check_memory`` compares them with the memory available now. The time
estimate (``fit_seconds``) is a cost model of the training loop: a step's cost grows with
the samples per step ``L`` times a power of ``p`` (the projection's order search over each
sampled ``p × p`` matrix dominates it), times the steps of a fit, times the fits; the
refinement's (``refine_seconds``), its draws times the same power of ``p`` times its steps. Its
constants were fitted to timed fits of the linear SEM on one small shared machine
(``benchmarks/studies/fit_cost.py``), so it gives the order of magnitude, not a schedule:
faster machines take less, and early stopping can end fits sooner.
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
    """Memory of ``prodag.evaluation.simulate.dataset`` for ``p`` variables and ``n`` rows: a few
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


STEP_SECONDS = 3.0e-8
"""Seconds of one training step per sampled matrix at ``p = 1`` (``a`` of
``benchmarks/studies/fit_cost.py``): a step costs ``STEP_SECONDS · L · p^STEP_EXPONENT``."""
STEP_EXPONENT = 2.45
"""How a step's cost grows with ``p`` (``b`` of the same fit)."""
SCREENED_DRAW_SECONDS = 9.0e-7
"""Seconds of one sampled draw of a training step on candidate parents (``K = 16``, each
draw on its ``(p, K)`` slots) at ``p = 1``: such a step costs ``SCREENED_DRAW_SECONDS · L ·
p^SCREENED_EXPONENT`` (``benchmarks/results/support_kernels_slots.json``: 0.35, 1.07, 2.49 and
6.88 ms a draw at p = 100, 200, 500 and 1000, the order search most of it)."""
SCREENED_EXPONENT = 1.3
"""How that step's cost grows with ``p``."""
SCORE_STEPS = 7.0
"""Scoring a finished fit, and re-scoring it when the fits are pooled, in training steps."""
TYPICAL_EPOCHS = 35
"""Epochs a fit typically runs before it stops early (``max_epochs`` caps it)."""
ANNOUNCED_SECONDS = 90.0
"""Fits estimated to take longer than this are announced (``prodag fit``): over a minute
with room for the estimate's slack, so that a default fit of a few tens of variables, which
takes under a minute on a quiet machine, is not announced."""


def fit_seconds(p: int, n_samples: int, n_fits: int, max_epochs: int,
                steps_per_epoch: int, screened: bool = False) -> float:
    """Rough seconds of a fit of ``p`` variables that runs ``n_fits`` optimisations
    (``prodag.fit.plan.n_fits``: chains × fits per chain) of at most ``max_epochs`` epochs
    of ``steps_per_epoch`` steps with ``n_samples`` sampled matrices each; each fit is also
    scored twice (when it ends and when the fits are pooled). ``screened``: on candidate
    parents (``draw_seconds``)."""
    step = n_samples * draw_seconds(p, screened)
    epochs = min(max_epochs, TYPICAL_EPOCHS)
    return n_fits * (epochs * steps_per_epoch + 2 * SCORE_STEPS) * step


REFINE_STEP_SECONDS = 5.0e-9
"""Seconds of one refinement step per draw at ``p = 1``: a step moves every draw once and
projects it, costing ``REFINE_STEP_SECONDS · draws · p^STEP_EXPONENT`` (timed refinements of
1000 draws: 7.9 ms a step at p = 20, ``benchmarks/results/fit_time_p20_refine500.json``
against ``..._refine2000.json``, and 0.35 s at p = 100, ``fit_time_p100_refine500.json``)."""
REFINE_STEP_FLOOR = 5.0e-4
"""The least seconds a refinement step takes, however small ``p`` (its fixed work: drawing the
proposals, running the compiled step): 10 million steps on a few variables took about 85
minutes, and a step of 1000 draws at p = 5 took 1.2 ms on a busy 2-core machine."""


def refine_seconds(p: int, draws: int, steps: int, screened: bool = False) -> float:
    """Rough seconds of ``steps`` refinement steps moving ``draws`` draws of ``p`` variables
    (``prodag.inference.refinement``); ``screened``: on candidate parents, where a draw's
    step costs about a training step's draw (``draw_seconds``)."""
    step = (draws * draw_seconds(p, True) if screened
            else REFINE_STEP_SECONDS * draws * float(p) ** STEP_EXPONENT)
    return steps * max(step, REFINE_STEP_FLOOR)


def draw_seconds(p: int, screened: bool) -> float:
    """Seconds of one sampled draw of a training step, dense (``STEP_SECONDS``) or on
    candidate parents (``SCREENED_DRAW_SECONDS``)."""
    if screened:
        return SCREENED_DRAW_SECONDS * float(p) ** SCREENED_EXPONENT
    return STEP_SECONDS * float(p) ** STEP_EXPONENT


def format_duration(seconds: float) -> str:
    """``about 40 minutes``, ``about 3 hours``: the rounded duration for a person."""
    minutes = seconds / 60
    if minutes < 90:
        return f"about {max(1, round(minutes))} minute{'s' if round(minutes) > 1 else ''}"
    hours = minutes / 60
    return f"about {hours:.0f} hours" if hours < 48 else f"about {hours / 24:.0f} days"


LIMIT_SECONDS = 300.0
"""Jobs besides the fit itself (simulating a dataset, drawing the results' graphs) estimated
to take longer than this are refused before they start, naming the size and this limit."""
SOLVE_SECONDS = 1.0e-10
"""Seconds per ``p³`` of the linear SEM's solve in ``prodag.evaluation.simulate.dataset``
(timed at p = 2000 and 4000 on a 2-core machine under load: 2.3 s and 6.4 s in all)."""
CSV_SECONDS = 1.0e-6
"""Seconds to write one number into a CSV file (pandas, the same machine)."""
CSV_BYTES = 20
"""Bytes of one float64 written into a CSV file, its separator included."""
DRAW_COPIES = 4
"""Arrays of the size of the ``n_draws × p × p`` graphs (or of a block of them) held while
drawing them (the model weights, the projected graphs, the scaled copy, the compressed file's
buffer)."""


def simulation_seconds(p: int, n: int) -> float:
    """Rough seconds of ``prodag simulate``: the solve ``(p, p)`` and the CSV files written
    (the ``p × p`` weights and the ``n × p`` data)."""
    return SOLVE_SECONDS * float(p) ** 3 + CSV_SECONDS * (p * p + n * p)


def check_simulation(p: int, n: int) -> float:
    """Refuse a simulation estimated to run over ``LIMIT_SECONDS`` (``ValueError`` naming
    ``--p``, the estimate and the largest ``--p`` within the limit); else its estimate."""
    seconds = simulation_seconds(p, n)
    if seconds > LIMIT_SECONDS:
        largest = max((q for q in range(100, p, 100) if simulation_seconds(q, n) <= LIMIT_SECONDS),
                      default=100)
        raise ValueError(f"--p {p}: simulating it and writing its {p} x {p} weights.csv "
                         f"(about {format_bytes(CSV_BYTES * p * p)}) would take "
                         f"{format_duration(seconds)} (a rough estimate), over the limit of "
                         f"{format_duration(LIMIT_SECONDS)}; with --n {n} the largest --p "
                         f"within it is about {largest}. Lower --p.")
    return seconds


def check_draws(n_draws: int, p: int, screened: bool = False, block: int | None = None) -> None:
    """Refuse ``--n-draws`` graphs of ``p`` variables that need more memory than is available
    or an estimated time over ``LIMIT_SECONDS`` (each draw is projected as a training step's
    sample is, on candidate parents where ``screened``), naming the size and the limit.
    ``block``: the draws held at once where they are drawn a block at a time (a fit with draws
    of its own, ``ProDAG.sample_batches``); None: all of them at once (a mixture's)."""
    advice = "lower --n-draws (1000 draws give each edge probability to within ±0.03)."
    held = n_draws if block is None else min(n_draws, block)
    check_memory(8 * DRAW_COPIES * held * p * p,
                 f"--n-draws {n_draws} ({n_draws} graphs of {p} x {p}"
                 + (")" if held == n_draws else f", {held} at a time)"), advice)
    seconds = n_draws * draw_seconds(p, screened)
    if seconds > LIMIT_SECONDS:
        raise ValueError(f"--n-draws {n_draws}: drawing {n_draws} graphs of {p} x {p} would "
                         f"take {format_duration(seconds)} (a rough estimate), over the limit "
                         f"of {format_duration(LIMIT_SECONDS)}: {advice}")
