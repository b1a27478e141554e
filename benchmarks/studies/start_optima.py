"""Do independent seeds find the same optima at p = 100? Every seed's pooled fits, side by side.

Fits one dataset of the scale study (``simulate.dataset(p, 2p, n, seed=dataset)``) with the
defaults under each of ``--seeds`` in this process, keeps the contenders each fit's pooling
scored (``benchmarks.studies.score_noise.fitted_contenders``: its fits within
``CONTENDER_NATS`` of its best), and scores all of them together with one key over
``--batches`` batches (common random numbers, the gaps known to about a nat). Each fit's
graph is the support of its projected mean (``on_parents`` of the variational means at its
radius). Fits whose graphs differ in at most ``SAME_MODE_EDGES`` directed edges count as one
optimum. Prints the optima within ``SHOWN_NATS`` of the best, the fits each seed put in each,
the pairwise differences between the best fits' graphs (all edges, and those with
``|w| > 0.3``), and each best fit's true, extra and reversed edges.

    PYTHONPATH=src python -m benchmarks.studies.start_optima --dataset 1 --seeds 0 1 2 3 4 5
        [--p 100] [--n 100] [--batches 200] [--tag TAG]

Writes ``benchmarks/results/start_optima_p<p>_n<n>_dataset<d>[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import jax
import numpy as np

from prodag import simulate
from prodag.posterior import chains

from .. import RESULTS_DIR
from .score_noise import fitted_contenders

SAME_MODE_EDGES = 3
"""Fits whose graphs differ in at most this many directed edges are one optimum."""
SHOWN_NATS = 10.0
"""Optima shown: those within this many nats of the best."""
STRONG = 0.3
"""The weight above which an edge counts as strong in the pairwise differences."""
COMPARED = 12
"""The best fits whose graphs are compared pairwise."""


def graphs_of(engine, fits: list) -> np.ndarray:
    """The projected means ``(F, p, p)`` of ``fits`` ``[(lam, FitResult), ...]`` (on the
    candidate slots, scattered to dense)."""
    project = engine.kernels.loss.args[1]  # the projection the loss is bound to (build_kernels)
    table = project.table
    return np.array([np.asarray(table.scatter(np.asarray(project.on_parents(
        table.gather(fit.params.q.loc["W"])[None], lam))[0])) for lam, fit in fits])


def optima(graphs: np.ndarray, evidence: np.ndarray) -> np.ndarray:
    """The optimum of each fit ``(F,)``: fits taken best first, each joins the first optimum
    whose best fit's graph differs from its own in at most ``SAME_MODE_EDGES`` edges."""
    support = graphs != 0
    leaders, label = [], np.full(len(graphs), -1)
    for i in np.argsort(-evidence):
        for number, leader in enumerate(leaders):
            if (support[i] != support[leader]).sum() <= SAME_MODE_EDGES:
                label[i] = number
                break
        else:
            leaders.append(i)
            label[i] = len(leaders) - 1
    return label


def pairwise(graphs: np.ndarray, threshold: float) -> dict:
    """Median and least number of directed edges in which two of ``graphs`` differ (edges
    with ``|w| > threshold``)."""
    support = np.abs(graphs) > threshold
    pairs = [int((support[i] != support[j]).sum())
             for i in range(len(graphs)) for j in range(i + 1, len(graphs))]
    return {"median": float(np.median(pairs)), "least": int(min(pairs))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--dataset", type=int, default=1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--tag", default="")
    args = parser.parse_args(argv)
    data = simulate.dataset(args.p, 2 * args.p, args.n, seed=args.dataset)
    fits, seed_of, seconds = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in args.seeds:
            scored, fit_seconds = fitted_contenders(data.X, seed)
            fits += scored["fits"]
            seed_of += [seed] * len(scored["fits"])
            seconds.append(fit_seconds)
            print(f"seed {seed}: {fit_seconds:.1f} s, {len(scored['fits'])} contenders",
                  flush=True)
    seed_of = np.array(seed_of)
    began = time.perf_counter()
    n_rows = scored["n_rows"]  # the engine, data and noise are every seed's: one dataset
    evidence = -n_rows * chains.rescore(scored["engine"], fits, scored["data"], n_rows,
                                        scored["noise"], jax.random.PRNGKey(99),
                                        batches=args.batches)
    score_seconds = time.perf_counter() - began
    graphs = graphs_of(scored["engine"], fits)
    label = optima(graphs, evidence)
    gap = evidence - evidence.max()
    truth = np.asarray(data.adjacency) != 0
    found = []
    for number in range(label.max() + 1):
        members = np.flatnonzero(label == number)
        if gap[members].max() < -SHOWN_NATS:
            continue
        found.append({"optimum": number, "gap": float(gap[members].max()),
                      "fits_per_seed": [int(np.sum(seed_of[members] == s)) for s in args.seeds]})
        print(f"optimum {number}: {found[-1]['gap']:7.2f} nats, fits per seed "
              f"{found[-1]['fits_per_seed']}")
    best = np.argsort(-evidence)[:COMPARED]
    support = graphs[best] != 0
    best_fits = [{"seed": int(seed_of[i]), "gap": float(gap[i]), "optimum": int(label[i]),
                  "true": int((s & truth).sum()), "extra": int((s & ~truth & ~truth.T).sum()),
                  "reversed": int((s & truth.T & ~truth).sum())}
                 for i, s in zip(best, support)]
    differences = {"all": pairwise(graphs[best], 0.0), "strong": pairwise(graphs[best], STRONG)}
    for row in best_fits:
        print(f"  seed {row['seed']}: {row['gap']:6.2f} nats, optimum {row['optimum']}, "
              f"{row['true']} true / {row['extra']} extra / {row['reversed']} reversed edges")
    print(f"the best {COMPARED} fits' graphs differ pairwise in {differences['all']['median']:.0f}"
          f" edges (median; least {differences['all']['least']}), in "
          f"{differences['strong']['median']:.0f} of those with |w| > {STRONG} (least "
          f"{differences['strong']['least']}); scored in {score_seconds:.1f} s")
    name = (f"start_optima_p{args.p}_n{args.n}_dataset{args.dataset}"
            f"{'_' + args.tag if args.tag else ''}.json")
    path = RESULTS_DIR / name
    path.write_text(json.dumps({
        "p": args.p, "n": args.n, "dataset": args.dataset, "seeds": args.seeds,
        "batches": args.batches, "fit_seconds": seconds, "score_seconds": score_seconds,
        "optima": found, "best_fits": best_fits, "pairwise_differences": differences,
        "fits": [{"seed": int(s), "gap": float(g), "optimum": int(o)}
                 for s, g, o in zip(seed_of, gap, label)],
        "load": os.getloadavg()[0]}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
