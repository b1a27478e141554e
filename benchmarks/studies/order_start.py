"""Is a fit's deficit the model's or the search's? The same fits started at the data start's
order and at the true topological order (a diagnostic: it uses the truth, so it is no method).

For each simulated linear ER dataset (``--p``, ``--s``, ``--n``, datasets 0 … seeds-1) and
each start, ProDAG is fitted twice with the settings of ``--option`` (default: standardised
columns and one learned noise variance per variable, the model that no change of any column's
unit alters):

- at a fixed radius ``--lam`` with one start, to compare the final objectives (negative ELBO
  per row: lower is better) of the two starting orders under the same model;
- with λ selected as by default, to score what each start leads to.

The ``data start`` is the model's own (``prodag.inference.initialization.start_means``: the top-down
order, or, when every variable has its own learned noise variance as by default here, the
order of ``prodag.inference.order_search``; before 2026-11-25 the top-down order in every case). The
``true order`` start replaces that order by a topological order of the true graph (the ridge
regressions along it are unchanged). Also
reported per dataset: the edges of the true graph left undirected in its Markov equivalence
class (``prodag.graph.cpdag``), which bound what no scale-free method can orient (each costs
at least 0.5 Brier in expectation).

Prints one line per dataset and fit and writes ``benchmarks/results/order_start[_<tag>].json``.

Run: ``python -m benchmarks.studies.order_start --seeds 10``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options

N_DRAWS = 1000
DEFAULT_OPTIONS = {"standardize": True, "noise_variance": "estimate"}
STARTS = ("data start", "true order")


@contextlib.contextmanager
def start_order(order: np.ndarray | None):
    """Within the block, the linear data start regresses along ``order`` in place of the
    order it would take (None: unchanged)."""
    from prodag.inference import initialization

    original, imposed = initialization.linear_start, order

    def along(X, noise_variance, ridge=0.01, order=None):
        return original(X, noise_variance, ridge, order=imposed)

    initialization.linear_start = original if order is None else along
    try:
        yield
    finally:
        initialization.linear_start = original


def fit(X, truth, options: dict) -> dict:
    from prodag import ProDAG, metrics
    from prodag.config.parameters import nest

    began = time.perf_counter()
    estimator = ProDAG(progress=False, **nest(options)).fit(X)
    samples = estimator.sample(N_DRAWS)
    return {"objective": float(estimator.objective_), "lam": estimator.lam_,
            "seconds": time.perf_counter() - began,
            **{k: float(v) for k, v in metrics.evaluate(truth, samples).items()}}


def dataset_row(seed: int, args, options: dict) -> dict:
    from prodag import graph, simulate

    data = simulate.dataset(args.p, args.s, args.n, seed=seed)
    order = graph.topological_order(data.adjacency)
    row = {"seed": seed, "undirected_in_class": int(np.triu(graph.cpdag(data.adjacency)[1]).sum())}
    for start in STARTS:
        with start_order(order if start == "true order" else None):
            row[start] = {
                "fixed": fit(data.X, data.adjacency,
                             {**options, "seed": seed, "lam": args.lam, "n_restarts": 1}),
                "selected": fit(data.X, data.adjacency, {**options, "seed": seed})}
        print(f"dataset {seed} {start:<10} " + " | ".join(
            f"{kind}: objective {r['objective']:.4f} λ {r['lam']:.3g} "
            + " ".join(f"{k} {r[k]:.2f}" for k in METRICS)
            for kind, r in row[start].items()), flush=True)
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10, help="datasets 0 .. seeds-1")
    parser.add_argument("--lam", type=float, default=14.0, help="the fixed radius")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a ProDAG parameter for every fit (repeatable; replaces the "
                             "default options when given)")
    parser.add_argument("--tag", default=None, help="results file suffix")
    args = parser.parse_args(argv)
    options = parse_options(args.option) or DEFAULT_OPTIONS
    rows = [dataset_row(seed, args, options) for seed in range(args.seeds)]
    summary = {"undirected_in_class": float(np.mean([r["undirected_in_class"] for r in rows])),
               "true_order_objective_lower": int(sum(
                   r["true order"]["fixed"]["objective"] < r["data start"]["fixed"]["objective"]
                   for r in rows))}
    for start in STARTS:
        for kind in ("fixed", "selected"):
            summary[f"{start}, {kind}"] = {
                k: float(np.mean([r[start][kind][k] for r in rows]))
                for k in ("objective", *METRICS, "seconds")}
    print(f"undirected edges in the true class: {summary['undirected_in_class']:.1f} per "
          f"dataset; the true order's objective is lower on "
          f"{summary['true_order_objective_lower']} of {len(rows)} datasets")
    for name, entry in summary.items():
        if isinstance(entry, dict):
            print(f"{name:<24} " + " ".join(f"{k} {v:.3f}" for k, v in entry.items()))
    tag = f"_{args.tag}" if args.tag else ""
    out = RESULTS_DIR / f"order_start{tag}.json"
    out.write_text(json.dumps({"settings": {**vars(args), "options": options},
                               "summary": summary, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
