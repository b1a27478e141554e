"""Which true edges a fitted posterior misses, by the size of their true weight.

Reads a result file of ``benchmarks.studies.scale`` (its edge probabilities, ``(p, p)`` a
fit) and simulates each row's dataset again (``scale.simulated``: the same graph and
weights). The true edges are put into the four quartiles of ``|w|`` over all the file's
datasets; for each quartile it prints the true edges' mean probability the right way round
and reversed, and how many are missed both ways in expectation per dataset (the E-SHD's
"missing" part). It also counts the true edges with probability 0 both ways: on candidate
parents, the ones the screen left out (``true_edges - true_edges_in_support`` of the row).

    PYTHONPATH=src python -m benchmarks.studies.missed_edges scale_p100_n100_ten_auto.json

Writes ``benchmarks/results/missed_edges_<the file's name>``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from .. import RESULTS_DIR
from .scale import simulated


def true_edges(result: dict) -> list[dict]:
    """For each row of a scale result: the true edges' ``|w|``, their probabilities the right
    way round and reversed (each ``(s,)``), and the dataset."""
    graph = "munin" if result["p"] == "munin" else result["p"]
    edges = []
    for row in result["rows"]:
        weights = np.asarray(simulated(graph, result["n"], row["dataset"]).weights)
        probabilities = np.asarray(row["edge_probabilities"])
        truth = weights != 0
        edges.append({"dataset": row["dataset"], "size": np.abs(weights[truth]),
                      "right": probabilities[truth], "reversed": probabilities.T[truth]})
    return edges


def by_quartile(edges: list[dict]) -> dict:
    """The table: quartile edges of ``|w|``, and per quartile the true edges, their mean
    probabilities (right way, reversed), the expected missed both ways per dataset, and the
    edges with probability 0 both ways per dataset."""
    size = np.concatenate([e["size"] for e in edges])
    right = np.concatenate([e["right"] for e in edges])
    reversed_ = np.concatenate([e["reversed"] for e in edges])
    bounds = np.quantile(size, [0, 0.25, 0.5, 0.75, 1])
    quartile = np.clip(np.searchsorted(bounds, size, side="right") - 1, 0, 3)
    datasets = len(edges)
    rows = []
    for q in range(4):
        inside = quartile == q
        rows.append({"low": float(bounds[q]), "high": float(bounds[q + 1]),
                     "true_edges": int(inside.sum()),
                     "p_right": float(right[inside].mean()),
                     "p_reversed": float(reversed_[inside].mean()),
                     "missed_per_dataset": float(
                         (1 - right[inside] - reversed_[inside]).sum() / datasets),
                     "never_drawn_per_dataset": float(
                         ((right[inside] + reversed_[inside]) == 0).sum() / datasets)})
    return {"quartiles": rows, "datasets": datasets,
            "missed_per_dataset": float((1 - right - reversed_).sum() / datasets),
            "never_drawn_per_dataset": float(((right + reversed_) == 0).sum() / datasets)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result", help="a scale study's file in benchmarks/results/")
    args = parser.parse_args()
    result = json.loads((RESULTS_DIR / args.result).read_text())
    table = by_quartile(true_edges(result))
    print(f"{args.result}: {table['datasets']} datasets")
    print(f"{'|w| from':>9} {'to':>6} {'edges':>6} {'P right':>8} {'P reversed':>11} "
          f"{'missed/dataset':>15} {'never drawn/dataset':>20}")
    for q in table["quartiles"]:
        print(f"{q['low']:9.3f} {q['high']:6.3f} {q['true_edges']:6d} {q['p_right']:8.3f} "
              f"{q['p_reversed']:11.3f} {q['missed_per_dataset']:15.1f} "
              f"{q['never_drawn_per_dataset']:20.1f}")
    print(f"all: missed {table['missed_per_dataset']:.1f} a dataset, never drawn "
          f"{table['never_drawn_per_dataset']:.1f}")
    out = RESULTS_DIR / f"missed_edges_{args.result}"
    out.write_text(json.dumps({"source": args.result, **table}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
