"""Cost of the linear SEM's order search as a default fit runs it (the data starts of
``prodag.inference.initialization.start_means``: ``searched_orders`` with that many graphs and
starts), on simulated linear-Gaussian data (ER graph, 2p edges, n rows), with known noise
variances (the default fit's) and with a variance per variable (``noise_variance=None``, the
scale-free score). Records the orders found and their scores, so two builds can be compared:
``--compare`` reads another run's file and says whether every order and score is the same.

    PYTHONPATH=src python -m benchmarks.studies.order_search_cost
    PYTHONPATH=src python -m benchmarks.studies.order_search_cost --p 100 --seeds 0 1 --tag new \
        --compare benchmarks/results/order_search_cost_base.json

Prints a row per search and the seconds per p, and writes
``benchmarks/results/order_search_cost[_tag].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from prodag.config.starts import MANY_STARTS_UP_TO, n_searched_graphs
from prodag.evaluation.simulate import dataset
from prodag.inference import order_search
from prodag.inference.initialization import ORDER_SEARCH_STARTS

from .. import RESULTS_DIR


def measure(p: int, n: int, seed: int, noise: str) -> dict:
    """One data-start search: its seconds, orders and their scores."""
    X = dataset(p, 2 * p, n, seed=seed).X
    X = X - X.mean(axis=0)
    variances = np.full(p, 0.7) if noise == "known" else None
    starts = ORDER_SEARCH_STARTS if p <= MANY_STARTS_UP_TO else None
    began = time.perf_counter()
    orders = order_search.searched_orders(X, variances, n_graphs=n_searched_graphs(p),
                                          n_starts=starts)
    seconds = time.perf_counter() - began
    score = order_search.OrderScore(X, 1.0, variances)
    return {"p": p, "n": n, "seed": seed, "noise": noise, "seconds": seconds,
            "orders": [order.tolist() for order in orders],
            "scores": [score.total(order) for order in orders]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, nargs="+", default=[8, 20, 50, 100])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--compare", help="another run's result file")
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    order_search.searched_orders(dataset(5, 5, 50, seed=0).X, np.ones(5))  # numba compiles
    rows = []
    print(f"{'p':>4} {'seed':>4} {'noise':>8} {'seconds':>8}  load {os.getloadavg()[0]:.2f}")
    for p in args.p:
        for seed in args.seeds:
            for noise in ("known", "per-variable"):
                rows.append(measure(p, args.n, seed, noise))
                print(f"{p:>4} {seed:>4} {noise:>8} {rows[-1]['seconds']:8.2f}", flush=True)
    for p in args.p:
        seconds = [row["seconds"] for row in rows if row["p"] == p]
        print(f"p = {p}: median {statistics.median(seconds):.2f} s, total {sum(seconds):.2f} s")
    result = {"command": "python -m benchmarks.studies.order_search_cost", "args": vars(args),
              "load_after": os.getloadavg()[0], "rows": rows}
    if args.compare:
        other = {(r["p"], r["seed"], r["noise"]): r
                 for r in json.loads(open(args.compare).read())["rows"]}
        differing = [key for row in rows
                     if (key := (row["p"], row["seed"], row["noise"])) in other
                     and (other[key]["orders"], other[key]["scores"])
                     != (row["orders"], row["scores"])]
        compared = sum((r["p"], r["seed"], r["noise"]) in other for r in rows)
        result["compared_with"] = {"file": args.compare, "searches": compared,
                                   "differing": differing}
        print(f"against {args.compare}: {compared} searches compared, "
              f"{len(differing)} with other orders or scores {differing}")
    name = "order_search_cost" + (f"_{args.tag}" if args.tag else "") + ".json"
    (RESULTS_DIR / name).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {RESULTS_DIR / name}")


if __name__ == "__main__":
    main()
