"""Cost of the order search (``prodag.inference.order_search.best_order``) of the linear SEM's
second data start at large p, beside one training epoch's scale: seconds per search for p variables
and n rows of simulated linear-Gaussian data (ER graph, 2p edges), by number of starts and
sweeps.

    PYTHONPATH=src python -m benchmarks.studies.order_search_cost --p 100 200 300 --n 100

Prints a table and writes ``benchmarks/results/order_search_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.inference import order_search

from .. import RESULTS_DIR
from prodag.simulate import dataset

RESULTS = RESULTS_DIR / "order_search_cost.json"


def measure(p: int, n: int, n_starts: int | None, max_sweeps: int, seed: int = 0) -> dict:
    data = dataset(p, 2 * p, n, seed=seed)
    X = data.X - data.X.mean(axis=0)
    start = time.perf_counter()
    order_search.best_order(X, np.ones(p), n_starts=n_starts, max_sweeps=max_sweeps)
    return {"p": p, "n": n, "n_starts": n_starts, "max_sweeps": max_sweeps,
            "seconds": round(time.perf_counter() - start, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, nargs="+", default=[100, 200, 300])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--starts", type=int, nargs="+", default=[None])
    parser.add_argument("--sweeps", type=int, nargs="+", default=[50])
    args = parser.parse_args()
    rows = []
    print(f"{'p':>5} {'n':>5} {'starts':>7} {'sweeps':>7} {'seconds':>9}")
    for p in args.p:
        for starts in args.starts:
            for sweeps in args.sweeps:
                row = measure(p, args.n, starts, sweeps)
                rows.append(row)
                print(f"{p:>5} {args.n:>5} {str(starts):>7} {sweeps:>7} {row['seconds']:>9}",
                      flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"rows": rows, "note": "taken beside other jobs on a "
                                   "shared 2-core machine"}, indent=1) + "\n")


if __name__ == "__main__":
    main()
