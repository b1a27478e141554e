"""What orients the posterior's edges on simulated data, before and after standardising.

For linear ER datasets (p = ``--p``, s = p edges, n = ``--n``, unit Gaussian noise; seeds
0 … seeds-1) fits prodag's defaults on the data as simulated and with ``standardize=True``,
and reports each fit's sortability (``est.diagnostics_["sortability"]``: varsortability in
the model's units and the data's, R²-sortability), whether it warned that the scale may
orient the edges, and how the true edges are oriented: the share of the probability of each
true pair that goes to the true direction, P(j → k) / (P(j → k) + P(k → j)), averaged over
the true edges. The truth's own varsortability and R²-sortability are printed beside.
Writes ``benchmarks/results/sortability_p<p>_n<n>.json``.

Run: ``python -m benchmarks.studies.sortability [--seeds 2] [--p 10] [--n 200]``.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

from prodag import ProDAG, simulate
from prodag.inputs.assumptions import AssumptionWarning
from prodag.posterior.sortability import r_squared, sortability

from .. import RESULTS_DIR


def oriented(probabilities: np.ndarray, adjacency: np.ndarray) -> float:
    """Mean over the true edges j → k of P(j → k) / (P(j → k) + P(k → j)) (0.5 where both
    are 0)."""
    shares = []
    for j, k in zip(*np.nonzero(adjacency)):
        both = probabilities[j, k] + probabilities[k, j]
        shares.append(probabilities[j, k] / both if both > 0 else 0.5)
    return float(np.mean(shares))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    rows = []
    print("seed  standardize  varsort  varsort(data)  R2-sort  warned  oriented  "
          "truth: varsort  R2-sort")
    for seed in range(args.seeds):
        data = simulate.dataset(args.p, args.p, args.n, seed=seed)
        truth = {"varsortability": sortability(data.adjacency, data.X.var(axis=0)),
                 "r2_sortability": sortability(data.adjacency, r_squared(data.X))}
        for standardize in (False, True):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = ProDAG(seed=seed, standardize=standardize, progress=False).fit(data.X)
            warned = any(issubclass(w.category, AssumptionWarning)
                         and "smaller variance" in str(w.message) for w in caught)
            report = est.diagnostics_["sortability"]
            share = oriented(est.edge_probabilities(), data.adjacency)
            rows.append({"seed": seed, "standardize": standardize, **report,
                         "warned": warned, "oriented": share,
                         "truth": truth})
            print(f"{seed:4d}  {standardize!s:11s}  {report['varsortability']:7.2f}  "
                  f"{report['varsortability_data_units']:13.2f}  "
                  f"{report['r2_sortability']:7.2f}  {warned!s:6s}  {share:8.2f}  "
                  f"{truth['varsortability']:14.2f}  {truth['r2_sortability']:7.2f}")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"sortability_p{args.p}_n{args.n}.json").write_text(
        json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
