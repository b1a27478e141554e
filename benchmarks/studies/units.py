"""Units: how the noise model and preprocessing behave on data in the simulator's units, in
arbitrary units, and on real data.

Variants (``VARIANTS``): ``paper`` (unit noise variance in the data's units: the paper's
protocol and today's default), ``equal`` (one noise variance shared by every variable, learned),
``std-equal`` (columns standardised, one shared variance learned), ``std-estimate`` (columns
standardised, one variance per variable learned). Every variant otherwise runs prodag's
defaults with ``seed`` = the dataset's seed.

Data:
- ``simulated``: linear ER, p = 20, s = 40, ``--n`` rows, unit noise (datasets 0 … seeds-1);
- ``rescaled``: the same rows with column k multiplied by ``10^u_k`` (u_k uniform on [-3, 3])
  and shifted by ``100·10^u_k·v_k`` (v_k uniform on [-1, 1]), seeded per dataset: the same
  data in other units;
- Sachs (``--sachs``): all 7466 rows as observational, raw intensities and their logarithms
  (natural log, as the demo), scored against the 17-edge consensus DAG
  and the paper's 18-edge graph, beside the empty graph.

Every posterior (1000 samples) is scored with the four metrics and the expected calibration
error. Prints mean ± standard error per data kind and variant and writes
``benchmarks/results/units_n{n}[_<tag>].json``.

Run: ``python -m benchmarks.studies.units [--seeds 10] [--n 100] [--sachs] [--variant NAME]
[--tag TAG]`` (a tag names the file ``units_n{n}_<tag>.json``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from prodag.evaluation.metrics import METRICS

from .. import RESULTS_DIR

N_DRAWS = 1000
VARIANTS = {
    "paper": {"noise_variance": 1.0, "standardize": False},
    "equal": {"noise_variance": "equal", "standardize": False},
    "std-equal": {"noise_variance": "equal", "standardize": True},
    "std-estimate": {"noise_variance": "estimate", "standardize": True},
}


def rescale(X: np.ndarray, seed: int) -> np.ndarray:
    """``X (n, p)`` in other units: column k times ``10^u_k`` plus ``100·10^u_k·v_k``."""
    rng = np.random.default_rng(10_000 + seed)
    factors = 10.0 ** rng.uniform(-3, 3, X.shape[1])
    return X * factors + 100 * factors * rng.uniform(-1, 1, X.shape[1])


def score(estimator, truth: np.ndarray) -> dict:
    from prodag import metrics

    samples = estimator.sample(N_DRAWS)
    scores = metrics.evaluate(truth, samples)
    return {**{k: float(v) for k, v in scores.items()},
            "ece": metrics.calibration_error(truth, metrics.edge_probabilities(samples)),
            "edges": float(np.count_nonzero(samples) / len(samples))}


def fit(X, variant: str, seed: int):
    from prodag import ProDAG

    start = time.perf_counter()
    estimator = ProDAG(seed=seed, progress=False, **VARIANTS[variant]).fit(X)
    return estimator, time.perf_counter() - start


def report(row: dict) -> None:
    print(f"{row['data']:<10} {row['variant']:<13} seed {row['seed']} " + " ".join(
        f"{k}={row[k]:.2f}" for k in (*METRICS, "ece", "edges")) + f" λ={row['lam']:.3g} "
        f"{row['seconds']:.1f}s", flush=True)


def simulated_rows(args, variants: list[str]) -> list[dict]:
    from prodag import simulate

    rows = []
    for seed in range(args.seeds):
        data = simulate.dataset(20, 40, args.n, seed=seed)
        for kind, X in (("simulated", data.X), ("rescaled", rescale(data.X, seed))):
            for variant in variants:
                estimator, seconds = fit(X, variant, seed)
                rows.append({"data": kind, "variant": variant, "seed": seed,
                             "seconds": seconds, "lam": estimator.lam_,
                             **score(estimator, data.adjacency)})
                report(rows[-1])
    return rows


def sachs_rows(variants: list[str]) -> list[dict]:
    from prodag import datasets, metrics

    sachs = datasets.load_sachs()
    raw = sachs.data[list(sachs.variables)].to_numpy(float)
    rows = []
    for kind, X in (("sachs-raw", raw), ("sachs-log", np.log(raw))):
        for graph_name, truth in (("17-edge DAG", sachs.graph_dag), ("18-edge", sachs.graph)):
            empty = metrics.evaluate(truth, np.zeros((1, *truth.shape)))
            rows.append({"data": kind, "variant": "empty graph", "graph": graph_name,
                         "seed": 0, "seconds": 0.0, "lam": 0.0, "ece": float("nan"),
                         "edges": 0.0, **{k: float(v) for k, v in empty.items()}})
        for variant in variants:
            estimator, seconds = fit(X, variant, 0)
            for graph_name, truth in (("17-edge DAG", sachs.graph_dag),
                                      ("18-edge", sachs.graph)):
                rows.append({"data": kind, "variant": variant, "graph": graph_name, "seed": 0,
                             "seconds": seconds, "lam": estimator.lam_,
                             **score(estimator, truth)})
                report(rows[-1])
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    table = []
    groups = dict.fromkeys((row["data"], row["variant"], row.get("graph", "")) for row in rows)
    for data, variant, graph in groups:
        group = [row for row in rows if (row["data"], row["variant"], row.get("graph", ""))
                 == (data, variant, graph)]
        entry = {"data": data, "variant": variant, "graph": graph, "seeds": len(group)}
        for key in (*METRICS, "ece", "edges", "seconds"):
            values = np.array([row[key] for row in group])
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
            entry[key] = {"mean": float(values.mean()), "se": float(se)}
        table.append(entry)
    return table


def print_table(table: list[dict]) -> None:
    keys = (*METRICS, "ece", "edges", "seconds")
    titles = {**METRICS, "ece": "ECE", "edges": "edges", "seconds": "fit s"}
    print(f"{'data':<10} {'variant':<13} {'graph':<12} " + " ".join(
        f"{titles[k]:>15}" for k in keys))
    for entry in table:
        print(f"{entry['data']:<10} {entry['variant']:<13} {entry['graph']:<12} " + " ".join(
            f"{entry[k]['mean']:7.2f} ± {entry[k]['se']:5.2f}" for k in keys))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--variant", action="append", choices=list(VARIANTS),
                        help="variants to run (repeatable; default: all)")
    parser.add_argument("--sachs", action="store_true", help="also fit the Sachs data")
    parser.add_argument("--tag", default=None, help="results file suffix")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    rows = simulated_rows(args, variants) if args.seeds else []
    if args.sachs:
        rows += sachs_rows(variants)
    table = summarize(rows)
    print_table(table)
    out = RESULTS_DIR / f"units_n{args.n}{f'_{args.tag}' if args.tag else ''}.json"
    out.write_text(json.dumps({"settings": {**vars(args), "variants": VARIANTS},
                               "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                         time.gmtime()),
                               "summary": table, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
