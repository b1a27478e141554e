"""Seed stability of the posterior: two default fits per dataset with different seeds.

For each dataset, ProDAG (defaults, or ``--option`` settings) is fitted with seeds 0 and 1,
and the edge probabilities (1000 samples) of the two fits are compared: max and mean
``|ΔP|`` over the off-diagonal pairs. Two posteriors are read off the same fits: the
``mixture`` (every start at the chosen radius, weighted by its evidence:
``prodag.posterior.mixture``) and the ``best fit`` (its first component alone, the posterior before
the mixture). The four metrics and the expected calibration error are the mean over the two seeds.

Data: ``--data linear`` (default) simulates linear ER datasets (``--p``, ``--s``, ``--n``,
datasets 0 … seeds-1); ``--data sachs`` is the demo's pipeline on the bundled Sachs cells
(log, standardised, ``prune=0.1``, each cell's targets as activity interventions and one
intercept per experimental condition; one dataset, scored against the 17-edge DAG).

Prints one line per dataset and a summary, and writes
``benchmarks/results/stability_<data>[_<tag>].json``.

Run: ``python -m benchmarks.studies.stability --seeds 10`` and
``python -m benchmarks.studies.stability --data sachs``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from prodag.evaluation.metrics import METRICS
from prodag.posterior.chains import ChainDisagreementWarning

from .. import RESULTS_DIR
from ..suite.synthetic import parse_options

FIT_SEEDS = (0, 1)
N_DRAWS = 1000


def datasets(args) -> list[tuple[str, np.ndarray, np.ndarray, dict, dict]]:
    """``(name, X, truth, ProDAG options, fit arguments)`` of every dataset of the run."""
    from prodag import datasets as bundled, simulate

    if args.data == "sachs":
        sachs = bundled.load_sachs()
        X = np.log(sachs.data[list(sachs.variables)].to_numpy())
        return [("sachs", X, np.asarray(sachs.graph_dag),
                 {"standardize": True, "prune": 0.1},
                 {"interventions": sachs.interventions, "conditions": sachs.conditions,
                  "intervention_kind": "activity"})]
    return [(f"dataset {seed}", (data := simulate.dataset(args.p, args.s, args.n, seed=seed)).X,
             data.adjacency, {}, {}) for seed in range(args.seeds)]


def posteriors(estimator) -> dict[str, np.ndarray]:
    """``{"mixture", "best fit"}``: 1000 samples of the mixture and of its first component."""
    import jax

    from prodag.inference import compiled, draws
    from prodag.streams import SAMPLE_STREAM

    key = jax.random.fold_in(jax.random.PRNGKey(estimator.seed_), SAMPLE_STREAM)
    params = jax.tree.map(jax.numpy.asarray, estimator.params_)
    best = draws.sample(compiled.sampler(estimator.spec_.config), params, key, N_DRAWS,
                        estimator.lam_)[1]
    return {"mixture": estimator.sample(N_DRAWS), "best fit": best}


def compare(X, truth, options: dict, fit_arguments: dict) -> dict:
    """Fit with both seeds; per posterior kind, ``|ΔP|``, the mean metrics and each seed's."""
    from prodag import ProDAG, metrics
    from prodag.config.parameters import nest

    fits, draws = [], []
    for seed in FIT_SEEDS:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ChainDisagreementWarning)
            estimator = ProDAG(seed=seed, progress=False, **nest(options)).fit(
                X, **fit_arguments)
        diagnostics = estimator.diagnostics_
        fits.append({"seed": seed, "seconds": time.perf_counter() - start,
                     "lam": estimator.lam_, "weights": estimator.mixture_weights_.tolist(),
                     "lams": estimator.component_lams_.tolist(),
                     "chain_max_dP": diagnostics["max_difference"],
                     "chain_flagged": len(diagnostics["disagreeing_edges"]),
                     "chain_elbos": diagnostics["chain_elbos"]})
        draws.append(posteriors(estimator))
    row = {"fits": fits}
    off = ~np.eye(truth.shape[0], dtype=bool)
    for kind in draws[0]:
        probs = [metrics.edge_probabilities(d[kind]) for d in draws]
        delta = np.abs(probs[0] - probs[1])[off]
        scores = [metrics.evaluate(truth, d[kind]) for d in draws]
        row[kind] = {"max_dP": float(delta.max()), "mean_dP": float(delta.mean()),
                     **{m: float(np.mean([s[m] for s in scores])) for m in METRICS},
                     "per_seed": [{m: float(s[m]) for m in METRICS} for s in scores],
                     "ece": float(np.mean([metrics.calibration_error(truth, p)
                                           for p in probs]))}
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=("linear", "sachs"), default="linear")
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--s", type=int, default=40)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10, help="datasets 0 .. seeds-1")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a ProDAG parameter for every fit (repeatable)")
    parser.add_argument("--tag", default=None, help="results file suffix")
    args = parser.parse_args(argv)
    extra = parse_options(args.option)
    rows = []
    for name, X, truth, options, fit_arguments in datasets(args):
        row = {"dataset": name, **compare(X, truth, {**options, **extra}, fit_arguments)}
        rows.append(row)
        print(f"{name}: " + "; ".join(
            f"{kind} max|dP|={row[kind]['max_dP']:.3f} mean|dP|={row[kind]['mean_dP']:.4f} "
            f"brier={row[kind]['brier']:.2f} eshd={row[kind]['eshd']:.2f} (per seed "
            + ", ".join(f"{s['brier']:.2f}/{s['eshd']:.2f}" for s in row[kind]["per_seed"])
            + ")" for kind in ("mixture", "best fit"))
            + f"; components {[len(f['weights']) for f in row['fits']]}"
            + f"; chains max|dP| {[round(f['chain_max_dP'], 2) for f in row['fits']]}"
            + f"; {np.mean([f['seconds'] for f in row['fits']]):.1f} s per fit", flush=True)
    summary = {}
    for kind in ("mixture", "best fit"):
        entry = {}
        for key in ("max_dP", "mean_dP", *METRICS, "ece"):
            values = np.array([row[kind][key] for row in rows])
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
            entry[key] = {"mean": float(values.mean()), "se": float(se),
                          "max": float(values.max())}
        summary[kind] = entry
        print(f"{kind:<9} max|dP| worst {entry['max_dP']['max']:.3f}, mean over datasets "
              f"{entry['max_dP']['mean']:.3f}; mean|dP| worst {entry['mean_dP']['max']:.4f}; "
              + ", ".join(f"{METRICS.get(k, k)} {entry[k]['mean']:.2f} ± {entry[k]['se']:.2f}"
                          for k in (*METRICS, "ece")))
    tag = f"_{args.tag}" if args.tag else ""
    out = RESULTS_DIR / f"stability_{args.data}{tag}.json"
    out.write_text(json.dumps({"settings": vars(args), "summary": summary, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
