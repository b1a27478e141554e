"""How much of the pooled mixture's weights is Monte Carlo noise of its score?

A default fit pools its contenders (``prodag.fit.pool``) by their evidence, ``w_k ∝ exp(−n ·
objective_k)``, each objective a common-random-number estimate of the negative ELBO per row
over ``prodag.posterior.chains.SCORE_BATCHES`` batches of the fit's draws. This study fits each
dataset with the defaults, keeps the contenders the pooling scored, and scores them again with
``--keys`` other keys at each of ``--batches``: the spread over keys of each contender's
log-evidence gap to the best, and of its weight, is the score's own noise.

    PYTHONPATH=src python -m benchmarks.studies.score_noise --p 100 --datasets 0 1 2
        [--n 100] [--seed 0] [--keys 10] [--batches 20 100] [--tag TAG]

Prints a row per dataset and number of batches, and writes
``benchmarks/results/score_noise_p<p>_n<n>[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import jax
import numpy as np

from prodag import ProDAG, simulate
from prodag.posterior import chains, mixture

from .. import RESULTS_DIR

SHOWN = 4
"""Contenders shown per row (the best by the mean log-evidence)."""


def fitted_contenders(X: np.ndarray, seed: int) -> tuple[dict, float]:
    """A default fit of ``X``; what its pooling scored (``chains.rescore``'s arguments) and the
    fit's seconds."""
    scored = {}
    rescore = chains.rescore

    def recording(engine, fits, data, n_rows, noise, key, **options):
        scored.update(engine=engine, fits=fits, data=data, n_rows=n_rows, noise=noise)
        return rescore(engine, fits, data, n_rows, noise, key, **options)

    chains.rescore = recording
    try:
        began = time.perf_counter()
        ProDAG(seed=seed, progress=False).fit(X)
        return scored, time.perf_counter() - began
    finally:
        chains.rescore = rescore


def spread(scored: dict, n_keys: int, batches: int) -> dict:
    """Over ``n_keys`` score keys: each contender's log-evidence gap to the best (by the mean)
    and its weight, mean and standard deviation, best first."""
    n_rows = scored["n_rows"]
    values = np.array([chains.rescore(scored["engine"], scored["fits"], scored["data"], n_rows,
                                      scored["noise"], jax.random.PRNGKey(1000 + k),
                                      batches=batches) for k in range(n_keys)])
    log_evidence = -n_rows * values
    order = np.argsort(-log_evidence.mean(axis=0), kind="stable")
    gaps = log_evidence[:, order] - log_evidence[:, order[:1]]
    weights = np.array([mixture.evidence_weights(v, n_rows) for v in values])[:, order]
    return {"gap_mean": gaps.mean(0).tolist(), "gap_sd": gaps.std(0).tolist(),
            "weight_mean": weights.mean(0).tolist(), "weight_sd": weights.std(0).tolist()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--datasets", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keys", type=int, default=10)
    parser.add_argument("--batches", type=int, nargs="+", default=[chains.SCORE_BATCHES,
                                                                    5 * chains.SCORE_BATCHES])
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dataset in args.datasets:
            data = simulate.dataset(args.p, 2 * args.p, args.n, seed=dataset)
            scored, seconds = fitted_contenders(data.X, args.seed)
            for batches in args.batches:
                began = time.perf_counter()
                row = {"dataset": dataset, "seed": args.seed, "batches": batches,
                       "contenders": len(scored["fits"]), "fit_seconds": seconds,
                       **spread(scored, args.keys, batches),
                       "score_seconds": (time.perf_counter() - began) / args.keys,
                       "load": os.getloadavg()[0]}
                rows.append(row)
                print(f"dataset {dataset} batches {batches:4d} ({row['contenders']} contenders, "
                      f"{row['score_seconds']:.1f} s a score): gap to the best "
                      f"{np.round(row['gap_mean'][:SHOWN], 2)} ± "
                      f"{np.round(row['gap_sd'][:SHOWN], 2)} nats; weight "
                      f"{np.round(row['weight_mean'][:SHOWN], 2)} ± "
                      f"{np.round(row['weight_sd'][:SHOWN], 2)}", flush=True)
    name = f"score_noise_p{args.p}_n{args.n}{'_' + args.tag if args.tag else ''}.json"
    path = RESULTS_DIR / name
    path.write_text(json.dumps({"p": args.p, "n": args.n, "keys": args.keys, "rows": rows},
                               indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
