"""The order search's two numba kernels side by side: which is faster at which size.

For each p: the scale study's simulator (ER graph, s = 2p edges, n rows; MUNIN1's graph for
``--munin``), the default screen's candidate parents (``prodag.inputs.candidates``, K = 16,
made symmetric), and ``--samples`` draws near the true weights (the truth on the candidate
entries plus N(0, ``--spread``²) on each, as a fit's draws sit near its mean). Timed per
draw on every core, as a fit calls them: the dense kernel (``search_kernel``, a ``(p, p)``
matrix a draw) against the one over neighbour lists (``search_kernel_sparse``), and whether
their orders are the same (they must be, bit for bit). ``prodag.projection.host_search``'s
``SPARSE_BELOW`` chooses between them by the support's mean neighbours.

    PYTHONPATH=src python -m benchmarks.studies.search_kernels --p 100 125 150 200 300

Prints a table and writes ``benchmarks/results/search_kernels[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from prodag.inputs import candidates
from prodag.projection.search_kernel import neighbour_lists, search_positions_batch
from prodag.projection.search_kernel_sparse import on_neighbours, search_positions_batch_sparse

from .. import RESULTS_DIR
from .scale import simulated
from .support_kernels import per_draw

K = 16


def measure(graph, n: int, samples: int, spread: float, seed: int = 0) -> dict:
    """One row: the two kernels on ``samples`` draws of ``graph``'s (p or ``"munin"``) data."""
    data = simulated(graph, n, seed)
    Z = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    mask = candidates.neighbour_mask(Z, K)
    p = mask.shape[0]
    rng = np.random.default_rng(seed)
    weights = (data.weights + spread * rng.normal(size=(samples, p, p))) * mask
    squared = np.ascontiguousarray((weights ** 2).astype(np.float32))
    neighbours, degree = neighbour_lists(mask)

    def dense(s):
        return search_positions_batch(s, 10, 1e-6)

    def sparse(s):
        return search_positions_batch_sparse(*on_neighbours(s, neighbours, degree), neighbours,
                                             degree, 10, 1e-6)

    return {"graph": graph, "p": p, "n": n, "samples": samples, "spread": spread,
            "mean_neighbours": float(degree.mean()),
            "neighbour_share": float(degree.mean() / (p - 1)),
            "same_orders": bool(np.array_equal(dense(squared), sparse(squared))),
            "dense_us": 1000 * per_draw(dense, squared, repeats=3),
            "sparse_us": 1000 * per_draw(sparse, squared, repeats=3)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, nargs="*", default=[100, 125, 150, 200, 300])
    parser.add_argument("--munin", action="store_true", help="add MUNIN1's graph (p = 186)")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--spread", type=float, default=0.2)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    rows = []
    print("| graph | p | mean neighbours | share of p − 1 | dense µs | lists µs | same orders |")
    print("|---|---|---|---|---|---|---|")
    for graph in args.p + (["munin"] if args.munin else []):
        row = measure(graph, args.n, args.samples, args.spread)
        rows.append(row)
        print(f"| {row['graph']} | {row['p']} | {row['mean_neighbours']:.1f} | "
              f"{row['neighbour_share']:.3f} | {row['dense_us']:.1f} | {row['sparse_us']:.1f} | "
              f"{row['same_orders']} |", flush=True)
    result = {"rows": rows, "threads": os.cpu_count(), "load": os.getloadavg()[0]}
    path = RESULTS_DIR / ("search_kernels" + (f"_{args.tag}" if args.tag else "") + ".json")
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
