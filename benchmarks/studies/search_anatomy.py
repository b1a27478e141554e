"""Where a default fit's order search spends its time, on the fit's own draws.

Fits a default linear ProDAG to the scale study's dataset (``benchmarks.studies.scale``:
ER graph, s = 2p edges, n rows) with the order search's kernels wrapped: every call's seconds
and draws are counted, and every ``--every``-th call's batch is kept as dense squared weights
``(B, p, p)``. Then each kept draw is searched again, one thread at a time, part by part:

* the three starts (two greedy orders and the net outflow's), the insertion sweeps from each,
  and the backward masses: microseconds a draw;
* for each start: sweeps, node visits and moves, its backward mass before and after the
  sweeps (as shares of the draw's total squared mass), and how often it wins;
* the backward mass above the best of three that each start, or pair of starts, would keep.

    PYTHONPATH=src python -m benchmarks.studies.search_anatomy --p 100 --n 100

Prints a table and writes ``benchmarks/results/search_anatomy_p<p>_n<n>[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

from prodag.numba_jit import numba
from prodag.projection import search_kernel, search_kernel_sparse

from .. import RESULTS_DIR
from .scale import simulated

STARTS = ("front-to-back greedy", "back-to-front greedy", "net outflow")


def dense_draws(args: tuple, sparse: bool) -> np.ndarray:
    """The squared weights ``(B, p, p)`` of one kernel call's batch of slots."""
    if sparse:
        slots, outgoing_slot, _, neighbours, degree = args[:5]
        p, size = neighbours.shape[0], slots.shape[1]
        squared = np.zeros((slots.shape[0], p, p), slots.dtype)
        for v in range(p):
            for i in range(degree[v]):
                if outgoing_slot[v, i] < size:
                    squared[:, v, neighbours[v, i]] = slots[:, outgoing_slot[v, i]]
        return squared
    slots, rows, cols, valid, p = args[:5]
    squared = np.zeros((slots.shape[0], p, p), slots.dtype)
    squared[:, rows, cols] = slots[:, valid]
    return squared


def fit_and_capture(p: int, n: int, dataset: int, every: int) -> tuple[dict, np.ndarray]:
    """A default fit (seed 0) with the search's calls timed; every ``every``-th batch kept."""
    from prodag import ProDAG

    counts = {"seconds": 0.0, "draws": 0, "calls": 0}
    kept = []

    def timed(module, sparse):
        kernel = module.search_positions_batch_on_slots

        def call(*args):
            began = time.perf_counter()
            positions = kernel(*args)
            counts["seconds"] += time.perf_counter() - began
            counts["draws"] += args[0].shape[0]
            counts["calls"] += 1
            if counts["calls"] % every == 0:
                kept.append(dense_draws(args, sparse))
            return positions
        return kernel, call

    originals = []
    for module, sparse in ((search_kernel, False), (search_kernel_sparse, True)):
        kernel, call = timed(module, sparse)
        originals.append((module, kernel))
        module.search_positions_batch_on_slots = call
    data = simulated(p, n, dataset)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            began = time.perf_counter()
            ProDAG(seed=0, progress=False).fit(data.X)
            counts["fit_seconds"] = time.perf_counter() - began
    finally:
        for module, kernel in originals:
            module.search_positions_batch_on_slots = kernel
    return counts, np.concatenate(kept)


@numba.njit(cache=False)
def _starts(squared, neighbours, degree):
    batch, p = squared.shape[0], squared.shape[1]
    starts = np.empty((batch, 3, p), np.int64)
    for b in range(batch):
        search_kernel.greedy_order(squared[b], neighbours, degree, False, starts[b, 0])
        search_kernel.greedy_order(squared[b], neighbours, degree, True, starts[b, 1])
        starts[b, 1] = starts[b, 1][::-1].copy()
        search_kernel.net_outflow_order(squared[b] - squared[b].T, neighbours, degree,
                                        starts[b, 2])
    return starts


@numba.njit(cache=False)
def _sweeps(squared, neighbours, degree, starts, max_sweeps, rel_tol):
    batch, p = squared.shape[0], squared.shape[1]
    ends = starts.copy()
    counted = np.zeros((batch, 3, 3))
    positions = np.empty(p, np.int64)
    for b in range(batch):
        difference = squared[b] - squared[b].T
        threshold = -rel_tol * squared[b].sum()
        for s in range(3):
            sweeps, visits, moves = search_kernel.insertion_sweeps(
                difference, neighbours, degree, ends[b, s], positions, max_sweeps, threshold)
            counted[b, s, 0], counted[b, s, 1], counted[b, s, 2] = sweeps, visits, moves
    return ends, counted


