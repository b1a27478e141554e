"""Fits as jobs: what a runner asks for, run here one after another or as Ray tasks.

A runner builds one ``Job`` per (method, dataset) and hands the list to ``execute``, which
skips the jobs a checkpoint already holds, runs the rest through an executor and checkpoints
the rows as they come back. Jobs carry everything they need (the data inside the fitter), so
they can run in another process: ``InProcess`` (the default) runs them in order here;
``RayExecutor`` runs each as a Ray task (``prodag bench --ray`` or ``--ray-address
ADDRESS``; Ray is the optional extra ``prodag[ray]``). Scoring happens inside the job, so
only rows travel back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from prodag.evaluation.metrics import METRICS

from .checkpoint import Checkpoint

Fitter = Callable[[], tuple[np.ndarray, float]]
"""A function of no arguments returning posterior graph samples ``(L, p, p)`` and seconds."""


@dataclass(frozen=True)
class Job:
    """One method fitted on one dataset: ``keys`` name the dataset (e.g. ``{"n": 100,
    "seed": 3}``); ``score(samples)`` returns one dict of metrics per row (e.g. one per
    reference graph)."""

    method: str
    keys: dict
    fitter: Fitter = field(repr=False)
    score: Callable[[np.ndarray], list[dict]] = field(repr=False)

    def run(self) -> list[dict]:
        """Fit, score and return the rows ``{"method", **keys, "seconds", **scores}``."""
        samples, seconds = self.fitter()
        return [{"method": self.method, **self.keys, "seconds": round(seconds, 2), **scores}
                for scores in self.score(samples)]

    def describe(self, rows: list[dict]) -> str:
        """A progress line of the finished job."""
        where = " ".join(f"{key}={value}" for key, value in self.keys.items())
        return (f"  {where} {self.method}: {rows[0]['seconds']:.0f} s, "
                + ", ".join(f"{k}={rows[0][k]:.1f}" for k in METRICS))


def jobs_of(fitters: dict[str, Fitter], keys: dict,
            score: Callable[[np.ndarray], list[dict]]) -> list[Job]:
    """One job per method of ``fitters`` on the dataset ``keys``."""
    return [Job(method, dict(keys), fit, score) for method, fit in fitters.items()]


class InProcess:
    """Runs the jobs one after another in this process (the default)."""

    def map(self, jobs: Sequence[Job]) -> Iterator[tuple[int, list[dict]]]:
        """``(index, rows)`` of every job, in order."""
        for index, job in enumerate(jobs):
            yield index, job.run()


class RayExecutor:
    """Runs every job as a Ray task of one CPU on the cluster at ``address`` (``None``: a new
    local instance with ``num_cpus`` workers, default all cores).

    The ``benchmarks`` package travels with the tasks; ``prodag`` must be importable on the
    workers (installed there, or a local instance on this machine).
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise ImportError("--ray needs Ray: pip install 'prodag[ray]' (or pip install "
                              "ray)") from None
        self._ray = ray
        runtime_env = {"py_modules": [str(Path(__file__).resolve().parents[1])]}  # benchmarks/
        if not ray.is_initialized():
            ray.init(address=address, num_cpus=None if address else num_cpus,
                     runtime_env=runtime_env, include_dashboard=False,
                     log_to_driver=False)

    def map(self, jobs: Sequence[Job]) -> Iterator[tuple[int, list[dict]]]:
        """``(index, rows)`` of every job, as the tasks finish."""
        ray = self._ray
        task = ray.remote(num_cpus=1)(Job.run)
        pending = {task.remote(job): index for index, job in enumerate(jobs)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            yield pending.pop(done[0]), ray.get(done[0])

    def shutdown(self) -> None:
        """Stop the local instance (a no-op for a cluster we only connected to)."""
        self._ray.shutdown()


def execute(jobs: Sequence[Job], checkpoint: Checkpoint | None = None,
            executor: InProcess | RayExecutor | None = None) -> list[dict]:
    """The rows of every job, in the jobs' order. A job whose rows ``checkpoint`` holds is
    not run again; each finished job's rows are checkpointed and a line printed."""
    checkpoint = checkpoint or Checkpoint()
    results: list[list[dict] | None] = [
        checkpoint.done(job.method, **job.keys) or None for job in jobs]
    todo = [index for index, rows in enumerate(results) if rows is None]
    for position, rows in (executor or InProcess()).map([jobs[i] for i in todo]):
        results[todo[position]] = rows
        checkpoint.save([row for rows in results if rows for row in rows])
        print(jobs[todo[position]].describe(rows), flush=True)
    return [row for rows in results for row in rows]
