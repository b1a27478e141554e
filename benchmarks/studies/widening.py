"""Would widening the candidate parents where the fit asks for it find the true edges the
screen left out? BiDAG's hybrid search space adds a parent outside a node's set when the
score of the fitted graph would improve by it; this study measures what that rule would add,
on fits already made, before any refit is built.

Reads a result file of ``benchmarks.studies.scale`` (its edge probabilities, ``(p, p)`` a
fit), simulates each row's dataset again (``scale.simulated``: the same graph, weights and
rows) and screens it as the fit did (``candidates.neighbour_mask`` with ``K =
candidates.CANDIDATE_PARENTS``). For every node ``k`` and every ``j`` outside its candidate
parents, the score gain of adding ``j`` to a Gaussian linear regression of ``x_k`` is
``−(n/2) log(1 − ρ²)`` nats, ``ρ`` the partial correlation of ``x_j`` and ``x_k`` given a
conditioning set. Three sets are compared:

* **given the fit**: ``k``'s parents in the fitted posterior's graph (edge probability >
  0.5); the widening rule. Every such pair whose gain exceeds ``c`` times BIC's price of a
  weight, ``½ log n``, and that keeps that graph acyclic (``j`` not a descendant of ``k``: a
  descendant's gain is real but would make a cycle) would be added (``c`` = 1, 2, 4); the
  table counts them and how many are true edges (either direction, and this direction);
* **given the true parents** (``j`` left out): the gain of each true edge the screen left
  out under the true graph, the most any widening could see;
* **given the candidates**: the same true edges' gain given all of ``k``'s candidate parents,
  what a wider lasso path would see.

    PYTHONPATH=src python -m benchmarks.studies.widening scale_p100_n100_ten_cand_starts.json

Writes ``benchmarks/results/widening_<the file's name>``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from prodag.graph import directed_paths
from prodag.inputs import candidates

from .. import RESULTS_DIR
from .scale import simulated

MULTIPLES = (1, 2, 4)
"""The thresholds, in multiples of BIC's price of one weight, ``½ log n`` nats."""


def score_gains(X: np.ndarray, child: int, given, others: np.ndarray) -> np.ndarray:
    """``(len(others),)``: the log-likelihood gain (nats) of adding each column of ``others``
    to the least-squares regression of column ``child`` of ``X (n, p)`` on the columns
    ``given`` and an intercept, ``−(n/2) log(1 − ρ²)``."""
    n = X.shape[0]
    basis, _ = np.linalg.qr(np.column_stack([np.ones(n), X[:, list(given)]]))
    residuals = X - basis @ (basis.T @ X)
    target, rest = residuals[:, child], residuals[:, others]
    rho = (rest.T @ target) / np.sqrt((target @ target) * (rest ** 2).sum(axis=0))
    return -n / 2 * np.log1p(-np.minimum(rho ** 2, 1 - 1e-12))


def one_dataset(graph, n: int, row: dict) -> dict:
    """The study's counts for one fit of a scale result (``row``)."""
    data = simulated(graph, n, row["dataset"])
    X = data.X
    truth = np.asarray(data.adjacency) != 0
    fitted = np.asarray(row["edge_probabilities"]) > 0.5
    screen = candidates.neighbour_mask(X, candidates.CANDIDATE_PARENTS)
    p = X.shape[1]
    price = 0.5 * np.log(n)
    descendant = directed_paths(fitted[None])[0].T   # [j, k]: a path k → … → j
    gains = np.zeros((p, p))
    for child in range(p):
        outside = np.flatnonzero(~screen[:, child] & ~descendant[:, child])
        outside = outside[outside != child]
        gains[outside, child] = score_gains(X, child, np.flatnonzero(fitted[:, child]),
                                            outside)
    left_out = [(int(j), int(k)) for j, k in np.argwhere(truth & ~screen)]
    oracle, given_screen = [], []
    for j, k in left_out:
        parents = [i for i in np.flatnonzero(truth[:, k]) if i != j]
        oracle.append(float(score_gains(X, k, parents, np.array([j]))[0]))
        given_screen.append(float(score_gains(X, k, np.flatnonzero(screen[:, k]),
                                              np.array([j]))[0]))
    added = {}
    for multiple in MULTIPLES:
        chosen = gains > multiple * price
        added[str(multiple)] = {"pairs": int(chosen.sum()),
                                "true_either_way": int((chosen & (truth | truth.T)).sum()),
                                "true_this_way": int((chosen & truth).sum()),
                                "left_out_found": int((chosen & truth & ~screen).sum())}
    return {"dataset": row["dataset"], "true_edges": int(truth.sum()),
            "left_out": len(left_out), "left_out_edges": left_out,
            "left_out_weights": [float(data.weights[j, k]) for j, k in left_out],
            "gain_given_truth": oracle, "gain_given_candidates": given_screen,
            "gain_given_fit": [float(gains[j, k]) for j, k in left_out],
            "added": added}


def counts(added: dict) -> str:
    """One cell of the printed table: ``pairs/true either way/true this way/left-out found``."""
    return "{pairs}/{true_either_way}/{true_this_way}/{left_out_found}".format(**added)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result", help="a scale study's file in benchmarks/results/")
    args = parser.parse_args()
    result = json.loads((RESULTS_DIR / args.result).read_text())
    graph = "munin" if result["p"] == "munin" else result["p"]
    n = result["n"]
    price = 0.5 * np.log(n)
    rows = [one_dataset(graph, n, row) for row in result["rows"]]
    print(f"{args.result}: p = {result['p']}, n = {n}, BIC's price of a weight ½ log n = "
          f"{price:.2f} nats")
    print("left out: true edges outside the screen; of them, gain above the price given the "
          "true parents / the candidates / the fit")
    print("added at c × price: pairs / true either way / true this way / left-out edges found")
    header = " ".join(f"{'c = ' + str(c):>20}" for c in MULTIPLES)
    print(f"{'dataset':>7} {'true':>5} {'left out':>9} {'truth':>6} {'cands':>6} {'fit':>4} "
          f"{header}")
    for row in rows:
        above = [sum(g > price for g in row[key]) for key in
                 ("gain_given_truth", "gain_given_candidates", "gain_given_fit")]
        cells = " ".join(f"{counts(row['added'][str(c)]):>20}" for c in MULTIPLES)
        print(f"{row['dataset']:>7} {row['true_edges']:>5} {row['left_out']:>9} "
              f"{above[0]:>6} {above[1]:>6} {above[2]:>4} {cells}")
    out = RESULTS_DIR / f"widening_{args.result}"
    out.write_text(json.dumps({"source": args.result, "p": result["p"], "n": n,
                               "candidate_parents": candidates.CANDIDATE_PARENTS,
                               "price": price, "multiples": list(MULTIPLES), "rows": rows},
                              indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