@numba.njit(cache=False)
def _masses(squared, orders):
    batch = squared.shape[0]
    masses = np.empty((batch, 3))
    for b in range(batch):
        for s in range(3):
            masses[b, s] = search_kernel.order_backward_mass(squared[b], orders[b, s])
    return masses


def per_draw_us(function, *args) -> tuple:
    """``function(*args)`` and its microseconds a draw (compiled on a few draws first)."""
    function(*(a[:4] if isinstance(a, np.ndarray) and a.ndim == 3 else a for a in args))
    began = time.perf_counter()
    result = function(*args)
    return result, 1e6 * (time.perf_counter() - began) / len(args[0])


def anatomy(squared: np.ndarray, max_sweeps: int = 10, rel_tol: float = 1e-6) -> dict:
    """The parts' costs and the starts' statistics on ``squared (B, p, p)`` (module docstring)."""
    neighbours, degree = search_kernel.neighbour_lists((squared != 0).any(axis=0))
    starts, starts_us = per_draw_us(_starts, squared, neighbours, degree)
    (ends, counted), sweeps_us = per_draw_us(_sweeps, squared, neighbours, degree, starts,
                                             max_sweeps, rel_tol)
    masses, masses_us = per_draw_us(_masses, squared, ends)
    before = _masses(squared, starts)
    total = squared.sum(axis=(1, 2)).astype(float)
    best = masses.min(axis=1)
    winner = masses.argmin(axis=1)

    def excess(kept):
        return float(np.mean((masses[:, kept].min(axis=1) - best) / total))

    return {"draws": len(squared), "starts_us": starts_us, "sweeps_us": sweeps_us,
            "masses_us": masses_us,
            "starts": [{"start": name, "sweeps": float(counted[:, s, 0].mean()),
                        "at_cap": float(np.mean(counted[:, s, 0] >= max_sweeps)),
                        "visits": float(counted[:, s, 1].mean()),
                        "moves": float(counted[:, s, 2].mean()),
                        "mass_before": float(np.mean(before[:, s] / total)),
                        "mass_after": float(np.mean(masses[:, s] / total)),
                        "wins": float(np.mean(winner == s)), "excess_alone": excess([s])}
                       for s, name in enumerate(STARTS)],
            "excess_without": {name: excess([t for t in range(3) if t != s])
                               for s, name in enumerate(STARTS)}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--dataset", type=int, default=0)
    parser.add_argument("--every", type=int, default=60,
                        help="keep every this many search calls' draws")
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    counts, squared = fit_and_capture(args.p, args.n, args.dataset, args.every)
    numba.set_num_threads(1)
    result = {"p": args.p, "n": args.n, "dataset": args.dataset, "fit": counts,
              **anatomy(squared), "load": os.getloadavg()[0]}
    print(f"p {args.p} n {args.n} dataset {args.dataset}: fit {counts['fit_seconds']:.1f} s, "
          f"search {counts['seconds']:.1f} s ({counts['draws']} draws, {counts['calls']} "
          f"calls, {1e6 * counts['seconds'] / counts['draws']:.1f} µs a draw on every core)")
    print(f"{result['draws']} kept draws, one thread: starts {result['starts_us']:.1f} µs, "
          f"sweeps {result['sweeps_us']:.1f} µs, backward masses {result['masses_us']:.1f} µs")
    print("| start | sweeps | at cap | visits | moves | mass before | after | wins | "
          "excess alone | excess without it |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in result["starts"]:
        print(f"| {row['start']} | {row['sweeps']:.2f} | {row['at_cap']:.3f} | "
              f"{row['visits']:.0f} | {row['moves']:.1f} | {row['mass_before']:.4f} | "
              f"{row['mass_after']:.5f} | {row['wins']:.3f} | {row['excess_alone']:.2e} | "
              f"{result['excess_without'][row['start']]:.2e} |")
    name = f"search_anatomy_p{args.p}_n{args.n}" + (f"_{args.tag}" if args.tag else "")
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
