"""Is a λ path's choice between two radii the optimiser's or the model's?

Fits one MUNIN1 dataset (``benchmarks.studies.scale.simulated``: the MUNIN1 graph with the
suite's random weights, n = 100) at each given fixed radius from ``--starts`` starts a chain,
with the defaults otherwise, and prints every start's ELBO (nats), their best, median and
range, and the pooled posterior's four metrics at that radius. Where the radii's ELBOs differ
by more than the spread of the starts at each, more starts would not change the path's
choice: the ELBO (the model) prefers that radius.

    PYTHONPATH=src python -m benchmarks.studies.radius_starts --dataset 4 \\
        --lams 114.38 152.5 [--starts 8] [--seed 0] [--option prior_std=0.3 --tag prior03]

``--option name=value`` changes one estimator setting (as in ``benchmarks.studies.scale``).
Writes ``benchmarks/results/radius_starts_munin_dataset<d>[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

import numpy as np

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options
from .scale import METRICS, simulated


def fit_at(X: np.ndarray, lam: float, starts: int, seed: int, options: dict):
    """A default fit of ``X`` at the fixed radius ``lam`` from ``starts`` starts a chain:
    ``(estimator, ELBOs (nats) of every start of every chain, best first)``; ``options``:
    other settings (``prodag.config.parameters.nest`` names). The fitted
    posterior keeps only its contenders, so the chains' fits are read as
    ``prodag.fit.chains.run_chains`` returns them."""
    from unittest import mock

    from prodag import ProDAG
    from prodag.config.parameters import nest
    from prodag.fit import chains

    run_chains, runs = chains.run_chains, []

    def keeping_the_runs(*args, **kwargs):
        runs.extend(run_chains(*args, **kwargs))
        return runs

    with mock.patch.object(chains, "run_chains", keeping_the_runs):
        estimator = ProDAG(lam=lam, seed=seed, progress=False,
                           **nest({**options, "n_restarts": starts})).fit(X)
    n = X.shape[0]
    return estimator, [sorted((-n * fit.objective for _, fit in run.fits), reverse=True)
                       for run in runs]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=int, default=4)
    parser.add_argument("--lams", type=float, nargs="+", required=True)
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    options = parse_options(args.option)
    from prodag import metrics

    data = simulated("munin", 100, args.dataset)
    rows = []
    print(f"MUNIN1 dataset {args.dataset}, n = 100, {args.starts} starts a chain, {options}")
    print(f"{'lam':>8} {'best':>10} {'median':>10} {'range':>7} "
          + " ".join(f"{m:>7}" for m in METRICS) + f" {'seconds':>8}")
    for lam in args.lams:
        began = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator, elbos = fit_at(data.X, lam, args.starts, args.seed, options)
        seconds = time.perf_counter() - began
        scores = metrics.evaluate_batches(data.adjacency,
                                          estimator.sample_batches(1000, seed=0))
        every = [value for chain in elbos for value in chain]
        row = {"lam": lam, "elbos": elbos, "best": max(every),
               "median": statistics.median(every), "range": max(every) - min(every),
               "seconds": seconds, **{m: float(scores[m]) for m in METRICS}}
        rows.append(row)
        print(f"{lam:8.2f} {row['best']:10.1f} {row['median']:10.1f} {row['range']:7.1f} "
              + " ".join(f"{row[m]:7.2f}" for m in METRICS) + f" {seconds:8.1f}", flush=True)
    result = {"dataset": args.dataset, "starts": args.starts, "seed": args.seed,
              "options": options, "rows": rows}
    tag = f"_{args.tag}" if args.tag else ""
    path = RESULTS_DIR / f"radius_starts_munin_dataset{args.dataset}{tag}.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    main()
