"""How many true edges the linear SEM's data starts put backwards, with and without the
candidate screen's support.

For each dataset of the scale study (``scale.simulated``: the suite's simulator at ``--p``, or
the MUNIN1 graph with ``--munin``) it computes the orders a default fit starts from
(``prodag.inference.initialization.start_means``): the top-down equal-variance order and the
searched orders (``order_search.searched_orders``; beyond ``SEARCHED_UP_TO`` variables the
top-down order unsearched), once conditioning each variable on all the variables placed
before it, and once on its placed candidate parents only (the default screen's support,
``prodag.inputs.candidates``). For each order it counts the true edges that point backwards
in it: a start whose order reverses an edge starts the fit in another basin of the ELBO.

    PYTHONPATH=src python -m benchmarks.studies.start_orders --munin --datasets 0 1 2
    PYTHONPATH=src python -m benchmarks.studies.start_orders --p 100 --datasets 0 1 2

Writes ``benchmarks/results/start_orders_<p or munin>_n<n>[_tag].json``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from .. import RESULTS_DIR
from .scale import simulated


def reversed_edges(order: np.ndarray, truth: np.ndarray) -> int:
    """True edges of ``truth (p, p)`` (``[parent, child]``) whose child comes first in
    ``order (p,)``."""
    place = np.empty(len(order), dtype=int)
    place[order] = np.arange(len(order))
    parents, children = np.nonzero(truth)
    return int(np.sum(place[parents] > place[children]))


def one_dataset(graph, n: int, dataset: int) -> dict:
    from prodag.config.starts import n_searched_graphs
    from prodag.inference.order_search import searched_orders, top_down_order
    from prodag.inputs import candidates

    data = simulated(graph, n, dataset)
    X = data.X - data.X.mean(axis=0)
    p = X.shape[1]
    truth = np.asarray(data.weights) != 0
    support = candidates.as_mask(candidates.candidate_parents(
        data.X, None, candidates.CANDIDATE_PARENTS))
    covariance = X.T @ X / len(X)
    noise = np.ones(p)
    row = {"dataset": dataset, "true_edges": int(truth.sum()),
           "true_edges_in_support": int((truth & support).sum())}
    for name, mask in (("all", None), ("candidates", support)):
        top_down = top_down_order(covariance, noise, mask)
        searched = searched_orders(X, noise, n_graphs=n_searched_graphs(p), candidates=mask)
        row[name] = {"top_down": reversed_edges(top_down, truth),
                     "searched": [reversed_edges(order, truth) for order in searched]}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--munin", action="store_true", help="the MUNIN1 graph (p = 186)")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--datasets", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tag", default="", help="suffix of the result file's name")
    args = parser.parse_args()
    graph = "munin" if args.munin else args.p
    rows = []
    print(f"{'dataset':>7} {'true':>5} {'in support':>10} | reversed by the starts' orders: "
          "top-down, searched (conditioning on all placed | on candidate parents)")
    for dataset in args.datasets:
        row = one_dataset(graph, args.n, dataset)
        rows.append(row)
        print(f"{dataset:7d} {row['true_edges']:5d} {row['true_edges_in_support']:10d} | "
              f"{row['all']['top_down']:4d} {row['all']['searched']} | "
              f"{row['candidates']['top_down']:4d} {row['candidates']['searched']}")
    mean = {name: {"top_down": float(np.mean([r[name]["top_down"] for r in rows])),
                   "searched": float(np.mean([r[name]["searched"][0] for r in rows]))}
            for name in ("all", "candidates")}
    print(f"mean: top-down {mean['all']['top_down']:.1f} -> {mean['candidates']['top_down']:.1f}, "
          f"first searched {mean['all']['searched']:.1f} -> "
          f"{mean['candidates']['searched']:.1f}")
    out = RESULTS_DIR / f"start_orders_{graph}_n{args.n}{'_' + args.tag if args.tag else ''}.json"
    out.write_text(json.dumps({"p": graph, "n": args.n, "mean": mean, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
